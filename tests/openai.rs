//! A full session against a mock OpenAI-compatible server: the chat reply, the fact
//! extraction (`#[remember(extraction_model = ...)]`) and the summary all come from it.
#![cfg(feature = "openai")]

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use agentmemory::model::openai::{OpenAiChatModel, OpenAiConfig};
use agentmemory::prelude::*;
use agentmemory::summarize::LlmSummarizer;
use agentmemory::SessionConfig;
use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

#[remember(store = "user_memory", extraction_model = "extractor", top_k = 5)]
struct Assistant;

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "chat"
    }
}

const SUMMARY: &str = "Bob lives in Oslo and avoids peanuts.";

/// Plays the three roles by reading the system prompt of each request.
struct FakeOpenAi;

impl Respond for FakeOpenAi {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or_default();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_lowercase();
        let text = if system.contains("extract durable facts") {
            let facts = if last.contains("oslo") {
                json!([{"attribute": "location", "value": "Oslo", "text": "is based in Oslo (llm)", "polarity": "positive", "confidence": 0.81}])
            } else if last.contains("peanut") {
                json!([{"attribute": "allergy", "value": "peanuts", "text": "must avoid peanuts (llm)", "polarity": "negative", "confidence": 0.93}])
            } else {
                json!([])
            };
            format!("```json\n{}\n```", json!({ "facts": facts }))
        } else if system.contains("running summary") {
            SUMMARY.to_owned()
        } else {
            format!("reply #{}", body["messages"].as_array().map_or(0, Vec::len))
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}
        }))
    }
}

#[tokio::test]
async fn chat_extraction_and_summary_all_go_through_the_provider() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-mock"))
        .respond_with(FakeOpenAi)
        .mount(&server)
        .await;
    let model = Arc::new(
        OpenAiChatModel::new(
            OpenAiConfig::new(format!("{}/v1", server.uri()), "mock-4o")
                .with_api_key("sk-mock")
                .with_timeout(Duration::from_secs(5)),
        )
        .unwrap(),
    );
    let store = Arc::new(InMemoryUserMemoryStore::new());
    let container = Container::new();
    container.register_model("chat", model.clone());
    container.register_model("extractor", model.clone());
    container.register_summarizer("summarizer", Arc::new(LlmSummarizer::new(model)));
    container.register_user_memory("user_memory", store.clone());
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));

    let mut session = Session::builder(Assistant, &container)
        .user("bob")
        .config(
            SessionConfig::default()
                .with_max_tokens(240)
                .with_memory_block_tokens(200)
                .with_summary_tokens(60),
        )
        .build()
        .await
        .unwrap();

    let first = session
        .send("Oslo is where home is these days.")
        .await
        .unwrap();
    assert!(first.text().starts_with("reply #"), "{}", first.text());
    assert_eq!(first.report.extraction_error, None);
    assert_eq!(
        first
            .report
            .usage
            .map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((40, 9))
    );
    let second = session
        .send("Peanuts are dangerous for me, keep them away.")
        .await
        .unwrap();
    assert_eq!(second.report.extraction_error, None);
    let mut summarized = second.report.summarized;
    for line in [
        "Anything fun to do this weekend? I would like something outdoors if the weather \
         holds, maybe a long walk by the water, a market or a museum, and a good place to eat.",
        "And what about next week? The evenings are free after work, so a concert, a film, \
         a cooking class or a quiet bar with friends, anything where I can avoid crowds.",
        "And the weekend after that? A day trip by train would be lovely, somewhere with a \
         castle or a lake, a picnic, an old bookshop, and a late dinner somewhere I can avoid crowds.",
        "One more thing: my sister visits in the spring, and she likes galleries, long lunches, \
         flea markets and quiet parks, so ideas for her are welcome too, if we can avoid crowds.",
    ] {
        summarized += session.send(line).await.unwrap().report.summarized;
    }
    assert!(summarized > 0, "the tight budget forced a summary");
    assert_eq!(session.memory().summary(), Some(SUMMARY));

    // The stored facts are the mock's, word for word (the rule extractor would have
    // found none in these sentences).
    let mut facts: Vec<(String, Option<String>, f32)> = store
        .list("bob")
        .await
        .unwrap()
        .into_iter()
        .map(|f| (f.text, f.value, f.confidence))
        .collect();
    facts.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(facts.len(), 2, "{facts:?}");
    assert_eq!(facts[0].0, "is based in Oslo (llm)");
    assert_eq!(facts[0].1.as_deref(), Some("Oslo"));
    assert!((facts[0].2 - 0.81).abs() < 1e-6);
    assert_eq!(facts[1].0, "must avoid peanuts (llm)");
    assert_eq!(facts[1].1.as_deref(), Some("peanuts"));

    // What the chat model saw last: system first, with the memory block and the LLM summary.
    let requests = server.received_requests().await.unwrap();
    let chats: Vec<Value> = requests
        .iter()
        .filter_map(|r| r.body_json::<Value>().ok())
        .filter(|b| {
            let system = b["messages"][0]["content"].as_str().unwrap_or_default();
            system.starts_with("You are a personal assistant.")
        })
        .collect();
    assert_eq!(chats.len(), 6);
    let last = chats.last().unwrap();
    assert_eq!(last["model"], "mock-4o");
    assert_eq!(last["messages"][0]["role"], "system");
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("must avoid peanuts (llm)") || system.contains("is based in Oslo (llm)"),
        "{system}"
    );
    assert!(
        system.contains("<conversation_summary>")
            && system.contains(&format!("{SUMMARY}\n</conversation_summary>")),
        "{system}"
    );
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(roles.first(), Some(&"system"));
    assert_eq!(roles.last(), Some(&"user"));
    // 4 chat calls, 4 extraction calls, at least one summary call.
    assert!(requests.len() >= 9, "{}", requests.len());
}

#[tokio::test]
async fn a_broken_extractor_answer_is_reported_and_stores_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|request: &Request| {
            let body: Value = request.body_json().unwrap_or_default();
            let system = body["messages"][0]["content"].as_str().unwrap_or_default();
            let text = if system.contains("extract durable facts") {
                "{\"facts\": [{\"text\": \"lives in Oslo\", \"polarity\": \"maybe\", \"confidence\": 0.5}]"
            } else {
                "ok"
            };
            ResponseTemplate::new(200).set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": text}}]
            }))
        })
        .mount(&server)
        .await;
    let model = Arc::new(
        OpenAiChatModel::new(OpenAiConfig::new(format!("{}/v1", server.uri()), "m")).unwrap(),
    );
    let store = Arc::new(InMemoryUserMemoryStore::new());
    let container = Container::new();
    container.register_model("chat", model.clone());
    container.register_model("extractor", model);
    container.register_user_memory("user_memory", store.clone());
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    let mut session = Session::builder(Assistant, &container)
        .user("bob")
        .build()
        .await
        .unwrap();
    let reply = session.send("I live in Oslo.").await.unwrap();
    assert_eq!(reply.text(), "ok");
    let error = reply.report.extraction_error.unwrap();
    assert!(error.starts_with("fact extraction failed:"), "{error}");
    assert!(store.list("bob").await.unwrap().is_empty());
}

/// The command line uses the configured server when `OPENAI_BASE_URL` is set (the binary
/// is built only with the `cli` feature).
#[cfg(feature = "cli")]
#[tokio::test]
async fn the_cli_extracts_through_the_configured_server() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-cli"))
        .respond_with(FakeOpenAi)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let output = tokio::task::spawn_blocking({
        let base = format!("{}/v1", server.uri());
        let store = format!("sqlite://{}", dir.path().join("cli.db").display());
        move || {
            use std::io::Write;
            let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agentmem"))
                .args(["--store", &store, "extract"])
                .env("OPENAI_BASE_URL", base)
                .env("OPENAI_API_KEY", "sk-cli")
                .env("AGENTMEM_MODEL", "mock-4o")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"I moved to Oslo\n")
                .unwrap();
            child.wait_with_output().unwrap()
        }
    })
    .await
    .unwrap();
    assert!(output.status.success());
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["facts"][0]["text"], "is based in Oslo (llm)", "{line}");
    assert!(!server.received_requests().await.unwrap().is_empty());
}
