//! The server's long-term strategies and configuration, in process: background
//! extraction per `long_term_memory_strategy`, the reference environment variables (read
//! through `ServerSettings::from_lookup`), `?ttl_seconds=`, the `created_at` warning and
//! search that leaves out what matches nothing. "A configured model" is a local mock of
//! an OpenAI-compatible server (wiremock), never the internet.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentmemory::server::summary_id;
use agentmemory::server::{app, Auth, MemoryService, ServerConfig, ServerSettings};
use agentmemory::stores::StoreUrl;
use axum::http::StatusCode;
use axum::Router;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

#[path = "support/http.rs"]
mod http_support;
use http_support::call;

struct Server {
    app: Router,
    service: MemoryService,
}

/// Settings read from `vars` as from the environment.
fn settings_of(vars: &[(&str, &str)]) -> ServerSettings {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    ServerSettings::from_lookup(move |name| {
        vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
    .unwrap()
}

/// A server on in-memory stores with `settings`, indexing messages when `index` says
/// (else as the service's default).
async fn server_of(settings: ServerSettings, index: Option<bool>) -> Server {
    // Words only: these tests state what word search finds, whatever model the
    // environment offers (the embedder has its own tests).
    let container = StoreUrl::Memory.open_with_embedder(None).await.unwrap();
    let mut service = MemoryService::from_container(&container)
        .unwrap()
        .with_settings(settings);
    if let Some(index) = index {
        service = service.index_all_messages(index);
    }
    let app = app(service.clone(), &ServerConfig::new(Auth::disabled()));
    Server { app, service }
}

async fn server_with(vars: &[(&str, &str)], index: bool) -> Server {
    server_of(settings_of(vars), Some(index)).await
}

async fn server(vars: &[(&str, &str)]) -> Server {
    server_with(vars, true).await
}

fn message(id: &str, role: &str, content: &str) -> Value {
    json!({"id": id, "role": role, "content": content, "created_at": "2026-03-02T18:00:00Z"})
}

fn session(user: &str, strategy: Value, messages: Vec<Value>) -> Value {
    json!({"user_id": user, "long_term_memory_strategy": strategy, "messages": messages})
}

async fn put(s: &Server, id: &str, body: Value) -> Value {
    let (status, answer) = call(&s.app, "PUT", &format!("/v1/working-memory/{id}"), body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    s.service.settle().await;
    answer
}

/// Texts of the user's long-term memories matching `text` (every one for "").
async fn search(s: &Server, user: &str, text: &str) -> Vec<String> {
    let (status, body) = call(
        &s.app,
        "POST",
        "/v1/long-term-memory/search",
        json!({"text": text, "user_id": {"eq": user}, "limit": 50}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn discrete_extracts_facts_that_reinforce_and_supersede() {
    let s = server(&[]).await;
    let strategy = json!({"strategy": "discrete", "config": {}});
    let first = put(
        &s,
        "trip",
        session(
            "alice",
            strategy.clone(),
            vec![
                message("m1", "user", "I live in Paris and I love jazz"),
                message("m2", "assistant", "Lovely city for jazz!"),
            ],
        ),
    )
    .await;
    assert_eq!(first["messages"][0]["discrete_memory_extracted"], "t");
    let found = search(&s, "alice", "where does the user live").await;
    assert_eq!(found[0], "User lives in Paris", "{found:?}");
    assert!(search(&s, "alice", "jazz")
        .await
        .contains(&"User likes jazz".to_owned()));

    // the client appends to what it got back: only the new message is read
    let mut appended = first.clone();
    appended["messages"].as_array_mut().unwrap().push(message(
        "m3",
        "user",
        "I moved to Berlin last month",
    ));
    put(&s, "trip", appended).await;
    let found = search(&s, "alice", "where does the user live").await;
    assert_eq!(found[0], "User lives in Berlin", "{found:?}");
    assert!(
        !found.iter().any(|t| t.contains("Paris")),
        "superseded: {found:?}"
    );

    // the same fact in another session reinforces, it is not listed twice
    put(
        &s,
        "other",
        session(
            "alice",
            strategy,
            vec![message("m9", "user", "I love jazz")],
        ),
    )
    .await;
    let jazz: Vec<_> = search(&s, "alice", "jazz")
        .await
        .into_iter()
        .filter(|t| t.contains("jazz"))
        .collect();
    assert_eq!(jazz, ["User likes jazz"]);
    // and bob has none of it
    assert!(search(&s, "bob", "").await.is_empty());
}

#[tokio::test]
async fn preferences_keeps_only_preferences() {
    let s = server(&[]).await;
    put(
        &s,
        "prefs",
        session(
            "carol",
            json!({"strategy": "preferences"}),
            vec![message(
                "p1",
                "user",
                "I live in Rome. I work at Acme. I prefer window seats on planes. My favourite food is sushi. I'm vegetarian.",
            )],
        ),
    )
    .await;
    let mut all = search(&s, "carol", "").await;
    all.sort();
    assert_eq!(
        all,
        [
            "User is vegetarian",
            "User likes window seats on planes",
            "User's favourite food is sushi",
        ],
        "{all:?}"
    );
}

#[tokio::test]
async fn summary_writes_one_summary_memory_per_session() {
    let s = server(&[]).await;
    let strategy = json!({"strategy": "summary", "config": {"max_summary_length": 60}});
    let body = session(
        "dave",
        strategy,
        vec![
            message(
                "s1",
                "user",
                "We are planning the launch of the new website in March",
            ),
            message("s2", "assistant", "Great, which stack?"),
            message(
                "s3",
                "user",
                "React for the front end and PostgreSQL behind it",
            ),
        ],
    );
    let stored = put(&s, "launch", body).await;
    let id = summary_id(None, Some("dave"), "launch");
    let (status, memory) = call(
        &s.app,
        "GET",
        &format!("/v1/long-term-memory/{id}"),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{memory}");
    let text = memory["text"].as_str().unwrap();
    assert!(
        text.contains("PostgreSQL") && text.contains("website"),
        "{text}"
    );
    assert_eq!(memory["topics"], json!(["summary"]));
    assert_eq!(memory["session_id"], "launch");
    assert!(memory["persisted_at"].is_string());

    // a longer session rewrites the same memory
    let mut longer = stored.clone();
    longer["messages"].as_array_mut().unwrap().push(message(
        "s4",
        "user",
        "The budget is forty thousand euros",
    ));
    put(&s, "launch", longer).await;
    let (_, memory) = call(
        &s.app,
        "GET",
        &format!("/v1/long-term-memory/{id}"),
        Value::Null,
    )
    .await;
    assert!(
        memory["text"].as_str().unwrap().contains("budget"),
        "{memory}"
    );
    let all = search(&s, "dave", "").await;
    assert_eq!(all.len(), 1, "{all:?}");
}

#[tokio::test]
async fn custom_without_a_model_is_400_and_stores_nothing() {
    let s = server(&[]).await;
    let (status, body) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/c1",
        session(
            "erin",
            json!({"strategy": "custom", "config": {"custom_prompt": "Find facts: {message}"}}),
            vec![message("c1", "user", "I live in Lyon")],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("GENERATION_MODEL"),
        "{body}"
    );
    let (status, _) = call(
        &s.app,
        "GET",
        "/v1/working-memory/c1?user_id=erin",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // an unknown strategy is a schema error
    let (status, _) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/c2",
        session("erin", json!({"strategy": "everything"}), vec![]),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

/// An OpenAI-compatible model: extraction, summaries and custom prompts, told apart by
/// their prompts. Records every prompt it gets.
struct MockModel {
    prompts: Arc<Mutex<Vec<String>>>,
}

const MODEL_SUMMARY: &str = "Frank is moving to Porto and learns Portuguese.";

impl Respond for MockModel {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or_default();
        let all = body["messages"].to_string();
        self.prompts.lock().unwrap().push(all.clone());
        let text = if all.contains("extract durable facts") {
            json!({"facts": [{"attribute": "location", "value": "Porto", "text": "lives in Porto (model)", "polarity": "positive", "confidence": 0.9}]}).to_string()
        } else if all.contains("running summary") {
            MODEL_SUMMARY.to_owned()
        } else if all.contains("CUSTOM-MARKER") {
            format!(
                "```json\n{}\n```",
                json!({"memories": [
                    {"type": "semantic", "text": "User is learning Portuguese", "topics": ["language"], "entities": ["Portuguese"]},
                    {"type": "episodic", "text": "User signed a lease in Porto", "event_date": "2026-03-01T00:00:00Z"}
                ]})
            )
        } else {
            "?".to_owned()
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }))
    }
}

async fn mock_model() -> (MockServer, Arc<Mutex<Vec<String>>>) {
    let mock = MockServer::start().await;
    let prompts = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(MockModel {
            prompts: Arc::clone(&prompts),
        })
        .mount(&mock)
        .await;
    (mock, prompts)
}

#[tokio::test]
async fn generation_model_extracts_summarises_and_runs_custom_prompts() {
    let (mock, prompts) = mock_model().await;
    let base = format!("{}/v1", mock.uri());
    let s = server(&[
        ("GENERATION_MODEL", "mock-gpt"),
        ("OPENAI_BASE_URL", &base),
        ("OPENAI_API_KEY", "sk-mock"),
    ])
    .await;

    // discrete: the LLM extractor's fact, not the rule extractor's
    put(
        &s,
        "move",
        session(
            "frank",
            json!({"strategy": "discrete"}),
            vec![message("f1", "user", "I'm moving to Porto")],
        ),
    )
    .await;
    assert_eq!(
        search(&s, "frank", "where does the user live").await,
        ["User lives in Porto (model)"]
    );

    // custom: the client's prompt, with the messages in it, and the model's memories
    put(
        &s,
        "custom",
        session(
            "frank",
            json!({"strategy": "custom", "config": {"custom_prompt": "CUSTOM-MARKER list memories in {message}"}}),
            vec![message("f2", "user", "I signed the lease and started Portuguese classes")],
        ),
    )
    .await;
    let found = search(&s, "frank", "Portuguese").await;
    assert!(
        found.contains(&"User is learning Portuguese".to_owned()),
        "{found:?}"
    );
    let lease = search(&s, "frank", "lease").await;
    assert_eq!(lease, ["User signed a lease in Porto"]);
    assert!(prompts
        .lock()
        .unwrap()
        .iter()
        .any(|p| p.contains("CUSTOM-MARKER") && p.contains("started Portuguese classes")));

    // the session summary (WINDOW_SIZE default, no known model) is the model's
    let messages: Vec<Value> = (0..24)
        .map(|i| {
            message(
                &format!("w{i}"),
                if i % 2 == 0 { "user" } else { "assistant" },
                &format!("turn {i} about the move"),
            )
        })
        .collect();
    let stored = put(
        &s,
        "long",
        session("frank", json!({"strategy": "summary"}), messages),
    )
    .await;
    assert_eq!(stored["context"], MODEL_SUMMARY);
    assert_eq!(stored["messages"].as_array().unwrap().len(), 10);
    let id = summary_id(None, Some("frank"), "long");
    let (_, memory) = call(
        &s.app,
        "GET",
        &format!("/v1/long-term-memory/{id}"),
        Value::Null,
    )
    .await;
    assert_eq!(memory["text"], MODEL_SUMMARY);
}

#[tokio::test]
async fn a_failing_model_falls_back_to_the_offline_parts() {
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string("no"))
        .mount(&mock)
        .await;
    let base = format!("{}/v1", mock.uri());
    let s = server(&[("GENERATION_MODEL", "broken"), ("OPENAI_BASE_URL", &base)]).await;
    let messages: Vec<Value> = (0..22)
        .map(|i| {
            message(
                &format!("x{i}"),
                "user",
                &format!("I live in Oslo, note {i}"),
            )
        })
        .collect();
    let stored = put(
        &s,
        "f",
        session("gina", json!({"strategy": "discrete"}), messages),
    )
    .await;
    // the extractive summariser folded the window, the rule extractor read the facts
    assert!(
        stored["context"].as_str().unwrap().contains("Oslo"),
        "{stored}"
    );
    let found = search(&s, "gina", "where does the user live").await;
    assert_eq!(found[0], "User lives in Oslo", "{found:?}");
}

#[tokio::test]
async fn window_size_is_a_message_window_with_a_default_for_unknown_models() {
    let many = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| {
                message(
                    &format!("n{i}"),
                    if i % 2 == 0 { "user" } else { "assistant" },
                    &format!("small talk number {i}"),
                )
            })
            .collect()
    };
    // unset: 20 for a session with neither a known model nor context_window_max
    let s = server(&[]).await;
    let body = session("hal", json!({"strategy": "discrete"}), many(60));
    let stored = put(&s, "w", body.clone()).await;
    assert_eq!(stored["messages"].as_array().unwrap().len(), 10);
    assert!(stored["context"].as_str().is_some_and(|c| !c.is_empty()));
    assert_eq!(stored["messages"][0]["content"], "small talk number 50");
    // a known model's token window governs instead (60 short messages fit 128k)
    let (_, stored) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/w2?model_name=gpt-4o",
        body.clone(),
    )
    .await;
    assert_eq!(stored["messages"].as_array().unwrap().len(), 60);

    // set: it applies, to every session
    let s = server(&[("WINDOW_SIZE", "50")]).await;
    let stored = put(&s, "w", body.clone()).await;
    assert_eq!(stored["messages"].as_array().unwrap().len(), 25);
    let (_, stored) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/w2?model_name=gpt-4o",
        body,
    )
    .await;
    assert_eq!(stored["messages"].as_array().unwrap().len(), 25);
}

#[tokio::test]
async fn long_term_memory_false_turns_long_term_memory_off() {
    let s = server(&[("LONG_TERM_MEMORY", "false")]).await;
    let mut body = session(
        "ivy",
        json!({"strategy": "discrete"}),
        vec![message("l1", "user", "I live in Madrid")],
    );
    body["memories"] =
        json!([{"id": "mem-1", "text": "User likes tea", "memory_type": "semantic"}]);
    let stored = put(&s, "l", body).await;
    assert!(stored["memories"][0]["persisted_at"].is_null(), "{stored}");
    assert!(
        stored["messages"][0]["persisted_at"].is_null(),
        "not indexed: {stored}"
    );
    let (status, body) = call(
        &s.app,
        "POST",
        "/v1/long-term-memory/search",
        json!({"text": "Madrid"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["detail"], "Long-term memory is disabled");
    let (status, _) = call(
        &s.app,
        "POST",
        "/v1/long-term-memory/",
        json!({"memories": [{"text": "x"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // working memory still works, and the prompt leaves long-term memory out
    let (status, prompt) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        json!({"query": "where do I live?", "session": {"session_id": "l", "user_id": "ivy"}, "long_term_search": {"text": "live"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{prompt}");
    assert!(prompt.to_string().contains("I live in Madrid"));
}

#[tokio::test]
async fn discrete_extraction_off_still_promotes_memories() {
    let s = server(&[("ENABLE_DISCRETE_MEMORY_EXTRACTION", "false")]).await;
    let mut body = session(
        "jo",
        json!({"strategy": "discrete"}),
        vec![message("d1", "user", "I live in Vienna")],
    );
    body["memories"] =
        json!([{"id": "pref-1", "text": "User likes opera", "memory_type": "semantic"}]);
    let stored = put(&s, "d", body).await;
    assert_eq!(stored["messages"][0]["discrete_memory_extracted"], "f");
    assert!(
        stored["memories"][0]["persisted_at"].is_string(),
        "{stored}"
    );
    assert_eq!(search(&s, "jo", "").await, ["User likes opera"]);
    let (status, memory) = call(&s.app, "GET", "/v1/long-term-memory/pref-1", Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    assert!(memory["persisted_at"].is_string());
}

#[tokio::test]
async fn the_ttl_query_parameter_expires_the_session() {
    let s = server_with(&[], false).await;
    let body = session(
        "kim",
        json!({"strategy": "discrete"}),
        vec![message("t1", "user", "hello there")],
    );
    let (status, stored) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/t?ttl_seconds=1",
        body.clone(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{stored}");
    assert_eq!(stored["ttl_seconds"], 1);
    // the query wins over the body
    let mut durable = body;
    durable["ttl_seconds"] = json!(3600);
    let (_, stored) = call(&s.app, "PUT", "/v1/working-memory/u?ttl_seconds=1", durable).await;
    assert_eq!(stored["ttl_seconds"], 1);
    let (status, _) = call(
        &s.app,
        "GET",
        "/v1/working-memory/t?user_id=kim",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for id in ["t", "u"] {
        let (status, body) = call(
            &s.app,
            "GET",
            &format!("/v1/working-memory/{id}?user_id=kim"),
            Value::Null,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{id}: {body}");
    }
    let (status, _) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/v?ttl_seconds=soon",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn search_leaves_out_memories_that_match_nothing() {
    let s = server(&[]).await;
    let (status, _) = call(
        &s.app,
        "POST",
        "/v1/long-term-memory/",
        json!({"memories": [
            {"id": "a", "text": "User likes green tea", "user_id": "lee", "memory_type": "semantic"},
            {"id": "b", "text": "Lee visited the Prado museum", "user_id": "lee", "memory_type": "episodic"},
        ]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(search(&s, "lee", "quantum chromodynamics").await.is_empty());
    assert_eq!(
        search(&s, "lee", "museum").await,
        ["Lee visited the Prado museum"]
    );
    assert_eq!(search(&s, "lee", "").await.len(), 2);
}

/// Collects what the tracing subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_missing_created_at_is_warned_about_once_per_session() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let s = server(&[]).await;
    let untimed = |content: &str| json!({"role": "user", "content": content});
    for session_id in ["a", "a", "b"] {
        let (status, body) = call(
            &s.app,
            "PUT",
            &format!("/v1/working-memory/{session_id}"),
            json!({"messages": [untimed("hi"), untimed("there")]}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body["messages"][0]["created_at"].is_string());
    }
    // timed messages are not warned about
    call(
        &s.app,
        "PUT",
        "/v1/working-memory/c",
        json!({"messages": [message("t", "user", "hi")]}),
    )
    .await;
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("without created_at"))
        .collect();
    assert_eq!(warnings.len(), 2, "{log}");
    assert!(
        warnings[0].contains("session=\"a\"") || warnings[0].contains("session=a"),
        "{log}"
    );
    assert!(warnings[1].contains("b"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_follows_the_order_of_the_puts() {
    let s = server(&[]).await;
    let cities = ["Paris", "Berlin", "Madrid", "Lisbon", "Vienna", "Prague"];
    for (i, city) in cities.iter().enumerate() {
        // no settling in between: the jobs queue up
        let (status, body) = call(
            &s.app,
            "PUT",
            &format!("/v1/working-memory/move-{i}"),
            session(
                "max",
                json!({"strategy": "discrete"}),
                vec![message(
                    &format!("c{i}"),
                    "user",
                    &format!("I live in {city}"),
                )],
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    s.service.settle().await;
    let found = search(&s, "max", "where does the user live").await;
    assert_eq!(
        found,
        ["User lives in Prague"],
        "the last one said wins: {found:?}"
    );
}

/// A model whose every answer waits until the test lets one through.
struct GatedModel {
    gate: Arc<tokio::sync::Semaphore>,
    calls: Arc<std::sync::atomic::AtomicUsize>,
}

#[async_trait::async_trait]
impl agentmemory::model::ChatModel for GatedModel {
    async fn complete(
        &self,
        _request: agentmemory::model::ChatRequest,
    ) -> agentmemory::Result<agentmemory::model::Completion> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let permit = self.gate.acquire().await;
        permit.expect("the gate stays open").forget();
        Ok(agentmemory::model::Completion::new(
            agentmemory::Message::assistant(r#"{"facts": []}"#),
        ))
    }
}

#[tokio::test]
async fn a_full_extraction_queue_holds_writes_back_instead_of_growing() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let model = GatedModel {
        gate: Arc::clone(&gate),
        calls: Arc::clone(&calls),
    };
    let settings =
        settings_of(&[("EXTRACTION_QUEUE_LIMIT", "2")]).with_model(Arc::new(model), "gated");
    let Server { app, service } = server_of(settings, None).await;
    let put = |i: usize| {
        let app = app.clone();
        async move {
            call(
                &app,
                "PUT",
                &format!("/v1/working-memory/queued-{i}"),
                session(
                    "quinn",
                    json!({"strategy": "discrete"}),
                    vec![message(
                        &format!("q{i}"),
                        "user",
                        &format!("I play the oboe {i}"),
                    )],
                ),
            )
            .await
        }
    };
    // two places: both writes are answered while the model has not answered yet
    for i in 0..2 {
        let (status, body) = tokio::time::timeout(Duration::from_secs(10), put(i))
            .await
            .expect("a write with a free place is answered at once");
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // the third waits for a place
    let third = tokio::spawn(put(2));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !third.is_finished(),
        "the third write waits while both places are taken"
    );
    let (status, _) = call(
        &app,
        "GET",
        "/v1/working-memory/queued-2?user_id=quinn",
        Value::Null,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "nothing of the waiting write is stored yet"
    );
    // the first job finishes: its place goes to the third write
    gate.add_permits(1);
    let (status, body) = tokio::time::timeout(Duration::from_secs(10), third)
        .await
        .expect("the third write is answered once a place is free")
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    gate.add_permits(1_000);
    service.settle().await;
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "every queued session was extracted, none dropped"
    );
}

/// A model whose answers to requests naming `held` wait until the test lets one through;
/// it counts the calls it is answering at once and the most it ever answered at once.
struct HeldModel {
    held: &'static str,
    gate: Arc<tokio::sync::Semaphore>,
    started: Arc<Mutex<Vec<String>>>,
    answered: Arc<Mutex<Vec<String>>>,
    running: Arc<std::sync::atomic::AtomicUsize>,
    most: Arc<std::sync::atomic::AtomicUsize>,
}

impl HeldModel {
    fn new(held: &'static str) -> Self {
        Self {
            held,
            gate: Arc::new(tokio::sync::Semaphore::new(0)),
            started: Arc::default(),
            answered: Arc::default(),
            running: Arc::default(),
            most: Arc::default(),
        }
    }

    fn handles(&self) -> Self {
        Self {
            held: self.held,
            gate: Arc::clone(&self.gate),
            started: Arc::clone(&self.started),
            answered: Arc::clone(&self.answered),
            running: Arc::clone(&self.running),
            most: Arc::clone(&self.most),
        }
    }
}

#[async_trait::async_trait]
impl agentmemory::model::ChatModel for HeldModel {
    async fn complete(
        &self,
        request: agentmemory::model::ChatRequest,
    ) -> agentmemory::Result<agentmemory::model::Completion> {
        use std::sync::atomic::Ordering::SeqCst;
        let text = serde_json::to_string(&request).unwrap();
        // the message the call is about: "note-<user>-<n>"
        let note = text
            .split("note-")
            .nth(1)
            .map(|rest| {
                format!(
                    "note-{}",
                    &rest[..rest.find([' ', '"', '\\']).unwrap_or(rest.len())]
                )
            })
            .unwrap_or_default();
        self.started.lock().unwrap().push(note.clone());
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        if self.held.is_empty() || text.contains(self.held) {
            self.gate
                .acquire()
                .await
                .expect("the gate stays open")
                .forget();
        }
        self.running.fetch_sub(1, SeqCst);
        self.answered.lock().unwrap().push(note);
        Ok(agentmemory::model::Completion::new(
            agentmemory::Message::assistant(r#"{"facts": []}"#),
        ))
    }
}

async fn held_server(model: &HeldModel, vars: &'static [(&'static str, &'static str)]) -> Server {
    let settings = settings_of(vars).with_model(Arc::new(model.handles()), "held");
    server_of(settings, None).await
}

/// Stores a session of `user` with one message, `note-<user>-<n>`, without waiting for
/// its extraction.
async fn put_note(s: &Server, user: &str, n: usize) {
    let (status, body) = call(
        &s.app,
        "PUT",
        &format!("/v1/working-memory/{user}-{n}"),
        session(
            user,
            json!({"strategy": "discrete"}),
            vec![message(
                &format!("{user}{n}"),
                "user",
                &format!("I wrote note-{user}-{n} today"),
            )],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "timed out waiting until {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_extraction_for_one_user_does_not_delay_another() {
    let model = HeldModel::new("note-ada");
    let s = held_server(&model, &[]).await;
    for n in 0..3 {
        put_note(&s, "ada", n).await;
    }
    put_note(&s, "bob", 0).await;
    // ada's first call is held: bob's extraction runs and ends meanwhile
    wait_until("bob's extraction is answered", || {
        model
            .answered
            .lock()
            .unwrap()
            .contains(&"note-bob-0".to_owned())
    })
    .await;
    // ada's jobs wait behind her first one, in order: one of her calls has started
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ada_started = |m: &HeldModel| {
        m.started
            .lock()
            .unwrap()
            .iter()
            .filter(|n| n.starts_with("note-ada"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(ada_started(&model), ["note-ada-0"]);
    model.gate.add_permits(3);
    s.service.settle().await;
    assert_eq!(
        ada_started(&model),
        ["note-ada-0", "note-ada-1", "note-ada-2"],
        "one user's jobs run in the order of the PUTs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_runs_at_most_the_configured_number_of_jobs_at_once() {
    use std::sync::atomic::Ordering::SeqCst;
    let model = HeldModel::new("");
    let s = held_server(&model, &[("EXTRACTION_CONCURRENCY", "2")]).await;
    let users = ["u1", "u2", "u3", "u4", "u5"];
    for user in users {
        put_note(&s, user, 0).await;
    }
    wait_until("two calls run", || model.running.load(SeqCst) == 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(model.running.load(SeqCst), 2, "no third call starts");
    assert_eq!(model.started.lock().unwrap().len(), 2);
    model.gate.add_permits(1_000);
    s.service.settle().await;
    assert_eq!(model.answered.lock().unwrap().len(), users.len());
    assert_eq!(
        model.most.load(SeqCst),
        2,
        "never more than the limit at once"
    );
}

#[tokio::test]
async fn a_queue_that_stays_full_turns_a_put_away_with_503_and_stores_nothing() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let model = GatedModel {
        gate: Arc::clone(&gate),
        calls: Arc::clone(&calls),
    };
    let settings = settings_of(&[
        ("EXTRACTION_QUEUE_LIMIT", "1"),
        ("EXTRACTION_QUEUE_WAIT_MS", "200"),
    ])
    .with_model(Arc::new(model), "gated");
    let Server { app, service } = server_of(settings, None).await;
    let body = |i: usize| {
        session(
            "rita",
            json!({"strategy": "discrete"}),
            vec![message(
                &format!("r{i}"),
                "user",
                &format!("I play the harp {i}"),
            )],
        )
    };
    let (status, answer) = call(&app, "PUT", "/v1/working-memory/full-0", body(0)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // the only place is held by the first job, whose model call does not answer: the
    // second write waits 200 ms, then is refused with 503 and Retry-After
    let request = axum::http::Request::builder()
        .method("PUT")
        .uri("/v1/working-memory/full-1")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            serde_json::to_vec(&body(1)).unwrap(),
        ))
        .unwrap();
    let response = tokio::time::timeout(
        Duration::from_secs(5),
        tower::ServiceExt::oneshot(app.clone(), request),
    )
    .await
    .expect("a write facing a full queue is answered within its wait")
    .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        response.headers().get("retry-after").is_some(),
        "{:?}",
        response.headers()
    );
    let (status, _) = call(
        &app,
        "GET",
        "/v1/working-memory/full-1?user_id=rita",
        Value::Null,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a refused write stored nothing"
    );
    // once the model answers, the queue drains and the same write goes through
    gate.add_permits(1_000);
    service.settle().await;
    let (status, answer) = call(&app, "PUT", "/v1/working-memory/full-1", body(1)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    service.settle().await;
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the accepted writes were extracted, the refused one was not"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_and_a_prompt_right_after_puts_see_what_they_put_in() {
    let s = server(&[]).await;
    for (i, city) in ["Paris", "Berlin", "Lisbon"].iter().enumerate() {
        // no settling: the facts and episodes are written behind the answers
        let (status, body) = call(
            &s.app,
            "PUT",
            &format!("/v1/working-memory/home-{i}"),
            session(
                "nina",
                json!({"strategy": "discrete"}),
                vec![
                    message(&format!("h{i}"), "user", &format!("I live in {city}")),
                    message(&format!("a{i}"), "assistant", "Noted."),
                ],
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // a search of the user waits for the work of the user's PUTs answered before it
    let found = search(&s, "nina", "where does the user live").await;
    assert_eq!(found, ["User lives in Lisbon"], "{found:?}");
    let (status, prompt) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/home-3",
        session(
            "nina",
            json!({"strategy": "discrete"}),
            vec![message("h3", "user", "My sister Ines visits me in October")],
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{prompt}");
    let (status, prompt) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        json!({
            "query": "when does my sister visit",
            "session": {"session_id": "other", "user_id": "nina"},
            "long_term_search": {"text": "sister visit October", "user_id": {"eq": "nina"}},
        }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{prompt}");
    assert!(
        prompt.to_string().contains("Ines"),
        "the message of the PUT just answered is recalled: {prompt}"
    );
    s.service.settle().await;
    assert_eq!(
        s.service.episodes.len("nina").await.unwrap(),
        7,
        "every message indexed once"
    );
}
