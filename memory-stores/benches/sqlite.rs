//! SqliteStore throughput: appends one message per transaction and 100 per transaction
//! (WAL, synchronous=NORMAL), and loading a 1,000-message conversation.

use agentmemory_core::{ConversationEvent, ConversationStore, Message};
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
}

criterion_group!(sqlite, benches);
criterion_main!(sqlite);
