//! SqliteStore throughput: appends one message per transaction and 100 per transaction
//! (WAL, synchronous=NORMAL), loading a 1,000-message conversation, restoring 5,000
//! facts in one batch, and searching 10,000 facts of one user (from the kept index, one
//! upsert alone, and a search right after an upsert, which updates the kept index).

#[path = "support/facts.rs"]
mod facts_data;

use agentmemory_core::{
    ConversationEvent, ConversationStore, FactCandidate, Message, UserMemoryStore,
};
use agentmemory_stores::SqliteStore;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

fn message(i: usize) -> ConversationEvent {
    ConversationEvent::Message {
        message: Message::user(format!(
            "message number {i}: a sentence of ordinary length to stand for a chat turn"
        )),
    }
}

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

    let mut group = c.benchmark_group("sqlite_append");
    group.throughput(Throughput::Elements(1));
    group.bench_function("one_message_per_transaction", |b| {
        b.to_async(&rt).iter_batched(
            || vec![message(1)],
            |events| async {
                store.append("single", events).await.expect("append");
            },
            BatchSize::SmallInput,
        )
    });
    group.throughput(Throughput::Elements(100));
    group.bench_function("100_messages_per_transaction", |b| {
        b.to_async(&rt).iter_batched(
            || (0..100).map(message).collect::<Vec<_>>(),
            |events| async {
                store.append("batched", events).await.expect("append");
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();

    rt.block_on(async {
        for chunk in 0..10 {
            let events = (chunk * 100..(chunk + 1) * 100).map(message).collect();
            store.append("load-1000", events).await.expect("fill");
        }
    });
    let mut group = c.benchmark_group("sqlite_load");
    group.throughput(Throughput::Elements(1000));
    group.bench_function("1000_message_conversation", |b| {
        b.to_async(&rt).iter(|| async {
            let events = store.load("load-1000").await.expect("load");
            assert_eq!(events.len(), 1000);
        })
    });
    group.finish();

    let mut group = c.benchmark_group("sqlite_facts");
    group.sample_size(20);
    let mut n = 0;
    group.bench_function("restore_5000_facts", |b| {
        b.to_async(&rt).iter_batched(
            || {
                n += 1;
                let user = format!("restore-{n}");
                let records = facts_data::facts(&user, 5_000);
                (user, records)
            },
            |(user, records)| {
                let store = &store;
                async move {
                    let written = store.import_records(&user, records).await.expect("import");
                    assert_eq!(written, 5_000);
                }
            },
            BatchSize::PerIteration,
        )
    });
    rt.block_on(store.import_records("ten-k", facts_data::facts("ten-k", 10_000)))
        .expect("fill");
    let mut q = 0;
    group.bench_function("search_10000_facts", |b| {
        b.to_async(&rt).iter(|| {
            q += 1;
            let query = facts_data::QUERIES[q % facts_data::QUERIES.len()];
            let store = &store;
            async move {
                let hits = store.search("ten-k", query, 5).await.expect("search");
                assert_eq!(hits.len(), 5);
            }
        })
    });
    group.bench_function("upsert_10000_facts", |b| {
        b.to_async(&rt).iter(|| {
            q += 1;
            let store = &store;
            async move {
                let fact = FactCandidate::new(format!("collects coins, tray {q}"), 0.6);
                store.upsert("ten-k", fact).await.expect("write");
            }
        })
    });
    group.bench_function("write_then_search_10000_facts", |b| {
        b.to_async(&rt).iter(|| {
            q += 1;
            let query = facts_data::QUERIES[q % facts_data::QUERIES.len()];
            let store = &store;
            async move {
                let fact = FactCandidate::new(format!("collects stamps, album {q}"), 0.6);
                store.upsert("ten-k", fact).await.expect("write");
                let hits = store.search("ten-k", query, 5).await.expect("search");
                assert_eq!(hits.len(), 5);
            }
        })
    });
    group.finish();
}

criterion_group!(sqlite, benches);
criterion_main!(sqlite);
