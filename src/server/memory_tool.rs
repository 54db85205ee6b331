//! The memory tool over REST, for applications in other languages: they forward the
//! `input` of Claude's `memory` tool calls and get the `tool_result` back.
//!
//! - `POST /v1/memory-tool?user_id=alice` with the command JSON as the body (the tool
//!   call's `input`, unchanged; `user_id` may be given in the body instead) answers `200
//!   {"content": "...", "is_error": false}`. A refused command (a path outside
//!   `/memories`, `old_str` not found, ...) is still a 200 with `is_error: true` and the
//!   message for the model; a store failure is a 500.
//! - `POST /v1/memory-tool/search` with `{"query": "...", "limit": 5, "user_id": ...}`:
//!   the user's current files that match, best first.
//! - `GET /v1/memory-tool/history?path=/memories/notes.md&user_id=alice`: every version
//!   of the files that have been at that path, with their times.
//!
//! Like the other routes, a server bound to a user (`--user`) acts for that user only.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::memory_tool::{MemoryCommand, MemoryTool, MemoryToolError, ToolOutput};

use super::error::ApiError;
use super::extract::{Body, Query};
use super::AppState;

/// The memory-tool routes.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/memory-tool", post(run))
        .route("/v1/memory-tool/search", post(search))
        .route("/v1/memory-tool/history", get(history))
}

#[derive(Debug, Deserialize)]
struct UserParam {
    user_id: Option<String>,
}

/// The handler of the user the request acts for.
fn tool_for(state: &AppState, asked: Option<&str>) -> Result<MemoryTool, ApiError> {
    let user = state.bind_user(asked)?.ok_or_else(|| {
        ApiError::BadRequest(
            "user_id is required: memory-tool files belong to a user (query parameter `user_id`)"
                .into(),
        )
    })?;
    super::ids::check("user_id", &user)?;
    state
        .service
        .memory_files
        .for_user(&user)
        .map_err(|e| ApiError::BadRequest(e.to_string()))
}

/// A refused command as a tool result; a store failure as an error.
fn outcome(result: Result<String, MemoryToolError>) -> Result<Json<ToolOutput>, ApiError> {
    match result {
        Ok(content) => Ok(Json(ToolOutput {
            content,
            is_error: false,
        })),
        Err(MemoryToolError::Store(e)) => Err(ApiError::Store(e)),
        Err(e) => Ok(Json(ToolOutput {
            content: e.to_string(),
            is_error: true,
        })),
    }
}

async fn run(
    State(state): State<AppState>,
    Query(params): Query<UserParam>,
    Body(mut input): Body<Value>,
) -> Result<Json<ToolOutput>, ApiError> {
    let body_user = match input.as_object_mut().and_then(|o| o.remove("user_id")) {
        None | Some(Value::Null) => None,
        Some(Value::String(user)) => Some(user),
        Some(_) => {
            return Err(ApiError::unprocessable("body", "user_id must be a string"));
        }
    };
    let tool = tool_for(&state, params.user_id.as_deref().or(body_user.as_deref()))?;
    match MemoryCommand::from_input(&input) {
        Ok(command) => outcome(tool.execute(&command).await),
        Err(e) => outcome(Err(e)),
    }
}

#[derive(Debug, Deserialize)]
struct SearchBody {
    query: String,
    #[serde(default = "default_limit")]
    limit: usize,
    #[serde(default)]
    user_id: Option<String>,
}

fn default_limit() -> usize {
    5
}

async fn search(
    State(state): State<AppState>,
    Query(params): Query<UserParam>,
    Body(body): Body<SearchBody>,
) -> Result<Json<Value>, ApiError> {
    let tool = tool_for(
        &state,
        params.user_id.as_deref().or(body.user_id.as_deref()),
    )?;
    let hits = tool
        .search(&body.query, body.limit.clamp(1, 100))
        .await
        .map_err(refused)?;
    Ok(Json(json!({ "hits": hits })))
}

#[derive(Debug, Deserialize)]
struct HistoryParams {
    path: String,
    user_id: Option<String>,
}

async fn history(
    State(state): State<AppState>,
    Query(params): Query<HistoryParams>,
) -> Result<Json<Value>, ApiError> {
    let tool = tool_for(&state, params.user_id.as_deref())?;
    let versions = tool.history(&params.path).await.map_err(refused)?;
    Ok(Json(json!({ "versions": versions })))
}

/// A failure outside a tool result: 404 for a missing path, 400 for a refused one, 500
/// for the store.
fn refused(error: MemoryToolError) -> ApiError {
    match error {
        MemoryToolError::Store(e) => ApiError::Store(e),
        e @ (MemoryToolError::Missing { .. } | MemoryToolError::NotFound { .. }) => {
            ApiError::NotFound(e.to_string())
        }
        e => ApiError::BadRequest(e.to_string()),
    }
}
