//! The OpenAI-compatible provider against a mock server on 127.0.0.1.
#![cfg(feature = "openai")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::error::ModelErrorKind;
use agentmemory_core::model::openai::{OpenAiChatModel, OpenAiConfig, OpenAiEmbedder};
use agentmemory_core::model::{ChatModel, ChatRequest, ToolDefinition};
use agentmemory_core::{ContentBlock, Embedder, MemoryError, Message, Role, ToolCall, Usage};
use serde_json::{json, Value};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::new(format!("{}/v1", server.uri()), "gpt-4o-mini")
        .with_initial_backoff(Duration::from_millis(10))
        .with_timeout(Duration::from_secs(5))
}

fn reply(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28}
    })
}

fn simple_request() -> ChatRequest {
    ChatRequest::new(
        "registered-name",
        "Be brief.",
        vec![Message::user("Hello").into()],
    )
}

fn model_error(err: &MemoryError) -> &str {
    match err {
        MemoryError::Model { message, .. } => message,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn chat_request_body_and_headers_are_exactly_openais() {
    let server = MockServer::start().await;
    let expected = json!({
        "model": "gpt-4o-mini",
        "temperature": 0.5,
        "max_tokens": 64,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": [
                {"type": "text", "text": "What is in this picture, and the weather?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}
            ]},
            {"role": "tool", "content": "-3°C, snow", "tool_call_id": "call_1"},
            {"role": "assistant", "content": "A cat; it snows in Oslo."},
            {"role": "user", "content": "Thanks"}
        ],
        "tools": [
            {"type": "function", "function": {
                "name": "weather",
                "description": "The weather in a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
            }}
        ]
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test-123"))
        .and(header("openai-organization", "org-42"))
        .and(header("content-type", "application/json"))
        .and(body_json(&expected))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply("You're welcome.")))
        .expect(1)
        .mount(&server)
        .await;

    let model = OpenAiChatModel::new(
        config(&server)
            .with_api_key("sk-test-123")
            .with_organization("org-42"),
    )
    .unwrap();
    let request = ChatRequest::new(
        "registered-name",
        "You are terse.",
        vec![
            Message::user(vec![
                ContentBlock::Text {
                    text: "What is in this picture, and the weather?".into(),
                },
                ContentBlock::Image {
                    url: "https://example.com/cat.png".into(),
                    media_type: Some("image/png".into()),
                },
            ]),
            Message::assistant_with_tools(
                "",
                vec![ToolCall::new("call_1", "weather", json!({"city": "Oslo"}))],
            ),
            Message::tool_result("call_1", "-3°C, snow"),
            Message::assistant("A cat; it snows in Oslo."),
            Message::user("Thanks"),
        ]
        .into_iter()
        .map(Arc::new)
        .collect(),
    )
    .with_temperature(0.5)
    .with_max_tokens(64)
    .with_tools(vec![ToolDefinition::new(
        "weather",
        "The weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )]);
    let completion = model.complete(request).await.unwrap();
    assert_eq!(completion.message.role, Role::Assistant);
    assert_eq!(completion.message.text(), "You're welcome.");
    assert_eq!(completion.usage, Some(Usage::new(21, 7)));
}

#[tokio::test]
async fn no_key_means_no_authorization_header_and_an_empty_model_sends_the_request_model() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply("hi")))
        .mount(&server)
        .await;
    let mut config = config(&server);
    config.model = String::new();
    OpenAiChatModel::new(config)
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].headers.get("authorization").is_none());
    assert!(requests[0].headers.get("openai-organization").is_none());
    let body: Value = requests[0].body_json().unwrap();
    assert_eq!(body["model"], "registered-name");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert!(body.get("temperature").is_none() && body.get("max_tokens").is_none());
}

#[tokio::test]
async fn tool_calls_in_the_answer_come_back_parsed() {
    let server = MockServer::start().await;
    let answer = json!({
        "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"rust\"}"}},
            {"id": "call_10", "type": "function", "function": {"name": "broken", "arguments": "{not json"}}
        ]}}]
    });
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    let completion = OpenAiChatModel::new(config(&server))
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap();
    let calls = &completion.message.tool_calls;
    assert_eq!(
        calls[0],
        ToolCall::new("call_9", "lookup", json!({"q": "rust"}))
    );
    assert_eq!(calls[1].arguments, json!("{not json"));
    assert_eq!(completion.message.text(), "");
    assert_eq!(completion.usage, None);
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("Retry-After", "1")
                .set_body_json(json!({"error": {"message": "Rate limit reached"}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply("finally")))
        .mount(&server)
        .await;
    let started = Instant::now();
    let completion = OpenAiChatModel::new(config(&server))
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap();
    assert_eq!(completion.message.text(), "finally");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    // Retry-After: 1 was honoured rather than the 10 ms backoff.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_500_is_retried_with_backoff_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply("recovered")))
        .mount(&server)
        .await;
    let completion = OpenAiChatModel::new(config(&server))
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap();
    assert_eq!(completion.message.text(), "recovered");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn retries_stop_at_max_retries_with_the_last_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(503).set_body_json(json!({"error": {"message": "overloaded"}})),
        )
        .mount(&server)
        .await;
    let err = OpenAiChatModel::new(config(&server).with_max_retries(2))
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    let message = model_error(&err);
    assert!(
        message.contains("503") && message.contains("overloaded"),
        "{message}"
    );
    assert_eq!(err.model_kind(), Some(ModelErrorKind::Unavailable));
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_400_is_not_retried_and_says_why() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": {"message": "Invalid value for 'messages'", "type": "invalid_request_error"}
        })))
        .mount(&server)
        .await;
    let err = OpenAiChatModel::new(config(&server))
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    let text = err.to_string();
    assert!(
        text.starts_with("model `gpt-4o-mini` failed (request refused)"),
        "{text}"
    );
    assert_eq!(err.model_kind(), Some(ModelErrorKind::BadRequest));
    assert!(!err.is_retryable());
    assert!(
        text.contains("400") && text.contains("Invalid value for 'messages'"),
        "{text}"
    );
}

#[tokio::test]
async fn a_slow_server_times_out_with_a_typed_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(reply("too late"))
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let started = Instant::now();
    let err = OpenAiChatModel::new(config(&server).with_timeout(Duration::from_millis(200)))
        .unwrap()
        .complete(simple_request())
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert!(model_error(&err).contains("timed out"), "{err}");
    assert_eq!(err.model_kind(), Some(ModelErrorKind::Timeout));
    assert!(err.is_retryable());
    // The HTTP client's error is the source, not repeated in the message.
    let source = std::error::Error::source(&err).expect("the client's error");
    assert!(!err.to_string().contains(&source.to_string()), "{err}");
    // A timeout is not retried.
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_non_json_success_and_an_empty_choice_list_are_errors() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>proxy page</html>"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"choices": []})))
        .mount(&server)
        .await;
    let model = OpenAiChatModel::new(config(&server)).unwrap();
    let err = model.complete(simple_request()).await.unwrap_err();
    assert!(model_error(&err).contains("unexpected answer"), "{err}");
    assert_eq!(err.model_kind(), Some(ModelErrorKind::BadResponse));
    let parse_error = std::error::Error::source(&err).expect("the JSON parser's error");
    assert!(!err.to_string().contains(&parse_error.to_string()), "{err}");
    let err = model.complete(simple_request()).await.unwrap_err();
    assert!(model_error(&err).contains("no choices"), "{err}");
    assert_eq!(err.model_kind(), Some(ModelErrorKind::BadResponse));
}

#[test]
fn bad_configurations_are_refused_and_keys_never_printed() {
    let err = OpenAiChatModel::new(OpenAiConfig::new("localhost:11434", "m")).unwrap_err();
    assert!(matches!(err, MemoryError::InvalidArgument { .. }), "{err}");
    let err = OpenAiChatModel::new(OpenAiConfig::new("http://x", "m").with_timeout(Duration::ZERO))
        .unwrap_err();
    assert!(matches!(err, MemoryError::InvalidArgument { .. }), "{err}");
    let model =
        OpenAiChatModel::new(OpenAiConfig::new("http://x", "m").with_api_key("sk-very-secret"))
            .unwrap();
    let printed = format!("{model:?}");
    assert!(
        !printed.contains("sk-very-secret") && printed.contains("<redacted>"),
        "{printed}"
    );
}

#[test]
fn from_lookup_reads_the_documented_variables() {
    let config = OpenAiConfig::from_lookup(|name| {
        match name {
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:11434/v1/"),
            "OPENAI_API_KEY" => Some("  "),
            "AGENTMEM_MODEL" => Some("llama3.2"),
            "OPENAI_ORGANIZATION" => Some("org-1"),
            _ => None,
        }
        .map(str::to_owned)
    });
    assert_eq!(config.base_url, "http://127.0.0.1:11434/v1/");
    assert_eq!(config.api_key, None, "a blank key counts as unset");
    assert_eq!(config.model, "llama3.2");
    assert_eq!(config.organization.as_deref(), Some("org-1"));
    let defaults = OpenAiConfig::from_lookup(|_| None);
    assert_eq!(defaults.base_url, "https://api.openai.com/v1");
    assert_eq!(defaults.model, "gpt-4o-mini");
}

#[tokio::test]
async fn a_bad_key_fails_the_request_not_the_process() {
    let server = MockServer::start().await;
    // Header values are checked per request, so construction succeeds.
    let model = OpenAiChatModel::new(config(&server).with_api_key("bad\nkey")).unwrap();
    let err = model.complete(simple_request()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::InvalidArgument {
                what: "OpenAI API key",
                ..
            }
        ),
        "{err}"
    );
    assert!(!err.to_string().contains("bad\nkey"));
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn embeddings_send_the_batch_and_parse_vectors_in_index_order() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .and(header("authorization", "Bearer sk-emb"))
        .and(body_json(json!({
            "model": "text-embedding-3-small",
            "input": ["first", "second"],
            "encoding_format": "float",
            "dimensions": 3
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [
                {"object": "embedding", "index": 1, "embedding": [0.0, 1.0, 0.0]},
                {"object": "embedding", "index": 0, "embedding": [1.0, 0.0, 0.0]}
            ],
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 2, "total_tokens": 2}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let embedder = OpenAiEmbedder::new(
        OpenAiConfig::new(format!("{}/v1", server.uri()), "text-embedding-3-small")
            .with_api_key("sk-emb"),
    )
    .unwrap()
    .with_dimensions(3);
    assert_eq!(embedder.dimensions(), Some(3));
    let vectors = embedder
        .embed(&["first".to_owned(), "second".to_owned()])
        .await
        .unwrap();
    assert_eq!(vectors, vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0]]);
    // An empty batch makes no request (the mock expects exactly one).
    assert!(embedder.embed(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_embedding_dimension_is_learned_then_enforced() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"index": 0, "embedding": [0.1, 0.2, 0.3, 0.4]}]
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"index": 0, "embedding": [0.1, 0.2]}]
        })))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": []})))
        .mount(&server)
        .await;
    let embedder = OpenAiEmbedder::new(config(&server)).unwrap();
    assert_eq!(embedder.dimensions(), None);
    let one = ["a".to_owned()];
    assert_eq!(embedder.embed(&one).await.unwrap()[0].len(), 4);
    assert_eq!(embedder.dimensions(), Some(4));
    let err = embedder.embed(&one).await.unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::DimensionMismatch {
                expected: 4,
                found: 2
            }
        ),
        "{err}"
    );
    let err = embedder.embed(&one).await.unwrap_err();
    assert!(
        model_error(&err).contains("asked for 1 embeddings, got 0"),
        "{err}"
    );
    let body: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert!(body.get("dimensions").is_none());
}
