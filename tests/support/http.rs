//! One request to an in-process server app, shared by the server test files
//! (`#[path = "support/http.rs"] mod http_support;`).

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use serde_json::Value;
use tower::ServiceExt;

/// Sends `method uri` with `body` as JSON (no body for `Value::Null`) and returns the
/// status and the answer parsed as JSON (`Value::Null` when it is not JSON).
pub async fn call(app: &Router, method: &str, uri: &str, body: Value) -> (StatusCode, Value) {
    let body = if body.is_null() {
        Vec::new()
    } else {
        serde_json::to_vec(&body).unwrap()
    };
    let request = Request::builder()
        .method(method)
        .uri(uri)
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
