//! The memory server: the working-memory REST API that agents written against the
//! Redis Agent Memory Server call (`agent-memory-client` on PyPI, 0.14), over any agentmem
//! store URL, and MCP tools (feature `mcp`) for assistants.
//!
//! - `GET /v1/health`; `GET /v1/working-memory/`; `GET`/`PUT`/`DELETE
//!   /v1/working-memory/{session_id}`; `POST /v1/long-term-memory/`, `POST
//!   /v1/long-term-memory/search`, `GET`/`PATCH /v1/long-term-memory/{id}`, `DELETE
//!   /v1/long-term-memory?memory_ids=`; `POST /v1/memory/prompt`; `GET /metrics`; with the
//!   `mcp` feature, MCP over streamable HTTP at `/mcp`.
//! - `POST /v1/memory-tool` runs a command of Claude's memory tool for a user (the tool
//!   call's `input` as the body, the `tool_result` back), with `POST
//!   /v1/memory-tool/search` and `GET /v1/memory-tool/history` beside it (the
//!   `memory_tool` module of this server; [`crate::memory_tool`] is the handler).
//! - Working memory is one JSON document per session in the [`KvStore`]
//!   of the store URL, so several instances on one Redis or PostgreSQL serve the same
//!   sessions. Long-term memory maps to facts and documents (the `long_term` module).
//! - `index_all_messages_in_long_term_memory` (on by default; `agentmem serve
//!   --index-all-messages-in-long-term-memory false` or the environment variable
//!   `INDEX_ALL_MESSAGES_IN_LONG_TERM_MEMORY=false` turn it off,
//!   [`MemoryService::index_all_messages`](crate::server::MemoryService::index_all_messages) in code): every working-memory message is also
//!   an [episode](agentmemory_core::episodes) of the session's user, and `GET` of a
//!   session that expired or went missing rebuilds it from them instead of answering 404.
//! - After a `PUT` is stored, the session's new messages are extracted in the background
//!   per its `long_term_memory_strategy` (`discrete`, `summary`, `preferences`, `custom`:
//!   the strategy module, run by
//!   the background queue); structured `memories` are promoted at
//!   once with `persisted_at`. [`ServerSettings`](crate::server::ServerSettings) holds the
//!   reference server's configuration (`WINDOW_SIZE`, `LONG_TERM_MEMORY`,
//!   `ENABLE_DISCRETE_MEMORY_EXTRACTION`, `GENERATION_MODEL`, `OPENAI_BASE_URL` /
//!   `OPENAI_API_KEY`), read by
//!   [`ServerSettings::from_env`](crate::server::ServerSettings::from_env) and applied with
//!   [`MemoryService::with_settings`](crate::server::MemoryService::with_settings).
//! - `POST /v1/memory/prompt` and the MCP `memory_prompt` tool recall, besides the
//!   long-term memories, the user's relevant earlier messages (episodes), with their dates.
//! - Anthropic's memory stores API (`/v1/memory_stores/...`, the `anthropic` SDK's
//!   `client.beta.memory_stores`) and the Redis Agent Memory data plane
//!   (`/v1/stores/{store}/...`, the `redis-agent-memory` SDK), each store kept per tenant:
//!   API keys (`Auth::with_api_key`) belong to tenants and reach only these APIs.
//! - Production basics: bearer-token auth (constant-time comparison), a request body
//!   limit (413), a per-request timeout (408), graceful shutdown that lets in-flight
//!   requests finish, a tracing span per request, Prometheus metrics, CORS off unless
//!   origins are given.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use agentmemory::server::{serve, Auth, MemoryService, ServerConfig};
//!
//! let container = agentmemory::stores::StoreUrl::Memory.open().await.unwrap();
//! let service = MemoryService::from_container(&container).unwrap();
//! let config = ServerConfig::new(Auth::token("s3cret"));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! serve(listener, service, config, std::future::pending()).await
//! # }
//! ```

use std::future::Future;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, StatusCode};
use axum::routing::get;
use axum::Router;
use tower_http::cors::CorsLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

mod anthropic;
mod auth;
mod background;
mod error;
mod extract;
mod ids;
mod long_term;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod mcp_graph;
#[cfg(feature = "mcp")]
mod mcp_memory_tool;
mod memory_tool;
mod message_index;
mod metrics;
mod monotonic;
mod prompt;
mod redis_agent_memory;
mod routes;
mod service;
mod settings;
#[cfg(feature = "mcp")]
mod stdio;
mod strategy;
mod tenant;
mod window;
mod wire;
mod working;

pub use auth::Auth;
pub use background::summary_id;
use error::ApiError;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use mcp::{serve_stdio, MemoryMcp};
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use mcp_graph::{serve_stdio as serve_graph_stdio, GraphMcp};
use metrics::Metrics;
pub use service::{MemoryService, READ_YOUR_WRITES_WAIT};
pub use settings::{
    ServerSettings, SettingsError, BACKGROUND_CONCURRENCY_ENV, DEFAULT_BACKGROUND_CONCURRENCY,
    DEFAULT_EXTRACTION_CONCURRENCY, DEFAULT_EXTRACTION_QUEUE, DEFAULT_EXTRACTION_QUEUE_WAIT,
    DEFAULT_WINDOW_SIZE, POSTGRES_BACKGROUND_CONCURRENCY,
};
pub use tenant::{Tenant, TenantNameError};

/// Default largest request body: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
/// Default time a request may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Who may call.
    pub auth: Auth,
    /// When set, every request acts for this user: requests naming another user are
    /// refused (403) and requests naming none act for this one.
    pub user: Option<String>,
    /// Largest request body in bytes (413 beyond).
    pub body_limit: usize,
    /// Time a request may take (408 beyond).
    pub timeout: Duration,
    /// Origins allowed by CORS; empty = CORS off (no CORS headers).
    pub cors_origins: Vec<String>,
    /// When set (feature `mcp`), `/mcp` serves the knowledge-graph tools of the reference
    /// MCP `memory` server over this graph (the `mcp_graph` module) instead of the long-term
    /// memory tools.
    pub memory_graph: Option<std::sync::Arc<crate::graph::KnowledgeGraph>>,
}

impl ServerConfig {
    /// Defaults with `auth`.
    pub fn new(auth: Auth) -> Self {
        Self {
            auth,
            user: None,
            body_limit: DEFAULT_BODY_LIMIT,
            timeout: DEFAULT_TIMEOUT,
            cors_origins: Vec::new(),
            memory_graph: None,
        }
    }
}

/// What every route handler gets.
#[derive(Clone)]
pub(crate) struct AppState {
    /// The stores.
    pub service: MemoryService,
    /// The user every request is bound to, if any.
    pub user: Option<std::sync::Arc<str>>,
}

impl AppState {
    /// The user a request acts for: the bound user, or the one it names.
    pub fn bind_user(&self, requested: Option<&str>) -> Result<Option<String>, ApiError> {
        match (&self.user, requested) {
            (Some(bound), Some(asked)) if &**bound != asked => Err(ApiError::Forbidden(format!(
                "this server is bound to another user than `{asked}`"
            ))),
            (Some(bound), _) => Ok(Some(bound.to_string())),
            (None, asked) => Ok(asked.map(str::to_owned)),
        }
    }

    /// Restricts a search to the bound user.
    pub fn bind_search(&self, search: &mut wire::SearchRequest) -> Result<(), ApiError> {
        if let Some(bound) = &self.user {
            let filter = search.user_id.take().unwrap_or_default();
            if !filter.matches(Some(bound)) {
                return Err(ApiError::Forbidden(
                    "this server is bound to another user".into(),
                ));
            }
            search.user_id = Some(wire::TagFilter {
                eq: Some(bound.to_string()),
                ..Default::default()
            });
        }
        Ok(())
    }

    /// Whether the caller may see `memory`.
    pub fn may_read(&self, memory: &wire::WireMemory) -> bool {
        self.user
            .as_deref()
            .is_none_or(|u| memory.user_id.as_deref() == Some(u))
    }
}

/// The whole application: routes, `/metrics`, MCP (with the `mcp` feature) and the
/// middleware stack.
pub fn app(service: MemoryService, config: &ServerConfig) -> Router {
    let metrics = Metrics::default();
    let state = AppState {
        service: service.clone(),
        user: config.user.as_deref().map(Into::into),
    };
    let rendered = metrics.clone();
    let router = routes::routes()
        .with_state(state)
        .route("/metrics", get(move || async move { rendered.render() }));
    #[cfg(feature = "mcp")]
    let router = match &config.memory_graph {
        Some(graph) => router.nest_service("/mcp", mcp_graph::http_service(graph.clone())),
        None => router.nest_service("/mcp", mcp::http_service(service, config.user.clone())),
    };
    let mut router = router
        .layer(DefaultBodyLimit::max(config.body_limit))
        .layer(RequestBodyLimitLayer::new(config.body_limit))
        .layer(axum::middleware::from_fn_with_state(
            config.auth.clone(),
            auth::require,
        ))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            config.timeout,
        ))
        .layer(TraceLayer::new_for_http())
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            metrics::track,
        ));
    if !config.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = config
            .cors_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        router = router.layer(
            CorsLayer::new()
                .allow_origin(origins)
                .allow_methods(tower_http::cors::Any)
                .allow_headers(tower_http::cors::Any),
        );
    }
    router
}

/// Serves [`app`] on `listener` until `shutdown` completes, then stops accepting and
/// lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: MemoryService,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app(service.clone(), &config);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await?;
    // what was acknowledged is extracted before the process ends
    if tokio::time::timeout(SETTLE_TIMEOUT, service.settle())
        .await
        .is_err()
    {
        tracing::warn!("background extraction still running at shutdown; it is abandoned");
    }
    Ok(())
}

/// How long a shutdown waits for background extraction.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
