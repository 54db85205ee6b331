//! `RedisStore` on a Redis Cluster node (`AGENTMEM_REDIS_CLUSTER_URL`, a single node owning
//! all 16,384 slots, started by `.ci/services.sh`): it refuses any command, `MULTI` or
//! script whose keys hash to different slots (`CROSSSLOT`), so the conformance suites pass
//! here only if every multi-key operation of the store stays within one slot.
#![cfg(feature = "redis")]

mod common;

use std::sync::Arc;

use agentmemory_core::{testkit, ConversationStore, KvStore, MemoryEntry, MemoryScope};
use agentmemory_stores::{RedisOptions, RedisStore};
use common::*;

const URL_ENV: &str = "AGENTMEM_REDIS_CLUSTER_URL";

/// A store under a prefix of its own on the cluster node, after checking the node really
/// is a cluster node that refuses cross-slot commands.
async fn connect() -> Option<RedisStore> {
    let url = server_url(URL_ENV)?;
    let client = redis::Client::open(url.as_str()).expect("url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect to the cluster node");
    let info: String = redis::cmd("CLUSTER")
        .arg("INFO")
        .query_async(&mut conn)
        .await
        .expect("CLUSTER INFO: the server must run with cluster-enabled yes");
    assert!(info.contains("cluster_state:ok"), "{info}");
    // "a" and "b" hash to different slots: the node must refuse them together.
    let err = redis::cmd("MSET")
        .arg("a")
        .arg("1")
        .arg("b")
        .arg("2")
        .query_async::<()>(&mut conn)
        .await
        .expect_err("a cluster node refuses cross-slot commands");
    assert!(
        err.to_string().to_uppercase().contains("CROSSSLOT"),
        "{err}"
    );
    Some(
        RedisStore::connect_with(
            &url,
            RedisOptions {
                prefix: format!("agentmem-cluster-{}:", ulid::Ulid::new()),
                ..RedisOptions::default()
            },
        )
        .await
        .expect("connect"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conversation_conformance_on_a_cluster() {
    let Some(store) = connect().await else { return };
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_conformance_on_a_cluster() {
    let Some(store) = connect().await else { return };
    testkit::kv::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn facts_conformance_on_a_cluster() {
    let Some(store) = connect().await else { return };
    testkit::facts::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn vector_conformance_on_a_cluster() {
    let Some(store) = connect().await else { return };
    testkit::vector::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_ids_are_isolated_on_a_cluster() {
    let Some(store) = connect().await else { return };
    hostile_ids_isolated(&store, &store, &store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn round_trips_and_concurrency_on_a_cluster() {
    let Some(store) = connect().await else { return };
    let store = Arc::new(store);
    thirty_two_writers(store.clone()).await;
    concurrent_fact_writers(store.clone(), store.clone()).await;
    let ns = fresh("cluster-kv");
    store
        .put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");
    assert_eq!(KvStore::list(&*store, &ns).await.expect("list").len(), 1);
    assert_eq!(store.cleanup_expired().await.expect("cleanup"), 0);
    assert_eq!(KvStore::clear(&*store, &ns).await.expect("clear"), 1);
    let id = fresh("cluster-conv");
    store.append(&id, vec![msg("hi")]).await.expect("append");
    assert!(store
        .list_conversations()
        .await
        .expect("list")
        .contains(&id));
    assert!(ConversationStore::delete(&*store, &id)
        .await
        .expect("delete"));
    assert!(!store
        .list_conversations()
        .await
        .expect("list")
        .contains(&id));
}
