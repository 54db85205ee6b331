//! Rebuilding a session's short-term memory from its conversation log.

use crate::buffer::ShortTermMemory;
use crate::conversation::{ConversationEvent, StoredEvent};
use crate::error::{MemoryError, Result};

/// Applies `events` to `memory` (from the last snapshot on). Returns whether the log
/// recorded the conversation's start. A conversation started by another user is refused.
pub(crate) fn replay(
    events: &[StoredEvent],
    user_id: &str,
    conversation_id: &str,
    memory: &mut ShortTermMemory,
) -> Result<bool> {
    let mut started = false;
    for stored in events {
        if let ConversationEvent::Started { user_id: owner, .. } = &stored.event {
            if owner != user_id {
                return Err(MemoryError::invalid(
                    "conversation id",
                    format!("conversation `{conversation_id}` belongs to another user"),
                ));
            }
            started = true;
        }
    }
    let from = events
        .iter()
        .rposition(|e| matches!(e.event, ConversationEvent::Snapshot { .. }))
        .unwrap_or(0);
    for stored in &events[from..] {
        apply(memory, &stored.event);
    }
    Ok(started)
}

/// Applies one event to a short-term memory.
pub(crate) fn apply(memory: &mut ShortTermMemory, event: &ConversationEvent) {
    match event {
        ConversationEvent::Message { message } => {
            memory.add(message.clone());
        }
        ConversationEvent::SummaryUpdated {
            summary,
            keep_recent,
        } => {
            memory.set_summary(summary.clone());
            memory.trim_to_recent(*keep_recent);
        }
        ConversationEvent::Snapshot { snapshot } => memory.restore(snapshot.clone()),
        ConversationEvent::Started { .. } | ConversationEvent::FactsChanged { .. } => {}
    }
}
