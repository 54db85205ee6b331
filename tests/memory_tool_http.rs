//! The memory tool over REST (`POST /v1/memory-tool`, `/search`, `/history`): tool
//! results for the model, users kept apart, a bound server acting for its user only.

use agentmemory::server::{app, Auth, MemoryService, ServerConfig};
use agentmemory::stores::StoreUrl;
use axum::http::StatusCode;
use axum::Router;
use serde_json::{json, Value};

#[path = "support/http.rs"]
mod http_support;
use http_support::call;

async fn server(user: Option<&str>) -> Router {
    let container = StoreUrl::Memory.open().await.unwrap();
    let service = MemoryService::from_container(&container).unwrap();
    let mut config = ServerConfig::new(Auth::disabled());
    config.user = user.map(str::to_owned);
    app(service, &config)
}

#[tokio::test]
async fn commands_answer_tool_results() {
    let app = server(None).await;
    let (status, body) = call(
        &app,
        "POST",
        "/v1/memory-tool?user_id=ana",
        json!({"command": "create", "path": "/memories/prefs.md", "file_text": "tea, no sugar\n"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"content": "File created successfully at: /memories/prefs.md", "is_error": false})
    );
    // the user may come in the body too
    let (status, body) = call(
        &app,
        "POST",
        "/v1/memory-tool",
        json!({"command": "view", "path": "/memories/prefs.md", "user_id": "ana"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["content"],
        "Here's the content of /memories/prefs.md with line numbers:\n     1\ttea, no sugar\n     2\t"
    );
    // a refused command is a tool result with is_error, for the model
    let (status, body) = call(
        &app,
        "POST",
        "/v1/memory-tool?user_id=ana",
        json!({"command": "view", "path": "/memories/%2e%2e/etc/passwd"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["is_error"], true);
    assert!(body["content"]
        .as_str()
        .unwrap()
        .contains("percent-encoded"));
    let (status, body) = call(
        &app,
        "POST",
        "/v1/memory-tool?user_id=ana",
        json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "tea", "new_str": "green tea"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["is_error"], false);

    let (status, body) = call(
        &app,
        "POST",
        "/v1/memory-tool/search",
        json!({"query": "sugar", "user_id": "ana"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["hits"][0]["path"], "/memories/prefs.md", "{body}");
    assert_eq!(body["hits"][0]["version"], 2);

    let (status, body) = call(
        &app,
        "GET",
        "/v1/memory-tool/history?user_id=ana&path=/memories/prefs.md",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let versions = body["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0]["content"], "tea, no sugar\n");
    assert_eq!(versions[1]["change"]["type"], "replaced");
    assert!(versions[1]["at"].is_string());

    let (status, _) = call(
        &app,
        "GET",
        "/v1/memory-tool/history?user_id=ana&path=/memories/none.md",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &app,
        "GET",
        "/v1/memory-tool/history?user_id=ana&path=/memories/../x",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn users_are_kept_apart() {
    let app = server(None).await;
    let create =
        json!({"command": "create", "path": "/memories/diary.md", "file_text": "Ana's secret\n"});
    let (status, _) = call(&app, "POST", "/v1/memory-tool?user_id=ana", create).await;
    assert_eq!(status, StatusCode::OK);
    let view = json!({"command": "view", "path": "/memories/diary.md"});
    let (_, body) = call(&app, "POST", "/v1/memory-tool?user_id=bob", view.clone()).await;
    assert_eq!(
        body,
        json!({"content": "The path /memories/diary.md does not exist. Please provide a valid path.", "is_error": true})
    );
    let (_, body) = call(
        &app,
        "POST",
        "/v1/memory-tool/search",
        json!({"query": "secret", "user_id": "bob"}),
    )
    .await;
    assert_eq!(body["hits"], json!([]));
    // no user: refused, not guessed
    let (status, body) = call(&app, "POST", "/v1/memory-tool", view.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = call(&app, "POST", "/v1/memory-tool?user_id=../ana", view).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_bound_server_acts_for_its_user_only() {
    let app = server(Some("ana")).await;
    let create = json!({"command": "create", "path": "/memories/a.md", "file_text": "x"});
    let (status, body) = call(&app, "POST", "/v1/memory-tool", create).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["is_error"], false);
    let view = json!({"command": "view", "path": "/memories/a.md"});
    let (status, _) = call(&app, "POST", "/v1/memory-tool?user_id=bob", view.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = call(&app, "POST", "/v1/memory-tool?user_id=ana", view).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["is_error"], false);
}
