//! What a turn reports besides the reply: [`TurnReport`], [`PromptTokens`],
//! [`Truncation`], and the reply itself, [`TurnReply`].

use serde::Serialize;

use crate::episodes::ScoredEpisode;
use crate::extract::UnreadLanguage;
use crate::facts::{FactChange, ScoredFact};
use crate::message::Message;
use crate::model::Usage;

/// What happened during one turn besides the reply.
///
/// Failures of memory never fail the turn: a store error while injecting, a summariser
/// error, or an extraction error is reported here (`*_error`) and the reply is still
/// returned and logged.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TurnReport {
    /// The facts rendered into the system prompt, best first.
    pub injected: Vec<ScoredFact>,
    /// The earlier messages (episodes) rendered into the memory block, best first, each
    /// with why it was recalled.
    pub recalled: Vec<ScoredEpisode>,
    /// The memory block as the model saw it.
    pub memory_block: Option<String>,
    /// Keeping the message as an episode, or recalling episodes, failed; the turn went
    /// on without them.
    pub recall_error: Option<String>,
    /// Searching the user's facts failed; the turn went on without them.
    pub inject_error: Option<String>,
    /// The working-memory block as the model saw it, when the session renders one
    /// ([`SessionBuilder::working_memory`](super::SessionBuilder::working_memory)) and it
    /// has entries.
    pub working_memory: Option<String>,
    /// Reading the working memory failed; the turn went on without its block.
    pub working_memory_error: Option<String>,
    /// How many messages were folded into the summary this turn (0 = no summarisation).
    pub summarized: usize,
    /// Summarising failed; the turn went on with the window that fits.
    pub summary_error: Option<String>,
    /// How the prompt's tokens were spent.
    pub tokens: PromptTokens,
    /// The user message was larger than the room left for it and was cut for the
    /// model (it is kept whole in the log and the memory).
    pub truncated: Option<Truncation>,
    /// The user message had already been logged by an earlier attempt of this turn that
    /// failed; it was not logged again.
    pub retried: bool,
    /// What extraction changed in the user's facts (ignored candidates included).
    /// Empty when extraction was deferred.
    pub fact_changes: Vec<FactChange>,
    /// Extraction was queued to run in the background (see
    /// [`ExtractionMode::Background`](super::ExtractionMode::Background)); its outcome
    /// comes from [`Session::flush`](super::Session::flush).
    pub extraction_deferred: bool,
    /// Extraction or reconciliation failed this turn (the turn itself completed); the
    /// changes made before the failure are in `fact_changes` and in the log.
    pub extraction_error: Option<String>,
    /// The user's message is in a language the session's extractor does not read (the
    /// rules read English only): it was logged and kept as an episode like any other,
    /// and no facts were read from it. `None` when it was read, when the session does
    /// not extract, or when the message is too short for its language to be told.
    pub unread_language: Option<UnreadLanguage>,
    /// Tokens the provider reported, when it did.
    pub usage: Option<Usage>,
}

impl TurnReport {
    /// Whether older messages were summarised this turn.
    pub fn did_summarize(&self) -> bool {
        self.summarized > 0
    }

    /// Whether any part of memory failed this turn (the reply is unaffected).
    pub fn has_errors(&self) -> bool {
        self.inject_error.is_some()
            || self.working_memory_error.is_some()
            || self.recall_error.is_some()
            || self.summary_error.is_some()
            || self.extraction_error.is_some()
    }
}

/// How the tokens of a prepared prompt are spent. `total` never exceeds `budget` except
/// when the agent's own system prompt does, or a cut user message cannot get smaller.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PromptTokens {
    /// The agent's system prompt.
    pub system: usize,
    /// The memory block.
    pub memory_block: usize,
    /// The working-memory block.
    pub working_memory: usize,
    /// The summary block.
    pub summary: usize,
    /// The window's messages.
    pub window: usize,
    /// All of the above.
    pub total: usize,
    /// The session's `max_tokens`.
    pub budget: usize,
}

/// A message cut to fit the window: the head and the tail kept, the middle replaced by
/// a marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Truncation {
    /// The message's id (the whole message is in the log under it).
    pub message_id: String,
    /// Its tokens, whole.
    pub original_tokens: usize,
    /// Its tokens as sent.
    pub sent_tokens: usize,
}

/// The reply to a user message, with the turn's report.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
