//! `RedisStore` keeps vector documents in Redis (`AGENTMEM_REDIS_URL`): the vector
//! conformance suite, and a second connection (another process, in effect) sees the first
//! one's documents, also through a `redis://` URL's container.
#![cfg(feature = "redis")]

mod common;

use agentmemory_core::di::tokens;
use agentmemory_core::{testkit, Document, SearchQuery, VectorStore};
use agentmemory_stores::{RedisStore, StoreUrl};
use common::*;

const URL_ENV: &str = "AGENTMEM_REDIS_URL";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_conformance() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let store = RedisStore::connect(&url).await.expect("connect");
    testkit::vector::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_written_through_one_connection_are_found_through_another() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let ns = fresh("docs");
    let container = url
        .parse::<StoreUrl>()
        .expect("parse")
        .open()
        .await
        .expect("open");
    let first = container
        .resolve::<dyn VectorStore>(Some(tokens::VECTORS))
        .expect("vectors");
    first
        .upsert(
            &ns,
            Document::new("rust ownership and borrowing").with_id("rust"),
        )
        .await
        .expect("upsert");
    assert_eq!(
        first
            .search(&ns, &SearchQuery::new("borrowing", 3))
            .await
            .expect("search")[0]
            .id,
        "rust"
    );

    let second = RedisStore::connect(&url).await.expect("connect");
    assert_eq!(second.len(&ns).await.expect("len"), 1, "kept in redis");
    second
        .upsert(&ns, Document::new("a mat for the kitchen").with_id("mat"))
        .await
        .expect("upsert");
    // the first connection's cached index is rebuilt: the version moved
    let hits = first
        .search(&ns, &SearchQuery::new("kitchen", 3))
        .await
        .expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("mat"));
    second.clear(&ns).await.expect("cleanup");
    assert_eq!(first.len(&ns).await.expect("len"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn episodes_conformance() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let store = RedisStore::connect(&url).await.expect("connect");
    let episodes = agentmemory_core::episodes::VectorEpisodeStore::new(std::sync::Arc::new(store));
    testkit::episodes::run_all(&episodes).await;
}
