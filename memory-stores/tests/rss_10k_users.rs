//! The resident memory of one process serving 10,000 users on SQLite: each user gets
//! facts and episodes (one document namespace per user) and is searched once, as a
//! server's recall does. Ignored by default (it writes 10,000 users); run with
//!
//! ```text
//! cargo test --release -p agentmemory-stores --test rss_10k_users -- --ignored --nocapture
//! ```
//!
//! `RSS_USERS`, `RSS_FACTS` and `RSS_EPISODES` change the counts (10,000, 20 and 50); the
//! caches' budgets come from `AGENTMEM_FACT_CACHE_BYTES` / `AGENTMEM_INDEX_CACHE_BYTES`
//! (32 MiB and 128 MiB by default). It only uses the public API of every version, so it
//! measures an older checkout as it is.
#![cfg(feature = "sqlite")]

use std::time::Instant;

use agentmemory_core::vector::{Document, SearchQuery, VectorStore};
use agentmemory_core::{FactCandidate, UserMemoryStore};
use agentmemory_stores::SqliteStore;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `VmRSS`, `VmHWM` and `RssAnon` (the heap's part) of this process, in MiB.
fn rss() -> (f64, f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"), field("RssAnon:"))
}

fn report(stage: &str, started: Instant) {
    let (now, peak, anon) = rss();
    println!(
        "{stage:<32} VmRSS {now:7.1} MiB  VmHWM {peak:7.1} MiB  RssAnon {anon:7.1} MiB  ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
}

const WORDS: &[&str] = &[
    "coffee", "hiking", "garden", "piano", "train", "paris", "lisbon", "sister", "budget",
    "report", "meeting", "dinner", "weekend", "project", "deadline", "doctor", "running", "novel",
    "recipe", "holiday", "camera", "bicycle", "concert", "museum", "market",
];

fn word(i: usize) -> &'static str {
    WORDS[i % WORDS.len()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes 10,000 users; run by hand to measure RSS"]
async fn rss_of_ten_thousand_users() {
    let users = env("RSS_USERS", 10_000);
    let facts = env("RSS_FACTS", 20);
    let episodes = env("RSS_EPISODES", 50);
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    report("start", started);
    let store = SqliteStore::open(dir.path().join("rss.db"))
        .await
        .expect("open");
    report("opened", started);
    for u in 0..users {
        let user = format!("user{u:05}");
        for f in 0..facts {
            let value = format!("{} {}", word(u + f), f);
            let c = FactCandidate::new(format!("likes {value} number {u}"), 0.8)
                .with_attribute("likes", value);
            UserMemoryStore::upsert(&store, &user, c)
                .await
                .expect("fact");
        }
        let docs = (0..episodes)
            .map(|e| {
                Document::new(format!(
                    "user {user} talked about {} and {} on day {e}: a turn of conversation \
                     with a few more words, as an episode summary holds",
                    word(u + e),
                    word(u * 7 + e * 3)
                ))
                .with_id(format!("ep{e:03}"))
            })
            .collect();
        store
            .upsert_batch(&format!("episodes:{user}"), docs)
            .await
            .expect("episodes");
        // Searched once, as recall does after the turn.
        let hits = UserMemoryStore::search(&store, &user, word(u), 5)
            .await
            .expect("facts search");
        assert!(facts == 0 || !hits.is_empty());
        let hits = VectorStore::search(
            &store,
            &format!("episodes:{user}"),
            &SearchQuery::new(word(u + 1), 5),
        )
        .await
        .expect("episode search");
        assert!(episodes == 0 || !hits.is_empty());
        if (u + 1) % (users / 10).max(1) == 0 {
            report(&format!("{} users written and searched", u + 1), started);
        }
    }
    // Every user touched again, oldest first (all evicted by now with a bounded cache).
    for u in 0..users {
        let user = format!("user{u:05}");
        UserMemoryStore::search(&store, &user, word(u + 2), 5)
            .await
            .expect("facts search");
        VectorStore::search(
            &store,
            &format!("episodes:{user}"),
            &SearchQuery::new(word(u + 3), 5),
        )
        .await
        .expect("episode search");
    }
    report("all users searched again", started);
}
