//! [`Session`]: one user's conversation with one agent, turn by turn.
//!
//! A turn ([`Session::send`]) runs the data flow of the design:
//!
//! 1. the user message enters the short-term memory and the conversation log;
//! 2. if the agent injects memory, the user's most relevant facts are rendered into a
//!    delimited block of the system prompt;
//! 3. if the memory is over its token budget, the oldest messages are summarised and the
//!    summary is logged;
//! 4. the chat model gets system prompt + memory block + summary + window;
//! 5. the reply enters the memory and the log;
//! 6. if the agent extracts memory, facts are extracted from the turn and reconciled
//!    with the store;
//! 7. the caller gets the reply and a [`TurnReport`].

mod agent;
mod builder;
mod defaults;
mod memory_block;

use std::sync::Arc;

use serde::Serialize;
use tracing::Instrument;

use crate::buffer::ShortTermMemory;
use crate::conversation::{ConversationEvent, ConversationStore};
use crate::error::Result;
use crate::extract::{FactExtractor, Turn};
use crate::facts::{FactChange, FactSource, ScoredFact, UserMemoryStore};
use crate::message::Message;
use crate::model::{ChatModel, ChatRequest, Usage};
use crate::remember::RememberSpec;
use crate::summarize::Summarizer;

pub use agent::Agent;
pub use builder::{SessionBuilder, SessionConfig};
/// Renders facts into the delimited memory block a session puts in the system prompt
/// (for integrations that build the prompt themselves, such as the rig adapter).
pub use memory_block::render as render_memory_block;
pub use memory_block::{MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN};

/// What happened during one turn besides the reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TurnReport {
    /// The facts rendered into the system prompt, best first.
    pub injected: Vec<ScoredFact>,
    /// The memory block as the model saw it.
    pub memory_block: Option<String>,
    /// What extraction changed in the user's facts (ignored candidates included).
    pub fact_changes: Vec<FactChange>,
    /// How many messages were folded into the summary this turn (0 = no summarisation).
    pub summarized: usize,
    /// Extraction failed this turn (the turn itself completed); the error's text.
    pub extraction_error: Option<String>,
    /// Tokens the provider reported, when it did.
    pub usage: Option<Usage>,
}

impl TurnReport {
    /// Whether older messages were summarised this turn.
    pub fn did_summarize(&self) -> bool {
        self.summarized > 0
    }
}

/// The reply to a user message, with the turn's report.
#[derive(Debug, Clone)]
pub struct TurnReply {
    /// The assistant's message.
    pub message: Message,
    /// What memory did this turn.
    pub report: TurnReport,
}

impl TurnReply {
    /// The reply's text.
    pub fn text(&self) -> String {
        self.message.text()
    }
}

/// The long-term memory parts a remembering agent resolved at build time.
#[derive(Clone)]
pub(crate) struct LongTerm {
    pub(crate) spec: RememberSpec,
    pub(crate) store: Arc<dyn UserMemoryStore>,
    pub(crate) extractor: Option<Arc<dyn FactExtractor>>,
}

/// One user's conversation with one agent.
///
/// Built with [`Session::builder`]; every dependency is resolved from the
/// [`Container`](crate::Container) at build time, so a missing store or model fails
/// before the first message. See the crate documentation of `agentmem` for a complete
/// example.
pub struct Session<A: Agent> {
    agent: A,
    user_id: String,
    conversation_id: String,
    model: Arc<dyn ChatModel>,
    summarizer: Arc<dyn Summarizer>,
    log: Arc<dyn ConversationStore>,
    long_term: Option<LongTerm>,
    memory: ShortTermMemory,
    config: SessionConfig,
    started: bool,
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

    async fn turn(&mut self, user: Message) -> Result<TurnReply> {
        let mut report = TurnReport::default();

        // 1. The user message enters memory and the log before anything else happens.
        let mut events = Vec::with_capacity(2);
        if !self.started {
            events.push(ConversationEvent::Started {
                user_id: self.user_id.clone(),
                agent: self.agent.name().to_owned(),
            });
        }
        events.push(ConversationEvent::Message {
            message: user.clone(),
        });
        self.log.append(&self.conversation_id, events).await?;
        self.started = true;
        self.memory.add(user.clone());

        // 2. Inject.
        if let Some(lt) = self
            .long_term
            .as_ref()
            .filter(|lt| lt.spec.inject && lt.spec.top_k > 0)
        {
            let facts = lt
                .store
                .search(&self.user_id, &user.text(), lt.spec.top_k)
                .instrument(tracing::info_span!("inject"))
                .await?;
            if let Some((block, included)) = memory_block::render(
                facts,
                self.config.memory_block_tokens,
                self.memory.counter().as_ref(),
            ) {
                report.memory_block = Some(block);
                report.injected = included;
            }
        }

        // 3. Summarise what no longer fits.
        if self.memory.is_over_budget() {
            report.summarized = self
                .summarize()
                .instrument(tracing::info_span!("summarize"))
                .await?;
        }

        // 4. The model.
        let mut request = self.request(report.memory_block.as_deref());
        self.agent.before_model(&mut request);
        let completion = self
            .model
            .complete(request)
            .instrument(tracing::info_span!("model"))
            .await?;
        self.agent.after_model(&completion);
        report.usage = completion.usage;
        let reply = completion.message;

        // 5. The reply enters memory and the log.
        self.log
            .append(
                &self.conversation_id,
                vec![ConversationEvent::Message {
                    message: reply.clone(),
                }],
            )
            .await?;
        self.memory.add(reply.clone());

        // 6. Extract and reconcile.
        if let Some(lt) = self.long_term.clone().filter(|lt| lt.spec.extract) {
            if let Some(extractor) = &lt.extractor {
                self.extract(&lt, extractor.as_ref(), &user, &reply, &mut report)
                    .instrument(tracing::info_span!("extract"))
                    .await?;
            }
        }

        Ok(TurnReply {
            message: reply,
            report,
        })
    }

    fn request(&self, memory_block: Option<&str>) -> ChatRequest {
        let mut system = self.agent.system_prompt().into_owned();
        if let Some(block) = memory_block {
            system.push_str("\n\n");
            system.push_str(block);
        }
        if let Some(summary) = self.memory.summary() {
            system.push_str("\n\n<conversation_summary>\n");
            system.push_str(summary);
            system.push_str("\n</conversation_summary>");
        }
        ChatRequest {
            model: self.agent.model().to_owned(),
            system,
            messages: self.memory.shared_window(),
            temperature: None,
            max_tokens: None,
        }
    }

    /// Folds the older messages into the summary, logs the new summary, and trims the
    /// buffer down to the low-water mark (see [`SessionConfig::summarize_to`]), so that
    /// summarisation runs once every several turns rather than on every turn once the
    /// window is full. Returns how many messages were folded.
    async fn summarize(&mut self) -> Result<usize> {
        let max = self.memory.max_tokens();
        // The summary never takes more than a quarter of the budget.
        let reserve = self.config.summary_tokens.min(max / 4);
        let target = max.saturating_mul(usize::from(self.config.summarize_to)) / 100;
        let room = target
            .saturating_sub(self.memory.system_tokens())
            .saturating_sub(reserve);
        let keep_recent = self.memory.recent_within(room).max(1);
        let old = self.memory.messages_to_summarize(keep_recent);
        if old.is_empty() {
            return Ok(0);
        }
        let summary = self
            .summarizer
            .summarize(self.memory.summary(), &old, reserve)
            .await?;
        self.log
            .append(
                &self.conversation_id,
                vec![ConversationEvent::SummaryUpdated {
                    summary: summary.clone(),
                    keep_recent,
                }],
            )
            .await?;
        self.memory.set_summary(summary);
        Ok(self.memory.trim_to_recent(keep_recent))
    }

    async fn extract(
        &self,
        lt: &LongTerm,
        extractor: &dyn FactExtractor,
        user: &Message,
        reply: &Message,
        report: &mut TurnReport,
    ) -> Result<()> {
        let turn = Turn {
            user,
            assistant: Some(reply),
        };
        let candidates = match extractor.extract(turn).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "fact extraction failed; the turn goes on");
                report.extraction_error = Some(e.to_string());
                return Ok(());
            }
        };
        for mut candidate in candidates {
            candidate.source = FactSource {
                session_id: Some(self.conversation_id.clone()),
                message_id: Some(user.id.to_string()),
            };
            report
                .fact_changes
                .push(lt.store.upsert(&self.user_id, candidate).await?);
        }
        let changed: Vec<_> = report
            .fact_changes
            .iter()
            .filter(|c| !matches!(c, FactChange::Ignored { .. }))
            .cloned()
            .collect();
        if !changed.is_empty() {
            self.log
                .append(
                    &self.conversation_id,
                    vec![ConversationEvent::FactsChanged { changes: changed }],
                )
                .await?;
        }
        Ok(())
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
        self.log.compact(&self.conversation_id, last - 1).await
    }
}
