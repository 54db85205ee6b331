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

// The types most programs name, at the root.
pub use agentmemory_core::buffer::{
    ConversationBuffer, ShortTermMemory, ShortTermSnapshot, SNAPSHOT_VERSION,
};
pub use agentmemory_core::conversation::{
    ConversationEvent, ConversationStore, InMemoryConversationStore, StoredEvent,
};
pub use agentmemory_core::di::Container;
pub use agentmemory_core::error::{MemoryError, ModelErrorKind, Result, ToolRoundProblem};
pub use agentmemory_core::extract::{FactExtractor, RuleExtractor, Turn};
pub use agentmemory_core::facts::{
    FactCandidate, FactChange, FactPolicy, FactQuery, InMemoryUserMemoryStore, MemoryFact,
    Polarity, ScoredFact, UserMemoryStore,
};
pub use agentmemory_core::kv::{InMemoryKvStore, KvStore, MemoryEntry, MemoryScope};
pub use agentmemory_core::message::{
    Content, ContentBlock, Message, Metadata, Role, ToolCall, DEFAULT_MAX_MESSAGE_BYTES,
};
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
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
pub use agentmemory_core::tokens::{BpeCounter, Encoding};
pub use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
pub use agentmemory_core::vector::{
    Document, Embedder, InMemoryVectorStore, SearchHit, SearchQuery, VectorStore,
};
pub use agentmemory_core::working::WorkingMemory;
pub use agentmemory_macros::remember;
pub use manager::{MemoryConfig, MemoryManager};

/// The short-term memory: a token-budget window with a running summary, and a window
/// of the last N messages.
pub mod buffer {
    pub use agentmemory_core::buffer::{
        ConversationBuffer, ShortTermMemory, ShortTermSnapshot, DEFAULT_MAX_MESSAGES,
        DEFAULT_MAX_TOKENS, SNAPSHOT_VERSION,
    };
}

/// The append-only log of a conversation's events, its export and its replay.
pub mod conversation {
    pub use agentmemory_core::conversation::{
        apply, export, import, replay, ConversationEvent, ConversationExport, ConversationStore,
        InMemoryConversationStore, Owner, StoredEvent, EXPORT_VERSION,
    };
}

/// The dependency-injection container and the tokens sessions resolve by default.
pub mod di {
    pub use agentmemory_core::di::Container;

    /// The tokens a session resolves when the agent names none.
    pub mod tokens {
        pub use agentmemory_core::di::tokens::{
            CONVERSATIONS, EXTRACTOR, KV, SUMMARIZER, USER_MEMORY, VECTORS,
        };
    }
}

/// The offline embedding model (all-MiniLM-L6-v2 on the CPU, feature `local-embed`).
pub mod embed {
    pub use agentmemory_core::embed::{
        holds_model, locate_model, model_cache_dir, EmbedError, ModelLocation, ModelSource,
        Precision, UnknownPrecision, AGENTMEM_EMBED_MODEL, AGENTMEM_EMBED_PRECISION,
        AGENTMEM_MODEL_DIR, MODEL_FILES,
    };
    #[cfg(feature = "local-embed")]
    #[cfg_attr(docsrs, doc(cfg(feature = "local-embed")))]
    pub use agentmemory_core::embed::{LocalEmbedder, LocalEmbedderBuilder};
}

/// Every message of a user kept as an episode, searchable across conversations by
/// words, meaning and time.
pub mod episodes {
    pub use agentmemory_core::episodes::{
        episode_id, resolve, stable_ulid, Episode, EpisodeQuery, EpisodeStore,
        InMemoryEpisodeStore, RecallReason, Retention, ScoredEpisode, VectorEpisodeStore, When,
        MAX_CONTEXT_CHARS,
    };
}

/// The one error type, and what kind of model failure an error is.
pub mod error {
    pub use agentmemory_core::error::{
        BoxError, Chain, MemoryError, ModelErrorKind, Result, ToolRoundProblem,
    };
}

/// Fact extraction: the offline rules and the model-backed extractor.
pub mod extract {
    pub use agentmemory_core::extract::{
        parse_facts, FactExtractor, LlmExtractor, RuleExtractor, Turn, ATTRIBUTES,
    };
}

/// Facts about users: the store trait, the in-memory and embedding-aware stores, the
/// changes a write makes, export and import.
pub mod facts {
    pub use agentmemory_core::facts::{
        export_facts, import_facts, rank_score, restore_facts, EmbeddingUserMemoryStore,
        FactCandidate, FactChange, FactPolicy, FactQuery, FactSource, FactsExport,
        InMemoryUserMemoryStore, MemoryFact, PendingContradiction, Polarity, ScoredFact,
        Transition, UserMemoryStore, FACTS_EXPORT_VERSION, MAX_PENDING, RELEVANCE_FLOOR,
    };
}

/// Bulk ingestion of existing conversations into memory.
pub mod ingest {
    pub use agentmemory_core::ingest::{
        ingest, ingest_with, IngestConfig, IngestReport, INGEST_AGENT,
    };
}

/// Namespaced key/value entries with importance and expiry.
pub mod kv {
    pub use agentmemory_core::kv::{InMemoryKvStore, KvStore, MemoryEntry, MemoryScope};
}

/// Messages, their roles, content blocks and tool calls.
pub mod message {
    pub use agentmemory_core::message::{
        Content, ContentBlock, Message, Metadata, Role, ToolCall, DEFAULT_MAX_MESSAGE_BYTES,
    };
}

/// Chat models: the trait, requests and replies, streaming, and the offline and
/// recording models for tests.
pub mod model {
    pub use agentmemory_core::model::{
        ChatModel, ChatRequest, ChatStream, Completion, OfflineModel, RecordingModel, StreamEvent,
        ToolDefinition, Usage,
    };

    /// An OpenAI-compatible provider (OpenAI, Ollama, vLLM, llama.cpp), feature `openai`.
    #[cfg(feature = "openai")]
    #[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
    pub mod openai {
        pub use agentmemory_core::model::openai::{
            OpenAiChatModel, OpenAiConfig, OpenAiEmbedder, API_KEY_ENV, BASE_URL_ENV,
            DEFAULT_BASE_URL, DEFAULT_MODEL, MODEL_ENV, ORGANIZATION_ENV,
        };
    }
}

/// Recall outside a session: the facts and episodes that matter for a message.
pub mod recall {
    pub use agentmemory_core::recall::{recall, RecallRequest, Recalled, FACT_RELEVANCE_FLOOR};
}

/// Embedding what was stored without a model (or with another one): the background
/// backfill a store opened with a model runs, and `agentmem reembed`.
pub mod reembed {
    pub use agentmemory_core::reembed::{
        embed_stores_backfilled, targets, Backfill, BackfillOptions, BackfillProgress,
        BackfillReport, DenseGate, Embedded, EmbeddingModel, EmbeddingTarget, Phase, Reembed,
        Unembedded, UnembeddedPage, BACKFILL_TOKEN, DEFAULT_BATCH,
    };
}

/// One user's conversation with one agent, turn by turn (`send`, or `prepare` and
/// `commit` around your own model call), and what each turn reports.
pub mod session {
    pub use agentmemory_core::session::{
        Agent, DeferredExtraction, ExtractionMode, PreparedTurn, PromptTokens, Reply, Session,
        SessionBuilder, SessionConfig, Truncation, TurnEvent, TurnReply, TurnReport, TurnStream,
        MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN, SUMMARY_BLOCK_CLOSE, SUMMARY_BLOCK_OPEN,
    };
}

/// For authors of store backends: the rules every backend shares (reconciliation,
/// ranking, text analysis, embeddings), as the built-in stores use them. Applications
/// do not need it.
pub mod store_support {
    pub use agentmemory_core::store_support::{
        closes, cosine, decide, dense_kernel, fact_relevance, fact_relevance_among, for_each_term,
        fuse, index_text, is_low_quality, is_single_valued, message_ids, normalize, normalized,
        paraphrase_of, prepare_candidate, rank_facts, reconcile, reconcile_by_meaning,
        reconcile_by_meaning_keyed, reconcile_with, resolve, supersede_threshold, terms, value_key,
        without_known_messages, FactKey, Fusion, RankedFacts, Reconciliation, Similarity,
        CLOSE_SIMILARITY, CORRECTION_ATTRIBUTE, PARAPHRASE_SIMILARITY, PARAPHRASE_THRESHOLD,
    };
}

/// Summarisers of the older part of a conversation.
pub mod summarize {
    pub use agentmemory_core::summarize::{
        ExtractiveSummarizer, LlmSummarizer, Summarizer, SummaryPrompt, SUMMARY_PLACEHOLDERS,
    };
}

/// Dates in text: the resolver turning "last Tuesday" into a period.
pub mod time {
    pub use agentmemory_core::time::{
        asks_when, resolve, strip, Granularity, TimeMention, TimeSpan,
    };
}

/// Token counting: the chars/4 heuristic and, with `tiktoken`, exact BPE counts.
pub mod tokens {
    #[cfg(feature = "tiktoken")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
    pub use agentmemory_core::tokens::{BpeCounter, Encoding};
    pub use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
}

/// Documents searched by words, meaning or both, and embedders.
pub mod vector {
    pub use agentmemory_core::vector::{
        embed_stores, Condition, DenseStats, Document, Embedder, EmbeddingVectorStore, Filter,
        InMemoryVectorStore, RecentEmbeddings, SearchHit, SearchQuery, VectorStore,
    };
}

/// A scoped scratchpad of keys and values with importance and expiry.
pub mod working {
    pub use agentmemory_core::working::{SetOptions, WorkingMemory, DEFAULT_IMPORTANCE};
}

pub mod memory_tool;

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
/// Everything a turn needs, the open turn (`prepare`, your own model call, `commit`)
/// and streaming included. Backend helpers live in [`stores`], test doubles such as
/// [`RecordingModel`](model::RecordingModel) in [`model`].
pub mod prelude {
    pub use crate::manager::{MemoryConfig, MemoryManager};
    pub use crate::remember;
    pub use agentmemory_core::buffer::{ConversationBuffer, ShortTermMemory};
    pub use agentmemory_core::extract::{FactExtractor, RuleExtractor};
    pub use agentmemory_core::facts::{
        FactCandidate, FactChange, FactQuery, InMemoryUserMemoryStore, MemoryFact, ScoredFact,
        UserMemoryStore,
    };
    pub use agentmemory_core::model::{
        ChatModel, ChatRequest, ChatStream, Completion, OfflineModel, StreamEvent, ToolDefinition,
        Usage,
    };
    pub use agentmemory_core::session::{
        Agent, ExtractionMode, PreparedTurn, Reply, Session, SessionBuilder, SessionConfig,
        TurnEvent, TurnReply, TurnReport, TurnStream,
    };
    pub use agentmemory_core::vector::{
        Document, InMemoryVectorStore, SearchHit, SearchQuery, VectorStore,
    };
    pub use agentmemory_core::working::WorkingMemory;
    pub use agentmemory_core::{
        Container, ConversationEvent, ConversationStore, InMemoryConversationStore,
        InMemoryKvStore, KvStore, MemoryError, Message, Remember, RememberSpec, Role, ToolCall,
    };
}

#[doc(hidden)]
pub mod __private {
    pub use agentmemory_core::{Remember, RememberSpec};
}

pub mod graph;
pub mod manager;

/// The memory server (feature `server`): the working-memory REST API and, with `mcp`, MCP tools.
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub mod server;
