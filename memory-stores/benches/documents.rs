//! SQLite's document search at 100,000 documents: ingest, per-query latency over 1,000
//! Zipf-distributed queries, and two concurrent searchers against one.
//!
//! `cargo bench -p agentmemory-stores --bench documents`. The data is generated here, or
//! read from `$AGENTMEM_BENCH_DATA/{docs,queries}.jsonl` (written by
//! `benches/compare/search_vs_tantivy.py`, which measures tantivy on the same files).
//! Criterion measures opening the file and loading the index (the first search of a fresh
//! store: `--bench documents -- open_and_load` for that alone) and single searches.
//! Setup prints (stderr) ingest time, index load time, the p50/p95 of single queries and
//! the wall time of all queries at concurrency 1 and 2.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::vector::{Document, SearchQuery, VectorStore};
use agentmemory_stores::SqliteStore;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

const DOCS: usize = 100_000;
const QUERIES: usize = 1_000;
const VOCABULARY: usize = 30_000;
const NS: &str = "bench";

/// SplitMix64: a tiny, seeded, deterministic generator.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Pseudo-words, documents of 8–40 words and queries of 1–4 words, all drawn with Zipf
/// (s = 1) frequencies, as the Python script does.
fn generate() -> (Vec<Document>, Vec<String>) {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "ru", "ta", "po", "vi", "de", "da", "gu", "fe", "ri", "zo", "be",
        "ha", "ju", "ni", "qu", "xe",
    ];
    let mut rng = Rng(7);
    let mut seen = std::collections::HashSet::new();
    let mut words = Vec::with_capacity(VOCABULARY);
    while words.len() < VOCABULARY {
        let n = 2 + rng.below(3);
        let w: String = (0..n)
            .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
            .collect();
        if seen.insert(w.clone()) {
            words.push(w);
        }
    }
    let mut total = 0.0;
    let cumulative: Vec<f64> = (1..=VOCABULARY)
        .map(|r| {
            total += 1.0 / r as f64;
            total
        })
        .collect();
    let text = |rng: &mut Rng, n: usize| -> String {
        (0..n)
            .map(|_| {
                let x = rng.unit() * total;
                let i = cumulative.partition_point(|&c| c < x).min(VOCABULARY - 1);
                words[i].as_str()
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let docs = (0..DOCS)
        .map(|i| {
            let n = 8 + rng.below(33);
            Document::new(text(&mut rng, n)).with_id(format!("d{i}"))
        })
        .collect();
    let queries = (0..QUERIES)
        .map(|_| {
            let n = 1 + rng.below(4);
            text(&mut rng, n)
        })
        .collect();
    (docs, queries)
}

fn read_data(dir: &Path) -> (Vec<Document>, Vec<String>) {
    let lines = |name: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("read {name}: {e}"))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    };
    let text = |v: &serde_json::Value, key: &str| v[key].as_str().expect(key).to_owned();
    let docs = lines("docs.jsonl")
        .iter()
        .map(|v| Document::new(text(v, "content")).with_id(text(v, "id")))
        .collect();
    let queries = lines("queries.jsonl")
        .iter()
        .map(|v| text(v, "query"))
        .collect();
    (docs, queries)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (docs, queries) = match std::env::var_os("AGENTMEM_BENCH_DATA") {
        Some(dir) => read_data(Path::new(&dir)),
        None => generate(),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("documents.db");

    let started = Instant::now();
    rt.block_on(async {
        let store = SqliteStore::open(&path).await.expect("open");
        for chunk in docs.chunks(10_000) {
            store
                .upsert_batch(NS, chunk.to_vec())
                .await
                .expect("ingest");
        }
    });
    eprintln!(
        "ingest: {} documents into a new SQLite file in {:.2} s",
        docs.len(),
        started.elapsed().as_secs_f64()
    );

    // A fresh process's view: open, then the first search loads the index.
    let store = Arc::new(rt.block_on(SqliteStore::open(&path)).expect("reopen"));
    let started = Instant::now();
    rt.block_on(store.search(NS, &SearchQuery::new(&queries[0], 10)))
        .expect("first search");
    eprintln!(
        "first search (loads the index): {:.2} s",
        started.elapsed().as_secs_f64()
    );

    let mut latencies: Vec<Duration> = rt.block_on(async {
        let mut out = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            std::hint::black_box(
                store
                    .search(NS, &SearchQuery::new(q, 10))
                    .await
                    .expect("search"),
            );
            out.push(t.elapsed());
        }
        out
    });
    latencies.sort();
    eprintln!(
        "search top 10 over {} queries: p50 {}, p95 {}, p99 {}",
        latencies.len(),
        ms(latencies[latencies.len() / 2]),
        ms(latencies[latencies.len() * 95 / 100]),
        ms(latencies[latencies.len() * 99 / 100]),
    );
    for concurrency in [1usize, 2] {
        let started = Instant::now();
        rt.block_on(async {
            let mut tasks = Vec::new();
            for lane in 0..concurrency {
                let store = Arc::clone(&store);
                let mine: Vec<String> = queries
                    .iter()
                    .skip(lane)
                    .step_by(concurrency)
                    .cloned()
                    .collect();
                tasks.push(tokio::spawn(async move {
                    for q in mine {
                        store
                            .search(NS, &SearchQuery::new(q, 10))
                            .await
                            .expect("search");
                    }
                }));
            }
            for t in tasks {
                t.await.expect("task");
            }
        });
        eprintln!(
            "all {} queries at concurrency {concurrency}: {:.3} s",
            queries.len(),
            started.elapsed().as_secs_f64()
        );
    }

    let mut group = c.benchmark_group("sqlite_documents_100k");
    // What a fresh process (a CLI run) pays before its first answer: open the file and
    // search once, which loads the namespace's index from the table.
    group.sample_size(10);
    group.bench_function("open_and_load_index", |b| {
        b.iter_batched(
            || rt.block_on(SqliteStore::open(&path)).expect("open"),
            |store| {
                let hits = rt
                    .block_on(store.search(NS, &SearchQuery::new(&queries[0], 10)))
                    .expect("first search");
                (store, hits) // dropped outside the measurement
            },
            BatchSize::PerIteration,
        )
    });
    group.sample_size(20);
    let mut next = 0usize;
    group.bench_function("search_top10_zipf", |b| {
        b.to_async(&rt).iter(|| {
            let q = &queries[next % queries.len()];
            next += 1;
            let store = Arc::clone(&store);
            async move {
                std::hint::black_box(
                    store
                        .search(NS, &SearchQuery::new(q.as_str(), 10))
                        .await
                        .expect("search"),
                );
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = documents;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(5));
    targets = benches
}
criterion_main!(documents);
