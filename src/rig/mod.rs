//! Memory for [rig](https://docs.rs/rig-agent) agents (cargo feature `rig`).
//!
//! rig (0.46) keeps each conversation as a session log behind
//! [`rig_memory::AsyncStore`]: an agent given a store (`AgentBuilder::memory`, or
//! `AgentRunner::memory` per request) loads the log before a run's first model call and
//! saves the run's messages with one compare-length-then-append once it finished, and a
//! failed load or save fails the run. Agents run in `rig-agent`, whose
//! [`AgentHook`](rig_agent::AgentHook)s see every model call. rig has no long-term memory
//! of the user; this module adds it:
//!
//! | rig | agentmem |
//! |---|---|
//! | `AsyncStore` (session log and files) | [`SessionStore`]: the log in the [`ConversationStore`], owned by one user; files in a [`KvStore`] |
//! | `AgentHook` | [`MemoryHook`]: the user's relevant facts, as the memory block, appended to the preamble of every model call; facts extracted from each turn |
//! | `Tool` | [`RememberTool`], [`RecallTool`], [`ForgetTool`] over the user's facts |
//!
//! rig's hooks and tools see no user id, so everything user-specific is bound per request
//! through a [`UserMemory`] handle: it opens the conversation for its owner, gives the run
//! the user's [`SessionStore`], makes the hook for that user, and puts the user into the
//! tools' context. Which recent messages a request sends stays rig's
//! (`rig_memory::recent`).
//!
//! Compaction is rig's too — [`rig_memory::CompactionPolicy`] chooses the cut and
//! [`rig_memory::apply_summary`] puts the summary in, which [`rig_memory::undo_summary`]
//! takes back out — but the summary needs no model: a [`SummaryCompactor`]
//! ([`RigMemory::compactor`]) writes it with agentmem's own summariser, the extractive
//! one a `Session` folds its old turns with, within the same budget
//! ([`RigMemoryConfig::summary_tokens`], a session's `summary_tokens`), folding the
//! previous summary in so a second compaction builds on the first. Over agentmem's
//! store, [`undo_compaction`] is rig's undo:
//!
//! ```no_run
//! # use agentmemory::rig::{undo_compaction, RigMemory};
//! # use rig_core::catalog::ModelSpec;
//! # async fn run(memory: RigMemory, spec: ModelSpec) -> Result<(), Box<dyn std::error::Error>> {
//! use rig_memory::{load_async, save_async, CompactReason, CompactionPolicy};
//!
//! let store = memory.user("alice")?.session_store();
//! let mut chat = load_async(&store, "alice-chat").await?;
//! let compactor = memory.compactor(CompactionPolicy::default());
//! if let Some(done) = compactor.compact(&mut chat, &CompactReason::Threshold, &spec) {
//!     println!("{} messages folded into {} tokens", done.summarized, done.tokens);
//!     save_async(&store, "alice-chat", &mut chat).await?;
//! }
//! // Changed your mind: the replaced messages come back from the saved log.
//! undo_compaction(&mut chat, &store, "alice-chat", rig_core::conversation::Author::user()).await?;
//! save_async(&store, "alice-chat", &mut chat).await?;
//! # Ok(()) }
//! ```
//!
//! ```no_run
//! use std::sync::Arc;
//! use agentmemory::rig::RigMemory;
//! use agentmemory::{InMemoryConversationStore, InMemoryUserMemoryStore};
//! use rig_agent::AgentBuilder;
//! use rig_core::providers::openai::OpenAIConfig;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let memory = RigMemory::builder(
//!     Arc::new(InMemoryUserMemoryStore::new()),
//!     Arc::new(InMemoryConversationStore::new()),
//! )
//! .build();
//! let (remember, recall, forget) = memory.tools();
//! let model = OpenAIConfig::from_env()?.client().chat("gpt-4o-mini");
//! let agent = AgentBuilder::new(model)
//!     .preamble("You are a helpful assistant.")
//!     .tool(remember)
//!     .tool(recall)
//!     .tool(forget)
//!     .build();
//!
//! // Per request: bind the user, then prompt (the run loads and saves the user's
//! // conversation `alice-chat` in agentmem's log).
//! let alice = memory.user("alice")?;
//! let reply = alice.prompt(&agent, "alice-chat", "I'm vegetarian.").await?.run().await?;
//! println!("{}", reply.output());
//! # Ok(()) }
//! ```

mod compaction;
mod convert;
mod extract;
mod hook;
mod session;
mod tools;
mod user;

use std::sync::Arc;

use agentmemory_core::episodes::EpisodeStore;
use agentmemory_core::extract::{FactExtractor, RuleExtractor};
use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
use agentmemory_core::{ConversationStore, KvStore, UserMemoryStore};

pub use compaction::{undo_compaction, Compaction, SummaryCompactor, NOTHING_TO_KEEP};
pub use hook::{MemoryHook, MemoryReport};
pub use session::SessionStore;
pub use tools::{ForgetTool, MemoryUser, RecallTool, RememberTool, ToolError};
pub use user::UserMemory;

/// When facts are extracted from the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ExtractWhen {
    /// After every run, from the user's message and the reply, by the [`MemoryHook`]
    /// (as a `Session` does): a fact is known from the next turn on.
    #[default]
    EachTurn,
    /// Never by extraction: facts are stored only when the model calls the `remember`
    /// tool (or the application writes them).
    ToolsOnly,
}

/// Budgets and switches of the rig adapter.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RigMemoryConfig {
    /// Token cap of the memory block appended to the preamble (default 500).
    pub memory_block_tokens: usize,
    /// How many facts are searched for the memory block (default 5; 0 = no injection).
    pub top_k: usize,
    /// When facts are extracted (default [`ExtractWhen::EachTurn`]).
    pub extract_when: ExtractWhen,
    /// Token cap of the summary a [`SummaryCompactor`] writes (default a session's,
    /// [`SessionConfig::summary_tokens`](agentmemory_core::session::SessionConfig),
    /// 1,000).
    pub summary_tokens: usize,
    /// How many earlier messages (episodes) join the memory block, with an episode store
    /// given to [`RigMemoryBuilder::episodes`] (default 5, as a session recalls).
    pub episodes: usize,
}

impl Default for RigMemoryConfig {
    fn default() -> Self {
        Self {
            memory_block_tokens: 500,
            top_k: 5,
            extract_when: ExtractWhen::EachTurn,
            summary_tokens: agentmemory_core::session::SessionConfig::default().summary_tokens,
            episodes: 5,
        }
    }
}

/// What every adapter shares: the stores, the extractor, the budgets.
pub(crate) struct Shared {
    pub(crate) facts: Arc<dyn UserMemoryStore>,
    pub(crate) log: Arc<dyn ConversationStore>,
    pub(crate) files: Option<Arc<dyn KvStore>>,
    pub(crate) episodes: Option<Arc<dyn EpisodeStore>>,
    pub(crate) extractor: Arc<dyn FactExtractor>,
    pub(crate) counter: Arc<dyn TokenCounter>,
    pub(crate) config: RigMemoryConfig,
    /// rig's session logs as last replayed, so a read or a write reads only what the log
    /// gained since (see [`session`]).
    pub(crate) sessions: std::sync::Mutex<session::LogCache>,
}

/// agentmem's memory for rig agents: one per application, shared by every request.
///
/// It hands out the rig-facing pieces: [`tools`](Self::tools) for `AgentBuilder::tool`,
/// and per request a [`UserMemory`] ([`user`](Self::user)) that binds the user and gives
/// the run the user's [`SessionStore`].
#[derive(Clone)]
pub struct RigMemory {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RigMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigMemory")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl RigMemory {
    /// Starts a memory over a fact store and a conversation log; the offline
    /// [`RuleExtractor`] unless the builder names another.
    pub fn builder(
        facts: Arc<dyn UserMemoryStore>,
        log: Arc<dyn ConversationStore>,
    ) -> RigMemoryBuilder {
        RigMemoryBuilder {
            facts,
            log,
            files: None,
            episodes: None,
            extractor: None,
            counter: None,
            config: RigMemoryConfig::default(),
        }
    }

    /// The budgets and switches in force.
    pub fn config(&self) -> &RigMemoryConfig {
        &self.shared.config
    }

    /// The three memory tools, for `AgentBuilder::tool`.
    pub fn tools(&self) -> (RememberTool, RecallTool, ForgetTool) {
        (
            RememberTool::new(self.clone()),
            RecallTool::new(self.clone()),
            ForgetTool::new(self.clone()),
        )
    }

    /// A compactor for rig conversations that writes its summaries with agentmem's
    /// summariser within [`RigMemoryConfig::summary_tokens`], cutting where `policy`
    /// says (see [`SummaryCompactor`]).
    pub fn compactor(&self, policy: rig_memory::CompactionPolicy) -> SummaryCompactor {
        SummaryCompactor::new(policy).summary_tokens(self.shared.config.summary_tokens)
    }

    /// The memory of one user, for one request: bind it before prompting.
    ///
    /// An empty user id is refused with [`MemoryError::InvalidArgument`](agentmemory_core::MemoryError).
    pub fn user(&self, user_id: impl Into<String>) -> agentmemory_core::Result<UserMemory> {
        UserMemory::new(self.clone(), user_id.into())
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }
}

/// Builds a [`RigMemory`].
pub struct RigMemoryBuilder {
    facts: Arc<dyn UserMemoryStore>,
    log: Arc<dyn ConversationStore>,
    files: Option<Arc<dyn KvStore>>,
    episodes: Option<Arc<dyn EpisodeStore>>,
    extractor: Option<Arc<dyn FactExtractor>>,
    counter: Option<Arc<dyn TokenCounter>>,
    config: RigMemoryConfig,
}

impl RigMemoryBuilder {
    /// Keeps the files of rig's sessions (the blobs its messages name, plugin data) in
    /// `files`; without it the [`SessionStore`] refuses file calls.
    pub fn files(mut self, files: Arc<dyn KvStore>) -> Self {
        self.files = Some(files);
        self
    }

    /// Keeps every settled turn's user message and reply as episodes in `episodes` and
    /// recalls them beside the facts, in the block a [`Session`](agentmemory_core::Session)
    /// renders ([`recall`](agentmemory_core::recall::recall)): what the user said before,
    /// with its date, not only the facts taken from it.
    pub fn episodes(mut self, episodes: Arc<dyn EpisodeStore>) -> Self {
        self.episodes = Some(episodes);
        self
    }

    /// How many episodes join the memory block (with [`episodes`](Self::episodes)).
    pub fn recall_episodes(mut self, count: usize) -> Self {
        self.config.episodes = count;
        self
    }

    /// Extracts facts with `extractor` (an LLM one, say) instead of the rule extractor.
    pub fn extractor(mut self, extractor: Arc<dyn FactExtractor>) -> Self {
        self.extractor = Some(extractor);
        self
    }

    /// Counts tokens with `counter` instead of the chars/4 heuristic.
    pub fn counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = Some(counter);
        self
    }

    /// Token cap of the memory block.
    pub fn memory_block_tokens(mut self, tokens: usize) -> Self {
        self.config.memory_block_tokens = tokens;
        self
    }

    /// How many facts are searched for the memory block (0 turns injection off).
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.config.top_k = top_k;
        self
    }

    /// Token cap of the summaries [`RigMemory::compactor`] writes.
    pub fn summary_tokens(mut self, tokens: usize) -> Self {
        self.config.summary_tokens = tokens;
        self
    }

    /// When facts are extracted.
    pub fn extract_when(mut self, when: ExtractWhen) -> Self {
        self.config.extract_when = when;
        self
    }

    /// The memory.
    pub fn build(self) -> RigMemory {
        RigMemory {
            shared: Arc::new(Shared {
                facts: self.facts,
                log: self.log,
                files: self.files,
                episodes: self.episodes,
                extractor: self
                    .extractor
                    .unwrap_or_else(|| Arc::new(RuleExtractor::new())),
                counter: self
                    .counter
                    .unwrap_or_else(|| Arc::new(HeuristicCounter::default())),
                config: self.config,
                sessions: Default::default(),
            }),
        }
    }
}
