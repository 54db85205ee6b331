//! The vector and facts conformance suites (memory-core `testkit::vector` / `testkit::facts`)
//! against SqliteStore, on an in-memory database and on a file.
#![cfg(feature = "sqlite")]

use agentmemory_core::testkit;
use agentmemory_stores::SqliteStore;

#[tokio::test]
async fn vector_conformance() {
    testkit::vector::run_all(&SqliteStore::open_in_memory().await.expect("open")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("v.db"))
        .await
        .expect("open");
    testkit::vector::run_all(&store).await;
}

#[tokio::test]
async fn facts_conformance() {
    testkit::facts::run_all(&SqliteStore::open_in_memory().await.expect("open")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("f.db"))
        .await
        .expect("open");
    testkit::facts::run_all(&store).await;
}

#[tokio::test]
async fn episodes_conformance() {
    use agentmemory_core::episodes::VectorEpisodeStore;
    use std::sync::Arc;
    let store = SqliteStore::open_in_memory().await.expect("open");
    testkit::episodes::run_all(&VectorEpisodeStore::new(Arc::new(store))).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(dir.path().join("e.db"))
        .await
        .expect("open");
    testkit::episodes::run_all(&VectorEpisodeStore::new(Arc::new(store))).await;
}
