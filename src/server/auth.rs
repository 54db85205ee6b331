//! Bearer-token authentication, compared in constant time, and the tenant of each
//! request.
//!
//! The server token (`--auth-token`) opens every route and acts for the tenant
//! [`Tenant::DEFAULT`]. API keys (`--api-key TENANT=KEY`) open only the tenant-aware APIs
//! (Anthropic's memory stores under `/v1/memory_stores`, the Redis Agent Memory data
//! plane under `/v1/stores/`) and act for their tenant; elsewhere they get 403, so a
//! tenant's key never reads the single-tenant legacy routes.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::error::ApiError;
use super::tenant::{check_name, Tenant, TenantNameError};

/// The token every request must carry, or none, and the API keys of tenants.
#[derive(Clone)]
pub struct Auth {
    token: Option<Arc<[u8]>>,
    api_keys: Arc<[ApiKey]>,
}

/// A tenant's API key: the tenant, the key's bytes.
type ApiKey = (Arc<str>, Arc<[u8]>);

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("token", &self.token.is_some())
            .field(
                "tenants",
                &self.api_keys.iter().map(|(t, _)| &**t).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Who a request's credentials name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The server token, or any request when authentication is off: every route, the
    /// default tenant.
    Server,
    /// A tenant's API key: the tenant-aware APIs only.
    Tenant(Arc<str>),
}

impl Auth {
    /// Requests must send `Authorization: Bearer <token>`.
    pub fn token(token: impl AsRef<str>) -> Self {
        Self {
            token: Some(token.as_ref().as_bytes().into()),
            api_keys: Arc::new([]),
        }
    }

    /// Every request is let in (unless API keys are added: then requests without the
    /// token must carry one of them).
    pub fn disabled() -> Self {
        Self {
            token: None,
            api_keys: Arc::new([]),
        }
    }

    /// Adds an API key of `tenant`: requests sending `Authorization: Bearer <key>` reach
    /// the tenant-aware APIs as that tenant. The tenant name is 1 to 64 ASCII letters,
    /// digits, `-` or `_`.
    ///
    /// ```
    /// use agentmemory::server::Auth;
    ///
    /// let auth = Auth::token("admin").with_api_key("acme", "k-acme").unwrap();
    /// assert!(auth.allows(Some(b"Bearer k-acme")));
    /// assert!(Auth::disabled().with_api_key("a b", "k").is_err());
    /// ```
    pub fn with_api_key(self, tenant: &str, key: impl AsRef<str>) -> Result<Self, TenantNameError> {
        check_name(tenant)?;
        let mut keys: Vec<_> = self.api_keys.iter().cloned().collect();
        keys.push((tenant.into(), key.as_ref().as_bytes().into()));
        Ok(Self {
            token: self.token,
            api_keys: keys.into(),
        })
    }

    /// Whether `header` (the whole `Authorization` value) lets a request in.
    pub fn allows(&self, header: Option<&[u8]>) -> bool {
        self.caller(header).is_some()
    }

    /// Who `header` names: `None` when it lets nobody in.
    pub fn caller(&self, header: Option<&[u8]>) -> Option<Caller> {
        if self.token.is_none() && self.api_keys.is_empty() {
            return Some(Caller::Server);
        }
        let given = header.and_then(|h| strip_bearer(h))?;
        if self.token.as_deref().is_some_and(|t| same(given, t)) {
            return Some(Caller::Server);
        }
        // every key is compared, so the time taken does not say which one matched
        let mut found = None;
        for (tenant, key) in self.api_keys.iter() {
            if same(given, key) && found.is_none() {
                found = Some(Caller::Tenant(tenant.clone()));
            }
        }
        found
    }
}

/// Equal lengths are compared in constant time; a length mismatch says only the length.
fn same(given: &[u8], expected: &[u8]) -> bool {
    given.ct_eq(expected).into()
}

/// Whether `path` belongs to an API that keeps data per tenant.
pub fn is_tenant_aware(path: &str) -> bool {
    path == "/v1/memory_stores"
        || path.starts_with("/v1/memory_stores/")
        || path.starts_with("/v1/stores/")
}

fn strip_bearer(header: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = header.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(rest)
}

/// The middleware: 401 unless the token or an API key matches (in the error shape of
/// the API the path belongs to), 403 for an API key outside the tenant-aware APIs; the
/// request's [`Tenant`] otherwise. `/v1/health` and `/health` are always open, for load
/// balancers.
pub async fn require(State(auth): State<Auth>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path == "/v1/health" || path == "/health" {
        return next.run(request).await;
    }
    let header = request.headers().get(AUTHORIZATION).map(|v| v.as_bytes());
    let tenant = match auth.caller(header) {
        None => return unauthorized(path),
        Some(Caller::Server) => Tenant(Tenant::DEFAULT.into()),
        Some(Caller::Tenant(tenant)) if is_tenant_aware(path) => Tenant(tenant),
        Some(Caller::Tenant(_)) => {
            return ApiError::Forbidden(
                "this API key opens the memory-stores and data-plane APIs only".into(),
            )
            .into_response()
        }
    };
    request.extensions_mut().insert(tenant);
    next.run(request).await
}

/// The 401 of `path`'s API.
fn unauthorized(path: &str) -> Response {
    if path.starts_with("/v1/memory_stores") {
        super::anthropic::ApiError::authentication().into_response()
    } else if path.starts_with("/v1/stores/") {
        super::redis_agent_memory::ApiError::authentication().into_response()
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

    #[test]
    fn api_keys_name_their_tenant() {
        let auth = Auth::token("s3cret")
            .with_api_key("acme", "k1")
            .unwrap()
            .with_api_key("globex", "k2")
            .unwrap();
        assert_eq!(auth.caller(Some(b"Bearer s3cret")), Some(Caller::Server));
        assert_eq!(
            auth.caller(Some(b"Bearer k2")),
            Some(Caller::Tenant("globex".into()))
        );
        assert_eq!(auth.caller(Some(b"Bearer k3")), None);
        let keys_only = Auth::disabled().with_api_key("acme", "k1").unwrap();
        assert_eq!(keys_only.caller(None), None);
        assert!(is_tenant_aware("/v1/memory_stores/memstore_1/memories"));
        assert!(is_tenant_aware("/v1/stores/s1/session-memory/events"));
        assert!(!is_tenant_aware("/v1/long-term-memory/search"));
    }
}
