//! The user's facts in every model call, and facts taken from every turn: an [`AgentHook`].

use std::sync::{Arc, Mutex};

use agentmemory_core::episodes::{Episode, EpisodeStore, ScoredEpisode};
use agentmemory_core::facts::{FactChange, ScoredFact};
use agentmemory_core::recall::{recall, RecallRequest};
use agentmemory_core::render::facts_block;
use agentmemory_core::Message;
use rig_agent::agent::{
    CompletionCallAction, CompletionCallEvent, RequestPatch, RunSettled, SettledOutcome,
};
use rig_agent::{AgentHook, HookContext};

use super::{convert, extract, ExtractWhen, RigMemory};

/// What the memory did during one run, for the caller to inspect or log.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct MemoryReport {
    /// The facts rendered into the preamble of the last model call, best first.
    pub injected: Vec<ScoredFact>,
    /// The episodes (earlier messages) rendered there, best first (with an episode store).
    pub episodes: Vec<ScoredEpisode>,
    /// The memory block as the model saw it.
    pub memory_block: Option<String>,
    /// What extraction changed in the user's facts (ignored candidates included).
    pub fact_changes: Vec<FactChange>,
    /// Store or extractor failures. The run went on without the memory that failed:
    /// a memory failure never costs the user the reply.
    pub errors: Vec<String>,
}

/// An [`AgentHook`] bound to one user (rig's hook context carries no user id).
///
/// - Before every model call it searches the user's facts with the user's latest
///   message and appends the memory block (the one a `Session` renders, delimited and
///   token-capped) to the agent's preamble. rig's request patch *replaces* the preamble,
///   so the hook carries the agent's own preamble and sends both.
/// - When the run settles with a reply (and extraction is [`ExtractWhen::EachTurn`]), it
///   extracts facts from the user's message and reconciles them with the store.
///
/// Make one per request with [`UserMemory::hook`](super::UserMemory::hook); clones share
/// one [`MemoryReport`].
#[derive(Clone)]
pub struct MemoryHook {
    memory: RigMemory,
    user_id: String,
    conversation: Option<String>,
    preamble: Option<String>,
    report: Arc<Mutex<MemoryReport>>,
}

impl std::fmt::Debug for MemoryHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryHook")
            .field("user_id", &self.user_id)
            .field("conversation", &self.conversation)
            .finish_non_exhaustive()
    }
}

impl MemoryHook {
    pub(crate) fn new(
        memory: RigMemory,
        user_id: String,
        conversation: Option<String>,
        preamble: Option<String>,
    ) -> Self {
        Self {
            memory,
            user_id,
            conversation,
            preamble,
            report: Arc::default(),
        }
    }

    /// What the memory did so far in the run (a copy).
    pub fn report(&self) -> MemoryReport {
        self.lock().clone()
    }

    /// The preamble sent with `block`: the agent's own, then the memory block.
    pub fn preamble_with(&self, block: &str) -> String {
        match self.preamble.as_deref().filter(|p| !p.is_empty()) {
            Some(base) => format!("{base}\n\n{block}"),
            None => block.to_owned(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryReport> {
        self.report
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn failed(&self, what: &str, error: impl std::fmt::Display) {
        tracing::warn!(user = %self.user_id, %error, "{what} failed; the run goes on");
        self.lock().errors.push(format!("{what}: {error}"));
    }

    /// The memory block for `query`, if any fact is relevant.
    async fn block_for(&self, query: &str) -> Option<String> {
        let shared = self.memory.shared();
        if let Some(episodes) = &shared.episodes {
            return self.recalled_block(query, episodes.as_ref()).await;
        }
        let facts = match shared
            .facts
            .search(&self.user_id, query, shared.config.top_k)
            .await
        {
            Ok(facts) => facts,
            Err(e) => {
                self.failed("memory search", e);
                return None;
            }
        };
        let (block, included) = facts_block(
            facts,
            shared.config.memory_block_tokens,
            shared.counter.as_ref(),
        )?;
        let mut report = self.lock();
        report.injected = included;
        report.memory_block = Some(block.clone());
        Some(block)
    }

    /// The block a session renders: facts and episodes by relevance, in one cap.
    async fn recalled_block(&self, query: &str, episodes: &dyn EpisodeStore) -> Option<String> {
        let shared = self.memory.shared();
        let mut request = RecallRequest::new(&self.user_id, query);
        request.top_k = shared.config.top_k;
        request.episodes = shared.config.episodes;
        request.max_tokens = shared.config.memory_block_tokens;
        request.conversation_id = self.conversation.clone();
        let recalled = recall(
            shared.facts.as_ref(),
            episodes,
            &request,
            shared.counter.as_ref(),
        )
        .await;
        if let Some(e) = recalled.facts_error {
            self.failed("memory search", e);
        }
        if let Some(e) = recalled.episodes_error {
            self.failed("episode search", e);
        }
        let block = recalled.block?;
        let mut report = self.lock();
        report.injected = block.facts;
        report.episodes = block.episodes;
        report.memory_block = Some(block.text.clone());
        Some(block.text)
    }

    /// Keeps the turn's user message and reply as episodes.
    async fn keep_episodes(&self, user: &Message, reply: &Message) {
        let Some(episodes) = &self.memory.shared().episodes else {
            return;
        };
        let conversation = self
            .conversation
            .as_deref()
            .unwrap_or(super::session::AGENT);
        let kept = vec![
            Episode::from_message(&self.user_id, conversation, user),
            Episode::from_message(&self.user_id, conversation, reply).answering(&user.text()),
        ];
        if let Err(e) = episodes.add(&self.user_id, kept).await {
            self.failed("keeping the turn as episodes", e);
        }
    }

    async fn extract_turn(&self, user: &Message, reply: &Message) {
        match extract::extract_and_reconcile(
            self.memory.shared(),
            &self.user_id,
            self.conversation.as_deref(),
            user,
            Some(reply),
        )
        .await
        {
            Ok(changes) => self.lock().fact_changes.extend(changes),
            Err(e) => self.failed("fact extraction", e),
        }
    }
}

impl AgentHook for MemoryHook {
    fn name(&self) -> Option<String> {
        Some("agentmem.memory".to_owned())
    }

    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        if self.memory.shared().config.top_k == 0 {
            return CompletionCallAction::continue_run();
        }
        // After a tool call the prompt is a tool result: the query is the user's last words.
        let query = convert::user_text(event.prompt).or_else(|| {
            event
                .history
                .iter()
                .rev()
                .find_map(|m| convert::user_text(m))
        });
        let Some(query) = query else {
            return CompletionCallAction::continue_run();
        };
        match self.block_for(&query).await {
            Some(block) => CompletionCallAction::patch(
                RequestPatch::new().preamble(self.preamble_with(&block)),
            ),
            None => CompletionCallAction::continue_run(),
        }
    }

    async fn on_run_settled(&self, _ctx: &HookContext, event: RunSettled<'_>) {
        let shared = self.memory.shared();
        let extract = shared.config.extract_when == ExtractWhen::EachTurn;
        if !extract && shared.episodes.is_none() {
            return;
        }
        let (SettledOutcome::Response(response), Some(messages)) = (event.outcome, event.messages)
        else {
            return;
        };
        let Some(user) = messages.iter().find(|m| convert::user_text(m).is_some()) else {
            return;
        };
        // Converted once for both: the episodes kept and the facts extracted.
        let user = convert::to_agentmem(user);
        let reply = Message::assistant(response.output());
        self.keep_episodes(&user, &reply).await;
        if extract {
            self.extract_turn(&user, &reply).await;
        }
    }
}
