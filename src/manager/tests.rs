//! Every method of [`MemoryManager`], over in-memory stores.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::json;

use super::*;
use agentmemory_core::conversation::InMemoryConversationStore;
use agentmemory_core::kv::InMemoryKvStore;
use agentmemory_core::message::{Message, Role};
use agentmemory_core::model::RecordingModel;
use agentmemory_core::remember::Remember;
use agentmemory_core::render::hostile;
use agentmemory_core::working::SetOptions;

fn manager() -> MemoryManager {
    MemoryManager::in_memory(MemoryConfig::default()).expect("manager")
}

/// A manager whose history summarises past `threshold` tokens of a `window`.
fn small(window: usize, threshold: usize) -> MemoryManager {
    MemoryManager::in_memory(
        MemoryConfig::default()
            .with_window_tokens(window)
            .with_summarize_threshold(threshold)
            .with_summary_tokens(40),
    )
    .expect("manager")
}

#[tokio::test]
async fn new_needs_both_stores_and_sane_budgets() {
    let container = Container::new();
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    let err = MemoryManager::new(&container, MemoryConfig::default()).expect_err("no kv");
    assert!(err.to_string().contains("KvStore"), "{err}");
    container.register_kv("kv", Arc::new(InMemoryKvStore::new()));
    let memory = MemoryManager::new(&container, MemoryConfig::default()).expect("both");
    assert_eq!(memory.working().scope_id(), DEFAULT_WORKING_SCOPE);
    let bad = MemoryConfig::default()
        .with_window_tokens(100)
        .with_summarize_threshold(101);
    assert!(matches!(
        MemoryManager::new(&container, bad),
        Err(MemoryError::InvalidArgument {
            what: "summarize_threshold",
            ..
        })
    ));
}

#[tokio::test]
async fn new_conversation_ids_are_fresh_and_write_nothing() {
    let memory = manager();
    let a = memory.new_conversation();
    let b = memory.new_conversation();
    assert_ne!(a, b);
    assert!(a.parse::<ulid::Ulid>().is_ok());
    assert!(memory
        .conversations()
        .list_conversations()
        .await
        .unwrap()
        .is_empty());
    assert!(memory.history(&a).await.unwrap().is_empty());
}

#[tokio::test]
async fn add_turn_logs_both_messages_in_order() {
    let memory = manager();
    let id = memory.new_conversation();
    let added = memory.add_turn(&id, "hello", "hi there").await.unwrap();
    assert_eq!(added.summarized, 0);
    assert!(added.history_tokens > 0);
    memory.add_turn(&id, "how are you?", "fine").await.unwrap();
    let history = memory.history(&id).await.unwrap();
    let texts: Vec<_> = history.iter().map(|m| (m.role, m.text())).collect();
    assert_eq!(
        texts,
        [
            (Role::User, "hello".to_owned()),
            (Role::Assistant, "hi there".to_owned()),
            (Role::User, "how are you?".to_owned()),
            (Role::Assistant, "fine".to_owned()),
        ]
    );
    assert!(memory.add_turn("", "a", "b").await.is_err());
}

#[tokio::test]
async fn add_messages_keeps_system_and_tool_messages() {
    let memory = manager();
    let id = memory.new_conversation();
    memory
        .add_messages(
            &id,
            vec![Message::system("Be brief."), Message::user("weather?")],
        )
        .await
        .unwrap();
    let history = memory.history(&id).await.unwrap();
    assert_eq!(history[0].role, Role::System);
    assert_eq!(history.len(), 2);
}

#[tokio::test]
async fn history_stays_within_the_window_and_summarises_past_the_threshold() {
    let memory = small(400, 200);
    let id = memory.new_conversation();
    let mut folded = 0;
    for i in 0..30 {
        let added = memory
            .add_turn(
                &id,
                format!("question {i} about the trip to Lisbon in spring"),
                format!("answer {i}: the museums open at nine"),
            )
            .await
            .unwrap();
        assert!(added.history_tokens <= 200, "turn {i}: {added:?}");
        folded += added.summarized;
    }
    assert!(folded > 0, "older turns were summarised");
    let summary = memory.summary(&id).await.unwrap().expect("a summary");
    assert!(!summary.is_empty());
    let history = memory.history(&id).await.unwrap();
    assert!(history.len() < 60);
    assert!(history.last().unwrap().text().starts_with("answer 29"));
    let tokens: usize = history
        .iter()
        .map(|m| HeuristicCounter::default().count_message(m))
        .sum();
    assert!(tokens <= 400, "{tokens}");
    // The log holds the summary: a second manager over the same stores reads the same.
    let again = MemoryManager::new(memory.container(), memory.config().clone()).unwrap();
    assert_eq!(again.summary(&id).await.unwrap(), Some(summary));
    assert_eq!(again.history(&id).await.unwrap(), history);
}

#[tokio::test]
async fn without_a_threshold_nothing_is_summarised_until_the_window_is_full() {
    let memory =
        MemoryManager::in_memory(MemoryConfig::default().with_window_tokens(10_000)).unwrap();
    let id = memory.new_conversation();
    for i in 0..20 {
        let added = memory
            .add_turn(&id, format!("message {i}"), format!("reply {i}"))
            .await
            .unwrap();
        assert_eq!(added.summarized, 0);
    }
    assert_eq!(memory.summary(&id).await.unwrap(), None);
    assert_eq!(memory.history(&id).await.unwrap().len(), 40);
}

#[tokio::test]
async fn working_set_get_and_options() {
    let memory = manager();
    memory.set("doc_type", "invoice").await.unwrap();
    memory
        .set_with(
            "vendor",
            json!({"name": "Acme"}),
            SetOptions::default().importance(0.9),
        )
        .await
        .unwrap();
    assert_eq!(
        memory.get("doc_type").await.unwrap(),
        Some(json!("invoice"))
    );
    assert_eq!(
        memory.get("vendor").await.unwrap(),
        Some(json!({"name": "Acme"}))
    );
    assert_eq!(memory.get("missing").await.unwrap(), None);
    assert!(memory
        .set_with("x", 1, SetOptions::default().importance(2.0))
        .await
        .is_err());
}

#[tokio::test]
async fn working_context_goes_through_the_renderer_and_its_cap() {
    let memory = manager();
    assert_eq!(memory.working_context().await.unwrap(), "");
    memory.set("plan", "book\nflights").await.unwrap();
    memory
        .set_with("goal", "Lisbon", SetOptions::default().importance(0.9))
        .await
        .unwrap();
    let text = memory.working_context().await.unwrap();
    assert_eq!(
        text,
        agentmemory_core::render::working_memory([("goal", "Lisbon"), ("plan", "book\nflights")])
    );
    for evil in hostile::CORPUS {
        memory.set("evil", *evil).await.unwrap();
        hostile::assert_contained(
            &memory.working_context().await.unwrap(),
            &["<working_memory>", "</working_memory>"],
            &[],
        );
    }
    // The cap leaves out the least important entries first.
    let capped = MemoryManager::new(
        memory.container(),
        MemoryConfig::default().with_working_memory_tokens(30),
    )
    .unwrap();
    let text = capped.working_context().await.unwrap();
    assert!(text.contains("goal: Lisbon"), "{text}");
    assert!(!text.contains("plan"), "{text}");
}

#[tokio::test]
async fn fork_shares_conversations_not_working_memory() {
    let parent = manager();
    let id = parent.new_conversation();
    parent.add_turn(&id, "hi", "hello").await.unwrap();
    parent.set("shared?", "parent only").await.unwrap();

    let child = parent.fork("sub-agent");
    assert_eq!(child.working().scope_id(), "sub-agent");
    assert_eq!(child.config().working_scope, "sub-agent");
    assert_eq!(child.get("shared?").await.unwrap(), None);
    child.set("label", "urgent").await.unwrap();
    assert_eq!(parent.get("label").await.unwrap(), None);

    child.add_turn(&id, "from the child", "ok").await.unwrap();
    assert_eq!(parent.history(&id).await.unwrap().len(), 4);

    child.clear_working().await.unwrap();
    assert_eq!(
        parent.get("shared?").await.unwrap(),
        Some(json!("parent only"))
    );
}

#[tokio::test]
async fn clear_conversation_deletes_one_log() {
    let memory = manager();
    let (a, b) = (memory.new_conversation(), memory.new_conversation());
    memory.add_turn(&a, "a", "a").await.unwrap();
    memory.add_turn(&b, "b", "b").await.unwrap();
    assert!(memory.clear_conversation(&a).await.unwrap());
    assert!(!memory.clear_conversation(&a).await.unwrap());
    assert!(memory.history(&a).await.unwrap().is_empty());
    assert_eq!(memory.history(&b).await.unwrap().len(), 2);
}

#[tokio::test]
async fn clear_working_empties_this_scope() {
    let memory = manager();
    memory.set("a", 1).await.unwrap();
    memory.set("b", 2).await.unwrap();
    assert_eq!(memory.clear_working().await.unwrap(), 2);
    assert_eq!(memory.get("a").await.unwrap(), None);
    assert_eq!(memory.working_context().await.unwrap(), "");
}

#[tokio::test]
async fn clear_all_removes_what_the_manager_wrote_and_nothing_else() {
    let memory = manager();
    let child = memory.fork("child");
    let (a, b) = (memory.new_conversation(), memory.new_conversation());
    memory.add_turn(&a, "a", "a").await.unwrap();
    child.add_turn(&b, "b", "b").await.unwrap();
    // Another application's conversation in the same store.
    let other = "someone-elses";
    memory
        .conversations()
        .append(
            other,
            vec![agentmemory_core::ConversationEvent::Message {
                message: Message::user("keep me"),
            }],
        )
        .await
        .unwrap();
    // Another manager (another root scope) over the same stores.
    let neighbour = MemoryManager::new(
        memory.container(),
        MemoryConfig::default().with_working_scope("neighbour"),
    )
    .unwrap();
    let c = neighbour.new_conversation();
    neighbour.add_turn(&c, "c", "c").await.unwrap();
    neighbour.set("k", "v").await.unwrap();
    memory.set("k", "v").await.unwrap();

    assert_eq!(memory.clear_all().await.unwrap(), 2);
    assert!(memory.history(&a).await.unwrap().is_empty());
    assert!(memory.history(&b).await.unwrap().is_empty());
    assert_eq!(memory.get("k").await.unwrap(), None);
    assert_eq!(memory.history(other).await.unwrap().len(), 1);
    assert_eq!(neighbour.history(&c).await.unwrap().len(), 2);
    assert_eq!(neighbour.get("k").await.unwrap(), Some(json!("v")));
    assert_eq!(memory.clear_all().await.unwrap(), 0);
}

struct Bot;
impl Remember for Bot {}
impl agentmemory_core::session::Agent for Bot {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are terse.".into()
    }
    fn model(&self) -> &str {
        "recording"
    }
}

#[tokio::test]
async fn sessions_of_the_manager_carry_its_working_memory_escaped() {
    let memory = manager();
    let model = Arc::new(RecordingModel::new());
    memory
        .container()
        .register_model("recording", model.clone());
    memory.set("task", "plan the Lisbon trip").await.unwrap();

    let mut session = memory.session(Bot).user("ann").build().await.unwrap();
    let reply = session.send("what next?").await.unwrap();
    let block = reply.report.working_memory.clone().expect("a block");
    assert!(block.contains("- task: plan the Lisbon trip"), "{block}");
    assert!(reply.report.tokens.working_memory > 0);
    let system = model.last_request().unwrap().system;
    assert!(
        system.starts_with("You are terse.\n\n<working_memory>"),
        "{system}"
    );

    // Changes between turns show in the next prompt; hostile values stay data.
    for evil in hostile::CORPUS {
        memory.set("evil", *evil).await.unwrap();
        session.send("and now?").await.unwrap();
        let system = model.last_request().unwrap().system;
        let start = system.find("<working_memory>").expect("block");
        hostile::assert_contained(
            &system[start..],
            &["<working_memory>", "</working_memory>"],
            &[],
        );
    }
    // The conversation is the manager's too.
    let history = memory.history(session.conversation_id()).await.unwrap();
    assert_eq!(history.first().unwrap().text(), "what next?");
}

#[tokio::test]
async fn sessions_without_working_memory_have_no_block() {
    let memory = manager();
    memory
        .container()
        .register_model("recording", Arc::new(RecordingModel::new()));
    memory.set("task", "x").await.unwrap();
    let mut session = agentmemory_core::Session::builder(Bot, memory.container())
        .user("ann")
        .build()
        .await
        .unwrap();
    let reply = session.send("hi").await.unwrap();
    assert_eq!(reply.report.working_memory, None);
    assert_eq!(reply.report.tokens.working_memory, 0);
}

#[tokio::test]
async fn a_session_summarises_at_its_absolute_threshold() {
    let memory = MemoryManager::in_memory(
        MemoryConfig::default()
            .with_window_tokens(10_000)
            .with_summarize_threshold(150),
    )
    .unwrap();
    memory
        .container()
        .register_model("recording", Arc::new(RecordingModel::new()));
    let mut session = memory.session(Bot).user("ann").build().await.unwrap();
    let mut summarized = false;
    for i in 0..20 {
        let reply = session
            .send(format!(
                "message {i} about the long trip to Lisbon and Porto"
            ))
            .await
            .unwrap();
        summarized |= reply.report.did_summarize();
        assert!(
            reply.report.tokens.window + reply.report.tokens.summary <= 150 + 60,
            "turn {i}: {:?}",
            reply.report.tokens
        );
    }
    assert!(
        summarized,
        "the 10,000-token window never filled, the threshold did"
    );
}

/// A conversation log that counts the events its readers get.
#[derive(Default)]
struct CountingLog {
    inner: InMemoryConversationStore,
    read: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl ConversationStore for CountingLog {
    async fn append(
        &self,
        id: &str,
        events: Vec<agentmemory_core::conversation::ConversationEvent>,
    ) -> Result<u64> {
        self.inner.append(id, events).await
    }
    async fn load_since(
        &self,
        id: &str,
        after: u64,
    ) -> Result<Vec<agentmemory_core::conversation::StoredEvent>> {
        let events = self.inner.load_since(id, after).await?;
        self.read
            .fetch_add(events.len(), std::sync::atomic::Ordering::Relaxed);
        Ok(events)
    }
    async fn list_conversations(&self) -> Result<Vec<String>> {
        self.inner.list_conversations().await
    }
    async fn delete(&self, id: &str) -> Result<bool> {
        self.inner.delete(id).await
    }
    async fn compact(&self, id: &str, before: u64) -> Result<usize> {
        self.inner.compact(id, before).await
    }
    async fn save(
        &self,
        id: &str,
        events: Vec<agentmemory_core::conversation::ConversationEvent>,
    ) -> Result<u64> {
        self.inner.save(id, events).await
    }
}

#[tokio::test]
async fn a_long_conversation_is_read_from_its_last_fold_not_its_first_message() {
    let log = Arc::new(CountingLog::default());
    let container = Container::new();
    container.register_conversations(agentmemory_core::di::tokens::CONVERSATIONS, log.clone());
    container.register_kv(
        agentmemory_core::di::tokens::KV,
        Arc::new(InMemoryKvStore::new()),
    );
    let config = MemoryConfig::default()
        .with_window_tokens(400)
        .with_summarize_threshold(200)
        .with_summary_tokens(40);
    let memory = MemoryManager::new(&container, config.clone()).unwrap();
    let id = memory.new_conversation();
    for i in 0..300 {
        memory
            .add_turn(
                &id,
                format!("question {i} about the garden"),
                format!("answer {i}"),
            )
            .await
            .unwrap();
    }
    let logged = log.inner.load(&id).await.unwrap().len();
    assert!(logged > 600, "{logged} events logged");
    let before = log.read.load(std::sync::atomic::Ordering::Relaxed);
    let history = memory.history(&id).await.unwrap();
    let read = log.read.load(std::sync::atomic::Ordering::Relaxed) - before;
    assert!(read < 60, "a read took {read} of {logged} events");
    assert!(history.last().unwrap().text().starts_with("answer 299"));
    // The same history as a full replay of the log gives.
    let mut full =
        agentmemory_core::buffer::ShortTermMemory::with_counter(400, memory.counter.clone());
    agentmemory_core::conversation::replay(&log.inner.load(&id).await.unwrap(), &mut full);
    let replayed: Vec<Message> = full.messages().into_iter().cloned().collect();
    assert_eq!(history, replayed);
    assert_eq!(
        memory.summary(&id).await.unwrap().as_deref(),
        full.summary()
    );
}
