//! # agentmemory-core
//!
//! The engine of [agentmemory](https://docs.rs/agentmemory): message types, token counting,
//! conversation buffers, working memory, the four store traits with their in-memory
//! implementations, fact extraction and reconciliation, the DI container and the session
//! runtime. Most users depend on the `agentmemory` facade instead of this crate.
#![warn(missing_docs)]
// docs.rs builds with every feature on a nightly toolchain and `--cfg docsrs`: `doc(cfg)`
// marks what each feature adds.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Unsafe code lives only in these files (`grep -rln unsafe src` lists them all); every block
// says why it is sound, every unsafe operation in an `unsafe fn` sits in its own block:
// - `vector/simd.rs`: dense search's AVX2 and AVX-512 VNNI dot-product kernels (intrinsics
//   over raw pointers), called only with a `cpu` token that proves the CPU's features;
// - `embed/kernels.rs`: the one call into `gemm` (a raw-pointer API), and the element-wise
//   loops compiled for AVX2 / AVX-512, called with a `cpu` token;
// - `embed/kernels_i8.rs`: the int8 embedder's AVX2 and AVX-512 VNNI matrix products
//   (intrinsics over raw pointers), reachable only through a `cpu` token;
// - `embed/few_rows.rs`: the AVX-512 product for a few token rows (intrinsics over raw
//   pointers into slices it checks first), called with a `cpu` token; the threads get
//   disjoint slices of the destination, split safely;
// - `embed/packed.rs`: memory-mapping the packed weights file (`memmap2`'s `map` is unsafe
//   because another process could change the file while it is mapped);
// - `lib.rs`: only this comment and the lints below.
// Every SIMD kernel has a portable twin with the same logic, which Miri runs
// (`.ci/miri.sh`) and the tests compare the SIMD kernel against.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod buffer;
pub mod conversation;
pub mod di;
pub mod embed;
pub mod episodes;
pub mod error;
pub mod extract;
pub mod facts;
pub mod graph;
pub mod ingest;
pub mod kv;
pub mod manager;
pub mod memory_tool;
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
pub use manager::{MemoryConfig, MemoryManager};
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
