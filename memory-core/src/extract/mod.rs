//! Fact extraction: reading a conversation turn for facts about the user.

use async_trait::async_trait;

use crate::error::Result;
use crate::facts::FactCandidate;
use crate::message::Message;

mod llm;
mod rules;

pub use llm::{parse_facts, LlmExtractor, ATTRIBUTES};
pub use rules::RuleExtractor;

/// One conversation turn, as an extractor sees it.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The user's message (the source of facts about the user).
    pub user: &'a Message,
    /// The assistant's reply, when there is one (context only).
    pub assistant: Option<&'a Message>,
}

impl<'a> Turn<'a> {
    /// A turn made of just a user message.
    pub fn user(user: &'a Message) -> Self {
        Self {
            user,
            assistant: None,
        }
    }
}

/// Reads a turn and proposes facts about the user.
#[async_trait]
pub trait FactExtractor: Send + Sync {
    /// Candidates found in `turn`; empty when there are none.
    async fn extract(&self, turn: Turn<'_>) -> Result<Vec<FactCandidate>>;
}
