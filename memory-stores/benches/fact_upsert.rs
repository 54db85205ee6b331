//! What facts cost as a user's facts grow: one user holding 1,000, 10,000 and 100,000
//! facts (restored with `import_records`, which leaves nothing cached), on SQLite, and on
//! PostgreSQL and Redis when built with their features and `AGENTMEM_POSTGRES_URL` /
//! `AGENTMEM_REDIS_URL` are set (a backend without its variable is skipped with a
//! message). PostgreSQL works in a schema of its own and Redis under a key prefix of its
//! own, both dropped at the end.
//!
//! Per backend and size:
//!
//! - `first_search`: the first search of a store just opened (nothing cached): reading
//!   the user's facts and indexing them, then ranking;
//! - `first_upsert`: the first upsert of a store just opened: the same read, the
//!   reconciliation lookup built, the write;
//! - `upsert`: upserts one after another, no search in between (the extraction path):
//!   each reconciles through the kept index and updates it in place;
//! - `warm_search`: the recall of a turn, a search for the prompt's facts (top 5) with
//!   the user's facts kept.
//!
//! `AGENTMEM_BENCH_BACKENDS=sqlite,redis` limits the run to the backends named (with the
//! `file` feature, `file` is one: a `FileStore` in a temporary directory), and
//! `AGENTMEM_BENCH_SIZES=100000` to the sizes named.
//! `AGENTMEM_BENCH_PG_SYNCHRONOUS_COMMIT=off` (or another level) opens the PostgreSQL
//! store with that `synchronous_commit` (its groups are then named
//! `postgres_sc_off_facts`, ...); Redis's durability is its server's (`appendfsync`), so
//! point `AGENTMEM_REDIS_URL` at a server configured as wanted.
//!
//! The first search after opening reads the snapshot the stores keep of a large user's
//! facts (made by the first read of them, here in the warm-up), and the first upsert
//! brings it up to date with the facts written since (the earlier upserts).
//!
//! ```text
//! cargo bench -p agentmemory-stores --features sqlite,postgres,redis --bench fact_upsert -- --warm-up-time 1 --measurement-time 3
//! ```

#[path = "support/facts.rs"]
mod facts_data;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use agentmemory_core::{FactCandidate, UserMemoryStore};
use agentmemory_stores::SqliteStore;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use tokio::runtime::Runtime;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// Opens a new store over the same data: a new instance, so nothing is cached.
type Open = Box<dyn Fn() -> Pin<Box<dyn Future<Output = Arc<dyn UserMemoryStore>>>>>;

fn bench_backend(c: &mut Criterion, rt: &Runtime, name: &str, open: Open) {
    let run = ulid::Ulid::new().to_string();
    let store = rt.block_on(open());
    for n in SIZES.into_iter().filter(|n| size_wanted(*n)) {
        let user = format!("flat-{n}-{run}");
        rt.block_on(async {
            let facts = facts_data::facts(&user, n);
            for chunk in facts.chunks(5_000) {
                store
                    .import_records(&user, chunk.to_vec())
                    .await
                    .expect("fill");
            }
        });

        let mut group = c.benchmark_group(format!("{name}_facts"));
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(1));
        let mut q = 0usize;
        group.bench_with_input(BenchmarkId::new("first_search", n), &n, |b, _| {
            b.iter_batched(
                || {
                    rt.block_on(async {
                        let fresh = open().await;
                        // A connection opened, nothing of the user read.
                        fresh.get(&user, "none").await.expect("connect");
                        fresh
                    })
                },
                |fresh| {
                    q += 1;
                    let query = facts_data::QUERIES[q % facts_data::QUERIES.len()];
                    let hits = rt.block_on(fresh.search(&user, query, 5)).expect("search");
                    assert_eq!(hits.len(), 5);
                    fresh
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_with_input(BenchmarkId::new("first_upsert", n), &n, |b, _| {
            b.iter_batched(
                || {
                    rt.block_on(async {
                        let fresh = open().await;
                        fresh.get(&user, "none").await.expect("connect");
                        fresh
                    })
                },
                |fresh| {
                    q += 1;
                    let fact = FactCandidate::new(format!("collects stamps, album {q}"), 0.6);
                    rt.block_on(fresh.upsert(&user, fact)).expect("write");
                    fresh
                },
                BatchSize::PerIteration,
            )
        });
        group.finish();

        let mut group = c.benchmark_group(format!("{name}_facts"));
        group.throughput(Throughput::Elements(1));
        // Warm: the kept index read once by this store.
        rt.block_on(store.upsert(&user, FactCandidate::new("collects coins", 0.6)))
            .expect("write");
        group.bench_with_input(BenchmarkId::new("upsert", n), &n, |b, _| {
            b.to_async(rt).iter(|| {
                q += 1;
                let (store, user) = (&store, &user);
                async move {
                    let fact = FactCandidate::new(format!("collects coins, tray {q}"), 0.6);
                    store.upsert(user, fact).await.expect("write");
                }
            })
        });
        group.bench_with_input(BenchmarkId::new("warm_search", n), &n, |b, _| {
            b.to_async(rt).iter(|| {
                q += 1;
                let query = facts_data::QUERIES[q % facts_data::QUERIES.len()];
                let (store, user) = (&store, &user);
                async move {
                    let hits = store.search(user, query, 5).await.expect("search");
                    assert_eq!(hits.len(), 5);
                }
            })
        });
        group.finish();
        // PostgreSQL's schema is dropped whole at the end; a forget of 100,000 rows may
        // outlast the store's time limit, which is no failure of the bench.
        if let Err(e) = rt.block_on(store.forget_user(&user)) {
            eprintln!("{name}: facts of {user} left to the final clean-up: {e}");
        }
    }
}

fn sqlite(c: &mut Criterion, rt: &Runtime) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.db");
    bench_backend(
        c,
        rt,
        "sqlite",
        Box::new(move || {
            let path = path.clone();
            Box::pin(async move {
                let store = SqliteStore::open(path).await.expect("open");
                Arc::new(store) as Arc<dyn UserMemoryStore>
            })
        }),
    );
}

#[cfg(feature = "file")]
fn file(c: &mut Criterion, rt: &Runtime) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    bench_backend(
        c,
        rt,
        "file",
        Box::new(move || {
            let root = root.clone();
            Box::pin(async move {
                let store = agentmemory_stores::FileStore::open(root)
                    .await
                    .expect("open");
                Arc::new(store) as Arc<dyn UserMemoryStore>
            })
        }),
    );
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion, rt: &Runtime) {
    use agentmemory_stores::{PostgresOptions, PostgresStore, SynchronousCommit};
    let Some(url) = std::env::var("AGENTMEM_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!("skipping postgres fact benches: set AGENTMEM_POSTGRES_URL to run");
        return;
    };
    let schema = format!("agentmem_bench_flat_{}", std::process::id());
    let level: Option<SynchronousCommit> = std::env::var("AGENTMEM_BENCH_PG_SYNCHRONOUS_COMMIT")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().expect("AGENTMEM_BENCH_PG_SYNCHRONOUS_COMMIT"));
    let name = match level {
        Some(level) => format!("postgres_sc_{level}"),
        None => "postgres".to_owned(),
    };
    let (u, s) = (url.clone(), schema.clone());
    bench_backend(
        c,
        rt,
        &name,
        Box::new(move || {
            let (url, schema) = (u.clone(), s.clone());
            Box::pin(async move {
                let options = PostgresOptions {
                    schema,
                    synchronous_commit: level,
                    ..PostgresOptions::default()
                };
                let store = PostgresStore::connect_with(&url, options)
                    .await
                    .expect("connect to postgres");
                Arc::new(store) as Arc<dyn UserMemoryStore>
            })
        }),
    );
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("raw connection");
        tokio::spawn(conn);
        client
            .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
            .await
            .expect("drop the bench schema");
    });
}

#[cfg(feature = "redis")]
fn redis(c: &mut Criterion, rt: &Runtime) {
    use agentmemory_stores::{RedisOptions, RedisStore};
    let Some(url) = std::env::var("AGENTMEM_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!("skipping redis fact benches: set AGENTMEM_REDIS_URL to run");
        return;
    };
    // Every key under a prefix of this run; the bench forgets its users at the end.
    let prefix = format!("agentmem-bench-flat-{}:", ulid::Ulid::new());
    bench_backend(
        c,
        rt,
        "redis",
        Box::new(move || {
            let (url, prefix) = (url.clone(), prefix.clone());
            Box::pin(async move {
                let options = RedisOptions {
                    prefix,
                    ..RedisOptions::default()
                };
                let store = RedisStore::connect_with(&url, options)
                    .await
                    .expect("connect to redis");
                Arc::new(store) as Arc<dyn UserMemoryStore>
            })
        }),
    );
}

/// Whether `AGENTMEM_BENCH_SIZES` (comma-separated; all when unset) names `n`.
fn size_wanted(n: usize) -> bool {
    std::env::var("AGENTMEM_BENCH_SIZES")
        .map(|v| v.split(',').any(|s| s.trim().parse() == Ok(n)))
        .unwrap_or(true)
}

/// Whether `AGENTMEM_BENCH_BACKENDS` (comma-separated; all when unset) names `backend`.
fn wanted(backend: &str) -> bool {
    std::env::var("AGENTMEM_BENCH_BACKENDS")
        .map(|v| v.split(',').any(|b| b.trim() == backend))
        .unwrap_or(true)
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if wanted("sqlite") {
        sqlite(c, &rt);
    }
    #[cfg(feature = "file")]
    if wanted("file") {
        file(c, &rt);
    }
    #[cfg(feature = "postgres")]
    if wanted("postgres") {
        postgres(c, &rt);
    }
    #[cfg(feature = "redis")]
    if wanted("redis") {
        redis(c, &rt);
    }
}

criterion_group!(fact_upsert, benches);
criterion_main!(fact_upsert);
