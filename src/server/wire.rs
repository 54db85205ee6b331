//! The JSON shapes of the working-memory REST API, field for field as the published
//! `agent-memory-client` (PyPI 0.14) sends and reads them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One conversation message of a session (`MemoryMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "SentMessage")]
pub struct WireMessage {
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// The text.
    pub content: String,
    /// The client's id (a ULID by default); assigned by the server when absent.
    #[serde(default = "new_id")]
    pub id: String,
    /// When the message was created; now when absent.
    #[serde(default = "Utc::now")]
    pub created_at: DateTime<Utc>,
    /// When the message was written to long-term storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persisted_at: Option<DateTime<Utc>>,
    /// `"t"` once memory extraction ran over it (or was scheduled to: the server marks a
    /// message when it hands it to background extraction).
    #[serde(default = "not_extracted")]
    pub discrete_memory_extracted: String,
    /// Whether the client sent no `created_at` (the server filled in now): deprecated in
    /// the reference API, which logs a warning. Never serialised.
    #[serde(skip)]
    pub created_at_missing: bool,
}

/// A message as the client sends it: `created_at` may be missing.
#[derive(Deserialize)]
struct SentMessage {
    role: String,
    content: String,
    #[serde(default = "new_id")]
    id: String,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    persisted_at: Option<DateTime<Utc>>,
    #[serde(default = "not_extracted")]
    discrete_memory_extracted: String,
}

impl From<SentMessage> for WireMessage {
    fn from(sent: SentMessage) -> Self {
        Self {
            role: sent.role,
            content: sent.content,
            id: sent.id,
            created_at_missing: sent.created_at.is_none(),
            created_at: sent.created_at.unwrap_or_else(Utc::now),
            persisted_at: sent.persisted_at,
            discrete_memory_extracted: sent.discrete_memory_extracted,
        }
    }
}

impl WireMessage {
    /// Whether memory extraction ran over it (`discrete_memory_extracted == "t"`).
    pub fn extracted(&self) -> bool {
        self.discrete_memory_extracted == "t"
    }
}

/// A long-term memory as the client sends and reads it (`MemoryRecord`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireMemory {
    /// The client's id, used for deduplication and overwrites.
    #[serde(default = "new_id")]
    pub id: String,
    /// The statement.
    pub text: String,
    /// The session it came from.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Whose memory it is.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Its namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Last read.
    #[serde(default = "Utc::now")]
    pub last_accessed: DateTime<Utc>,
    /// First stored.
    #[serde(default = "Utc::now")]
    pub created_at: DateTime<Utc>,
    /// Last changed.
    #[serde(default = "Utc::now")]
    pub updated_at: DateTime<Utc>,
    /// Topics.
    #[serde(default)]
    pub topics: Option<Vec<String>>,
    /// Entities.
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    /// Deduplication hash (informational).
    #[serde(default)]
    pub memory_hash: Option<String>,
    /// `"t"` or `"f"`.
    #[serde(default = "not_extracted")]
    pub discrete_memory_extracted: String,
    /// `semantic`, `episodic` or `message`.
    #[serde(default = "message_type")]
    pub memory_type: MemoryType,
    /// When the server stored it in long-term memory.
    #[serde(default)]
    pub persisted_at: Option<DateTime<Utc>>,
    /// Message ids it was extracted from.
    #[serde(default)]
    pub extracted_from: Option<Vec<String>>,
    /// When the event it describes happened.
    #[serde(default)]
    pub event_date: Option<DateTime<Utc>>,
}

/// The three kinds of long-term memory of the reference API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// A fact about the user: stored as an agentmem fact, reconciled.
    Semantic,
    /// Something that happened: stored as a document.
    Episodic,
    /// A conversation message: stored as a document.
    Message,
}

impl MemoryType {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Semantic => "semantic",
            MemoryType::Episodic => "episodic",
            MemoryType::Message => "message",
        }
    }
}

/// A search result (`MemoryRecordResult`): the memory and its distance (lower is closer).
#[derive(Debug, Clone, Serialize)]
pub struct WireMemoryResult {
    /// The memory.
    #[serde(flatten)]
    pub memory: WireMemory,
    /// `1 − score`.
    pub dist: f32,
}

/// A session's working memory (`WorkingMemory`), as sent by `PUT` and stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkingMemoryBody {
    /// Conversation messages, oldest first.
    #[serde(default)]
    pub messages: Vec<WireMessage>,
    /// Structured memories awaiting promotion to long-term memory.
    #[serde(default)]
    pub memories: Vec<WireMemory>,
    /// Free JSON data of the session.
    #[serde(default)]
    pub data: Option<Map<String, Value>>,
    /// Summary of the messages that left the window.
    #[serde(default)]
    pub context: Option<String>,
    /// The session's user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Token count of messages and context (recomputed by the server).
    #[serde(default)]
    pub tokens: u64,
    /// The session id (the path's id wins).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Extraction strategy, kept as given.
    #[serde(default = "default_strategy")]
    pub long_term_memory_strategy: Value,
    /// Expiry in seconds; persistent when absent.
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
    /// Last read or written.
    #[serde(default = "Utc::now")]
    pub last_accessed: DateTime<Utc>,
}

/// The answer to `GET`/`PUT` of a session (`WorkingMemoryResponse`).
#[derive(Debug, Clone, Serialize)]
pub struct WorkingMemoryResponse {
    /// The stored working memory.
    #[serde(flatten)]
    pub memory: WorkingMemoryBody,
    /// Percentage of the context window used, when a window is known.
    pub context_percentage_total_used: Option<f64>,
    /// Percentage of the summarisation threshold used, when a window is known.
    pub context_percentage_until_summarization: Option<f64>,
    /// Whether this request created the session.
    pub new_session: Option<bool>,
}

/// `{"status": "ok"}`.
#[derive(Debug, Clone, Serialize)]
pub struct Ack {
    /// Always `"ok"`.
    pub status: &'static str,
}

impl Ack {
    /// The success acknowledgement.
    pub const OK: Ack = Ack { status: "ok" };
}

/// `POST /v1/long-term-memory/` body.
#[derive(Debug, Clone, Deserialize)]
pub struct CreateMemories {
    /// The memories.
    pub memories: Vec<WireMemory>,
    /// Accepted (and type-checked) for compatibility, never read: agentmem always
    /// reconciles facts.
    #[serde(default)]
    #[allow(dead_code)]
    pub deduplicate: Option<bool>,
}

/// An equality filter (`SessionId`, `Namespace`, `UserId`, `MemoryType`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TagFilter {
    /// Equal to.
    #[serde(default)]
    pub eq: Option<String>,
    /// One of.
    #[serde(default, rename = "in", alias = "in_")]
    pub in_: Option<Vec<String>>,
    /// Not equal to.
    #[serde(default)]
    pub not_eq: Option<String>,
    /// None of.
    #[serde(default)]
    pub not_in: Option<Vec<String>>,
}

impl TagFilter {
    /// Whether `value` (absent = `None`) passes.
    pub fn matches(&self, value: Option<&str>) -> bool {
        if let Some(eq) = &self.eq {
            if value != Some(eq.as_str()) {
                return false;
            }
        }
        if let Some(any) = &self.in_ {
            if !value.is_some_and(|v| any.iter().any(|a| a == v)) {
                return false;
            }
        }
        if let Some(ne) = &self.not_eq {
            if value == Some(ne.as_str()) {
                return false;
            }
        }
        if let Some(none) = &self.not_in {
            if value.is_some_and(|v| none.iter().any(|a| a == v)) {
                return false;
            }
        }
        true
    }

    /// The one value this filter pins, if it pins exactly one.
    pub fn single(&self) -> Option<&str> {
        match (&self.eq, &self.in_) {
            (Some(eq), _) => Some(eq),
            (None, Some(list)) if list.len() == 1 => Some(&list[0]),
            _ => None,
        }
    }
}

/// A set filter (`Topics`, `Entities`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SetFilter {
    /// At least one of.
    #[serde(default)]
    pub any: Option<Vec<String>>,
    /// All of.
    #[serde(default)]
    pub all: Option<Vec<String>>,
    /// None of.
    #[serde(default)]
    pub none: Option<Vec<String>>,
}

impl SetFilter {
    /// Whether `values` passes (compared case-insensitively).
    pub fn matches(&self, values: &[String]) -> bool {
        let has = |wanted: &String| values.iter().any(|v| v.eq_ignore_ascii_case(wanted));
        if let Some(any) = &self.any {
            if !any.iter().any(has) {
                return false;
            }
        }
        if let Some(all) = &self.all {
            if !all.iter().all(has) {
                return false;
            }
        }
        if let Some(none) = &self.none {
            if none.iter().any(has) {
                return false;
            }
        }
        true
    }
}

/// A date range filter (`CreatedAt`, `LastAccessed`, `EventDate`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DateFilter {
    /// On or after.
    #[serde(default)]
    pub gte: Option<DateTime<Utc>>,
    /// On or before.
    #[serde(default)]
    pub lte: Option<DateTime<Utc>>,
    /// Exactly.
    #[serde(default)]
    pub eq: Option<DateTime<Utc>>,
}

impl DateFilter {
    /// Whether `value` passes.
    pub fn matches(&self, value: Option<DateTime<Utc>>) -> bool {
        let Some(value) = value else {
            return self.gte.is_none() && self.lte.is_none() && self.eq.is_none();
        };
        self.gte.is_none_or(|t| value >= t)
            && self.lte.is_none_or(|t| value <= t)
            && self.eq.is_none_or(|t| value == t)
    }
}

/// `POST /v1/long-term-memory/search` body; also `long_term_search` of a memory prompt.
#[derive(Debug, Clone, Deserialize)]
pub struct SearchRequest {
    /// The query; empty lists by filters only.
    #[serde(default)]
    pub text: String,
    /// Session filter.
    #[serde(default)]
    pub session_id: Option<TagFilter>,
    /// Namespace filter.
    #[serde(default)]
    pub namespace: Option<TagFilter>,
    /// Topic filter.
    #[serde(default)]
    pub topics: Option<SetFilter>,
    /// Entity filter.
    #[serde(default)]
    pub entities: Option<SetFilter>,
    /// Creation date filter.
    #[serde(default)]
    pub created_at: Option<DateFilter>,
    /// Last access filter.
    #[serde(default)]
    pub last_accessed: Option<DateFilter>,
    /// Event date filter.
    #[serde(default)]
    pub event_date: Option<DateFilter>,
    /// User filter.
    #[serde(default)]
    pub user_id: Option<TagFilter>,
    /// Memory type filter.
    #[serde(default)]
    pub memory_type: Option<TagFilter>,
    /// Only results closer than this distance (`1 − score`).
    #[serde(default)]
    pub distance_threshold: Option<f32>,
    /// Page size (default 10).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Page start.
    #[serde(default)]
    pub offset: usize,
}

impl SearchRequest {
    /// A search for `text` with no filters.
    pub fn text(text: impl Into<String>, limit: usize) -> Self {
        Self {
            text: text.into(),
            session_id: None,
            namespace: None,
            topics: None,
            entities: None,
            created_at: None,
            last_accessed: None,
            event_date: None,
            user_id: None,
            memory_type: None,
            distance_threshold: None,
            limit,
            offset: 0,
        }
    }
}

/// `POST /v1/long-term-memory/search` answer (`MemoryRecordResults`).
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// This page.
    pub memories: Vec<WireMemoryResult>,
    /// Matches in all pages.
    pub total: usize,
    /// Where the next page starts, if there is one.
    pub next_offset: Option<usize>,
}

/// The `session` part of a memory prompt request.
#[derive(Debug, Clone, Deserialize)]
pub struct PromptSession {
    /// The session.
    pub session_id: String,
    /// Its namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Its user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Model whose window applies.
    #[serde(default)]
    pub model_name: Option<String>,
    /// Window in tokens (the client sends it as a string).
    #[serde(default, deserialize_with = "number_or_string")]
    pub context_window_max: Option<u64>,
}

/// `POST /v1/memory/prompt` body.
#[derive(Debug, Clone, Deserialize)]
pub struct PromptRequest {
    /// The user's query.
    pub query: String,
    /// The session whose working memory to include.
    #[serde(default)]
    pub session: Option<PromptSession>,
    /// The long-term search whose results to include.
    #[serde(default)]
    pub long_term_search: Option<SearchRequest>,
}

/// `GET /v1/working-memory/` answer.
#[derive(Debug, Clone, Serialize)]
pub struct SessionList {
    /// Session ids of this page.
    pub sessions: Vec<String>,
    /// Sessions in all pages.
    pub total: usize,
}

fn new_id() -> String {
    ulid::Ulid::new().to_string()
}

fn not_extracted() -> String {
    "f".to_owned()
}

fn message_type() -> MemoryType {
    MemoryType::Message
}

fn default_limit() -> usize {
    10
}

/// `{"strategy": "discrete", "config": {}}`.
pub fn default_strategy() -> Value {
    serde_json::json!({"strategy": "discrete", "config": {}})
}

/// Accepts `4096` and `"4096"`.
pub fn number_or_string<'de, D>(deserializer: D) -> Result<Option<u64>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u64),
        Text(String),
    }
    match Option::<Either>::deserialize(deserializer)? {
        None => Ok(None),
        Some(Either::Number(n)) => Ok(Some(n)),
        Some(Either::Text(t)) => t
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("`{t}` is not a whole number"))),
    }
}
