//! Dense search over 100,000 × 384 unit vectors, top 10, through `InMemoryVectorStore`, on
//! three datasets (see `support/vectors.rs`): i.i.d. uniform vectors (the best case for the
//! one-byte screen), a Gaussian mixture (clustered), and real MiniLM sentence embeddings.
//!
//! `cargo bench -p agentmemory-core --features local-embed --bench dense` (with
//! `AGENTMEM_EMBED_MODEL` set, or the real dataset's vectors cached; otherwise the real
//! dataset is skipped with a message saying why). Groups:
//! - `dense/single_1_thread`: uniform, one query at a time on a one-thread rayon pool (the
//!   figure to hold against numpy's `matrix @ q` + `argpartition` on one thread);
//! - `dense/single_all_threads`: the same on the default pool (every core);
//! - `dense/batch_1000`: 1,000 queries per `search_batch` call, throughput per query, on
//!   the default pool (every core);
//! - `dense/batch_1000_1_thread`: the same on a one-thread pool (the figure to hold
//!   against faiss `IndexFlatIP.search` with the same batch and `OMP_NUM_THREADS=1`);
//! - `dense_clustered/…` and `dense_real/…`: `single_1_thread` and `batch_1000_1_thread`
//!   on the other two datasets.
//!
//! Before timing, each dataset's setup prints the kernel in use, checks that the results
//! of 100 queries score as an exact `f64` scan does, and reports recall@10 against that
//! scan and how many candidates the quantised screen left to re-score exactly per query
//! (single queries and batches), from the store's [`DenseStats`].

use std::hint::black_box;

use agentmemory_core::store_support::dense_kernel;
use agentmemory_core::vector::{
    DenseStats, Document, InMemoryVectorStore, SearchQuery, VectorStore,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures_util::FutureExt;
use rayon::prelude::*;
use tokio::runtime::Runtime;

#[path = "support/vectors.rs"]
mod vectors;

use vectors::{unit, Dataset};

const ROWS: usize = 100_000;
const K: usize = 10;
const BATCH: usize = 1_000;
/// Queries checked against the exact scan (recall, re-scored candidates).
const CHECKED: usize = 100;

/// Runs a store call on this thread, outside any tokio runtime: the store then does its
/// work here, in the rayon pool this thread is installed in (inside a runtime, a large
/// scan moves to tokio's blocking pool and rayon's global pool). The one-thread groups
/// use this, so they measure one thread.
fn here<T>(call: impl std::future::Future<Output = T>) -> T {
    call.now_or_never()
        .expect("an in-memory store call without an embedder completes at once")
}

/// A store holding the dataset's rows as `d0`, `d1`, … in namespace `dense`.
fn load(rt: &Runtime, data: &Dataset) -> InMemoryVectorStore {
    let store = InMemoryVectorStore::new();
    rt.block_on(async {
        for (chunk, part) in data.rows.chunks(10_000).enumerate() {
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
    store
}

/// [`BATCH`] queries of the dataset (its own queries cycled when it has fewer).
fn queries(data: &Dataset) -> Vec<SearchQuery> {
    (0..BATCH)
        .map(|i| {
            SearchQuery::new("", K).with_embedding(data.queries[i % data.queries.len()].clone())
        })
        .collect()
}

fn stats(rt: &Runtime, store: &InMemoryVectorStore) -> DenseStats {
    rt.block_on(store.dense_stats("dense")).expect("stats")
}

/// Re-scored candidates per screened query, between two readings.
fn per_query(before: DenseStats, after: DenseStats) -> (f64, u64, u64) {
    let screened = after.screened - before.screened;
    let rescored = after.rescored - before.rescored;
    let exact = after.exact - before.exact;
    let per = if screened == 0 {
        0.0
    } else {
        rescored as f64 / screened as f64
    };
    (per, screened, exact)
}

/// Checks the first [`CHECKED`] queries against an exact `f64` scan (scores to rounding)
/// and prints recall@K and the screen's re-scoring work.
fn report(rt: &Runtime, store: &InMemoryVectorStore, data: &Dataset, queries: &[SearchQuery]) {
    let units: Vec<Vec<f32>> = data.rows.par_iter().map(|v| unit(v)).collect();
    let checked = &queries[..CHECKED.min(data.queries.len())];
    let exact: Vec<Vec<(f64, usize)>> = checked
        .par_iter()
        .map(|q| {
            let qv = unit(q.embedding.as_ref().expect("embedding"));
            let mut all: Vec<(f64, usize)> = units
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let s = r
                        .iter()
                        .zip(&qv)
                        .map(|(a, b)| f64::from(*a) * f64::from(*b))
                        .sum();
                    (s, i)
                })
                .collect();
            all.select_nth_unstable_by(K, |a, b| b.0.total_cmp(&a.0));
            all.truncate(K + 1);
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            all
        })
        .collect();
    drop(units);

    let before = stats(rt, store);
    let mut found = 0usize;
    let mut near_ties = 0usize;
    for (q, best) in checked.iter().zip(&exact) {
        let hits = rt.block_on(store.search("dense", q)).expect("search");
        assert_eq!(hits.len(), K);
        let want: Vec<String> = best[..K].iter().map(|(_, i)| format!("d{i}")).collect();
        for (hit, (score, _)) in hits.iter().zip(best) {
            assert!(
                (f64::from(hit.score) - score).abs() < 1e-5,
                "{}: score drift {} vs {score}",
                data.name,
                hit.score
            );
        }
        found += hits.iter().filter(|h| want.contains(&h.id)).count();
        // A miss is only acceptable as a tie at the K-th score, to rounding.
        if hits.iter().any(|h| !want.contains(&h.id)) {
            near_ties += 1;
            assert!(
                (best[K - 1].0 - best[K].0).abs() < 1e-5,
                "{}: recall lost",
                data.name
            );
        }
    }
    let (single, screened, exact_scans) = per_query(before, stats(rt, store));
    let before = stats(rt, store);
    rt.block_on(store.search_batch("dense", queries))
        .expect("batch");
    let (batch, batch_screened, _) = per_query(before, stats(rt, store));
    let n = data.rows.len();
    eprintln!(
        "dense[{}]: {n} rows, {} queries checked: recall@{K} vs exact f64 scan {:.4} \
         ({near_ties} near-tie swaps); re-scored per query: single {single:.1} \
         ({:.3}% of rows, {screened} screened, {exact_scans} exact scans), \
         batch of {BATCH} {batch:.1} ({batch_screened} screened)",
        data.name,
        checked.len(),
        found as f64 / (checked.len() * K) as f64,
        100.0 * single / n as f64,
    );
}

fn dense(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    eprintln!("dense kernel: {}", dense_kernel());

    let uniform = vectors::uniform(ROWS, BATCH);
    let store = load(&rt, &uniform);
    let qs = queries(&uniform);
    report(&rt, &store, &uniform, &qs);
    drop(uniform);
    let mut group = c.benchmark_group("dense");
    group.sample_size(30);
    let mut i = 0;
    group.bench_function("single_1_thread", |b| {
        b.iter(|| {
            i = (i + 1) % BATCH;
            one.install(|| black_box(here(store.search("dense", &qs[i])).unwrap_or_default()))
        })
    });
    group.bench_function("single_all_threads", |b| {
        b.iter(|| {
            i = (i + 1) % BATCH;
            black_box(
                rt.block_on(store.search("dense", &qs[i]))
                    .unwrap_or_default(),
            )
        })
    });
    group.sample_size(10);
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("batch_1000", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(store.search_batch("dense", &qs))
                    .unwrap_or_default(),
            )
        })
    });
    group.bench_function("batch_1000_1_thread", |b| {
        b.iter(|| {
            one.install(|| black_box(here(store.search_batch("dense", &qs)).unwrap_or_default()))
        })
    });
    group.finish();
    drop(store);

    let others = [Some(vectors::clustered(ROWS, BATCH)), vectors::real(ROWS)];
    for data in others.into_iter().flatten() {
        let store = load(&rt, &data);
        let qs = queries(&data);
        report(&rt, &store, &data, &qs);
        let mut group = c.benchmark_group(format!("dense_{}", data.name));
        drop(data);
        group.sample_size(30);
        let mut i = 0;
        group.bench_function("single_1_thread", |b| {
            b.iter(|| {
                i = (i + 1) % BATCH;
                one.install(|| black_box(here(store.search("dense", &qs[i])).unwrap_or_default()))
            })
        });
        group.sample_size(10);
        group.throughput(Throughput::Elements(BATCH as u64));
        group.bench_function("batch_1000_1_thread", |b| {
            b.iter(|| {
                one.install(|| {
                    black_box(here(store.search_batch("dense", &qs)).unwrap_or_default())
                })
            })
        });
        group.finish();
    }
}

criterion_group!(benches, dense);
criterion_main!(benches);
