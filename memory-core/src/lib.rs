//! # agentmemory-core
//!
//! The kernel of [agentmemory](https://docs.rs/agentmemory): message types, token counting,
//! conversation buffers, working memory, the four store traits with their in-memory
//! implementations, fact extraction and reconciliation, the DI container and the session
//! runtime. Search is `agentmemory-index` and the local embedder `agentmemory-embed`, both
//! below this crate. Most users depend on the `agentmemory` facade instead of this crate.
#![warn(missing_docs)]
// docs.rs builds with every feature on a nightly toolchain and `--cfg docsrs`: `doc(cfg)`
// marks what each feature adds.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The kernel has no unsafe code: the SIMD kernels live in `agentmemory-index` (dense
// search) and `agentmemory-embed` (the forward pass), each behind CPU-feature tokens.
#![forbid(unsafe_code)]

pub mod buffer;
pub mod concept_map;
pub mod conversation;
pub mod di;
pub mod embed;
pub mod episodes;
pub mod error;
pub mod extract;
pub mod facts;
mod heap;
pub mod ingest;
pub mod kv;
pub mod message;
pub mod model;
mod offload;
pub mod recall;
pub mod reembed;
pub mod remember;
pub mod render;
mod rfc3339;
pub mod session;
pub mod store_support;
pub mod summarize;
pub(crate) use agentmemory_index::text;
pub mod time;
pub mod tokens;
pub mod vector;
pub mod working;

pub use buffer::{ConversationBuffer, ShortTermMemory, ShortTermSnapshot, SNAPSHOT_VERSION};
pub use conversation::{
    ConversationEvent, ConversationStore, InMemoryConversationStore, StoredEvent,
};
pub use di::Container;
pub use error::{MemoryError, ModelErrorKind, Result, ToolRoundProblem};
pub use extract::{FactExtractor, RuleExtractor, Turn};
pub use facts::{
    FactCandidate, FactChange, FactPolicy, InMemoryUserMemoryStore, MemoryFact, Polarity,
    ScoredFact, UserMemoryStore,
};
pub use kv::{InMemoryKvStore, KvStore, MemoryEntry, MemoryScope};
pub use message::{
    Content, ContentBlock, Message, Metadata, Role, ToolCall, DEFAULT_MAX_MESSAGE_BYTES,
};
pub use model::{
    ChatModel, ChatRequest, ChatStream, Completion, StreamEvent, ToolDefinition, Usage,
};
pub use remember::{Remember, RememberSpec};
pub use session::{
    Agent, ExtractionMode, PreparedTurn, Reply, Session, SessionBuilder, SessionConfig, TurnEvent,
    TurnReply, TurnReport,
};
pub use summarize::{ExtractiveSummarizer, Summarizer};
#[cfg(feature = "tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
pub use tokens::{BpeCounter, Encoding};
pub use tokens::{HeuristicCounter, TokenCounter};
pub use vector::{Document, Embedder, InMemoryVectorStore, SearchHit, SearchQuery, VectorStore};
pub use working::WorkingMemory;
#[cfg(feature = "testkit")]
#[cfg_attr(docsrs, doc(cfg(feature = "testkit")))]
pub mod testkit;
