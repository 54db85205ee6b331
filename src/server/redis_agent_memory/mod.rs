//! The Redis Agent Memory data plane (the managed successor of the Agent Memory Server),
//! served under the paths the `redis-agent-memory` Python SDK (0.4) calls: create the
//! SDK with `server_url` pointing at agentmem and any `store_id`.
//!
//! | SDK call | route |
//! |---|---|
//! | `health` | `GET /health` |
//! | `store_health` | `GET /v1/stores/{store}/health` |
//! | `add_session_event` | `POST /v1/stores/{store}/session-memory/events` |
//! | `list_sessions` | `GET /v1/stores/{store}/session-memory` |
//! | `get_session_memory` / `delete_session_memory` | `GET`/`DELETE /v1/stores/{store}/session-memory/{session}` |
//! | `get_session_event` / `delete_session_event` | `GET`/`DELETE /v1/stores/{store}/session-memory/{session}/events/{event}` |
//! | `bulk_create_long_term_memories` / `bulk_delete_long_term_memories` | `POST`/`DELETE /v1/stores/{store}/long-term-memory` |
//! | `search_long_term_memory` | `POST /v1/stores/{store}/long-term-memory/search` |
//! | `get_long_term_memory` / `update_long_term_memory` | `GET`/`PATCH /v1/stores/{store}/long-term-memory/{id}` |
//!
//! Not served: namespaces (`*_namespace`, `namespaceRef`), `move_long_term_memories`,
//! `update_long_term_memory_fields` and memory `attributes`.
//!
//! A store is a namespace (`ram:TENANT:STORE`) of the same working and long-term memory
//! the v0 routes serve: session events are messages of working memory, so they are
//! indexed as episodes, extracted by the session's strategy and summarised like any
//! other. Stores need no creation; each API key's tenant sees only its own.

mod error;
mod events;
mod memories;
mod request;
mod sessions;

use axum::extract::Path;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

pub use error::ApiError;
pub use events::SessionEvents;

use super::tenant::Tenant;
use super::AppState;
use request::StoreScope;

/// The data-plane routes.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/health", get(health))
        .route("/v1/stores/{store}/health", get(store_health))
        .route(
            "/v1/stores/{store}/session-memory/events",
            post(sessions::add_event),
        )
        .route(
            "/v1/stores/{store}/session-memory",
            get(sessions::list_sessions),
        )
        .route(
            "/v1/stores/{store}/session-memory/{session}",
            get(sessions::get_session).delete(sessions::delete_session),
        )
        .route(
            "/v1/stores/{store}/session-memory/{session}/events/{event}",
            get(sessions::get_event).delete(sessions::delete_event),
        )
        .route(
            "/v1/stores/{store}/long-term-memory",
            post(memories::bulk_create).delete(memories::bulk_delete),
        )
        .route(
            "/v1/stores/{store}/long-term-memory/search",
            post(memories::search),
        )
        .route(
            "/v1/stores/{store}/long-term-memory/{id}",
            get(memories::get).patch(memories::update),
        )
}

async fn health() -> Json<Value> {
    Json(json!({"status": "healthy"}))
}

async fn store_health(tenant: Tenant, Path(store): Path<String>) -> Result<Json<Value>, ApiError> {
    StoreScope::new(tenant, store)?;
    Ok(Json(json!({
        "status": "healthy",
        "features": {
            "sessionMemory": {"status": "healthy"},
            "longTermMemory": {"status": "healthy"},
        },
    })))
}
