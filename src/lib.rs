//! # agentmemory
//!
//! Declarative memory for AI agents. Put `#[remember]` on an agent struct and every
//! conversation turn gets memory for free:
//!
//! - the recent conversation is kept inside a token budget, older turns summarised,
//!   never silently lost ([`ShortTermMemory`]);
//! - the facts known about the user that matter for the message are injected into the
//!   system prompt, inside a delimited, token-capped block ([`UserMemoryStore`]);
//! - every message is kept as an episode of the user, with when it was said; the
//!   earlier messages that matter for the message (from any conversation, ranked by
//!   words, meaning and the period it names) are recalled beside the facts, with their
//!   dates ([`episodes`]);
//! - new facts are extracted from each turn and reconciled with what is known:
//!   repeated facts are reinforced, contradicted ones superseded and kept as history.
//!
//! Stores are chosen by dependency-injection token in a [`Container`]: the same agent
//! runs on in-memory stores in tests, SQLite on a laptop, and a server when it grows.
//!
//! ```
//! use std::sync::Arc;
//! use agentmemory::prelude::*;
//!
//! #[remember(store = "user_memory", top_k = 5)]
//! struct Assistant;
//!
//! impl Agent for Assistant {
//!     fn system_prompt(&self) -> std::borrow::Cow<'_, str> { "You are a helpful assistant.".into() }
//!     fn model(&self) -> &str { "offline" }
//! }
//!
//! # tokio_test::block_on(async {
//! let container = Container::new();
//! container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
//! container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
//! container.register_model("offline", Arc::new(OfflineModel::new()));
//!
//! let mut monday = Session::builder(Assistant, &container).user("alice").build().await?;
//! monday.send("Hi, I'm Alice and I love museums").await?;
//!
//! let mut friday = Session::builder(Assistant, &container).user("alice").build().await?;
//! let reply = friday.send("Which museums should I see in Vienna?").await?;
//! assert!(reply.report.memory_block.unwrap().contains("museums"));
//! # Ok::<_, agentmemory::MemoryError>(())
//! # }).unwrap();
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// docs.rs builds with every feature on a nightly toolchain and `--cfg docsrs`: `doc(cfg)`
// marks what each feature adds.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The modules of the engine, each with its whole public API.
pub use agentmemory_core::{
    buffer, conversation, di, embed, episodes, error, extract, facts, ingest, kv, message, model,
    recall, render, session, summarize, text, time, tokens, vector, working,
};

// The types most programs name, at the root.
pub use agentmemory_core::buffer::{
    ConversationBuffer, ShortTermMemory, ShortTermSnapshot, SNAPSHOT_VERSION,
};
pub use agentmemory_core::conversation::{
    ConversationEvent, ConversationStore, InMemoryConversationStore, StoredEvent,
};
pub use agentmemory_core::di::Container;
pub use agentmemory_core::error::{MemoryError, Result, ToolRoundProblem};
pub use agentmemory_core::extract::{FactExtractor, RuleExtractor, Turn};
pub use agentmemory_core::facts::{
    FactCandidate, FactChange, FactPolicy, InMemoryUserMemoryStore, MemoryFact, Polarity,
    ScoredFact, UserMemoryStore,
};
pub use agentmemory_core::kv::{InMemoryKvStore, KvStore, MemoryEntry, MemoryScope};
pub use agentmemory_core::message::{Content, ContentBlock, Message, Metadata, Role, ToolCall};
pub use agentmemory_core::model::{
    ChatModel, ChatRequest, ChatStream, Completion, OfflineModel, StreamEvent, ToolDefinition,
    Usage,
};
pub use agentmemory_core::remember::{Remember, RememberSpec};
pub use agentmemory_core::session::{
    Agent, DeferredExtraction, ExtractionMode, PreparedTurn, PromptTokens, Reply, Session,
    SessionBuilder, SessionConfig, Truncation, TurnEvent, TurnReply, TurnReport, TurnStream,
};
pub use agentmemory_core::summarize::{ExtractiveSummarizer, Summarizer};
#[cfg(feature = "tiktoken")]
pub use agentmemory_core::tokens::{BpeCounter, Encoding};
pub use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
pub use agentmemory_core::vector::{
    Document, Embedder, InMemoryVectorStore, SearchHit, SearchQuery, VectorStore,
};
pub use agentmemory_core::working::WorkingMemory;
pub use agentmemory_macros::remember;

/// A backend for Claude's memory tool (`memory_20250818`): the six file commands over
/// agentmem's stores, each file a searchable document whose edits keep every version.
pub use agentmemory_core::memory_tool;

#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub mod rig;

/// The attribute for implementing [`ChatModel`], [`ConversationStore`] and the other
/// async traits, re-exported so no extra dependency is needed.
pub use async_trait::async_trait;

/// Persistent stores (SQLite, JSON files, Redis, PostgreSQL), each behind a cargo feature.
pub use agentmemory_stores as stores;

/// The names most programs need, in one import: `use agentmemory::prelude::*;`.
///
/// Only the runtime: backend helpers live in [`stores`], test doubles such as
/// [`RecordingModel`](model::RecordingModel) in [`model`].
pub mod prelude {
    pub use crate::remember;
    pub use agentmemory_core::buffer::{ConversationBuffer, ShortTermMemory};
    pub use agentmemory_core::extract::{FactExtractor, RuleExtractor};
    pub use agentmemory_core::facts::{
        FactCandidate, FactChange, InMemoryUserMemoryStore, MemoryFact, UserMemoryStore,
    };
    pub use agentmemory_core::model::{
        ChatModel, ChatRequest, ChatStream, Completion, OfflineModel, StreamEvent, ToolDefinition,
    };
    pub use agentmemory_core::session::{
        Agent, ExtractionMode, PreparedTurn, Reply, Session, SessionConfig, TurnEvent, TurnReply,
        TurnReport, TurnStream,
    };
    pub use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
    pub use agentmemory_core::working::WorkingMemory;
    pub use agentmemory_core::{
        Container, ConversationStore, InMemoryConversationStore, InMemoryKvStore, KvStore,
        MemoryError, Message, Remember, RememberSpec, Role, ToolCall,
    };
}

#[doc(hidden)]
pub mod __private {
    pub use agentmemory_core::{Remember, RememberSpec};
}

/// The memory server (feature `server`): the working-memory REST API and, with `mcp`, MCP tools.
#[cfg(feature = "server")]
pub mod server;
