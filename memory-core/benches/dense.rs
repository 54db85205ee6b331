//! Dense search over 100,000 × 384 unit vectors, top 10, through `InMemoryVectorStore`.
//!
//! `cargo bench -p agentmemory-core --bench dense`. Groups:
//! - `dense/single_1_thread`: one query at a time on a one-thread rayon pool (the figure
//!   to hold against numpy's `matrix @ q` + `argpartition` on one thread);
//! - `dense/single_all_threads`: the same on the default pool (every core);
//! - `dense/batch_1000`: 1,000 queries per `search_batch` call, throughput per query, on
//!   the default pool (every core);
//! - `dense/batch_1000_1_thread`: the same on a one-thread pool (the figure to hold
//!   against faiss `IndexFlatIP.search` with the same batch and `OMP_NUM_THREADS=1`).
//!
//! The setup prints the kernel in use and checks, for 50 queries, that the results equal
//! a plain exact scan computed here.

use std::hint::black_box;

use agentmemory_core::store_support::dense_kernel;
use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tokio::runtime::Runtime;

const ROWS: usize = 100_000;
const DIM: usize = 384;
const K: usize = 10;
const BATCH: usize = 1_000;

/// SplitMix64, seeded.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn vector(&mut self) -> Vec<f32> {
        (0..DIM)
            .map(|_| ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
            .collect()
    }
}

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    v.iter().map(|x| (f64::from(*x) / n) as f32).collect()
}

fn dense(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let store = InMemoryVectorStore::new();
    let mut rng = Rng(42);
    let rows: Vec<Vec<f32>> = (0..ROWS).map(|_| rng.vector()).collect();
    rt.block_on(async {
        for (chunk, part) in rows.chunks(10_000).enumerate() {
            let docs = part
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    Document::new("")
                        .with_id(format!("d{}", chunk * 10_000 + i))
                        .with_embedding(v.clone())
                })
                .collect();
            store.upsert_batch("dense", docs).await.expect("load");
        }
    });
    let queries: Vec<SearchQuery> = (0..BATCH)
        .map(|_| SearchQuery::new("", K).with_embedding(rng.vector()))
        .collect();

    // The results must be those of an exact scan (ids in order; scores to rounding).
    let units: Vec<Vec<f32>> = rows.iter().map(|v| unit(v)).collect();
    for q in queries.iter().take(50) {
        let qv = unit(q.embedding.as_ref().expect("embedding"));
        let mut all: Vec<(f64, usize)> = units
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (
                    r.iter()
                        .zip(&qv)
                        .map(|(a, b)| f64::from(*a) * f64::from(*b))
                        .sum(),
                    i,
                )
            })
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0));
        let hits = rt.block_on(store.search("dense", q)).expect("search");
        for (hit, (score, i)) in hits.iter().zip(&all) {
            assert!((f64::from(hit.score) - score).abs() < 1e-5, "score drift");
            if hit.id != format!("d{i}") {
                eprintln!("near-tie reordered: {} vs d{i} ({score})", hit.id);
            }
        }
    }
    drop(units);
    eprintln!("dense kernel: {}", dense_kernel());

    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut group = c.benchmark_group("dense");
    group.sample_size(30);
    let mut i = 0;
    group.bench_function("single_1_thread", |b| {
        b.iter(|| {
            i = (i + 1) % BATCH;
            one.install(|| {
                black_box(
                    rt.block_on(store.search("dense", &queries[i]))
                        .unwrap_or_default(),
                )
            })
        })
    });
    group.bench_function("single_all_threads", |b| {
        b.iter(|| {
            i = (i + 1) % BATCH;
            black_box(
                rt.block_on(store.search("dense", &queries[i]))
                    .unwrap_or_default(),
            )
        })
    });
    group.sample_size(10);
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("batch_1000", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(store.search_batch("dense", &queries))
                    .unwrap_or_default(),
            )
        })
    });
    group.bench_function("batch_1000_1_thread", |b| {
        b.iter(|| {
            one.install(|| {
                black_box(
                    rt.block_on(store.search_batch("dense", &queries))
                        .unwrap_or_default(),
                )
            })
        })
    });
    group.finish();
}

criterion_group!(benches, dense);
criterion_main!(benches);
