//! Conversation buffers: the token-budget window with its running summary
//! ([`ShortTermMemory`]) and the plain last-N buffer ([`ConversationBuffer`]).

mod snapshot;

pub use snapshot::{ShortTermSnapshot, SNAPSHOT_VERSION};
