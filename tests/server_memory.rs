//! The server's memory, in process: working-memory messages become episodes of the
//! session's user (`index_all_messages_in_long_term_memory`), an expired or missing
//! session is rebuilt from them, the memory prompt (REST and MCP) recalls them with their
//! dates, and hostile stored texts stay data in every prompt the server renders.

use std::time::Duration;

use agentmemory::server::{app, Auth, MemoryService, ServerConfig};
use agentmemory::stores::StoreUrl;
use agentmemory_core::kv::KvStore;
use agentmemory_core::render::{hostile, EPISODES_HEADING, MEMORIES_HEADING, SUMMARY_HEADING};
use agentmemory_core::{Container, Role};
use axum::http::StatusCode;
use axum::Router;
use serde_json::{json, Value};

#[path = "support/http.rs"]
mod http_support;
use http_support::call;

struct Server {
    app: Router,
    service: MemoryService,
    container: Container,
}

async fn server_on(url: &StoreUrl, index: bool) -> Server {
    let container = url.open().await.unwrap();
    let service = MemoryService::from_container(&container)
        .unwrap()
        .index_all_messages(index);
    let app = app(service.clone(), &ServerConfig::new(Auth::disabled()));
    Server {
        app,
        service,
        container,
    }
}

async fn server(index: bool) -> Server {
    server_on(&StoreUrl::Memory, index).await
}

fn message(id: &str, role: &str, content: &str, at: &str) -> Value {
    json!({"id": id, "role": role, "content": content, "created_at": at})
}

/// A conversation in which the user adopted a kitten.
fn kitten_session(user: &str, ttl: Option<u64>) -> Value {
    json!({
        "user_id": user,
        "ttl_seconds": ttl,
        "messages": [
            message("m1", "user", "We adopted a kitten called Figo yesterday", "2026-03-02T18:00:00Z"),
            message("m2", "assistant", "Congratulations! How is Figo settling in?", "2026-03-02T18:00:05Z"),
            message("01JNRX5Z8M3V7Q2W4E6R8T0Y1U", "user", "He sleeps on the radiator all day", "2026-03-02T18:01:00Z"),
        ],
    })
}

fn contents(session: &Value) -> Vec<&str> {
    session["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn messages_become_episodes_of_the_sessions_user_once() {
    let s = server(true).await;
    let (status, body) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/chat-1",
        kitten_session("alice", None),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["messages"][0]["persisted_at"].is_string(), "{body}");
    // The episodes are written behind the answer.
    s.service.settle().await;

    let episodes = s
        .service
        .episodes
        .list("alice", None, None, 100)
        .await
        .unwrap();
    assert_eq!(episodes.len(), 3, "{episodes:?}");
    assert_eq!(episodes[0].message_id, "m1");
    assert_eq!(episodes[0].conversation_id, "chat-1");
    assert_eq!(episodes[0].role, Role::User);
    assert_eq!(episodes[1].role, Role::Assistant);
    assert_eq!(
        episodes[0].observed_at.to_rfc3339(),
        "2026-03-02T18:00:00+00:00"
    );
    assert_eq!(
        episodes[0].when[0].label, "2026-03-01",
        "yesterday, said on 2 March"
    );
    assert_eq!(episodes[2].message_id, "01JNRX5Z8M3V7Q2W4E6R8T0Y1U");

    // The client sends the same messages again, without the stamp: nothing is duplicated.
    let (status, _) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/chat-1",
        kitten_session("alice", None),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // And again with the stamps it got back, plus one new message.
    let mut echoed = body.clone();
    echoed["messages"].as_array_mut().unwrap().push(message(
        "m4",
        "assistant",
        "Cats love warm places",
        "2026-03-02T18:01:30Z",
    ));
    let (status, _) = call(&s.app, "PUT", "/v1/working-memory/chat-1", echoed).await;
    assert_eq!(status, StatusCode::OK);
    s.service.settle().await;
    assert_eq!(s.service.episodes.len("alice").await.unwrap(), 4);

    // Whose episodes: a namespace keeps its own, a session without a user goes to the
    // namespace's no-user owner; nothing leaks to alice.
    let (status, _) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/chat-2?namespace=work",
        kitten_session("alice", None),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let mut anonymous = kitten_session("x", None);
    anonymous.as_object_mut().unwrap().remove("user_id");
    let (status, _) = call(&s.app, "PUT", "/v1/working-memory/chat-3", anonymous).await;
    assert_eq!(status, StatusCode::OK);
    // Episodes of a namespaced user are kept under "namespace \u{1f} user", those of no
    // user under the bare separator (the server's fact owners).
    s.service.settle().await;
    let work_alice = "work\u{1f}alice";
    assert_eq!(s.service.episodes.len(work_alice).await.unwrap(), 3);
    let nobody = "\u{1f}";
    assert_eq!(s.service.episodes.len(nobody).await.unwrap(), 3);
    assert_eq!(s.service.episodes.len("alice").await.unwrap(), 4);
}

#[tokio::test]
async fn an_expired_session_is_rebuilt_from_its_episodes() {
    let s = server(true).await;
    let (status, _) = call(
        &s.app,
        "PUT",
        "/v1/working-memory/chat-1",
        kitten_session("alice", Some(1)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(&s.app, "PUT", "/v1/working-memory/chat-2", json!({
        "user_id": "alice",
        "messages": [message("o1", "user", "Another conversation entirely", "2026-03-02T18:00:30Z")],
    }))
    .await;
    assert_eq!(status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1_200)).await;

    let (status, body) = call(
        &s.app,
        "GET",
        "/v1/working-memory/chat-1?user_id=alice",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        contents(&body),
        [
            "We adopted a kitten called Figo yesterday",
            "Congratulations! How is Figo settling in?",
            "He sleeps on the radiator all day",
        ],
        "only this session's messages, in time order"
    );
    let first = &body["messages"][0];
    assert_eq!(first["id"], "m1");
    assert_eq!(first["role"], "user");
    assert_eq!(first["created_at"], "2026-03-02T18:00:00Z");
    assert_eq!(body["messages"][1]["role"], "assistant");
    assert_eq!(body["messages"][2]["id"], "01JNRX5Z8M3V7Q2W4E6R8T0Y1U");
    assert_eq!(body["session_id"], "chat-1");
    assert_eq!(body["user_id"], "alice");

    // Rebuilt to the window the request names: the oldest messages folded into context.
    let (status, small) = call(
        &s.app,
        "GET",
        "/v1/working-memory/chat-1?user_id=alice&context_window_max=30",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{small}");
    assert!(small["messages"].as_array().unwrap().len() < 3, "{small}");
    assert!(
        small["context"].as_str().is_some_and(|c| !c.is_empty()),
        "{small}"
    );

    // Another user's session of the same id was never indexed; a deleted session stays deleted.
    let (status, _) = call(
        &s.app,
        "GET",
        "/v1/working-memory/chat-1?user_id=bob",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &s.app,
        "DELETE",
        "/v1/working-memory/chat-2?user_id=alice",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(
        &s.app,
        "GET",
        "/v1/working-memory/chat-2?user_id=alice",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Its messages are still the user's episodes (long-term memory).
    s.service.settle().await;
    assert_eq!(s.service.episodes.len("alice").await.unwrap(), 4);
}

/// A session deleted right after its PUT stays deleted: the PUT's indexing, which runs
/// behind its answer, lands before the delete forgets the session, never after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deleted_right_after_its_put_stays_deleted() {
    let s = server(true).await;
    for round in 0..20 {
        let uri = format!("/v1/working-memory/quick-{round}?user_id=alice");
        let (status, body) = call(&s.app, "PUT", &uri, kitten_session("alice", None)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _) = call(&s.app, "DELETE", &uri, Value::Null).await;
        assert_eq!(status, StatusCode::OK);
        s.service.settle().await;
        let (status, body) = call(&s.app, "GET", &uri, Value::Null).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "round {round}: {body}");
    }
}

#[tokio::test]
async fn a_missing_session_is_rebuilt_and_without_indexing_is_404() {
    for index in [true, false] {
        let s = server(index).await;
        let (status, _) = call(
            &s.app,
            "PUT",
            "/v1/working-memory/chat-1",
            kitten_session("alice", None),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        // The working memory is lost (flushed, another instance's store...).
        let kv = s.container.resolve::<dyn KvStore>(None).unwrap();
        // The sessions of no namespace live in the KV namespace "agentmem.server.wm \u{1f}".
        assert_eq!(kv.clear("agentmem.server.wm\u{1f}").await.unwrap(), 1);

        let (status, body) = call(
            &s.app,
            "GET",
            "/v1/working-memory/chat-1?user_id=alice",
            Value::Null,
        )
        .await;
        if index {
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(contents(&body).len(), 3);
        } else {
            assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
            assert_eq!(s.service.episodes.len("alice").await.unwrap(), 0);
        }
    }
}

/// Expiry on a real backend, rebuilt by a second server instance on the same store.
#[cfg(any(feature = "redis", feature = "postgres"))]
async fn rebuilt_by_another_instance(url: &str) {
    let url: StoreUrl = url.parse().unwrap();
    let first = server_on(&url, true).await;
    let second = server_on(&url, true).await;
    let user = format!("u-{}", ulid::Ulid::new());
    let uri = format!("/v1/working-memory/chat-1?user_id={user}");
    let (status, body) = call(&first.app, "PUT", &uri, kitten_session(&user, Some(1))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let (status, body) = call(&second.app, "GET", &uri, Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        contents(&body)[0],
        "We adopted a kitten called Figo yesterday"
    );
    assert_eq!(body["messages"][1]["id"], "m2");
    // Clean up the shared store.
    let (status, _) = call(&second.app, "DELETE", &uri, Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    second.service.episodes.forget(&user).await.unwrap();
}

#[cfg(any(feature = "redis", feature = "postgres"))]
fn service_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{var} is required with CI=true")
        }
        _ => {
            eprintln!("skipping: {var} is not set");
            None
        }
    }
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn an_expired_session_on_redis_is_rebuilt_by_another_instance() {
    if let Some(url) = service_url("AGENTMEM_REDIS_URL") {
        rebuilt_by_another_instance(&url).await;
    }
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn an_expired_session_on_postgres_is_rebuilt_by_another_instance() {
    if let Some(url) = service_url("AGENTMEM_POSTGRES_URL") {
        rebuilt_by_another_instance(&url).await;
    }
}

/// The `system` messages of a prompt, as text.
fn system_texts(prompt: &Value) -> Vec<String> {
    prompt["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"]["text"].as_str().unwrap().to_owned())
        .collect()
}

fn section<'a>(systems: &'a [String], heading: &str) -> Option<&'a String> {
    systems.iter().find(|t| t.starts_with(heading))
}

#[tokio::test]
async fn the_memory_prompt_recalls_earlier_messages_with_their_dates() {
    let s = server(true).await;
    call(
        &s.app,
        "PUT",
        "/v1/working-memory/chat-old",
        kitten_session("alice", None),
    )
    .await;
    let (status, _) = call(&s.app, "PUT", "/v1/working-memory/chat-new", json!({
        "user_id": "alice",
        "messages": [message("n1", "user", "Figo the kitten knocked over a plant", "2026-04-10T09:00:00Z")],
    }))
    .await;
    assert_eq!(status, StatusCode::OK);

    let prompt = |search: Value| {
        json!({
            "query": "how is Figo, the kitten?",
            "session": {"session_id": "chat-new", "user_id": "alice"},
            "long_term_search": search,
        })
    };
    let (status, body) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        prompt(json!({"text": "", "user_id": {"eq": "alice"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let systems = system_texts(&body);
    let episodes = section(&systems, EPISODES_HEADING).unwrap_or_else(|| panic!("{body}"));
    assert!(
        episodes.contains(
            "\n - 2026-03-02, user, another conversation: We adopted a kitten called Figo yesterday [yesterday = 2026-03-01]"
        ),
        "{episodes}"
    );
    // The session's own message is in the prompt already, not recalled again.
    assert!(!episodes.contains("knocked over a plant"), "{episodes}");
    assert!(body["messages"]
        .to_string()
        .contains("knocked over a plant"));
    // The earlier messages come after the long-term memories and before the session's messages.
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles.last(), Some(&"user"));

    // Earlier messages are long-term memory of type `message`: a search for semantic
    // memories only, or no long-term search, recalls none.
    let (_, only_facts) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        prompt(json!({"text": "", "memory_type": {"eq": "semantic"}})),
    )
    .await;
    assert!(
        section(&system_texts(&only_facts), EPISODES_HEADING).is_none(),
        "{only_facts}"
    );
    let (_, no_search) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        json!({
            "query": "how is Figo, the kitten?",
            "session": {"session_id": "chat-new", "user_id": "alice"},
        }),
    )
    .await;
    assert!(
        section(&system_texts(&no_search), EPISODES_HEADING).is_none(),
        "{no_search}"
    );

    // Without a session, the user the search pins; another user recalls nothing of alice's.
    let (_, by_user) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        json!({
            "query": "the kitten", "long_term_search": {"user_id": {"eq": "alice"}},
        }),
    )
    .await;
    let by_user = system_texts(&by_user);
    let found = section(&by_user, EPISODES_HEADING).unwrap();
    assert!(
        found.contains("knocked over a plant") && found.contains("adopted a kitten"),
        "{found}"
    );
    assert!(!found.contains("another conversation"), "{found}");
    let (_, bob) = call(
        &s.app,
        "POST",
        "/v1/memory/prompt",
        json!({
            "query": "the kitten", "long_term_search": {"user_id": {"eq": "bob"}},
        }),
    )
    .await;
    assert!(
        section(&system_texts(&bob), EPISODES_HEADING).is_none(),
        "{bob}"
    );

    #[cfg(feature = "mcp")]
    {
        let text = mcp_call(
            s.service.clone(),
            "memory_prompt",
            json!({"query": "how is Figo, the kitten?", "session_id": "chat-new", "user_id": "alice"}),
        )
        .await;
        let mcp: Value = serde_json::from_str(&text).unwrap();
        let systems = system_texts(&mcp);
        let episodes = section(&systems, EPISODES_HEADING).unwrap_or_else(|| panic!("{mcp}"));
        assert!(
            episodes.contains("2026-03-02, user, another conversation: We adopted a kitten"),
            "{episodes}"
        );
    }
}

/// The headings the server writes itself.
const HEADINGS: [&str; 3] = [SUMMARY_HEADING, MEMORIES_HEADING, EPISODES_HEADING];

/// Every system message of `prompt` holds its stored texts as data, and every section
/// that could carry a hostile text is there.
fn assert_prompt_contained(prompt: &Value, what: &str) {
    let systems = system_texts(prompt);
    for heading in HEADINGS {
        assert!(
            section(&systems, heading).is_some(),
            "{what}: no {heading:?} section in {prompt}"
        );
    }
    for text in &systems {
        hostile::assert_contained(text, &[], &HEADINGS);
    }
}

#[tokio::test]
async fn hostile_texts_stay_data_in_every_prompt() {
    let s = server(true).await;
    for (i, text) in hostile::CORPUS.iter().enumerate() {
        let user = format!("user-{i}");
        // As long-term memories: a fact and an event.
        let (status, body) = call(&s.app, "POST", "/v1/long-term-memory/", json!({"memories": [
            {"id": format!("fact-{i}"), "text": text, "user_id": user, "memory_type": "semantic"},
            {"id": format!("event-{i}"), "text": text, "user_id": user, "memory_type": "episodic"},
        ]}))
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // As a message of an earlier session (an episode), and as the summary and a
        // message of this one.
        let (status, body) = call(
            &s.app,
            "PUT",
            &format!("/v1/working-memory/old-{i}"),
            json!({
                "user_id": user,
                "messages": [message(&format!("old-{i}"), "user", text, "2026-02-01T10:00:00Z")],
            }),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = call(
            &s.app,
            "PUT",
            &format!("/v1/working-memory/now-{i}"),
            json!({
                "user_id": user,
                "context": text,
                "messages": [message(&format!("now-{i}"), "user", text, "2026-03-01T10:00:00Z")],
            }),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");

        let (status, prompt) = call(
            &s.app,
            "POST",
            "/v1/memory/prompt",
            json!({
                "query": text,
                "session": {"session_id": format!("now-{i}"), "user_id": user},
                "long_term_search": {"text": text, "user_id": {"eq": user}},
            }),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{prompt}");
        assert_prompt_contained(&prompt, &format!("REST, corpus text {i} {text:?}"));

        #[cfg(feature = "mcp")]
        {
            let answer = mcp_call(
                s.service.clone(),
                "memory_prompt",
                json!({"query": text, "session_id": format!("now-{i}"), "user_id": user}),
            )
            .await;
            let prompt: Value = serde_json::from_str(&answer).unwrap();
            assert_prompt_contained(&prompt, &format!("MCP, corpus text {i} {text:?}"));
        }
    }
}

/// Calls `tool` with `arguments` on the MCP server over `service` (in process, over a
/// pipe, as `agentmem mcp` serves stdio) and returns the tool's text.
#[cfg(feature = "mcp")]
async fn mcp_call(service: MemoryService, tool: &str, arguments: Value) -> String {
    use agentmemory::server::MemoryMcp;
    use rmcp::ServiceExt;
    use tokio::io::{AsyncBufReadExt, BufReader};

    let (client, server) = tokio::io::duplex(1 << 20);
    let running = tokio::spawn(async move {
        let serving = MemoryMcp::new(service, None)
            .serve(tokio::io::split(server))
            .await
            .unwrap();
        let _ = serving.waiting().await;
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "server_memory", "version": "0"},
        }}),
    )
    .await;
    answer(&mut lines, 1).await;
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments,
        }}),
    )
    .await;
    let result = answer(&mut lines, 2).await;
    running.abort();
    let result = &result["result"];
    assert_ne!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

#[cfg(feature = "mcp")]
async fn send(write: &mut (impl tokio::io::AsyncWrite + Unpin), message: Value) {
    use tokio::io::AsyncWriteExt;
    let mut line = serde_json::to_vec(&message).unwrap();
    line.push(b'\n');
    write.write_all(&line).await.unwrap();
}

/// The JSON-RPC answer with id `id` (notifications before it skipped).
#[cfg(feature = "mcp")]
async fn answer(
    lines: &mut tokio::io::Lines<impl tokio::io::AsyncBufRead + Unpin>,
    id: u64,
) -> Value {
    loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the MCP server hung up");
        let value: Value = serde_json::from_str(&line).unwrap();
        if value["id"] == id {
            return value;
        }
    }
}
