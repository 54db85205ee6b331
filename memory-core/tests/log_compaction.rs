//! A session that keeps episodes compacts its conversation log by itself once
//! `compact_after` events follow the last snapshot: the log stays a bounded tail, a
//! session built again on it has the same window and summary, and every message is
//! still an episode. A session without long-term memory never drops its log.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory_core::episodes::{EpisodeStore, InMemoryEpisodeStore};
use agentmemory_core::facts::InMemoryUserMemoryStore;
use agentmemory_core::model::OfflineModel;
use agentmemory_core::session::Agent;
use agentmemory_core::{
    Container, ConversationStore, InMemoryConversationStore, Remember, RememberSpec, Session,
};

struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> = Some(RememberSpec::new().store("user_memory").top_k(3));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

/// The same agent with no long-term memory: nothing but the log keeps what was said.
struct Forgetful;

impl Remember for Forgetful {
    const SPEC: Option<RememberSpec> = None;
}

impl Agent for Forgetful {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

const TURNS: usize = 60;
const COMPACT_AFTER: usize = 24;

fn container() -> (
    Container,
    Arc<InMemoryConversationStore>,
    Arc<InMemoryEpisodeStore>,
) {
    let container = Container::new();
    let log = Arc::new(InMemoryConversationStore::new());
    let episodes = Arc::new(InMemoryEpisodeStore::new());
    container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
    container.register_episodes("episodes", episodes.clone());
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container.register_conversations("log", log.clone());
    (container, log, episodes)
}

fn said(i: usize) -> String {
    format!("Note number {i}: today I repotted plant {i} and walked {i} kilometres.")
}

#[tokio::test]
async fn a_session_with_episodes_keeps_its_log_a_bounded_tail() {
    let (container, log, episodes) = container();
    let mut session = Session::builder(Assistant, &container)
        .user("ana")
        .conversation("c1")
        .max_tokens(600)
        .compact_after(Some(COMPACT_AFTER))
        .build()
        .await
        .unwrap();
    let mut longest = 0;
    for i in 0..TURNS {
        session.send(said(i)).await.unwrap();
        longest = longest.max(log.load("c1").await.unwrap().len());
    }
    // A turn adds a handful of events (message, reply, facts changed) and compaction
    // adds two (owner, snapshot): the log never grows far past the threshold.
    assert!(
        longest <= COMPACT_AFTER + 8,
        "the log reached {longest} events with compact_after {COMPACT_AFTER}"
    );
    let events = log.load("c1").await.unwrap();
    assert!(events.first().unwrap().seq > 1, "older events were dropped");

    // Built again on the compacted log: the same window and summary.
    let again = Session::builder(Assistant, &container)
        .user("ana")
        .resume("c1")
        .max_tokens(600)
        .build()
        .await
        .unwrap();
    assert_eq!(again.memory().messages(), session.memory().messages());
    assert_eq!(again.memory().summary(), session.memory().summary());

    // Every user message is still an episode.
    let kept = episodes.len("ana").await.unwrap();
    assert!(kept >= TURNS, "{kept} episodes for {TURNS} user messages");

    // The conversation still belongs to ana.
    let stranger = Session::builder(Assistant, &container)
        .user("bob")
        .resume("c1")
        .build()
        .await;
    assert!(stranger.is_err(), "the owner survives compaction");
}

#[tokio::test]
async fn a_session_without_long_term_memory_keeps_its_whole_log() {
    let (container, log, _) = container();
    let mut session = Session::builder(Forgetful, &container)
        .user("ana")
        .conversation("c2")
        .max_tokens(600)
        .compact_after(Some(COMPACT_AFTER))
        .build()
        .await
        .unwrap();
    for i in 0..TURNS {
        session.send(said(i)).await.unwrap();
    }
    let events = log.load("c2").await.unwrap();
    assert_eq!(events.first().unwrap().seq, 1, "nothing dropped");
    assert!(events.len() >= 2 * TURNS);
}

#[tokio::test]
async fn compaction_can_be_turned_off() {
    let (container, log, _) = container();
    let mut session = Session::builder(Assistant, &container)
        .user("ana")
        .conversation("c3")
        .compact_after(None)
        .build()
        .await
        .unwrap();
    for i in 0..TURNS {
        session.send(said(i)).await.unwrap();
    }
    assert_eq!(log.load("c3").await.unwrap().first().unwrap().seq, 1);
}
