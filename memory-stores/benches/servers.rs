//! RedisStore and PostgresStore throughput against the servers named by
//! `AGENTMEM_REDIS_URL` and `AGENTMEM_POSTGRES_URL` (see `.ci/services.sh`); a backend
//! whose variable is unset is skipped with a message.
//!
//! Per backend: appending one message per call and 100 per call, loading a
//! 1,000-message conversation, searching a user's 1,000 facts, and searching a user's
//! 10,000 facts (restored in one batch) from the kept index and right after a write.

#[path = "support/facts.rs"]
mod facts_data;

use std::sync::Arc;

use agentmemory_core::{
    ConversationEvent, ConversationStore, FactCandidate, Message, UserMemoryStore,
};
use agentmemory_stores::{PostgresStore, RedisStore};
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
