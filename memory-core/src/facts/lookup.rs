//! [`Lookup`]: the facts a candidate could be reconciled with, found through hashed keys
//! instead of a scan of every current fact.
//!
//! Reconciliation ([`decide`](super::reconcile::decide) and
//! [`reconcile_by_meaning`](super::semantic::reconcile_by_meaning)) only ever acts on a
//! held fact that
//!
//! - has the candidate's subject, attribute family and [`value_key`] (a repeat, or the
//!   same value with the other polarity),
//! - has the candidate's subject and its attribute, when that attribute holds one value at
//!   a time or is `diet` (a new value, a diet that rules the old one out),
//! - has the candidate's subject and [`normalize`](super::reconcile::normalize)d text (a
//!   repeat without attributes),
//! - has the candidate's subject, attribute and polarity and an embedding (a paraphrase),
//! - or is the most recently stated fact (what a correction corrects).
//!
//! Every rule is a test of one held fact against the candidate (apart from the last,
//! which is one fact), so deciding over the facts found here, in their order, decides
//! exactly as deciding over all of them: the rules skip the facts that are not theirs and
//! none of the ones they act on is missing. Keys are 64-bit hashes, so a collision only
//! adds a fact the rules then skip.
//!
//! Transitions ("moved out of Lyon") match held facts by shared words and by meaning
//! across attributes; a candidate carrying one is reconciled against every fact.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

use chrono::{DateTime, Utc};

use super::reconcile::{family, is_single_valued, value_key, CORRECTION_ATTRIBUTE};
use super::{FactCandidate, MemoryFact, Polarity};

/// One kind of key; part of the hash, so keys of different kinds never meet.
#[derive(Hash)]
enum Key<'a> {
    /// Subject, attribute family, value key.
    Value(Option<&'a str>, &'a str, &'a str),
    /// Subject, attribute (of single-valued attributes and `diet`).
    Attribute(Option<&'a str>, &'a str),
    /// Subject, then the text's words hashed by [`hash_normalized`].
    Text(Option<&'a str>),
    /// Subject, attribute, polarity (of facts with an embedding).
    Meaning(Option<&'a str>, Option<&'a str>, Polarity),
}

#[allow(deprecated)]
type KeyHasher = std::hash::SipHasher;

fn hasher() -> KeyHasher {
    // SipHash with fixed keys: the same hash in every process and run.
    #[allow(deprecated)]
    std::hash::SipHasher::new()
}

impl Key<'_> {
    fn hash(&self) -> u64 {
        let mut h = hasher();
        Hash::hash(self, &mut h);
        h.finish()
    }
}

/// The key of a text's [`normalize`](super::reconcile::normalize)d form, hashed as it is made instead of built: the
/// words (runs of alphanumeric characters) lowercased, one space between them. Texts
/// with the same normalised form get the same key (both Greek sigmas hash as one: a
/// word's last `Σ` lowercases to `ς`, others to `σ`); a text of 100,000 facts is
/// filed without the eight allocations `normalize` makes.
fn text_key(subject: Option<&str>, text: &str) -> u64 {
    let mut h = hasher();
    Hash::hash(&Key::Text(subject), &mut h);
    let mut first = true;
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !first {
            h.write_u8(b' ');
        }
        first = false;
        for c in word.chars().flat_map(char::to_lowercase) {
            let c = if c == 'ς' { 'σ' } else { c };
            h.write_u32(u32::from(c));
        }
    }
    h.finish()
}

/// The slots of one key: most keys (a text's) have one.
#[derive(Debug)]
enum Bucket {
    One(u32),
    Many(Vec<u32>),
}

impl Bucket {
    fn as_slice(&self) -> &[u32] {
        match self {
            Self::One(slot) => std::slice::from_ref(slot),
            Self::Many(slots) => slots,
        }
    }

    /// Adds `slot`, keeping the slots ascending.
    fn insert(&mut self, slot: u32) {
        let slots = match self {
            Self::One(one) if *one == slot => return,
            Self::One(one) => {
                *self = Self::Many(vec![*one]);
                match self {
                    Self::Many(slots) => slots,
                    Self::One(_) => return,
                }
            }
            Self::Many(slots) => slots,
        };
        match slots.last() {
            Some(&last) if last >= slot => {
                if let Err(at) = slots.binary_search(&slot) {
                    slots.insert(at, slot);
                }
            }
            _ => slots.push(slot),
        }
    }

    /// Takes `slot` out; whether the bucket is empty after.
    fn remove(&mut self, slot: u32) -> bool {
        match self {
            Self::One(one) => *one == slot,
            Self::Many(slots) => {
                if let Ok(at) = slots.binary_search(&slot) {
                    slots.remove(at);
                }
                slots.is_empty()
            }
        }
    }
}

/// The buckets' hasher: keys are SipHash values already, so their bits are used as they
/// are (hashing them again was most of filing 100,000 facts after the texts).
#[derive(Debug, Default, Clone, Copy)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Buckets = HashMap<u64, Bucket, std::hash::BuildHasherDefault<Prehashed>>;

/// Whether a candidate's attribute makes reconciliation look at every held fact of
/// that attribute (not only those with its value).
fn by_attribute(attribute: &str) -> bool {
    is_single_valued(attribute) || attribute == "diet"
}

/// The keys a held fact is filed under.
fn keys_of(fact: &MemoryFact) -> Vec<u64> {
    let subject = fact.subject.as_deref();
    let mut keys = Vec::with_capacity(4);
    if let Some(attribute) = fact.attribute.as_deref() {
        if let Some(value) = fact.value.as_deref() {
            keys.push(Key::Value(subject, family(attribute), &value_key(value)).hash());
        }
        if by_attribute(attribute) {
            keys.push(Key::Attribute(subject, attribute).hash());
        }
    }
    keys.push(text_key(subject, &fact.text));
    if fact.embedding.is_some() {
        keys.push(Key::Meaning(subject, fact.attribute.as_deref(), fact.polarity).hash());
    }
    keys
}

/// A fingerprint of how keys are hashed: the keys of facts that make every kind of key.
/// Keys written by a build that hashes otherwise (another toolchain's `Hash` of strings)
/// are not read ([`Lookup::from_keys`]): they would not be found.
pub(super) fn keys_fingerprint() -> u64 {
    static FINGERPRINT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *FINGERPRINT.get_or_init(|| {
        let now = DateTime::<Utc>::UNIX_EPOCH;
        let probes = [
            FactCandidate::new("Lives in Lyon", 0.5).with_attribute("location", "Lyon"),
            FactCandidate::new("ΟΔΟΣ naïve, İstanbul!", 0.5)
                .with_subject("sister")
                .with_attribute("diet", "Vegan"),
            FactCandidate::new("likes museums", 0.5).with_attribute("likes", "the museums"),
        ];
        let mut h = hasher();
        for (i, probe) in probes.into_iter().enumerate() {
            let mut fact = MemoryFact::from_candidate("u", probe, now);
            if i == 1 {
                fact.embedding = Some(vec![1.0]);
            }
            for key in keys_of(&fact) {
                h.write_u64(key);
            }
        }
        h.finish()
    })
}

/// Whether a fact can be what a correction corrects (see `last_stated` in reconcile).
fn stated(fact: &MemoryFact) -> bool {
    fact.value.is_some() && fact.attribute.as_deref().is_some_and(|a| a != "note")
}

/// Where a fact sorts among the stated ones: as `last_stated` orders them.
type StatedAt = (DateTime<Utc>, DateTime<Utc>, u32);

fn stated_at(fact: &MemoryFact, slot: u32) -> StatedAt {
    (fact.last_reinforced_at, fact.created_at, slot)
}

/// The current facts of one user filed by the keys reconciliation compares, by slot.
#[derive(Debug, Default)]
pub(super) struct Lookup {
    /// Key hash → slots holding a fact with that key, ascending.
    buckets: Buckets,
    /// The stated facts, by when they were last stated.
    stated: BTreeSet<StatedAt>,
}

impl Lookup {
    /// Bytes held on the heap, estimated: the buckets' table (with a list for a key
    /// shared by several facts) and the B-tree of statement times.
    pub(super) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let lists: usize = self
            .buckets
            .values()
            .map(|b| match b {
                Bucket::One(_) => 0,
                Bucket::Many(slots) => slots.capacity() * size_of::<u32>(),
            })
            .sum();
        self.buckets.capacity() * (size_of::<(u64, Bucket)>() + 1)
            + lists
            + self.stated.len() * (size_of::<StatedAt>() + crate::heap::BTREE_ENTRY)
    }

    /// Files every fact of `facts` (by slot) for which `live` holds.
    pub(super) fn new(facts: &[MemoryFact], live: impl Fn(usize) -> bool) -> Self {
        let mut lookup = Self {
            buckets: Buckets::with_capacity_and_hasher(facts.len(), Default::default()),
            stated: BTreeSet::new(),
        };
        for (slot, fact) in facts.iter().enumerate().filter(|(s, _)| live(*s)) {
            lookup.insert(slot as u32, fact);
        }
        lookup
    }

    /// Files `fact` in `slot`. Slots come in ascending order except on
    /// [`replace`](Self::replace), which keeps each bucket sorted.
    pub(super) fn insert(&mut self, slot: u32, fact: &MemoryFact) {
        for key in keys_of(fact) {
            self.file(slot, key);
        }
        if stated(fact) {
            self.stated.insert(stated_at(fact, slot));
        }
    }

    fn file(&mut self, slot: u32, key: u64) {
        match self.buckets.entry(key) {
            Entry::Occupied(mut e) => e.get_mut().insert(slot),
            Entry::Vacant(e) => {
                e.insert(Bucket::One(slot));
            }
        }
    }

    /// Appends the keys of each of `facts` (in slot order) to `out`, as
    /// [`from_keys`](Self::from_keys) reads them back: the number of keys of each fact
    /// (one byte each), their total (`u32`), and the keys (`u64` each).
    pub(super) fn write_keys<'a>(
        facts: impl ExactSizeIterator<Item = &'a MemoryFact>,
        out: &mut Vec<u8>,
    ) {
        let mut keys: Vec<u64> = Vec::with_capacity(facts.len());
        for fact in facts {
            let of = keys_of(fact);
            out.push(of.len() as u8);
            keys.extend(of);
        }
        out.extend_from_slice(&u32::try_from(keys.len()).unwrap_or(u32::MAX).to_le_bytes());
        for key in keys {
            out.extend_from_slice(&key.to_le_bytes());
        }
    }

    /// The lookup of `facts` (all live, by slot) from the keys [`write_keys`](Self::write_keys)
    /// wrote of them (`counts`, then the keys' bytes), without hashing their texts again.
    /// The keys are only as good as the hashing that made them: a reader checks
    /// [`keys_fingerprint`] first.
    ///
    /// # Errors
    ///
    /// Counts that are not one per fact, or that do not add up to the keys.
    pub(super) fn from_keys(
        facts: &[MemoryFact],
        counts: &[u8],
        keys: &[u8],
    ) -> Result<Self, &'static str> {
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        if counts.len() != facts.len() || total.checked_mul(8) != Some(keys.len()) {
            return Err("reconciliation keys that are not the facts'");
        }
        let mut lookup = Self {
            buckets: Buckets::with_capacity_and_hasher(facts.len(), Default::default()),
            stated: BTreeSet::new(),
        };
        let mut keys = keys
            .as_chunks::<8>()
            .0
            .iter()
            .map(|k| u64::from_le_bytes(*k));
        for (slot, (fact, &count)) in facts.iter().zip(counts).enumerate() {
            for key in keys.by_ref().take(count as usize) {
                lookup.file(slot as u32, key);
            }
            if stated(fact) {
                lookup.stated.insert(stated_at(fact, slot as u32));
            }
        }
        Ok(lookup)
    }

    /// Takes `fact`, filed in `slot`, out.
    pub(super) fn remove(&mut self, slot: u32, fact: &MemoryFact) {
        for key in keys_of(fact) {
            if let Some(bucket) = self.buckets.get_mut(&key) {
                if bucket.remove(slot) {
                    self.buckets.remove(&key);
                }
            }
        }
        if stated(fact) {
            self.stated.remove(&stated_at(fact, slot));
        }
    }

    /// Files `new` in `slot` instead of `old`.
    pub(super) fn replace(&mut self, slot: u32, old: &MemoryFact, new: &MemoryFact) {
        self.remove(slot, old);
        self.insert(slot, new);
    }

    /// The slot of the most recently stated fact: what a correction corrects.
    pub(super) fn last_stated(&self) -> Option<u32> {
        self.stated.last().map(|&(_, _, slot)| slot)
    }

    /// The slots, ascending, of every filed fact that reconciling `candidate` (as
    /// [`resolve`](super::reconcile::resolve) left it) could act on, except by meaning
    /// ([`paraphrase_slots`](Self::paraphrase_slots)), plus the last stated fact when the
    /// candidate was a correction (`correction`).
    pub(super) fn decision_slots(&self, candidate: &FactCandidate, correction: bool) -> Vec<u32> {
        let subject = candidate.subject.as_deref();
        let mut keys = Vec::with_capacity(3);
        if let Some(attribute) = candidate.attribute.as_deref() {
            if let Some(value) = candidate.value.as_deref() {
                keys.push(Key::Value(subject, family(attribute), &value_key(value)).hash());
            }
            if by_attribute(attribute) {
                keys.push(Key::Attribute(subject, attribute).hash());
            }
        }
        keys.push(text_key(subject, &candidate.text));
        let mut slots: Vec<u32> = keys
            .iter()
            .filter_map(|k| self.buckets.get(k))
            .flat_map(Bucket::as_slice)
            .copied()
            .collect();
        if correction || candidate.attribute.as_deref() == Some(CORRECTION_ATTRIBUTE) {
            slots.extend(self.last_stated());
        }
        slots.sort_unstable();
        slots.dedup();
        slots
    }

    /// The slots, ascending, of the facts `candidate` could paraphrase: same subject,
    /// attribute and polarity, with an embedding. Empty when the candidate has none.
    pub(super) fn paraphrase_slots(&self, candidate: &FactCandidate) -> &[u32] {
        if candidate.embedding.is_none() {
            return &[];
        }
        let key = Key::Meaning(
            candidate.subject.as_deref(),
            candidate.attribute.as_deref(),
            candidate.polarity,
        );
        self.buckets.get(&key.hash()).map_or(&[], Bucket::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use proptest::prelude::*;

    use super::super::plan::change_for;
    use super::super::{reconcile_by_meaning, FactChange, RankedFacts};
    use super::*;
    use crate::facts::Transition;

    const SUBJECTS: &[Option<&str>] = &[None, None, Some("sister")];
    const ATTRIBUTES: &[Option<&str>] = &[
        None,
        Some("likes"),
        Some("dislikes"),
        Some("location"),
        Some("name"),
        Some("diet"),
        Some("favourite food"),
        Some("note"),
        Some(CORRECTION_ATTRIBUTE),
    ];
    const VALUES: &[&str] = &[
        "museums",
        "the museum",
        "going hiking",
        "Hiking",
        "vegan",
        "fish",
        "Lyon",
        "ramen",
    ];
    const EMBEDDINGS: &[Option<[f32; 2]>] =
        &[None, Some([1.0, 0.0]), Some([0.95, 0.31]), Some([0.0, 1.0])];

    /// A statement: subject, attribute, value, negative, confidence (percent), embedding,
    /// whether it carries a transition.
    type Said = (usize, usize, usize, bool, u8, usize, bool);

    fn said() -> impl Strategy<Value = Said> {
        (
            0..SUBJECTS.len(),
            0..ATTRIBUTES.len(),
            0..VALUES.len(),
            any::<bool>(),
            30u8..=100,
            0..EMBEDDINGS.len(),
            prop::bool::weighted(0.1),
        )
    }

    fn candidate(
        &(subject, attribute, value, negative, confidence, embedding, ends): &Said,
    ) -> FactCandidate {
        let value = VALUES[value];
        let mut c = match ATTRIBUTES[attribute] {
            Some(a) => FactCandidate::new(format!("{a} {value}"), f32::from(confidence) / 100.0)
                .with_attribute(a, value),
            // Facts without an attribute repeat each other by text alone.
            None => FactCandidate::new(format!("says {value}!"), f32::from(confidence) / 100.0),
        };
        if let Some(s) = SUBJECTS[subject] {
            c = c.with_subject(s);
        }
        if negative {
            c = c.with_polarity(Polarity::Negative);
        }
        c.embedding = EMBEDDINGS[embedding].map(|e| e.to_vec());
        if ends {
            c = c.with_transition(Transition::Ends {
                object: value.to_owned(),
            });
        }
        c
    }

    #[derive(Debug, Clone)]
    enum Op {
        Say(Said),
        Delete(usize),
        Supersede(usize, Said),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => said().prop_map(Op::Say),
            1 => any::<usize>().prop_map(Op::Delete),
            1 => (any::<usize>(), said()).prop_map(|(pick, s)| Op::Supersede(pick, s)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Reconciling through the lookup decides exactly as the linear reconciliation
        /// over every current fact (`reconcile_by_meaning`, the reference), over
        /// subjects, attribute families, value variants, polarities, single-valued
        /// attributes, diets, corrections, paraphrases by embedding and transitions,
        /// while facts are added, reinforced, contested, superseded and deleted
        /// (tombstones and compactions included).
        #[test]
        fn the_lookup_decides_as_the_linear_scan(
            start in prop::collection::vec(said(), 0..24),
            ops in prop::collection::vec(op(), 1..48),
        ) {
            let now = Utc::now();
            let mut store: Vec<MemoryFact> = start
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut c = candidate(s);
                    c.transition = None;
                    let mut f = MemoryFact::from_candidate("u", c, now - Duration::minutes(100 - i as i64));
                    f.reinforcement_count = (i % 3) as u32;
                    f
                })
                .collect();
            let mut ranked = RankedFacts::new(store.clone());
            for (step, op) in ops.into_iter().enumerate() {
                let at = now + Duration::seconds(step as i64);
                let live: Vec<MemoryFact> = store.iter().filter(|f| f.is_current()).cloned().collect();
                let change = match op {
                    Op::Say(s) => {
                        let c = candidate(&s);
                        let want = reconcile_by_meaning(&live, c.clone());
                        let got = ranked.reconcile(c);
                        prop_assert_eq!(&got, &want);
                        let (decision, c) = got;
                        change_for("u", decision, c, at, |id| ranked.current(id)).unwrap()
                    }
                    _ if live.is_empty() => continue,
                    Op::Delete(pick) => FactChange::Deleted { fact: live[pick % live.len()].clone() },
                    Op::Supersede(pick, s) => {
                        let mut old = live[pick % live.len()].clone();
                        let mut c = candidate(&s);
                        c.transition = None;
                        let new = MemoryFact::from_candidate("u", c, at);
                        old.superseded_by = Some(new.id.clone());
                        FactChange::Superseded { old, new }
                    }
                };
                prop_assert!(ranked.apply(&change));
                match &change {
                    FactChange::Added { fact } => store.push(fact.clone()),
                    FactChange::Reinforced { fact }
                    | FactChange::Contested { fact, .. }
                    | FactChange::Closed { fact } => {
                        let i = store.iter().position(|f| f.id == fact.id).unwrap();
                        store[i] = fact.clone();
                    }
                    FactChange::Superseded { old, new } => {
                        let i = store.iter().position(|f| f.id == old.id).unwrap();
                        store[i] = old.clone();
                        store.push(new.clone());
                    }
                    FactChange::Deleted { fact } => store.retain(|f| f.id != fact.id),
                    FactChange::Ignored { .. } => {}
                }
            }
        }
    }

    proptest! {
        /// Texts that normalise alike have one text key, whatever their case,
        /// punctuation and spacing (Greek final sigma and dotted capitals included).
        #[test]
        fn texts_that_normalise_alike_share_a_key(
            words in prop::collection::vec(
                prop::sample::select(vec!["jazz", "ΟΔΟΣ", "οδος", "İstanbul", "Straße", "naïve", "x1", "ǅemal"]),
                0..6,
            ),
            flips in prop::collection::vec(any::<bool>(), 6),
            gaps in prop::collection::vec(prop::sample::select(vec![" ", "  ", ", ", "!", "-", "'"]), 7),
        ) {
            let a: String = words.iter().enumerate().map(|(i, w)| format!("{}{w}", gaps[i])).collect();
            let b: String = words
                .iter()
                .zip(&flips)
                .map(|(w, &up)| if up { w.to_uppercase() } else { w.to_lowercase() })
                .collect::<Vec<_>>()
                .join(" ");
            if super::super::reconcile::normalize(&a) == super::super::reconcile::normalize(&b) {
                prop_assert_eq!(text_key(None, &a), text_key(None, &b));
            }
            prop_assert_ne!(text_key(None, &a), text_key(Some("sister"), &a));
        }
    }

    #[test]
    fn a_repeat_among_many_facts_is_found_through_its_key() {
        let now = Utc::now();
        let mut facts: Vec<MemoryFact> = (0..2_000)
            .map(|i| {
                let c = FactCandidate::new(format!("likes topic {i}"), 0.8)
                    .with_attribute("likes", format!("topic {i}"));
                MemoryFact::from_candidate("u", c, now)
            })
            .collect();
        facts.push(MemoryFact::from_candidate(
            "u",
            FactCandidate::new("lives in Lyon", 0.8).with_attribute("location", "Lyon"),
            now,
        ));
        let lookup = Lookup::new(&facts, |_| true);
        let again =
            FactCandidate::new("likes the topics 7", 0.8).with_attribute("likes", "the topics 7");
        assert_eq!(lookup.decision_slots(&again, false), vec![7]);
        let moved = FactCandidate::new("lives in Paris", 0.8).with_attribute("location", "Paris");
        assert_eq!(lookup.decision_slots(&moved, false), vec![2_000]);
        let fix = FactCandidate::new("Lille", 0.8).with_attribute(CORRECTION_ATTRIBUTE, "Lille");
        assert_eq!(lookup.last_stated(), Some(2_000));
        assert!(lookup.decision_slots(&fix, true).contains(&2_000));
    }
}
