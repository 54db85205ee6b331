//! Request extractors that answer schema errors the way the reference server does:
//! 422 with a `detail` list, whatever the content type, malformed JSON included.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A JSON body; 422 when it is not JSON or does not fit `T`.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = axum::response::Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        use axum::response::IntoResponse;
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        serde_json::from_slice(&bytes)
            .map(Body)
            .map_err(|e| ApiError::unprocessable("body", e.to_string()).into_response())
    }
}

/// Query parameters; 422 when they do not fit `T`.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        serde_urlencoded::from_str(query)
            .map(Query)
            .map_err(|e| ApiError::unprocessable("query", e.to_string()))
    }
}

/// Every `(name, value)` pair of the query, repeated names included.
pub struct QueryPairs(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        serde_urlencoded::from_str(query)
            .map(QueryPairs)
            .map_err(|e| ApiError::unprocessable("query", e.to_string()))
    }
}
