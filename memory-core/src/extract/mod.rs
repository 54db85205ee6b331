//! Fact extraction: reading a conversation turn for facts about the user.

use async_trait::async_trait;
use serde::Serialize;

use crate::error::Result;
use crate::facts::FactCandidate;
use crate::message::Message;

mod llm;
mod rules;

pub use llm::{parse_facts, LlmExtractor, ATTRIBUTES};
pub(crate) use rules::health_words;
pub use rules::RuleExtractor;

/// The language of a text, when it can be told reliably (see
/// [`agentmemory_index::text::language`]), and the type it returns.
pub use agentmemory_index::text::{language, Language};

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

    /// The languages this extractor reads facts in; `None` (the default) for any
    /// language, as a model does. [`RuleExtractor`] reads English only: a message in
    /// another language is kept, and its turn says no facts were read from it
    /// ([`UnreadLanguage`]).
    fn languages(&self) -> Option<&[Language]> {
        None
    }
}

/// Messages in a language the extractor does not read: they are logged and kept as
/// episodes (recalled as earlier messages) like any other, but no facts are read from
/// them. Reported by a turn ([`TurnReport::unread_language`](crate::session::TurnReport::unread_language))
/// and by an ingest ([`IngestReport::unread_languages`](crate::ingest::IngestReport::unread_languages)).
///
/// ```
/// use agentmemory_core::extract::{unread_language, RuleExtractor};
///
/// let rules = RuleExtractor::new();
/// let notice = unread_language(&rules, "Je suis allergique aux arachides, même une petite trace me rend malade.").unwrap();
/// assert_eq!(notice.language, "French");
/// assert_eq!(
///     notice.to_string(),
///     "a message in French was kept as an earlier message; facts are extracted from English only"
/// );
/// assert!(unread_language(&rules, "I am allergic to peanuts, even a trace makes me ill.").is_none());
/// assert!(unread_language(&rules, "Merci !").is_none()); // too short to tell
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UnreadLanguage {
    /// The language's name in English (`"French"`).
    pub language: String,
    /// Its ISO 639-3 code (`"fra"`).
    pub code: String,
    /// How many messages were in it.
    pub messages: usize,
    /// The languages the extractor reads (`["English"]`).
    pub extracted_from: Vec<String>,
}

impl std::fmt::Display for UnreadLanguage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = self.extracted_from.join(", ");
        if self.messages == 1 {
            write!(
                f,
                "a message in {} was kept as an earlier message; facts are extracted from {from} only",
                self.language
            )
        } else {
            write!(
                f,
                "{} messages in {} were kept as earlier messages; facts are extracted from {from} only",
                self.messages, self.language
            )
        }
    }
}

/// The notice for `text` (a user's message) when `extractor` does not read its language;
/// `None` when it does, or when the language cannot be told (a short message).
pub fn unread_language(extractor: &dyn FactExtractor, text: &str) -> Option<UnreadLanguage> {
    let reads = extractor.languages()?;
    let lang = language(text)?;
    if reads.contains(&lang) {
        return None;
    }
    Some(UnreadLanguage {
        language: lang.name().to_owned(),
        code: lang.code().to_owned(),
        messages: 1,
        extracted_from: reads.iter().map(|l| l.name().to_owned()).collect(),
    })
}
