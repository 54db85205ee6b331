//! A message over the size limit (1 MiB by default) is refused with
//! `MemoryError::PayloadTooLarge` before anything is logged, remembered or sent to a
//! model, by every entry point that takes one: a session's turn, `ingest` and a
//! manager's `add_messages`. A message of exactly the limit passes.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory_core::conversation::ConversationEvent;
use agentmemory_core::episodes::{EpisodeStore, InMemoryEpisodeStore};
use agentmemory_core::ingest::{ingest, ingest_with, IngestConfig};
use agentmemory_core::model::RecordingModel;
use agentmemory_core::session::{Agent, Session, SessionConfig};
use agentmemory_core::{
    Container, ConversationStore, InMemoryConversationStore, InMemoryUserMemoryStore, MemoryError,
    Message, Remember, RememberSpec, UserMemoryStore, DEFAULT_MAX_MESSAGE_BYTES,
};

const MIB: usize = 1024 * 1024;

/// An agent that remembers: every message would be kept as an episode, recalled from and
/// extracted.
struct Keeper;
impl Remember for Keeper {
    const SPEC: Option<RememberSpec> = Some(RememberSpec::new().store("facts"));
}
impl Agent for Keeper {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You remember.".into()
    }
    fn model(&self) -> &str {
        "recorder"
    }
}

struct Setup {
    container: Container,
    model: RecordingModel,
    log: Arc<InMemoryConversationStore>,
    facts: Arc<InMemoryUserMemoryStore>,
    episodes: Arc<InMemoryEpisodeStore>,
}

fn setup() -> Setup {
    let container = Container::new();
    let log = Arc::new(InMemoryConversationStore::new());
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let episodes = Arc::new(InMemoryEpisodeStore::new());
    let model = RecordingModel::new();
    container.register_conversations("log", log.clone());
    container.register_user_memory("facts", facts.clone());
    container.register_episodes("episodes", episodes.clone());
    container.register_model("recorder", Arc::new(model.clone()));
    Setup {
        container,
        model,
        log,
        facts,
        episodes,
    }
}

impl Setup {
    async fn session(&self, config: SessionConfig) -> Session<Keeper> {
        Session::builder(Keeper, &self.container)
            .user("ann")
            .conversation("c")
            .config(config)
            .build()
            .await
            .unwrap()
    }

    /// The messages logged in conversation `c`.
    async fn logged(&self) -> Vec<Message> {
        self.log
            .load("c")
            .await
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.event {
                ConversationEvent::Message { message } => Some(message),
                _ => None,
            })
            .collect()
    }

    /// Nothing of the user's was kept: no message logged, no episode, no fact, and the
    /// model was never called.
    async fn assert_nothing_kept(&self) {
        assert!(self.logged().await.is_empty(), "a message was logged");
        assert_eq!(
            self.episodes.len("ann").await.unwrap(),
            0,
            "an episode was kept"
        );
        assert!(self.facts.list("ann").await.unwrap().is_empty());
        assert!(self.model.requests().is_empty(), "the model was called");
    }
}

/// A text of exactly `bytes` bytes (ASCII words, a full stop now and then).
fn text_of(bytes: usize) -> String {
    let mut text = "I live in Lisbon and I love surfing. ".repeat(bytes / 37 + 1);
    text.truncate(bytes);
    text
}

fn assert_too_large(err: MemoryError, size: usize, limit: usize) {
    match &err {
        MemoryError::PayloadTooLarge {
            what,
            size: s,
            limit: l,
        } => {
            assert_eq!((*what, *s, *l), ("message", size, limit), "{err}");
        }
        other => panic!("expected PayloadTooLarge, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        format!("message is too large: {size} bytes (limit {limit})")
    );
}

#[test]
fn the_default_limit_is_one_mebibyte_everywhere() {
    assert_eq!(DEFAULT_MAX_MESSAGE_BYTES, MIB);
    assert_eq!(SessionConfig::default().max_message_bytes, MIB);
    assert_eq!(IngestConfig::default().max_message_bytes, MIB);
    // `MemoryManager` (the facade's `manager`): tests/memory_manager.rs.
}

#[tokio::test]
async fn a_two_mebibyte_message_is_refused_by_send_and_nothing_is_kept() {
    let s = setup();
    let mut session = s.session(SessionConfig::default()).await;
    let err = session.send(text_of(2 * MIB)).await.unwrap_err();
    assert_too_large(err, 2 * MIB, MIB);
    s.assert_nothing_kept().await;
    assert!(session.memory().is_empty());

    // The same through prepare (the caller's own client) and the stream.
    let err = session
        .prepare(Message::user(text_of(2 * MIB)))
        .await
        .unwrap_err();
    assert_too_large(err, 2 * MIB, MIB);
    let err = session.send_stream(text_of(2 * MIB)).await.err().unwrap();
    assert_too_large(err, 2 * MIB, MIB);
    s.assert_nothing_kept().await;

    // The session goes on: the next message is a normal turn.
    session.send("I live in Lisbon").await.unwrap();
    assert_eq!(s.logged().await.len(), 2);
}

#[tokio::test]
async fn a_message_of_exactly_the_limit_passes_and_one_byte_more_does_not() {
    let s = setup();
    let config = SessionConfig::default().with_max_message_bytes(4_096);
    let mut session = s.session(config).await;
    let err = session.send(text_of(4_097)).await.unwrap_err();
    assert_too_large(err, 4_097, 4_096);
    s.assert_nothing_kept().await;

    let reply = session.send(text_of(4_096)).await.unwrap();
    assert!(!reply.text().is_empty());
    let logged = s.logged().await;
    assert_eq!(logged.len(), 2, "the message and the reply");
    assert_eq!(logged[0].text().len(), 4_096);
    assert_eq!(s.episodes.len("ann").await.unwrap(), 2);
}

#[tokio::test]
async fn a_message_of_exactly_one_mebibyte_passes_by_default() {
    let s = setup();
    let mut session = s.session(SessionConfig::default()).await;
    session.send(text_of(MIB)).await.unwrap();
    let logged = s.logged().await;
    assert_eq!(logged[0].text().len(), MIB);
}

#[tokio::test]
async fn a_multi_part_message_counts_every_block() {
    use agentmemory_core::ContentBlock;
    let s = setup();
    let config = SessionConfig::default().with_max_message_bytes(100);
    let mut session = s.session(config).await;
    let blocks = vec![
        ContentBlock::Text { text: text_of(60) },
        ContentBlock::Json {
            value: serde_json::json!({"note": text_of(40)}),
        },
    ];
    let err = session
        .send_message(Message::user(blocks))
        .await
        .unwrap_err();
    assert_too_large(err, 60 + 40 + r#"{"note":""}"#.len(), 100);
    s.assert_nothing_kept().await;
}

#[tokio::test]
async fn ingest_refuses_the_whole_history_for_one_message_over_the_limit() {
    let s = setup();
    let history = vec![
        Message::user("I live in Lisbon"),
        Message::assistant(text_of(2 * MIB)),
        Message::user("I love surfing"),
    ];
    let err = ingest(&s.container, "ann", Some("c"), history)
        .await
        .unwrap_err();
    assert_too_large(err, 2 * MIB, MIB);
    s.assert_nothing_kept().await;

    // At the limit (a small one, set by IngestConfig), it passes.
    let config = IngestConfig::default().with_max_message_bytes(4_096);
    let history = vec![Message::user(text_of(4_097))];
    let err = ingest_with(&s.container, "ann", Some("c"), history, config)
        .await
        .unwrap_err();
    assert_too_large(err, 4_097, 4_096);
    s.assert_nothing_kept().await;
    let history = vec![Message::user(text_of(4_096))];
    let report = ingest_with(&s.container, "ann", Some("c"), history, config)
        .await
        .unwrap();
    assert_eq!((report.messages, report.episodes), (1, 1));
}
