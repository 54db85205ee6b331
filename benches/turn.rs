//! One whole `Session::send` turn with in-memory stores, the offline model, 1,000
//! stored facts and 1,000 earlier messages (episodes) for the user. Three kinds of turn,
//! each measured on its own:
//!
//! - `statement`: a message the extractor turns into a fact, cycling through a few so
//!   every turn adds or reinforces one (upsert, reconciliation, logging of the change);
//! - `unrelated_question`: a question sharing no word with any fact (search finds
//!   nothing, extraction stores nothing);
//! - `summarising`: a turn that pushes the window over budget, so older messages are
//!   summarised and the summary logged (every iteration starts from a session primed
//!   just under the budget; priming is not measured).
//!
//! A turn keeps its messages as episodes, so a session that sends again and again
//! recalls over a history that grows with every iteration: measured that way (as this
//! bench did until milestone 4) the figure is the cost at whatever size criterion's
//! iteration count reached, tens of thousands of copies of the same few messages. The
//! first two kinds therefore run in rounds of [`ROUND`] turns, each round on fresh stores
//! holding the same 1,000 facts and 1,000 episodes (set up, not measured): the history
//! stays between 1,000 and 1,000 + 2 × [`ROUND`] messages.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::conversation::ConversationEvent;
use agentmemory::episodes::{Episode, EpisodeStore, InMemoryEpisodeStore};
use agentmemory::facts::FactCandidate;
use agentmemory::prelude::*;
use agentmemory::session::TurnReply;
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

/// Turns measured on one set of stores before they are made afresh.
const ROUND: u64 = 50;

fn container_with_facts(runtime: &tokio::runtime::Runtime) -> Container {
    let store = Arc::new(InMemoryUserMemoryStore::new());
    let episodes = Arc::new(InMemoryEpisodeStore::new());
    runtime.block_on(async {
        for i in 0..1_000 {
            let topic = TOPICS[i % TOPICS.len()];
            let candidate = FactCandidate::new(format!("likes {topic} variant {i}"), 0.8)
                .with_attribute("likes", format!("{topic} variant {i}"));
            store.upsert("alice", candidate).await.unwrap();
        }
        let earlier: Vec<Episode> = (0..1_000)
            .map(|i| {
                let topic = TOPICS[i % TOPICS.len()];
                let text = if i % 2 == 0 {
                    format!("we went {topic} on day {i} with the neighbours")
                } else {
                    format!("that sounds lovely, how was the {topic} on day {i}?")
                };
                let message = if i % 2 == 0 {
                    Message::user(text)
                } else {
                    Message::assistant(text)
                };
                Episode::from_message("alice", "earlier", &message)
            })
            .collect();
        episodes.add("alice", earlier).await.unwrap();
    });
    let container = Container::new();
    container.register_user_memory("user_memory", store);
    container.register_episodes("episodes", episodes);
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

    // `iters` turns of `text(i)`, in rounds of `ROUND` on fresh stores; only the sends
    // are timed.
    let rounds = |iters: u64, text: &dyn Fn(u64) -> &'static str, check: &dyn Fn(&TurnReply)| {
        let mut total = std::time::Duration::ZERO;
        let mut done = 0;
        while done < iters {
            let container = container_with_facts(&runtime);
            let mut session = runtime
                .block_on(
                    Session::builder(Assistant, &container)
                        .user("alice")
                        .max_tokens(4_000)
                        .build(),
                )
                .unwrap();
            for _ in 0..ROUND.min(iters - done) {
                let started = std::time::Instant::now();
                let reply = runtime.block_on(session.send(text(done))).unwrap();
                total += started.elapsed();
                check(&reply);
                done += 1;
            }
        }
        total
    };
    group.bench_function("statement", |b| {
        b.iter_custom(|iters| {
            rounds(
                iters,
                &|i| STATEMENTS[i as usize % STATEMENTS.len()],
                &|reply| {
                    debug_assert!(reply
                        .report
                        .fact_changes
                        .iter()
                        .any(|c| c.kind() != "ignored"));
                },
            )
        })
    });
    group.bench_function("unrelated_question", |b| {
        b.iter_custom(|iters| {
            rounds(
                iters,
                &|_| "Could you recommend something for tomorrow evening?",
                &|reply| debug_assert!(reply.report.injected.is_empty()),
            )
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
