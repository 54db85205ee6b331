//! [`RankedFacts`] as bytes, so a store that keeps them beside a user's facts opens the
//! user without decoding every fact body and analysing every text again.
//!
//! A snapshot (format 3) holds the current facts in their order, in a compact binary
//! form; their word index as it is built over them, as flat arrays
//! ([`SparseIndex::write_flat`]: the terms' texts, the postings' bytes, the documents'
//! term lists), read back with one allocation per array and no term inserted (the same
//! index, so the same scores to the bit); and the keys each fact is filed under for
//! reconciliation, so an upsert on a store just opened files 100,000 facts without
//! hashing their texts. Format 2 kept the analysed terms and rebuilt the index from them
//! (and built the lookup from the facts): a store finding one reads the facts instead,
//! and keeps a snapshot of this format.
//!
//! Layout (little-endian): `AMRF`, the format version (`u32`), a fingerprint of the text
//! analysis that made the terms (`u64`), one of the hashing of reconciliation keys
//! (`u64`), the user id, the number of facts, the facts (after their length, `u64`), the
//! index (after its length, `u64`), the keys, and the xxh3 of everything before it
//! (`u64`). Reading checks the checksum, the version and the fingerprints first, then
//! every length, index and list against what it read, so damaged or foreign bytes (or
//! terms analysed by another build's rules) are a [`MemoryError::Corrupt`] or
//! [`MemoryError::UnsupportedVersion`], never a panic or an index that ranks
//! differently: the store then reads the facts themselves. Keys hashed by other rules
//! are not used (the lookup is then built from the facts).

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use xxhash_rust::xxh3::xxh3_64;

use super::lookup::{keys_fingerprint, Lookup};
use super::{FactSource, MemoryFact, PendingContradiction, Polarity, RankedFacts};
use crate::error::{MemoryError, Result};
use crate::vector::analyse::Analysed;
use crate::vector::sparse::SparseIndex;

const MAGIC: &[u8; 4] = b"AMRF";

/// The snapshot format this build writes and reads.
pub const FACT_SNAPSHOT_VERSION: u32 = 4;

/// What went wrong reading a fact snapshot (the source of a [`MemoryError::Corrupt`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The bytes end before what they announce.
    #[error("ends early")]
    Truncated,
    /// The bytes are not what was written (the checksum differs).
    #[error("checksum mismatch")]
    Checksum,
    /// Not a fact snapshot at all.
    #[error("not a fact snapshot")]
    Magic,
    /// The terms were analysed by other rules than this build's (another version of
    /// the text analysis): they would not be the terms of a fresh index.
    #[error("made by another text analysis")]
    Analysis,
    /// A value that no snapshot written by this format holds.
    #[error("{0}")]
    Invalid(&'static str),
}

const WHAT: &str = "fact snapshot";

fn corrupt(e: SnapshotError) -> MemoryError {
    MemoryError::corrupt(WHAT, e)
}

/// A fingerprint of the text analysis: the terms it makes of texts that go through every
/// step (segmentation, folding, stop words, stemming, CJK bigrams, emoji, a language's
/// own stems). A build whose analysis differs on them does not read another's snapshots:
/// snapshots written before the analysis told languages are read from their facts once
/// and written again (their French or German facts would otherwise keep terms a query
/// no longer makes).
fn analysis_fingerprint() -> u64 {
    static FINGERPRINT: OnceLock<u64> = OnceLock::new();
    *FINGERPRINT.get_or_init(|| {
        const PROBES: &[&str] = &[
            "The user LIKES museums, since 2024! Where do I live? She lives in Lyon, living there.",
            "Crème brûlée, Straße, ＡＢＣ, naïve café; user's 3.14 isn't hiking, running, runs.",
            "我住在北京 東京タワー 서울 loves 🍕! 👍🏽 going to the sea-side, e-mail, don't won't",
            "generously happiness relational conditional ability organization hopeful",
            // A text told French and one told German: their stems in the language.
            "Mon frère travaille comme infirmier dans un hôpital de Marseille depuis l'été.",
            "Ich bin allergisch gegen Nüsse und wir haben zwei Häuser in München gekauft.",
        ];
        let mut bytes = Vec::new();
        for probe in PROBES {
            crate::text::for_each_term(probe, |t| {
                bytes.extend_from_slice(t.as_bytes());
                bytes.push(0);
            });
            bytes.push(1);
        }
        xxh3_64(&bytes)
    })
}

impl RankedFacts {
    /// These facts as a snapshot: the current facts in their order, their word index and
    /// their reconciliation keys, read back by [`from_snapshot`](Self::from_snapshot) into
    /// facts that rank and reconcile as these do. `user_id` is whose facts they are
    /// (every fact's own `user_id` is kept too).
    ///
    /// Builds the index of the current facts again (analysing their texts on the rayon
    /// pool when there are many): the one kept for ranking may have been changed in
    /// place, and a snapshot holds the index a fresh read would build.
    ///
    /// ```
    /// use agentmemory_core::facts::{FactCandidate, FactPolicy, FactQuery, MemoryFact};
    /// use agentmemory_core::store_support::RankedFacts;
    ///
    /// let now = chrono::Utc::now();
    /// let facts = vec![
    ///     MemoryFact::from_candidate("u", FactCandidate::new("likes jazz", 0.8), now),
    ///     MemoryFact::from_candidate("u", FactCandidate::new("lives in Porto", 0.9), now),
    /// ];
    /// let ranked = RankedFacts::new(facts);
    /// let again = RankedFacts::from_snapshot(&ranked.snapshot("u"), "u").unwrap();
    /// let query = FactQuery::new("jazz tonight?", 2);
    /// let (a, b) = (ranked.rank(&query, FactPolicy::default(), now), again.rank(&query, FactPolicy::default(), now));
    /// assert_eq!(a[0].fact, b[0].fact);
    /// assert_eq!(a[0].score, b[0].score);
    ///
    /// let mut damaged = ranked.snapshot("u");
    /// damaged[20] ^= 1;
    /// assert!(RankedFacts::from_snapshot(&damaged, "u").is_err());
    /// assert!(RankedFacts::from_snapshot(&ranked.snapshot("u"), "v").is_err());
    /// ```
    pub fn snapshot(&self, user_id: &str) -> Vec<u8> {
        let facts: Vec<&MemoryFact> = self.facts().collect();
        let texts: Vec<&str> = facts.iter().map(|f| f.text.as_str()).collect();
        encode(user_id, &facts, &Self::index_of(Analysed::new(&texts)))
    }

    /// [`new`](Self::new) and the [`snapshot`](Self::snapshot) of the result, the index
    /// built once for both: what a store that read every fact keeps for next time.
    pub fn new_with_snapshot(facts: Vec<MemoryFact>, user_id: &str) -> (Self, Vec<u8>) {
        let ranked = Self::new(facts);
        let bytes = encode(user_id, &ranked.facts().collect::<Vec<_>>(), &ranked.index);
        (ranked, bytes)
    }

    /// Facts of `user_id` read back from a [`snapshot`](Self::snapshot): they rank and
    /// reconcile as the facts the snapshot was taken of did.
    ///
    /// # Errors
    ///
    /// [`MemoryError::UnsupportedVersion`] for a format this build does not read (an
    /// earlier one included: the store then reads the facts and keeps a new snapshot);
    /// [`MemoryError::Corrupt`] (with a [`SnapshotError`]) for damaged bytes, bytes that
    /// are no snapshot, another user's snapshot, or terms made by another build's text
    /// analysis.
    pub fn from_snapshot(bytes: &[u8], user_id: &str) -> Result<Self> {
        Self::read_snapshot(bytes, user_id, false)
    }

    /// [`from_snapshot`](Self::from_snapshot) for a write: the facts are also filed for
    /// reconciliation (what the first [`plan`](Self::plan) does otherwise), from the keys
    /// the snapshot keeps of them, so an upsert on a store just opened does not hash
    /// every fact's text.
    ///
    /// # Errors
    ///
    /// As [`from_snapshot`](Self::from_snapshot).
    pub fn from_snapshot_for_writes(bytes: &[u8], user_id: &str) -> Result<Self> {
        Self::read_snapshot(bytes, user_id, true)
    }

    fn read_snapshot(bytes: &[u8], user_id: &str, filed: bool) -> Result<Self> {
        let Some((body, sum)) = bytes.split_last_chunk::<8>() else {
            return Err(corrupt(SnapshotError::Truncated));
        };
        if !body.starts_with(MAGIC) {
            return Err(corrupt(SnapshotError::Magic));
        }
        if xxh3_64(body) != u64::from_le_bytes(*sum) {
            return Err(corrupt(SnapshotError::Checksum));
        }
        let mut r = In(&body[MAGIC.len()..]);
        let version = r.u32()?;
        if version != FACT_SNAPSHOT_VERSION {
            return Err(MemoryError::UnsupportedVersion {
                what: WHAT,
                found: version,
                supported: FACT_SNAPSHOT_VERSION,
            });
        }
        if r.u64()? != analysis_fingerprint() {
            return Err(corrupt(SnapshotError::Analysis));
        }
        // Keys hashed otherwise are not used: the lookup is then built from the facts.
        let keys_usable = r.u64()? == keys_fingerprint();
        if r.str()? != user_id {
            return Err(corrupt(SnapshotError::Invalid("another user's facts")));
        }
        let n = r.len(1)?;
        let section = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
        let facts_bytes = r.take(section)?;
        let section = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
        let index_bytes = r.take(section)?;
        let counts = r.take(n)?;
        let n_keys = r.len(8)?;
        let keys = r.take(n_keys * 8)?;
        if !r.0.is_empty() {
            return Err(corrupt(SnapshotError::Invalid("bytes after the keys")));
        }
        // Facts on one thread, the index on another (when the pool has two).
        let (facts, index) = rayon::join(
            || {
                let facts = read_facts(facts_bytes, n, user_id)?;
                let lookup = match (filed, keys_usable) {
                    (false, _) => None,
                    (true, true) => Some(
                        Lookup::from_keys(&facts, counts, keys)
                            .map_err(|e| corrupt(SnapshotError::Invalid(e)))?,
                    ),
                    (true, false) => Some(Lookup::new(&facts, |_| true)),
                };
                Ok::<_, MemoryError>((facts, lookup))
            },
            || SparseIndex::read_flat(index_bytes).map_err(|e| corrupt(SnapshotError::Invalid(e))),
        );
        let ((facts, lookup), index) = (facts?, index?);
        if index.slots() != facts.len() {
            return Err(corrupt(SnapshotError::Invalid(
                "the indexed texts are not the facts'",
            )));
        }
        let mut ranked = Self::with_index(facts, index);
        ranked.lookup = lookup;
        Ok(ranked)
    }
}

/// The snapshot bytes of `facts` (current, in order) of `user_id`, whose word index
/// (built in one go, slot `i` the text of `facts[i]`) is `index`.
fn encode(user_id: &str, facts: &[&MemoryFact], index: &SparseIndex) -> Vec<u8> {
    let mut out = Out(Vec::with_capacity(64 + facts.len() * 160));
    out.0.extend_from_slice(MAGIC);
    out.u32(FACT_SNAPSHOT_VERSION);
    out.u64(analysis_fingerprint());
    out.u64(keys_fingerprint());
    out.str(user_id);
    out.len(facts.len());
    // Each section's length first, so a reader decodes the facts and the index side
    // by side.
    let at = out.0.len();
    out.u64(0);
    for fact in facts.iter().copied() {
        out.fact(fact, user_id);
    }
    let section = (out.0.len() - at - 8) as u64;
    out.0[at..at + 8].copy_from_slice(&section.to_le_bytes());
    let at = out.0.len();
    out.u64(0);
    index.write_flat(&mut out.0);
    let section = (out.0.len() - at - 8) as u64;
    out.0[at..at + 8].copy_from_slice(&section.to_le_bytes());
    Lookup::write_keys(facts.iter().copied(), &mut out.0);
    let sum = xxh3_64(&out.0);
    out.u64(sum);
    out.0
}

/// `n` current facts of `user_id` from exactly `bytes`.
fn read_facts(bytes: &[u8], n: usize, user_id: &str) -> Result<Vec<MemoryFact>> {
    let mut r = In(bytes);
    if n > bytes.len() {
        return Err(corrupt(SnapshotError::Truncated));
    }
    let mut facts = Vec::with_capacity(n);
    for _ in 0..n {
        let fact = r.fact(user_id)?;
        if !fact.is_current() {
            return Err(corrupt(SnapshotError::Invalid("a superseded fact")));
        }
        facts.push(fact);
    }
    if !r.0.is_empty() {
        return Err(corrupt(SnapshotError::Invalid("bytes after the facts")));
    }
    Ok(facts)
}

// Which optional parts a fact has, one bit each.
const SUBJECT: u16 = 1;
const ATTRIBUTE: u16 = 1 << 1;
const VALUE: u16 = 1 << 2;
const NEGATIVE: u16 = 1 << 3;
const SUPERSEDED_BY: u16 = 1 << 4;
const EMBEDDING: u16 = 1 << 5;
const OBSERVED_AT: u16 = 1 << 6;
const OTHER_USER: u16 = 1 << 7;
const SESSION: u16 = 1 << 8;
const MESSAGE: u16 = 1 << 9;
const LISTS: u16 = 1 << 10;
/// Validity (`valid_from`, `valid_to`), the messages that stated it and its transition
/// (format 4).
const VALIDITY: u16 = 1 << 11;
const KNOWN: u16 = (1 << 12) - 1;

/// The bytes being written.
struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A length; facts, terms and texts never reach 4 GiB (a `Vec` of them would not
    /// fit a snapshot either), so it is kept as `u32`.
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    fn at(&mut self, t: DateTime<Utc>) {
        self.0.extend_from_slice(&t.timestamp().to_le_bytes());
        self.u32(t.timestamp_subsec_nanos());
    }

    fn strs(&mut self, list: &[String]) {
        self.len(list.len());
        for s in list {
            self.str(s);
        }
    }

    fn fact(&mut self, fact: &MemoryFact, user_id: &str) {
        // Every field named: a field added to `MemoryFact` does not compile here until
        // the snapshot keeps it (and FACT_SNAPSHOT_VERSION moves).
        let MemoryFact {
            id,
            user_id: owner,
            text,
            subject,
            attribute,
            value,
            polarity,
            confidence,
            created_at,
            last_reinforced_at,
            reinforcement_count,
            source:
                FactSource {
                    session_id,
                    message_id,
                },
            topics,
            entities,
            superseded_by,
            embedding,
            pending_contradictions,
            observed_at,
            valid_from,
            valid_to,
            stated_in,
            restated_at,
            transition,
        } = fact;
        let validity = valid_from.is_some()
            || valid_to.is_some()
            || !stated_in.is_empty()
            || !restated_at.is_empty()
            || transition.is_some();
        let lists =
            !topics.is_empty() || !entities.is_empty() || !pending_contradictions.is_empty();
        let flags = [
            (subject.is_some(), SUBJECT),
            (attribute.is_some(), ATTRIBUTE),
            (value.is_some(), VALUE),
            (*polarity == Polarity::Negative, NEGATIVE),
            (superseded_by.is_some(), SUPERSEDED_BY),
            (embedding.is_some(), EMBEDDING),
            (observed_at.is_some(), OBSERVED_AT),
            (owner != user_id, OTHER_USER),
            (session_id.is_some(), SESSION),
            (message_id.is_some(), MESSAGE),
            (lists, LISTS),
            (validity, VALIDITY),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0u16, |f, (_, bit)| f | bit);
        self.0.extend_from_slice(&flags.to_le_bytes());
        self.str(id);
        self.str(text);
        self.u32(confidence.to_bits());
        self.at(*created_at);
        self.at(*last_reinforced_at);
        self.u32(*reinforcement_count);
        let strings = [
            (owner != user_id).then_some(owner.as_str()),
            subject.as_deref(),
            attribute.as_deref(),
            value.as_deref(),
            superseded_by.as_deref(),
            session_id.as_deref(),
            message_id.as_deref(),
        ];
        for s in strings.into_iter().flatten() {
            self.str(s);
        }
        if let Some(at) = observed_at {
            self.at(*at);
        }
        if let Some(vector) = embedding {
            self.len(vector.len());
            for x in vector {
                self.u32(x.to_bits());
            }
        }
        if lists {
            self.strs(topics);
            self.strs(entities);
            self.len(pending_contradictions.len());
            for p in pending_contradictions {
                let PendingContradiction {
                    text,
                    value,
                    confidence,
                    at,
                } = p;
                self.str(text);
                self.0.push(u8::from(value.is_some()));
                if let Some(v) = value {
                    self.str(v);
                }
                self.u32(confidence.to_bits());
                self.at(*at);
            }
        }
        if validity {
            let bits = u8::from(valid_from.is_some())
                | (u8::from(valid_to.is_some()) << 1)
                | (u8::from(transition.is_some()) << 2);
            self.0.push(bits);
            for at in [valid_from, valid_to].into_iter().flatten() {
                self.at(*at);
            }
            self.strs(stated_in);
            self.len(restated_at.len());
            for at in restated_at {
                self.at(*at);
            }
            if let Some(t) = transition {
                // A small tagged enum: its JSON is short and keeps every later variant.
                self.str(&serde_json::to_string(t).unwrap_or_default());
            }
        }
    }
}

/// The bytes left to read.
struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(corrupt(SnapshotError::Truncated));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let Some((head, rest)) = self.0.split_first_chunk::<N>() else {
            return Err(corrupt(SnapshotError::Truncated));
        };
        self.0 = rest;
        Ok(*head)
    }

    fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// A count of items taking at least `min_bytes` each: never more than the bytes
    /// left could hold, so a damaged count cannot reserve more memory than the snapshot.
    fn len(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.0.len() {
            return Err(corrupt(SnapshotError::Truncated));
        }
        Ok(n)
    }

    fn str(&mut self) -> Result<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?)
            .map_err(|_| corrupt(SnapshotError::Invalid("a text that is not UTF-8")))
    }

    fn string(&mut self) -> Result<String> {
        self.str().map(str::to_owned)
    }

    fn at(&mut self) -> Result<DateTime<Utc>> {
        let secs = i64::from_le_bytes(self.array()?);
        let nanos = self.u32()?;
        DateTime::from_timestamp(secs, nanos)
            .ok_or(corrupt(SnapshotError::Invalid("a time out of range")))
    }

    fn f32(&mut self) -> Result<f32> {
        self.u32().map(f32::from_bits)
    }

    fn strs(&mut self) -> Result<Vec<String>> {
        let n = self.len(4)?;
        (0..n).map(|_| self.string()).collect()
    }

    fn fact(&mut self, user_id: &str) -> Result<MemoryFact> {
        let flags = self.u16()?;
        if flags & !KNOWN != 0 {
            return Err(corrupt(SnapshotError::Invalid("unknown fact flags")));
        }
        let has = |bit: u16| flags & bit != 0;
        let id = self.string()?;
        let text = self.string()?;
        let confidence = self.f32()?;
        let created_at = self.at()?;
        let last_reinforced_at = self.at()?;
        let reinforcement_count = self.u32()?;
        let mut optional = |bit: u16| -> Result<Option<String>> {
            if has(bit) {
                self.string().map(Some)
            } else {
                Ok(None)
            }
        };
        let owner = optional(OTHER_USER)?.unwrap_or_else(|| user_id.to_owned());
        let subject = optional(SUBJECT)?;
        let attribute = optional(ATTRIBUTE)?;
        let value = optional(VALUE)?;
        let superseded_by = optional(SUPERSEDED_BY)?;
        let session_id = optional(SESSION)?;
        let message_id = optional(MESSAGE)?;
        let observed_at = if has(OBSERVED_AT) {
            Some(self.at()?)
        } else {
            None
        };
        let embedding = if has(EMBEDDING) {
            let n = self.len(4)?;
            Some((0..n).map(|_| self.f32()).collect::<Result<Vec<f32>>>()?)
        } else {
            None
        };
        let (mut topics, mut entities, mut pending_contradictions) =
            (Vec::new(), Vec::new(), Vec::new());
        if has(LISTS) {
            topics = self.strs()?;
            entities = self.strs()?;
            let n = self.len(21)?;
            pending_contradictions.reserve(n);
            for _ in 0..n {
                let text = self.string()?;
                let value = match self.array::<1>()?[0] {
                    0 => None,
                    1 => Some(self.string()?),
                    _ => return Err(corrupt(SnapshotError::Invalid("a bad value flag"))),
                };
                let confidence = self.f32()?;
                let at = self.at()?;
                pending_contradictions.push(PendingContradiction {
                    text,
                    value,
                    confidence,
                    at,
                });
            }
        }
        let (mut valid_from, mut valid_to, mut stated_in, mut restated_at, mut transition) =
            (None, None, Vec::new(), Vec::new(), None);
        if has(VALIDITY) {
            let bits = self.array::<1>()?[0];
            if bits & !0b111 != 0 {
                return Err(corrupt(SnapshotError::Invalid("unknown validity flags")));
            }
            if bits & 1 != 0 {
                valid_from = Some(self.at()?);
            }
            if bits & 2 != 0 {
                valid_to = Some(self.at()?);
            }
            stated_in = self.strs()?;
            let n = self.len(12)?;
            restated_at = (0..n).map(|_| self.at()).collect::<Result<Vec<_>>>()?;
            if bits & 4 != 0 {
                transition = Some(
                    serde_json::from_str(self.str()?)
                        .map_err(|_| corrupt(SnapshotError::Invalid("a bad transition")))?,
                );
            }
        }
        Ok(MemoryFact {
            id,
            user_id: owner,
            text,
            subject,
            attribute,
            value,
            polarity: if has(NEGATIVE) {
                Polarity::Negative
            } else {
                Polarity::Positive
            },
            confidence,
            created_at,
            last_reinforced_at,
            reinforcement_count,
            source: FactSource {
                session_id,
                message_id,
            },
            topics,
            entities,
            superseded_by,
            embedding,
            pending_contradictions,
            observed_at,
            valid_from,
            valid_to,
            stated_in,
            restated_at,
            transition,
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::facts::{FactCandidate, FactChange, FactPolicy, FactQuery, ScoredFact};

    fn rich(now: DateTime<Utc>) -> MemoryFact {
        let candidate = FactCandidate::new("Zoe loves 🍕 and Crème brûlée", 0.7)
            .with_subject("daughter Zoe")
            .with_attribute("likes", "pizza")
            .with_polarity(Polarity::Negative);
        let mut fact = MemoryFact::from_candidate("u", candidate, now);
        fact.topics = vec!["food".into()];
        fact.entities = vec!["Zoe".into(), "pizza".into()];
        fact.embedding = Some(vec![0.6, -0.8, f32::MIN_POSITIVE]);
        fact.observed_at = Some(now - Duration::days(3));
        fact.source = FactSource {
            session_id: Some("s1".into()),
            message_id: Some("m1".into()),
        };
        fact.reinforcement_count = 4;
        fact.last_reinforced_at = now + Duration::nanoseconds(123_456_789);
        fact.contest(
            &FactCandidate::new("Zoe likes pasta", 0.4).with_attribute("likes", "pasta"),
            now,
        );
        fact.valid_from = Some(now - Duration::days(30));
        fact.valid_to = Some(now - Duration::days(1));
        fact.stated_in = vec!["m1".into(), "m7".into()];
        fact.restated_at = vec![now - Duration::days(20), now - Duration::days(2)];
        fact.transition = Some(crate::facts::Transition::Ends {
            object: "the piano".into(),
        });
        fact
    }

    fn facts(n: usize, now: DateTime<Utc>) -> Vec<MemoryFact> {
        let words = [
            "jazz",
            "hiking",
            "tea",
            "Lyon",
            "museums",
            "the",
            "我住在北京",
        ];
        (0..n)
            .map(|i| {
                let text = format!("{} {} note {}", words[i % 7], words[(i / 7) % 7], i % 97);
                let c = FactCandidate::new(text, 0.3 + (i % 7) as f32 / 10.0);
                MemoryFact::from_candidate("u", c, now - Duration::minutes(i as i64 * 37))
            })
            .collect()
    }

    fn key(hits: &[ScoredFact]) -> Vec<(MemoryFact, u32, u32, u32)> {
        hits.iter()
            .map(|h| {
                let bits = |x: f32| x.to_bits();
                (
                    h.fact.clone(),
                    bits(h.score),
                    bits(h.relevance),
                    bits(h.effective_confidence),
                )
            })
            .collect()
    }

    fn assert_same(a: &RankedFacts, b: &RankedFacts, now: DateTime<Utc>) {
        assert_eq!(a.facts().collect::<Vec<_>>(), b.facts().collect::<Vec<_>>());
        for q in [
            "jazz tea",
            "Lyon museums",
            "北京",
            "note 12",
            "nothing here",
            "pizza",
        ] {
            for k in [1, 5, 40] {
                let query = FactQuery::new(q, k);
                let policy = FactPolicy::default();
                assert_eq!(
                    key(&a.rank(&query, policy, now)),
                    key(&b.rank(&query, policy, now)),
                    "query {q:?} top {k}"
                );
            }
        }
    }

    #[test]
    fn a_snapshot_reads_back_as_the_facts_it_was_taken_of() {
        let now = Utc::now();
        let mut all = facts(300, now);
        all.push(rich(now));
        let mut other = facts(1, now).remove(0);
        other.user_id = "someone else".into();
        all.push(other);
        let ranked = RankedFacts::new(all.clone());
        let again = RankedFacts::from_snapshot(&ranked.snapshot("u"), "u").unwrap();
        assert_eq!(again.facts().cloned().collect::<Vec<_>>(), all);
        assert_same(&ranked, &again, now);
    }

    #[test]
    fn a_snapshot_of_facts_changed_in_place_reads_back_as_a_fresh_index() {
        let now = Utc::now();
        let mut ranked = RankedFacts::new(facts(200, now));
        let victim = ranked.facts().nth(3).unwrap().clone();
        assert!(ranked.apply(&FactChange::Deleted { fact: victim }));
        let mut old = ranked.facts().nth(10).unwrap().clone();
        let new = MemoryFact::from_candidate("u", FactCandidate::new("moved to Porto", 0.9), now);
        old.superseded_by = Some(new.id.clone());
        assert!(ranked.apply(&FactChange::Superseded { old, new }));
        let again = RankedFacts::from_snapshot(&ranked.snapshot("u"), "u").unwrap();
        let fresh = RankedFacts::new(ranked.facts().cloned().collect());
        assert_same(&again, &fresh, now);
        assert_same(&again, &ranked, now);
    }

    #[test]
    fn facts_read_back_for_writes_reconcile_as_a_fresh_read() {
        let now = Utc::now();
        let mut all = facts(300, now);
        all.push(MemoryFact::from_candidate(
            "u",
            FactCandidate::new("lives in Lyon", 0.9).with_attribute("location", "Lyon"),
            now,
        ));
        let bytes = RankedFacts::new(all.clone()).snapshot("u");
        for candidate in [
            FactCandidate::new("jazz hiking note 3", 0.9),
            FactCandidate::new("lives in Porto", 0.9).with_attribute("location", "Porto"),
            FactCandidate::new("collects stamps", 0.9),
        ] {
            let mut fresh = RankedFacts::new(all.clone());
            let mut filed = RankedFacts::from_snapshot_for_writes(&bytes, "u").unwrap();
            assert!(filed.lookup.is_some());
            assert_eq!(
                filed.reconcile(candidate.clone()),
                fresh.reconcile(candidate)
            );
        }
    }

    #[test]
    fn many_facts_analysed_in_several_chunks_read_back() {
        let now = Utc::now();
        let ranked = RankedFacts::new(facts(9_000, now));
        let bytes = ranked.snapshot("u");
        let again = RankedFacts::from_snapshot(&bytes, "u").unwrap();
        assert_same(&ranked, &again, now);
        assert!(
            RankedFacts::from_snapshot(&RankedFacts::default().snapshot("u"), "u")
                .unwrap()
                .is_empty()
        );
    }

    /// The snapshot of two small facts, and the same bytes with `edit` made and the
    /// checksum recomputed: what a writer with other rules would have produced.
    fn resealed(edit: impl FnOnce(&mut Vec<u8>)) -> Result<RankedFacts> {
        let ranked = RankedFacts::new(facts(2, Utc::now()));
        let mut bytes = ranked.snapshot("u");
        bytes.truncate(bytes.len() - 8);
        edit(&mut bytes);
        let sum = xxh3_64(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        RankedFacts::from_snapshot(&bytes, "u")
    }

    fn snapshot_error(r: Result<RankedFacts>) -> SnapshotError {
        match r {
            Err(MemoryError::Corrupt { source, .. }) => source
                .downcast_ref::<SnapshotError>()
                .cloned()
                .expect("a snapshot error"),
            other => panic!(
                "expected a corrupt snapshot, got {:?}",
                other.map(|r| r.len())
            ),
        }
    }

    #[test]
    fn damaged_or_foreign_bytes_are_typed_errors_never_a_panic() {
        let ranked = RankedFacts::new(facts(5, Utc::now()));
        let bytes = ranked.snapshot("u");
        for cut in 0..bytes.len() {
            assert!(
                RankedFacts::from_snapshot(&bytes[..cut], "u").is_err(),
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            assert!(
                RankedFacts::from_snapshot(&flipped, "u").is_err(),
                "flip at {at}"
            );
        }
        assert_eq!(
            snapshot_error(RankedFacts::from_snapshot(b"{\"v\":1}", "u")),
            SnapshotError::Truncated
        );
        assert_eq!(
            snapshot_error(RankedFacts::from_snapshot(&[0; 40], "u")),
            SnapshotError::Magic
        );
        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert_eq!(
            snapshot_error(RankedFacts::from_snapshot(&flipped, "u")),
            SnapshotError::Checksum
        );
    }

    #[test]
    fn reconciliation_keys_hashed_otherwise_are_not_used() {
        let now = Utc::now();
        let all = facts(50, now);
        let ranked = RankedFacts::new(all.clone());
        let mut bytes = ranked.snapshot("u");
        bytes.truncate(bytes.len() - 8);
        // The keys' fingerprint follows the format version and the analysis's.
        bytes[16] ^= 1;
        let sum = xxh3_64(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        let mut filed = RankedFacts::from_snapshot_for_writes(&bytes, "u").unwrap();
        let candidate = FactCandidate::new("jazz hiking note 7", 0.9);
        let mut fresh = RankedFacts::new(all);
        assert_eq!(
            filed.reconcile(candidate.clone()),
            fresh.reconcile(candidate)
        );
        // Keys that are not one count per fact are refused when they are used.
        let mut bytes = ranked.snapshot("u");
        bytes.truncate(bytes.len() - 8);
        let counts_at = bytes.len() - 50 * 8 - 4 - 50;
        bytes[counts_at] = 3;
        let sum = xxh3_64(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        assert!(RankedFacts::from_snapshot(&bytes, "u").is_ok());
        assert!(matches!(
            snapshot_error(RankedFacts::from_snapshot_for_writes(&bytes, "u")),
            SnapshotError::Invalid(_)
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any bit flipped with the checksum made to match (what a writer with other
        /// rules, not a damaged disk, would produce), or the bytes cut short: a typed
        /// error, or facts that are searched and written to without a panic.
        #[test]
        fn resealed_damage_is_an_error_or_holds_together(
            n in 1usize..60,
            flip in proptest::prelude::any::<proptest::sample::Index>(),
            bit in 0u8..8,
            cut in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let now = Utc::now();
            let ranked = RankedFacts::new(facts(n, now));
            let mut bytes = ranked.snapshot("u");
            let cut = cut.index(bytes.len());
            proptest::prop_assert!(RankedFacts::from_snapshot(&bytes[..cut], "u").is_err());
            bytes.truncate(bytes.len() - 8);
            let at = flip.index(bytes.len());
            bytes[at] ^= 1 << bit;
            let sum = xxh3_64(&bytes);
            bytes.extend_from_slice(&sum.to_le_bytes());
            if let Ok(mut read) = RankedFacts::from_snapshot_for_writes(&bytes, "u") {
                let _ = read.rank(&FactQuery::new("jazz tea note 3", 5), FactPolicy::default(), now);
                let candidate = FactCandidate::new("jazz hiking note 3", 0.9);
                let change = read.plan("u", candidate, now).unwrap();
                read.apply(&change);
                let victims: Vec<MemoryFact> = read.facts().take(3).cloned().collect();
                for fact in victims {
                    read.apply(&FactChange::Deleted { fact });
                }
                let _ = read.rank(&FactQuery::new("jazz tea note 3", 5), FactPolicy::default(), now);
            }
        }
    }

    #[test]
    fn another_version_or_text_analysis_is_refused() {
        let next = FACT_SNAPSHOT_VERSION + 1;
        let later = resealed(|b| b[4..8].copy_from_slice(&next.to_le_bytes()));
        assert!(matches!(
            later,
            Err(MemoryError::UnsupportedVersion {
                found,
                supported: FACT_SNAPSHOT_VERSION,
                ..
            }) if found == next
        ));
        let other_rules = resealed(|b| b[8] ^= 1);
        assert_eq!(snapshot_error(other_rules), SnapshotError::Analysis);
        // An earlier format (one that kept the analysed terms, not the index) is
        // refused as such: the store then reads the facts and keeps a new snapshot.
        let earlier = resealed(|b| b[4..8].copy_from_slice(&2u32.to_le_bytes()));
        assert!(matches!(
            earlier,
            Err(MemoryError::UnsupportedVersion { found: 2, .. })
        ));
        // An index of other texts than the facts' (structure checked, not trusted).
        let facts = facts(2, Utc::now());
        let other = RankedFacts::new(facts[..1].to_vec());
        let bytes = encode("u", &facts.iter().collect::<Vec<_>>(), &other.index);
        assert!(matches!(
            snapshot_error(RankedFacts::from_snapshot(&bytes, "u")),
            SnapshotError::Invalid(_)
        ));
        let trailing = resealed(|b| b.push(0));
        assert!(matches!(
            snapshot_error(trailing),
            SnapshotError::Invalid(_)
        ));
    }
}
