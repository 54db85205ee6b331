//! [`Tenant`]: whose data a request may touch in the tenant-aware APIs (Anthropic's
//! memory stores, the Redis Agent Memory data plane).
//!
//! The auth middleware puts one in every request it lets in: the tenant of the API key
//! the request carried ([`Auth::with_api_key`](super::Auth::with_api_key)), or
//! [`Tenant::DEFAULT`] for the server token and for a server without authentication.
//! Every store key of those APIs starts with the tenant, so two API keys of different
//! tenants never see each other's stores, memories or sessions.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// The tenant a request acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant(pub Arc<str>);

impl Tenant {
    /// The tenant of the server token (and of every request when authentication is off).
    pub const DEFAULT: &'static str = "default";

    /// The tenant's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a tenant name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tenant name `{name}`: use 1 to 64 ASCII letters, digits, `-` or `_`")]
pub struct TenantNameError {
    /// The name refused.
    pub name: String,
}

/// Checks a tenant name: 1 to 64 ASCII letters, digits, `-` or `_` (it is part of store
/// keys and ids).
pub fn check_name(name: &str) -> Result<(), TenantNameError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(TenantNameError {
            name: name.to_owned(),
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Tenant {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Tenant>()
            .cloned()
            .unwrap_or_else(|| Tenant(Tenant::DEFAULT.into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain() {
        assert!(check_name("acme-1_x").is_ok());
        for bad in ["", "a b", "a:b", "a/b", "é", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
