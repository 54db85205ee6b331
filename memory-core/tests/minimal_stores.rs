//! A store written outside this crate implements only the required methods of
//! `UserMemoryStore` and `VectorStore`; the provided ones (`search`, `upsert`, ...) reach
//! them without recursing.

use std::sync::atomic::{AtomicUsize, Ordering};

use agentmemory_core::facts::{
    FactCandidate, FactChange, FactQuery, InMemoryUserMemoryStore, MemoryFact, ScoredFact,
    UserMemoryStore,
};
use agentmemory_core::vector::{
    Document, InMemoryVectorStore, SearchHit, SearchQuery, VectorStore,
};
use agentmemory_core::Result;
use async_trait::async_trait;

/// A third-party fact store: only the required methods, counting the searches it answers.
#[derive(Default)]
struct MinimalFacts {
    inner: InMemoryUserMemoryStore,
    searches: AtomicUsize,
}

#[async_trait]
impl UserMemoryStore for MinimalFacts {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        self.inner.upsert(user_id, candidate).await
    }
    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        self.searches.fetch_add(1, Ordering::Relaxed);
        self.inner.search_query(user_id, query).await
    }
    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        self.inner.list(user_id).await
    }
    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        self.inner.get(user_id, fact_id).await
    }
    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        self.inner.delete(user_id, fact_id).await
    }
    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        self.inner.forget_user(user_id).await
    }
    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        self.inner.history(user_id, fact_id).await
    }
    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        self.inner.import_records(user_id, records).await
    }
}

/// A third-party document store: only the required methods, counting the batches it writes.
#[derive(Default)]
struct MinimalVectors {
    inner: InMemoryVectorStore,
    batches: AtomicUsize,
}

#[async_trait]
impl VectorStore for MinimalVectors {
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.inner.upsert_batch(namespace, documents).await
    }
    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.inner.search(namespace, query).await
    }
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        self.inner.get(namespace, id).await
    }
    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        self.inner.delete(namespace, ids).await
    }
    async fn clear(&self, namespace: &str) -> Result<()> {
        self.inner.clear(namespace).await
    }
    async fn len(&self, namespace: &str) -> Result<usize> {
        self.inner.len(namespace).await
    }
    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        self.inner.ids(namespace).await
    }
}

#[tokio::test]
async fn provided_search_goes_through_search_query() {
    let store = MinimalFacts::default();
    store
        .upsert("alice", FactCandidate::new("Alice loves museums", 0.9))
        .await
        .unwrap();
    store
        .upsert("alice", FactCandidate::new("Alice lives in Vienna", 0.9))
        .await
        .unwrap();

    let hits = store.search("alice", "museums", 1).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].fact.text, "Alice loves museums");
    assert_eq!(store.searches.load(Ordering::Relaxed), 1);
    assert!(store.search("bob", "museums", 5).await.unwrap().is_empty());
}

#[tokio::test]
async fn provided_upsert_writes_a_batch_of_one() {
    let store = MinimalVectors::default();
    let id = store
        .upsert("docs", Document::new("The Albertina shows Dürer's hare"))
        .await
        .unwrap();
    assert_eq!(store.batches.load(Ordering::Relaxed), 1);
    let stored = store.get("docs", &id).await.unwrap().unwrap();
    assert_eq!(stored.content, "The Albertina shows Dürer's hare");
    let hits = store
        .search("docs", &SearchQuery::new("hare", 3))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, id);
}
