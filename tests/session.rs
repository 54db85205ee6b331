//! End-to-end: facts said in one conversation reach the model in the next.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::model::RecordingModel;
use agentmemory::prelude::*;

/// Implements `Agent` for a test agent talking to the recording model.
macro_rules! agent {
    ($name:ident, $prompt:literal) => {
        impl Agent for $name {
            fn system_prompt(&self) -> Cow<'_, str> {
                $prompt.into()
            }
            fn model(&self) -> &str {
                "recorder"
            }
        }
    };
}

#[remember(store = "user_memory", top_k = 5)]
struct Assistant;
agent!(Assistant, "You are a personal assistant.");

#[remember(store = "user_memory", inject = false)]
struct NoInject;
agent!(NoInject, "No injection.");

#[remember(store = "user_memory", extract = false)]
struct NoExtract;
agent!(NoExtract, "No extraction.");

#[remember(top_k = 2)]
struct TopTwo;
agent!(TopTwo, "Two facts at most.");

/// No long-term memory at all.
struct Plain;
impl Remember for Plain {}
agent!(Plain, "Plain.");

fn setup() -> (Container, RecordingModel, Arc<InMemoryUserMemoryStore>) {
    let container = Container::new();
    let store = Arc::new(InMemoryUserMemoryStore::new());
    let model = RecordingModel::new();
    container.register_user_memory("user_memory", store.clone());
    container.register_model("recorder", Arc::new(model.clone()));
    (container, model, store)
}

#[tokio::test]
async fn facts_from_one_conversation_reach_the_next() {
    let (container, model, store) = setup();

    let mut first = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    let reply = first
        .send("Hi, I'm Alice and I love museums")
        .await
        .unwrap();
    let kinds: Vec<_> = reply.report.fact_changes.iter().map(|c| c.kind()).collect();
    assert!(
        kinds.iter().filter(|k| **k == "added").count() >= 2,
        "{kinds:?}"
    );

    let mut second = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    assert_ne!(first.conversation_id(), second.conversation_id());
    let reply = second.send("Any plans for this weekend?").await.unwrap();

    let request = model.last_request().unwrap();
    let start = request
        .system
        .find("<user_memory>")
        .expect("memory block in the prompt");
    let end = request
        .system
        .find("</user_memory>")
        .expect("memory block closed");
    let block = &request.system[start..end];
    assert!(block.contains("museums"), "{block}");
    assert!(request.system.starts_with("You are a personal assistant."));
    assert!(reply
        .report
        .injected
        .iter()
        .any(|f| f.fact.text.contains("museums")));
    // The second session holds only its own conversation.
    assert_eq!(request.messages.len(), 1);
    assert_eq!(store.list("alice").await.unwrap().len(), 2);
}

#[tokio::test]
async fn another_user_never_receives_alices_facts() {
    let (container, model, _) = setup();
    let mut alice = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    alice
        .send("Hi, I'm Alice and I love museums")
        .await
        .unwrap();

    let mut bob = Session::builder(Assistant, &container)
        .user("bob")
        .build()
        .await
        .unwrap();
    let reply = bob.send("What do I love?").await.unwrap();
    assert!(reply.report.injected.is_empty());
    assert!(!model.last_request().unwrap().system.contains("museums"));
}

#[tokio::test]
async fn inject_false_keeps_facts_out_of_the_prompt() {
    let (container, model, store) = setup();
    let mut s = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    s.send("I love museums").await.unwrap();

    let mut s = Session::builder(NoInject, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    let reply = s.send("Any plans for this weekend?").await.unwrap();
    assert!(reply.report.injected.is_empty() && reply.report.memory_block.is_none());
    assert!(!model.last_request().unwrap().system.contains("museums"));
    // extraction still runs
    s.send("I live in Oslo").await.unwrap();
    assert!(store
        .list("alice")
        .await
        .unwrap()
        .iter()
        .any(|f| f.text.contains("Oslo")));
}

#[tokio::test]
async fn extract_false_stores_nothing() {
    let (container, _, store) = setup();
    let mut s = Session::builder(NoExtract, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    let reply = s.send("Hi, I'm Alice and I love museums").await.unwrap();
    assert!(reply.report.fact_changes.is_empty());
    assert!(store.list("alice").await.unwrap().is_empty());
}

#[tokio::test]
async fn top_k_bounds_what_is_injected() {
    let (container, model, _) = setup();
    let mut s = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    for text in [
        "I love museums",
        "I live in Oslo",
        "I work at Acme",
        "I speak Norwegian",
        "I have a dog named Rex",
    ] {
        s.send(text).await.unwrap();
    }
    let mut s = Session::builder(TopTwo, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    let reply = s.send("Tell me about museums in Oslo").await.unwrap();
    assert_eq!(reply.report.injected.len(), 2);
    let system = model.last_request().unwrap().system;
    assert_eq!(system.matches("\n- ").count(), 2, "{system}");
}

#[tokio::test]
async fn agents_without_remember_work_without_long_term_memory() {
    let (container, model, store) = setup();
    let mut s = Session::builder(Plain, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    let reply = s.send("I love museums").await.unwrap();
    assert!(reply.report.fact_changes.is_empty() && reply.report.injected.is_empty());
    assert!(s.remember_spec().is_none());
    assert!(store.list("alice").await.unwrap().is_empty());
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn swapping_the_store_is_one_line() {
    // The same agent type, two containers registering different stores under the token.
    let run = |store: Arc<InMemoryUserMemoryStore>| async move {
        let container = Container::new();
        container.register_user_memory("user_memory", store.clone());
        container.register_model("recorder", Arc::new(RecordingModel::new()));
        let mut s = Session::builder(Assistant, &container)
            .user("alice")
            .build()
            .await
            .unwrap();
        s.send("I love museums").await.unwrap();
        store.list("alice").await.unwrap().len()
    };
    let a = Arc::new(InMemoryUserMemoryStore::new());
    let b = Arc::new(InMemoryUserMemoryStore::new());
    assert_eq!(run(a.clone()).await, 1);
    assert_eq!(run(b.clone()).await, 1);
    assert_eq!(a.list("alice").await.unwrap().len(), 1);
    assert_eq!(b.list("alice").await.unwrap().len(), 1);
}

#[tokio::test]
async fn missing_tokens_fail_at_build_time() {
    let container = Container::new();
    container.register_model("recorder", Arc::new(RecordingModel::new()));
    let err = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`user_memory`"), "{err}");
    assert!(err.to_string().contains("UserMemoryStore"), "{err}");

    let (container, _, _) = setup();
    container.register_user_memory("other", Arc::new(InMemoryUserMemoryStore::new()));
    // TopTwo names no store: two candidates and no default is an error listing both.
    let err = Session::builder(TopTwo, &container)
        .user("alice")
        .build()
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("other") && err.to_string().contains("user_memory"),
        "{err}"
    );

    let empty = Container::new();
    let err = Session::builder(Plain, &empty)
        .user("alice")
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`recorder`"), "{err}");
    let err = Session::builder(Plain, &container)
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("user id"), "{err}");
}

#[tokio::test]
async fn long_conversations_are_summarised_not_lost() {
    let (container, model, _) = setup();
    let mut s = Session::builder(Plain, &container)
        .user("alice")
        .max_tokens(300)
        .build()
        .await
        .unwrap();
    let mut summarized = 0;
    s.send("My flight number is LH 1234 on 12 March.")
        .await
        .unwrap();
    for i in 0..30 {
        let reply = s
            .send(format!(
                "Filler message number {i} about nothing in particular."
            ))
            .await
            .unwrap();
        summarized += reply.report.summarized;
        let request = model.last_request().unwrap();
        let tokens: usize = request
            .messages
            .iter()
            .map(|m| s.memory().counter().count_message(m))
            .sum();
        assert!(tokens <= 300, "window of {tokens} tokens over budget");
    }
    assert!(summarized > 0);
    let summary = s.memory().summary().unwrap();
    assert!(
        summary.contains("1234"),
        "the key fact survives summarisation: {summary}"
    );
    assert!(model
        .last_request()
        .unwrap()
        .system
        .contains("<conversation_summary>"));
}

#[tokio::test]
async fn a_conversation_resumes_from_its_log() {
    let (container, _, _) = setup();
    let log = Arc::new(InMemoryConversationStore::new());
    container.register_conversations("conversations", log.clone());
    let mut s = Session::builder(Plain, &container)
        .user("alice")
        .conversation("c-1")
        .max_tokens(200)
        .build()
        .await
        .unwrap();
    for i in 0..20 {
        s.send(format!("message {i} with some words to take up tokens"))
            .await
            .unwrap();
    }
    let before = s.memory().snapshot();
    assert!(before.summary.is_some());

    let resumed = Session::builder(Plain, &container)
        .user("alice")
        .conversation("c-1")
        .max_tokens(200)
        .build()
        .await
        .unwrap();
    assert_eq!(resumed.memory().snapshot(), before);

    // Compaction keeps the state and the owner.
    let mut s = resumed;
    assert!(s.compact().await.unwrap() > 0);
    let again = Session::builder(Plain, &container)
        .user("alice")
        .conversation("c-1")
        .max_tokens(200)
        .build()
        .await
        .unwrap();
    assert_eq!(again.memory().snapshot(), before);

    let err = Session::builder(Plain, &container)
        .user("mallory")
        .conversation("c-1")
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("another user"), "{err}");
}

#[tokio::test]
async fn summarisation_leaves_headroom_instead_of_running_every_turn() {
    let (container, _, _) = setup();
    let mut s = Session::builder(Plain, &container)
        .user("alice")
        .max_tokens(2_000)
        .build()
        .await
        .unwrap();
    let mut runs = 0;
    for i in 0..300 {
        let reply = s
            .send(format!(
                "Turn {i}: a message of a dozen words or so, to fill the window."
            ))
            .await
            .unwrap();
        if reply.report.did_summarize() {
            runs += 1;
        }
        assert!(s.memory().window_tokens() <= 2_000);
    }
    // Each turn adds ~50 tokens; summarising down to 75% frees ~500 tokens, so it
    // runs about once every ten turns, never on every turn.
    assert!(runs > 0 && runs <= 40, "summarised on {runs} of 300 turns");
}
