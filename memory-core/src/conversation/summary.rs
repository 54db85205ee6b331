//! What a listing shows of a conversation without replaying it: its owner, how many
//! events and messages its log holds, when it was last written.

use chrono::{DateTime, Utc};

use super::{ConversationEvent, Owner, StoredEvent};

/// One conversation as `agentmem sessions list` shows it.
///
/// ```
/// use agentmemory_core::conversation::{ConversationEvent, ConversationSummary, StoredEvent};
/// use agentmemory_core::Message;
///
/// let at = chrono::Utc::now();
/// let log = vec![
///     StoredEvent { seq: 1, at, event: ConversationEvent::Started { user_id: "ana".into(), agent: "coach".into() } },
///     StoredEvent { seq: 2, at, event: ConversationEvent::Message { message: Message::user("hi") } },
/// ];
/// let summary = ConversationSummary::of("c1", &log);
/// assert_eq!(summary.owner.unwrap().user_id, "ana");
/// assert_eq!((summary.events, summary.messages), (2, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConversationSummary {
    /// The conversation's id.
    pub id: String,
    /// Who it belongs to: the last [`Started`](ConversationEvent::Started) event its log
    /// holds (the rule [`replay`](super::replay) follows).
    pub owner: Option<Owner>,
    /// How many events the log holds (after any compaction).
    pub events: u64,
    /// How many of them are messages.
    pub messages: u64,
    /// When the last event was written.
    pub last_activity: Option<DateTime<Utc>>,
}

impl ConversationSummary {
    /// The summary of conversation `id` whose log is `events`.
    pub fn of(id: &str, events: &[StoredEvent]) -> Self {
        let owner = Owner::of(events);
        let messages = events
            .iter()
            .filter(|e| matches!(e.event, ConversationEvent::Message { .. }))
            .count();
        Self {
            id: id.to_owned(),
            owner,
            events: events.len() as u64,
            messages: messages as u64,
            last_activity: events.last().map(|e| e.at),
        }
    }

    /// A summary from its parts (for backends that count without loading the log).
    pub fn new(
        id: impl Into<String>,
        owner: Option<Owner>,
        events: u64,
        messages: u64,
        last_activity: Option<DateTime<Utc>>,
    ) -> Self {
        Self {
            id: id.into(),
            owner,
            events,
            messages,
            last_activity,
        }
    }
}
