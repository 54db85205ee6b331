//! Conversation buffers: the token-budget window with its running summary
//! ([`ShortTermMemory`]) and the plain last-N buffer ([`ConversationBuffer`]).

mod conversation_buffer;
mod fold;
mod legacy;
mod short_term;
mod snapshot;

pub use conversation_buffer::{ConversationBuffer, DEFAULT_MAX_MESSAGES};
pub use fold::{fold_budget, fold_into_summary, Fold};
pub use short_term::{ShortTermMemory, DEFAULT_MAX_TOKENS};
pub use snapshot::{ShortTermSnapshot, SNAPSHOT_VERSION};
