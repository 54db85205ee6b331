//! Session memory: `POST /v1/stores/{store}/session-memory/events`, `GET
//! .../session-memory`, `GET`/`DELETE .../session-memory/{session}`, `GET`/`DELETE
//! .../session-memory/{session}/events/{event}`.
//!
//! Each event is also a message of the session's working memory (namespace
//! `ram:TENANT:STORE`, user = the session's owner), written through
//! [`WorkingMemoryStore::put`](crate::server::service::MemoryService): so events are
//! indexed as episodes, extracted to long-term memory by the session's strategy and
//! summarised past the window exactly like messages `PUT` through the v0 API.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ApiError;
use super::events::{EventRecord, SessionRecord, TextPart};
use super::request::{JsonBody, QueryParams, StoreScope};
use crate::server::ids;
use crate::server::tenant::Tenant;
use crate::server::wire::{default_strategy, WireMessage, WorkingMemoryBody};
use crate::server::working::SessionScope;
use crate::server::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AddEvent {
    actor_id: String,
    role: String,
    content: Vec<TextPart>,
    created_at: DateTime<Utc>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    metadata: Option<Value>,
}

/// The working-memory scope of a session owned by `owner`.
fn working_scope<'a>(namespace: &'a str, owner: &'a str) -> SessionScope<'a> {
    SessionScope {
        namespace: Some(namespace),
        user_id: Some(owner),
        ..Default::default()
    }
}

/// The session's working memory now (empty when it has none yet).
async fn working_memory(
    state: &AppState,
    namespace: &str,
    owner: &str,
    session: &str,
) -> Result<WorkingMemoryBody, ApiError> {
    let scope = working_scope(namespace, owner);
    Ok(match state.service.working.get(session, &scope).await? {
        Some(response) => response.memory,
        None => WorkingMemoryBody {
            messages: Vec::new(),
            memories: Vec::new(),
            data: None,
            context: None,
            user_id: Some(owner.to_owned()),
            tokens: 0,
            session_id: Some(session.to_owned()),
            namespace: Some(namespace.to_owned()),
            long_term_memory_strategy: default_strategy(),
            ttl_seconds: None,
            last_accessed: Utc::now(),
        },
    })
}

fn event_json(event: &EventRecord) -> Value {
    serde_json::to_value(event).unwrap_or(Value::Null)
}

pub(super) async fn add_event(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store): Path<String>,
    JsonBody(body): JsonBody<AddEvent>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let role = body.role.to_ascii_uppercase();
    if !matches!(role.as_str(), "USER" | "ASSISTANT" | "SYSTEM") {
        return Err(ApiError::invalid(format!(
            "role must be USER, ASSISTANT or SYSTEM, got `{}`",
            body.role
        )));
    }
    let text = body
        .content
        .iter()
        .map(|part| part.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if text.trim().is_empty() {
        return Err(ApiError::invalid("an event needs non-empty text content"));
    }
    ids::check("actorId", &body.actor_id)?;
    let session = body
        .session_id
        .unwrap_or_else(|| crate::server::monotonic::ulid().to_string());
    ids::check("sessionId", &session)?;
    let events = &state.service.session_events;
    let _writing = events.lock(&scope, &session).await;
    let owner = match events.session(&scope, &session).await? {
        Some(record) => record.owner,
        None => {
            let record = SessionRecord {
                owner: body.actor_id.clone(),
                created_at: Utc::now(),
            };
            events.put_session(&scope, &session, &record).await?;
            record.owner
        }
    };
    let event = EventRecord {
        event_id: crate::server::monotonic::ulid().to_string(),
        actor_id: body.actor_id,
        session_id: session.clone(),
        role,
        content: body.content,
        created_at: body.created_at,
        system_timestamp: Utc::now(),
        metadata: body.metadata,
    };
    let namespace = scope.namespace();
    let mut memory = working_memory(&state, &namespace, &owner, &session).await?;
    memory.messages.push(WireMessage {
        role: event.role.to_ascii_lowercase(),
        content: text,
        id: event.event_id.clone(),
        created_at: event.created_at,
        persisted_at: None,
        discrete_memory_extracted: "f".into(),
        created_at_missing: false,
    });
    state
        .service
        .working
        .put(&session, memory, &working_scope(&namespace, &owner))
        .await?;
    events.put_event(&scope, &event).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"event": event_json(&event)})),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GetSession {
    #[serde(default)]
    include_summarised_events: Option<bool>,
}

pub(super) async fn get_session(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store, session)): Path<(String, String)>,
    QueryParams(query): QueryParams<GetSession>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let events = &state.service.session_events;
    let record = events
        .session(&scope, &session)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("session `{session}` not found")))?;
    let all = events.events(&scope, &session).await?;
    let memory = working_memory(&state, &scope.namespace(), &record.owner, &session).await?;
    let in_window: std::collections::HashSet<&str> =
        memory.messages.iter().map(|m| m.id.as_str()).collect();
    let summarised: Vec<&EventRecord> = all
        .iter()
        .filter(|e| !in_window.contains(e.event_id.as_str()))
        .collect();
    let summary = match (&memory.context, summarised.last()) {
        (Some(text), Some(last)) if !text.trim().is_empty() => json!({
            "text": text,
            "summarizedUpToEventId": last.event_id,
            "createdAt": record.created_at,
            "updatedAt": memory.last_accessed,
            "metadata": {},
            "summarizedEvents": summarised.len(),
        }),
        _ => Value::Null,
    };
    let shown: Vec<Value> = all
        .iter()
        .filter(|e| {
            query.include_summarised_events.unwrap_or(false)
                || summary.is_null()
                || in_window.contains(e.event_id.as_str())
        })
        .map(event_json)
        .collect();
    let mut out = json!({
        "sessionId": session,
        "ownerId": record.owner,
        "events": shown,
    });
    if !summary.is_null() {
        out["summary"] = summary;
    }
    Ok(Json(out))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ListSessions {
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    page_token: Option<String>,
    #[serde(default)]
    filter_owner_id: Option<String>,
}

pub(super) async fn list_sessions(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(store): Path<String>,
    QueryParams(query): QueryParams<ListSessions>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let limit = query.limit.unwrap_or(20).clamp(1, 1000);
    let offset = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => token
            .parse::<usize>()
            .map_err(|_| ApiError::invalid("invalid pageToken"))?,
        None => 0,
    };
    let sessions: Vec<String> = state
        .service
        .session_events
        .sessions(&scope)
        .await?
        .into_iter()
        .filter(|(_, r)| {
            query
                .filter_owner_id
                .as_deref()
                .is_none_or(|o| r.owner == o)
        })
        .map(|(id, _)| id)
        .collect();
    let total = sessions.len();
    let items: Vec<String> = sessions.into_iter().skip(offset).take(limit).collect();
    let next = (offset + items.len() < total).then(|| (offset + items.len()).to_string());
    Ok(Json(
        json!({"items": items, "total": total, "nextPageToken": next}),
    ))
}

pub(super) async fn delete_session(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store, session)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let events = &state.service.session_events;
    let _writing = events.lock(&scope, &session).await;
    let record = events
        .session(&scope, &session)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("session `{session}` not found")))?;
    let namespace = scope.namespace();
    state
        .service
        .working
        .delete(&session, &working_scope(&namespace, &record.owner))
        .await?;
    events.delete_session(&scope, &session).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(super) async fn get_event(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store, session, event)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let found = state
        .service
        .session_events
        .event(&scope, &session, &event)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("event `{event}` not found")))?;
    Ok(Json(json!({"event": event_json(&found)})))
}

pub(super) async fn delete_event(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((store, session, event)): Path<(String, String, String)>,
) -> Result<StatusCode, ApiError> {
    let scope = StoreScope::new(tenant, store)?;
    let events = &state.service.session_events;
    let _writing = events.lock(&scope, &session).await;
    let not_found = || ApiError::not_found(format!("event `{event}` not found"));
    let record = events
        .session(&scope, &session)
        .await?
        .ok_or_else(not_found)?;
    if !events.delete_event(&scope, &session, &event).await? {
        return Err(not_found());
    }
    let namespace = scope.namespace();
    let mut memory = working_memory(&state, &namespace, &record.owner, &session).await?;
    let before = memory.messages.len();
    memory.messages.retain(|m| m.id != event);
    if memory.messages.len() != before {
        state
            .service
            .working
            .put(&session, memory, &working_scope(&namespace, &record.owner))
            .await?;
    }
    Ok(StatusCode::NO_CONTENT)
}
