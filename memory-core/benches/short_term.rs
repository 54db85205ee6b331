//! One conversation turn on `ShortTermMemory`: `add` a message, then read the window.
//!
//! The window holds about 4,000 tokens; the history behind it is 1,000 or 100,000
//! messages long. Both should cost the same: work is proportional to the window.

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::Message;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const TEXT: &str =
    "The quick brown fox jumps over the lazy dog while the cat watches from the window sill.";

fn turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("short_term_turn");
    for history in [1_000usize, 100_000] {
        let mut memory = ShortTermMemory::new(4_000);
        memory.add_system("You are a helpful assistant.");
        for i in 0..history {
            if i % 2 == 0 {
                memory.add_user(TEXT);
            } else {
                memory.add_assistant(TEXT);
            }
        }
        let message = Message::user(TEXT);
        group.bench_with_input(
            BenchmarkId::new("add_then_messages", history),
            &history,
            |b, _| {
                b.iter(|| {
                    memory.add(message.clone());
                    std::hint::black_box(memory.messages().len());
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, turn);
criterion_main!(benches);
