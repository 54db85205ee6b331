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
async fn earlier_messages_reach_the_preamble_with_an_episode_store() {
    let model = MockCompletionModel::from_turns([
        MockTurn::text("Lovely, enjoy it."),
        MockTurn::text("The one with the blue door."),
    ]);
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let episodes = Arc::new(agentmemory::episodes::InMemoryEpisodeStore::new());
    let memory = RigMemory::builder(facts, Arc::new(InMemoryConversationStore::new()))
        .episodes(episodes.clone())
        .build();
    let agent = AgentBuilder::new(model.clone()).preamble(PREAMBLE).build();
    let dana = memory.user("dana").unwrap();

    // Nothing a rule reads as a fact: only the message itself can bring it back.
    let (run, _) = dana
        .prepare(
            &agent,
            "dana-1",
            "We booked the little guesthouse with the blue door in Porto for October",
        )
        .await
        .unwrap();
    run.run().await.unwrap();
    assert_eq!(
        agentmemory::episodes::EpisodeStore::len(episodes.as_ref(), "dana")
            .await
            .unwrap(),
        2
    );

    let (run, hook) = dana
        .prepare(&agent, "dana-2", "Which guesthouse in Porto did we book?")
        .await
        .unwrap();
    run.run().await.unwrap();
    let sent = model.requests();
    let system = sent[1].system_instructions().unwrap_or_default();
    assert!(system.contains("blue door"), "{system}");
    let report = hook.report();
    assert!(!report.episodes.is_empty(), "{report:?}");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
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

// ---- compaction with agentmem's summariser ------------------------------------------

/// What each user message of the long conversation states, one fact a turn.
const FACTS: [&str; 10] = [
    "My sister Ingrid lives in Tromsø and I visit her every July.",
    "Our budget for the whole trip is 2400 euros.",
    "I am allergic to shellfish, so no seafood restaurants please.",
    "We land in Bergen on 14 March at 07:40 on flight SK4021.",
    "My partner Tomas prefers trains over buses.",
    "The hotel booking reference is QX-88213.",
    "I decided to skip the fjord cruise this time.",
    "Our daughter Mia turns 9 on 2 April during the trip.",
    "I need a pharmacy near the hotel for my insulin.",
    "We want to be back in Oslo by 20 March for a wedding.",
];

/// Assistant small talk: long, and nothing worth keeping.
const SMALL_TALK: &str = "Thanks for telling me! That sounds lovely. Great, I'm happy to help. \
                          Thank you so much, sounds good.";

/// A conversation of `FACTS.len()` turns: a fact from the user, small talk back.
fn long_chat(facts: &[&str]) -> Vec<rig_core::message::Message> {
    facts
        .iter()
        .flat_map(|fact| {
            [
                rig_core::message::Message::user(*fact),
                rig_core::message::Message::assistant(SMALL_TALK),
            ]
        })
        .collect()
}

/// A model whose input limit does not bind the policy's `keep_recent`.
fn spec() -> rig_core::catalog::ModelSpec {
    let vendor = rig_core::providers::registry::ProviderId::catalog("openai").unwrap();
    rig_core::catalog::ModelSpec::new(vendor, "gpt-4o-mini").with_context_window(128_000)
}

/// A policy keeping only about the newest `keep` tokens as they are.
fn keep_recent(keep: usize) -> rig_memory::CompactionPolicy {
    rig_memory::CompactionPolicy {
        keep_recent: keep,
        ..rig_memory::CompactionPolicy::default()
    }
}

fn texts(conversation: &rig_core::conversation::Conversation) -> Vec<String> {
    conversation
        .messages()
        .iter()
        .map(|m| serde_json::to_string(&**m).unwrap())
        .collect()
}

#[tokio::test]
async fn rigs_compaction_summarises_with_agentmems_summariser_and_undoes() {
    use agentmemory::rig::undo_compaction;
    use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
    use rig_core::conversation::Author;
    use rig_memory::{load_async, save_async, summary_state, CompactReason};

    let log = Arc::new(InMemoryConversationStore::new());
    let memory = RigMemory::builder(Arc::new(InMemoryUserMemoryStore::new()), log.clone())
        .files(Arc::new(InMemoryKvStore::new()))
        .summary_tokens(120)
        .build();
    let store = memory.user("alice").unwrap().session_store();
    let compactor = memory.compactor(keep_recent(60));
    assert_eq!(compactor.budget(&spec()), 120);

    // A long conversation, saved in agentmem's log through rig's session store.
    let mut chat = load_async(&store, "trip").await.unwrap();
    chat.extend(long_chat(&FACTS[..8]));
    save_async(&store, "trip", &mut chat).await.unwrap();
    let original = texts(&chat);

    // First compaction: rig's policy cuts, agentmem's summariser writes the summary.
    let first = compactor
        .compact(&mut chat, &CompactReason::Threshold, &spec())
        .expect("a long conversation is compacted");
    let summary = summary_state(&chat).summary;
    assert_eq!(first.state.summary, summary);
    assert!(first.summarized >= 10, "{first:?}");
    // The replaced messages were far longer than the budget, and the summary keeps to it.
    let counter = HeuristicCounter::default();
    let replaced: usize = original[..first.summarized]
        .iter()
        .map(|m| counter.count_text(m))
        .sum();
    assert!(
        replaced > 3 * first.budget,
        "{replaced} vs {}",
        first.budget
    );
    assert_eq!(first.tokens, counter.count_text(&summary));
    assert!(first.tokens <= 120, "{} tokens: {summary}", first.tokens);
    // It holds facts of the replaced messages, word for word, as agentmem renders them,
    // and the small talk said after each of them once at most.
    assert!(
        summary.contains("User: My sister Ingrid lives in Tromsø"),
        "{summary}"
    );
    assert!(
        summary.contains("User: Our budget for the whole trip is 2400 euros."),
        "{summary}"
    );
    assert!(
        summary.contains("14 March at 07:40 on flight SK4021"),
        "{summary}"
    );
    assert!(summary.contains("QX-88213"), "{summary}");
    assert!(
        summary.matches("That sounds lovely").count() <= 1,
        "{summary}"
    );
    // The newest messages stay as they are and are not in the summary.
    assert_eq!(chat.messages().len(), 1 + 16 - first.summarized);
    assert_eq!(texts(&chat)[1..], original[first.summarized..]);
    for kept in &FACTS[first.summarized.div_ceil(2)..8] {
        assert!(
            !summary.contains(kept),
            "{kept} is kept, not summarised: {summary}"
        );
    }
    assert!(
        texts(&chat)[0].contains("<summary>"),
        "{:?}",
        texts(&chat)[0]
    );
    save_async(&store, "trip", &mut chat).await.unwrap();
    let after_first = texts(&chat);

    // More turns, then a second compaction, which builds on the first summary.
    chat.extend(long_chat(&FACTS[8..]));
    save_async(&store, "trip", &mut chat).await.unwrap();
    let before_second = texts(&chat);
    let second = compactor
        .compact(
            &mut chat,
            &CompactReason::Asked {
                focus: String::new(),
            },
            &spec(),
        )
        .expect("compacted again");
    let summary2 = summary_state(&chat).summary;
    assert!(second.tokens <= 120, "{summary2}");
    // From the first summary...
    assert!(summary2.contains("Ingrid"), "{summary2}");
    // ...and from messages only the second compaction replaced.
    assert!(summary2.contains("back in Oslo by 20 March"), "{summary2}");
    assert_ne!(summary2, summary);
    assert_eq!(chat.messages().len(), 2, "{:?}", texts(&chat));
    save_async(&store, "trip", &mut chat).await.unwrap();

    // rig's undo, over agentmem's store: newest compaction first, each with its summary.
    let mut reloaded = load_async(&store, "trip").await.unwrap();
    assert_eq!(texts(&reloaded), texts(&chat));
    let undone = undo_compaction(&mut reloaded, &store, "trip", Author::user())
        .await
        .unwrap();
    assert_eq!(undone.state.summary, summary);
    assert_eq!(texts(&reloaded), before_second);
    save_async(&store, "trip", &mut reloaded).await.unwrap();
    let undone = undo_compaction(&mut reloaded, &store, "trip", Author::user())
        .await
        .unwrap();
    assert_eq!(undone.state.summary, "");
    let mut expected = original.clone();
    expected.extend(before_second[after_first.len()..].iter().cloned());
    assert_eq!(texts(&reloaded), expected);
    save_async(&store, "trip", &mut reloaded).await.unwrap();
    assert_eq!(
        texts(&load_async(&store, "trip").await.unwrap()),
        expected,
        "the undone conversation is what the log holds"
    );
    assert!(matches!(
        undo_compaction(&mut reloaded, &store, "trip", Author::user()).await,
        Err(rig_memory::UndoError::Nothing)
    ));
}

#[test]
fn the_summary_budget_is_a_sessions_and_rigs_own_undo_takes_it_back() {
    use agentmemory::rig::SummaryCompactor;
    use rig_core::conversation::Author;
    use rig_memory::{load, save, summary_state, undo_summary, CompactReason, MemoryStore};

    // The default budget is a session's summary budget.
    let session = agentmemory_core::session::SessionConfig::default();
    let compactor = SummaryCompactor::new(keep_recent(60));
    assert_eq!(compactor.budget(&spec()), session.summary_tokens);
    let memory = RigMemory::builder(
        Arc::new(InMemoryUserMemoryStore::new()),
        Arc::new(InMemoryConversationStore::new()),
    )
    .build();
    assert_eq!(memory.config().summary_tokens, session.summary_tokens);
    // Never more than a quarter of a small model's input limit.
    let small = spec().with_context_window(200);
    assert_eq!(compactor.budget(&small), 50);

    // A tight budget: the summary keeps to it, choosing among the facts.
    let tight = SummaryCompactor::new(keep_recent(60)).summary_tokens(30);
    let store = MemoryStore::default();
    let mut chat = load(&store, "trip").unwrap();
    chat.extend(long_chat(&FACTS));
    save(&store, "trip", &mut chat).unwrap();
    let original = texts(&chat);
    let done = tight
        .compact(&mut chat, &CompactReason::Threshold, &spec())
        .unwrap();
    let summary = summary_state(&chat).summary;
    assert!(done.tokens <= 30 && !summary.is_empty(), "{summary}");
    assert!(summary.starts_with("User: "), "{summary}");
    assert!(
        FACTS.iter().filter(|f| summary.contains(**f)).count() < FACTS.len() - 2,
        "{summary}"
    );
    save(&store, "trip", &mut chat).unwrap();

    // rig's own undo on rig's own store.
    let mut reloaded = load(&store, "trip").unwrap();
    undo_summary(&mut reloaded, &store, "trip", Author::user()).unwrap();
    assert_eq!(texts(&reloaded), original);

    // Nothing new to summarise: nothing changes.
    let mut short = rig_core::conversation::Conversation::new();
    short.extend(long_chat(&FACTS[..1]));
    assert!(tight
        .compact(&mut short, &CompactReason::Threshold, &spec())
        .is_none());
    assert_eq!(short.messages().len(), 2);
}
