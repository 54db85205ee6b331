//! [`Session`]: one user's conversation with one agent, turn by turn.
//!
//! A turn ([`Session::send`]) is [`prepare`](Session::prepare) → model →
//! [`commit`](Session::commit), and runs the data flow of the design:
//!
//! 1. the user message enters the conversation log and the short-term memory (once,
//!    even when a failed turn is retried);
//! 2. if the agent remembers, the message is kept as an episode of the user; if it
//!    injects memory, the user's most relevant facts and the most relevant earlier
//!    messages not already in the window (episodes, from any of the user's
//!    conversations, ranked by words, meaning and the period the message names) are
//!    rendered, with their dates, into one delimited block of the system prompt;
//! 3. if the prompt would exceed `max_tokens` (system prompt, memory block, summary and
//!    window together), the oldest messages are summarised and the summary is logged;
//! 4. the chat model gets system prompt + memory block + summary block + window;
//! 5. the reply (after any tool rounds) enters the log and the memory;
//! 6. if the agent extracts memory, facts are extracted from the turn and reconciled
//!    with the store — inline, or in the background ([`ExtractionMode`]);
//! 7. the caller gets the reply and a [`TurnReport`].
//!
//! Call `prepare` and `commit` yourself to keep your own model client (tools,
//! streaming, structured output) and let agentmem do only the memory.

mod agent;
mod background;
mod builder;
mod commit;
mod cut;
mod defaults;
mod prepare;
mod report;
mod stream;
mod tool_rounds;

use std::sync::Arc;

use tracing::Instrument;

use crate::buffer::ShortTermMemory;
use crate::conversation::{ConversationEvent, ConversationStore};
use crate::episodes::EpisodeStore;
use crate::error::{MemoryError, Result};
use crate::extract::FactExtractor;
use crate::facts::UserMemoryStore;
use crate::message::Message;
use crate::model::ChatModel;
use crate::remember::RememberSpec;
use crate::summarize::Summarizer;

/// Renders facts into the delimited memory block a session puts in the system prompt
/// (for integrations that build the prompt themselves, such as the rig adapter).
pub use crate::render::facts_block as render_memory_block;
pub use crate::render::{MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN};
pub use crate::render::{SUMMARY_BLOCK_CLOSE, SUMMARY_BLOCK_OPEN};
pub use agent::Agent;
pub use background::DeferredExtraction;
pub use builder::{ExtractionMode, SessionBuilder, SessionConfig, DEFAULT_COMPACT_AFTER};
pub use commit::Reply;
pub use prepare::PreparedTurn;
pub use report::{PromptTokens, Truncation, TurnReply, TurnReport};
pub use stream::{TurnEvent, TurnStream};

/// A user message that entered the turn but whose turn is not committed yet.
pub(crate) struct Pending {
    pub(crate) message: Arc<Message>,
    pub(crate) logged: bool,
    pub(crate) in_memory: bool,
}

/// The long-term memory parts a remembering agent resolved at build time.
#[derive(Clone)]
pub(crate) struct LongTerm {
    pub(crate) spec: RememberSpec,
    pub(crate) store: Arc<dyn UserMemoryStore>,
    pub(crate) extractor: Option<Arc<dyn FactExtractor>>,
    /// Where the user's messages are kept as episodes, and recalled from.
    pub(crate) episodes: Arc<dyn EpisodeStore>,
}

/// One user's conversation with one agent.
///
/// Built with [`Session::builder`]; every dependency is resolved from the
/// [`Container`](crate::Container) at build time, so a missing store or model fails
/// before the first message (a session for the caller's own model client needs none:
/// [`SessionBuilder::external_model`]). See the crate documentation of `agentmem` for a complete
/// example.
pub struct Session<A: Agent> {
    agent: A,
    user_id: String,
    conversation_id: String,
    /// `None` when the caller brings its own client ([`SessionBuilder::external_model`]).
    model: Option<Arc<dyn ChatModel>>,
    summarizer: Arc<dyn Summarizer>,
    log: Arc<dyn ConversationStore>,
    long_term: Option<LongTerm>,
    memory: ShortTermMemory,
    config: SessionConfig,
    started: bool,
    /// The seq of the log's last snapshot (0 when it has none): replay starts there, and
    /// [`SessionConfig::compact_after`] counts the events after it.
    snapshot_seq: u64,
    pending: Option<Pending>,
    /// The message of an abandoned turn, still in `memory`, to take out (and log as
    /// unanswered) with the next message that is logged.
    unanswered: Option<ulid::Ulid>,
    extraction: Option<commit::Extraction>,
    background: Option<background::Worker>,
    summary_block: crate::render::RenderedSummary,
    /// The working memory rendered into each prompt, when the builder was given one.
    working: Option<crate::working::WorkingMemory>,
}

impl<A: Agent> std::fmt::Debug for Session<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("agent", &self.agent.name())
            .field("user_id", &self.user_id)
            .field("conversation_id", &self.conversation_id)
            .field("messages", &self.memory.len())
            .finish_non_exhaustive()
    }
}

impl<A: Agent> Session<A> {
    /// Starts building a session of `agent` over the providers in `container`.
    pub fn builder(agent: A, container: &crate::di::Container) -> SessionBuilder<A> {
        SessionBuilder::new(agent, container.clone())
    }

    /// The agent.
    pub fn agent(&self) -> &A {
        &self.agent
    }

    /// The user this session talks to.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The conversation id (the key of the log).
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    /// The short-term memory.
    pub fn memory(&self) -> &ShortTermMemory {
        &self.memory
    }

    /// The long-term memory spec in force, if the agent remembers.
    pub fn remember_spec(&self) -> Option<RememberSpec> {
        self.long_term.as_ref().map(|lt| lt.spec)
    }

    /// Sends a user message and runs one turn (see the [module docs](self)).
    ///
    /// A session built with [`SessionBuilder::external_model`] has no model to call:
    /// this fails with [`MemoryError::NoModel`] and nothing is logged. A message over
    /// [`SessionConfig::max_message_bytes`] (1 MiB by default) fails with
    /// [`MemoryError::PayloadTooLarge`], and nothing is logged either.
    pub async fn send(&mut self, text: impl Into<String>) -> Result<TurnReply> {
        self.send_message(Message::user(text.into())).await
    }

    /// Like [`send`](Self::send) with a prepared message (content blocks, metadata).
    pub async fn send_message(&mut self, user: Message) -> Result<TurnReply> {
        let span = tracing::info_span!(
            "turn",
            agent = self.agent.name(),
            user = %self.user_id,
            conversation = %self.conversation_id
        );
        self.turn(user).instrument(span).await
    }

    /// The chat model `send` calls, or [`MemoryError::NoModel`] when the session was
    /// built for the caller's own client.
    fn chat_model(&self) -> Result<Arc<dyn ChatModel>> {
        self.model.clone().ok_or_else(|| MemoryError::NoModel {
            agent: self.agent.name().to_owned(),
        })
    }

    async fn turn(&mut self, user: Message) -> Result<TurnReply> {
        // Checked before the message is logged: a session without a model never opens
        // a turn it cannot close.
        let model = self.chat_model()?;
        let turn = self.prepare_message(user).await?;
        let completion = model
            .complete(turn.request.clone())
            .instrument(tracing::info_span!("model"))
            .await?;
        self.agent.after_model(&completion);
        self.commit_reply(turn, completion.into()).await
    }

    /// Waits until every turn queued for background extraction is extracted and
    /// reconciled; returns their outcomes since the last flush. With inline extraction
    /// there is nothing to wait for and the list is empty.
    pub async fn flush(&self) -> Result<Vec<DeferredExtraction>> {
        match &self.background {
            Some(worker) => worker.flush().await,
            None => Ok(Vec::new()),
        }
    }

    /// The working memory rendered into each prompt, if any
    /// ([`SessionBuilder::working_memory`]).
    pub fn working_memory(&self) -> Option<&crate::working::WorkingMemory> {
        self.working.as_ref()
    }

    /// The session's budgets and modes.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Folds the older messages into the summary, logs the new summary, and trims the
    /// buffer down to the low-water mark (see [`SessionConfig::summarize_to`]) of `max`,
    /// the tokens left for summary and messages, so that summarisation runs once every
    /// several turns rather than on every turn once the window is full. Returns how many
    /// messages were folded.
    async fn summarize(&mut self, max: usize) -> Result<usize> {
        crate::buffer::fold_into_summary(
            &mut self.memory,
            self.summarizer.as_ref(),
            self.log.as_ref(),
            &self.conversation_id,
            max,
            self.config.summary_tokens,
            self.config.summarize_to,
        )
        .await
    }

    /// Writes a snapshot of the short-term memory to the log and drops the events
    /// before it; replay then starts from the snapshot. Returns how many events were dropped.
    pub async fn compact(&mut self) -> Result<usize> {
        // The conversation's owner is restated with the snapshot, so it survives compaction.
        let last = self
            .log
            .append(
                &self.conversation_id,
                vec![
                    ConversationEvent::Started {
                        user_id: self.user_id.clone(),
                        agent: self.agent.name().to_owned(),
                    },
                    ConversationEvent::Snapshot {
                        snapshot: self.memory.snapshot(),
                    },
                ],
            )
            .await?;
        self.started = true;
        self.snapshot_seq = last;
        self.log.compact(&self.conversation_id, last - 1).await
    }

    /// Compacts the log when [`SessionConfig::compact_after`] events follow its last
    /// snapshot (`last` is the seq of the newest event), in a session that keeps episodes.
    /// A failure is logged, not returned: the turn it follows is already committed, and
    /// the next turn tries again.
    pub(crate) async fn compact_if_due(&mut self, last: u64) {
        let Some(after) = self.config.compact_after else {
            return;
        };
        if self.long_term.is_none() || last.saturating_sub(self.snapshot_seq) <= after as u64 {
            return;
        }
        match self.compact().await {
            Ok(dropped) => tracing::debug!(
                conversation = %self.conversation_id,
                dropped,
                "conversation log compacted"
            ),
            Err(e) => tracing::warn!(
                conversation = %self.conversation_id,
                error = %e,
                "conversation log not compacted"
            ),
        }
    }
}
