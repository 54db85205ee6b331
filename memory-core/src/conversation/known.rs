//! Idempotent appends: which messages of a batch a log already holds (for store
//! authors, public as [`crate::store_support`]).

use super::ConversationEvent;

/// The ids of the messages `events` carries, one entry per event (`None` for events that
/// are not messages): what a backend checks to keep appends idempotent.
pub fn message_ids(events: &[ConversationEvent]) -> Vec<Option<ulid::Ulid>> {
    events
        .iter()
        .map(|e| match e {
            ConversationEvent::Message { message } => Some(message.id),
            _ => None,
        })
        .collect()
}

/// Keeps the events of a batch that a log should append: messages whose id is neither
/// `known` (already in the log) nor earlier in the batch are kept, other events always.
pub fn without_known_messages(
    events: Vec<ConversationEvent>,
    mut known: impl FnMut(&ulid::Ulid) -> bool,
) -> Vec<ConversationEvent> {
    // A turn appends one to a few messages: a short list beats hashing them.
    let mut seen: Vec<ulid::Ulid> = Vec::new();
    let mut seen_many = std::collections::HashSet::new();
    let many = events.len() > 16;
    events
        .into_iter()
        .filter(|e| match e {
            ConversationEvent::Message { message } => {
                !known(&message.id)
                    && if many {
                        seen_many.insert(message.id)
                    } else if seen.contains(&message.id) {
                        false
                    } else {
                        seen.push(message.id);
                        true
                    }
            }
            _ => true,
        })
        .collect()
}
