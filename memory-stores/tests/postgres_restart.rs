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

use std::time::Duration;

use agentmemory_stores::{PostgresOptions, PostgresStore};
use common::*;

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
    survives_restart(
        &store,
        Some(&store),
        "postgres",
        (&stop, &start),
        Duration::from_secs(6),
    )
    .await;
}
