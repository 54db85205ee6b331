//! Long-term memory of a store: `POST`/`DELETE /v1/stores/{store}/long-term-memory`
//! (bulk create, bulk delete), `POST .../long-term-memory/search`, `GET`/`PATCH
//! .../long-term-memory/{id}`, over the server's long-term memory (the same facts and
//! documents as the v0 routes, in the store's namespace `ram:TENANT:STORE`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::error::ApiError;
use super::request::{JsonBody, StoreScope};
use crate::server::tenant::Tenant;
use crate::server::wire::{MemoryType, SearchRequest, SetFilter, TagFilter, WireMemory};
use crate::server::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CreateRecord {
    id: String,
    text: String,
    owner_id: String,
    #[serde(default)]
    memory_type: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    topics: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct BulkCreate {
    memories: Vec<CreateRecord>,
}

fn memory_type(name: Option<&str>) -> Result<MemoryType, ApiError> {
    match name.map(str::to_ascii_lowercase).as_deref() {
        None | Some("semantic") => Ok(MemoryType::Semantic),
        Some("episodic") => Ok(MemoryType::Episodic),
        Some("message") => Ok(MemoryType::Message),
        Some(other) => Err(ApiError::invalid(format!(
            "memoryType must be semantic, episodic or message, got `{other}`"
        ))),
    }
}

/// The SDK's `MemoryRecord` of a stored memory of `scope`.
fn record_json(scope: &StoreScope, memory: &WireMemory) -> Value {
    let id = scope.client_id(&memory.id);
    json!({
        "id": id,
        "text": memory.text,
        "createdAt": memory.created_at,
        "updatedAt": memory.updated_at,
        "memoryType": memory.memory_type.as_str(),
        "sessionId": memory.session_id,
        "ownerId": memory.user_id,
        "topics": memory.topics,
    })
}

pub(super) async fn bulk_create(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store): Path<String>,
    JsonBody(body): JsonBody<BulkCreate>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let mut records = Vec::with_capacity(body.memories.len());
    let mut created = Vec::with_capacity(body.memories.len());
    for record in body.memories {
        let mut memory: WireMemory = serde_json::from_value(json!({
            "id": scope.memory_id(&record.id),
            "text": record.text,
        }))
        .map_err(|e| ApiError::invalid(e.to_string()))?;
        memory.user_id = Some(record.owner_id);
        memory.namespace = Some(scope.namespace());
        memory.session_id = record.session_id;
        memory.topics = record.topics;
        memory.memory_type = memory_type(record.memory_type.as_deref())?;
        created.push(record.id);
        records.push(memory);
    }
    state.service.long_term.create(records).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"created": created, "errors": []})),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BulkDelete {
    memory_ids: Vec<String>,
}

pub(super) async fn bulk_delete(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store): Path<String>,
    JsonBody(body): JsonBody<BulkDelete>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let mut deleted = Vec::new();
    let mut errors = Vec::new();
    for id in body.memory_ids {
        match find(&state, &scope, &id).await {
            Ok(memory)
                if state
                    .service
                    .long_term
                    .delete(std::slice::from_ref(&memory.id))
                    .await?
                    > 0 =>
            {
                deleted.push(id);
            }
            Ok(_) | Err(_) => errors.push(json!({"id": id, "error": "not found"})),
        }
    }
    Ok(Json(json!({"deleted": deleted, "errors": errors})))
}

/// The memory `id` of the store (one the client created, or one the server extracted
/// from the store's sessions), or 404.
async fn find(state: &AppState, scope: &StoreScope, id: &str) -> Result<WireMemory, ApiError> {
    crate::server::ids::check("memoryId", id)?;
    let namespace = scope.namespace();
    for stored in [scope.memory_id(id), id.to_owned()] {
        let found = state.service.long_term.get(&stored).await?;
        if let Some(memory) = found.filter(|m| m.namespace.as_deref() == Some(namespace.as_str())) {
            return Ok(memory);
        }
    }
    Err(ApiError::not_found(format!("memory `{id}` not found")))
}

pub(super) async fn get(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store, id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let memory = find(&state, &scope, &id).await?;
    Ok(Json(record_json(&scope, &memory)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UpdateRecord {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    memory_type: Option<String>,
    #[serde(default)]
    topics: Option<Vec<String>>,
    #[serde(default)]
    owner_id: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
}

pub(super) async fn update(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store, id)): Path<(String, String)>,
    JsonBody(body): JsonBody<UpdateRecord>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let current = find(&state, &scope, &id).await?;
    let mut updates = Map::new();
    if let Some(text) = body.text {
        updates.insert("text".into(), json!(text));
    }
    if body.memory_type.is_some() {
        updates.insert(
            "memory_type".into(),
            json!(memory_type(body.memory_type.as_deref())?.as_str()),
        );
    }
    if let Some(topics) = body.topics {
        updates.insert("topics".into(), json!(topics));
    }
    if let Some(owner) = body.owner_id {
        updates.insert("user_id".into(), json!(owner));
    }
    if let Some(session) = body.session_id {
        updates.insert("session_id".into(), json!(session));
    }
    let memory = state
        .service
        .long_term
        .edit(&current.id, Value::Object(updates))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("memory `{id}` not found")))?;
    Ok(Json(record_json(&scope, &memory)))
}

/// A tag filter of the SDK (`eq`, `ne`, `in`, `all`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct Clause {
    #[serde(default)]
    eq: Option<String>,
    #[serde(default)]
    ne: Option<String>,
    #[serde(default, rename = "in")]
    in_: Option<Vec<String>>,
    #[serde(default)]
    all: Option<Vec<String>>,
}

impl Clause {
    fn tag(self, field: &str) -> Result<TagFilter, ApiError> {
        if self.all.is_some() {
            return Err(ApiError::invalid(format!(
                "`all` is not supported on {field}: a memory has one {field}"
            )));
        }
        Ok(TagFilter {
            eq: self.eq,
            in_: self.in_,
            not_eq: self.ne,
            not_in: None,
        })
    }

    fn set(self) -> SetFilter {
        let any = match (self.eq, self.in_) {
            (Some(eq), Some(mut list)) => {
                list.push(eq);
                Some(list)
            }
            (Some(eq), None) => Some(vec![eq]),
            (None, list) => list,
        };
        SetFilter {
            any,
            all: self.all,
            none: self.ne.map(|n| vec![n]),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Filter {
    #[serde(default)]
    session_id: Option<Clause>,
    #[serde(default)]
    owner_id: Option<Clause>,
    #[serde(default)]
    topics: Option<Clause>,
    #[serde(default)]
    memory_type: Option<Clause>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Search {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    similarity_threshold: Option<f32>,
    #[serde(default)]
    filter: Option<Filter>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    page_token: Option<String>,
}

pub(super) async fn search(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store): Path<String>,
    JsonBody(body): JsonBody<Search>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let limit = body.limit.unwrap_or(10).clamp(1, 1000);
    let offset = match body.page_token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => token
            .parse::<usize>()
            .map_err(|_| ApiError::invalid("invalid pageToken"))?,
        None => 0,
    };
    let mut request = SearchRequest::text(body.text.unwrap_or_default(), limit);
    request.offset = offset;
    request.namespace = Some(TagFilter {
        eq: Some(scope.namespace()),
        ..Default::default()
    });
    if let Some(threshold) = body.similarity_threshold {
        request.distance_threshold = Some((1.0 - threshold).clamp(0.0, 2.0));
    }
    let filter = body.filter.unwrap_or_default();
    if let Some(clause) = filter.session_id {
        request.session_id = Some(clause.tag("sessionId")?);
    }
    if let Some(clause) = filter.owner_id {
        request.user_id = Some(clause.tag("ownerId")?);
    }
    if let Some(clause) = filter.memory_type {
        request.memory_type = Some(clause.tag("memoryType")?);
    }
    if let Some(clause) = filter.topics {
        request.topics = Some(clause.set());
    }
    let results = state.service.long_term.search(&request).await?;
    let items: Vec<Value> = results
        .memories
        .iter()
        .map(|hit| {
            let mut record = record_json(&scope, &hit.memory);
            record["score"] = json!(1.0 - hit.dist);
            record
        })
        .collect();
    let next = results.next_offset.map(|o| o.to_string());
    Ok(Json(json!({"items": items, "nextPageToken": next})))
}
