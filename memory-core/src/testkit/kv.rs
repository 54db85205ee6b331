//! Conformance tests for the [`KvStore`] trait.
//!
//! Every check works in fresh, randomly named namespaces, so the suite can run again and
//! again against one long-lived store.

use chrono::{Duration, Utc};
use serde_json::json;

use crate::error::MemoryError;
use crate::kv::{KvStore, MemoryEntry, MemoryScope};

/// A fresh namespace name, unique to this run.
fn fresh(tag: &str) -> String {
    format!("testkit:kv:{tag}:{}", ulid::Ulid::new())
}

fn entry(key: &str, content: serde_json::Value) -> MemoryEntry {
    MemoryEntry::new(MemoryScope::Working, key, content)
}

fn expired(key: &str) -> MemoryEntry {
    let mut e = entry(key, json!("stale"));
    e.created_at = Utc::now() - Duration::seconds(120);
    e.expires_at = Some(Utc::now() - Duration::seconds(60));
    e
}

/// Runs every KV check.
pub async fn run_all(store: &dyn KvStore) {
    check_put_get_overwrite(store).await;
    check_roundtrip_fields(store).await;
    check_namespace_isolation(store).await;
    check_list_ordered_by_key(store).await;
    check_delete(store).await;
    check_clear(store).await;
    check_expiry(store).await;
    check_invalid_importance(store).await;
    check_keyless_entries(store).await;
    check_entries_without_ids(store).await;
    check_put_many(store).await;
}

/// `put_many` writes every entry under its key, a later entry of a key winning, and
/// replaces what was there; an empty batch writes nothing.
pub async fn check_put_many(store: &dyn KvStore) {
    let ns = fresh("put-many");
    store.put(&ns, entry("b", json!("old"))).await.expect("put");
    store
        .put_many(
            &ns,
            vec![
                entry("a", json!(1)),
                entry("b", json!(2)),
                entry("c", json!(3)),
                entry("a", json!(4)),
            ],
        )
        .await
        .expect("put_many");
    let listed: Vec<(String, serde_json::Value)> = store
        .list(&ns)
        .await
        .expect("list")
        .into_iter()
        .map(|e| (e.key, e.content))
        .collect();
    assert_eq!(
        listed,
        [
            ("a".to_owned(), json!(4)),
            ("b".to_owned(), json!(2)),
            ("c".to_owned(), json!(3)),
        ]
    );
    store.put_many(&ns, Vec::new()).await.expect("empty");
    assert_eq!(store.list(&ns).await.expect("list").len(), 3);
}

/// Keyless entries: `append_entry` keys each by its id, in the order they were made; ids and
/// metadata come back from `get` and `list`; a keyed entry is put under its key.
pub async fn check_keyless_entries(store: &dyn KvStore) {
    let ns = fresh("keyless");
    let first = MemoryEntry::keyless(MemoryScope::LongTerm, json!("met Ana"))
        .with_metadata("source", json!("chat"))
        .with_metadata("tags", json!(["people", "fair"]));
    let first_key = store
        .append_entry(&ns, first.clone())
        .await
        .expect("append");
    assert_eq!(Some(first_key.clone()), first.id.map(|id| id.to_string()));
    // Ids hold milliseconds: the next one is made in a later millisecond.
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let mut second = MemoryEntry::new(MemoryScope::LongTerm, "", json!("met Bo"));
    second.id = None;
    let second_key = store
        .append_entry(&ns, second)
        .await
        .expect("append without id");
    assert!(first_key < second_key, "{first_key} then {second_key}");

    let got = store
        .get(&ns, &first_key)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(got.id, first.id);
    assert!(got.is_keyless());
    assert_eq!(got.metadata, first.metadata);
    assert_eq!(got.content, json!("met Ana"));

    let listed = store.list(&ns).await.expect("list");
    assert_eq!(
        listed.iter().map(|e| e.key.clone()).collect::<Vec<_>>(),
        vec![first_key.clone(), second_key.clone()]
    );
    assert_eq!(
        listed[1].id.map(|id| id.to_string()),
        Some(second_key.clone())
    );
    assert!(listed[1].metadata.is_empty());

    let keyed = store
        .append_entry(&ns, entry("named", json!(1)))
        .await
        .expect("append keyed");
    assert_eq!(keyed, "named");
    assert!(store.delete(&ns, &first_key).await.expect("delete"));
    assert_eq!(store.list(&ns).await.expect("list").len(), 2);
    store.clear(&ns).await.expect("cleanup");
}

/// Entries without an id (as stored before ids existed) are stored and read back as
/// they are.
pub async fn check_entries_without_ids(store: &dyn KvStore) {
    let ns = fresh("no-id");
    let mut old = entry("old", json!({"v": 1}));
    old.id = None;
    store.put(&ns, old.clone()).await.expect("put");
    let got = store.get(&ns, "old").await.expect("get").expect("stored");
    assert_eq!(got.id, None);
    assert!(got.metadata.is_empty());
    assert!(!got.is_keyless());
    assert_eq!(got.content, old.content);
    store.clear(&ns).await.expect("cleanup");
}

/// `put` then `get` returns the entry; a second `put` under the same key replaces it.
pub async fn check_put_get_overwrite(store: &dyn KvStore) {
    let ns = fresh("overwrite");
    assert_eq!(
        store.get(&ns, "k").await.expect("get on empty namespace"),
        None,
        "a fresh namespace must be empty"
    );
    store
        .put(&ns, entry("k", json!("first")))
        .await
        .expect("put");
    let got = store
        .get(&ns, "k")
        .await
        .expect("get")
        .expect("entry present");
    assert_eq!(got.content, json!("first"));
    store
        .put(&ns, entry("k", json!({"second": true})))
        .await
        .expect("overwrite");
    let got = store
        .get(&ns, "k")
        .await
        .expect("get")
        .expect("entry present");
    assert_eq!(got.content, json!({"second": true}), "put must replace");
    assert_eq!(store.list(&ns).await.expect("list").len(), 1);
    assert_eq!(store.get(&ns, "other").await.expect("get missing"), None);
}

/// Every field of an entry comes back as written (scope, importance, timestamps, JSON).
pub async fn check_roundtrip_fields(store: &dyn KvStore) {
    let ns = fresh("fields");
    let mut e = MemoryEntry::new(
        MemoryScope::LongTerm,
        "ключ/🔑 key",
        json!({"nested": [1, 2.5, null, "x"], "deep": {"a": {"b": false}}}),
    );
    e.importance = 0.9;
    e.expires_at = Some(Utc::now() + Duration::hours(1));
    store.put(&ns, e.clone()).await.expect("put");
    let got = store
        .get(&ns, "ключ/🔑 key")
        .await
        .expect("get")
        .expect("entry present");
    assert_eq!(got.scope, e.scope);
    assert_eq!(got.key, e.key);
    assert_eq!(got.content, e.content);
    assert!((got.importance - 0.9).abs() < 1e-6, "importance kept");
    let ms = |t: chrono::DateTime<Utc>| t.timestamp_millis();
    assert_eq!(ms(got.created_at), ms(e.created_at), "created_at kept");
    assert_eq!(
        got.expires_at.map(ms),
        e.expires_at.map(ms),
        "expires_at kept"
    );
}

/// Namespaces never see each other's keys, whatever characters their names contain.
pub async fn check_namespace_isolation(store: &dyn KvStore) {
    let base = fresh("iso");
    let names = [
        base.clone(),
        format!("{base}*"),
        format!("{base}:x"),
        format!("{base}%"),
        format!("{base}%25"),
        format!("{base}'\""),
        format!("{base}'; DROP TABLE kv; --"),
        format!("{base}/../..\\x"),
        format!("{base}_"),
    ];
    for (i, ns) in names.iter().enumerate() {
        store
            .put(ns, entry("shared", json!(i)))
            .await
            .expect("put into namespace");
        store
            .put(ns, entry(&format!("only-{i}"), json!(i)))
            .await
            .expect("put into namespace");
    }
    for (i, ns) in names.iter().enumerate() {
        let got = store
            .get(ns, "shared")
            .await
            .expect("get")
            .expect("entry present");
        assert_eq!(
            got.content,
            json!(i),
            "namespace {ns:?} saw another's value"
        );
        let keys: Vec<String> = store
            .list(ns)
            .await
            .expect("list")
            .into_iter()
            .map(|e| e.key)
            .collect();
        assert_eq!(
            keys,
            vec![format!("only-{i}"), "shared".to_owned()],
            "namespace {ns:?} listed another's keys"
        );
    }
    assert_eq!(store.clear(&names[1]).await.expect("clear"), 2);
    for (i, ns) in names.iter().enumerate() {
        let expected = if i == 1 { 0 } else { 2 };
        assert_eq!(
            store.list(ns).await.expect("list").len(),
            expected,
            "clearing {:?} touched {ns:?}",
            names[1]
        );
    }
}

/// `list` returns live entries ordered by key.
pub async fn check_list_ordered_by_key(store: &dyn KvStore) {
    let ns = fresh("order");
    for key in ["delta", "alpha", "charlie", "bravo", "a", "b10", "b2"] {
        store.put(&ns, entry(key, json!(key))).await.expect("put");
    }
    let keys: Vec<String> = store
        .list(&ns)
        .await
        .expect("list")
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(
        keys,
        ["a", "alpha", "b10", "b2", "bravo", "charlie", "delta"],
        "list must be ordered by key"
    );
    for e in store.list(&ns).await.expect("list") {
        assert_eq!(e.content, json!(e.key), "list returned the wrong content");
    }
}

/// `delete` removes one key and says whether it was there.
pub async fn check_delete(store: &dyn KvStore) {
    let ns = fresh("delete");
    store.put(&ns, entry("a", json!(1))).await.expect("put");
    store.put(&ns, entry("b", json!(2))).await.expect("put");
    assert!(store.delete(&ns, "a").await.expect("delete"), "existed");
    assert!(!store.delete(&ns, "a").await.expect("delete again"), "gone");
    assert!(!store.delete(&ns, "never").await.expect("delete missing"));
    assert_eq!(store.get(&ns, "a").await.expect("get"), None);
    assert!(store.get(&ns, "b").await.expect("get").is_some(), "b kept");
    store.put(&ns, expired("old")).await.expect("put expired");
    assert!(
        !store.delete(&ns, "old").await.expect("delete expired"),
        "deleting an expired entry reports no live entry"
    );
}

/// `clear` empties one namespace and returns how many entries it held.
pub async fn check_clear(store: &dyn KvStore) {
    let ns = fresh("clear");
    for i in 0..5 {
        store
            .put(&ns, entry(&format!("k{i}"), json!(i)))
            .await
            .expect("put");
    }
    assert_eq!(store.clear(&ns).await.expect("clear"), 5);
    assert!(store.list(&ns).await.expect("list").is_empty());
    assert_eq!(store.clear(&ns).await.expect("clear empty"), 0);
    store.put(&ns, entry("again", json!(1))).await.expect("put");
    assert_eq!(
        store.list(&ns).await.expect("list").len(),
        1,
        "usable after clear"
    );
}

/// Expired entries are invisible to `get` and `list` and removed by `cleanup_expired`;
/// live ones are untouched.
pub async fn check_expiry(store: &dyn KvStore) {
    let ns = fresh("expiry");
    let other = fresh("expiry-other");
    let mut live = entry("live", json!("fresh"));
    live.expires_at = Some(Utc::now() + Duration::hours(1));
    store.put(&ns, live).await.expect("put live");
    store
        .put(&ns, entry("forever", json!(0)))
        .await
        .expect("put");
    store.put(&ns, expired("gone1")).await.expect("put expired");
    store.put(&ns, expired("gone2")).await.expect("put expired");
    store
        .put(&other, expired("gone3"))
        .await
        .expect("put expired");
    store
        .put(&other, entry("kept", json!(1)))
        .await
        .expect("put");

    assert_eq!(store.get(&ns, "gone1").await.expect("get"), None, "expired");
    let keys: Vec<String> = store
        .list(&ns)
        .await
        .expect("list")
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, ["forever", "live"], "list must skip expired entries");

    let removed = store.cleanup_expired().await.expect("cleanup");
    assert!(
        removed >= 3,
        "cleanup_expired removed {removed}, expected >= 3"
    );
    assert!(store.get(&ns, "live").await.expect("get").is_some());
    assert!(store.get(&ns, "forever").await.expect("get").is_some());
    assert!(store.get(&other, "kept").await.expect("get").is_some());
    assert_eq!(
        store.clear(&ns).await.expect("clear"),
        2,
        "expired entries must be gone after cleanup"
    );
    assert_eq!(store.clear(&other).await.expect("clear"), 1);
}

/// Importance outside `0.0..=1.0` (or NaN) is refused and nothing is stored.
pub async fn check_invalid_importance(store: &dyn KvStore) {
    let ns = fresh("importance");
    for bad in [1.5f32, -0.1, f32::NAN, f32::INFINITY] {
        let mut e = entry("bad", json!(1));
        e.importance = bad;
        match store.put(&ns, e).await {
            Err(MemoryError::InvalidArgument { what, .. }) => {
                assert_eq!(what, "importance")
            }
            other => panic!("importance {bad} must be refused, got {other:?}"),
        }
    }
    assert_eq!(store.get(&ns, "bad").await.expect("get"), None);
    let mut edge = entry("edge", json!(1));
    edge.importance = 1.0;
    store.put(&ns, edge).await.expect("importance 1.0 is valid");
}
