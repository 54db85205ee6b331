//! [`MemoryManager`]: conversation memory and working memory behind one object.
//!
//! A manager sits over a [`Container`] (or a store URL, through `agentmemory-stores`):
//! conversations are logs of its [`ConversationStore`], read back as a
//! [`ShortTermMemory`](agentmemory_core::buffer::ShortTermMemory) within the token budget of its
//! [`MemoryConfig`], older turns folded into a running summary past the threshold; working
//! memory is a [`WorkingMemory`] scope of its [`KvStore`]. [`fork`](MemoryManager::fork)
//! gives a sub-agent the same conversations and a working memory of its own;
//! [`session`](MemoryManager::session) builds a [`Session`] over the same
//! stores whose prompts carry the working memory.

mod config;
mod conversation;
mod open;
mod scratch;

use std::sync::Arc;

use agentmemory_core::conversation::ConversationStore;
use agentmemory_core::di::Container;
use agentmemory_core::error::{MemoryError, Result};
use agentmemory_core::kv::KvStore;
use agentmemory_core::session::{Agent, Session, SessionBuilder};
use agentmemory_core::summarize::Summarizer;
use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
use agentmemory_core::working::WorkingMemory;

pub use config::{
    MemoryConfig, CONFIG_ENV_VARS, DEFAULT_WORKING_SCOPE, MAX_MESSAGE_BYTES_ENV,
    MEMORY_BLOCK_TOKENS_ENV, SUMMARIZE_THRESHOLD_ENV, SUMMARIZE_TO_ENV, SUMMARY_TOKENS_ENV,
    WINDOW_TOKENS_ENV, WORKING_MEMORY_TOKENS_ENV, WORKING_SCOPE_ENV,
};
pub use conversation::AddedTurn;
pub use open::DEFAULT_MANAGER_URL;

/// Conversation memory and working memory behind one object.
///
/// ```
/// # tokio_test::block_on(async {
/// use agentmemory::manager::{MemoryConfig, MemoryManager};
///
/// let memory = MemoryManager::in_memory(MemoryConfig::default().with_window_tokens(32_000))?;
/// let conversation = memory.new_conversation();
/// memory.add_turn(&conversation, "What is Rust?", "A systems language.").await?;
/// assert_eq!(memory.history(&conversation).await?.len(), 2);
///
/// memory.set("doc_type", "invoice").await?;
/// assert_eq!(memory.get("doc_type").await?, Some("invoice".into()));
/// assert!(memory.working_context().await?.contains("- doc_type: invoice"));
///
/// let child = memory.fork("classifier");
/// child.set("label", "urgent").await?;
/// assert_eq!(memory.get("label").await?, None); // working memory is the child's own
/// assert_eq!(child.history(&conversation).await?.len(), 2); // the conversation is shared
/// # Ok::<_, agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct MemoryManager {
    container: Container,
    log: Arc<dyn ConversationStore>,
    kv: Arc<dyn KvStore>,
    summarizer: Arc<dyn Summarizer>,
    counter: Arc<dyn TokenCounter>,
    working: WorkingMemory,
    config: MemoryConfig,
    /// The key/value namespace where the manager (and its forks) record the
    /// conversations they wrote, so that [`clear_all`](Self::clear_all) removes those and
    /// no other: `manager:{root working scope}:conversations`.
    registry: Arc<str>,
}

impl std::fmt::Debug for MemoryManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryManager")
            .field("working_scope", &self.working.scope_id())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl MemoryManager {
    /// A manager over the default providers of `container`: its
    /// [`ConversationStore`], its [`KvStore`], and its [`Summarizer`] when one is
    /// registered (the extractive summariser otherwise). A missing store, or a `config`
    /// whose budgets do not fit together, is an error here, before anything is written.
    pub fn new(container: &Container, config: MemoryConfig) -> Result<Self> {
        config.validate()?;
        let log = container
            .resolve::<dyn ConversationStore>(None)
            .map_err(|e| missing("ConversationStore", e))?;
        let kv = container
            .resolve::<dyn KvStore>(None)
            .map_err(|e| missing("KvStore", e))?;
        let summarizer = container
            .resolve_optional::<dyn Summarizer>(None)?
            .unwrap_or_else(|| Arc::new(agentmemory_core::summarize::ExtractiveSummarizer::new()));
        let working = WorkingMemory::with_store(Arc::clone(&kv), config.working_scope.clone());
        let registry = format!("manager:{}:conversations", config.working_scope).into();
        Ok(Self {
            registry,
            container: container.clone(),
            log,
            kv,
            summarizer,
            counter: Arc::new(HeuristicCounter::default()),
            working,
            config,
        })
    }

    /// A manager over new in-memory stores (tests, short-lived processes).
    pub fn in_memory(config: MemoryConfig) -> Result<Self> {
        let container = Container::new();
        container
            .register_conversations(
                agentmemory_core::di::tokens::CONVERSATIONS,
                Arc::new(agentmemory_core::conversation::InMemoryConversationStore::new()),
            )
            .register_kv(
                agentmemory_core::di::tokens::KV,
                Arc::new(agentmemory_core::kv::InMemoryKvStore::new()),
            );
        Self::new(&container, config)
    }

    /// Counts tokens with `counter` instead of the chars/4 heuristic.
    pub fn with_token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = counter;
        self
    }

    /// The budgets in force.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// The container the stores come from.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// The conversation store.
    pub fn conversations(&self) -> &Arc<dyn ConversationStore> {
        &self.log
    }

    /// This manager's working memory.
    pub fn working(&self) -> &WorkingMemory {
        &self.working
    }

    /// A manager sharing this one's stores and conversations, with its own working memory
    /// under `scope` (for a sub-agent or a branch of a pipeline). Nothing is copied: the
    /// child starts with an empty working memory, and what it sets stays out of this one's.
    pub fn fork(&self, scope: impl Into<String>) -> Self {
        let mut child = self.clone();
        child.working = self.working.fork(scope);
        child.config.working_scope = child.working.scope_id().to_owned();
        child
    }

    /// A session builder of `agent` over this manager's container and budgets
    /// ([`MemoryConfig::session_config`]), its prompts carrying this manager's working
    /// memory ([`SessionBuilder::working_memory`]). Name the user (and, to continue one of
    /// this manager's conversations, the conversation) before building.
    pub fn session<A: Agent>(&self, agent: A) -> SessionBuilder<A> {
        Session::builder(agent, &self.container)
            .config(self.config.session_config())
            .working_memory(self.working.clone())
    }

    /// Deletes this manager's working memory and every conversation written through it or
    /// its forks (recorded as they are written, under the working scope the first manager
    /// was built with); other conversations of the store are left alone. Returns how many conversations were deleted.
    pub async fn clear_all(&self) -> Result<usize> {
        self.clear_working().await?;
        let mut deleted = 0;
        for entry in self.kv.list(&self.registry).await? {
            if self.log.delete(&entry.key).await? {
                deleted += 1;
            }
            self.kv.delete(&self.registry, &entry.key).await?;
        }
        Ok(deleted)
    }
}

fn missing(what: &str, e: MemoryError) -> MemoryError {
    MemoryError::invalid(
        "memory manager stores",
        format!("a MemoryManager needs a {what} in its container: {e}"),
    )
}

#[cfg(test)]
mod tests;
