//! One whole `Session` turn with the local embedder and 1,000 stored facts, beside the one
//! query embedding it needs and the same turn without semantic recall: the turn should
//! cost about the embedding plus the sparse turn, since stored facts are never embedded
//! again (tests/embed_calls.rs checks the call count).
//!
//! `AGENTMEM_EMBED_MODEL="$(scripts/fetch-model)" cargo bench -p agentmemory-core
//! --features local-embed --bench embed_turn`. Threads default to 2 (the target machine's
//! cores); `AGENTMEM_BENCH_THREADS` overrides. Without the variable the benchmarks are
//! skipped.

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use agentmemory_core::embed::{LocalEmbedder, AGENTMEM_EMBED_MODEL};
use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::model::OfflineModel;
use agentmemory_core::session::Agent;
use agentmemory_core::vector::embed_stores;
use agentmemory_core::{Container, InMemoryConversationStore, Remember, RememberSpec, Session};
use criterion::{criterion_group, criterion_main, Criterion};

struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> = Some(RememberSpec::new().store("user_memory").top_k(5));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

const FACTS: usize = 1_000;

const QUESTIONS: &[&str] = &[
    "What should I cook for dinner tonight?",
    "Any ideas for the weekend?",
    "Which museum would I enjoy?",
    "Should I order the cheese platter?",
];

/// 1,000 distinct everyday facts: (attribute, value) pairs from a few lists.
fn facts() -> Vec<FactCandidate> {
    const LIKES: &[&str] = &[
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
    ];
    const PLACES: &[&str] = &[
        "Lyon", "Porto", "Berlin", "Osaka", "Quito", "Dakar", "Oslo", "Perth", "Cusco", "Hanoi",
    ];
    const WITH: &[&str] = &[
        "with my sister",
        "on Sundays",
        "in the summer",
        "after work",
        "with colleagues",
        "in winter",
        "at night",
        "with the kids",
        "before breakfast",
        "on holiday",
    ];
    let mut out = Vec::with_capacity(FACTS);
    for (i, like) in LIKES.iter().enumerate() {
        for (j, place) in PLACES.iter().enumerate() {
            for (k, with) in WITH.iter().enumerate() {
                let value = format!("{like} in {place} {with}");
                let attribute = format!("likes {}", i * 100 + j * 10 + k);
                out.push(
                    FactCandidate::new(format!("likes {value}"), 0.8)
                        .with_attribute(attribute, value),
                );
            }
        }
    }
    out
}

/// A container with the 1,000 facts for "alice"; with `embedder`, the stores are
/// semantic and the facts carry embeddings (computed here in one batched call).
fn container(runtime: &tokio::runtime::Runtime, embedder: Option<&LocalEmbedder>) -> Container {
    let container = Container::new();
    container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    let mut candidates = facts();
    if let Some(embedder) = embedder {
        embed_stores(&container, Arc::new(embedder.clone())).unwrap();
        let texts: Vec<&str> = candidates.iter().map(|c| c.text.as_str()).collect();
        let vectors = embedder.embed_blocking(&texts).unwrap();
        for (candidate, vector) in candidates.iter_mut().zip(vectors) {
            candidate.embedding = Some(vector);
        }
    }
    let store = container
        .resolve::<dyn UserMemoryStore>(Some("user_memory"))
        .unwrap();
    runtime.block_on(async {
        for candidate in candidates {
            store.upsert("alice", candidate).await.unwrap();
        }
        assert_eq!(store.list("alice").await.unwrap().len(), FACTS);
    });
    container
}

fn turn(c: &mut Criterion) {
    let Some(dir) = std::env::var(AGENTMEM_EMBED_MODEL)
        .ok()
        .filter(|d| !d.is_empty())
    else {
        eprintln!("skipping the turn benchmarks: set {AGENTMEM_EMBED_MODEL} (scripts/fetch-model)");
        return;
    };
    let threads = std::env::var("AGENTMEM_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let embedder = LocalEmbedder::builder(&dir)
        .threads(threads)
        .build()
        .expect("the model loads");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let mut group = c.benchmark_group("turn_1000_facts_local_embed");
    group.measurement_time(Duration::from_secs(10));

    // The one embedding a question turn needs, alone.
    let mut n = 0;
    group.bench_function("query_embedding", |b| {
        b.iter(|| {
            n += 1;
            let texts = [QUESTIONS[n % QUESTIONS.len()].to_owned()];
            black_box(runtime.block_on(embedder.embed(&texts)).unwrap())
        })
    });

    for (name, embedder) in [
        ("question", Some(&embedder)),
        ("question_sparse_only", None),
    ] {
        let container = container(&runtime, embedder);
        let mut session = runtime
            .block_on(
                Session::builder(Assistant, &container)
                    .user("alice")
                    .max_tokens(4_000)
                    .build(),
            )
            .unwrap();
        let mut n = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                let question = QUESTIONS[n % QUESTIONS.len()];
                let reply = runtime.block_on(session.send(question)).unwrap();
                debug_assert!(reply
                    .report
                    .fact_changes
                    .iter()
                    .all(|c| c.kind() == "ignored"));
                reply
            })
        });
    }
    group.finish();
}

criterion_group!(benches, turn);
criterion_main!(benches);
