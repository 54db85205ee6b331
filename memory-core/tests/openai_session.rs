//! LLM extraction, summarisation and token counting inside a `Session`, with the chat
//! model served by a mock OpenAI-compatible server.
#![cfg(feature = "openai")]

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use agentmemory_core::extract::LlmExtractor;
use agentmemory_core::model::openai::{OpenAiChatModel, OpenAiConfig};
use agentmemory_core::session::Agent;
use agentmemory_core::{
    Container, FactExtractor, InMemoryUserMemoryStore, MemoryError, Message, Remember,
    RememberSpec, Session, Turn, UserMemoryStore,
};
use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers extraction requests (recognised by their system prompt) with `extraction`,
/// and every other chat request with a plain reply.
struct Router {
    extraction: &'static str,
}

impl Respond for Router {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or_default();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let text = if system.contains("extract durable facts") {
            self.extraction
        } else {
            "Noted."
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}
        }))
    }
}

struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> = Some(RememberSpec::new().extraction_model("extractor"));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are helpful.".into()
    }
    fn model(&self) -> &str {
        "chat"
    }
}

async fn setup(extraction: &'static str) -> (MockServer, Container, Arc<InMemoryUserMemoryStore>) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Router { extraction })
        .mount(&server)
        .await;
    let model = Arc::new(
        OpenAiChatModel::new(
            OpenAiConfig::new(format!("{}/v1", server.uri()), "mock-model")
                .with_timeout(Duration::from_secs(5)),
        )
        .unwrap(),
    );
    let store = Arc::new(InMemoryUserMemoryStore::new());
    let container = Container::new();
    container.register_model("chat", model.clone());
    container.register_model("extractor", model);
    container.register_user_memory("user_memory", store.clone());
    (server, container, store)
}

#[tokio::test]
async fn malformed_model_json_is_an_extraction_error() {
    let (_server, container, _) = setup("Sure! You live in Oslo.").await;
    let model = container
        .resolve::<dyn agentmemory_core::ChatModel>(Some("extractor"))
        .unwrap();
    let user = Message::user("I live in Oslo.");
    let err = LlmExtractor::new(model)
        .extract(Turn::user(&user))
        .await
        .unwrap_err();
    assert!(matches!(err, MemoryError::Extraction(_)), "{err}");
    assert!(err.to_string().contains("not valid JSON"), "{err}");
}

#[tokio::test]
async fn a_malformed_extraction_stores_nothing_and_the_turn_completes() {
    let (server, container, store) =
        setup(r#"{"facts": [{"text": "lives in Oslo", "confidence": 7}]}"#).await;
    let mut session = Session::builder(Assistant, &container)
        .user("u1")
        .ephemeral()
        .build()
        .await
        .unwrap();
    let reply = session.send("I live in Oslo.").await.unwrap();
    assert_eq!(reply.text(), "Noted.");
    let error = reply
        .report
        .extraction_error
        .expect("extraction error reported");
    assert!(error.contains("confidence 7 is outside 0..=1"), "{error}");
    assert!(reply.report.fact_changes.is_empty());
    assert!(store.list("u1").await.unwrap().is_empty());
    // One chat call and one extraction call went to the server.
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn extraction_model_uses_the_llm_and_a_registered_extractor_wins() {
    let (server, container, store) = setup(
        r#"```json
{"facts": [{"attribute": "location", "value": "Oslo", "text": "lives in Oslo", "polarity": "positive", "confidence": 0.9}]}
```"#,
    )
    .await;
    let mut session = Session::builder(Assistant, &container)
        .user("u1")
        .ephemeral()
        .build()
        .await
        .unwrap();
    let reply = session.send("Oslo is home.").await.unwrap();
    assert_eq!(reply.report.extraction_error, None);
    let facts = store.list("u1").await.unwrap();
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].text, "lives in Oslo");
    assert_eq!(facts[0].value.as_deref(), Some("Oslo"));
    // The rule extractor would have found nothing in "Oslo is home.": the LLM did it.
    let requests = server.received_requests().await.unwrap();
    let extraction: Value = requests[1].body_json().unwrap();
    assert_eq!(extraction["temperature"], 0.0);
    assert!(extraction["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("Oslo is home."));

    // A FactExtractor registered under the same token takes precedence over the LLM.
    container.register_extractor(
        "extractor",
        Arc::new(agentmemory_core::RuleExtractor::new()),
    );
    let mut session = Session::builder(Assistant, &container)
        .user("u2")
        .ephemeral()
        .build()
        .await
        .unwrap();
    session.send("I live in Berlin.").await.unwrap();
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "no extraction call"
    );
    let facts = store.list("u2").await.unwrap();
    assert_eq!(facts[0].value.as_deref(), Some("Berlin"));
}

#[tokio::test]
async fn a_missing_extraction_model_fails_the_build() {
    let container = Container::new();
    container.register_model(
        "chat",
        Arc::new(agentmemory_core::model::OfflineModel::new()),
    );
    container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
    let err = Session::builder(Assistant, &container)
        .user("u1")
        .ephemeral()
        .build()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, MemoryError::UnknownToken { token, .. } if token == "extractor"),
        "{err}"
    );
}

#[cfg(feature = "tiktoken")]
mod tiktoken {
    use super::*;
    use agentmemory_core::{BpeCounter, Remember, TokenCounter};

    struct Gpt4o;
    impl Remember for Gpt4o {}
    impl Agent for Gpt4o {
        fn system_prompt(&self) -> Cow<'_, str> {
            "Be brief.".into()
        }
        fn model(&self) -> &str {
            "gpt-4o-mini"
        }
    }

    struct Gpt4;
    impl Remember for Gpt4 {}
    impl Agent for Gpt4 {
        fn system_prompt(&self) -> Cow<'_, str> {
            "Be brief.".into()
        }
        fn model(&self) -> &str {
            "gpt-4"
        }
    }

    #[tokio::test]
    async fn the_session_counts_with_the_models_bpe_vocabulary() {
        let container = Container::new();
        container.register_model(
            "gpt-4o-mini",
            Arc::new(agentmemory_core::model::OfflineModel::new()),
        );
        container.register_model(
            "gpt-4",
            Arc::new(agentmemory_core::model::OfflineModel::new()),
        );
        let text = "Tokenization differs: 東京 is two characters, antidisestablishmentarianism is one word.";

        let mut session = Session::builder(Gpt4o, &container)
            .ephemeral()
            .user("u")
            .build()
            .await
            .unwrap();
        assert!(format!("{:?}", session.memory().counter()).contains("O200k"));
        session.send(text).await.unwrap();
        let o200k = BpeCounter::o200k().unwrap();
        let expected: usize = session
            .memory()
            .messages()
            .iter()
            .map(|m| o200k.count_message(m))
            .sum();
        assert_eq!(session.memory().window_tokens(), expected);

        let mut session = Session::builder(Gpt4, &container)
            .ephemeral()
            .user("u")
            .build()
            .await
            .unwrap();
        assert!(format!("{:?}", session.memory().counter()).contains("Cl100k"));
        session.send(text).await.unwrap();
        let cl100k = BpeCounter::cl100k().unwrap();
        let first = &session.memory().messages()[0].clone();
        assert_eq!(
            cl100k.count_message(first),
            session.memory().counter().count_message(first)
        );
        // The exact count differs from the chars/4 heuristic.
        let heuristic = agentmemory_core::HeuristicCounter::default().count_message(first);
        assert_ne!(cl100k.count_message(first), heuristic);
    }
}
