//! SqliteStore as a VectorStore and a UserMemoryStore (until the shared suites land).
#![cfg(feature = "sqlite")]

use std::time::Duration;

use agentmemory_core::facts::{rank_score, FactPolicy};
use agentmemory_core::vector::{Document, Filter, SearchQuery};
use agentmemory_core::{
    FactCandidate, FactChange, MemoryError, Polarity, UserMemoryStore, VectorStore,
};
use agentmemory_stores::SqliteStore;
use serde_json::json;

async fn store() -> SqliteStore {
    SqliteStore::open_in_memory().await.expect("open")
}

#[tokio::test]
async fn sparse_search_ranks_filters_and_isolates() {
    let owned = store().await;
    let s: &dyn VectorStore = &owned;
    let docs = vec![
        Document::new("the cat sat on the mat")
            .with_id("cat")
            .with_metadata("lang", "en"),
        Document::new("dogs chase cats in the park")
            .with_id("dog")
            .with_metadata("lang", "en"),
        Document::new("le chat est sur le tapis")
            .with_id("chat")
            .with_metadata("lang", "fr"),
        Document::new("quarterly revenue grew")
            .with_id("rev")
            .with_metadata("draft", true),
        Document::new("unrelated words entirely").with_id("x"),
    ];
    let ids = s.upsert_batch("a", docs).await.expect("batch");
    assert_eq!(ids, ["cat", "dog", "chat", "rev", "x"]);
    s.upsert("b", Document::new("cat cat cat").with_id("other-ns"))
        .await
        .expect("upsert");
    assert_eq!(s.len("a").await.expect("len"), 5);

    let hits = s
        .search("a", &SearchQuery::new("cat on a mat", 10))
        .await
        .expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("cat"));
    assert!(
        hits.iter().all(|h| h.id != "other-ns"),
        "namespaces isolated"
    );
    assert!(
        hits.iter().all(|h| h.score > 0.0 && h.score <= 1.0),
        "{hits:?}"
    );
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "best first"
    );

    let fr = s
        .search(
            "a",
            &SearchQuery::new("chat tapis cat", 10).with_filter(Filter::new().eq("lang", "fr")),
        )
        .await
        .expect("search");
    assert_eq!(
        fr.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["chat"]
    );
    let not_draft = s
        .search(
            "a",
            &SearchQuery::new("revenue", 10).with_filter(Filter::new().not("draft", true)),
        )
        .await
        .expect("search");
    assert!(not_draft.is_empty());
    assert_eq!(
        s.search("a", &SearchQuery::new("cat", 1))
            .await
            .expect("k=1")
            .len(),
        1
    );
    assert!(s
        .search("a", &SearchQuery::new("\"* OR NEAR(", 5))
        .await
        .expect("syntax")
        .is_empty());

    s.upsert("a", Document::new("now about revenue only").with_id("cat"))
        .await
        .expect("replace");
    let got = s.get("a", "cat").await.expect("get").expect("present");
    assert_eq!(got.content, "now about revenue only");
    assert!(got.metadata.is_empty(), "replaced whole");
    let hits = s
        .search("a", &SearchQuery::new("mat", 10))
        .await
        .expect("search");
    assert!(hits.iter().all(|h| h.id != "cat"), "old text unindexed");

    assert_eq!(
        s.delete("a", &["cat".into(), "nope".into()])
            .await
            .expect("delete"),
        1
    );
    assert_eq!(s.len("a").await.expect("len"), 4);
    s.clear("a").await.expect("clear");
    assert_eq!(s.len("a").await.expect("len"), 0);
    assert_eq!(s.len("b").await.expect("len"), 1);
}

#[tokio::test]
async fn dense_search_and_dimensions() {
    let owned = store().await;
    let s: &dyn VectorStore = &owned;
    s.upsert(
        "v",
        Document::new("x")
            .with_id("x")
            .with_embedding(vec![2.0, 0.0, 0.0]),
    )
    .await
    .expect("upsert");
    s.upsert(
        "v",
        Document::new("y")
            .with_id("y")
            .with_embedding(vec![0.0, 3.0, 0.0]),
    )
    .await
    .expect("upsert");
    s.upsert(
        "v",
        Document::new("xy")
            .with_id("xy")
            .with_embedding(vec![1.0, 1.0, 0.0]),
    )
    .await
    .expect("upsert");
    let stored = s.get("v", "x").await.expect("get").expect("present");
    assert_eq!(stored.embedding, Some(vec![1.0, 0.0, 0.0]), "normalised");
    let hits = s
        .search(
            "v",
            &SearchQuery::new("", 3).with_embedding(vec![10.0, 1.0, 0.0]),
        )
        .await
        .expect("search");
    let order: Vec<_> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(order, ["x", "xy", "y"]);
    assert!((hits[0].score - 10.0 / 101f32.sqrt()).abs() < 1e-5);
    match s
        .upsert("v", Document::new("bad").with_embedding(vec![1.0, 2.0]))
        .await
    {
        Err(MemoryError::DimensionMismatch {
            expected: 3,
            found: 2,
        }) => {}
        other => panic!("expected DimensionMismatch, got {other:?}"),
    }
    assert!(matches!(
        s.search("v", &SearchQuery::new("", 3).with_embedding(vec![1.0]))
            .await,
        Err(MemoryError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        s.upsert("v", Document::new("z").with_embedding(vec![0.0, 0.0, 0.0]))
            .await,
        Err(MemoryError::InvalidArgument { .. })
    ));
    // A failing batch stores nothing.
    let batch = vec![
        Document::new("ok")
            .with_id("ok")
            .with_embedding(vec![0.0, 0.0, 1.0]),
        Document::new("bad").with_embedding(vec![f32::NAN, 0.0, 0.0]),
    ];
    assert!(s.upsert_batch("v", batch).await.is_err());
    assert_eq!(
        s.get("v", "ok").await.expect("get"),
        None,
        "batch is one transaction"
    );
}

#[tokio::test]
async fn facts_reconcile_rank_and_forget() {
    let owned = store().await;
    let s: &dyn UserMemoryStore = &owned;
    let added = s
        .upsert(
            "u1",
            FactCandidate::new("lives in Paris", 0.8).with_attribute("location", "Paris"),
        )
        .await
        .expect("upsert");
    let FactChange::Added { fact: paris } = added else {
        panic!("expected Added, got {added:?}");
    };
    let again = s
        .upsert(
            "u1",
            FactCandidate::new("lives in Paris", 0.7).with_attribute("location", "Paris"),
        )
        .await
        .expect("upsert");
    let FactChange::Reinforced { fact } = again else {
        panic!("expected Reinforced, got {again:?}");
    };
    assert_eq!(fact.id, paris.id);
    assert_eq!(fact.reinforcement_count, 1);
    assert!((fact.confidence - 0.9).abs() < 1e-6);
    let moved = s
        .upsert(
            "u1",
            FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin"),
        )
        .await
        .expect("upsert");
    let FactChange::Superseded { old, new: berlin } = moved else {
        panic!("expected Superseded, got {moved:?}");
    };
    assert_eq!(old.superseded_by.as_deref(), Some(berlin.id.as_str()));
    s.upsert(
        "u1",
        FactCandidate::new("likes Italian food", 0.9).with_attribute("likes", "Italian food"),
    )
    .await
    .expect("upsert");
    s.upsert("u1", FactCandidate::new("weak hunch about jazz", 0.1))
        .await
        .expect("upsert");
    let ignored = s
        .upsert("u1", FactCandidate::new("  ", 0.9))
        .await
        .expect("upsert");
    assert_eq!(ignored.kind(), "ignored");
    s.upsert("u2", FactCandidate::new("likes Italian food", 0.9))
        .await
        .expect("upsert");

    let current: Vec<_> = s
        .list("u1")
        .await
        .expect("list")
        .into_iter()
        .map(|f| f.text)
        .collect();
    assert_eq!(
        current,
        [
            "lives in Berlin",
            "likes Italian food",
            "weak hunch about jazz"
        ]
    );
    let history = s.history("u1", &berlin.id).await.expect("history");
    assert_eq!(
        history.iter().map(|f| f.id.clone()).collect::<Vec<_>>(),
        [paris.id.clone(), berlin.id.clone()]
    );
    assert_eq!(s.history("u1", &paris.id).await.expect("history").len(), 2);
    assert!(
        s.get("u2", &paris.id).await.expect("get").is_none(),
        "users isolated"
    );
    assert!(
        s.get("u1", &paris.id).await.expect("get").is_some(),
        "superseded kept"
    );

    let hits = s
        .search("u1", "what Italian food does she like", 5)
        .await
        .expect("search");
    assert_eq!(hits[0].fact.text, "likes Italian food");
    assert!(hits.iter().all(|h| h.fact.user_id == "u1"));
    assert!(
        hits.iter().all(|h| h.fact.text != "weak hunch about jazz"),
        "below min_confidence"
    );
    for h in &hits {
        assert!((0.0..=1.0).contains(&h.relevance));
        assert_eq!(h.score, rank_score(h.relevance, h.effective_confidence));
    }
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let lenient = owned.clone().with_policy(FactPolicy {
        half_life: Duration::from_secs(3600),
        min_confidence: 0.0,
    });
    assert_eq!(
        UserMemoryStore::search(&lenient, "u1", "jazz", 10)
            .await
            .expect("search")
            .len(),
        3
    );

    assert!(s.delete("u1", &berlin.id).await.expect("delete"));
    assert!(
        s.get("u1", &paris.id).await.expect("get").is_none(),
        "chain deleted"
    );
    assert!(!s.delete("u1", &berlin.id).await.expect("delete again"));
    let negative = s
        .upsert(
            "u1",
            FactCandidate::new("dislikes Italian food", 0.9)
                .with_attribute("dislikes", "Italian food")
                .with_polarity(Polarity::Negative),
        )
        .await
        .expect("upsert");
    assert_eq!(negative.kind(), "superseded");
    assert_eq!(s.forget_user("u1").await.expect("forget"), 3);
    assert!(s.list("u1").await.expect("list").is_empty());
    assert_eq!(s.list("u2").await.expect("list").len(), 1);
    assert_eq!(
        json!(s.search("u1", "food", 3).await.expect("search").len()),
        json!(0)
    );
}

/// Strong matches in another namespace never hide a namespace's own weak matches, and a
/// filter keeps the rank order of what it lets through.
#[tokio::test]
async fn sparse_search_finds_weak_matches_buried_under_other_namespaces() {
    let owned = store().await;
    let s: &dyn VectorStore = &owned;
    let noise: Vec<Document> = (0..500)
        .map(|i| Document::new(format!("apple apple apple orchard {i}")).with_id(format!("n{i}")))
        .collect();
    s.upsert_batch("noise", noise).await.expect("noise");
    let mut target = Vec::new();
    for i in 0..6 {
        let filler = "word ".repeat(10 + i * 5);
        target.push(
            Document::new(format!("apple {filler}"))
                .with_id(format!("t{i}"))
                .with_metadata("keep", i % 2 == 0),
        );
    }
    s.upsert_batch("target", target).await.expect("target");

    let hits = s
        .search("target", &SearchQuery::new("apple", 5))
        .await
        .expect("search");
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    // Shorter documents rank higher (a longer document's norm is larger).
    assert_eq!(ids, ["t0", "t1", "t2", "t3", "t4"]);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));

    let kept = s
        .search(
            "target",
            &SearchQuery::new("apple", 5).with_filter(Filter::new().eq("keep", true)),
        )
        .await
        .expect("filtered search");
    let ids: Vec<&str> = kept.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["t0", "t2", "t4"]);

    let none = s
        .search("empty", &SearchQuery::new("apple", 5))
        .await
        .expect("search of an empty namespace");
    assert!(none.is_empty());
}
