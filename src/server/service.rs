//! [`MemoryService`]: the stores of one [`Container`] behind the server, shared by the
//! REST routes and the MCP tools.

use std::sync::Arc;

use agentmemory_core::summarize::{ExtractiveSummarizer, Summarizer};
use agentmemory_core::{Container, ConversationStore, KvStore, UserMemoryStore, VectorStore};

use super::long_term::LongTermMemory;
use super::working::WorkingMemoryStore;

/// Working and long-term memory over the stores of a container.
#[derive(Clone)]
pub struct MemoryService {
    /// Sessions.
    pub working: WorkingMemoryStore,
    /// Facts and documents.
    pub long_term: LongTermMemory,
}

impl MemoryService {
    /// The service over the default stores of `container` (as [`StoreUrl::open`] registers
    /// them), summarising with agentmem's offline [`ExtractiveSummarizer`].
    ///
    /// [`StoreUrl::open`]: agentmemory_stores::StoreUrl::open
    pub fn from_container(container: &Container) -> agentmemory_core::Result<Self> {
        let kv = container.resolve::<dyn KvStore>(None)?;
        let facts = container.resolve::<dyn UserMemoryStore>(None)?;
        let vectors = container.resolve::<dyn VectorStore>(None)?;
        // resolved so that a container without a conversation store fails at start-up like
        // every other agentmem entry point
        let _ = container.resolve::<dyn ConversationStore>(None)?;
        Ok(Self::new(
            kv,
            facts,
            vectors,
            Arc::new(ExtractiveSummarizer::new()),
        ))
    }

    /// The service over these stores.
    pub fn new(
        kv: Arc<dyn KvStore>,
        facts: Arc<dyn UserMemoryStore>,
        vectors: Arc<dyn VectorStore>,
        summarizer: Arc<dyn Summarizer>,
    ) -> Self {
        let long_term = LongTermMemory::new(facts, vectors, kv.clone());
        let working = WorkingMemoryStore::new(kv, summarizer, long_term.clone());
        Self { working, long_term }
    }
}
