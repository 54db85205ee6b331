//! `/v1/memory_stores`: create, list, retrieve, update, archive and delete stores.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ApiError;
use super::paging;
use super::records::{looks_like, new_id, StoreRecord};
use super::request::{JsonBody, QueryParams};
use crate::server::tenant::Tenant;
use crate::server::AppState;

/// The prefix of store ids.
pub const STORE_PREFIX: &str = "memstore_";

/// The store `id` of `tenant`, or 404.
pub async fn open(state: &AppState, tenant: &Tenant, id: &str) -> Result<StoreRecord, ApiError> {
    let missing = || ApiError::not_found(format!("memory store `{id}` not found"));
    if !looks_like(id, STORE_PREFIX) {
        return Err(missing());
    }
    state
        .service
        .memory_stores
        .store(tenant.as_str(), id)
        .await?
        .ok_or_else(missing)
}

/// The store `id` of `tenant` for a write: 404 when unknown, 400 when archived.
pub async fn open_writable(
    state: &AppState,
    tenant: &Tenant,
    id: &str,
) -> Result<StoreRecord, ApiError> {
    let store = open(state, tenant, id).await?;
    if store.archived_at.is_some() {
        return Err(ApiError::invalid(format!(
            "memory store `{id}` is archived and can't be changed"
        )));
    }
    Ok(store)
}

fn check_name(name: &str) -> Result<(), ApiError> {
    let chars = name.chars().count();
    if !(1..=255).contains(&chars) || name.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            "name must be 1 to 255 characters long, without control characters",
        ));
    }
    Ok(())
}

fn check_description(description: &str) -> Result<(), ApiError> {
    if description.chars().count() > 1024 {
        return Err(ApiError::invalid("description is at most 1,024 characters"));
    }
    Ok(())
}

fn check_metadata(metadata: &BTreeMap<String, String>) -> Result<(), ApiError> {
    if metadata.len() > 16 {
        return Err(ApiError::invalid("metadata holds at most 16 pairs"));
    }
    for (key, value) in metadata {
        if !(1..=64).contains(&key.chars().count()) || value.chars().count() > 512 {
            return Err(ApiError::invalid(
                "metadata keys are 1 to 64 characters long and values at most 512",
            ));
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
pub(super) struct CreateStore {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    metadata: Option<BTreeMap<String, String>>,
}

pub(super) async fn create(
    State(state): State<AppState>,
    tenant: Tenant,
    JsonBody(body): JsonBody<CreateStore>,
) -> Result<Json<Value>, ApiError> {
    check_name(&body.name)?;
    let description = body.description.unwrap_or_default();
    check_description(&description)?;
    let metadata = body.metadata.unwrap_or_default();
    check_metadata(&metadata)?;
    let now = Utc::now();
    let store = StoreRecord {
        id: new_id(STORE_PREFIX),
        name: body.name,
        description,
        metadata,
        created_at: now,
        updated_at: now,
        archived_at: None,
    };
    state
        .service
        .memory_stores
        .put_store(tenant.as_str(), &store)
        .await?;
    Ok(Json(store.wire()))
}

#[derive(Debug, Deserialize)]
pub(super) struct ListStores {
    #[serde(rename = "created_at[gte]")]
    created_at_gte: Option<DateTime<Utc>>,
    #[serde(rename = "created_at[lte]")]
    created_at_lte: Option<DateTime<Utc>>,
    #[serde(default)]
    include_archived: Option<bool>,
    limit: Option<usize>,
    page: Option<String>,
}

pub(super) async fn list(
    State(state): State<AppState>,
    tenant: Tenant,
    QueryParams(query): QueryParams<ListStores>,
) -> Result<Json<Value>, ApiError> {
    let limit = paging::limit(query.limit, false)?;
    let mut stores = state.service.memory_stores.stores(tenant.as_str()).await?;
    stores.retain(|s| {
        (query.include_archived.unwrap_or(false) || s.archived_at.is_none())
            && query.created_at_gte.is_none_or(|t| s.created_at >= t)
            && query.created_at_lte.is_none_or(|t| s.created_at <= t)
    });
    // newest first
    stores.sort_by(|a, b| b.id.cmp(&a.id));
    let items = stores
        .into_iter()
        .map(|s| (s.id.clone(), s.wire()))
        .collect();
    Ok(Json(paging::page(
        items,
        query.page.as_deref(),
        limit,
        true,
    )?))
}

pub(super) async fn retrieve(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(open(&state, &tenant, &id).await?.wire()))
}

#[derive(Debug, Deserialize)]
pub(super) struct UpdateStore {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    metadata: Option<BTreeMap<String, Option<String>>>,
}

pub(super) async fn update(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<UpdateStore>,
) -> Result<Json<Value>, ApiError> {
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &id).await;
    let mut store = open_writable(&state, &tenant, &id).await?;
    if let Some(name) = body.name {
        check_name(&name)?;
        store.name = name;
    }
    if let Some(description) = body.description {
        check_description(&description)?;
        store.description = description;
    }
    if let Some(changes) = body.metadata {
        for (key, value) in changes {
            match value {
                Some(value) => store.metadata.insert(key, value),
                None => store.metadata.remove(&key),
            };
        }
        check_metadata(&store.metadata)?;
    }
    store.updated_at = Utc::now();
    stores.put_store(tenant.as_str(), &store).await?;
    Ok(Json(store.wire()))
}

pub(super) async fn archive(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &id).await;
    let mut store = open(&state, &tenant, &id).await?;
    if store.archived_at.is_none() {
        let now = Utc::now();
        store.archived_at = Some(now);
        store.updated_at = now;
        stores.put_store(tenant.as_str(), &store).await?;
    }
    Ok(Json(store.wire()))
}

pub(super) async fn delete(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &id).await;
    let store = open(&state, &tenant, &id).await?;
    stores.delete_store(tenant.as_str(), &store.id).await?;
    Ok(Json(
        json!({"id": store.id, "type": "memory_store_deleted"}),
    ))
}
