//! One node of the three-node Redis Cluster (`AGENTMEM_REDIS_CLUSTER3_URL`) stopped and
//! started again while writers run against every node, through one `RedisStore`:
//!
//! - while the node is down, the writes whose keys it owns fail with a typed
//!   `MemoryError::Store { store: "redis", .. }` in bounded time (never a panic or hang),
//!   and the writes owned by the other nodes keep succeeding;
//! - after it is back, the same store writes to it again (the cluster client reconnects);
//! - every write acknowledged before, during or after the outage is there, once.
//!
//! The node is stopped with `redis-cli shutdown nosave` and started from its data
//! directory by `AGENTMEM_REDIS_CLUSTER3_STOP_CMD` / `_START_CMD` (`.ci/services.sh`);
//! acknowledged writes survive because every node runs with `appendonly yes` and
//! `appendfsync always`. This is the only test in its binary, so no other test sees the
//! node down.
#![cfg(feature = "redis")]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentmemory_core::{
    ConversationStore, FactCandidate, KvStore, MemoryEntry, MemoryScope, UserMemoryStore,
};
use agentmemory_stores::{RedisOptions, RedisStore};
use common::cluster::{self, CLUSTER3_URL};
use common::*;

const STOP_CMD: &str = "AGENTMEM_REDIS_CLUSTER3_STOP_CMD";
const START_CMD: &str = "AGENTMEM_REDIS_CLUSTER3_START_CMD";

/// The longest a failing write may take while the node is down: an append on a cluster
/// is three requests, each bounded by the store's timeouts (1 s + 2 s).
const FAIL_BOUND: Duration = Duration::from_secs(12);

/// What one writer saw.
#[derive(Default)]
struct Log {
    /// Appended events acknowledged: (seq, text).
    events: Vec<(u64, String)>,
    /// KV keys whose put was acknowledged.
    entries: Vec<String>,
    /// Fact texts whose upsert was acknowledged.
    facts: Vec<String>,
    /// When each write was acknowledged.
    acked_at: Vec<Instant>,
    /// When each failed write started, and how long it took to fail.
    failed: Vec<(Instant, Duration)>,
}

/// One writer's keys: a conversation, a KV namespace and a user, all named `id`.
async fn write_until(
    store: Arc<RedisStore>,
    id: String,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Log>>,
) {
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let text = format!("{id} #{n}");
        let t = Instant::now();
        let appended = store.append(&id, vec![msg(text.clone())]).await;
        record(
            &log,
            t,
            appended.map(move |seq| move |l: &mut Log| l.events.push((seq, text))),
        );

        let key = format!("k{n}");
        let entry = MemoryEntry::new(MemoryScope::Working, key.clone(), n.into());
        let t = Instant::now();
        let put = store.put(&id, entry).await;
        record(
            &log,
            t,
            put.map(move |()| move |l: &mut Log| l.entries.push(key)),
        );

        if n.is_multiple_of(4) {
            let fact = format!("counted to {n}");
            let t = Instant::now();
            let upserted =
                UserMemoryStore::upsert(&*store, &id, FactCandidate::new(fact.clone(), 0.8)).await;
            record(
                &log,
                t,
                upserted.map(move |_| move |l: &mut Log| l.facts.push(fact)),
            );
        }
        n += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Records an acknowledged write (applying `ok` to the log) or a failed one, which must
/// be a typed store error.
fn record<F: FnOnce(&mut Log)>(
    log: &Mutex<Log>,
    started: Instant,
    result: agentmemory_core::Result<F>,
) {
    let mut log = log.lock().expect("log");
    match result {
        Ok(ok) => {
            ok(&mut log);
            log.acked_at.push(Instant::now());
        }
        Err(e) => {
            assert_store_error(&e, "redis");
            log.failed.push((started, started.elapsed()));
        }
    }
}

/// Whether the node at `addr` answers a PING.
async fn answers(addr: &str) -> bool {
    let Ok(client) = redis::Client::open(format!("redis://{addr}/")) else {
        return false;
    };
    let ping = async {
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), ping).await,
        Ok(Ok(_))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_restarted_mid_run_loses_no_acknowledged_write() {
    let Some(url) = server_url(CLUSTER3_URL) else {
        return;
    };
    let Some((stop_cmd, start_cmd)) = server_control(STOP_CMD, START_CMD) else {
        return;
    };
    let prefix = format!("agentmem-c3-restart-{}:", ulid::Ulid::new());
    let options = RedisOptions {
        prefix: prefix.clone(),
        connect_timeout: Duration::from_secs(1),
        response_timeout: Duration::from_secs(2),
        ..RedisOptions::default()
    };
    let store = Arc::new(
        RedisStore::connect_with(&url, options.clone())
            .await
            .expect("connect"),
    );
    let mut any = cluster::any_node(&url).await;
    let primaries = cluster::primaries(&mut any).await;
    assert_eq!(primaries.len(), 3, "{primaries:?}");
    let index_node = cluster::owner_of(&mut any, &format!("{prefix}{{index}}:conversations")).await;

    // Writers whose conversations are on every node, at least two per node.
    let mut writers: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    loop {
        let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, node) in &writers {
            *per_node.entry(node.as_str()).or_default() += 1;
        }
        if writers.len() >= 12
            && primaries
                .iter()
                .all(|p| per_node.get(p.as_str()) >= Some(&2))
        {
            break;
        }
        let id = format!("writer {i}");
        let key = format!("{prefix}{{conv:{}}}:seq", cluster::hex(&id));
        let node = cluster::owner_of(&mut any, &key).await;
        writers.push((id, node));
        i += 1;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let logs: Vec<Arc<Mutex<Log>>> = writers.iter().map(|_| Arc::default()).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for ((id, _), log) in writers.iter().zip(&logs) {
        tasks.spawn(write_until(
            Arc::clone(&store),
            id.clone(),
            Arc::clone(&stop),
            Arc::clone(log),
        ));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let stop_began = Instant::now();
    let cmd = stop_cmd.clone();
    tokio::task::spawn_blocking(move || sh(&cmd))
        .await
        .expect("stop");
    let stopped_at = Instant::now();
    let mut down = Vec::new();
    for p in &primaries {
        if !answers(p).await {
            down.push(p.clone());
        }
    }
    assert_eq!(down.len(), 1, "exactly one node is down: {down:?}");
    let down = down.remove(0);
    eprintln!(
        "node {down} stopped; writers on it: {}",
        writers.iter().filter(|(_, n)| *n == down).count()
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    let cmd = start_cmd.clone();
    tokio::task::spawn_blocking(move || sh(&cmd))
        .await
        .expect("start");
    let started_at = Instant::now();

    // The same store writes to every node again, the restarted one included.
    let deadline = started_at + Duration::from_secs(30);
    loop {
        let recovered = logs.iter().all(|l| {
            l.lock()
                .expect("log")
                .acked_at
                .iter()
                .any(|t| *t > started_at)
        });
        if recovered {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "writers not back 30 s after the restart"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    while let Some(joined) = tasks.join_next().await {
        joined.expect("a writer panicked");
    }
    eprintln!("node back after {:?}", started_at - stopped_at);
    let logs: Vec<Log> = logs
        .iter()
        .map(|l| std::mem::take(&mut *l.lock().expect("log")))
        .collect();

    for ((id, node), log) in writers.iter().zip(&logs) {
        for (started, took) in &log.failed {
            assert!(
                *took < FAIL_BOUND,
                "{id}: a write failed only after {took:?}"
            );
            assert!(
                *started + *took >= stop_began,
                "{id}: a write failed before the node was stopped"
            );
        }
        let during = |t: &Instant| *t > stopped_at && *t < started_at;
        if *node == down {
            assert!(
                log.failed.iter().any(|(t, _)| during(t)),
                "{id} (on the stopped node): no write failed while it was down"
            );
        } else if index_node != down {
            assert!(
                log.acked_at.iter().any(during),
                "{id} (on {node}): no write acknowledged while {down} was down"
            );
        }
    }

    // Everything acknowledged is there, once, read through the same store and a new one.
    let fresh_store = RedisStore::connect_with(&url, options)
        .await
        .expect("connect again");
    let (mut events_total, mut failed_total, mut slowest) = (0, 0, Duration::ZERO);
    for ((id, _), log) in writers.iter().zip(&logs) {
        events_total += log.events.len();
        failed_total += log.failed.len();
        slowest = log
            .failed
            .iter()
            .map(|(_, took)| *took)
            .fold(slowest, Duration::max);
        for reader in [&*store, &fresh_store] {
            let events = reader.load(id).await.expect("load");
            let texts: Vec<String> = events.iter().map(|e| text_of(&e.event)).collect();
            let unique: HashSet<&String> = texts.iter().collect();
            assert_eq!(unique.len(), texts.len(), "{id}: no event stored twice");
            for (i, e) in events.iter().enumerate() {
                assert_eq!(e.seq, i as u64 + 1, "{id}: seqs contiguous");
            }
            for (seq, text) in &log.events {
                let at = events.get(*seq as usize - 1).map(|e| text_of(&e.event));
                assert_eq!(
                    at.as_deref(),
                    Some(text.as_str()),
                    "{id}: acknowledged event {seq}"
                );
            }
            let entries: HashSet<String> = KvStore::list(reader, id)
                .await
                .expect("list entries")
                .into_iter()
                .map(|e| e.key)
                .collect();
            for key in &log.entries {
                assert!(entries.contains(key), "{id}: acknowledged entry {key}");
            }
            let facts: HashSet<String> = UserMemoryStore::list(reader, id)
                .await
                .expect("list facts")
                .into_iter()
                .map(|f| f.text)
                .collect();
            for fact in &log.facts {
                assert!(facts.contains(fact), "{id}: acknowledged fact {fact:?}");
            }
        }
    }
    eprintln!(
        "{} writers, {events_total} acknowledged appends, {failed_total} typed failures \
         (the slowest after {slowest:?})",
        writers.len()
    );
    assert!(failed_total > 0, "the outage failed some writes");
    for (id, _) in &writers {
        ConversationStore::delete(&*store, id)
            .await
            .expect("cleanup");
        KvStore::clear(&*store, id).await.expect("cleanup");
        store.forget_user(id).await.expect("cleanup");
    }
}
