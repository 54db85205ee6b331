//! Failures of the data-plane API in the shape the `redis-agent-memory` SDK parses
//! (RFC 7807 problem details): `{"title", "type": "/errors/resource-not-found",
//! "status": 404, "detail"}` with `application/json`, which the SDK raises as
//! `NotFoundErrorResponseContent` and its siblings.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use agentmemory_core::MemoryError;

/// A failed data-plane request.
#[derive(Debug, thiserror::Error)]
#[error("{detail}")]
pub struct ApiError {
    status: StatusCode,
    title: &'static str,
    kind: &'static str,
    detail: String,
}

impl ApiError {
    fn new(status: StatusCode, title: &'static str, kind: &'static str, detail: String) -> Self {
        Self {
            status,
            title,
            kind,
            detail,
        }
    }

    /// 400 `/errors/invalid-data`.
    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "Invalid request",
            "/errors/invalid-data",
            detail.into(),
        )
    }

    /// 401 `/errors/authentication-failed`.
    pub fn authentication() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "Authentication failed",
            "/errors/authentication-failed",
            "missing or invalid API key".into(),
        )
    }

    /// 403 `/errors/insufficient-permissions`.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            "/errors/insufficient-permissions",
            detail.into(),
        )
    }

    /// 404 `/errors/resource-not-found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "Resource not found",
            "/errors/resource-not-found",
            detail.into(),
        )
    }
}

impl From<MemoryError> for ApiError {
    fn from(error: MemoryError) -> Self {
        if matches!(error, MemoryError::InvalidArgument { .. }) {
            return Self::invalid(error.chain().to_string());
        }
        tracing::error!(error = %error.chain(), "data-plane request failed in the store");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Unexpected error",
            "/errors/unexpected-error",
            "Internal server error".into(),
        )
    }
}

impl From<crate::server::error::ApiError> for ApiError {
    fn from(error: crate::server::error::ApiError) -> Self {
        use crate::server::error::ApiError as Legacy;
        match error {
            Legacy::Store(e) => e.into(),
            Legacy::NotFound(m) => Self::not_found(m),
            Legacy::Forbidden(m) => Self::forbidden(m),
            Legacy::Unauthorized => Self::authentication(),
            other => Self::invalid(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "title": self.title,
            "type": self.kind,
            "status": self.status.as_u16(),
            "detail": self.detail,
        });
        (self.status, Json(body)).into_response()
    }
}
