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

impl Owner {
    /// The owner a log records: its last [`Started`](ConversationEvent::Started) event
    /// (compaction restates it with the snapshot, so the last one is always there). The
    /// one rule every reader of a log's owner follows: replay, listings, `ingest`, rig.
    ///
    /// ```
    /// use agentmemory_core::conversation::{ConversationEvent, Owner, StoredEvent};
    ///
    /// let started = |seq, user: &str| StoredEvent {
    ///     seq,
    ///     at: chrono::Utc::now(),
    ///     event: ConversationEvent::Started { user_id: user.into(), agent: "coach".into() },
    /// };
    /// assert_eq!(Owner::of(&[]), None);
    /// assert_eq!(Owner::of(&[started(1, "ana"), started(2, "ana")]).unwrap().user_id, "ana");
    /// ```
    pub fn of(events: &[StoredEvent]) -> Option<Owner> {
        events.iter().rev().find_map(|e| Self::started(&e.event))
    }

    /// The owner `event` records, if it is a [`Started`](ConversationEvent::Started)
    /// event: for readers that apply a log event by event, keeping the last.
    pub fn started(event: &ConversationEvent) -> Option<Owner> {
        match event {
            ConversationEvent::Started { user_id, agent } => Some(Owner {
                user_id: user_id.clone(),
                agent: agent.clone(),
            }),
            _ => None,
        }
    }
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
    let owner = Owner::of(events);
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
