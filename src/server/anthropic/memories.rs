//! `/v1/memory_stores/{id}/memories`: create, list, retrieve, update and delete memories
//! by id, each change an immutable version; `content_sha256` preconditions answer 409.
//! `POST .../memories/search` (an agentmem extension) finds memories by meaning and words.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use chrono::Utc;
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ApiError;
use super::paging;
use super::paths;
use super::records::{looks_like, new_id, sha256_hex, MemoryRecord, Operation, VersionRecord};
use super::request::{actor, full_view, JsonBody, QueryParams};
use super::stores::{open, open_writable};
use crate::server::tenant::Tenant;
use crate::server::AppState;

/// The prefix of memory ids.
pub const MEMORY_PREFIX: &str = "mem_";
/// The prefix of version ids.
pub const VERSION_PREFIX: &str = "memver_";
/// Largest content, in bytes (100 kB).
pub const MAX_CONTENT_BYTES: usize = 102_400;

fn check_content(content: &str) -> Result<(), ApiError> {
    if content.len() > MAX_CONTENT_BYTES {
        return Err(ApiError::invalid(format!(
            "content is {} bytes; the maximum is 102,400",
            content.len()
        )));
    }
    Ok(())
}

/// The memory `id` of the store, or 404.
async fn find(
    state: &AppState,
    tenant: &Tenant,
    store: &str,
    id: &str,
) -> Result<MemoryRecord, ApiError> {
    let missing = || ApiError::not_found(format!("memory `{id}` not found"));
    if !looks_like(id, MEMORY_PREFIX) {
        return Err(missing());
    }
    state
        .service
        .memory_stores
        .memory(tenant.as_str(), store, id)
        .await?
        .ok_or_else(missing)
}

/// 409 when another memory of the store is at `path`.
async fn check_free(
    state: &AppState,
    tenant: &Tenant,
    store: &str,
    path: &str,
    except: Option<&str>,
) -> Result<(), ApiError> {
    let taken = state
        .service
        .memory_stores
        .memories(tenant.as_str(), store)
        .await?
        .into_iter()
        .any(|m| m.path == path && Some(m.id.as_str()) != except);
    if taken {
        return Err(ApiError::conflict(format!(
            "a memory already exists at path {path:?}"
        )));
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
pub(super) struct ViewParam {
    view: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct CreateMemory {
    #[serde(default)]
    content: Option<String>,
    path: String,
}

pub(super) async fn create(
    State(state): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
    Path(store_id): Path<String>,
    QueryParams(query): QueryParams<ViewParam>,
    JsonBody(body): JsonBody<CreateMemory>,
) -> Result<Json<Value>, ApiError> {
    let full = full_view(query.view.as_deref(), false)?;
    paths::check(&body.path)?;
    let content = body.content.unwrap_or_default();
    check_content(&content)?;
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &store_id).await;
    open_writable(&state, &tenant, &store_id).await?;
    check_free(&state, &tenant, &store_id, &body.path, None).await?;
    let now = Utc::now();
    let memory = MemoryRecord {
        id: new_id(MEMORY_PREFIX),
        memory_store_id: store_id,
        path: body.path,
        content_sha256: sha256_hex(&content),
        content_size_bytes: content.len() as u64,
        content,
        created_at: now,
        updated_at: now,
        memory_version_id: new_id(VERSION_PREFIX),
    };
    let version = version_of(&memory, Operation::Created, &headers, &tenant);
    stores
        .put_memory(tenant.as_str(), &memory, &version)
        .await?;
    Ok(Json(memory.wire(full)))
}

/// The version recording `memory` as it now is.
fn version_of(
    memory: &MemoryRecord,
    operation: Operation,
    headers: &HeaderMap,
    tenant: &Tenant,
) -> VersionRecord {
    let deleted = operation == Operation::Deleted;
    VersionRecord {
        id: memory.memory_version_id.clone(),
        memory_id: memory.id.clone(),
        memory_store_id: memory.memory_store_id.clone(),
        operation,
        created_at: memory.updated_at,
        content: (!deleted).then(|| memory.content.clone()),
        content_sha256: (!deleted).then(|| memory.content_sha256.clone()),
        content_size_bytes: (!deleted).then_some(memory.content_size_bytes),
        path: Some(memory.path.clone()),
        created_by: Some(actor(headers, tenant)),
        redacted_at: None,
        redacted_by: None,
    }
}

pub(super) async fn retrieve(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store_id, memory_id)): Path<(String, String)>,
    QueryParams(query): QueryParams<ViewParam>,
) -> Result<Json<Value>, ApiError> {
    let full = full_view(query.view.as_deref(), true)?;
    open(&state, &tenant, &store_id).await?;
    let memory = find(&state, &tenant, &store_id, &memory_id).await?;
    Ok(Json(memory.wire(full)))
}

#[derive(Debug, Deserialize)]
pub(super) struct Precondition {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    content_sha256: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct UpdateMemory {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    precondition: Option<Precondition>,
}

/// 409 unless `memory`'s content hash is `expected`.
fn check_hash(memory: &MemoryRecord, expected: &str) -> Result<(), ApiError> {
    if memory.content_sha256 != expected.to_ascii_lowercase() {
        return Err(ApiError::conflict(format!(
            "precondition failed: the memory's content_sha256 is {}, not {expected}",
            memory.content_sha256
        )));
    }
    Ok(())
}

pub(super) async fn update(
    State(state): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
    Path((store_id, memory_id)): Path<(String, String)>,
    QueryParams(query): QueryParams<ViewParam>,
    JsonBody(body): JsonBody<UpdateMemory>,
) -> Result<Json<Value>, ApiError> {
    let full = full_view(query.view.as_deref(), false)?;
    if let Some(path) = &body.path {
        paths::check(path)?;
    }
    if let Some(content) = &body.content {
        check_content(content)?;
    }
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &store_id).await;
    open_writable(&state, &tenant, &store_id).await?;
    let mut memory = find(&state, &tenant, &store_id, &memory_id).await?;
    if let Some(precondition) = &body.precondition {
        match (precondition.kind.as_str(), &precondition.content_sha256) {
            ("content_sha256", Some(expected)) => check_hash(&memory, expected)?,
            ("content_sha256", None) => {}
            (other, _) => {
                return Err(ApiError::invalid(format!(
                    "unknown precondition type `{other}`"
                )))
            }
        }
    }
    let new_path = body.path.filter(|p| *p != memory.path);
    let new_content = body.content.filter(|c| *c != memory.content);
    if new_path.is_none() && new_content.is_none() {
        return Ok(Json(memory.wire(full)));
    }
    if let Some(path) = new_path {
        check_free(&state, &tenant, &store_id, &path, Some(&memory.id)).await?;
        memory.path = path;
    }
    if let Some(content) = new_content {
        memory.content_sha256 = sha256_hex(&content);
        memory.content_size_bytes = content.len() as u64;
        memory.content = content;
    }
    memory.updated_at = Utc::now();
    memory.memory_version_id = new_id(VERSION_PREFIX);
    let version = version_of(&memory, Operation::Modified, &headers, &tenant);
    stores
        .put_memory(tenant.as_str(), &memory, &version)
        .await?;
    Ok(Json(memory.wire(full)))
}

#[derive(Debug, Deserialize)]
pub(super) struct DeleteParams {
    expected_content_sha256: Option<String>,
}

pub(super) async fn delete(
    State(state): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
    Path((store_id, memory_id)): Path<(String, String)>,
    QueryParams(query): QueryParams<DeleteParams>,
) -> Result<Json<Value>, ApiError> {
    let stores = &state.service.memory_stores;
    let _writing = stores.lock(tenant.as_str(), &store_id).await;
    open_writable(&state, &tenant, &store_id).await?;
    let mut memory = find(&state, &tenant, &store_id, &memory_id).await?;
    if let Some(expected) = &query.expected_content_sha256 {
        check_hash(&memory, expected)?;
    }
    memory.updated_at = Utc::now();
    memory.memory_version_id = new_id(VERSION_PREFIX);
    let version = version_of(&memory, Operation::Deleted, &headers, &tenant);
    stores
        .remove_memory(tenant.as_str(), &memory, &version)
        .await?;
    Ok(Json(json!({"id": memory.id, "type": "memory_deleted"})))
}

#[derive(Debug, Deserialize)]
pub(super) struct ListMemories {
    depth: Option<usize>,
    limit: Option<usize>,
    page: Option<String>,
    path_prefix: Option<String>,
    view: Option<String>,
}

/// Sorts after every character a path holds (the group's cursor goes past its members).
const PAST_GROUP: char = char::MAX;

/// What a listing holds at one place: a memory, or a prefix grouping deeper ones.
enum Item {
    Memory(MemoryRecord),
    Prefix(String),
}

/// The items of `memories` (in path order) below `prefix`, `depth` levels deep (0: all).
fn items_below(memories: Vec<MemoryRecord>, prefix: &str, depth: usize) -> Vec<(String, Item)> {
    let mut out: Vec<(String, Item)> = Vec::new();
    for memory in memories {
        let Some(rest) = memory.path.strip_prefix(prefix) else {
            continue;
        };
        let segments: Vec<&str> = rest.split('/').collect();
        if depth == 0 || segments.len() <= depth {
            out.push((memory.path.clone(), Item::Memory(memory)));
            continue;
        }
        let group = format!("{prefix}{}/", segments[..depth].join("/"));
        let seen = matches!(out.last(), Some((_, Item::Prefix(p))) if *p == group);
        if !seen {
            // the sort key is past every path in the group, so the next page skips them
            out.push((format!("{group}{PAST_GROUP}"), Item::Prefix(group)));
        }
    }
    out
}

pub(super) async fn list(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store_id): Path<String>,
    QueryParams(query): QueryParams<ListMemories>,
) -> Result<Json<Value>, ApiError> {
    let full = full_view(query.view.as_deref(), false)?;
    let limit = paging::limit(query.limit, full)?;
    let prefix = query.path_prefix.unwrap_or_else(|| "/".to_owned());
    paths::check_prefix(&prefix)?;
    open(&state, &tenant, &store_id).await?;
    let mut memories = state
        .service
        .memory_stores
        .memories(tenant.as_str(), &store_id)
        .await?;
    memories.sort_by(|a, b| a.path.cmp(&b.path));
    let items = items_below(memories, &prefix, query.depth.unwrap_or(0))
        .into_iter()
        .map(|(key, item)| {
            let value = match item {
                Item::Memory(m) => m.wire(full),
                Item::Prefix(path) => json!({"type": "memory_prefix", "path": path}),
            };
            (key, value)
        })
        .collect();
    Ok(Json(paging::page(
        items,
        query.page.as_deref(),
        limit,
        false,
    )?))
}

#[derive(Debug, Deserialize)]
pub(super) struct SearchBody {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

pub(super) async fn search(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store_id): Path<String>,
    JsonBody(body): JsonBody<SearchBody>,
) -> Result<Json<Value>, ApiError> {
    let limit = paging::limit(body.limit, false)?;
    open(&state, &tenant, &store_id).await?;
    let hits = state
        .service
        .memory_stores
        .search(tenant.as_str(), &store_id, &body.query, limit)
        .await?;
    let data: Vec<Value> = hits
        .into_iter()
        .map(|(memory, score)| {
            let mut value = memory.wire(true);
            value["score"] = json!(score);
            value
        })
        .collect();
    Ok(Json(json!({"data": data, "next_page": null})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(path: &str) -> MemoryRecord {
        MemoryRecord {
            id: new_id(MEMORY_PREFIX),
            memory_store_id: "memstore_x".into(),
            path: path.into(),
            content: String::new(),
            content_sha256: sha256_hex(""),
            content_size_bytes: 0,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            memory_version_id: new_id(VERSION_PREFIX),
        }
    }

    #[test]
    fn depth_groups_deeper_memories_into_prefixes() {
        // in path order, as the listing sorts them
        let all = [
            "/a.md",
            "/notes-x/e.md",
            "/notes/b.md",
            "/notes/deep/c.md",
            "/notes/deep/d.md",
        ];
        let keys = |prefix: &str, depth| {
            items_below(all.iter().map(|p| memory(p)).collect(), prefix, depth)
                .into_iter()
                .map(|(_, item)| match item {
                    Item::Memory(m) => m.path,
                    Item::Prefix(p) => format!("{p}*"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys("/notes/", 0),
            ["/notes/b.md", "/notes/deep/c.md", "/notes/deep/d.md"]
        );
        assert_eq!(keys("/notes/", 1), ["/notes/b.md", "/notes/deep/*"]);
        assert_eq!(keys("/", 1), ["/a.md", "/notes-x/*", "/notes/*"]);
    }
}
