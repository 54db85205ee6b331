//! The REST API in process: bad input gets the right status, stores nothing, and the
//! server keeps serving.

use agentmemory::server::{app, Auth, MemoryService, ServerConfig};
use agentmemory::stores::StoreUrl;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tower::ServiceExt;

const TOKEN: &str = "test-token";

async fn server() -> Router {
    let container = StoreUrl::Memory.open().await.unwrap();
    let service = MemoryService::from_container(&container).unwrap();
    let mut config = ServerConfig::new(Auth::token(TOKEN));
    config.body_limit = 1024 * 1024;
    app(service, &config)
}

async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = request
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn session(content: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s",
        "messages": [{"role": "user", "content": content, "created_at": "2026-01-01T00:00:00Z"}],
    }))
    .unwrap()
}

async fn assert_serving(app: &Router) {
    let (status, _) = call(
        app,
        "PUT",
        "/v1/working-memory/ok",
        Some(TOKEN),
        session("still here"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = call(app, "GET", "/v1/working-memory/ok", Some(TOKEN), vec![]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["messages"][0]["content"], "still here");
}

async fn assert_absent(app: &Router, session_id: &str) {
    let (status, body) = call(
        app,
        "GET",
        &format!("/v1/working-memory/{session_id}"),
        Some(TOKEN),
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["detail"].is_string(), "{body}");
}

#[tokio::test]
async fn malformed_json_and_wrong_types_are_422_and_store_nothing() {
    let app = server().await;
    for bad in [
        b"{not json".to_vec(),
        br#"{"messages": "hello"}"#.to_vec(),
        br#"{"messages": [{"role": 1, "content": "x"}]}"#.to_vec(),
        br#"{"messages": [], "ttl_seconds": "soon"}"#.to_vec(),
    ] {
        let (status, body) = call(&app, "PUT", "/v1/working-memory/bad", Some(TOKEN), bad).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body["detail"][0]["msg"].is_string(), "{body}");
    }
    let (status, _) = call(
        &app,
        "GET",
        "/v1/working-memory/bad?context_window_max=lots",
        Some(TOKEN),
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = call(
        &app,
        "POST",
        "/v1/long-term-memory/search",
        Some(TOKEN),
        br#"{"limit": "ten"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_absent(&app, "bad").await;
    assert_serving(&app).await;
}

#[tokio::test]
async fn a_ten_megabyte_body_is_413_and_stores_nothing() {
    let app = server().await;
    let huge = session(&"x".repeat(10 * 1024 * 1024));
    let (status, _) = call(&app, "PUT", "/v1/working-memory/huge", Some(TOKEN), huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_absent(&app, "huge").await;
    assert_serving(&app).await;
}

#[tokio::test]
async fn hostile_ids_are_400_and_store_nothing() {
    let app = server().await;
    for id in [
        "..%2F..%2Fetc%2Fpasswd",
        "a%00b",
        "%2E%2E",
        "a%5Cb",
        "line%0Abreak",
        &"x".repeat(300),
    ] {
        let uri = format!("/v1/working-memory/{id}");
        let (status, body) = call(&app, "PUT", &uri, Some(TOKEN), session("x")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{id}: {body}");
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .starts_with("Invalid session_id"),
            "{body}"
        );
    }
    let (status, _) = call(
        &app,
        "PUT",
        "/v1/working-memory/s?user_id=..",
        Some(TOKEN),
        session("x"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = call(
        &app,
        "GET",
        "/v1/working-memory/?limit=100",
        Some(TOKEN),
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["total"], 0, "{body}");
    assert_serving(&app).await;
}

#[tokio::test]
async fn missing_or_wrong_tokens_are_401_and_store_nothing() {
    let app = server().await;
    for token in [None, Some("wrong"), Some("test-token-but-longer"), Some("")] {
        let (status, body) = call(
            &app,
            "PUT",
            "/v1/working-memory/sneaky",
            token,
            session("x"),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
        assert_eq!(body["detail"], "unauthorized");
    }
    let (status, _) = call(&app, "GET", "/metrics", None, vec![]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // health stays open for load balancers
    let (status, body) = call(&app, "GET", "/v1/health", None, vec![]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body["now"].as_f64().unwrap() > 0.0);
    assert_absent(&app, "sneaky").await;
    assert_serving(&app).await;
}

#[tokio::test]
async fn empty_content_is_400_and_unknown_ids_404() {
    let app = server().await;
    let (status, body) = call(
        &app,
        "PUT",
        "/v1/working-memory/e",
        Some(TOKEN),
        session("   "),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_absent(&app, "e").await;
    let (status, _) = call(
        &app,
        "POST",
        "/v1/long-term-memory/",
        Some(TOKEN),
        serde_json::to_vec(&json!({"memories": [{"id": "ok", "text": "User likes tea", "memory_type": "semantic", "user_id": "u"}, {"id": "empty", "text": ""}]})).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = call(&app, "GET", "/v1/long-term-memory/ok", Some(TOKEN), vec![]).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "one bad record must store nothing: {body}"
    );
    assert_eq!(body["detail"], "Memory with ID ok not found");
    let (status, _) = call(&app, "DELETE", "/v1/long-term-memory", Some(TOKEN), vec![]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn metrics_count_requests_by_route() {
    let app = server().await;
    assert_serving(&app).await;
    let request = Request::builder()
        .uri("/metrics")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let text = String::from_utf8(
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    assert!(
        text.contains(r#"agentmem_http_requests_total{method="PUT",route="/v1/working-memory/{session_id}",status="200"} 1"#),
        "{text}"
    );
    assert!(text.contains("agentmem_http_request_duration_seconds_bucket"));
}

async fn metrics_text(app: &Router) -> String {
    let request = Request::builder()
        .uri("/metrics")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    String::from_utf8(
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap()
}

#[tokio::test]
async fn made_up_methods_and_raw_paths_do_not_add_series() {
    let app = server().await;
    for i in 0..50 {
        let method = format!("BOGUS{i}");
        let (status, _) = call(
            &app,
            &method,
            &format!("/v1/working-memory/s-{i}"),
            Some(TOKEN),
            vec![],
        )
        .await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        call(&app, &method, &format!("/nowhere/{i}"), None, vec![]).await;
        call(
            &app,
            "GET",
            &format!("/v1/working-memory/s-{i}"),
            Some(TOKEN),
            vec![],
        )
        .await;
    }
    let text = metrics_text(&app).await;
    assert!(!text.contains("BOGUS"), "{text}");
    assert!(
        !text.contains("s-1") && !text.contains("/nowhere"),
        "{text}"
    );
    assert!(
        text.contains(r#"agentmem_http_requests_total{method="OTHER",route="/v1/working-memory/{session_id}",status="405"} 50"#),
        "{text}"
    );
    assert!(
        text.contains(r#"agentmem_http_requests_total{method="GET",route="/v1/working-memory/{session_id}",status="404"} 50"#),
        "{text}"
    );
    let series = text
        .lines()
        .filter(|l| l.starts_with("agentmem_http_requests_total{"))
        .count();
    assert!(
        series <= 4,
        "a few series, not one per method or path: {text}"
    );
}

#[tokio::test]
async fn metrics_need_the_token_when_auth_is_on() {
    let container = StoreUrl::Memory.open().await.unwrap();
    let service = MemoryService::from_container(&container).unwrap();
    let auth = Auth::token(TOKEN).with_api_key("acme", "k-acme").unwrap();
    let guarded = app(service, &ServerConfig::new(auth));
    for token in [None, Some("wrong")] {
        let (status, _) = call(&guarded, "GET", "/metrics", token, vec![]).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
    }
    // a tenant's API key opens the tenant-aware APIs only, not the server's metrics
    let (status, _) = call(&guarded, "GET", "/metrics", Some("k-acme"), vec![]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(metrics_text(&guarded)
        .await
        .contains("agentmem_http_requests_total"));
    // with auth off, they are open like the API
    let container = StoreUrl::Memory.open().await.unwrap();
    let service = MemoryService::from_container(&container).unwrap();
    let open = app(service, &ServerConfig::new(Auth::disabled()));
    let (status, _) = call(&open, "GET", "/metrics", None, vec![]).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_bound_user_cannot_reach_others() {
    let container = StoreUrl::Memory.open().await.unwrap();
    let service = MemoryService::from_container(&container).unwrap();
    let mut config = ServerConfig::new(Auth::disabled());
    config.user = Some("alice".into());
    let app = app(service, &config);
    let (status, _) = call(
        &app,
        "PUT",
        "/v1/working-memory/s?user_id=bob",
        None,
        session("hi"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = call(&app, "PUT", "/v1/working-memory/s", None, session("hi")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["user_id"], "alice");
}
