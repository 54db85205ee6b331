//! RedisStore and PostgresStore throughput against the servers named by
//! `AGENTMEM_REDIS_URL` and `AGENTMEM_POSTGRES_URL` (see `.ci/services.sh`); a backend
//! whose variable is unset is skipped with a message.
//!
//! Per backend: appending one message per call and 100 per call, loading a
//! 1,000-message conversation, searching a user's 1,000 facts, and searching a user's
//! 10,000 facts (restored in one batch) from the kept index, one upsert alone, and a
//! search right after an upsert (the write updates the kept index in place).
//!
//! PostgreSQL alone: dense search (k = 10) over 20,000 clustered 384-dimensional
//! embeddings in one namespace, through the store (the HNSW index) and with the exact
//! query every search ran before the index existed (`real[]` cast to `vector` per row);
//! and recall@10 of the store's answers against exact brute force over 100 queries,
//! printed. Set `AGENTMEM_BENCH_DENSE_N` to change the size.

#[path = "support/facts.rs"]
mod facts_data;

use std::sync::Arc;

use agentmemory_core::vector::{Document, SearchQuery};
use agentmemory_core::{
    ConversationEvent, ConversationStore, FactCandidate, Message, UserMemoryStore, VectorStore,
};
use agentmemory_stores::{PostgresOptions, PostgresStore, RedisStore};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

fn message(i: usize) -> ConversationEvent {
    ConversationEvent::Message {
        message: Message::user(format!(
            "message number {i}: a sentence of ordinary length to stand for a chat turn"
        )),
    }
}

const TOPICS: &[&str] = &[
    "jazz", "hiking", "tea", "chess", "sailing", "pottery", "cycling", "opera", "sushi", "rust",
];

fn bench_backend(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    name: &str,
    conv: Arc<dyn ConversationStore>,
    facts: Arc<dyn UserMemoryStore>,
) {
    let run = ulid::Ulid::new().to_string();
    let single = format!("bench-single-{run}");
    let batched = format!("bench-batched-{run}");
    let loaded = format!("bench-load-{run}");
    let user = format!("bench-user-{run}");

    let mut group = c.benchmark_group(format!("{name}_append"));
    group.throughput(Throughput::Elements(1));
    group.bench_function("one_message_per_call", |b| {
        b.to_async(rt).iter_batched(
            || vec![message(1)],
            |events| async {
                conv.append(&single, events).await.expect("append");
            },
            BatchSize::SmallInput,
        )
    });
    group.throughput(Throughput::Elements(100));
    group.bench_function("100_messages_per_call", |b| {
        b.to_async(rt).iter_batched(
            || (0..100).map(message).collect::<Vec<_>>(),
            |events| async {
                conv.append(&batched, events).await.expect("append");
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();

    rt.block_on(async {
        for chunk in 0..10 {
            let events = (chunk * 100..(chunk + 1) * 100).map(message).collect();
            conv.append(&loaded, events).await.expect("fill");
        }
        for i in 0..1000 {
            let topic = TOPICS[i % TOPICS.len()];
            facts
                .upsert(
                    &user,
                    FactCandidate::new(format!("likes {topic} variant {i}"), 0.8),
                )
                .await
                .expect("fill facts");
        }
    });
    let mut group = c.benchmark_group(format!("{name}_read"));
    group.throughput(Throughput::Elements(1000));
    group.bench_function("load_1000_message_conversation", |b| {
        b.to_async(rt).iter(|| async {
            let events = conv.load(&loaded).await.expect("load");
            assert_eq!(events.len(), 1000);
        })
    });
    group.bench_function("search_1000_facts", |b| {
        b.to_async(rt).iter(|| async {
            let hits = facts
                .search(&user, "does she like jazz or sailing?", 5)
                .await
                .expect("search");
            assert_eq!(hits.len(), 5);
        })
    });
    group.finish();

    let many = format!("bench-10k-{run}");
    rt.block_on(facts.import_records(&many, facts_data::facts(&many, 10_000)))
        .expect("fill 10,000 facts");
    let mut group = c.benchmark_group(format!("{name}_facts"));
    group.sample_size(20);
    let mut q = 0;
    group.bench_function("search_10000_facts", |b| {
        b.to_async(rt).iter(|| {
            q += 1;
            let query = facts_data::QUERIES[q % facts_data::QUERIES.len()];
            let (facts, many) = (&facts, &many);
            async move {
                let hits = facts.search(many, query, 5).await.expect("search");
                assert_eq!(hits.len(), 5);
            }
        })
    });
    group.bench_function("upsert_10000_facts", |b| {
        b.to_async(rt).iter(|| {
            q += 1;
            let (facts, many) = (&facts, &many);
            async move {
                let fact = FactCandidate::new(format!("collects coins, tray {q}"), 0.6);
                facts.upsert(many, fact).await.expect("write");
            }
        })
    });
    group.bench_function("write_then_search_10000_facts", |b| {
        b.to_async(rt).iter(|| {
            q += 1;
            let query = facts_data::QUERIES[q % facts_data::QUERIES.len()];
            let (facts, many) = (&facts, &many);
            async move {
                let fact = FactCandidate::new(format!("collects stamps, album {q}"), 0.6);
                facts.upsert(many, fact).await.expect("write");
                let hits = facts.search(many, query, 5).await.expect("search");
                assert_eq!(hits.len(), 5);
            }
        })
    });
    group.finish();

    rt.block_on(async {
        for id in [&single, &batched, &loaded] {
            conv.delete(id).await.expect("cleanup");
        }
        facts.forget_user(&user).await.expect("cleanup");
        facts.forget_user(&many).await.expect("cleanup");
    });
}

/// `n` unit vectors of `dim` around `n / 100` random centres, as embeddings of text on a
/// few hundred topics are (random unit vectors would be a poor test of an HNSW index:
/// every neighbour is about as far as any other). Deterministic.
fn clustered(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let clusters = (n / 100).max(1);
    let centres: Vec<Vec<f32>> = (0..clusters)
        .map(|_| (0..dim).map(|_| next()).collect())
        .collect();
    (0..n)
        .map(|_| {
            let c = &centres[((next() + 0.5) * clusters as f32) as usize % clusters];
            let v: Vec<f32> = c.iter().map(|x| x + next()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        })
        .collect()
}

/// The ids of the `k` vectors of `data` nearest to `q` by cosine (brute force).
fn exact_top(data: &[Vec<f32>], q: &[f32], k: usize) -> Vec<String> {
    let mut scored: Vec<(f32, usize)> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (v.iter().zip(q).map(|(a, b)| a * b).sum(), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .iter()
        .take(k)
        .map(|(_, i)| format!("d{i}"))
        .collect()
}

fn bench_pg_dense(c: &mut Criterion, rt: &tokio::runtime::Runtime, url: &str) {
    let n: usize = std::env::var("AGENTMEM_BENCH_DENSE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let dim = 384;
    let schema = "agentmem_bench_dense";
    let store = rt
        .block_on(PostgresStore::connect_with(
            url,
            PostgresOptions {
                schema: schema.to_owned(),
                ..PostgresOptions::default()
            },
        ))
        .expect("connect to postgres");
    let data = clustered(n + 100, dim, 11);
    let (data, queries) = data.split_at(n);
    let ns = format!("bench-dense-{}", ulid::Ulid::new());
    let started = std::time::Instant::now();
    rt.block_on(async {
        for (c, chunk) in data.chunks(500).enumerate() {
            let docs = chunk
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    Document::new(format!("document {}", c * 500 + i))
                        .with_id(format!("d{}", c * 500 + i))
                        .with_embedding(v.clone())
                })
                .collect();
            store.upsert_batch(&ns, docs).await.expect("fill");
        }
    });
    eprintln!(
        "postgres dense: {n} x {dim} written (HNSW index maintained) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let (client, conn) = rt
        .block_on(tokio_postgres::connect(url, tokio_postgres::NoTls))
        .expect("raw connection");
    rt.spawn(conn);
    rt.block_on(client.batch_execute(&format!("ANALYZE \"{schema}\".documents")))
        .expect("analyze");

    let k = 10;
    let mut recall = 0usize;
    rt.block_on(async {
        for q in queries {
            let truth = exact_top(data, q, k);
            let query = SearchQuery::new("", k).with_embedding(q.clone());
            let hits = VectorStore::search(&store, &ns, &query)
                .await
                .expect("search");
            recall += hits.iter().filter(|h| truth.contains(&h.id)).count();
        }
    });
    eprintln!(
        "postgres dense: recall@{k} of the store against brute force, {} queries: {:.3}",
        queries.len(),
        recall as f64 / (queries.len() * k) as f64
    );

    let mut group = c.benchmark_group("postgres_dense_search");
    group.sample_size(20);
    let mut i = 0;
    group.bench_function(format!("hnsw_{n}x{dim}_k{k}"), |b| {
        b.to_async(rt).iter(|| {
            i += 1;
            let query = SearchQuery::new("", k).with_embedding(queries[i % queries.len()].clone());
            let (store, ns) = (&store, &ns);
            async move {
                let hits = VectorStore::search(store, ns, &query)
                    .await
                    .expect("search");
                assert_eq!(hits.len(), k);
            }
        })
    });
    // What every dense search ran before the index: the exact query of the store.
    let exact = format!(
        "SELECT id, content, metadata::text, \
         (1 - (embedding::vector <=> $2::real[]::vector))::real AS s \
         FROM \"{schema}\".documents WHERE namespace = $1 AND embedding IS NOT NULL \
         ORDER BY embedding::vector <=> $2::real[]::vector, id LIMIT $3"
    );
    let stmt = rt.block_on(client.prepare(&exact)).expect("prepare");
    group.bench_function(format!("exact_scan_{n}x{dim}_k{k}"), |b| {
        b.to_async(rt).iter(|| {
            i += 1;
            let q = &queries[i % queries.len()];
            let (client, stmt, ns) = (&client, &stmt, &ns);
            async move {
                let rows = client
                    .query(stmt, &[ns, q, &(k as i64)])
                    .await
                    .expect("search");
                assert_eq!(rows.len(), k);
            }
        })
    });
    group.finish();
    rt.block_on(client.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE")))
        .expect("drop the bench schema");
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    match std::env::var("AGENTMEM_REDIS_URL") {
        Ok(url) if !url.is_empty() => {
            let store = Arc::new(
                rt.block_on(RedisStore::connect(&url))
                    .expect("connect to redis"),
            );
            bench_backend(c, &rt, "redis", store.clone(), store);
        }
        _ => eprintln!("skipping redis benches: set AGENTMEM_REDIS_URL to run"),
    }
    match std::env::var("AGENTMEM_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let store = Arc::new(
                rt.block_on(PostgresStore::connect(&url))
                    .expect("connect to postgres"),
            );
            bench_backend(c, &rt, "postgres", store.clone(), store);
            bench_pg_dense(c, &rt, &url);
        }
        _ => eprintln!("skipping postgres benches: set AGENTMEM_POSTGRES_URL to run"),
    }
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(group);
