//! What a memory-stores request carries besides its path: the JSON body and the query
//! (refused with this API's 400), and who is writing ([`Actor`]).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::records::Actor;
use crate::server::tenant::Tenant;

/// The header naming the session a write comes from (an agentmem extension: versions
/// written with it have a `session_actor` and match `session_id` filters).
pub const SESSION_HEADER: &str = "x-agentmem-session-id";

/// A JSON body (an empty body reads as `{}`).
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|e| ApiError::invalid(e.body_text()))?;
        let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
            b"{}"
        } else {
            &bytes
        };
        serde_json::from_slice(bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::invalid(format!("invalid request body: {e}")))
    }
}

/// Query parameters.
pub struct QueryParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        serde_urlencoded::from_str(parts.uri.query().unwrap_or(""))
            .map(QueryParams)
            .map_err(|e| ApiError::invalid(format!("invalid query parameters: {e}")))
    }
}

/// Who is writing: the session the request names, else the tenant's API key.
pub fn actor(headers: &HeaderMap, tenant: &Tenant) -> Actor {
    match headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|s| !s.is_empty() && s.len() <= 256)
    {
        Some(session) => Actor::SessionActor {
            session_id: session.to_owned(),
        },
        None => Actor::ApiActor {
            api_key_id: api_key_id(tenant),
        },
    }
}

/// The id agentmem gives the API key(s) of a tenant: `apikey_` then the tenant.
pub fn api_key_id(tenant: &Tenant) -> String {
    format!("apikey_{}", tenant.as_str())
}

/// `view=full` or `view=basic`; `default_full` when absent.
pub fn full_view(view: Option<&str>, default_full: bool) -> Result<bool, ApiError> {
    match view {
        None => Ok(default_full),
        Some("full") => Ok(true),
        Some("basic") => Ok(false),
        Some(other) => Err(ApiError::invalid(format!(
            "view must be `basic` or `full`, got `{other}`"
        ))),
    }
}
