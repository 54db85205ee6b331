//! The open turn is strict: `commit` refuses tool rounds a model API would reject (and
//! logs nothing of them), a dropped turn leaves the window but not the log, and a session
//! for the caller's own client needs no registered model.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::conversation::ConversationEvent;
use agentmemory::model::RecordingModel;
use agentmemory::prelude::*;
use agentmemory::{StoredEvent, ToolRoundProblem};

/// An agent without long-term memory, talking to the model registered as `recorder`.
struct Bot;
impl Remember for Bot {}
impl Agent for Bot {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are brief.".into()
    }
    fn model(&self) -> &str {
        "recorder"
    }
}

/// An agent that remembers (extracts and injects facts).
#[remember(store = "facts")]
struct Keeper;
impl Agent for Keeper {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You remember.".into()
    }
    fn model(&self) -> &str {
        "recorder"
    }
}

fn setup() -> (Container, RecordingModel, Arc<InMemoryConversationStore>) {
    let container = Container::new();
    let log = Arc::new(InMemoryConversationStore::new());
    let model = RecordingModel::new();
    container.register_conversations("log", log.clone());
    container.register_user_memory("facts", Arc::new(InMemoryUserMemoryStore::new()));
    container.register_model("recorder", Arc::new(model.clone()));
    (container, model, log)
}

async fn session<A: Agent>(agent: A, container: &Container, conversation: &str) -> Session<A> {
    Session::builder(agent, container)
        .user("ann")
        .conversation(conversation)
        .build()
        .await
        .unwrap()
}

/// The messages of a log, as (role, text).
fn logged(events: &[StoredEvent]) -> Vec<(Role, String)> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            ConversationEvent::Message { message } => Some((message.role, message.text())),
            _ => None,
        })
        .collect()
}

/// Panics when two user messages follow each other.
fn assert_no_two_user_messages_in_a_row<'a>(messages: impl IntoIterator<Item = &'a Message>) {
    let roles: Vec<Role> = messages.into_iter().map(|m| m.role).collect();
    assert!(
        !roles
            .windows(2)
            .any(|w| w[0] == Role::User && w[1] == Role::User),
        "two user messages in a row: {roles:?}"
    );
}

fn call(ids: &[&str]) -> Message {
    Message::assistant_with_tools(
        "",
        ids.iter()
            .map(|id| ToolCall::new(*id, "weather", serde_json::json!({"city": "Oslo"})))
            .collect(),
    )
}

fn tool_error(err: MemoryError) -> (usize, ToolRoundProblem) {
    match err {
        MemoryError::InvalidToolRound { index, problem } => (index, problem),
        other => panic!("expected InvalidToolRound, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unknown_tool_result_id_is_refused_and_the_turn_can_be_committed_again() {
    let (container, _, log) = setup();
    let mut session = session(Keeper, &container, "unknown-id").await;
    let turn = session
        .prepare(Message::user("I live in Oslo. Weather?"))
        .await
        .unwrap();
    let keep = turn.clone();
    let bad = Reply::new(Message::assistant("Snow."))
        .with_steps(vec![call(&["c1"]), Message::tool_result("c2", "-3°C")]);
    let (index, problem) = tool_error(session.commit(turn, bad).await.unwrap_err());
    assert_eq!(index, 1);
    assert_eq!(
        problem,
        ToolRoundProblem::UnknownCallId {
            call_id: "c2".into()
        }
    );
    // Nothing of the reply was logged or remembered, and no fact was extracted.
    let events = log.load("unknown-id").await.unwrap();
    assert_eq!(
        logged(&events),
        vec![(Role::User, "I live in Oslo. Weather?".into())]
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e.event, ConversationEvent::FactsChanged { .. })));
    assert_eq!(session.memory().len(), 1);

    // The same turn, with the reply fixed.
    let good = Reply::new(Message::assistant("Snow, -3°C."))
        .with_steps(vec![call(&["c1"]), Message::tool_result("c1", "-3°C")]);
    let reply = session.commit(keep, good).await.unwrap();
    assert_eq!(reply.text(), "Snow, -3°C.");
    let roles: Vec<Role> = logged(&log.load("unknown-id").await.unwrap())
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(session.memory().len(), 4);
}

#[tokio::test]
async fn an_unanswered_call_is_refused_and_nothing_is_logged() {
    let (container, _, log) = setup();
    let mut session = session(Bot, &container, "unanswered").await;
    let turn = session.prepare(Message::user("Two cities?")).await.unwrap();
    let rounds = vec![call(&["a", "b"]), Message::tool_result("a", "sun")];
    let bad = Reply::new(Message::assistant("Sun and ...")).with_steps(rounds.clone());
    assert!(bad.check_tool_rounds().is_err(), "checkable before commit");
    let (index, problem) = tool_error(session.commit(turn.clone(), bad).await.unwrap_err());
    assert_eq!(index, 0, "the message that made the call");
    assert_eq!(
        problem,
        ToolRoundProblem::UnansweredCall {
            call_id: "b".into()
        }
    );
    // A final message that still calls a tool is a call without a result too.
    let err = session
        .commit(turn.clone(), call(&["z"]))
        .await
        .unwrap_err();
    assert!(matches!(
        tool_error(err).1,
        ToolRoundProblem::UnansweredCall { .. }
    ));
    // A duplicate result.
    let mut doubled = rounds.clone();
    doubled.push(Message::tool_result("b", "rain"));
    doubled.push(Message::tool_result("b", "rain"));
    let err = session
        .commit(
            turn.clone(),
            Reply::new(Message::assistant("ok")).with_steps(doubled),
        )
        .await
        .unwrap_err();
    assert_eq!(
        tool_error(err),
        (
            3,
            ToolRoundProblem::DuplicateResult {
                call_id: "b".into()
            }
        )
    );
    // Three refusals: the log holds the user message only, the window too.
    assert_eq!(
        logged(&log.load("unanswered").await.unwrap()),
        vec![(Role::User, "Two cities?".into())]
    );
    assert_eq!(session.memory().len(), 1);
    // The turn is still open: preparing the same message again is a retry.
    let again = session.prepare(Message::user("Two cities?")).await.unwrap();
    assert!(again.report().retried);
    assert!(again
        .request()
        .messages
        .iter()
        .all(|m| m.role != Role::Tool && m.tool_calls.is_empty()));
}

#[tokio::test]
async fn a_dropped_turn_leaves_the_window_and_stays_in_the_log() {
    let (container, model, log) = setup();
    let mut session = session(Bot, &container, "dropped").await;
    session.send("Hello").await.unwrap();

    // Opened, never committed.
    let dropped = session
        .prepare(Message::user("What is the capital of Peru?"))
        .await
        .unwrap();
    let dropped_id = dropped.user_message().id;
    drop(dropped);

    let turn = session
        .prepare(Message::user("Never mind: what time is it?"))
        .await
        .unwrap();
    assert!(!turn.report().retried);
    let window = &turn.request().messages;
    assert_no_two_user_messages_in_a_row(window.iter().map(|m| &**m));
    assert!(window.iter().all(|m| m.id != dropped_id), "{window:?}");
    assert_eq!(
        window.last().unwrap().text(),
        "Never mind: what time is it?"
    );
    let reply = model.complete(turn.request().clone()).await.unwrap();
    session.commit(turn, reply).await.unwrap();

    // The log keeps the dropped message, marked unanswered.
    let events = log.load("dropped").await.unwrap();
    let texts: Vec<String> = logged(&events).into_iter().map(|(_, t)| t).collect();
    assert!(texts.contains(&"What is the capital of Peru?".to_owned()));
    assert!(events.iter().any(|e| matches!(
        e.event,
        ConversationEvent::Unanswered { message_id } if message_id == dropped_id
    )));
    assert_no_two_user_messages_in_a_row(session.memory().messages());
    assert_eq!(session.memory().len(), 4);

    // A session resumed from the log rebuilds the same window.
    let mut resumed = Session::builder(Bot, &container)
        .user("ann")
        .resume("dropped")
        .build()
        .await
        .unwrap();
    let ids = |m: &ShortTermMemory| m.messages().iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(ids(resumed.memory()), ids(session.memory()));
    resumed.send("Thanks").await.unwrap();
    let request = model.last_request().unwrap();
    assert_no_two_user_messages_in_a_row(request.messages.iter().map(|m| &**m));
}

#[tokio::test]
async fn a_failed_send_then_a_new_message_does_not_stack_user_messages() {
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Fails once, then answers like the recording model.
    struct FailsOnce(AtomicBool, RecordingModel);
    #[agentmemory::async_trait]
    impl ChatModel for FailsOnce {
        async fn complete(&self, request: ChatRequest) -> agentmemory::Result<Completion> {
            if !self.0.swap(true, Ordering::SeqCst) {
                return Err(MemoryError::model(
                    "recorder",
                    agentmemory::error::ModelErrorKind::Timeout,
                    "timeout",
                ));
            }
            self.1.complete(request).await
        }

        fn is_language_model(&self) -> bool {
            self.1.is_language_model()
        }
    }

    let container = Container::new();
    let log = Arc::new(InMemoryConversationStore::new());
    let recorder = RecordingModel::new();
    container.register_conversations("log", log.clone());
    container.register_model(
        "recorder",
        Arc::new(FailsOnce(AtomicBool::new(false), recorder.clone())),
    );
    let mut session = session(Bot, &container, "failed").await;
    assert!(session.send("First try").await.is_err());
    session.send("Something else").await.unwrap();
    let request = recorder.last_request().unwrap();
    assert_no_two_user_messages_in_a_row(request.messages.iter().map(|m| &**m));
    assert!(request.messages.iter().all(|m| m.text() != "First try"));
    let texts: Vec<String> = logged(&log.load("failed").await.unwrap())
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(texts[0], "First try", "still in the log: {texts:?}");
    assert_eq!(texts.len(), 3);
}

#[tokio::test]
async fn a_dropped_stream_then_a_new_message_does_not_stack_user_messages() {
    use futures_util::StreamExt;

    let (container, model, _) = setup();
    let mut session = session(Bot, &container, "stream").await;
    {
        let mut stream = session.send_stream("Tell me a long story").await.unwrap();
        assert!(matches!(stream.next().await, Some(Ok(TurnEvent::Delta(_)))));
    }
    session.send("Actually, a short one").await.unwrap();
    let request = model.last_request().unwrap();
    assert_no_two_user_messages_in_a_row(request.messages.iter().map(|m| &**m));
    assert_eq!(request.messages.len(), 1, "{:?}", request.messages);
}

#[tokio::test]
async fn a_session_for_an_own_client_needs_no_model() {
    let container = Container::new();
    let log = Arc::new(InMemoryConversationStore::new());
    container.register_conversations("log", log.clone());
    container.register_user_memory("facts", Arc::new(InMemoryUserMemoryStore::new()));

    // Without saying so, a missing model fails the build, as before.
    assert!(Session::builder(Keeper, &container)
        .user("ann")
        .build()
        .await
        .is_err());

    let mut session = Session::builder(Keeper, &container)
        .user("ann")
        .conversation("own")
        .external_model()
        .build()
        .await
        .unwrap();
    let own_client = OfflineModel::new();
    for text in ["I live in Lisbon", "What should I visit?"] {
        let turn = session.prepare(Message::user(text)).await.unwrap();
        let completion = own_client.complete(turn.request().clone()).await.unwrap();
        session.commit(turn, completion).await.unwrap();
    }
    assert_eq!(session.memory().len(), 4);

    // `send` has no model to call: a typed error, and nothing is logged.
    let before = log.load("own").await.unwrap().len();
    match session.send("Hello?").await {
        Err(MemoryError::NoModel { agent }) => assert_eq!(agent, "Keeper"),
        other => panic!("expected NoModel, got {other:?}"),
    }
    assert!(matches!(
        session.send_stream("Hello?").await.err(),
        Some(MemoryError::NoModel { .. })
    ));
    assert_eq!(log.load("own").await.unwrap().len(), before);
    assert_eq!(session.memory().len(), 4);
}
