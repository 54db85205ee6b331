//! FileStore keeps user facts and vector documents on disk too: the conformance suites, and
//! a second store opened on the same directory (another process, in effect) sees them.
#![cfg(feature = "file")]

use agentmemory_core::testkit;
use agentmemory_core::{
    Document, FactCandidate, FactChange, SearchQuery, UserMemoryStore, VectorStore,
};
use agentmemory_stores::FileStore;

#[tokio::test]
async fn facts_conformance() {
    let dir = tempfile::tempdir().expect("tempdir");
    testkit::facts::run_all(&FileStore::open(dir.path()).await.expect("open")).await;
}

#[tokio::test]
async fn vector_conformance() {
    let dir = tempfile::tempdir().expect("tempdir");
    testkit::vector::run_all(&FileStore::open(dir.path()).await.expect("open")).await;
}

#[tokio::test]
async fn facts_and_documents_survive_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = FileStore::open(dir.path()).await.expect("open");
    let added = UserMemoryStore::upsert(&first, "ada", FactCandidate::new("lives in Paris", 0.9))
        .await
        .expect("upsert fact");
    assert!(matches!(added, FactChange::Added { .. }), "{added:?}");
    VectorStore::upsert_batch(
        &first,
        "notes",
        vec![
            Document::new("the cat sat on the mat").with_id("cat"),
            Document::new("rust ownership and borrowing").with_id("rust"),
        ],
    )
    .await
    .expect("upsert documents");
    // a search builds the first store's index before the second store writes
    let hits = VectorStore::search(&first, "notes", &SearchQuery::new("borrowing", 5))
        .await
        .expect("search");
    assert_eq!(hits[0].id, "rust");

    let second = FileStore::open(dir.path()).await.expect("reopen");
    let facts = UserMemoryStore::list(&second, "ada").await.expect("list");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].text, "lives in Paris");
    assert_eq!(second.len("notes").await.expect("len"), 2);
    VectorStore::upsert(
        &second,
        "notes",
        Document::new("a mat for the kitchen").with_id("mat"),
    )
    .await
    .expect("upsert from the second store");

    // the first store notices the file changed and searches the new document too
    let hits = VectorStore::search(&first, "notes", &SearchQuery::new("kitchen", 5))
        .await
        .expect("search again");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("mat"));
    let found = UserMemoryStore::search(&second, "ada", "where does she live: Paris", 3)
        .await
        .expect("search facts");
    assert_eq!(found.len(), 1);
}

#[tokio::test]
async fn episodes_conformance() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    let episodes = agentmemory_core::episodes::VectorEpisodeStore::new(std::sync::Arc::new(store));
    testkit::episodes::run_all(&episodes).await;
}
