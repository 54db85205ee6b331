//! PostgreSQL going away and coming back in the middle of a run: the server is stopped
//! (`pg_ctl stop -m fast`) and started again (`pg_ctl start`) by the commands in
//! `AGENTMEM_POSTGRES_STOP_CMD`/`AGENTMEM_POSTGRES_START_CMD` (exported by
//! `.ci/services.sh`; they run `pg_ctl` as the server's unprivileged user). While it is
//! down every operation fails with a typed `MemoryError::Store { store: "postgres", .. }`
//! within a bounded time; after it is back the same store instance works again (the pool
//! drops dead connections and opens new ones) and every committed write is still there.
//! This is the only test in its binary, so no other test sees the server down.
#![cfg(feature = "postgres")]

mod common;

use std::time::{Duration, Instant};

use common::*;
use memory_core::vector::Document;
use memory_core::{
    ConversationStore, FactCandidate, KvStore, MemoryEntry, MemoryScope, UserMemoryStore,
    VectorStore,
};
use memory_stores::{PostgresOptions, PostgresStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_a_server_restart() {
    let Some(url) = server_url("AGENTMEM_POSTGRES_URL") else {
        return;
    };
    let Some((stop, start)) =
        server_control("AGENTMEM_POSTGRES_STOP_CMD", "AGENTMEM_POSTGRES_START_CMD")
    else {
        return;
    };
    let options = PostgresOptions {
        connect_timeout: Duration::from_secs(1),
        operation_timeout: Duration::from_secs(3),
        ..PostgresOptions::default()
    };
    let store = PostgresStore::connect_with(&url, options)
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
    UserMemoryStore::upsert(&store, &user, FactCandidate::new("likes sailing", 0.9))
        .await
        .expect("upsert");
    store
        .put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");
    VectorStore::upsert(&store, &ns, Document::new("kept").with_id("d"))
        .await
        .expect("upsert doc");

    sh(&stop);
    let bound = Duration::from_secs(6);
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
    assert_store_error(&err, "postgres");
    let t = Instant::now();
    let err = store.load(&conv).await.expect_err("server is down");
    eprintln!("server down: load failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "load failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "postgres");
    let t = Instant::now();
    let err = UserMemoryStore::upsert(&store, &user, FactCandidate::new("likes rowing", 0.9))
        .await
        .expect_err("server is down");
    eprintln!("server down: upsert failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "upsert failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "postgres");
    let t = Instant::now();
    let err = VectorStore::len(&store, &ns)
        .await
        .expect_err("server is down");
    eprintln!("server down: len failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "len failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, "postgres");

    sh(&start);
    let events = until_ok(Duration::from_secs(20), || store.load(&conv)).await;
    let texts: Vec<String> = events.iter().map(|e| text_of(&e.event)).collect();
    let want: Vec<String> = (0..20).map(|i| format!("before {i}")).collect();
    assert_eq!(
        texts, want,
        "every committed event survived, nothing else appeared"
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
    assert_eq!(VectorStore::len(&store, &ns).await.expect("len"), 1);
    ConversationStore::delete(&store, &conv)
        .await
        .expect("cleanup");
    store.forget_user(&user).await.expect("cleanup");
    KvStore::clear(&store, &ns).await.expect("cleanup");
    VectorStore::clear(&store, &ns).await.expect("cleanup");
}
