//! What a fact upsert costs as a user's facts grow, when no search came first (the
//! extraction path: a turn's facts are written, nothing is searched): SQLite, one user
//! holding 1,000, 10,000 and 100,000 facts restored with `import_records` (which leaves
//! no kept index), then upserts of new facts one after another. The first upsert reads
//! the user's facts once; the ones after it reconcile against the kept index.

#[path = "support/facts.rs"]
#[allow(dead_code)] // its queries serve the search benches
mod facts_data;

use agentmemory_core::{FactCandidate, UserMemoryStore};
use agentmemory_stores::SqliteStore;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = rt
        .block_on(SqliteStore::open(dir.path().join("bench.db")))
        .expect("open");
    let mut group = c.benchmark_group("sqlite_fact_upsert_without_search");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1));
    for n in [1_000usize, 10_000, 100_000] {
        let user = format!("user-{n}");
        rt.block_on(store.import_records(&user, facts_data::facts(&user, n)))
            .expect("fill");
        let mut q = 0;
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.to_async(&rt).iter(|| {
                q += 1;
                let (store, user) = (&store, &user);
                async move {
                    let fact = FactCandidate::new(format!("collects coins, tray {q}"), 0.6);
                    store.upsert(user, fact).await.expect("write");
                }
            })
        });
    }
    group.finish();
}

criterion_group!(fact_upsert, benches);
criterion_main!(fact_upsert);
