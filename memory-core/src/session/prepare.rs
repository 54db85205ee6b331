//! The first half of an open turn: [`Session::prepare`] and [`PreparedTurn`].

use std::sync::Arc;

use tracing::Instrument;

use crate::conversation::ConversationEvent;
use crate::episodes::{Episode, ScoredEpisode};
use crate::error::Result;
use crate::facts::ScoredFact;
use crate::message::{Message, Role};
use crate::model::ChatRequest;
use crate::recall::{recall, RecallRequest};
use crate::tokens::TokenCounter;

use super::report::{PromptTokens, Truncation, TurnReport};
use super::{cut, Agent, LongTerm, Pending, Session};

/// A turn whose request is ready for a model: the system prompt (agent prompt, memory
/// block, summary block), the window, and what memory did so far. Send
/// [`request`](Self::request) to any model — your own client, with tools, streaming —
/// then hand the reply to [`Session::commit`].
///
/// A turn that is never committed (dropped, or its model call failed) stays open until
/// the session prepares the next message: the same message again is a retry of this
/// turn; a different one abandons it, and its user message leaves the window (it stays
/// in the log, unanswered). The session decides this, not the value's drop: a turn is
/// detached from the session (no borrow, cheap to clone), and a failed `send` must stay
/// retryable.
#[derive(Debug, Clone)]
pub struct PreparedTurn {
    pub(super) conversation_id: String,
    pub(super) user: Arc<Message>,
    pub(super) request: ChatRequest,
    pub(super) report: TurnReport,
}

impl PreparedTurn {
    /// The request to send: model name, full system prompt, window (the user message
    /// last), tools.
    pub fn request(&self) -> &ChatRequest {
        &self.request
    }

    /// The request, to adjust before sending (tools, temperature, extra tool-call
    /// rounds appended to the messages).
    pub fn request_mut(&mut self) -> &mut ChatRequest {
        &mut self.request
    }

    /// The user message of this turn, whole (the request may carry it cut, see
    /// [`TurnReport::truncated`]).
    pub fn user_message(&self) -> &Message {
        &self.user
    }

    /// The facts injected into the system prompt, best first.
    pub fn injected(&self) -> &[ScoredFact] {
        &self.report.injected
    }

    /// The earlier messages recalled into the system prompt, best first.
    pub fn recalled(&self) -> &[ScoredEpisode] {
        &self.report.recalled
    }

    /// The memory block in the system prompt, if anything was injected.
    pub fn memory_block(&self) -> Option<&str> {
        self.report.memory_block.as_deref()
    }

    /// How the prompt's tokens are spent.
    pub fn tokens(&self) -> PromptTokens {
        self.report.tokens
    }

    /// What memory did so far (inject, summarise, cut); completed by the commit.
    pub fn report(&self) -> &TurnReport {
        &self.report
    }
}

impl<A: Agent> Session<A> {
    /// Opens a turn: logs the user message, injects the user's relevant facts,
    /// summarises what no longer fits, and returns the request for the model.
    ///
    /// `max_tokens` budgets the whole prompt: agent system prompt, memory block, summary
    /// block and window. A user message larger than what is left is cut for the model
    /// (head and tail kept, the cut marked) and kept whole in the log.
    ///
    /// A store error while searching facts, or a summariser error, is reported in the
    /// [`TurnReport`] and the turn goes on; an error of the conversation log is returned
    /// (nothing is acknowledged that is not logged). Preparing the same message again
    /// after a failed turn (same id, or same content while that turn is uncommitted) is a
    /// retry: the message is logged and remembered once.
    ///
    /// A user message over [`SessionConfig::max_message_bytes`](super::SessionConfig::max_message_bytes)
    /// (1 MiB by default) is refused with [`MemoryError::PayloadTooLarge`](crate::MemoryError::PayloadTooLarge)
    /// before anything is logged, remembered or recalled.
    ///
    /// A prepared turn that is dropped without a commit is abandoned when the next,
    /// different message is prepared: the abandoned message leaves the short-term
    /// memory (the log keeps it, followed by a
    /// [`ConversationEvent::Unanswered`]
    /// that replay honours), so the request never holds two user messages in a row.
    /// Until then [`memory`](Self::memory) still shows it, as the open turn's message.
    pub async fn prepare(&mut self, user: impl Into<Message>) -> Result<PreparedTurn> {
        let span = tracing::info_span!(
            "prepare",
            agent = self.agent.name(),
            user = %self.user_id,
            conversation = %self.conversation_id
        );
        self.prepare_message(user.into()).instrument(span).await
    }

    pub(super) async fn prepare_message(&mut self, user: Message) -> Result<PreparedTurn> {
        // 0. A message over the size limit is refused before anything is logged,
        // embedded or extracted (an open turn stays open).
        user.check_size(self.config.max_message_bytes)?;
        let mut report = TurnReport::default();

        // 1. The user message enters the log and memory, once.
        let pending = match self.pending.take() {
            Some(p)
                if p.message.id == user.id
                    || (p.message.role == user.role && p.message.content == user.content) =>
            {
                report.retried = p.logged;
                p
            }
            stale => {
                // A turn opened and never committed is abandoned: its message leaves the
                // window when this one is logged (it stays in the log, unanswered), so
                // the model never gets two user messages in a row.
                if let Some(p) = stale.filter(|p| p.in_memory) {
                    // Only a logged message is in memory, and logging one clears
                    // `unanswered`: there is never a second one to keep.
                    self.unanswered = Some(p.message.id);
                }
                Pending {
                    message: Arc::new(user),
                    logged: false,
                    in_memory: false,
                }
            }
        };
        let mut pending = pending;
        let logged = self.log_pending(&mut pending).await;
        let user = Arc::clone(&pending.message);
        // Kept even when logging failed: a retry then reuses the message and its id.
        self.pending = Some(pending);
        logged?;

        // 2. Inject.
        let budget = self.config.max_tokens;
        let counter = Arc::clone(self.memory.counter());
        let system_prompt = self.agent.system_prompt().into_owned();
        let system_tokens = counter.count_text(&system_prompt);
        if let Some(lt) = self.long_term.clone() {
            let cap = self.config.memory_block_tokens.min(budget / 4);
            self.recall_into(&lt, &user, cap, counter.as_ref(), &mut report)
                .instrument(tracing::info_span!("inject"))
                .await;
        }
        // Each block is joined to the prompt by a blank line, counted with it.
        let joiner = counter.count_text("\n\n");
        let block_tokens = report
            .memory_block
            .as_deref()
            .map_or(0, |b| counter.count_text(b) + joiner);
        if let Some(working) = &self.working {
            let cap = self.config.working_memory_tokens.min(budget / 4);
            match working
                .to_context_string_within(cap, counter.as_ref())
                .instrument(tracing::info_span!("working_memory"))
                .await
            {
                Ok(block) if !block.is_empty() => report.working_memory = Some(block),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "reading working memory failed; the turn goes on without it");
                    report.working_memory_error = Some(e.to_string());
                }
            }
        }
        let working_tokens = report
            .working_memory
            .as_deref()
            .map_or(0, |b| counter.count_text(b) + joiner);

        // 3. Summarise what no longer fits beside the system prompt and the memory blocks.
        let base = budget.saturating_sub(system_tokens + block_tokens + working_tokens);
        let summary_cap = self.config.summary_tokens.min(base / 3);
        let counter_ref = counter.as_ref();
        let (_, summary_tokens_now) =
            self.summary_block
                .get(self.memory.summary(), summary_cap, counter_ref);
        // An absolute threshold summarises before the prompt is full.
        let trigger = self
            .config
            .summarize_threshold
            .map_or(base, |threshold| threshold.min(base));
        if self.memory.message_tokens() + summary_tokens_now > trigger {
            match self
                .summarize(trigger)
                .instrument(tracing::info_span!("summarize"))
                .await
            {
                Ok(n) => report.summarized = n,
                Err(e) => {
                    tracing::warn!(error = %e.chain(), "summarising failed; the window is trimmed instead");
                    report.summary_error = Some(e.chain().to_string());
                }
            }
        }
        let (summary, summary_tokens) =
            self.summary_block
                .get(self.memory.summary(), summary_cap, counter_ref);
        let summary_tokens = if summary.is_some() {
            summary_tokens + joiner
        } else {
            0
        };
        let mut system = system_prompt;
        for block in [
            report.memory_block.as_deref(),
            report.working_memory.as_deref(),
            summary,
        ]
        .into_iter()
        .flatten()
        {
            system.push_str("\n\n");
            system.push_str(block);
        }

        // 4. The window, the user message last (cut when it cannot fit whole).
        let room = base.saturating_sub(summary_tokens);
        let (mut window, mut window_tokens) = self.memory.shared_window_within(room);
        if window.last().is_none_or(|m| m.id != user.id) {
            let system = self.memory.system_messages();
            let system_msg_tokens = self.memory.system_tokens();
            let left = room.saturating_sub(system_msg_tokens);
            let sent = cut::cut_to_fit(&user, left, counter.as_ref())
                .unwrap_or_else(|| Message::clone(&user));
            let sent_tokens = counter.count_message(&sent);
            report.truncated = Some(Truncation {
                message_id: user.id.to_string(),
                original_tokens: counter.count_message(&user),
                sent_tokens,
            });
            window = system;
            window.push(Arc::new(sent));
            window_tokens = system_msg_tokens + sent_tokens;
        }

        let mut request = ChatRequest::new(self.agent.model(), system, window);
        request.tools = self.agent.tools();
        self.agent.before_model(&mut request);
        report.tokens = PromptTokens {
            system: system_tokens,
            memory_block: block_tokens,
            working_memory: working_tokens,
            summary: summary_tokens,
            window: window_tokens,
            total: system_tokens + block_tokens + working_tokens + summary_tokens + window_tokens,
            budget,
        };
        Ok(PreparedTurn {
            conversation_id: self.conversation_id.clone(),
            user,
            request,
            report,
        })
    }

    /// Keeps the user message as an episode, then searches the user's facts and the
    /// episodes outside the window, and renders what is relevant into the memory block.
    /// Store errors are reported, never fatal.
    async fn recall_into(
        &self,
        lt: &LongTerm,
        user: &Message,
        cap: usize,
        counter: &dyn TokenCounter,
        report: &mut TurnReport,
    ) {
        let mut episode = Episode::from_message(&self.user_id, &self.conversation_id, user);
        // The message it answers: the last one before it from the other side.
        let window = self.memory.messages();
        if let Some(previous) = window
            .iter()
            .rev()
            .skip_while(|m| m.id != user.id)
            .skip(1)
            .find(|m| matches!(m.role, Role::User | Role::Assistant))
            .filter(|m| m.role != user.role)
        {
            episode = episode.answering(&previous.text());
        }
        if let Err(e) = lt.episodes.add(&self.user_id, vec![episode]).await {
            tracing::warn!(error = %e.chain(), "keeping the message as an episode failed; the turn goes on");
            report.recall_error = Some(e.chain().to_string());
        }
        if !lt.spec.inject {
            return;
        }
        // What the model sees verbatim is not recalled again.
        let in_window = window.iter().map(|m| m.id.to_string()).collect::<Vec<_>>();
        let request = RecallRequest::new(self.user_id.as_str(), user.text())
            .at(user.created_at)
            .limits(lt.spec.top_k, lt.spec.recall)
            .max_tokens(cap)
            .in_conversation(self.conversation_id.as_str(), in_window);
        let found = recall(lt.store.as_ref(), lt.episodes.as_ref(), &request, counter).await;
        report.inject_error = found.facts_error;
        if found.episodes_error.is_some() {
            report.recall_error = found.episodes_error;
        }
        if let Some(block) = found.block {
            report.memory_block = Some(block.text);
            report.injected = block.facts;
            report.recalled = block.episodes;
        }
    }

    /// Logs and remembers the pending user message, each at most once; takes the
    /// message of an abandoned turn out of the memory in the same append.
    async fn log_pending(&mut self, pending: &mut Pending) -> Result<()> {
        if !pending.logged {
            let mut events = Vec::with_capacity(3);
            if !self.started {
                events.push(ConversationEvent::Started {
                    user_id: self.user_id.clone(),
                    agent: self.agent.name().to_owned(),
                });
            }
            if let Some(message_id) = self.unanswered {
                events.push(ConversationEvent::Unanswered { message_id });
            }
            events.push(ConversationEvent::Message {
                message: Message::clone(&pending.message),
            });
            self.log.append(&self.conversation_id, events).await?;
            self.started = true;
            pending.logged = true;
            // Memory follows the log: the abandoned message leaves only once the log
            // says so, and a replay does the same.
            if let Some(message_id) = self.unanswered.take() {
                self.memory.remove_recent(&message_id);
            }
        }
        if !pending.in_memory {
            if !self.memory.holds_recent(&pending.message.id, 8) {
                self.memory.add(Message::clone(&pending.message));
            }
            pending.in_memory = true;
        }
        Ok(())
    }
}
