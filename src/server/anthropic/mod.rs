//! Anthropic's memory stores API (beta `agent-memory-2026-07-22`), served under the
//! paths and shapes the `anthropic` Python SDK (2.14) calls as
//! `client.beta.memory_stores`: point the SDK's `base_url` at agentmem.
//!
//! | SDK call | route |
//! |---|---|
//! | `memory_stores.create/list` | `POST`/`GET /v1/memory_stores` |
//! | `memory_stores.retrieve/update/delete` | `GET`/`POST`/`DELETE /v1/memory_stores/{id}` |
//! | `memory_stores.archive` | `POST /v1/memory_stores/{id}/archive` |
//! | `memories.create/list` | `POST`/`GET /v1/memory_stores/{id}/memories` |
//! | `memories.retrieve/update/delete` | `GET`/`POST`/`DELETE /v1/memory_stores/{id}/memories/{mem}` |
//! | `memory_versions.list` | `GET /v1/memory_stores/{id}/memory_versions` |
//! | `memory_versions.retrieve` | `GET /v1/memory_stores/{id}/memory_versions/{ver}` |
//! | `memory_versions.redact` | `POST /v1/memory_stores/{id}/memory_versions/{ver}/redact` |
//! | (agentmem) search | `POST /v1/memory_stores/{id}/memories/search` `{"query", "limit"}` |
//!
//! - Every change of a memory is an immutable version (`created`, `modified`,
//!   `deleted`); updates and deletes take a `content_sha256` precondition and answer 409
//!   when it fails; lists page with `next_page` cursors; errors are `{"type": "error",
//!   "error": {"type", "message"}}`, which the SDK raises as its exception types.
//! - Each API key belongs to a tenant (`agentmem serve --api-key TENANT=KEY`); a tenant
//!   sees only its own stores. The server token acts for the tenant `default`.
//! - Memories are documents of the server's vector store, one namespace per store, so
//!   search is hybrid (words and meaning) when the store embeds.
//! - Versions record who wrote them: `api_actor` with `api_key_id` `apikey_TENANT`, or,
//!   when the request sends `x-agentmem-session-id`, `session_actor` (filterable with
//!   `session_id`).

mod backend;
mod error;
mod memories;
mod paging;
mod paths;
mod records;
mod request;
mod stores;
mod versions;

use axum::routing::{get, post};
use axum::Router;

pub use backend::MemoryStores;
pub use error::ApiError;

use super::AppState;

/// The memory-stores routes.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/memory_stores", post(stores::create).get(stores::list))
        .route(
            "/v1/memory_stores/{store}",
            get(stores::retrieve)
                .post(stores::update)
                .delete(stores::delete),
        )
        .route("/v1/memory_stores/{store}/archive", post(stores::archive))
        .route(
            "/v1/memory_stores/{store}/memories",
            post(memories::create).get(memories::list),
        )
        .route(
            "/v1/memory_stores/{store}/memories/search",
            post(memories::search),
        )
        .route(
            "/v1/memory_stores/{store}/memories/{memory}",
            get(memories::retrieve)
                .post(memories::update)
                .delete(memories::delete),
        )
        .route(
            "/v1/memory_stores/{store}/memory_versions",
            get(versions::list),
        )
        .route(
            "/v1/memory_stores/{store}/memory_versions/{version}",
            get(versions::retrieve),
        )
        .route(
            "/v1/memory_stores/{store}/memory_versions/{version}/redact",
            post(versions::redact),
        )
}
