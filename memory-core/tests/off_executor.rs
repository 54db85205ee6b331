//! Heavy work leaves the async runtime: while a bulk load of 100,000 documents runs in
//! the in-memory vector store (and, with the local model, while an embedding batch runs),
//! small requests on the same runtime keep completing.
//!
//! The discriminating runtime is `current_thread`: a bulk load analysed on the runtime's
//! only thread would let no other task run until it ended. On a multi-thread runtime with
//! two workers, two bulk loads would take both. Each case counts the rounds of small
//! requests (an upsert and searches) completed before any bulk load had returned: work
//! done inline makes that count zero, whatever the machine's speed or load, because the
//! small requests wait until the bulk tasks have started. The rounds' latency is checked
//! only against the bulk load's own duration, a wide margin on a shared machine.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};

const BULK: usize = 100_000;

/// `n` short varied documents (words drawn from a small vocabulary with a long tail).
fn documents(n: usize, seed: u64) -> Vec<Document> {
    const WORDS: &[&str] = &[
        "garden", "tomatoes", "planted", "running", "marathon", "sister", "wedding", "speech",
        "recipe", "bread", "flour", "train", "Berlin", "moved", "flat", "rent", "cat", "vet",
        "piano", "lessons", "Tuesday", "guitar", "camping", "lake", "budget", "salary",
    ];
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|i| {
            let len = 4 + (next() % 8) as usize;
            let text: Vec<String> = (0..len)
                .map(|_| {
                    let x = next();
                    if x % 10 == 0 {
                        format!("rare{}", x % 20_000)
                    } else {
                        WORDS[(x % WORDS.len() as u64) as usize].to_owned()
                    }
                })
                .collect();
            Document::new(text.join(" ")).with_id(format!("d{i}"))
        })
        .collect()
}

/// What happened while the bulk loads ran.
#[derive(Debug)]
struct Outcome {
    /// Rounds of small requests completed before any bulk load returned.
    rounds_during: usize,
    /// The slowest of those rounds.
    worst_round: Duration,
    /// The shortest bulk load.
    shortest_bulk: Duration,
}

/// Runs `bulks` loads of [`BULK`] documents (into `bulk0`, `bulk1`, …; `bulk0` holds a
/// document first when `preload`) and, once they have all started, rounds of small
/// requests until every load has returned.
async fn small_requests_during_bulk_loads(bulks: usize, preload: bool) -> Outcome {
    let store = Arc::new(InMemoryVectorStore::new());
    store
        .upsert(
            "small",
            Document::new("a note about the garden").with_id("n"),
        )
        .await
        .unwrap();
    if preload {
        store
            .upsert("bulk0", Document::new("already here").with_id("first"))
            .await
            .unwrap();
    }
    let started = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let loads: Vec<_> = (0..bulks)
        .map(|b| {
            let (store, started, done) =
                (Arc::clone(&store), Arc::clone(&started), Arc::clone(&done));
            let docs = documents(BULK, 7 + b as u64);
            tokio::spawn(async move {
                started.fetch_add(1, Ordering::SeqCst);
                let t = Instant::now();
                let ids = store.upsert_batch(&format!("bulk{b}"), docs).await.unwrap();
                let took = t.elapsed();
                done.fetch_add(1, Ordering::SeqCst);
                assert_eq!(ids.len(), BULK);
                took
            })
        })
        .collect();
    let small = {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            while started.load(Ordering::SeqCst) < bulks {
                tokio::task::yield_now().await;
            }
            let (mut rounds, mut worst) = (0, Duration::ZERO);
            for round in 0.. {
                if done.load(Ordering::SeqCst) > 0 {
                    break;
                }
                let t = Instant::now();
                store
                    .upsert(
                        "small",
                        Document::new(format!("garden note {round}")).with_id(format!("n{round}")),
                    )
                    .await
                    .unwrap();
                let hits = store
                    .search("small", &SearchQuery::new("garden", 3))
                    .await
                    .unwrap();
                assert!(!hits.is_empty());
                if !preload {
                    // The namespace being loaded answers at once: empty until the batch,
                    // built aside, is swapped in whole.
                    let n = store.len("bulk0").await.unwrap();
                    assert!(n == 0 || n == BULK, "a half-loaded namespace: {n}");
                    store
                        .search("bulk0", &SearchQuery::new("garden", 3))
                        .await
                        .unwrap();
                }
                let took = t.elapsed();
                if done.load(Ordering::SeqCst) == 0 {
                    worst = worst.max(took);
                    rounds += 1;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            (rounds, worst)
        })
    };
    let mut shortest_bulk = Duration::MAX;
    for load in loads {
        shortest_bulk = shortest_bulk.min(load.await.unwrap());
    }
    let (rounds_during, worst_round) = small.await.unwrap();
    assert_eq!(
        store.len("bulk0").await.unwrap(),
        BULK + usize::from(preload)
    );
    let hits = store
        .search("bulk0", &SearchQuery::new("wedding speech", 5))
        .await
        .unwrap();
    assert_eq!(hits.len(), 5);
    Outcome {
        rounds_during,
        worst_round,
        shortest_bulk,
    }
}

fn check(what: &str, outcome: &Outcome) {
    eprintln!("{what}: {outcome:?}");
    assert!(
        outcome.rounds_during >= 2,
        "{what}: small requests did not run during the bulk load: {outcome:?}"
    );
    assert!(
        outcome.worst_round < outcome.shortest_bulk / 2,
        "{what}: a small request waited about as long as the bulk load: {outcome:?}"
    );
}

#[test]
fn a_bulk_load_does_not_stall_a_current_thread_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let fresh = rt.block_on(small_requests_during_bulk_loads(1, false));
    check("current_thread, new namespace", &fresh);
    let preloaded = rt.block_on(small_requests_during_bulk_loads(1, true));
    check("current_thread, namespace holding documents", &preloaded);
}

#[test]
fn two_bulk_loads_do_not_take_both_workers() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let outcome = rt.block_on(small_requests_during_bulk_loads(2, false));
    check("multi_thread(2), two loads", &outcome);
}

/// An embedding batch through the store's embedder (the local model) leaves the runtime
/// free too. Needs `AGENTMEM_EMBED_MODEL`; fails without it under `CI=true`, is skipped
/// with a message otherwise.
#[cfg(feature = "local-embed")]
#[test]
fn an_embedding_batch_does_not_stall_the_runtime() {
    use agentmemory_core::embed::{LocalEmbedder, AGENTMEM_EMBED_MODEL};

    let embedder = match LocalEmbedder::from_env().unwrap() {
        Some(e) => e,
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{AGENTMEM_EMBED_MODEL} is not set: CI must `source .ci/embed.sh`")
        }
        None => {
            eprintln!("skipping: set {AGENTMEM_EMBED_MODEL} to run (the model directory scripts/fetch-model prints)");
            return;
        }
    };
    let dim = embedder.dimension();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async move {
        let store = Arc::new(InMemoryVectorStore::with_embedder(Arc::new(embedder)));
        let unit = |i: usize| {
            let mut v = vec![0.0f32; dim];
            v[i % dim] = 1.0;
            v
        };
        store
            .upsert("notes", Document::new("a note").with_embedding(unit(0)))
            .await
            .unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let load = {
            let (store, started, done) =
                (Arc::clone(&store), Arc::clone(&started), Arc::clone(&done));
            let docs = documents(128, 3);
            tokio::spawn(async move {
                started.fetch_add(1, Ordering::SeqCst);
                let t = Instant::now();
                store.upsert_batch("embedded", docs).await.unwrap();
                done.fetch_add(1, Ordering::SeqCst);
                t.elapsed()
            })
        };
        while started.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        let (mut rounds, mut worst) = (0, Duration::ZERO);
        for round in 1.. {
            if done.load(Ordering::SeqCst) > 0 {
                break;
            }
            let t = Instant::now();
            // Vectors given: these requests need no model.
            store
                .upsert(
                    "notes",
                    Document::new(format!("note {round}")).with_embedding(unit(round)),
                )
                .await
                .unwrap();
            let q = SearchQuery::new("note", 2).with_embedding(unit(round));
            assert!(!store.search("notes", &q).await.unwrap().is_empty());
            if done.load(Ordering::SeqCst) == 0 {
                worst = worst.max(t.elapsed());
                rounds += 1;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let took = load.await.unwrap();
        let outcome = Outcome {
            rounds_during: rounds,
            worst_round: worst,
            shortest_bulk: took,
        };
        check("current_thread, embedding 128 documents", &outcome);
        assert_eq!(store.len("embedded").await.unwrap(), 128);
    });
}
