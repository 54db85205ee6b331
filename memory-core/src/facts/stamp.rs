//! Where and when a candidate was said: the one place every entry point (a session's
//! turn, an ingest, the server, rig) marks a candidate with its message before it is
//! reconciled.

use chrono::{DateTime, Utc};

use super::{FactCandidate, FactSource};

/// Marks `candidate` as said in message `message_id` of conversation `conversation_id`
/// at `said_at`, and as true from the past time the message names, if any ("I moved to
/// Galway last week" took effect last week; "since 2019" in 2019). A time after
/// `said_at` (a plan: "we move in August") is not a start: the fact is taken as said.
/// Times the extractor already set are kept.
///
/// ```
/// use chrono::{Datelike, TimeZone, Utc};
/// use agentmemory_core::facts::{stamp, FactCandidate};
///
/// let said = Utc.with_ymd_and_hms(2025, 6, 11, 10, 0, 0).unwrap();
/// let mut c = FactCandidate::new("lives in Galway", 0.9);
/// stamp(&mut c, "chat-7", "01J00000000000000000000000", said, "I moved to Galway last week");
/// assert_eq!(c.observed_at, Some(said));
/// assert_eq!(c.valid_from.map(|t| t.day()), Some(2)); // the Monday of last week
/// assert_eq!(c.source.message_id.as_deref(), Some("01J00000000000000000000000"));
/// ```
pub fn stamp(
    candidate: &mut FactCandidate,
    conversation_id: &str,
    message_id: &str,
    said_at: DateTime<Utc>,
    message_text: &str,
) {
    candidate.source = FactSource {
        session_id: Some(conversation_id.to_owned()),
        message_id: Some(message_id.to_owned()),
    };
    let said = *candidate.observed_at.get_or_insert(said_at);
    if candidate.valid_from.is_none() {
        candidate.valid_from = crate::time::resolve(message_text, said)
            .into_iter()
            .map(|m| m.span.start)
            .find(|start| *start < said);
    }
}
