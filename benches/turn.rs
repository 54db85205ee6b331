//! One whole `Session::send` turn with in-memory stores, the offline model and
//! 1,000 stored facts for the user: inject (search), model, buffers, log, extract.
//! A second run replaces the offline model with a canned reply, leaving only
//! agentmem's own work.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::facts::FactCandidate;
use agentmemory::prelude::*;
use criterion::{criterion_group, criterion_main, Criterion};

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

/// A model that costs nothing: the same short reply every time. With it, the bench
/// measures only agentmem's share of a turn.
struct Canned;

#[async_trait::async_trait]
impl ChatModel for Canned {
    async fn complete(
        &self,
        _: agentmemory::ChatRequest,
    ) -> Result<agentmemory::Completion, MemoryError> {
        Ok(agentmemory::Completion {
            message: Message::assistant("Sounds good, let us plan around that on Saturday."),
            usage: None,
        })
    }
}

fn turn(c: &mut Criterion) {
    bench_with(c, "turn_1000_facts", Arc::new(OfflineModel::new()));
    bench_with(c, "turn_1000_facts_canned_model", Arc::new(Canned));
}

fn bench_with(c: &mut Criterion, name: &str, model: Arc<dyn ChatModel>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
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
    container.register_model("offline", model);
    let mut session = runtime
        .block_on(
            Session::builder(Assistant, &container)
                .user("alice")
                .max_tokens(4_000)
                .build(),
        )
        .unwrap();

    let mut group = c.benchmark_group("session");
    group.bench_function(name, |b| {
        b.iter(|| {
            runtime
                .block_on(session.send("What should we do about jazz this weekend?"))
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, turn);
criterion_main!(benches);
