//! Token counting: how much of a model's context a message takes.
//!
//! Buffers count a message once, when it enters, and keep the figure; a counter is never
//! asked about the same message twice.

use std::fmt::Debug;

use crate::message::{Content, Message};

/// Counts tokens the way a model's tokenizer would (exactly or approximately).
///
/// ```
/// use agentmemory_core::{HeuristicCounter, Message, TokenCounter};
///
/// let counter = HeuristicCounter::default();
/// assert_eq!(counter.count_text("abcdefgh"), 2); // 8 chars / 4
/// // a message adds a fixed overhead for its role and framing
/// assert_eq!(counter.count_message(&Message::user("abcdefgh")), 2 + 4);
/// ```
pub trait TokenCounter: Send + Sync + Debug {
    /// Tokens in a piece of text.
    fn count_text(&self, text: &str) -> usize;

    /// The fixed cost of one message's framing (role, separators).
    fn per_message_overhead(&self) -> usize {
        4
    }

    /// Tokens a whole message takes: its framing, its content and its tool calls.
    fn count_message(&self, message: &Message) -> usize {
        let content = match &message.content {
            Content::Text(t) => self.count_text(t),
            Content::Blocks(_) => self.count_text(&message.content.to_text()),
        };
        let calls: usize = message
            .tool_calls
            .iter()
            .map(|c| self.count_text(&c.name) + self.count_text(&c.arguments.to_string()) + 3)
            .sum();
        let call_id = message
            .tool_call_id
            .as_deref()
            .map(|id| self.count_text(id))
            .unwrap_or(0);
        self.per_message_overhead() + content + calls + call_id
    }
}

/// The default counter: one token per four characters (rounded up), plus a fixed
/// overhead per message. Good to within ~20% for English on GPT-style tokenizers and
/// needs no data files.
#[derive(Debug, Clone, Copy)]
pub struct HeuristicCounter {
    overhead: usize,
}

impl HeuristicCounter {
    /// A heuristic counter with the given per-message overhead.
    pub const fn with_overhead(overhead: usize) -> Self {
        Self { overhead }
    }
}

impl Default for HeuristicCounter {
    fn default() -> Self {
        Self { overhead: 4 }
    }
}

impl TokenCounter for HeuristicCounter {
    fn count_text(&self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }

    fn per_message_overhead(&self) -> usize {
        self.overhead
    }
}

#[cfg(feature = "tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
pub use bpe::{BpeCounter, Encoding};

#[cfg(feature = "tiktoken")]
mod bpe {
    use std::sync::Arc;

    use super::TokenCounter;
    use crate::error::{MemoryError, Result};

    /// Which BPE vocabulary to count with.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Encoding {
        /// GPT-4 / GPT-3.5 family.
        Cl100k,
        /// GPT-4o family.
        O200k,
    }

    /// Exact token counts with OpenAI's BPE vocabularies (feature `tiktoken`).
    /// The ranks ship inside `tiktoken-rs`; nothing is downloaded.
    ///
    /// ```
    /// use agentmemory_core::{BpeCounter, TokenCounter};
    /// let counter = BpeCounter::cl100k().unwrap();
    /// assert_eq!(counter.count_text("hello world"), 2);
    /// ```
    #[derive(Clone)]
    pub struct BpeCounter {
        bpe: Arc<tiktoken_rs::CoreBPE>,
        encoding: Encoding,
    }

    impl std::fmt::Debug for BpeCounter {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("BpeCounter")
                .field("encoding", &self.encoding)
                .finish()
        }
    }

    impl BpeCounter {
        /// A counter for `encoding`.
        pub fn new(encoding: Encoding) -> Result<Self> {
            let bpe = match encoding {
                Encoding::Cl100k => tiktoken_rs::cl100k_base(),
                Encoding::O200k => tiktoken_rs::o200k_base(),
            }
            .map_err(|e| MemoryError::invalid("tokenizer", e.to_string()))?;
            Ok(Self {
                bpe: Arc::new(bpe),
                encoding,
            })
        }

        /// The cl100k_base counter.
        pub fn cl100k() -> Result<Self> {
            Self::new(Encoding::Cl100k)
        }

        /// The o200k_base counter.
        pub fn o200k() -> Result<Self> {
            Self::new(Encoding::O200k)
        }
    }

    impl TokenCounter for BpeCounter {
        fn count_text(&self, text: &str) -> usize {
            self.bpe.encode_ordinary(text).len()
        }

        fn per_message_overhead(&self) -> usize {
            // OpenAI's documented framing cost for chat messages.
            3
        }
    }
}
