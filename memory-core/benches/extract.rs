//! Cost of the offline `RuleExtractor` on one chat message of about 30 words (target:
//! under 20 µs per message).
//!
//! `cargo bench -p agentmemory-core --bench extract`

use agentmemory_core::extract::RuleExtractor;
use criterion::{criterion_group, criterion_main, Criterion};

/// Thirty-word messages in the style of the labelled chat set: facts mixed with chatter.
const MESSAGES: &[&str] = &[
    "hey! so i just got back from work, long day 😩 i'm a pharmacist btw and i live in leeds with my two cats, Miso and Tofu. any dinner ideas?",
    "ok quick background: i'm 29, i work at a bakery, i'm vegetarian but i eat eggs, and i'm planning a trip to japan in april with my sister",
    "i used to live in madrid but now i live in berlin, i'm learning german and i always swim on sunday mornings before my coffee honestly",
    "my husband is a chef and my favourite food is ramen, i can't stand cilantro though, and i have two dogs named Rex and Bella haha",
];

fn extract(c: &mut Criterion) {
    let x = RuleExtractor::new();
    for (i, m) in MESSAGES.iter().enumerate() {
        let words = m.split_whitespace().count();
        assert!((25..=35).contains(&words), "{words} words");
        c.bench_function(&format!("extract/30_words/{i}"), |b| {
            b.iter(|| x.extract_text(std::hint::black_box(m)))
        });
    }
}

criterion_group!(benches, extract);
criterion_main!(benches);
