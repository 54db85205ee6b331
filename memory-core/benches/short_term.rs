//! One conversation turn on `ShortTermMemory`: `add` a message, then read the window.
//!
//! The window holds about 4,000 tokens; the history behind it is 1,000, 10,000 or
//! 100,000 messages of mixed length (5 to 150 words). The history stays at its stated
//! size during measurement: each iteration adds one message and drops the oldest, as a
//! session's summarisation does. Two paths: the window read within the budget, and the
//! over-budget path (the buffer is over, the window is computed and the oldest message
//! folded away). Both should cost the same at every history size: work is proportional
//! to the window, not to the history.

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::Message;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const WORDS: &[&str] = &[
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "while", "cat", "watches",
    "from", "window", "sill", "and", "thinks", "about", "dinner", "tonight", "again",
];

/// A message of `n` words.
fn text(n: usize, seed: usize) -> String {
    (0..n)
        .map(|i| WORDS[(seed * 7 + i * 13) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Word counts from 5 to 150, spread deterministically.
fn length(i: usize) -> usize {
    5 + (i * 37) % 146
}

fn history(size: usize) -> (ShortTermMemory, Vec<Message>) {
    let mut memory = ShortTermMemory::new(4_000);
    memory.add_system("You are a helpful assistant.");
    for i in 0..size {
        let t = text(length(i), i);
        if i % 2 == 0 {
            memory.add_user(t);
        } else {
            memory.add_assistant(t);
        }
    }
    // A pool of incoming messages, cycled, with the same length mix.
    let incoming = (0..64)
        .map(|i| Message::user(text(length(i + 3), i + 11)))
        .collect();
    (memory, incoming)
}

fn turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("short_term_turn");
    for size in [1_000usize, 10_000, 100_000] {
        let (mut memory, incoming) = history(size);
        let mut next = 0;
        group.bench_with_input(BenchmarkId::new("add_then_window", size), &size, |b, _| {
            b.iter(|| {
                memory.add(incoming[next % incoming.len()].clone());
                next += 1;
                std::hint::black_box(memory.shared_window_within(4_000).0.len());
                // Keep the history at its stated size.
                memory.trim_to_recent(size);
            })
        });
        assert_eq!(
            memory.len(),
            size + 1,
            "the history grew during measurement"
        );

        let (mut memory, incoming) = history(size);
        let mut next = 0;
        group.bench_with_input(BenchmarkId::new("over_budget", size), &size, |b, _| {
            b.iter(|| {
                memory.add(incoming[next % incoming.len()].clone());
                next += 1;
                assert!(memory.is_over_budget());
                let keep = memory.recent_that_fit(4_000);
                std::hint::black_box(memory.messages().len());
                std::hint::black_box(keep);
                memory.trim_to_recent(size);
            })
        });
        assert_eq!(memory.len(), size + 1);
    }
    group.finish();
}

criterion_group!(benches, turn);
criterion_main!(benches);
