//! Summarisation: folding older messages into a running summary.

use async_trait::async_trait;

use crate::error::Result;
use crate::message::Message;

mod extractive;
mod llm;
mod template;

pub use extractive::{ExtractiveSummarizer, NEAR_DUPLICATE};
pub use llm::LlmSummarizer;
pub use template::{SummaryPrompt, SUMMARY_PLACEHOLDERS};

/// Condenses messages that leave the window into a summary.
#[async_trait]
pub trait Summarizer: Send + Sync {
    /// A new running summary covering `previous` (the summary so far, if any) and
    /// `messages`, at most `max_tokens` long by the heuristic counter.
    async fn summarize(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        max_tokens: usize,
    ) -> Result<String>;
}
