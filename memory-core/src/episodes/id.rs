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

/// A ULID that is the same wherever and whenever it is made from the same inputs: its
/// time part is `at`, its random part 80 bits of the 128-bit FNV-1a hash of `parts`
/// (stable across processes and Rust versions, unlike `std`'s hasher). How a message
/// that arrives without a ULID (an imported conversation, a client's own id) gets one
/// that a second import or a re-sent message finds again.
///
/// ```
/// use agentmemory_core::episodes::stable_ulid;
/// use chrono::{TimeZone, Utc};
///
/// let at = Utc.with_ymd_and_hms(2024, 4, 2, 19, 0, 0).unwrap();
/// assert_eq!(stable_ulid(at, &[b"chat", b"1"]), stable_ulid(at, &[b"chat", b"1"]));
/// assert_ne!(stable_ulid(at, &[b"chat", b"1"]), stable_ulid(at, &[b"chat", b"2"]));
/// assert_eq!(stable_ulid(at, &[b"x"]).timestamp_ms(), at.timestamp_millis() as u64);
/// ```
pub fn stable_ulid(at: DateTime<Utc>, parts: &[&[u8]]) -> Ulid {
    Ulid::from_parts(millis(at), fnv1a_128(parts) & ((1u128 << 80) - 1))
}

/// FNV-1a, 128 bits, over the bytes of `parts` in order: the stable ids of episodes, and of
/// the documents a knowledge graph indexes, are made from it.
///
/// ```
/// use agentmemory_core::episodes::fnv1a_128;
///
/// assert_eq!(fnv1a_128(&[b"ab", b"c"]), fnv1a_128(&[b"abc"]));
/// assert_ne!(fnv1a_128(&[b"abc"]), fnv1a_128(&[b"abd"]));
/// ```
pub fn fnv1a_128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut hash = OFFSET;
    for byte in parts.iter().flat_map(|p| p.iter()) {
        hash ^= u128::from(*byte);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

/// Milliseconds since the epoch, clamped to what a ULID holds (times before 1970 are 0).
pub(crate) fn millis(t: DateTime<Utc>) -> u64 {
    u64::try_from(t.timestamp_millis()).unwrap_or(0)
}

/// When the episode with id `id` was said, when `id` is an episode id.
pub(crate) fn said_at_millis(id: &str) -> Option<u64> {
    Ulid::from_string(id).ok().map(|u| u.timestamp_ms())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_published_fnv1a_128() {
        // FNV-1a 128 of "" is its offset basis.
        assert_eq!(fnv1a_128(&[]), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(
            fnv1a_128(&[b"a"]),
            0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964
        );
        assert_eq!(fnv1a_128(&[b"a", b"b"]), fnv1a_128(&[b"ab"]));
    }
}
