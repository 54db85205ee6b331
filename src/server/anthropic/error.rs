//! Failures of the memory-stores API, in the shape the `anthropic` SDK parses:
//! `{"type": "error", "error": {"type": "not_found_error", "message": "..."}}` with the
//! status its exception types map (400 `BadRequestError`, 401 `AuthenticationError`,
//! 403 `PermissionDeniedError`, 404 `NotFoundError`, 409 `ConflictError`, 500
//! `InternalServerError`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use agentmemory_core::MemoryError;

/// A failed memory-stores request.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    status: StatusCode,
    kind: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            message: message.into(),
        }
    }

    /// 400 `invalid_request_error`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    /// 401 `authentication_error`.
    pub fn authentication() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid x-api-key or bearer token",
        )
    }

    /// 404 `not_found_error`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found_error", message)
    }

    /// 409: a precondition failed or a path is taken.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "invalid_request_error", message)
    }
}

impl From<MemoryError> for ApiError {
    fn from(error: MemoryError) -> Self {
        if matches!(error, MemoryError::InvalidArgument { .. }) {
            return Self::invalid(error.chain().to_string());
        }
        tracing::error!(error = %error.chain(), "memory-stores request failed in the store");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "Internal server error",
        )
    }
}

impl From<crate::server::error::ApiError> for ApiError {
    fn from(error: crate::server::error::ApiError) -> Self {
        use crate::server::error::ApiError as Legacy;
        match error {
            Legacy::Store(e) => e.into(),
            Legacy::NotFound(m) => Self::not_found(m),
            Legacy::Forbidden(m) => Self::new(StatusCode::FORBIDDEN, "permission_error", m),
            Legacy::Unauthorized => Self::authentication(),
            other => Self::invalid(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "type": "error",
            "error": {"type": self.kind, "message": self.message},
        });
        (self.status, Json(body)).into_response()
    }
}
