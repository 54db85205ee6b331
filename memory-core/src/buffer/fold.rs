//! Folding the oldest messages of a [`ShortTermMemory`] into its running summary: the one
//! fold that a [`Session`](crate::session::Session), the facade's `MemoryManager` and the
//! server's working memory run.
//!
//! A fold is computed first ([`ShortTermMemory::fold`]: what stays, and the summary the
//! summariser wrote for the rest) and applied after ([`ShortTermMemory::apply_fold`]), so a
//! caller that logs the new summary changes its buffer only once the log holds it.
//! [`fold_into_summary`] does the three steps for a logged conversation.

use crate::conversation::{ConversationEvent, ConversationStore};
use crate::error::Result;
use crate::summarize::Summarizer;

use super::ShortTermMemory;

/// A fold computed by [`ShortTermMemory::fold`], not applied yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    /// The new running summary: the old one and the folded messages.
    pub summary: String,
    /// How many of the most recent messages stay verbatim.
    pub keep_recent: usize,
    /// How many messages the summary takes the place of.
    pub folded: usize,
}

/// How much a fold within `max` tokens keeps: the summary takes at most `summary_tokens`
/// and never more than a quarter of `max`; the recent messages that stay fit
/// `summarize_to` percent of `max` with the system messages and that summary (at least
/// one stays). Returns `(keep_recent, summary_tokens)`.
///
/// Folding down to a low-water mark rather than to `max` makes a fold run once every
/// several turns, not on every turn once the window is full.
pub fn fold_budget(
    memory: &ShortTermMemory,
    max: usize,
    summary_tokens: usize,
    summarize_to: u8,
) -> (usize, usize) {
    let reserve = summary_tokens.min(max / 4);
    let target = max.saturating_mul(usize::from(summarize_to)) / 100;
    let room = target
        .saturating_sub(memory.system_tokens())
        .saturating_sub(reserve);
    (memory.recent_within(room).max(1), reserve)
}

impl ShortTermMemory {
    /// The fold that keeps the `keep_recent` most recent messages and has `summarizer`
    /// write the others into the running summary (at most `summary_tokens`); `None` when
    /// nothing is older than those. The buffer is not changed: see
    /// [`apply_fold`](Self::apply_fold).
    ///
    /// ```
    /// use agentmemory_core::{ExtractiveSummarizer, Message, ShortTermMemory};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> agentmemory_core::Result<()> {
    /// let mut memory = ShortTermMemory::new(10_000);
    /// for text in ["I live in Leeds.", "Nice!", "I have a dog called Rex.", "Lovely."] {
    ///     memory.add(Message::user(text));
    /// }
    /// let fold = memory.fold(&ExtractiveSummarizer::new(), 2, 100).await?.unwrap();
    /// assert_eq!(fold.folded, 2);
    /// assert_eq!(memory.apply_fold(fold), 2);
    /// assert_eq!(memory.messages().len(), 2);
    /// assert!(memory.summary().unwrap().contains("Leeds"));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn fold(
        &self,
        summarizer: &dyn Summarizer,
        keep_recent: usize,
        summary_tokens: usize,
    ) -> Result<Option<Fold>> {
        let old = self.messages_to_summarize(keep_recent);
        if old.is_empty() {
            return Ok(None);
        }
        let summary = summarizer
            .summarize(self.summary(), &old, summary_tokens)
            .await?;
        Ok(Some(Fold {
            summary,
            keep_recent,
            folded: old.len(),
        }))
    }

    /// Applies a [`fold`](Self::fold) computed on this buffer: the new summary in place,
    /// the folded messages dropped. Returns how many were dropped.
    pub fn apply_fold(&mut self, fold: Fold) -> usize {
        self.set_summary(fold.summary);
        self.trim_to_recent(fold.keep_recent)
    }
}

/// Folds the older messages of `memory`, the buffer of the logged conversation
/// `conversation_id`, into its summary within `max` tokens ([`fold_budget`]), logs the
/// new summary ([`ConversationEvent::SummaryUpdated`]) and only then changes `memory`.
/// Returns how many messages were folded (0 when nothing was older than what stays).
pub async fn fold_into_summary(
    memory: &mut ShortTermMemory,
    summarizer: &dyn Summarizer,
    log: &dyn ConversationStore,
    conversation_id: &str,
    max: usize,
    summary_tokens: usize,
    summarize_to: u8,
) -> Result<usize> {
    let (keep_recent, reserve) = fold_budget(memory, max, summary_tokens, summarize_to);
    let Some(fold) = memory.fold(summarizer, keep_recent, reserve).await? else {
        return Ok(0);
    };
    log.append(
        conversation_id,
        vec![ConversationEvent::SummaryUpdated {
            summary: fold.summary.clone(),
            keep_recent: fold.keep_recent,
        }],
    )
    .await?;
    Ok(memory.apply_fold(fold))
}
