//! Episode ids that sort by time.

use chrono::{DateTime, Utc};
use ulid::Ulid;

/// The id of the episode of message `message_id` said at `observed_at`: a ULID whose
/// time part is `observed_at` (not when the message object was made) and whose random
/// part is the message id's. The same message always gets the same id, and ids in byte
/// order are episodes in the order they were said — also for a conversation imported
/// long after it happened.
///
/// ```
/// use agentmemory_core::episodes::episode_id;
/// use chrono::{TimeZone, Utc};
///
/// let m = ulid::Ulid::new();
/// let early = episode_id(Utc.with_ymd_and_hms(2019, 1, 1, 0, 0, 0).unwrap(), m);
/// let late = episode_id(Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(), ulid::Ulid::new());
/// assert!(early < late);
/// assert_eq!(early, episode_id(Utc.with_ymd_and_hms(2019, 1, 1, 0, 0, 0).unwrap(), m));
/// ```
pub fn episode_id(observed_at: DateTime<Utc>, message_id: Ulid) -> String {
    Ulid::from_parts(millis(observed_at), message_id.random()).to_string()
}

/// Milliseconds since the epoch, clamped to what a ULID holds (times before 1970 are 0).
pub(crate) fn millis(t: DateTime<Utc>) -> u64 {
    u64::try_from(t.timestamp_millis()).unwrap_or(0)
}

/// When the episode with id `id` was said, when `id` is an episode id.
pub(crate) fn said_at_millis(id: &str) -> Option<u64> {
    Ulid::from_string(id).ok().map(|u| u.timestamp_ms())
}
