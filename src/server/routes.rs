//! The REST routes, wire-compatible with the paths `agent-memory-client` calls.

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ApiError;
use super::extract::{Body, Query, QueryPairs};
use super::wire::{
    self, Ack, CreateMemories, PromptRequest, SearchRequest, SearchResults, SessionList,
    WireMemory, WorkingMemoryBody, WorkingMemoryResponse,
};
use super::working::SessionScope;
use super::AppState;

/// The `/v1` routes over `state`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/working-memory/", get(list_sessions))
        .route("/v1/working-memory", get(list_sessions))
        .route(
            "/v1/working-memory/{session_id}",
            get(get_session).put(put_session).delete(delete_session),
        )
        .route("/v1/long-term-memory/", post(create_memories))
        .route(
            "/v1/long-term-memory",
            post(create_memories).delete(delete_memories),
        )
        .route("/v1/long-term-memory/search", post(search_memories))
        .route(
            "/v1/long-term-memory/{memory_id}",
            get(get_memory).patch(edit_memory),
        )
        .route("/v1/memory/prompt", post(memory_prompt))
        .merge(super::memory_tool::routes())
        .merge(super::anthropic::routes())
        .merge(super::redis_agent_memory::routes())
}

async fn health() -> Json<Value> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    Json(json!({ "now": now }))
}

#[derive(Debug, Deserialize)]
struct ListParams {
    namespace: Option<String>,
    user_id: Option<String>,
    #[serde(default = "default_list_limit")]
    limit: usize,
    #[serde(default)]
    offset: usize,
}

fn default_list_limit() -> usize {
    20
}

async fn list_sessions(
    State(state): State<AppState>,
    Query(params): Query<ListParams>,
) -> Result<Json<SessionList>, ApiError> {
    let user = state.bind_user(params.user_id.as_deref())?;
    let limit = params.limit.clamp(1, 1000);
    Ok(Json(
        state
            .service
            .working
            .list(
                params.namespace.as_deref(),
                user.as_deref(),
                limit,
                params.offset,
            )
            .await?,
    ))
}

#[derive(Debug, Deserialize)]
struct SessionParams {
    namespace: Option<String>,
    user_id: Option<String>,
    model_name: Option<String>,
    #[serde(default, deserialize_with = "wire::number_or_string")]
    context_window_max: Option<u64>,
    #[serde(default, deserialize_with = "wire::number_or_string")]
    ttl_seconds: Option<u64>,
}

impl SessionParams {
    fn scope<'a>(&'a self, user: Option<&'a str>) -> SessionScope<'a> {
        SessionScope {
            namespace: self.namespace.as_deref(),
            user_id: user,
            model_name: self.model_name.as_deref(),
            context_window_max: self.context_window_max,
            ttl_seconds: self.ttl_seconds,
        }
    }
}

async fn get_session(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    Query(params): Query<SessionParams>,
) -> Result<Json<WorkingMemoryResponse>, ApiError> {
    let user = state.bind_user(params.user_id.as_deref())?;
    state
        .service
        .working
        .get(&session_id, &params.scope(user.as_deref()))
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound("Session not found".into()))
}

async fn put_session(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    Query(params): Query<SessionParams>,
    Body(body): Body<WorkingMemoryBody>,
) -> Result<Json<WorkingMemoryResponse>, ApiError> {
    for message in &body.messages {
        if message.content.trim().is_empty() {
            return Err(ApiError::BadRequest(
                "Message content cannot be empty".into(),
            ));
        }
    }
    let user = state.bind_user(params.user_id.as_deref().or(body.user_id.as_deref()))?;
    let scope = params.scope(user.as_deref());
    Ok(Json(
        state.service.working.put(&session_id, body, &scope).await?,
    ))
}

async fn delete_session(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    Query(params): Query<SessionParams>,
) -> Result<Json<Ack>, ApiError> {
    let user = state.bind_user(params.user_id.as_deref())?;
    state
        .service
        .working
        .delete(&session_id, &params.scope(user.as_deref()))
        .await?;
    Ok(Json(Ack::OK))
}

async fn create_memories(
    State(state): State<AppState>,
    Body(mut body): Body<CreateMemories>,
) -> Result<Json<Ack>, ApiError> {
    for memory in &mut body.memories {
        memory.user_id = state.bind_user(memory.user_id.as_deref())?;
    }
    state.service.long_term.create(body.memories).await?;
    Ok(Json(Ack::OK))
}

async fn search_memories(
    State(state): State<AppState>,
    Body(mut request): Body<SearchRequest>,
) -> Result<Json<SearchResults>, ApiError> {
    state.bind_search(&mut request)?;
    if let Some(user) = request.user_id.as_ref().and_then(|f| f.eq.as_deref()) {
        // what the user's earlier PUTs put in is found
        state.service.caught_up(Some(user)).await;
    }
    Ok(Json(state.service.long_term.search(&request).await?))
}

async fn get_memory(
    State(state): State<AppState>,
    Path(memory_id): Path<String>,
) -> Result<Json<WireMemory>, ApiError> {
    super::ids::check("memory_id", &memory_id)?;
    let memory = state
        .service
        .long_term
        .get(&memory_id)
        .await?
        .filter(|m| state.may_read(m))
        .ok_or_else(|| ApiError::NotFound(format!("Memory with ID {memory_id} not found")))?;
    Ok(Json(memory))
}

async fn edit_memory(
    State(state): State<AppState>,
    Path(memory_id): Path<String>,
    Body(updates): Body<Value>,
) -> Result<Json<WireMemory>, ApiError> {
    super::ids::check("memory_id", &memory_id)?;
    let not_found = || ApiError::NotFound(format!("Memory with ID {memory_id} not found"));
    let current = state.service.long_term.get(&memory_id).await?;
    if !current.as_ref().is_some_and(|m| state.may_read(m)) {
        return Err(not_found());
    }
    if let Some(user) = updates.get("user_id").and_then(Value::as_str) {
        state.bind_user(Some(user))?;
    }
    state
        .service
        .long_term
        .edit(&memory_id, updates)
        .await?
        .map(Json)
        .ok_or_else(not_found)
}

async fn delete_memories(
    State(state): State<AppState>,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<Ack>, ApiError> {
    let ids: Vec<String> = pairs
        .into_iter()
        .filter(|(k, _)| k == "memory_ids")
        .flat_map(|(_, v)| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    if ids.is_empty() {
        return Err(ApiError::unprocessable("query", "memory_ids is required"));
    }
    for id in &ids {
        super::ids::check("memory_id", id)?;
    }
    let mut allowed = Vec::with_capacity(ids.len());
    for id in ids {
        let readable = state
            .service
            .long_term
            .get(&id)
            .await?
            .is_none_or(|m| state.may_read(&m));
        if readable {
            allowed.push(id);
        }
    }
    state.service.long_term.delete(&allowed).await?;
    Ok(Json(Ack::OK))
}

async fn memory_prompt(
    State(state): State<AppState>,
    Body(mut request): Body<PromptRequest>,
) -> Result<Json<Value>, ApiError> {
    if let Some(session) = &mut request.session {
        session.user_id = state.bind_user(session.user_id.as_deref())?;
    }
    if let Some(search) = &mut request.long_term_search {
        state.bind_search(search)?;
    }
    Ok(Json(super::prompt::build(&state.service, request).await?))
}
