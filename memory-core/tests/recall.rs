//! The vector and facts conformance suites run against the in-memory stores.
#![cfg(feature = "testkit")]

use std::sync::Arc;

use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::testkit;
use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};

#[tokio::test]
async fn vector_conformance() {
    let store = InMemoryVectorStore::new();
    testkit::vector::run_all(&store).await;
    // Twice on the same store: the suite must not depend on a fresh backend.
    testkit::vector::run_all(&store).await;
}

#[tokio::test]
async fn facts_conformance() {
    let store = InMemoryUserMemoryStore::new();
    testkit::facts::run_all(&store).await;
    testkit::facts::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_to_many_namespaces_and_users() {
    let vectors = Arc::new(InMemoryVectorStore::new());
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let mut tasks = Vec::new();
    for t in 0..8 {
        let vectors = Arc::clone(&vectors);
        let facts = Arc::clone(&facts);
        tasks.push(tokio::spawn(async move {
            let ns = format!("ns{}", t % 2);
            let user = format!("user{t}");
            for i in 0..50 {
                vectors
                    .upsert(
                        &ns,
                        Document::new(format!("topic{i} writer{t}")).with_id(format!("{t}-{i}")),
                    )
                    .await
                    .unwrap();
                facts
                    .upsert(&user, FactCandidate::new(format!("likes thing{i}"), 0.8))
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(vectors.len("ns0").await.unwrap(), 200);
    assert_eq!(vectors.len("ns1").await.unwrap(), 200);
    let hits = vectors
        .search("ns1", &SearchQuery::new("writer3 topic7", 1))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "3-7");
    for t in 0..8 {
        assert_eq!(facts.list(&format!("user{t}")).await.unwrap().len(), 50);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_and_forget_racing_with_writers_stay_consistent() {
    let vectors = Arc::new(InMemoryVectorStore::new());
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let writer = {
        let (vectors, facts) = (Arc::clone(&vectors), Arc::clone(&facts));
        tokio::spawn(async move {
            for i in 0..300 {
                let doc = Document::new(format!("racing item{i}")).with_id(format!("d{i}"));
                vectors.upsert("race", doc).await.unwrap();
                facts
                    .upsert("racer", FactCandidate::new(format!("likes item{i}"), 0.9))
                    .await
                    .unwrap();
            }
        })
    };
    let clearer = {
        let (vectors, facts) = (Arc::clone(&vectors), Arc::clone(&facts));
        tokio::spawn(async move {
            for _ in 0..100 {
                vectors.clear("race").await.unwrap();
                facts.forget_user("racer").await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    writer.await.unwrap();
    clearer.await.unwrap();
    // Whatever survived is fully indexed: every stored document is found by its words.
    let n = vectors.len("race").await.unwrap();
    let hits = vectors
        .search("race", &SearchQuery::new("racing", 1000))
        .await
        .unwrap();
    assert_eq!(hits.len(), n);
    for hit in &hits {
        assert!(vectors.get("race", &hit.id).await.unwrap().is_some());
    }
    // The same holds for facts: listed and searchable agree.
    let listed = facts.list("racer").await.unwrap().len();
    let found = facts.search("racer", "item", 1000).await.unwrap().len();
    assert_eq!(listed, found);
}
