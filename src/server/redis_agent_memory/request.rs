//! The JSON body and query of a data-plane request (refused with this API's 400), and
//! the store a request names.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::server::tenant::Tenant;

/// A JSON body.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|e| ApiError::invalid(e.body_text()))?;
        serde_json::from_slice(&bytes)
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

/// One store of one tenant: the scope of every data-plane request.
#[derive(Debug, Clone)]
pub struct StoreScope {
    /// The tenant.
    pub tenant: Tenant,
    /// The store id from the path.
    pub store: String,
}

impl StoreScope {
    /// The scope of `store` for `tenant`; 400 for an id that is empty, over 128 bytes,
    /// or holds anything but ASCII letters, digits, `-`, `_` and `.`.
    pub fn new(tenant: Tenant, store: String) -> Result<Self, ApiError> {
        let ok = !store.is_empty()
            && store.len() <= 128
            && store != "."
            && store != ".."
            && store
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !ok {
            return Err(ApiError::invalid(format!("invalid store id {store:?}")));
        }
        Ok(Self { tenant, store })
    }

    /// The working-memory and long-term namespace of the store: `ram:TENANT:STORE`.
    pub fn namespace(&self) -> String {
        format!("ram:{}:{}", self.tenant.as_str(), self.store)
    }

    /// The long-term memory id agentmem keeps for the client's `id` (ids are global in
    /// long-term memory; the prefix keeps stores and tenants apart).
    pub fn memory_id(&self, id: &str) -> String {
        format!("{}:{id}", self.namespace())
    }

    /// The client's id of a long-term memory of this store: the id it was created with,
    /// or, for a memory the server extracted from the store's sessions, its own id.
    pub fn client_id<'a>(&self, stored: &'a str) -> &'a str {
        stored
            .strip_prefix(&self.namespace())
            .and_then(|rest| rest.strip_prefix(':'))
            .unwrap_or(stored)
    }
}
