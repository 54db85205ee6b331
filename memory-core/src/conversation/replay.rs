//! Rebuilding a short-term memory from a conversation's events.

use crate::buffer::ShortTermMemory;

use super::{ConversationEvent, StoredEvent};

/// Who a conversation belongs to, as its log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The user.
    pub user_id: String,
    /// The agent's name.
    pub agent: String,
}

/// Replays `events` into `memory`, from the last snapshot on, exactly as a session
/// applied them: messages are added, summary updates set the summary and trim to the
/// recorded number of recent messages, a snapshot restores its state, an unanswered user
/// message leaves the memory.
/// Returns the conversation's owner when the log records one.
///
/// ```
/// use agentmemory_core::buffer::ShortTermMemory;
/// use agentmemory_core::conversation::{replay, ConversationEvent, StoredEvent};
/// use agentmemory_core::Message;
///
/// let event = |seq, event| StoredEvent { seq, at: chrono::Utc::now(), event };
/// let log = vec![
///     event(1, ConversationEvent::Message { message: Message::user("one") }),
///     event(2, ConversationEvent::Message { message: Message::assistant("two") }),
///     event(3, ConversationEvent::SummaryUpdated { summary: "said one".into(), keep_recent: 1 }),
/// ];
/// let mut memory = ShortTermMemory::new(1000);
/// replay(&log, &mut memory);
/// assert_eq!(memory.len(), 1);
/// assert_eq!(memory.summary(), Some("said one"));
/// ```
pub fn replay(events: &[StoredEvent], memory: &mut ShortTermMemory) -> Option<Owner> {
    let owner = events.iter().rev().find_map(|e| match &e.event {
        ConversationEvent::Started { user_id, agent } => Some(Owner {
            user_id: user_id.clone(),
            agent: agent.clone(),
        }),
        _ => None,
    });
    let from = events
        .iter()
        .rposition(|e| matches!(e.event, ConversationEvent::Snapshot { .. }))
        .unwrap_or(0);
    for stored in &events[from..] {
        apply(memory, &stored.event);
    }
    owner
}

/// Applies one event to a short-term memory.
pub fn apply(memory: &mut ShortTermMemory, event: &ConversationEvent) {
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
        ConversationEvent::Unanswered { message_id } => {
            memory.remove_recent(message_id);
        }
        ConversationEvent::Started { .. }
        | ConversationEvent::FactsChanged { .. }
        | ConversationEvent::FactsApplied { .. }
        | ConversationEvent::GraphChanged { .. } => {}
    }
}
