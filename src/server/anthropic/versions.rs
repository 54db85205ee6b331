//! `/v1/memory_stores/{id}/memory_versions`: list (with their filters), retrieve and
//! redact versions. Versions stay after their memory is deleted; redaction clears a
//! version's content, hash, size and path and says who redacted it when.

use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::error::ApiError;
use super::memories::VERSION_PREFIX;
use super::paging;
use super::records::{looks_like, Actor, Operation, VersionRecord};
use super::request::{api_key_id, full_view, QueryParams};
use super::stores::open;
use crate::server::tenant::Tenant;
use crate::server::AppState;

async fn find(
    state: &AppState,
    tenant: &Tenant,
    store: &str,
    id: &str,
) -> Result<VersionRecord, ApiError> {
    let missing = || ApiError::not_found(format!("memory version `{id}` not found"));
    if !looks_like(id, VERSION_PREFIX) {
        return Err(missing());
    }
    state
        .service
        .memory_stores
        .version(tenant.as_str(), store, id)
        .await?
        .ok_or_else(missing)
}

#[derive(Debug, Deserialize)]
pub(super) struct ListVersions {
    api_key_id: Option<String>,
    #[serde(rename = "created_at[gte]")]
    created_at_gte: Option<DateTime<Utc>>,
    #[serde(rename = "created_at[lte]")]
    created_at_lte: Option<DateTime<Utc>>,
    limit: Option<usize>,
    memory_id: Option<String>,
    operation: Option<String>,
    page: Option<String>,
    service_account_id: Option<String>,
    session_id: Option<String>,
    view: Option<String>,
}

impl ListVersions {
    fn matches(&self, version: &VersionRecord, operation: Option<Operation>) -> bool {
        self.memory_id
            .as_deref()
            .is_none_or(|m| version.memory_id == m)
            && operation.is_none_or(|o| version.operation == o)
            && self
                .session_id
                .as_deref()
                .is_none_or(|s| version.session_id() == Some(s))
            && self
                .api_key_id
                .as_deref()
                .is_none_or(|k| version.api_key_id() == Some(k))
            // agentmem has no service accounts: such a filter matches nothing
            && self.service_account_id.is_none()
            && self.created_at_gte.is_none_or(|t| version.created_at >= t)
            && self.created_at_lte.is_none_or(|t| version.created_at <= t)
    }
}

pub(super) async fn list(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store_id): Path<String>,
    QueryParams(query): QueryParams<ListVersions>,
) -> Result<Json<Value>, ApiError> {
    let full = full_view(query.view.as_deref(), false)?;
    let limit = paging::limit(query.limit, full)?;
    let operation = match query.operation.as_deref() {
        None => None,
        Some(name) => Some(Operation::parse(name).ok_or_else(|| {
            ApiError::invalid(format!(
                "operation must be `created`, `modified` or `deleted`, got `{name}`"
            ))
        })?),
    };
    open(&state, &tenant, &store_id).await?;
    let mut versions = state
        .service
        .memory_stores
        .versions(tenant.as_str(), &store_id)
        .await?;
    versions.retain(|v| query.matches(v, operation));
    // newest first
    versions.sort_by(|a, b| b.id.cmp(&a.id));
    let items = versions
        .into_iter()
        .map(|v| (v.id.clone(), v.wire(full)))
        .collect();
    Ok(Json(paging::page(
        items,
        query.page.as_deref(),
        limit,
        true,
    )?))
}

#[derive(Debug, Deserialize)]
pub(super) struct ViewParam {
    view: Option<String>,
}

pub(super) async fn retrieve(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store_id, version_id)): Path<(String, String)>,
    QueryParams(query): QueryParams<ViewParam>,
) -> Result<Json<Value>, ApiError> {
    let full = full_view(query.view.as_deref(), true)?;
    open(&state, &tenant, &store_id).await?;
    Ok(Json(
        find(&state, &tenant, &store_id, &version_id)
            .await?
            .wire(full),
    ))
}

pub(super) async fn redact(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store_id, version_id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &store_id).await;
    open(&state, &tenant, &store_id).await?;
    let mut version = find(&state, &tenant, &store_id, &version_id).await?;
    if version.redacted_at.is_some() {
        return Ok(Json(version.wire(true)));
    }
    let current = stores
        .memory(tenant.as_str(), &store_id, &version.memory_id)
        .await?
        .is_some_and(|m| m.memory_version_id == version.id);
    if current {
        return Err(ApiError::conflict(format!(
            "version `{version_id}` holds the memory's current content; update or delete the memory first"
        )));
    }
    version.content = None;
    version.content_sha256 = None;
    version.content_size_bytes = None;
    version.path = None;
    version.redacted_at = Some(Utc::now());
    version.redacted_by = Some(Actor::ApiActor {
        api_key_id: api_key_id(&tenant),
    });
    stores.put_version(tenant.as_str(), &version).await?;
    Ok(Json(version.wire(true)))
}
