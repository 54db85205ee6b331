//! MCP tools over the same [`MemoryService`] as the REST API, with the official Rust SDK
//! (`rmcp`): stdio ([`serve_stdio`], `agentmem mcp`) and streamable HTTP ([`http_service`],
//! mounted at `/mcp` by `agentmem serve`).
//!
//! Tools are named as the reference server names them: `create_long_term_memories`,
//! `search_long_term_memory`, `memory_prompt`, `set_working_memory`, `get_working_memory`,
//! `get_long_term_memory`, `edit_long_term_memory`, `delete_long_term_memories`, plus
//! `get_current_datetime`, and `memory`: the commands of Claude's memory tool over the
//! same stores (the `mcp_memory_tool` module). The user is the server's (`--user`) when
//! it is bound to one; otherwise the `user_id` argument, and memories without one belong
//! to no user: it is never guessed (the `memory` tool refuses to run without a user).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::error::ApiError;
use super::service::MemoryService;
use super::wire::{
    MemoryType, PromptRequest, PromptSession, SearchRequest, SetFilter, TagFilter, WireMemory,
    WireMessage, WorkingMemoryBody,
};
use super::working::SessionScope;

/// A long-term memory to create.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NewMemory {
    /// The statement, e.g. "User prefers window seats".
    pub text: String,
    /// `semantic` (a fact about the user, reconciled with what is known), `episodic` (an
    /// event) or `message`. Default `semantic`.
    #[serde(default)]
    pub memory_type: Option<String>,
    /// Topics, e.g. `["travel"]`.
    #[serde(default)]
    pub topics: Option<Vec<String>>,
    /// Named entities, e.g. `["Paris"]`.
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The user (ignored when the server is bound to one).
    #[serde(default)]
    pub user_id: Option<String>,
    /// The session it came from.
    #[serde(default)]
    pub session_id: Option<String>,
    /// A client id; generated when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// When the event happened (RFC 3339), for episodic memories.
    #[serde(default)]
    pub event_date: Option<DateTime<Utc>>,
}

/// Arguments of `create_long_term_memories`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateArgs {
    /// The memories.
    pub memories: Vec<NewMemory>,
}

/// Arguments of `search_long_term_memory`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for; empty lists by filters.
    #[serde(default)]
    pub text: String,
    /// Only this user's memories.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Only this namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Only this session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Memories with at least one of these topics.
    #[serde(default)]
    pub topics: Option<Vec<String>>,
    /// Memories with at least one of these entities.
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    /// Only `semantic`, `episodic` or `message`.
    #[serde(default)]
    pub memory_type: Option<String>,
    /// How many (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Skip this many.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Only results closer than this distance (0 = identical, 1 = unrelated).
    #[serde(default)]
    pub distance_threshold: Option<f32>,
}

/// Arguments of `memory_prompt`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PromptArgs {
    /// The user's message.
    pub query: String,
    /// Include this session's working memory.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Model whose context window applies.
    #[serde(default)]
    pub model_name: Option<String>,
    /// Context window in tokens.
    #[serde(default)]
    pub context_window_max: Option<u64>,
    /// How many long-term memories to include (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One message for `set_working_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NewMessage {
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// The text.
    pub content: String,
    /// A client id; generated when absent.
    #[serde(default)]
    pub id: Option<String>,
}

/// Arguments of `set_working_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetWorkingArgs {
    /// The session.
    pub session_id: String,
    /// The conversation messages (replace the stored ones).
    #[serde(default)]
    pub messages: Vec<NewMessage>,
    /// Structured memories, promoted to long-term memory.
    #[serde(default)]
    pub memories: Vec<NewMemory>,
    /// Free JSON data of the session.
    #[serde(default)]
    pub data: Option<Map<String, Value>>,
    /// A summary of earlier conversation.
    #[serde(default)]
    pub context: Option<String>,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Expire after this many seconds.
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
}

/// Arguments of `get_working_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetWorkingArgs {
    /// The session.
    pub session_id: String,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
}

/// Arguments of `get_long_term_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MemoryIdArgs {
    /// The memory's id.
    pub memory_id: String,
}

/// Arguments of `edit_long_term_memory`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// The memory's id.
    pub memory_id: String,
    /// New text.
    #[serde(default)]
    pub text: Option<String>,
    /// New topics.
    #[serde(default)]
    pub topics: Option<Vec<String>>,
    /// New entities.
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    /// New type: `semantic`, `episodic` or `message`.
    #[serde(default)]
    pub memory_type: Option<String>,
    /// New namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// New session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// New event date (RFC 3339).
    #[serde(default)]
    pub event_date: Option<DateTime<Utc>>,
}

/// Arguments of `delete_long_term_memories`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteArgs {
    /// The ids.
    pub memory_ids: Vec<String>,
}

/// The MCP server: the tools over a [`MemoryService`].
#[derive(Clone)]
pub struct MemoryMcp {
    service: MemoryService,
    user: Option<Arc<str>>,
    tool_router: ToolRouter<Self>,
}

type ToolResult = Result<String, String>;

fn failed(error: ApiError) -> String {
    let status = error.status().as_u16();
    match error {
        ApiError::Store(e) => format!("store error: {} ({status})", e.chain()),
        other => format!("{other} ({status})"),
    }
}

fn to_text(value: &impl serde::Serialize) -> ToolResult {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

fn memory_type(name: Option<&str>, default: MemoryType) -> Result<MemoryType, String> {
    match name {
        None => Ok(default),
        Some(t) => serde_json::from_value(json!(t))
            .map_err(|_| format!("memory_type `{t}`: expected semantic, episodic or message")),
    }
}

#[tool_router(router = tool_router)]
impl MemoryMcp {
    /// Tools over `service`, acting for `user` when the server is bound to one.
    pub fn new(service: MemoryService, user: Option<String>) -> Self {
        Self {
            service,
            user: user.map(Into::into),
            tool_router: Self::tool_router() + Self::memory_tool_router(),
        }
    }

    /// The stores behind the tools.
    pub(super) fn service(&self) -> &MemoryService {
        &self.service
    }

    pub(super) fn user(&self, asked: Option<String>) -> Result<Option<String>, String> {
        match (&self.user, asked) {
            (Some(bound), Some(asked)) if **bound != *asked => Err(format!(
                "this server is bound to another user than `{asked}`"
            )),
            (Some(bound), _) => Ok(Some(bound.to_string())),
            (None, asked) => Ok(asked),
        }
    }

    fn record(&self, m: NewMemory, default_type: MemoryType) -> Result<WireMemory, String> {
        let now = Utc::now();
        Ok(WireMemory {
            id: m.id.unwrap_or_else(|| ulid::Ulid::new().to_string()),
            text: m.text,
            session_id: m.session_id,
            user_id: self.user(m.user_id)?,
            namespace: m.namespace,
            last_accessed: now,
            created_at: now,
            updated_at: now,
            topics: m.topics,
            entities: m.entities,
            memory_hash: None,
            discrete_memory_extracted: "t".into(),
            memory_type: memory_type(m.memory_type.as_deref(), default_type)?,
            persisted_at: None,
            extracted_from: None,
            event_date: m.event_date,
        })
    }

    /// Store long-term memories (facts about the user, events). A repeated fact reinforces
    /// the stored one; a contradicting one replaces it and the old one is kept as history.
    #[tool(name = "create_long_term_memories")]
    async fn create_long_term_memories(
        &self,
        Parameters(args): Parameters<CreateArgs>,
    ) -> ToolResult {
        let records = args
            .memories
            .into_iter()
            .map(|m| self.record(m, MemoryType::Semantic))
            .collect::<Result<Vec<_>, _>>()?;
        let created = self
            .service
            .long_term
            .create(records)
            .await
            .map_err(failed)?;
        to_text(&json!({"status": "ok", "created": created}))
    }

    /// Search long-term memories by meaning and filters (user, namespace, session, topics,
    /// entities, type).
    #[tool(name = "search_long_term_memory")]
    async fn search_long_term_memory(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> ToolResult {
        let request = self.search_request(args)?;
        let found = self
            .service
            .long_term
            .search(&request)
            .await
            .map_err(failed)?;
        to_text(&found)
    }

    fn search_request(&self, args: SearchArgs) -> Result<SearchRequest, String> {
        let eq = |v: Option<String>| {
            v.map(|v| TagFilter {
                eq: Some(v),
                ..Default::default()
            })
        };
        let any = |v: Option<Vec<String>>| {
            v.map(|v| SetFilter {
                any: Some(v),
                ..Default::default()
            })
        };
        let mut request = SearchRequest::text(args.text, args.limit.unwrap_or(10));
        request.offset = args.offset.unwrap_or(0);
        request.user_id = eq(self.user(args.user_id)?);
        request.namespace = eq(args.namespace);
        request.session_id = eq(args.session_id);
        request.memory_type = eq(args.memory_type);
        request.topics = any(args.topics);
        request.entities = any(args.entities);
        request.distance_threshold = args.distance_threshold;
        Ok(request)
    }

    /// The user's query hydrated with the session's working memory and the relevant
    /// long-term memories, as chat messages ready for a model.
    #[tool(name = "memory_prompt")]
    async fn memory_prompt(&self, Parameters(args): Parameters<PromptArgs>) -> ToolResult {
        let user = self.user(args.user_id)?;
        let search = self.search_request(SearchArgs {
            text: args.query.clone(),
            user_id: user.clone(),
            namespace: args.namespace.clone(),
            limit: args.limit,
            ..SearchArgs::default()
        })?;
        let request = PromptRequest {
            query: args.query,
            session: args.session_id.map(|session_id| PromptSession {
                session_id,
                namespace: args.namespace,
                user_id: user,
                model_name: args.model_name,
                context_window_max: args.context_window_max,
            }),
            long_term_search: Some(search),
        };
        let prompt = super::prompt::build(&self.service, request)
            .await
            .map_err(failed)?;
        to_text(&prompt)
    }

    /// Replace a session's working memory: its messages, structured memories (promoted to
    /// long-term memory), data and context.
    #[tool(name = "set_working_memory")]
    async fn set_working_memory(&self, Parameters(args): Parameters<SetWorkingArgs>) -> ToolResult {
        let user = self.user(args.user_id)?;
        let now = Utc::now();
        let messages = args
            .messages
            .into_iter()
            .map(|m| WireMessage {
                role: m.role,
                content: m.content,
                id: m.id.unwrap_or_else(|| ulid::Ulid::new().to_string()),
                created_at: now,
                persisted_at: None,
                discrete_memory_extracted: "f".into(),
                created_at_missing: false,
            })
            .collect();
        let memories = args
            .memories
            .into_iter()
            .map(|m| self.record(m, MemoryType::Semantic))
            .collect::<Result<Vec<_>, _>>()?;
        let body = WorkingMemoryBody {
            messages,
            memories,
            data: args.data,
            context: args.context,
            user_id: user.clone(),
            tokens: 0,
            session_id: Some(args.session_id.clone()),
            namespace: args.namespace.clone(),
            long_term_memory_strategy: super::wire::default_strategy(),
            ttl_seconds: args.ttl_seconds,
            last_accessed: now,
        };
        let scope = SessionScope {
            namespace: args.namespace.as_deref(),
            user_id: user.as_deref(),
            ..Default::default()
        };
        let stored = self
            .service
            .working
            .put(&args.session_id, body, &scope)
            .await
            .map_err(failed)?;
        to_text(&stored)
    }

    /// A session's working memory: messages, context summary, structured memories, data.
    #[tool(name = "get_working_memory")]
    async fn get_working_memory(&self, Parameters(args): Parameters<GetWorkingArgs>) -> ToolResult {
        let user = self.user(args.user_id)?;
        let scope = SessionScope {
            namespace: args.namespace.as_deref(),
            user_id: user.as_deref(),
            ..Default::default()
        };
        match self
            .service
            .working
            .get(&args.session_id, &scope)
            .await
            .map_err(failed)?
        {
            Some(memory) => to_text(&memory),
            None => Err(format!("Session {} not found (404)", args.session_id)),
        }
    }

    fn readable(&self, memory: &WireMemory) -> bool {
        self.user
            .as_deref()
            .is_none_or(|u| memory.user_id.as_deref() == Some(u))
    }

    /// One long-term memory by id.
    #[tool(name = "get_long_term_memory")]
    async fn get_long_term_memory(&self, Parameters(args): Parameters<MemoryIdArgs>) -> ToolResult {
        super::ids::check("memory_id", &args.memory_id).map_err(failed)?;
        match self
            .service
            .long_term
            .get(&args.memory_id)
            .await
            .map_err(failed)?
            .filter(|m| self.readable(m))
        {
            Some(memory) => to_text(&memory),
            None => Err(format!("Memory {} not found (404)", args.memory_id)),
        }
    }

    /// Change a long-term memory's text, topics, entities, type, namespace, session or
    /// event date.
    #[tool(name = "edit_long_term_memory")]
    async fn edit_long_term_memory(&self, Parameters(args): Parameters<EditArgs>) -> ToolResult {
        super::ids::check("memory_id", &args.memory_id).map_err(failed)?;
        let current = self
            .service
            .long_term
            .get(&args.memory_id)
            .await
            .map_err(failed)?;
        if !current.as_ref().is_some_and(|m| self.readable(m)) {
            return Err(format!("Memory {} not found (404)", args.memory_id));
        }
        let mut updates = Map::new();
        let mut set = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                updates.insert(k.to_owned(), v);
            }
        };
        set("text", args.text.map(Value::from));
        set("topics", args.topics.map(|t| json!(t)));
        set("entities", args.entities.map(|t| json!(t)));
        set("memory_type", args.memory_type.map(Value::from));
        set("namespace", args.namespace.map(Value::from));
        set("session_id", args.session_id.map(Value::from));
        set("event_date", args.event_date.map(|d| json!(d)));
        if updates.is_empty() {
            return Err("give at least one field to change".into());
        }
        match self
            .service
            .long_term
            .edit(&args.memory_id, Value::Object(updates))
            .await
            .map_err(failed)?
        {
            Some(memory) => to_text(&memory),
            None => Err(format!("Memory {} not found (404)", args.memory_id)),
        }
    }

    /// Delete long-term memories by id.
    #[tool(name = "delete_long_term_memories")]
    async fn delete_long_term_memories(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
    ) -> ToolResult {
        let mut allowed = Vec::new();
        for id in args.memory_ids {
            super::ids::check("memory_id", &id).map_err(failed)?;
            let memory = self.service.long_term.get(&id).await.map_err(failed)?;
            if memory.is_none_or(|m| self.readable(&m)) {
                allowed.push(id);
            }
        }
        let deleted = self
            .service
            .long_term
            .delete(&allowed)
            .await
            .map_err(failed)?;
        to_text(&json!({"status": "ok", "deleted": deleted}))
    }

    /// The current date and time (UTC), to resolve "today", "next week" and to date events.
    #[tool(name = "get_current_datetime")]
    async fn get_current_datetime(&self) -> ToolResult {
        let now = Utc::now();
        to_text(&json!({
            "iso_utc": now.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "unix_ts": now.timestamp(),
        }))
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "agentmem",
    instructions = "Memory for this assistant: working memory per session and long-term memories about the user (facts are reconciled: a repeated fact reinforces, a contradicting one supersedes). Use memory_prompt to answer with what is remembered; create_long_term_memories to remember; the memory tool keeps files under /memories."
)]
impl ServerHandler for MemoryMcp {}

/// Serves the tools on stdin/stdout until the client closes them. A line that is not
/// JSON is answered with a JSON-RPC parse error (code -32700, `id` null) and the next
/// line is served.
pub async fn serve_stdio(
    service: MemoryService,
    user: Option<String>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    super::stdio::serve(|transport| async move {
        let running = MemoryMcp::new(service, user).serve(transport).await?;
        running.waiting().await?;
        Ok(())
    })
    .await
}

/// The streamable-HTTP MCP endpoint, for mounting in an axum router.
pub fn http_service(
    service: MemoryService,
    user: Option<String>,
) -> StreamableHttpService<MemoryMcp, LocalSessionManager> {
    StreamableHttpService::new(
        move || Ok(MemoryMcp::new(service.clone(), user.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    )
}
