//! Redis going away and coming back in the middle of a run: while it is down every
//! operation fails with a typed `MemoryError::Store { store: "redis", .. }` within a
//! bounded time; after it is back the same store instance works again (the connection
//! manager reconnects) and nothing acknowledged before the restart is lost.
//!
//! The server is stopped with `redis-cli shutdown nosave` and restarted by the commands in
//! `AGENTMEM_REDIS_STOP_CMD`/`AGENTMEM_REDIS_START_CMD` (exported by `.ci/services.sh`).
//! Acknowledged writes survive because the server runs with `appendonly yes` and
//! `appendfsync always` (every write is fsynced to the append-only file before the reply).
//! This is the only test in its binary, so no other test sees the server down.
#![cfg(feature = "redis")]

mod common;

use std::time::{Duration, Instant};

use common::*;
use memory_core::{
    ConversationStore, FactCandidate, KvStore, MemoryEntry, MemoryScope, UserMemoryStore,
};
use memory_stores::{RedisOptions, RedisStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_a_server_restart() {
    let Some(url) = server_url("AGENTMEM_REDIS_URL") else {
        return;
    };
    let Some((stop, start)) = server_control("AGENTMEM_REDIS_STOP_CMD", "AGENTMEM_REDIS_START_CMD")
    else {
        return;
    };
    let options = RedisOptions {
        connect_timeout: Duration::from_secs(1),
        response_timeout: Duration::from_secs(2),
        ..RedisOptions::default()
    };
    let store = RedisStore::connect_with(&url, options)
        .await
        .expect("connect");
    let conv = fresh("restart");
    let user = fresh("restart-user");
    let ns = fresh("restart-ns");
    for i in 0..20 {
        store
            .append(&conv, vec![msg(format!("before {i}"))])
            .await
            .expect("append");
    }
    store
        .upsert(&user, FactCandidate::new("likes sailing", 0.9))
        .await
        .expect("upsert");
    store
        .put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");

    sh(&stop);
    let bound = Duration::from_secs(8);
    let t = Instant::now();
    let err = store
        .append(&conv, vec![msg("while down")])
        .await
        .expect_err("server is down");
    eprintln!("server down: append failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "append failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "redis");
    let t = Instant::now();
    let err = store.load(&conv).await.expect_err("server is down");
    eprintln!("server down: load failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "load failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "redis");
    let t = Instant::now();
    let err = store
        .upsert(&user, FactCandidate::new("likes rowing", 0.9))
        .await
        .expect_err("server is down");
    eprintln!("server down: upsert failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "upsert failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "redis");
    let t = Instant::now();
    let err = KvStore::get(&store, &ns, "k")
        .await
        .expect_err("server is down");
    eprintln!("server down: get failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "get failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "redis");

    sh(&start);
    let events = until_ok(Duration::from_secs(20), || store.load(&conv)).await;
    let texts: Vec<String> = events.iter().map(|e| text_of(&e.event)).collect();
    let want: Vec<String> = (0..20).map(|i| format!("before {i}")).collect();
    assert_eq!(
        texts, want,
        "every acknowledged event survived, nothing else appeared"
    );
    assert_eq!(
        store
            .append(&conv, vec![msg("after")])
            .await
            .expect("append after restart"),
        21,
        "seqs continue"
    );
    let facts = UserMemoryStore::list(&store, &user).await.expect("list");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].text, "likes sailing");
    assert!(KvStore::get(&store, &ns, "k").await.expect("get").is_some());
    ConversationStore::delete(&store, &conv)
        .await
        .expect("cleanup");
    store.forget_user(&user).await.expect("cleanup");
    store.clear(&ns).await.expect("cleanup");
}
