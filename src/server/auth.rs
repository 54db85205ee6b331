//! Bearer-token authentication, compared in constant time.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::error::ApiError;

/// The token every request must carry, or none.
#[derive(Clone, Debug)]
pub struct Auth {
    token: Option<std::sync::Arc<[u8]>>,
}

impl Auth {
    /// Requests must send `Authorization: Bearer <token>`.
    pub fn token(token: impl AsRef<str>) -> Self {
        Self {
            token: Some(token.as_ref().as_bytes().into()),
        }
    }

    /// Every request is let in.
    pub fn disabled() -> Self {
        Self { token: None }
    }

    /// Whether `header` (the whole `Authorization` value) carries the token.
    pub fn allows(&self, header: Option<&[u8]>) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        let Some(given) = header.and_then(|h| strip_bearer(h)) else {
            return false;
        };
        // equal lengths are compared in constant time; a length mismatch says only the length
        given.ct_eq(expected).into()
    }
}

fn strip_bearer(header: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = header.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest)
}

/// The middleware: 401 `{"detail": "unauthorized"}` unless the token matches.
/// `/v1/health` is always open, for load balancers.
pub async fn require(State(auth): State<Auth>, request: Request, next: Next) -> Response {
    if request.uri().path() == "/v1/health" {
        return next.run(request).await;
    }
    let header = request.headers().get(AUTHORIZATION).map(|v| v.as_bytes());
    if auth.allows(header) {
        next.run(request).await
    } else {
        ApiError::Unauthorized.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_passes() {
        let auth = Auth::token("s3cret");
        assert!(auth.allows(Some(b"Bearer s3cret")));
        assert!(auth.allows(Some(b"bearer s3cret")));
        assert!(!auth.allows(Some(b"Bearer s3cre")));
        assert!(!auth.allows(Some(b"Bearer s3cret2")));
        assert!(!auth.allows(Some(b"Basic s3cret")));
        assert!(!auth.allows(None));
        assert!(Auth::disabled().allows(None));
    }
}
