//! `RedisStore` on a Redis Cluster of three primaries (`AGENTMEM_REDIS_CLUSTER3_URL`, a
//! `redis+cluster://` URL started by `.ci/services.sh` on ports 6397-6399), through the
//! cluster client: every command goes to the node owning its keys' slot, so the
//! conformance suites pass here only if every operation is routed right, every pipeline,
//! `MULTI` and script stays within one slot, and the listings visit every node.
//! One test checks that the store's keys really are spread over the three nodes.
#![cfg(feature = "redis")]

mod common;

use std::sync::Arc;

use agentmemory_core::{
    testkit, ConversationStore, FactCandidate, KvStore, MemoryEntry, MemoryError, MemoryScope,
    UserMemoryStore, VectorStore,
};
use agentmemory_stores::{RedisOptions, RedisStore, StoreUrl};
use common::cluster::{self, CLUSTER3_URL};
use common::*;

/// A fresh key prefix of the tests (no glob characters).
fn fresh_prefix() -> String {
    format!("agentmem-c3-{}:", ulid::Ulid::new())
}

/// A store under a prefix of its own on the cluster, after checking the cluster has
/// three primaries; `None` (after a message naming the variable) when it is not set up.
async fn connect() -> Option<RedisStore> {
    connect_prefixed(&fresh_prefix()).await
}

async fn connect_prefixed(prefix: &str) -> Option<RedisStore> {
    let url = server_url(CLUSTER3_URL)?;
    let mut any = cluster::any_node(&url).await;
    let primaries = cluster::primaries(&mut any).await;
    assert_eq!(primaries.len(), 3, "three primaries: {primaries:?}");
    Some(
        RedisStore::connect_with(
            &url,
            RedisOptions {
                prefix: prefix.to_owned(),
                ..RedisOptions::default()
            },
        )
        .await
        .expect("connect to the cluster"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conversation_conformance_on_three_nodes() {
    let Some(store) = connect().await else { return };
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_conformance_on_three_nodes() {
    let Some(store) = connect().await else { return };
    testkit::kv::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn facts_conformance_on_three_nodes() {
    let Some(store) = connect().await else { return };
    testkit::facts::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn vector_conformance_on_three_nodes() {
    let Some(store) = connect().await else { return };
    testkit::vector::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn episodes_conformance_on_three_nodes() {
    let Some(store) = connect().await else { return };
    let episodes = agentmemory_core::episodes::VectorEpisodeStore::new(Arc::new(store));
    testkit::episodes::run_all(&episodes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_ids_are_isolated_on_three_nodes() {
    let Some(store) = connect().await else { return };
    hostile_ids_isolated(&store, &store, &store).await;
}

/// The concurrency checks of the single-server tests: 32 appenders on one conversation,
/// 16 fact writers on two instances, two instances and two cached rankings sharing data.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_on_three_nodes() {
    let Some(a) = connect().await else { return };
    let b = connect_prefixed(a.prefix()).await.expect("second instance");
    let (a, b) = (Arc::new(a), Arc::new(b));
    thirty_two_writers(a.clone()).await;
    concurrent_fact_writers(a.clone(), b.clone()).await;
    two_instances_share((&*a, &*a, &*a), (&*b, &*b, &*b)).await;
    check_interleaved_writers_see_each_other(&*a, &*b, "interleave-cluster3").await;
    check_cached_ranking_sees_another_writer(&*a, &*b, &fresh("ranking-cluster3")).await;
}

/// Conversations, users, KV namespaces and vector namespaces hash to slots on every node,
/// and each listing (conversations, KV entries, expired-entry cleanup) finds the ones on
/// every node.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keys_are_spread_over_the_three_nodes() {
    let prefix = fresh_prefix();
    let Some(store) = connect_prefixed(&prefix).await else {
        return;
    };
    let url = server_url(CLUSTER3_URL).expect("url");
    let n = 40;
    let mut convs = Vec::new();
    for i in 0..n {
        let conv = format!("conversation {i}");
        store
            .append(&conv, vec![msg(format!("hello {i}"))])
            .await
            .expect("append");
        UserMemoryStore::upsert(
            &store,
            &format!("user {i}"),
            FactCandidate::new(format!("likes number {i}"), 0.8),
        )
        .await
        .expect("upsert");
        let mut entry = MemoryEntry::new(MemoryScope::Working, "k", format!("v{i}").into());
        let ttl = if i % 2 == 0 { 1 } else { 600_000 };
        entry.expires_at = Some(chrono::Utc::now() + chrono::Duration::milliseconds(ttl));
        store.put(&format!("ns {i}"), entry).await.expect("put");
        VectorStore::upsert(
            &store,
            &format!("docs {i}"),
            agentmemory_core::Document::new(format!("document {i}")).with_id("d"),
        )
        .await
        .expect("upsert doc");
        convs.push(conv);
    }

    let per_node = cluster::keys_per_node(&url, &prefix).await;
    eprintln!("keys of the store per node: {per_node:?}");
    assert_eq!(per_node.len(), 3, "{per_node:?}");
    assert!(
        per_node.values().all(|&k| k > 0),
        "every node holds keys of the store: {per_node:?}"
    );
    let mut any = cluster::any_node(&url).await;
    let mut conv_nodes = std::collections::BTreeSet::new();
    for conv in &convs {
        let key = format!("{prefix}{{conv:{}}}:seq", cluster::hex(conv));
        conv_nodes.insert(cluster::owner_of(&mut any, &key).await);
    }
    assert_eq!(conv_nodes.len(), 3, "conversations on every node");

    let mut listed = store.list_conversations().await.expect("list");
    listed.sort();
    let mut sorted = convs.clone();
    sorted.sort();
    assert_eq!(
        listed, sorted,
        "the listing finds conversations on every node"
    );
    for (i, conv) in convs.iter().enumerate() {
        assert_eq!(store.load(conv).await.expect("load").len(), 1, "{conv}");
        let facts = UserMemoryStore::list(&store, &format!("user {i}"))
            .await
            .expect("facts");
        assert_eq!(facts.len(), 1);
    }
    // Half of the KV entries expired at once: cleanup visits every namespace's node.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(store.cleanup_expired().await.expect("cleanup"), n / 2);
    for (i, conv) in convs.iter().enumerate() {
        let ns = format!("ns {i}");
        assert_eq!(KvStore::list(&store, &ns).await.expect("list").len(), i % 2);
        KvStore::clear(&store, &ns).await.expect("clear");
        ConversationStore::delete(&store, conv)
            .await
            .expect("delete");
        store
            .forget_user(&format!("user {i}"))
            .await
            .expect("forget");
        VectorStore::clear(&store, &format!("docs {i}"))
            .await
            .expect("clear docs");
    }
    assert!(store.list_conversations().await.expect("list").is_empty());
}

/// `StoreUrl` takes the cluster form and opens every store on the cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_urls_open_a_container() {
    use agentmemory_core::di::tokens;
    let Some(url) = server_url(CLUSTER3_URL) else {
        return;
    };
    let parsed: StoreUrl = url.parse().expect("parse");
    assert_eq!(parsed, StoreUrl::Redis(url.clone()));
    let container = parsed.open().await.expect("open");
    let conv = container
        .resolve::<dyn ConversationStore>(Some(tokens::CONVERSATIONS))
        .expect("conversations");
    let id = fresh("cluster-url");
    assert_eq!(conv.append(&id, vec![msg("hi")]).await.expect("append"), 1);
    assert!(conv.list_conversations().await.expect("list").contains(&id));
    assert!(conv.delete(&id).await.expect("delete"));

    // The URL's parameters apply to the cluster; unknown ones are refused by name.
    let pooled = RedisStore::connect(&format!("{url}?pool_size=3"))
        .await
        .expect("pool");
    assert_eq!(pooled.pool_size(), 3);
    let err = RedisStore::connect(&format!("{url}?cluster=yes"))
        .await
        .expect_err("unknown parameter");
    assert!(matches!(err, MemoryError::UrlParameter { .. }), "{err:?}");
}

/// Seeds that do not answer: a typed error in bounded time, never a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_seeds_are_a_typed_error_in_bounded_time() {
    let start = std::time::Instant::now();
    let err = RedisStore::connect_with(
        "redis+cluster://127.0.0.1:1,127.0.0.1:2/",
        RedisOptions {
            connect_timeout: std::time::Duration::from_millis(500),
            ..RedisOptions::default()
        },
    )
    .await
    .expect_err("nothing listens");
    assert_store_error(&err, "redis");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

/// A store written with the layout before hash tags (layout 1), on a cluster: its keys
/// are spread over the nodes and cannot be renamed across slots, so they are copied to
/// their tagged names and deleted; nothing is lost or overwritten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_of_the_untagged_layout_move_across_nodes() {
    use agentmemory_core::MemoryFact;
    let Some(url) = server_url(CLUSTER3_URL) else {
        return;
    };
    let p = fresh_prefix();
    let h = cluster::hex;
    let fact = MemoryFact::from_candidate(
        "u",
        FactCandidate::new("likes jazz", 0.9),
        chrono::Utc::now(),
    );
    let event = serde_json::to_string(&msg("hello from layout 1")).expect("json");
    let mut entry = MemoryEntry::new(MemoryScope::Working, "k", "v1".into());
    entry.expires_at = Some(chrono::Utc::now() + chrono::Duration::minutes(10));
    let old: Vec<(String, redis::Cmd)> = {
        let set = |key: String, value: String| {
            let mut c = redis::cmd("SET");
            c.arg(&key).arg(value);
            (key, c)
        };
        let sadd = |key: String, member: &str| {
            let mut c = redis::cmd("SADD");
            c.arg(&key).arg(member);
            (key, c)
        };
        let mut zadd = redis::cmd("ZADD");
        let events = format!("{p}conv:{}:events", h("c"));
        zadd.arg(&events)
            .arg(1)
            .arg(format!("1:1700000000000000:{event}"));
        let mut hset = redis::cmd("HSET");
        let facts = format!("{p}facts:{}", h("u"));
        hset.arg(&facts)
            .arg(&fact.id)
            .arg(serde_json::to_string(&fact).expect("json"));
        let kv = format!("{p}kv:{}:{}", h("ns"), h("k"));
        let mut kv_set = redis::cmd("SET");
        kv_set
            .arg(&kv)
            .arg(serde_json::to_string(&entry).expect("json"))
            .arg("PX")
            .arg(600_000);
        vec![
            set(format!("{p}conv:{}:seq", h("c")), "1".into()),
            (events, zadd),
            sadd(format!("{p}conversations"), "c"),
            (kv, kv_set),
            sadd(format!("{p}kvidx:{}", h("ns")), "k"),
            sadd(format!("{p}kvns"), "ns"),
            (facts, hset),
            set(format!("{p}factsver:{}", h("u")), "1".into()),
        ]
    };
    // Written through plain connections to the node owning each key.
    let mut any = cluster::any_node(&url).await;
    let mut nodes = std::collections::BTreeSet::new();
    for (key, cmd) in &old {
        let owner = cluster::owner_of(&mut any, key).await;
        let mut conn = cluster::node(&owner).await;
        cmd.query_async::<()>(&mut conn)
            .await
            .expect("write layout 1");
        nodes.insert(owner);
    }
    assert!(
        nodes.len() >= 2,
        "the old keys are on several nodes: {nodes:?}"
    );

    let store = connect_prefixed(&p).await.expect("connect");
    let per_node = cluster::keys_per_node(&url, &p).await;
    assert_eq!(
        per_node.values().sum::<usize>(),
        old.len() + 1,
        "every key moved, plus the layout key: {per_node:?}"
    );
    let events = store.load("c").await.expect("load");
    assert_eq!(events.len(), 1);
    assert_eq!(text_of(&events[0].event), "hello from layout 1");
    assert_eq!(store.list_conversations().await.expect("list"), ["c"]);
    assert_eq!(
        store.append("c", vec![msg("next")]).await.expect("append"),
        2
    );
    let got = KvStore::get(&store, "ns", "k")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(got.content, entry.content);
    let moved_kv = format!("{p}{{kv:{}}}:e:{}", h("ns"), h("k"));
    let owner = cluster::owner_of(&mut any, &moved_kv).await;
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&moved_kv)
        .query_async(&mut cluster::node(&owner).await)
        .await
        .expect("PTTL");
    assert!(
        ttl > 0 && ttl <= 600_000,
        "the expiry moved with the entry: {ttl}"
    );
    let facts = UserMemoryStore::list(&store, "u").await.expect("facts");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].id, fact.id);

    // An old key whose new name is taken by a different value: refused, naming both.
    let (key, cmd) = &old[5];
    let owner = cluster::owner_of(&mut any, key).await;
    cmd.query_async::<()>(&mut cluster::node(&owner).await)
        .await
        .expect("old kvns again, without the namespace the new one has");
    let layout = format!("{p}{{index}}:layout");
    let owner = cluster::owner_of(&mut any, &layout).await;
    redis::cmd("DEL")
        .arg(&layout)
        .query_async::<()>(&mut cluster::node(&owner).await)
        .await
        .expect("del");
    // (The new set also names a second namespace, so the two values differ.)
    store
        .put(
            "ns2",
            MemoryEntry::new(MemoryScope::Working, "k", "v".into()),
        )
        .await
        .expect("put");
    let err = RedisStore::connect_with(
        &url,
        RedisOptions {
            prefix: p.clone(),
            ..RedisOptions::default()
        },
    )
    .await
    .expect_err("conflict");
    let text = err.chain().to_string();
    assert!(matches!(err, MemoryError::Corrupt { .. }), "{text}");
    assert!(
        text.contains(&format!("{p}kvns")) && text.contains(&format!("{p}{{index}}:kvns")),
        "{text}"
    );

    // An old key equal to its new one (a copy interrupted before its delete): the next
    // connect deletes the old name and carries on.
    let (key, _) = &old[5];
    let owner = cluster::owner_of(&mut any, key).await;
    let mut conn = cluster::node(&owner).await;
    redis::cmd("DEL")
        .arg(key)
        .query_async::<()>(&mut conn)
        .await
        .expect("del");
    let (key, cmd) = &old[2];
    let owner = cluster::owner_of(&mut any, key).await;
    let mut conn = cluster::node(&owner).await;
    cmd.query_async::<()>(&mut conn)
        .await
        .expect("old index again");
    connect_prefixed(&p).await.expect("connect");
    let left: i64 = redis::cmd("EXISTS")
        .arg(key)
        .query_async(&mut conn)
        .await
        .expect("EXISTS");
    assert_eq!(left, 0, "the old name of a finished copy is deleted");
    assert_eq!(store.list_conversations().await.expect("list"), ["c"]);

    // Clean up every key of the prefix, node by node.
    for addr in cluster::primaries(&mut any).await {
        let mut conn = cluster::node(&addr).await;
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{p}*"))
            .query_async(&mut conn)
            .await
            .expect("KEYS");
        for key in keys {
            redis::cmd("DEL")
                .arg(&key)
                .query_async::<()>(&mut conn)
                .await
                .expect("cleanup");
        }
    }
}

/// The re-embedding suite (backfill, model change) on the cluster: the users and
/// namespaces that may lack vectors are found on every primary, not on one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reembed_conformance_on_three_nodes() {
    let Some(store) = connect().await else { return };
    let store = Arc::new(store);
    let targets: Vec<Arc<dyn agentmemory_core::reembed::Reembed>> = vec![store.clone()];
    testkit::reembed::run_all(store.as_ref(), store.as_ref(), targets).await;
}
