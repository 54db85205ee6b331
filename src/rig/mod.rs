//! Memory for [rig](https://docs.rs/rig-agent) agents (cargo feature `rig`).
//!
//! rig 0.44 keeps conversation history behind three traits of `rig-core` — a
//! [`ConversationMemory`](rig_core::memory::ConversationMemory) that loads and appends a
//! thread, a [`Compactor`](rig_core::memory::Compactor) that folds evicted messages into a
//! summary, a [`DemotionHook`] that receives what leaves the
//! window — and runs agents in `rig-agent`, whose [`AgentHook`](rig_agent::AgentHook)s see
//! every model call. rig has no long-term memory of the user; this module adds it:
//!
//! | rig | agentmem |
//! |---|---|
//! | `ConversationMemory` | [`LogMemory`]: the [`ConversationStore`] log, replayed into a token-budget [`ShortTermMemory`](agentmemory_core::ShortTermMemory) window |
//! | `Compactor` | [`SummaryCompactor`]: the [`Summarizer`], rolling summary in the log |
//! | `DemotionHook` | [`FactDemotion`]: evicted turns → [`FactExtractor`] → reconciliation in the [`UserMemoryStore`] |
//! | `AgentHook` | [`MemoryHook`]: the user's relevant facts, as the memory block, appended to the preamble of every model call |
//! | `Tool` | [`RememberTool`], [`RecallTool`], [`ForgetTool`] over the user's facts |
//!
//! rig's hooks and tools see no user id, so everything user-specific is bound per request
//! through a [`UserMemory`] handle: it names the conversation's owner in the log, makes the
//! hook for that user, and puts the user into the tools' context.
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
//!     .memory(memory.conversation_memory())
//!     .tool(remember)
//!     .tool(recall)
//!     .tool(forget)
//!     .build();
//!
//! // Per request: bind the user, then prompt.
//! let alice = memory.user("alice")?;
//! let reply = alice.prompt(&agent, "alice-chat", "I'm vegetarian.").await?.run().await?;
//! println!("{}", reply.output());
//! # Ok(()) }
//! ```

mod compactor;
mod conversation;
mod convert;
mod demotion;
mod extract;
mod hook;
mod tools;
mod user;

use std::sync::Arc;

use agentmemory_core::extract::{FactExtractor, RuleExtractor};
use agentmemory_core::summarize::{ExtractiveSummarizer, Summarizer};
use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
use agentmemory_core::{ConversationStore, UserMemoryStore};
use rig_core::memory::{DemotionHook, NoopDemotionHook};

pub use compactor::{ConversationSummary, SummaryCompactor};
pub use conversation::LogMemory;
pub use demotion::FactDemotion;
pub use hook::{MemoryHook, MemoryReport};
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
    /// When turns leave the window, by the [`FactDemotion`] hook: one extraction per
    /// summarisation instead of one per turn (cheaper with an LLM extractor), facts known
    /// only once their turn is summarised away.
    Demoted,
}

/// Budgets and switches of the rig adapter.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RigMemoryConfig {
    /// Token budget of the history rig loads: summary + window (default 40,000).
    pub max_tokens: usize,
    /// Token cap of the memory block appended to the preamble (default 500).
    pub memory_block_tokens: usize,
    /// Token cap of the running summary (default 1,000; at most a quarter of `max_tokens`).
    pub summary_tokens: usize,
    /// After summarising, summary + window take at most this percentage of `max_tokens`
    /// (default 75), so summarisation happens every several turns, not every turn.
    pub summarize_to: u8,
    /// How many facts are searched for the memory block (default 5; 0 = no injection).
    pub top_k: usize,
    /// When facts are extracted (default [`ExtractWhen::EachTurn`]).
    pub extract_when: ExtractWhen,
}

impl Default for RigMemoryConfig {
    fn default() -> Self {
        Self {
            max_tokens: 40_000,
            memory_block_tokens: 500,
            summary_tokens: 1_000,
            summarize_to: 75,
            top_k: 5,
            extract_when: ExtractWhen::EachTurn,
        }
    }
}

/// What every adapter shares: the stores, the extractor, the summariser, the budgets.
pub(crate) struct Shared {
    pub(crate) facts: Arc<dyn UserMemoryStore>,
    pub(crate) log: Arc<dyn ConversationStore>,
    pub(crate) extractor: Arc<dyn FactExtractor>,
    pub(crate) summarizer: Arc<dyn Summarizer>,
    pub(crate) counter: Arc<dyn TokenCounter>,
    pub(crate) config: RigMemoryConfig,
}

/// agentmem's memory for rig agents: one per application, shared by every request.
///
/// It hands out the rig-facing pieces: [`conversation_memory`](Self::conversation_memory)
/// for `AgentBuilder::memory`, [`tools`](Self::tools) for `AgentBuilder::tool`, and per
/// request a [`UserMemory`] ([`user`](Self::user)) that binds the user.
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
    /// [`RuleExtractor`] and [`ExtractiveSummarizer`] unless the builder names others.
    pub fn builder(
        facts: Arc<dyn UserMemoryStore>,
        log: Arc<dyn ConversationStore>,
    ) -> RigMemoryBuilder {
        RigMemoryBuilder {
            facts,
            log,
            extractor: None,
            summarizer: None,
            counter: None,
            config: RigMemoryConfig::default(),
        }
    }

    /// The budgets and switches in force.
    pub fn config(&self) -> &RigMemoryConfig {
        &self.shared.config
    }

    /// The conversation memory to give `AgentBuilder::memory`: the log, the window, the
    /// [`SummaryCompactor`], and — with [`ExtractWhen::Demoted`] — the [`FactDemotion`]
    /// hook (a no-op hook otherwise, since each turn is extracted already).
    pub fn conversation_memory(&self) -> LogMemory<SummaryCompactor, Arc<dyn DemotionHook>> {
        let hook: Arc<dyn DemotionHook> = match self.shared.config.extract_when {
            ExtractWhen::Demoted => Arc::new(self.demotion_hook()),
            ExtractWhen::EachTurn => Arc::new(NoopDemotionHook),
        };
        LogMemory::new(self.clone(), self.compactor(), hook)
    }

    /// The compactor on its own (for composing with another `ConversationMemory`).
    pub fn compactor(&self) -> SummaryCompactor {
        SummaryCompactor::new(Arc::clone(&self.shared.summarizer), self.summary_budget())
    }

    /// The demotion hook on its own: extracts facts from the turns it receives.
    pub fn demotion_hook(&self) -> FactDemotion {
        FactDemotion::new(self.clone())
    }

    /// The three memory tools, for `AgentBuilder::tool`.
    pub fn tools(&self) -> (RememberTool, RecallTool, ForgetTool) {
        (
            RememberTool::new(self.clone()),
            RecallTool::new(self.clone()),
            ForgetTool::new(self.clone()),
        )
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

    /// Tokens the running summary may take.
    pub(crate) fn summary_budget(&self) -> usize {
        let c = &self.shared.config;
        c.summary_tokens.min(c.max_tokens / 4)
    }
}

/// Builds a [`RigMemory`].
pub struct RigMemoryBuilder {
    facts: Arc<dyn UserMemoryStore>,
    log: Arc<dyn ConversationStore>,
    extractor: Option<Arc<dyn FactExtractor>>,
    summarizer: Option<Arc<dyn Summarizer>>,
    counter: Option<Arc<dyn TokenCounter>>,
    config: RigMemoryConfig,
}

impl RigMemoryBuilder {
    /// Extracts facts with `extractor` (an LLM one, say) instead of the rule extractor.
    pub fn extractor(mut self, extractor: Arc<dyn FactExtractor>) -> Self {
        self.extractor = Some(extractor);
        self
    }

    /// Summarises with `summarizer` instead of the extractive one.
    pub fn summarizer(mut self, summarizer: Arc<dyn Summarizer>) -> Self {
        self.summarizer = Some(summarizer);
        self
    }

    /// Counts tokens with `counter` instead of the chars/4 heuristic.
    pub fn counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = Some(counter);
        self
    }

    /// Token budget of the loaded history (summary + window).
    pub fn max_tokens(mut self, max_tokens: usize) -> Self {
        self.config.max_tokens = max_tokens;
        self
    }

    /// Token cap of the memory block.
    pub fn memory_block_tokens(mut self, tokens: usize) -> Self {
        self.config.memory_block_tokens = tokens;
        self
    }

    /// Token cap of the running summary.
    pub fn summary_tokens(mut self, tokens: usize) -> Self {
        self.config.summary_tokens = tokens;
        self
    }

    /// How many facts are searched for the memory block (0 turns injection off).
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.config.top_k = top_k;
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
                extractor: self
                    .extractor
                    .unwrap_or_else(|| Arc::new(RuleExtractor::new())),
                summarizer: self
                    .summarizer
                    .unwrap_or_else(|| Arc::new(ExtractiveSummarizer::new())),
                counter: self
                    .counter
                    .unwrap_or_else(|| Arc::new(HeuristicCounter::default())),
                config: self.config,
            }),
        }
    }
}
