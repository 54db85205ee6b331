//! `RedisStore` against a real Redis server (`AGENTMEM_REDIS_URL`, exported by
//! `.ci/services.sh`): the conformance suites, isolation of hostile ids, concurrency,
//! two application instances and two processes sharing one server, `redis://` URLs,
//! and typed errors from an unreachable server.
#![cfg(feature = "redis")]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::di::tokens;
use agentmemory_core::{
    testkit, ConversationStore, KvStore, MemoryEntry, MemoryScope, UserMemoryStore, VectorStore,
};
use agentmemory_stores::{RedisOptions, RedisStore, StoreUrl};
use common::*;

const URL_ENV: &str = "AGENTMEM_REDIS_URL";

async fn connect() -> Option<RedisStore> {
    let url = server_url(URL_ENV)?;
    Some(RedisStore::connect(&url).await.expect("connect to redis"))
}

/// Two connections (as two instances would have): the one searching keeps an index of
/// the user's facts, and sees every change the other makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_fact_ranking_sees_another_instance() {
    let (Some(reader), Some(writer)) = (connect().await, connect().await) else {
        return;
    };
    common::check_cached_ranking_sees_another_writer(&reader, &writer, "cache-check-redis").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conversation_conformance() {
    let Some(store) = connect().await else { return };
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_conformance() {
    let Some(store) = connect().await else { return };
    testkit::kv::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn facts_conformance() {
    let Some(store) = connect().await else { return };
    testkit::facts::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_ids_are_isolated() {
    let Some(store) = connect().await else { return };
    hostile_ids_isolated(&store, &store, &store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_custom_prefix_separates_stores() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let a = RedisStore::connect(&url).await.expect("connect");
    let b = RedisStore::connect_with(
        &url,
        RedisOptions {
            prefix: format!("agentmem-test-{}:", ulid::Ulid::new()),
            ..RedisOptions::default()
        },
    )
    .await
    .expect("connect");
    let ns = fresh("prefix");
    a.put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");
    assert!(KvStore::get(&b, &ns, "k").await.expect("get").is_none());
    assert!(KvStore::list(&b, &ns).await.expect("list").is_empty());
    assert_eq!(KvStore::clear(&a, &ns).await.expect("clear"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_concurrent_writers_keep_one_order() {
    let Some(store) = connect().await else { return };
    thirty_two_writers(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_share_one_server() {
    let Some(a) = connect().await else { return };
    let b = connect().await.expect("second instance");
    two_instances_share((&a, &a, &a), (&b, &b, &b)).await;
    concurrent_fact_writers(Arc::new(a), Arc::new(b)).await;
}

/// In child mode (set by `two_processes_share_one_server`) this is the second process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_child_process() {
    let (Ok(id), Ok(user)) = (std::env::var(CHILD_CONV), std::env::var(CHILD_USER)) else {
        return;
    };
    let store = connect().await.expect("child needs the server");
    child_side(&store, &store, &id, &user).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_one_server() {
    if std::env::var(CHILD_CONV).is_ok() {
        return;
    }
    let Some(store) = connect().await else { return };
    parent_side(&store, &store, "redis_child_process").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_urls_open_a_container() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let parsed: StoreUrl = url.parse().expect("parse");
    assert_eq!(parsed, StoreUrl::Redis(url.clone()));
    let container = parsed.open().await.expect("open");
    let conv = container
        .resolve::<dyn ConversationStore>(Some(tokens::CONVERSATIONS))
        .expect("conversations");
    let id = fresh("url");
    assert_eq!(conv.append(&id, vec![msg("hi")]).await.expect("append"), 1);
    let direct = RedisStore::connect(&url).await.expect("connect");
    assert_eq!(
        direct.load(&id).await.expect("load").len(),
        1,
        "same server"
    );
    assert!(
        container
            .resolve::<dyn VectorStore>(Some(tokens::VECTORS))
            .is_ok(),
        "an in-memory vector store is registered"
    );
    assert!(container
        .resolve::<dyn UserMemoryStore>(Some(tokens::USER_MEMORY))
        .is_ok());
    ConversationStore::delete(&direct, &id)
        .await
        .expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_typed_error_in_bounded_time() {
    // Port 1 is never a Redis server; a black-hole address would test the connect timeout.
    for url in ["redis://127.0.0.1:1/", "redis://10.255.255.1:6379/"] {
        let start = Instant::now();
        let err = RedisStore::connect_with(
            url,
            RedisOptions {
                connect_timeout: Duration::from_secs(1),
                ..RedisOptions::default()
            },
        )
        .await
        .expect_err("nothing listens there");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{url}: took {:?}",
            start.elapsed()
        );
        assert_store_error(&err, "redis");
    }
    assert!(RedisStore::connect("not a url").await.is_err());
}
