//! Facts as a fold of the log (issue 35): what one more session costs on a user with a
//! history of 10,000 messages, in time order and folded in behind everything else.
//!
//! `cargo bench -p agentmemory-core --bench fold`. The history is 200 dated sessions of
//! 50 messages (25 user statements, each answered), drawn from changes of state (homes,
//! jobs, pets, diets, habits) with varied values, ingested in order through
//! `ingest::ingest` with the offline rules and in-memory stores: the log, the episodes
//! and the facts. Each measured iteration ingests one more session of 50 messages under
//! a fresh conversation id:
//!
//! - `in_order`: dated after the whole history (the turn every chat makes);
//! - `old_session`: dated before the whole history, so each of its statements folds in
//!   behind the facts that later statements made.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::ingest::ingest;
use agentmemory_core::{Container, InMemoryConversationStore, InMemoryUserMemoryStore, Message};
use chrono::{DateTime, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, Criterion};
use tokio::runtime::Runtime;

const SESSIONS: usize = 200;
const STATEMENTS: usize = 25;

const TOWNS: &[&str] = &[
    "Bristol", "Derby", "Perth", "Dundee", "Galway", "Leipzig", "Turin", "Malmo", "Utrecht",
    "Lille", "Bergen", "Tartu", "Brno", "Graz", "Cadiz", "Porto",
];
const FIRMS: &[&str] = &[
    "Arup",
    "Unilever",
    "Rolls-Royce",
    "Babcock",
    "Ocado",
    "Aviva",
    "Capita",
    "Serco",
    "Experian",
    "Halma",
];
const PETS: &[&str] = &[
    "a spaniel",
    "a tabby cat",
    "two guinea pigs",
    "a parrot",
    "a corgi",
];
const HOBBIES: &[&str] = &[
    "bouldering",
    "pottery",
    "chess",
    "sailing",
    "salsa",
    "birdwatching",
    "fencing",
    "baking",
];

fn statement(i: usize, j: usize) -> String {
    let k = i * 7 + j * 13;
    match j % 6 {
        0 => format!("I live in {} now.", TOWNS[k % TOWNS.len()]),
        1 => format!("I started a new job at {}.", FIRMS[k % FIRMS.len()]),
        2 => format!("We adopted {} last week.", PETS[k % PETS.len()]),
        3 => format!(
            "I've really got into {} lately.",
            HOBBIES[k % HOBBIES.len()]
        ),
        4 => "I'm vegetarian these days.".to_owned(),
        _ => format!(
            "My sister is visiting from {} on Saturday.",
            TOWNS[(k + 3) % TOWNS.len()]
        ),
    }
}

fn session(i: usize, start: DateTime<Utc>) -> Vec<Message> {
    let mut out = Vec::with_capacity(STATEMENTS * 2);
    for j in 0..STATEMENTS {
        let t = start + chrono::Duration::minutes(2 * j as i64);
        out.push(Message::user(statement(i, j)).at(t));
        out.push(Message::assistant("Thanks, noted.").at(t + chrono::Duration::minutes(1)));
    }
    out
}

fn memory() -> Container {
    let container = Container::new();
    container.register_user_memory("facts", Arc::new(InMemoryUserMemoryStore::new()));
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    container
}

fn bench_fold(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let base = Utc.with_ymd_and_hms(2022, 1, 1, 9, 0, 0).unwrap();
    let day = |d: i64| base + chrono::Duration::days(d);
    let container = memory();
    let started = Instant::now();
    rt.block_on(async {
        for i in 0..SESSIONS {
            ingest(
                &container,
                "u",
                Some(&format!("s{i}")),
                session(i, day(3 * i as i64)),
            )
            .await
            .expect("ingest");
        }
    });
    eprintln!(
        "fold: history of {} messages ingested in {:.2?}",
        SESSIONS * STATEMENTS * 2,
        started.elapsed()
    );

    let mut group = c.benchmark_group("fold_one_session_of_50_messages_into_10000");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    let mut n = 0usize;
    group.bench_function("in_order", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let messages = session(n, day(3 * SESSIONS as i64 + n as i64));
                let t = Instant::now();
                rt.block_on(ingest(&container, "u", Some(&format!("new{n}")), messages))
                    .expect("ingest");
                total += t.elapsed();
            }
            total
        })
    });
    group.bench_function("old_session", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let messages = session(n, day(-(n as i64) - 1));
                let t = Instant::now();
                black_box(
                    rt.block_on(ingest(&container, "u", Some(&format!("old{n}")), messages))
                        .expect("ingest"),
                );
                total += t.elapsed();
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench_fold);
criterion_main!(benches);
