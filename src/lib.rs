//! # agentmemory
//!
//! Declarative memory for AI agents. Put `#[remember]` on an agent struct and every
//! conversation turn gets memory for free:
//!
//! - the recent conversation is kept inside a token budget, older turns summarised,
//!   never silently lost ([`ShortTermMemory`]);
//! - the facts known about the user that matter for the message are injected into the
//!   system prompt, inside a delimited, token-capped block ([`UserMemoryStore`]);
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
//! container.register_model("offline", Arc::new(OfflineModel::new()));
//!
//! let mut monday = Session::builder(Assistant, &container).user("alice").build().await?;
//! monday.send("Hi, I'm Alice and I love museums").await?;
//!
//! let mut friday = Session::builder(Assistant, &container).user("alice").build().await?;
//! let reply = friday.send("Any plans for this weekend?").await?;
//! assert!(reply.report.memory_block.unwrap().contains("museums"));
//! # Ok::<_, agentmemory::MemoryError>(())
//! # }).unwrap();
//! ```
#![warn(missing_docs)]

pub use agentmemory_core::*;
pub use agentmemory_macros::remember;

#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub mod rig;

/// Persistent stores (SQLite, JSON files), each behind a cargo feature.
pub use agentmemory_stores as stores;

/// The names most programs need, in one import: `use agentmemory::prelude::*;`.
pub mod prelude {
    pub use crate::remember;
    pub use agentmemory_core::buffer::{ConversationBuffer, ShortTermMemory};
    pub use agentmemory_core::extract::{FactExtractor, RuleExtractor};
    pub use agentmemory_core::facts::{
        FactCandidate, FactChange, InMemoryUserMemoryStore, MemoryFact, UserMemoryStore,
    };
    pub use agentmemory_core::model::{ChatModel, OfflineModel};
    pub use agentmemory_core::session::{Agent, Session, TurnReply, TurnReport};
    pub use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
    pub use agentmemory_core::working::WorkingMemory;
    pub use agentmemory_core::{
        Container, ConversationStore, InMemoryConversationStore, InMemoryKvStore, KvStore,
        MemoryError, Message, Remember, RememberSpec, Role,
    };
}

#[doc(hidden)]
pub mod __private {
    pub use agentmemory_core::{Remember, RememberSpec};
}
