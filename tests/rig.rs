//! The rig adapter driven end to end: rig agents on rig's own scripted model
//! (`rig_core::test_utils::MockCompletionModel`), with agentmem as their session store,
//! their fact memory and their memory tools; and the session store against rig's own
//! store contract (`rig_memory::conformance`), in memory and on SQLite.

use std::io;
use std::sync::Arc;

use agentmemory::rig::{MemoryUser, RigMemory, SessionStore};
use agentmemory::{
    ConversationStore, InMemoryConversationStore, InMemoryKvStore, InMemoryUserMemoryStore,
    UserMemoryStore,
};
use rig_agent::{Agent, AgentBuilder};
use rig_core::completion::CompletionRequest;
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use rig_memory::{AsyncStore, LogWriteError};
use serde_json::json;

const PREAMBLE: &str = "You are a concise travel assistant.";

struct Rig {
    model: MockCompletionModel,
    facts: Arc<InMemoryUserMemoryStore>,
    log: Arc<InMemoryConversationStore>,
    memory: RigMemory,
    agent: Agent,
}

/// An agent with agentmem's memory and tools on a model that answers with `turns`.
fn rig(turns: impl IntoIterator<Item = MockTurn>) -> Rig {
    let model = MockCompletionModel::from_turns(turns);
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let log = Arc::new(InMemoryConversationStore::new());
    let memory = RigMemory::builder(facts.clone(), log.clone())
        .files(Arc::new(InMemoryKvStore::new()))
        .build();
    let (remember, recall, forget) = memory.tools();
    let agent = AgentBuilder::new(model.clone())
        .preamble(PREAMBLE)
        .tool(remember)
        .tool(recall)
        .tool(forget)
        .build();
    Rig {
        model,
        facts,
        log,
        memory,
        agent,
    }
}

/// The whole of a request's messages, as JSON text.
fn history(request: &CompletionRequest) -> String {
    serde_json::to_string(&request.chat_history).unwrap()
}

#[tokio::test]
async fn facts_from_one_turn_reach_the_preamble_of_the_next() {
    let rig = rig([MockTurn::text("Noted!"), MockTurn::text("A museum day?")]);
    let alice = rig.memory.user("alice").unwrap();

    let (run, hook) = alice
        .prepare(&rig.agent, "alice-1", "Hi, I'm Alice and I love museums")
        .await
        .unwrap();
    let out = run.run().await.unwrap();
    assert_eq!(out.output(), "Noted!");
    let report = hook.report();
    assert!(report.errors.is_empty(), "{:?}", report.errors);

    // New facts are stored after the turn, for alice only.
    let stored = rig.facts.list("alice").await.unwrap();
    assert!(
        stored
            .iter()
            .any(|f| f.text.to_lowercase().contains("museum")),
        "{stored:?}"
    );
    assert!(rig.facts.list("bob").await.unwrap().is_empty());

    // A new conversation, the next day: the fact is in the preamble, after the agent's own.
    let (run, hook) = alice
        .prepare(&rig.agent, "alice-2", "Any plans for this weekend?")
        .await
        .unwrap();
    run.run().await.unwrap();
    let sent = rig.model.requests();
    assert_eq!(sent.len(), 2);
    let system = sent[1].system_instructions().unwrap_or_default();
    assert!(system.starts_with(PREAMBLE), "{system}");
    assert!(system.contains("<user_memory>"), "{system}");
    assert!(system.to_lowercase().contains("museum"), "{system}");
    assert!(!hook.report().injected.is_empty());
    // The first request had nothing to inject.
    let first = sent[0].system_instructions().unwrap_or_default();
    assert!(!first.contains("<user_memory>"), "{first}");
    // The first conversation's messages are not in the second one's history.
    assert!(!history(&sent[1]).contains("I'm Alice"));
}

#[tokio::test]
async fn the_session_store_carries_the_conversation_and_refuses_another_user() {
    let rig = rig([
        MockTurn::text("Lyon is lovely."),
        MockTurn::text("Pack for rain."),
    ]);
    let alice = rig.memory.user("alice").unwrap();
    for prompt in ["I am planning a trip to Lyon", "What should I pack?"] {
        alice
            .prompt(&rig.agent, "thread", prompt)
            .await
            .unwrap()
            .run()
            .await
            .unwrap();
    }
    // rig loaded the first turn from agentmem's log for the second.
    let sent = rig.model.requests();
    let second = history(&sent[1]);
    assert!(second.contains("I am planning a trip to Lyon"), "{second}");
    assert!(second.contains("Lyon is lovely."), "{second}");

    // The conversation reads back through rig's own loader: both turns.
    let conversation = rig_memory::load_async(&alice.session_store(), "thread")
        .await
        .unwrap();
    assert_eq!(conversation.messages().len(), 4);
    // It lives in agentmem's log, owned by alice.
    let events = rig.log.load("thread").await.unwrap();
    assert!(events.iter().any(|e| matches!(
        &e.event,
        agentmemory::ConversationEvent::Started { user_id, .. } if user_id == "alice"
    )));

    // Bob cannot open, read or write alice's conversation.
    let bob = rig.memory.user("bob").unwrap();
    assert!(bob.conversation("thread").await.is_err());
    assert!(bob
        .prompt(&rig.agent, "thread", "What did she say?")
        .await
        .is_err());
    let store = bob.session_store();
    let read = store.read_log_async("thread").await;
    assert_eq!(
        read.unwrap_err().kind(),
        io::ErrorKind::PermissionDenied,
        "bob read alice's log"
    );
    let len = rig_memory_len(&alice.session_store(), "thread").await;
    let append = store.append_log_async("thread", len, b"{}\n").await;
    assert!(
        matches!(&append, Err(LogWriteError::Io(e)) if e.kind() == io::ErrorKind::PermissionDenied),
        "{append:?}"
    );
    // A run given bob's store fails (rig fails the run when its memory does), and
    // the model is never called.
    let failed = rig
        .agent
        .prompt("What did she say?")
        .memory(bob.session_store())
        .conversation("thread")
        .run()
        .await;
    assert!(failed.is_err());
    assert_eq!(rig.model.request_count(), 2);
    assert_eq!(
        rig_memory::load_async(&alice.session_store(), "thread")
            .await
            .unwrap(),
        conversation
    );

    // Ids are checked: no empty user, no conversation id rig cannot name a log with.
    assert!(rig.memory.user("  ").is_err());
    assert!(alice.conversation("../thread").await.is_err());
    assert!(alice.conversation("a/b").await.is_err());
}

async fn rig_memory_len(store: &SessionStore, log: &str) -> u64 {
    store.read_log_async(log).await.unwrap().len() as u64
}

#[tokio::test]
async fn a_remember_tool_call_stores_the_fact() {
    let rig = rig([
        MockTurn::tool_call(
            "call_1",
            "remember",
            json!({"fact": "is allergic to peanuts"}),
        ),
        MockTurn::text("I'll remember that."),
    ]);
    let alice = rig.memory.user("alice").unwrap();
    let out = alice
        .prompt(&rig.agent, "tools", "Please note something for later")
        .await
        .unwrap()
        .max_turns(3)
        .run()
        .await
        .unwrap();
    assert_eq!(out.output(), "I'll remember that.");
    let stored = rig.facts.list("alice").await.unwrap();
    assert!(
        stored.iter().any(|f| f.text == "is allergic to peanuts"),
        "{stored:?}"
    );
    assert!(rig.facts.list("bob").await.unwrap().is_empty());
    // The tools were advertised, and the tool result went back to the model.
    let sent = rig.model.requests();
    let tools = serde_json::to_string(&sent[0].tools).unwrap();
    for name in ["remember", "recall", "forget"] {
        assert!(tools.contains(name), "{tools}");
    }
    assert!(history(&sent[1]).contains("added"), "{}", history(&sent[1]));
    // The change is in the conversation's log.
    let events = rig.log.load("tools").await.unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e.event, agentmemory::ConversationEvent::FactsChanged { .. })));
}

#[tokio::test]
async fn recall_and_forget_act_on_the_bound_user_only() {
    use rig_core::tool::{Tool, ToolContext};

    let rig = rig([]);
    rig.facts
        .upsert("alice", agentmemory::FactCandidate::new("likes jazz", 0.9))
        .await
        .unwrap();
    let (_, recall, forget) = rig.memory.tools();
    let mut alice = rig
        .memory
        .user("alice")
        .unwrap()
        .tool_context(Some("chat-alice"))
        .unwrap();
    let found = recall
        .call(
            &mut alice,
            serde_json::from_value(json!({"query": "jazz"})).unwrap(),
        )
        .await
        .unwrap();
    let id = found["facts"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(found["facts"][0]["fact"], "likes jazz");

    // Bob's context finds nothing and cannot delete alice's fact.
    let mut bob = rig.memory.user("bob").unwrap().tool_context(None).unwrap();
    let none = recall
        .call(
            &mut bob,
            serde_json::from_value(json!({"query": "jazz"})).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(none["facts"], json!([]));
    let denied = forget
        .call(&mut bob, serde_json::from_value(json!({"id": id})).unwrap())
        .await
        .unwrap();
    assert_eq!(denied["forgotten"], false);
    assert_eq!(rig.facts.list("alice").await.unwrap().len(), 1);

    // No user in the context: an error, not a default user.
    let err = recall
        .call(
            &mut ToolContext::new(),
            serde_json::from_value(json!({"query": "jazz"})).unwrap(),
        )
        .await;
    assert!(err.is_err());
    assert!(alice.contains::<MemoryUser>());

    let done = forget
        .call(
            &mut alice,
            serde_json::from_value(json!({"id": id})).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(done["forgotten"], true);
    assert!(rig.facts.list("alice").await.unwrap().is_empty());
    // The conversation's log says what was forgotten.
    let logged = rig.log.load("chat-alice").await.unwrap();
    let deleted: Vec<&agentmemory::facts::FactChange> = logged
        .iter()
        .filter_map(|e| match &e.event {
            agentmemory::conversation::ConversationEvent::FactsChanged { changes } => Some(changes),
            _ => None,
        })
        .flatten()
        .filter(|c| c.kind() == "deleted")
        .collect();
    assert_eq!(deleted.len(), 1, "{logged:?}");
    assert!(
        matches!(deleted[0], agentmemory::facts::FactChange::Deleted { fact } if fact.text == "likes jazz")
    );
}

#[tokio::test]
async fn hostile_facts_stay_data_in_the_preamble() {
    use agentmemory::FactCandidate;
    use agentmemory_core::render::hostile::{assert_contained, CORPUS};

    let tags = ["<user_memory>", "</user_memory>"];
    // Each hostile text a fact of its own user, recalled by a message that names it.
    let rig = rig(CORPUS.iter().map(|_| MockTurn::text("Noted.")));
    for (i, text) in CORPUS.iter().enumerate() {
        let user = format!("user-{i}");
        rig.facts
            .upsert(&user, FactCandidate::new(*text, 0.9))
            .await
            .unwrap();
        let (run, hook) = rig
            .memory
            .user(&user)
            .unwrap()
            .prepare(&rig.agent, &format!("chat-{i}"), *text)
            .await
            .unwrap();
        run.run().await.unwrap();
        let report = hook.report();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(
            report.memory_block.is_some(),
            "corpus text {i} {text:?} was not recalled"
        );
    }
    let sent = rig.model.requests();
    assert_eq!(sent.len(), CORPUS.len());
    for request in &sent {
        let system = request.system_instructions().unwrap_or_default();
        assert!(system.starts_with(PREAMBLE), "{system}");
        assert_contained(system, &tags, &[]);
    }
}

// ---- the session store on its own: rig's contract ----------------------------------

/// Two handles on one empty storage: two `RigMemory`s over the same stores, as two
/// processes sharing them would be.
fn two_handles(
    log: Arc<dyn ConversationStore>,
    files: Arc<dyn agentmemory::KvStore>,
) -> (SessionStore, SessionStore) {
    let handle = || {
        RigMemory::builder(Arc::new(InMemoryUserMemoryStore::new()), log.clone())
            .files(files.clone())
            .build()
            .user("alice")
            .unwrap()
            .session_store()
    };
    (handle(), handle())
}

#[tokio::test]
async fn the_session_store_keeps_rigs_store_contract_in_memory() {
    let (a, b) = two_handles(
        Arc::new(InMemoryConversationStore::new()),
        Arc::new(InMemoryKvStore::new()),
    );
    rig_memory::conformance::check_store(&a, &b)
        .await
        .unwrap_or_else(|violation| panic!("{violation}"));
}

#[tokio::test]
async fn the_session_store_keeps_rigs_store_contract_on_sqlite() {
    use agentmemory::stores::SqliteStore;

    // Two connections to one database file, as two processes would open it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rig.db");
    let first = Arc::new(SqliteStore::open(&path).await.unwrap());
    let second = Arc::new(SqliteStore::open(&path).await.unwrap());
    let handle = |store: Arc<SqliteStore>| {
        RigMemory::builder(store.clone(), store.clone())
            .files(store)
            .build()
            .user("alice")
            .unwrap()
            .session_store()
    };
    let (a, b) = (handle(first), handle(second));
    rig_memory::conformance::check_store(&a, &b)
        .await
        .unwrap_or_else(|violation| panic!("{violation}"));
}

#[tokio::test]
async fn appends_check_the_length_replaces_start_over_and_files_round_trip() {
    let (a, b) = two_handles(
        Arc::new(InMemoryConversationStore::new()),
        Arc::new(InMemoryKvStore::new()),
    );
    // Compare length, then append.
    a.append_log_async("chat", 0, b"one\n").await.unwrap();
    b.append_log_async("chat", 4, b"two\n").await.unwrap();
    // A writer that read the log before `two` is refused and writes nothing.
    let stale = a.append_log_async("chat", 4, b"lost\n").await;
    assert!(matches!(stale, Err(LogWriteError::Changed)), "{stale:?}");
    assert_eq!(a.read_log_async("chat").await.unwrap(), b"one\ntwo\n");

    // Replace: at the current length only; what follows goes after the new bytes.
    let stale = a.replace_log_async("chat", 4, b"new\n").await;
    assert!(matches!(stale, Err(LogWriteError::Changed)), "{stale:?}");
    a.replace_log_async("chat", 8, b"new\n").await.unwrap();
    // The length the log had before the replace no longer writes.
    let old = b.append_log_async("chat", 8, b"old\n").await;
    assert!(matches!(old, Err(LogWriteError::Changed)), "{old:?}");
    b.append_log_async("chat", 4, b"more\n").await.unwrap();
    assert_eq!(b.read_log_async("chat").await.unwrap(), b"new\nmore\n");

    // Files: binary bytes round trip, a rewrite replaces, a missing one is not found.
    a.write_file_async("blobs/x", &[0, 159, 146, 150])
        .await
        .unwrap();
    assert_eq!(
        b.read_file_async("blobs/x").await.unwrap(),
        [0, 159, 146, 150]
    );
    b.write_file_async("blobs/x", b"short").await.unwrap();
    assert_eq!(a.read_file_async("blobs/x").await.unwrap(), b"short");
    let missing = a.read_file_async("blobs/y").await;
    assert_eq!(missing.unwrap_err().kind(), io::ErrorKind::NotFound);
    let bad = a.write_file_async("../escape", b"x").await;
    assert_eq!(bad.unwrap_err().kind(), io::ErrorKind::InvalidInput);

    // Another user's files are apart.
    let log: Arc<dyn ConversationStore> = Arc::new(InMemoryConversationStore::new());
    let files: Arc<dyn agentmemory::KvStore> = Arc::new(InMemoryKvStore::new());
    let memory = RigMemory::builder(Arc::new(InMemoryUserMemoryStore::new()), log)
        .files(files)
        .build();
    let alice = memory.user("alice").unwrap().session_store();
    let bob = memory.user("bob").unwrap().session_store();
    alice.write_file_async("notes", b"mine").await.unwrap();
    let read = bob.read_file_async("notes").await;
    assert_eq!(read.unwrap_err().kind(), io::ErrorKind::NotFound);

    // Without a file store, file calls say so.
    let bare = RigMemory::builder(
        Arc::new(InMemoryUserMemoryStore::new()),
        Arc::new(InMemoryConversationStore::new()),
    )
    .build()
    .user("alice")
    .unwrap()
    .session_store();
    let unsupported = bare.write_file_async("notes", b"x").await;
    assert_eq!(unsupported.unwrap_err().kind(), io::ErrorKind::Unsupported);
}
