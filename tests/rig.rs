//! The rig adapter driven end to end: a rig agent on rig's OpenAI chat-completions wire,
//! against a mock OpenAI-compatible server, with agentmem as its memory.

use std::sync::Arc;

use agentmemory::rig::{ExtractWhen, MemoryUser, RigMemory};
use agentmemory::{
    ConversationStore, InMemoryConversationStore, InMemoryUserMemoryStore, UserMemoryStore,
};
use rig_agent::{Agent, AgentBuilder};
use rig_core::providers::openai::OpenAIConfig;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PREAMBLE: &str = "You are a concise travel assistant.";

fn reply(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

fn tool_call(name: &str, arguments: Value) -> Value {
    json!({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}
        ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

struct Rig {
    server: MockServer,
    facts: Arc<InMemoryUserMemoryStore>,
    log: Arc<InMemoryConversationStore>,
    memory: RigMemory,
    agent: Agent,
}

async fn rig(
    configure: impl FnOnce(agentmemory::rig::RigMemoryBuilder) -> agentmemory::rig::RigMemoryBuilder,
) -> Rig {
    let server = MockServer::start().await;
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let log = Arc::new(InMemoryConversationStore::new());
    let memory = configure(RigMemory::builder(facts.clone(), log.clone())).build();
    let model = OpenAIConfig::new("test-key")
        .with_base_url(server.uri())
        .client()
        .chat("mock");
    let (remember, recall, forget) = memory.tools();
    let agent = AgentBuilder::new(model)
        .preamble(PREAMBLE)
        .memory(memory.conversation_memory())
        .tool(remember)
        .tool(recall)
        .tool(forget)
        .build();
    Rig {
        server,
        facts,
        log,
        memory,
        agent,
    }
}

async fn mount_reply(server: &MockServer, text: &str) {
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply(text)))
        .with_priority(5)
        .mount(server)
        .await;
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// The system message of a chat-completions request body.
fn system_of(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            // Content parts: [{"type": "text", "text": ...}, ...]
            parts => parts
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn facts_from_one_turn_reach_the_preamble_of_the_next() {
    let rig = rig(|b| b).await;
    mount_reply(&rig.server, "Noted!").await;
    let alice = rig.memory.user("alice").unwrap();

    let (run, hook) = alice
        .prepare(&rig.agent, "alice-1", "Hi, I'm Alice and I love museums")
        .await
        .unwrap();
    let out = run.run().await.unwrap();
    assert_eq!(out.output(), "Noted!");
    let report = hook.report();
    assert!(report.errors.is_empty(), "{:?}", report.errors);

    // New facts are stored after the turn.
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
    let sent = bodies(&rig.server).await;
    assert_eq!(sent.len(), 2);
    let system = system_of(&sent[1]);
    assert!(system.starts_with(PREAMBLE), "{system}");
    assert!(system.contains("<user_memory>"), "{system}");
    assert!(system.to_lowercase().contains("museum"), "{system}");
    assert!(!hook.report().injected.is_empty());
    // The first conversation's messages are not in the second one's history.
    assert!(!sent[1].to_string().contains("I'm Alice"));
}

#[tokio::test]
async fn the_window_carries_the_conversation_and_the_log_keeps_it() {
    let rig = rig(|b| b).await;
    mount_reply(&rig.server, "Lyon is lovely.").await;
    let alice = rig.memory.user("alice").unwrap();
    alice
        .prompt(&rig.agent, "thread", "I am planning a trip to Lyon")
        .await
        .unwrap()
        .run()
        .await
        .unwrap();
    alice
        .prompt(&rig.agent, "thread", "What should I pack?")
        .await
        .unwrap()
        .run()
        .await
        .unwrap();
    let sent = bodies(&rig.server).await;
    let second = sent[1]["messages"].to_string();
    assert!(second.contains("I am planning a trip to Lyon"), "{second}");
    assert!(second.contains("Lyon is lovely."), "{second}");

    // Both turns are in agentmem's log, owned by alice.
    let events = rig.log.load("thread").await.unwrap();
    let messages = events
        .iter()
        .filter(|e| matches!(e.event, agentmemory::ConversationEvent::Message { .. }))
        .count();
    assert_eq!(messages, 4);

    // Another user cannot open alice's conversation.
    let bob = rig.memory.user("bob").unwrap();
    assert!(bob.conversation("thread").await.is_err());
    assert!(rig.memory.user("  ").is_err());
}

#[tokio::test]
async fn a_remember_tool_call_stores_the_fact() {
    let rig = rig(|b| b).await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(tool_call(
            "remember",
            json!({"fact": "is allergic to peanuts"}),
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&rig.server)
        .await;
    mount_reply(&rig.server, "I'll remember that.").await;

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
    // The tools were advertised, and the tool result went back to the model.
    let sent = bodies(&rig.server).await;
    let tools = sent[0]["tools"].to_string();
    for name in ["remember", "recall", "forget"] {
        assert!(tools.contains(name), "{tools}");
    }
    assert!(
        sent[1]["messages"].to_string().contains("added"),
        "{}",
        sent[1]
    );
    // The change is in the conversation's log.
    let events = rig.log.load("tools").await.unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e.event, agentmemory::ConversationEvent::FactsChanged { .. })));
}

#[tokio::test]
async fn recall_and_forget_act_on_the_bound_user_only() {
    use rig_core::tool::{Tool, ToolContext};

    let rig = rig(|b| b).await;
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
async fn demoted_turns_are_summarised_and_their_facts_extracted() {
    let rig = rig(|b| {
        b.max_tokens(120)
            .summary_tokens(30)
            .extract_when(ExtractWhen::Demoted)
    })
    .await;
    mount_reply(&rig.server, "Good to know, tell me more about your plans.").await;
    let alice = rig.memory.user("alice").unwrap();
    alice
        .prompt(&rig.agent, "long", "I live in Lyon and I work as a nurse")
        .await
        .unwrap()
        .run()
        .await
        .unwrap();
    // Extraction waits for the turn to leave the window.
    assert!(rig.facts.list("alice").await.unwrap().is_empty());

    let filler = [
        "The weather has been strange this spring, warm one day and cold the next one.",
        "We might visit the old town and walk along the river in the evening light.",
        "Trains are usually on time here, but the weekend schedule is much thinner.",
        "There is a small market near the station that sells very good cheese.",
    ];
    for text in filler {
        alice
            .prompt(&rig.agent, "long", text)
            .await
            .unwrap()
            .run()
            .await
            .unwrap();
    }
    let stored = rig.facts.list("alice").await.unwrap();
    assert!(
        stored
            .iter()
            .any(|f| f.text.to_lowercase().contains("lyon")),
        "{stored:?}"
    );
    // The evicted turns live on as a summary at the head of the history.
    let events = rig.log.load("long").await.unwrap();
    assert!(events.iter().any(|e| matches!(
        e.event,
        agentmemory::ConversationEvent::SummaryUpdated { .. }
    )));
    let last = bodies(&rig.server).await.pop().unwrap();
    assert!(
        system_of(&last).contains("<conversation_summary>"),
        "{last}"
    );
    assert!(!last["messages"].to_string().contains("I work as a nurse\""));
}

/// Every system message of a chat-completions request body, one string each.
fn system_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .map(|m| system_of(&json!({"messages": [m]})))
        .collect()
}

#[tokio::test]
async fn hostile_facts_and_summaries_stay_data_in_every_system_message() {
    use agentmemory::FactCandidate;
    use agentmemory_core::render::hostile::{assert_contained, CORPUS};

    let tags = [
        "<user_memory>",
        "</user_memory>",
        "<conversation_summary>",
        "</conversation_summary>",
    ];
    // The hook: each hostile text a fact of its own user, recalled by a message that
    // names it.
    let rig = rig(|b| b).await;
    mount_reply(&rig.server, "Noted.").await;
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
    let sent = bodies(&rig.server).await;
    assert_eq!(sent.len(), CORPUS.len());
    for body in &sent {
        for system in system_messages(body) {
            assert_contained(&system, &tags, &[]);
        }
    }

    // The running summary: hostile turns leave the window and are folded into it.
    let rig = rig_with_small_window().await;
    mount_reply(&rig.server, "Noted.").await;
    let alice = rig.memory.user("alice").unwrap();
    for &text in CORPUS {
        alice
            .prompt(&rig.agent, "long", text)
            .await
            .unwrap()
            .run()
            .await
            .unwrap();
    }
    let sent = bodies(&rig.server).await;
    let mut summaries = 0;
    for body in &sent {
        for system in system_messages(body) {
            summaries += usize::from(system.contains("<conversation_summary>"));
            assert_contained(&system, &tags, &[]);
        }
    }
    assert!(summaries > 0, "no request carried a summary");
}

async fn rig_with_small_window() -> Rig {
    rig(|b| b.max_tokens(150).summary_tokens(60)).await
}
