//! The second half of an open turn: [`Session::commit`], and extraction with
//! reconciliation (inline here, or in the background worker).

use std::sync::Arc;

use tracing::Instrument;

use crate::conversation::{ConversationEvent, ConversationStore};
use crate::episodes::Episode;
use crate::error::{MemoryError, Result};
use crate::extract::{FactExtractor, Turn};
use crate::facts::{FactChange, UserMemoryStore};
use crate::message::{Message, Role};
use crate::model::{Completion, Usage};

use super::background::Job;
use super::report::TurnReply;
use super::{Agent, ExtractionMode, PreparedTurn, Session};

/// What the model produced for a turn: the final assistant message, and before it any
/// tool rounds (assistant messages with tool calls, and the tool results).
///
/// ```
/// use agentmemory_core::session::Reply;
/// use agentmemory_core::{Message, ToolCall};
///
/// let call = Message::assistant_with_tools("", vec![ToolCall::new("c1", "clock", serde_json::json!({}))]);
/// let result = Message::tool_result("c1", "09:30");
/// let reply = Reply::new(Message::assistant("It is half past nine.")).with_steps(vec![call, result]);
/// assert_eq!(reply.steps.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Reply {
    /// Tool rounds, in order, before the final message.
    pub steps: Vec<Message>,
    /// The final assistant message.
    pub message: Message,
    /// Tokens the provider reported, when it did.
    pub usage: Option<Usage>,
}

impl Reply {
    /// A reply without tool rounds.
    pub fn new(message: Message) -> Self {
        Self {
            steps: Vec::new(),
            message,
            usage: None,
        }
    }

    /// Sets the tool rounds that came before the final message.
    pub fn with_steps(mut self, steps: Vec<Message>) -> Self {
        self.steps = steps;
        self
    }

    /// Sets the usage the provider reported.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Checks the tool rounds as [`Session::commit`] does: every assistant tool call
    /// answered once by a tool result naming its id, before the next assistant message;
    /// no result for a call that was not made; no tool call in the final message; only
    /// assistant messages and tool results among the steps. The error is
    /// [`MemoryError::InvalidToolRound`], saying which message and what is wrong.
    ///
    /// ```
    /// use agentmemory_core::error::ToolRoundProblem;
    /// use agentmemory_core::session::Reply;
    /// use agentmemory_core::{MemoryError, Message, ToolCall};
    ///
    /// let call = Message::assistant_with_tools("", vec![ToolCall::new("c1", "clock", serde_json::json!({}))]);
    /// let wrong = Message::tool_result("c2", "09:30");
    /// let reply = Reply::new(Message::assistant("It is half past nine.")).with_steps(vec![call, wrong]);
    /// let err = reply.check_tool_rounds().unwrap_err();
    /// assert!(matches!(
    ///     err,
    ///     MemoryError::InvalidToolRound { index: 1, problem: ToolRoundProblem::UnknownCallId { .. } }
    /// ));
    /// ```
    pub fn check_tool_rounds(&self) -> Result<()> {
        super::tool_rounds::check(&self.steps, &self.message)
    }
}

impl From<Message> for Reply {
    fn from(message: Message) -> Self {
        Self::new(message)
    }
}

impl From<Completion> for Reply {
    fn from(c: Completion) -> Self {
        Self {
            steps: Vec::new(),
            message: c.message,
            usage: c.usage,
        }
    }
}

/// What extraction needs, detached from the session so the background worker can own it.
#[derive(Clone)]
pub(super) struct Extraction {
    pub(super) user_id: String,
    pub(super) conversation_id: String,
    pub(super) store: Arc<dyn UserMemoryStore>,
    pub(super) extractor: Arc<dyn FactExtractor>,
    pub(super) log: Arc<dyn ConversationStore>,
}

impl Extraction {
    /// Extracts facts from the turn and reconciles each with the store. Never fails:
    /// errors land in `error`, and every change made before one is logged.
    pub(super) async fn run(
        &self,
        user: &Message,
        reply: &Message,
    ) -> (Vec<FactChange>, Option<String>) {
        let turn = Turn {
            user,
            assistant: Some(reply),
        };
        let applied = crate::facts::apply_turn(
            self.extractor.as_ref(),
            self.store.as_ref(),
            &self.user_id,
            Some(&self.conversation_id),
            turn,
        )
        .await;
        let mut error = applied.error.as_ref().map(|e| {
            tracing::warn!(error = %e.chain(), "extracting or storing facts failed; the turn goes on");
            e.chain().to_string()
        });
        if let Err(e) =
            crate::facts::log_changes(self.log.as_ref(), &self.conversation_id, &applied.changes)
                .await
        {
            tracing::error!(error = %e.chain(), "the fact changes of a turn could not be logged");
            error = Some(match error {
                Some(first) => format!("{first}; logging the fact changes failed: {}", e.chain()),
                None => format!("logging the fact changes failed: {}", e.chain()),
            });
        }
        (applied.changes, error)
    }
}

impl<A: Agent> Session<A> {
    /// Closes a turn opened by [`prepare`](Self::prepare): logs the tool rounds and the
    /// reply (one atomic append), adds them to the short-term memory, then extracts and
    /// reconciles facts — inline, or queued for the background (see
    /// [`ExtractionMode`]).
    ///
    /// Fails, before anything is logged or remembered, when the reply is not a complete
    /// turn: a final message that is not an assistant message, or tool rounds that do not
    /// pair up ([`MemoryError::InvalidToolRound`], see [`Reply::check_tool_rounds`]): a
    /// tool result with an unknown call id, a call without its result, a duplicate result.
    /// Fails too when the log cannot take the reply (nothing is then remembered), or when
    /// `turn` is not this session's latest prepared turn. After a refused reply or a log
    /// error the turn is still open: commit a clone of `turn` (taken before this call)
    /// with a fixed reply, or prepare the same message again (a retry, logged once).
    /// Extraction failures are reported in the [`TurnReport`](super::TurnReport).
    pub async fn commit(
        &mut self,
        turn: PreparedTurn,
        reply: impl Into<Reply>,
    ) -> Result<TurnReply> {
        let span = tracing::info_span!(
            "commit",
            agent = self.agent.name(),
            user = %self.user_id,
            conversation = %self.conversation_id
        );
        self.commit_reply(turn, reply.into()).instrument(span).await
    }

    pub(super) async fn commit_reply(
        &mut self,
        turn: PreparedTurn,
        reply: Reply,
    ) -> Result<TurnReply> {
        if turn.conversation_id != self.conversation_id {
            return Err(MemoryError::invalid(
                "prepared turn",
                format!(
                    "prepared in conversation `{}`, committed to `{}`",
                    turn.conversation_id, self.conversation_id
                ),
            ));
        }
        if self
            .pending
            .as_ref()
            .is_none_or(|p| p.message.id != turn.user.id)
        {
            return Err(MemoryError::invalid(
                "prepared turn",
                "already committed, or superseded by a later prepare",
            ));
        }
        if reply.message.role != Role::Assistant {
            return Err(MemoryError::invalid(
                "reply",
                format!(
                    "the final message must be an assistant message, not {}",
                    reply.message.role
                ),
            ));
        }
        reply.check_tool_rounds()?;
        let PreparedTurn {
            user, mut report, ..
        } = turn;
        report.usage = reply.usage;

        // The reply (after its tool rounds) enters the log, then memory.
        let mut events: Vec<ConversationEvent> = reply
            .steps
            .iter()
            .chain(std::iter::once(&reply.message))
            .map(|m| ConversationEvent::Message { message: m.clone() })
            .collect();
        events.shrink_to_fit();
        let last = self.log.append(&self.conversation_id, events).await?;
        for step in &reply.steps {
            self.memory.add(step.clone());
        }
        self.memory.add(reply.message.clone());
        self.pending = None;

        // The reply is an episode too (with its role), unless the session keeps only
        // what the user said.
        if let Some(lt) = self
            .long_term
            .as_ref()
            .filter(|_| self.config.episodes_of_replies)
        {
            let episode =
                Episode::from_message(&self.user_id, &self.conversation_id, &reply.message)
                    .answering(&user.text());
            if let Err(e) = lt.episodes.add(&self.user_id, vec![episode]).await {
                tracing::warn!(error = %e.chain(), "keeping the reply as an episode failed");
                report.recall_error = Some(e.chain().to_string());
            }
        }

        // Extract and reconcile.
        if let Some(extraction) = &self.extraction {
            report.unread_language =
                crate::extract::unread_language(extraction.extractor.as_ref(), &user.text());
            match &self.background {
                Some(worker)
                    if matches!(self.config.extraction, ExtractionMode::Background { .. }) =>
                {
                    let job = Box::new(Job {
                        user: Message::clone(&user),
                        reply: reply.message.clone(),
                    });
                    match worker.submit(job).await {
                        Ok(()) => report.extraction_deferred = true,
                        Err(job) => {
                            // The worker is gone: extract inline rather than lose the turn.
                            let (changes, error) = extraction.run(&job.user, &job.reply).await;
                            report.fact_changes = changes;
                            report.extraction_error = error;
                        }
                    }
                }
                _ => {
                    let (changes, error) = extraction
                        .run(&user, &reply.message)
                        .instrument(tracing::info_span!("extract"))
                        .await;
                    report.fact_changes = changes;
                    report.extraction_error = error;
                }
            }
        }
        self.compact_if_due(last).await;
        Ok(TurnReply {
            message: reply.message,
            report,
        })
    }
}
