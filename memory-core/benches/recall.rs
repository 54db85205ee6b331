//! Recall benchmarks: the in-memory vector store (sparse and dense) and fact search.
//!
//! `cargo bench -p memory-core --bench recall`. Besides criterion's figures, the setup of
//! each group prints (stderr) load throughput, resident memory per document and the
//! p50/p95 of single searches over many different queries.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tokio::runtime::Runtime;

const DOCS: usize = 100_000;
const WORDS_PER_DOC: usize = 30;
const VOCABULARY: usize = 5_000;
const DIM: usize = 384;

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

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Pseudo-words drawn with Zipf (s = 1) frequencies.
struct Corpus {
    words: Vec<String>,
    cumulative: Vec<f64>,
    rng: Rng,
}

impl Corpus {
    fn new(seed: u64) -> Self {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "ta", "po", "vi", "se", "da", "gu", "fe", "ri", "zo",
            "be", "ha", "ju", "ni", "qu", "xe",
        ];
        let mut rng = Rng(seed);
        let mut words = Vec::with_capacity(VOCABULARY);
        let mut seen = std::collections::HashSet::new();
        while words.len() < VOCABULARY {
            let n = 2 + (rng.next_u64() % 3) as usize;
            let w: String = (0..n)
                .map(|_| SYLLABLES[(rng.next_u64() % SYLLABLES.len() as u64) as usize])
                .collect();
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Self {
            words,
            cumulative,
            rng,
        }
    }

    fn word(&mut self) -> &str {
        let total = self.cumulative[VOCABULARY - 1];
        let x = self.rng.unit() * total;
        let i = self
            .cumulative
            .partition_point(|&c| c < x)
            .min(VOCABULARY - 1);
        &self.words[i]
    }

    fn text(&mut self, words: usize) -> String {
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            let w = self.word().to_owned();
            s.push_str(&w);
        }
        s
    }
}

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.95))
}

fn sparse(c: &mut Criterion) {
    let rt = runtime();
    let mut corpus = Corpus::new(42);
    let texts: Vec<String> = (0..DOCS).map(|_| corpus.text(WORDS_PER_DOC)).collect();

    let store = InMemoryVectorStore::new();
    let before = resident_bytes();
    let start = Instant::now();
    rt.block_on(async {
        for (i, t) in texts.iter().enumerate() {
            let doc = Document::new(t.clone()).with_id(format!("doc-{i}"));
            store
                .upsert("bench", doc)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
    });
    let elapsed = start.elapsed();
    let after = resident_bytes();
    eprintln!(
        "sparse load: {DOCS} docs of {WORDS_PER_DOC} words in {:.2?} = {:.0} docs/s",
        elapsed,
        DOCS as f64 / elapsed.as_secs_f64()
    );
    if let (Some(b), Some(a)) = (before, after) {
        eprintln!(
            "resident memory: {:.0} bytes/doc ({:.1} MiB for {DOCS} docs, text ≈ {} bytes/doc)",
            a.saturating_sub(b) as f64 / DOCS as f64,
            a.saturating_sub(b) as f64 / (1 << 20) as f64,
            texts.iter().map(String::len).sum::<usize>() / DOCS
        );
    }

    let queries: Vec<String> = (0..500).map(|_| corpus.text(3)).collect();
    let samples: Vec<Duration> = rt.block_on(async {
        let mut out = Vec::with_capacity(queries.len());
        for q in &queries {
            let query = SearchQuery::new(q.clone(), 5);
            let t = Instant::now();
            black_box(store.search("bench", &query).await.unwrap_or_default());
            out.push(t.elapsed());
        }
        out
    });
    let (p50, p95) = percentiles(samples);
    eprintln!("sparse search k=5 over {DOCS} docs, 500 three-word Zipf queries: p50 {p50:.2?}, p95 {p95:.2?}");

    let mut group = c.benchmark_group("sparse");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    let mut i = 0;
    group.bench_function(BenchmarkId::new("search_k5", DOCS), |b| {
        b.to_async(&rt).iter(|| {
            i = (i + 1) % queries.len();
            let query = SearchQuery::new(queries[i].clone(), 5);
            let store = &store;
            async move { black_box(store.search("bench", &query).await.unwrap_or_default()) }
        })
    });
    let batch: Vec<Document> = texts[..1000]
        .iter()
        .map(|t| Document::new(t.clone()))
        .collect();
    group.throughput(Throughput::Elements(batch.len() as u64));
    group.bench_function("upsert_1000_docs", |b| {
        b.to_async(&rt).iter_batched(
            || (InMemoryVectorStore::new(), batch.clone()),
            |(s, docs)| async move {
                for d in docs {
                    black_box(s.upsert("n", d).await.unwrap_or_default());
                }
                s
            },
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn dense(c: &mut Criterion) {
    let rt = runtime();
    let mut rng = Rng(7);
    let vector =
        |rng: &mut Rng| -> Vec<f32> { (0..DIM).map(|_| (rng.unit() * 2.0 - 1.0) as f32).collect() };
    let store = InMemoryVectorStore::new();
    let before = resident_bytes();
    let start = Instant::now();
    rt.block_on(async {
        for chunk in 0..DOCS / 1000 {
            let docs: Vec<Document> = (0..1000)
                .map(|i| {
                    Document::new(format!("dense document {}", chunk * 1000 + i))
                        .with_embedding(vector(&mut rng))
                })
                .collect();
            store
                .upsert_batch("dense", docs)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
    });
    let after = resident_bytes();
    eprintln!("dense load: {DOCS} x {DIM}-dim in {:.2?}", start.elapsed());
    if let (Some(b), Some(a)) = (before, after) {
        eprintln!(
            "dense resident memory: {:.0} bytes/doc (vector alone {} bytes)",
            a.saturating_sub(b) as f64 / DOCS as f64,
            DIM * 4
        );
    }
    let queries: Vec<Vec<f32>> = (0..50).map(|_| vector(&mut rng)).collect();
    let samples: Vec<Duration> = rt.block_on(async {
        let mut out = Vec::new();
        for q in &queries {
            let query = SearchQuery::new("", 5).with_embedding(q.clone());
            let t = Instant::now();
            black_box(store.search("dense", &query).await.unwrap_or_default());
            out.push(t.elapsed());
        }
        out
    });
    let (p50, p95) = percentiles(samples);
    eprintln!("dense search k=5 over {DOCS} x {DIM}: p50 {p50:.2?}, p95 {p95:.2?}");

    let mut group = c.benchmark_group("dense");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    let mut i = 0;
    group.bench_function(
        BenchmarkId::new("search_k5", format!("{DOCS}x{DIM}")),
        |b| {
            b.to_async(&rt).iter(|| {
                i = (i + 1) % queries.len();
                let query = SearchQuery::new("", 5).with_embedding(queries[i].clone());
                let store = &store;
                async move { black_box(store.search("dense", &query).await.unwrap_or_default()) }
            })
        },
    );
    group.finish();
}

fn facts(c: &mut Criterion) {
    let rt = runtime();
    let mut corpus = Corpus::new(9);
    let store = InMemoryUserMemoryStore::new();
    rt.block_on(async {
        for i in 0..1000 {
            let text = format!("{} fact{i}", corpus.text(6));
            store
                .upsert("user", FactCandidate::new(text, 0.9))
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
    });
    let queries: Vec<String> = (0..200).map(|_| corpus.text(3)).collect();
    let mut group = c.benchmark_group("facts");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    let mut i = 0;
    group.bench_function("search_1000_facts_k5", |b| {
        b.to_async(&rt).iter(|| {
            i = (i + 1) % queries.len();
            let q = queries[i].clone();
            let store = &store;
            async move { black_box(store.search("user", &q, 5).await.unwrap_or_default()) }
        })
    });
    group.finish();
}

criterion_group!(benches, sparse, dense, facts);
criterion_main!(benches);
