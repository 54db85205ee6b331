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

use std::time::Duration;

use agentmemory_stores::{RedisOptions, RedisStore};
use common::*;

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
    survives_restart(
        &store,
        None,
        "redis",
        (&stop, &start),
        Duration::from_secs(8),
    )
    .await;
}
