//! Failures of a request and the status and body each one answers with.
//!
//! The bodies follow the reference server (FastAPI): `{"detail": "…"}` for 4xx/5xx, and for
//! 422 a list of `{"type", "loc", "msg"}` objects.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use agentmemory_core::MemoryError;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The resource does not exist (404).
    #[error("{0}")]
    NotFound(String),
    /// The request is well-formed but refused (400): empty content, a hostile id.
    #[error("{0}")]
    BadRequest(String),
    /// The body or query does not fit the schema (422).
    #[error("{msg}")]
    Unprocessable {
        /// Where: `body`, `query`, `path`.
        location: &'static str,
        /// What.
        msg: String,
    },
    /// The server is bound to another user (403).
    #[error("{0}")]
    Forbidden(String),
    /// Missing or wrong bearer token (401).
    #[error("unauthorized")]
    Unauthorized,
    /// The server is too busy to take the request now (503, with `Retry-After`): e.g. a
    /// `PUT` whose background work found the queue full for too long. Nothing was stored.
    #[error("{reason}")]
    Unavailable {
        /// Why, for the client.
        reason: String,
        /// The `Retry-After` the answer carries, in seconds.
        retry_after_seconds: u64,
    },
    /// The store failed (500; its message is logged, not sent) or refused the input (400).
    #[error("store error")]
    Store(#[from] MemoryError),
}

impl ApiError {
    /// A 422 for `location`.
    pub fn unprocessable(location: &'static str, msg: impl Into<String>) -> Self {
        ApiError::Unprocessable {
            location,
            msg: msg.into(),
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Store(MemoryError::PayloadTooLarge { .. }) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Store(e) if is_invalid_input(e) => StatusCode::BAD_REQUEST,
            ApiError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Whether a store refused the input itself (bad importance, bad key...), not failed.
fn is_invalid_input(error: &MemoryError) -> bool {
    matches!(error, MemoryError::InvalidArgument { .. })
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = match &self {
            ApiError::Unprocessable { location, msg } => json!({
                "detail": [{"type": "value_error", "loc": [location], "msg": msg}]
            }),
            ApiError::Store(e) if status == StatusCode::INTERNAL_SERVER_ERROR => {
                tracing::error!(error = %e.chain(), "request failed in the store");
                json!({"detail": "Internal server error"})
            }
            ApiError::Store(e) => json!({"detail": e.chain().to_string()}),
            other => json!({"detail": other.to_string()}),
        };
        let mut response = (status, Json(body)).into_response();
        if let ApiError::Unavailable {
            retry_after_seconds,
            ..
        } = &self
        {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(*retry_after_seconds),
            );
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
