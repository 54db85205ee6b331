//! One whole `Session::send` turn with in-memory stores, the offline model and 1,000
//! stored facts for the user. Three kinds of turn, each measured on its own:
//!
//! - `statement`: a message the extractor turns into a fact, cycling through a few so
//!   every turn adds or reinforces one (upsert, reconciliation, logging of the change);
//! - `unrelated_question`: a question sharing no word with any fact (search finds
//!   nothing, extraction stores nothing);
//! - `summarising`: a turn that pushes the window over budget, so older messages are
//!   summarised and the summary logged (every iteration starts from a session primed
//!   just under the budget; priming is not measured).

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::conversation::ConversationEvent;
use agentmemory::facts::FactCandidate;
use agentmemory::prelude::*;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

#[remember(store = "user_memory", top_k = 5)]
struct Assistant;

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

const TOPICS: &[&str] = &[
    "jazz",
    "hiking",
    "museums",
    "sushi",
    "chess",
    "cycling",
    "opera",
    "gardening",
    "poetry",
    "climbing",
    "tennis",
    "baking",
    "photography",
    "sailing",
    "astronomy",
    "pottery",
    "knitting",
    "surfing",
    "running",
    "painting",
];

const STATEMENTS: &[&str] = &[
    "I love jazz",
    "I live in Porto",
    "I love hiking",
    "My favourite food is ramen",
];

fn container_with_facts(runtime: &tokio::runtime::Runtime) -> Container {
    let store = Arc::new(InMemoryUserMemoryStore::new());
    runtime.block_on(async {
        for i in 0..1_000 {
            let topic = TOPICS[i % TOPICS.len()];
            let candidate = FactCandidate::new(format!("likes {topic} variant {i}"), 0.8)
                .with_attribute("likes", format!("{topic} variant {i}"));
            store.upsert("alice", candidate).await.unwrap();
        }
    });
    let container = Container::new();
    container.register_user_memory("user_memory", store);
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container
}

fn turns(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let container = container_with_facts(&runtime);
    let mut group = c.benchmark_group("turn_1000_facts");

    let mut session = runtime
        .block_on(
            Session::builder(Assistant, &container)
                .user("alice")
                .max_tokens(4_000)
                .build(),
        )
        .unwrap();
    let mut n = 0;
    group.bench_function("statement", |b| {
        b.iter(|| {
            let text = STATEMENTS[n % STATEMENTS.len()];
            n += 1;
            let reply = runtime.block_on(session.send(text)).unwrap();
            debug_assert!(reply
                .report
                .fact_changes
                .iter()
                .any(|c| c.kind() != "ignored"));
            reply
        })
    });

    let mut session = runtime
        .block_on(
            Session::builder(Assistant, &container)
                .user("alice")
                .max_tokens(4_000)
                .build(),
        )
        .unwrap();
    group.bench_function("unrelated_question", |b| {
        b.iter(|| {
            let reply = runtime
                .block_on(session.send("Could you recommend something for tomorrow evening?"))
                .unwrap();
            debug_assert!(reply.report.injected.is_empty());
            reply
        })
    });

    // Primed with ~560 of 600 tokens of history: the next turn goes over and summarises.
    let log = Arc::new(InMemoryConversationStore::new());
    let primed = container.clone();
    primed.register_conversations("log", log.clone());
    let filler = "We talked about the trains to Porto and the weather on the coast this week.";
    let mut id = 0u64;
    group.bench_function("summarising", |b| {
        b.iter_batched(
            || {
                id += 1;
                let conversation = format!("primed-{id}");
                let events = (0..26)
                    .map(|i| ConversationEvent::Message {
                        message: if i % 2 == 0 {
                            Message::user(filler)
                        } else {
                            Message::assistant(filler)
                        },
                    })
                    .collect();
                runtime.block_on(async {
                    log.append(&conversation, events).await.unwrap();
                    Session::builder(Assistant, &primed)
                        .user("alice")
                        .conversation(conversation)
                        .max_tokens(600)
                        .build()
                        .await
                        .unwrap()
                })
            },
            |mut session| {
                let reply = runtime
                    .block_on(session.send("Could you recommend something for tomorrow evening?"))
                    .unwrap();
                assert!(reply.report.did_summarize());
                (session, reply)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);
