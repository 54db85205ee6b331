//! [`RankedFacts`]: a user's current facts with their word index built once, so a
//! backend that keeps them between searches ranks each query without re-indexing. It is
//! the one fact engine of every store: the in-memory store keeps one per user for good,
//! the persistent stores cache one per user until another writer changes the user's facts.

use chrono::{DateTime, Utc};

use super::lookup::Lookup;
use super::plan::{backdated, change_for, ended_later};
use super::reconcile::{resolve, Keys, CORRECTION_ATTRIBUTE};
use super::semantic::{decide_then_escalate, paraphrase_among, reconcile_by_meaning};
use super::slot_ids::SlotIds;
use super::strength::{Decay, Needed, Strength};
use super::transition::{about_ended, closed_with, ended_thing};
use super::{
    fact_relevance_among, rank_score, FactCandidate, FactChange, FactPolicy, FactQuery, MemoryFact,
    Reconciliation, ScoredFact, RELEVANCE_FLOOR,
};
use crate::error::Result;
use crate::vector::analyse::Analysed;
use crate::vector::sparse::SparseIndex;
use crate::vector::topk::TopK;

/// A user's current facts, indexed for [`rank`](Self::rank), reconciled and planned by
/// [`plan`](Self::plan), updated in place by [`apply`](Self::apply).
///
/// Ranks exactly as [`rank_facts`](crate::store_support::rank_facts) does (which builds one and ranks
/// once); a store that caches it per user (SQLite does, until the user's facts change)
/// pays the indexing once instead of per query.
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
/// let mut ranked = RankedFacts::new(facts);
/// let hits = ranked.rank(&FactQuery::new("any jazz tonight?", 1), FactPolicy::default(), now);
/// assert_eq!(hits[0].fact.text, "likes jazz");
///
/// let lisbon = FactCandidate::new("lives in Lisbon", 0.9).with_attribute("location", "Lisbon");
/// let change = ranked.plan("u", lisbon, now).unwrap();
/// assert_eq!(change.kind(), "added"); // "lives in Porto" had no attribute
/// assert!(ranked.apply(&change));
/// assert_eq!(ranked.len(), 3);
/// ```
#[derive(Debug, Default)]
pub struct RankedFacts {
    /// In the order they were read or added; a superseded fact stays in its slot (as a
    /// tombstone, out of the index) until the next compaction, so the current ones keep
    /// the order a fresh read of the store gives them.
    facts: Vec<MemoryFact>,
    strength: Vec<Strength>,
    /// Whether each slot is a tombstone; empty while there is none.
    dead: Vec<bool>,
    tombstones: usize,
    /// The slot of each current fact, by id.
    slots: SlotIds,
    /// The current facts filed by what reconciliation compares, built on the first
    /// [`reconcile`](Self::reconcile) (a store that only searches never pays for it).
    pub(super) lookup: Option<Lookup>,
    pub(super) index: SparseIndex,
    /// An upper bound on the confidence of every current fact (raised on insert and
    /// reinforcement, recomputed on compaction), so a search can tell when no fact that
    /// shares no term with the query could enter the top k.
    max_confidence: f32,
    /// The latest [`MemoryFact::valid_from`] of any fact added (never lowered): a
    /// candidate at or after it is in order.
    latest: Option<DateTime<Utc>>,
}

/// When `fact` was last stated.
fn latest_statement(fact: &MemoryFact) -> DateTime<Utc> {
    fact.restated_at
        .last()
        .copied()
        .unwrap_or_else(|| fact.observed_at())
}

impl RankedFacts {
    /// Bytes these facts and their indexes hold on the heap, estimated (capacities;
    /// allocator overhead not counted), for caches bounded by size. Walks every fact and
    /// term: O(facts + terms).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.facts.capacity() * size_of::<MemoryFact>()
            + self.facts.iter().map(MemoryFact::heap_bytes).sum::<usize>()
            + self.strength.capacity() * size_of::<Strength>()
            + self.dead.capacity()
            + self.slots.heap_bytes()
            + self.lookup.as_ref().map_or(0, Lookup::heap_bytes)
            + self.index.heap_bytes()
    }

    /// Indexes the current ones of `facts` (superseded versions are dropped).
    pub fn new(facts: Vec<MemoryFact>) -> Self {
        let facts: Vec<MemoryFact> = facts.into_iter().filter(MemoryFact::is_current).collect();
        // Analysed in one batch (in parallel when large), then inserted in order: the
        // same index as inserting the texts one by one.
        let texts: Vec<&str> = facts.iter().map(|f| f.text.as_str()).collect();
        let analysed = Analysed::new(&texts);
        Self::with_analysed(facts, analysed)
    }

    /// Indexes `facts`, all current, whose texts `analysed` holds in the same order
    /// (what [`new`](Self::new) does after analysing them).
    pub(super) fn with_analysed(facts: Vec<MemoryFact>, analysed: Analysed) -> Self {
        debug_assert_eq!(facts.len(), analysed.len());
        Self::with_index(facts, Self::index_of(analysed))
    }

    /// The word index of a batch of analysed texts, in slots `0..`: the index
    /// [`new`](Self::new) builds over facts with those texts.
    pub(super) fn index_of(mut analysed: Analysed) -> SparseIndex {
        let n = analysed.len();
        let mut index = SparseIndex::default();
        index.reserve(n);
        index.reserve_terms(analysed.vocabulary_bound());
        for slot in 0..n {
            index.insert_analysed(slot as u32, &mut analysed, slot);
        }
        index
    }

    /// `facts`, all current, with `index` (of their texts, by slot) as their word index.
    pub(super) fn with_index(facts: Vec<MemoryFact>, mut index: SparseIndex) -> Self {
        let slots = SlotIds::new(&facts);
        let max_confidence = facts.iter().fold(0.0f32, |m, f| m.max(f.confidence));
        // Postings were given room for the whole batch ahead: keep what they use.
        index.shrink_to_fit();
        let strength = facts.iter().map(Strength::of).collect();
        let latest = facts.iter().map(latest_statement).max();
        Self {
            facts,
            strength,
            dead: Vec::new(),
            tombstones: 0,
            slots,
            lookup: None,
            index,
            max_confidence,
            latest,
        }
    }

    /// How many current facts are indexed.
    pub fn len(&self) -> usize {
        self.facts.len() - self.tombstones
    }

    /// Whether no current fact is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current facts, in the order they were read or added.
    pub fn facts(&self) -> impl Iterator<Item = &MemoryFact> + '_ {
        self.facts
            .iter()
            .enumerate()
            .filter(|(slot, _)| !self.is_dead(*slot))
            .map(|(_, f)| f)
    }

    /// The current fact with this id.
    pub fn current(&self, id: &str) -> Option<&MemoryFact> {
        self.slot_of(id).map(|slot| &self.facts[slot])
    }

    /// The fact added last, current or superseded since: what a fresh read in the same
    /// order would end with. A store whose order is not insertion order (Redis sorts by
    /// creation time) checks a new fact against it before [`apply`](Self::apply)ing.
    pub fn last(&self) -> Option<&MemoryFact> {
        self.facts.last()
    }

    /// What `candidate` means for these facts: the decision of
    /// [`reconcile_by_meaning`](crate::store_support::reconcile_by_meaning) over them, in
    /// their order (so the same decision as over a fresh read).
    ///
    /// Only the facts it could act on are compared: those sharing the candidate's subject
    /// and value, attribute or text, found through keys filed when the facts were (filed
    /// on the first call), so the cost does not grow with the number of facts. Two cases
    /// still look further: a candidate with an embedding is compared by meaning with every
    /// fact of its subject, attribute and polarity that has one, and a candidate carrying
    /// a [`Transition`](crate::facts::Transition) with every fact.
    pub fn reconcile(&mut self, candidate: FactCandidate) -> (Reconciliation, FactCandidate) {
        if candidate.transition.is_some() {
            return reconcile_by_meaning(&self.facts, candidate);
        }
        if self.lookup.is_none() {
            let lookup = Lookup::new(&self.facts, |slot| !self.is_dead(slot));
            self.lookup = Some(lookup);
        }
        let Some(lookup) = self.lookup.as_ref() else {
            return reconcile_by_meaning(&self.facts, candidate);
        };
        let correction = candidate.attribute.as_deref() == Some(CORRECTION_ATTRIBUTE);
        let slots = match lookup.last_stated().filter(|_| correction) {
            Some(last) => {
                let target = std::slice::from_ref(&self.facts[last as usize]);
                lookup.decision_slots(&resolve(target, candidate.clone()), true)
            }
            None => lookup.decision_slots(&candidate, correction),
        };
        let near: Vec<MemoryFact> = slots
            .iter()
            .map(|&slot| self.facts[slot as usize].clone())
            .collect();
        let (decision, candidate) = decide_then_escalate(&near, Keys(None), candidate);
        let decision = match decision {
            Reconciliation::Add => {
                let held = lookup.paraphrase_slots(&candidate).iter();
                match paraphrase_among(held.map(|&slot| &self.facts[slot as usize]), &candidate) {
                    Some(f) => Reconciliation::Reinforce(f.id.clone()),
                    None => Reconciliation::Add,
                }
            }
            other => other,
        };
        (decision, candidate)
    }

    /// The change `candidate` makes for `user` at `now`: [`reconcile`](Self::reconcile)d
    /// against these facts and planned as [`plan_change`](crate::store_support::plan_change) plans it
    /// against a fresh read of them. Changes nothing here: the store writes the change,
    /// then [`apply`](Self::apply)s it.
    pub fn plan(
        &mut self,
        user: &str,
        candidate: FactCandidate,
        now: DateTime<Utc>,
    ) -> Result<FactChange> {
        let (decision, candidate) = self.reconcile(candidate);
        if decision == Reconciliation::Add && self.is_late(&candidate) {
            if let Some(later) = ended_later(self.facts(), &candidate) {
                let end = later.observed_at();
                return Ok(backdated(user, candidate, later, end, now));
            }
        }
        change_for(user, decision, candidate, now, |id| self.current(id))
    }

    /// The changes that close, with it, the facts about what `change` says ended ("dog
    /// Rolo is 3 years old" once "we had to put Rolo down" is current): each a
    /// [`FactChange::Closed`], valid until the ending took effect and superseded by the
    /// fact that says it. Empty for any other change. A store writes them with `change`, in the same transaction, and
    /// [`apply`](Self::apply)s each.
    ///
    /// ```
    /// use agentmemory_core::facts::{FactCandidate, Polarity};
    /// use agentmemory_core::store_support::RankedFacts;
    ///
    /// let now = chrono::Utc::now();
    /// let mut ranked = RankedFacts::default();
    /// let mut age = FactCandidate::new("dog Rolo is 3 years old", 0.8).with_attribute("age", "3");
    /// age.subject = Some("dog Rolo".into());
    /// let added = ranked.plan("u", age, now).unwrap();
    /// assert!(ranked.apply(&added));
    /// let mut gone = FactCandidate::new("had Rolo put down", 0.9).with_attribute("pet", "dog Rolo");
    /// gone.polarity = Polarity::Negative;
    /// let change = ranked.plan("u", gone, now).unwrap();
    /// let closed = ranked.dependents(&change);
    /// assert_eq!(closed.len(), 1);
    /// assert_eq!(closed[0].kind(), "closed");
    /// ```
    pub fn dependents(&self, change: &FactChange) -> Vec<FactChange> {
        // Most changes end nothing: no scan of the facts for them.
        let Some((ending, thing)) = change.current().and_then(|f| Some((f, ended_thing(f)?)))
        else {
            return Vec::new();
        };
        about_ended(self.facts(), ending, thing)
            .map(|fact| FactChange::Closed {
                fact: closed_with(fact, ending),
            })
            .collect()
    }

    /// Whether `candidate` took effect before some fact added here: only then can a
    /// later statement have ended it, so an in-order turn never looks.
    fn is_late(&self, candidate: &FactCandidate) -> bool {
        match (candidate.observed_at, self.latest) {
            (Some(at), Some(latest)) => at < latest,
            _ => false,
        }
    }

    /// Updates the index with a change made to the store: an added fact goes last, a
    /// reinforced or contested one is replaced in its slot, a superseded one leaves (its
    /// replacement goes last), a closed or deleted one leaves. Ranks exactly as a fresh
    /// [`new`](Self::new) of the facts a store holds after the change would.
    ///
    /// Returns `false`, changing nothing, when the change names a current fact this
    /// index does not hold (it was read before that fact was written): the caller then
    /// drops it and reads again.
    pub fn apply(&mut self, change: &FactChange) -> bool {
        match change {
            FactChange::Ignored { .. } => true,
            // A statement folded in behind a later one: history, nothing to index.
            FactChange::Added { fact } if !fact.is_current() => true,
            FactChange::Added { fact } => {
                if self.slot_of(&fact.id).is_some() {
                    return false;
                }
                self.push(fact.clone());
                true
            }
            FactChange::Reinforced { fact } | FactChange::Contested { fact, .. } => {
                let Some(slot) = self.slot_of(&fact.id).filter(|_| fact.is_current()) else {
                    return false;
                };
                if self.facts[slot].text != fact.text {
                    self.index.insert(slot as u32, &fact.text);
                }
                self.strength[slot] = Strength::of(fact);
                if let Some(lookup) = self.lookup.as_mut() {
                    lookup.replace(slot as u32, &self.facts[slot], fact);
                }
                self.max_confidence = self.max_confidence.max(fact.confidence);
                let stated = latest_statement(fact);
                self.latest = Some(self.latest.map_or(stated, |l| l.max(stated)));
                self.facts[slot] = fact.clone();
                true
            }
            FactChange::Superseded { old, new } => {
                let fresh = new.is_current() && self.slot_of(&new.id).is_none();
                let Some(slot) = self.slot_of(&old.id).filter(|_| fresh) else {
                    return false;
                };
                self.bury(slot, old.clone());
                self.push(new.clone());
                self.compact_if_sparse();
                true
            }
            FactChange::Closed { fact } => {
                let Some(slot) = self.slot_of(&fact.id).filter(|_| !fact.is_current()) else {
                    return false;
                };
                self.bury(slot, fact.clone());
                self.compact_if_sparse();
                true
            }
            FactChange::Deleted { fact } => {
                if let Some(slot) = self.slot_of(&fact.id) {
                    let mut gone = fact.clone();
                    gone.superseded_by.get_or_insert_with(String::new);
                    self.bury(slot, gone);
                    self.compact_if_sparse();
                }
                true
            }
        }
    }

    fn is_dead(&self, slot: usize) -> bool {
        self.dead.get(slot).copied().unwrap_or(false)
    }

    fn slot_of(&self, id: &str) -> Option<usize> {
        self.slots.get(&self.facts, id)
    }

    fn push(&mut self, fact: MemoryFact) {
        let slot = self.facts.len();
        self.index.insert(slot as u32, &fact.text);
        self.strength.push(Strength::of(&fact));
        if let Some(lookup) = self.lookup.as_mut() {
            lookup.insert(slot as u32, &fact);
        }
        if !self.dead.is_empty() {
            self.dead.push(false);
        }
        self.max_confidence = self.max_confidence.max(fact.confidence);
        let from = latest_statement(&fact);
        self.latest = Some(self.latest.map_or(from, |l| l.max(from)));
        self.facts.push(fact);
        self.slots.insert(&self.facts, slot);
    }

    /// Makes `slot` a tombstone holding `fact` (no longer current, so reconciliation
    /// skips it too).
    fn bury(&mut self, slot: usize, fact: MemoryFact) {
        self.index.remove(slot as u32);
        if let Some(lookup) = self.lookup.as_mut() {
            lookup.remove(slot as u32, &self.facts[slot]);
        }
        if self.dead.is_empty() {
            self.dead = vec![false; self.facts.len()];
        }
        self.dead[slot] = true;
        self.tombstones += 1;
        self.slots.remove(&self.facts, slot);
        self.facts[slot] = fact;
    }

    /// Rebuilds without tombstones once they are most of the slots.
    fn compact_if_sparse(&mut self) {
        if self.tombstones * 2 <= self.facts.len() {
            return;
        }
        let facts = std::mem::take(&mut self.facts);
        let dead = std::mem::take(&mut self.dead);
        let live = facts
            .into_iter()
            .zip(dead)
            .filter(|(_, dead)| !dead)
            .map(|(f, _)| f)
            .collect();
        let filed = self.lookup.is_some();
        *self = Self::new(live);
        if filed {
            self.lookup = Some(Lookup::new(&self.facts, |_| true));
        }
    }

    /// The best `query.top_k` facts under `policy` at `now`: [`rank_score`] over
    /// [`fact_relevance_among`], ties by id. The one fact search of every store.
    ///
    /// With a query embedding every current fact is a candidate (hybrid relevance).
    /// Without one only the facts sharing a term with the query have a relevance above
    /// zero; they are scored first, and the others only while one of them could still
    /// enter the top k. Either way a fact whose decayed confidence cannot reach the
    /// threshold is skipped before its exact decay (relevance is at most 1).
    pub fn rank(
        &self,
        query: &FactQuery,
        policy: FactPolicy,
        now: DateTime<Utc>,
    ) -> Vec<ScoredFact> {
        if query.top_k == 0 {
            return Vec::new();
        }
        let decay = Decay::at(now, policy.half_life);
        let top = match query.embedding.as_deref() {
            Some(q) => self.rank_hybrid(query, q, policy, decay),
            None => self.rank_by_words(query, policy, decay),
        };
        top.into_sorted()
            .into_iter()
            .map(
                |(score, _, (pos, relevance, effective_confidence))| ScoredFact {
                    fact: self.facts[pos].clone(),
                    relevance,
                    effective_confidence,
                    score,
                },
            )
            .collect()
    }

    /// Offers the fact in `pos` with relevance `rel` when its decayed confidence clears
    /// the policy's minimum.
    fn consider<'a>(
        &'a self,
        top: &mut Hits<'a>,
        pos: usize,
        rel: f32,
        policy: FactPolicy,
        decay: Decay,
    ) {
        let effective = decay.effective(self.strength[pos]);
        if effective >= policy.min_confidence {
            top.push(
                rank_score(rel, effective),
                self.facts[pos].id.as_str(),
                (pos, rel, effective),
            );
        }
    }

    /// Every current fact scored by hybrid relevance to the query's words and embedding.
    fn rank_hybrid<'a>(
        &'a self,
        query: &FactQuery,
        q: &[f32],
        policy: FactPolicy,
        decay: Decay,
    ) -> Hits<'a> {
        let mut sparse = vec![0.0f32; self.facts.len()];
        self.index.score(&query.text, |slot, cos| {
            if let Some(s) = sparse.get_mut(slot as usize) {
                *s = cos;
            }
        });
        // How much of the query's term weight each fact holds (what the default fusion
        // ranks words by).
        let mut coverage = vec![0.0f32; self.facts.len()];
        self.index.coverage(&query.text, |slot, c| {
            if let Some(at) = coverage.get_mut(slot as usize) {
                *at = c;
            }
        });
        // The query's best word score over the current facts (the hybrid relevance weighs
        // each fact's word score against it).
        let best_sparse = sparse
            .iter()
            .enumerate()
            .filter(|&(pos, _)| pos < self.facts.len() && !self.is_dead(pos))
            .map(|(_, &s)| s)
            .fold(0.0f32, f32::max);
        let mut top = Hits::new(query.top_k);
        let needed = |top: &Hits<'_>| Needed::new(top.threshold().max(policy.min_confidence));
        let (mut threshold, mut need) = (top.threshold(), needed(&top));
        for (pos, fact) in self.facts.iter().enumerate() {
            if top.threshold() != threshold {
                threshold = top.threshold();
                need = needed(&top);
            }
            if self.is_dead(pos) || !decay.may_reach(self.strength[pos], need) {
                continue;
            }
            let relevance = fact_relevance_among(
                sparse[pos],
                best_sparse,
                coverage[pos],
                Some(q),
                fact.embedding.as_deref(),
            );
            self.consider(&mut top, pos, relevance, policy, decay);
        }
        top
    }

    /// The facts sharing a term with the query first (they fill the heap with high
    /// scores), then the unrelated ones, each only when its bound could reach the
    /// threshold that relevance asks for.
    fn rank_by_words<'a>(
        &'a self,
        query: &FactQuery,
        policy: FactPolicy,
        decay: Decay,
    ) -> Hits<'a> {
        let mut top = Hits::new(query.top_k);
        // The effective confidence a fact of relevance `rel` needs to enter the top k.
        let needed = |top: &Hits<'_>, rel: f32| {
            let floor = rank_score(rel, 1.0);
            Needed::new((top.threshold() / floor).max(policy.min_confidence))
        };
        // The relevance a fact needs to enter the top k at best (at the highest
        // confidence held): `rank_score(rel, max_confidence) >= threshold`.
        let ceiling = self.max_confidence;
        let relevance_needed = |threshold: f32| {
            if threshold > 0.0 && threshold.is_finite() && ceiling > 0.0 {
                (threshold / ceiling - RELEVANCE_FLOOR) / (1.0 - RELEVANCE_FLOOR)
            } else {
                f32::NEG_INFINITY
            }
        };
        // The facts sharing a term with the query, strongest terms first; a fact whose
        // cosine cannot reach what the top k asks is never scored (so it cannot enter the
        // top k at relevance 0 either, below).
        let mut relevant: Vec<usize> = Vec::new();
        self.index.score_top(&query.text, |slot, cos| {
            let pos = slot as usize;
            if cos > 0.0 && pos < self.facts.len() && !self.is_dead(pos) {
                let rel = cos.clamp(0.0, 1.0);
                relevant.push(pos);
                if decay.may_reach(self.strength[pos], needed(&top, rel)) {
                    self.consider(&mut top, pos, rel, policy, decay);
                }
            }
            relevance_needed(top.threshold())
        });
        if !top.admits(rank_score(0.0, self.max_confidence)) {
            return top;
        }
        // Unrelated facts need what the threshold asks of relevance 0; it is recomputed
        // only when the threshold moves.
        let mut is_relevant = vec![false; self.facts.len()];
        for &pos in &relevant {
            is_relevant[pos] = true;
        }
        let mut threshold = top.threshold();
        let mut need = needed(&top, 0.0);
        for (pos, strength) in self.strength.iter().enumerate() {
            if is_relevant[pos] || self.is_dead(pos) || !decay.may_reach(*strength, need) {
                continue;
            }
            self.consider(&mut top, pos, 0.0, policy, decay);
            if top.threshold() != threshold {
                threshold = top.threshold();
                need = needed(&top, 0.0);
            }
        }
        top
    }
}

/// The best facts of one search: score, id (ties), and slot, relevance and effective
/// confidence.
type Hits<'a> = TopK<&'a str, (usize, f32, f32)>;

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use proptest::prelude::*;

    use super::*;
    use crate::facts::reconcile_by_meaning;

    const WORDS: &[&str] = &[
        "jazz", "hiking", "tea", "coffee", "Lyon", "Porto", "cat", "chess", "the", "likes",
    ];
    const ATTRIBUTES: &[Option<&str>] = &[None, Some("likes"), Some("location")];

    #[derive(Debug, Clone)]
    enum Op {
        Add {
            words: Vec<usize>,
            attribute: usize,
            confidence: u8,
            age: u32,
        },
        Reinforce {
            pick: usize,
        },
        Contest {
            pick: usize,
        },
        Supersede {
            pick: usize,
            words: Vec<usize>,
        },
        Delete {
            pick: usize,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        let words = prop::collection::vec(0..WORDS.len(), 1..5);
        prop_oneof![
            4 => (words.clone(), 0..ATTRIBUTES.len(), 1u8..=100, 0u32..5000).prop_map(
                |(words, attribute, confidence, age)| Op::Add { words, attribute, confidence, age }
            ),
            2 => any::<usize>().prop_map(|pick| Op::Reinforce { pick }),
            1 => any::<usize>().prop_map(|pick| Op::Contest { pick }),
            2 => (any::<usize>(), words).prop_map(|(pick, words)| Op::Supersede { pick, words }),
            1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        ]
    }

    fn text(words: &[usize]) -> String {
        words
            .iter()
            .map(|&w| WORDS[w])
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn candidate(words: &[usize], attribute: usize, confidence: f32) -> FactCandidate {
        let text = text(words);
        match ATTRIBUTES[attribute] {
            Some(a) => FactCandidate::new(&text, confidence).with_attribute(a, WORDS[words[0]]),
            None => FactCandidate::new(text, confidence),
        }
    }

    /// What a store holds: every version in insertion order (deleted ones gone).
    fn apply_to_store(store: &mut Vec<MemoryFact>, change: &FactChange) {
        match change {
            FactChange::Added { fact } => store.push(fact.clone()),
            FactChange::Reinforced { fact }
            | FactChange::Contested { fact, .. }
            | FactChange::Closed { fact } => {
                let at = store.iter().position(|f| f.id == fact.id).unwrap();
                store[at] = fact.clone();
            }
            FactChange::Superseded { old, new } => {
                let at = store.iter().position(|f| f.id == old.id).unwrap();
                store[at] = old.clone();
                store.push(new.clone());
            }
            FactChange::Deleted { fact } => store.retain(|f| f.id != fact.id),
            FactChange::Ignored { .. } => {}
        }
    }

    fn assert_same_ranking(incremental: &RankedFacts, store: &[MemoryFact], now: DateTime<Utc>) {
        let fresh = RankedFacts::new(store.to_vec());
        assert_eq!(incremental.len(), fresh.len());
        let ids = |r: &RankedFacts| r.facts().map(|f| f.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(incremental),
            ids(&fresh),
            "current facts or their order differ"
        );
        let policy = FactPolicy::default();
        for q in [
            "jazz tea",
            "Lyon",
            "the cat likes chess",
            "nothing known",
            "likes",
        ] {
            for k in [1, 3, 50] {
                let query = FactQuery::new(q, k);
                let got = incremental.rank(&query, policy, now);
                let want = fresh.rank(&query, policy, now);
                let key = |hits: &[ScoredFact]| {
                    hits.iter()
                        .map(|h| {
                            (
                                h.fact.clone(),
                                h.score.to_bits(),
                                h.relevance.to_bits(),
                                h.effective_confidence.to_bits(),
                            )
                        })
                        .collect::<Vec<_>>()
                };
                assert_eq!(key(&got), key(&want), "query {q:?} top {k}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// Facts updated in place rank (and reconcile) exactly as a fresh index of the
        /// same facts, after every kind of change and across compactions.
        #[test]
        fn updated_in_place_ranks_as_rebuilt(
            start in prop::collection::vec(
                (prop::collection::vec(0..WORDS.len(), 1..5), 0..ATTRIBUTES.len(), 1u8..=100, 0u32..5000),
                0..12,
            ),
            ops in prop::collection::vec(op(), 1..40),
        ) {
            let now = Utc::now();
            let mut store: Vec<MemoryFact> = start
                .iter()
                .map(|(words, attribute, confidence, age)| {
                    let c = candidate(words, *attribute, f32::from(*confidence) / 100.0);
                    MemoryFact::from_candidate("u", c, now - Duration::hours(i64::from(*age)))
                })
                .collect();
            let mut ranked = RankedFacts::new(store.clone());
            for (step, op) in ops.into_iter().enumerate() {
                let at = now + Duration::seconds(step as i64);
                let live: Vec<MemoryFact> = store.iter().filter(|f| f.is_current()).cloned().collect();
                let change = match op {
                    Op::Add { words, attribute, confidence, age } => {
                        let c = candidate(&words, attribute, f32::from(confidence) / 100.0);
                        // Decided by the index and by a fresh read alike.
                        let (fresh, fresh_c) = reconcile_by_meaning(&live, c.clone());
                        let (decision, c) = ranked.reconcile(c);
                        prop_assert_eq!(&decision, &fresh);
                        prop_assert_eq!(&c, &fresh_c);
                        let _ = age;
                        match decision {
                            Reconciliation::Add => FactChange::Added {
                                fact: MemoryFact::from_candidate("u", c, at),
                            },
                            Reconciliation::Reinforce(id) => {
                                let mut fact = ranked.current(&id).unwrap().clone();
                                fact.reinforce(c.confidence, at);
                                FactChange::Reinforced { fact }
                            }
                            Reconciliation::Contest(id) => {
                                let mut fact = ranked.current(&id).unwrap().clone();
                                fact.contest(&c, at);
                                FactChange::Contested { fact, candidate: c }
                            }
                            Reconciliation::Supersede(id) => {
                                let mut old = ranked.current(&id).unwrap().clone();
                                let new = MemoryFact::from_candidate("u", c, at);
                                old.superseded_by = Some(new.id.clone());
                                FactChange::Superseded { old, new }
                            }
                            Reconciliation::Ignore(reason) => FactChange::Ignored { candidate: c, reason },
                        }
                    }
                    _ if live.is_empty() => continue,
                    Op::Reinforce { pick } => {
                        let mut fact = live[pick % live.len()].clone();
                        fact.reinforce(0.7, at);
                        FactChange::Reinforced { fact }
                    }
                    Op::Contest { pick } => {
                        let mut fact = live[pick % live.len()].clone();
                        fact.contest(&FactCandidate::new("not so", 0.3), at);
                        FactChange::Contested { fact, candidate: FactCandidate::new("not so", 0.3) }
                    }
                    Op::Supersede { pick, words } => {
                        let mut old = live[pick % live.len()].clone();
                        let new = MemoryFact::from_candidate("u", FactCandidate::new(text(&words), 0.8), at);
                        old.superseded_by = Some(new.id.clone());
                        FactChange::Superseded { old, new }
                    }
                    Op::Delete { pick } => FactChange::Deleted { fact: live[pick % live.len()].clone() },
                };
                prop_assert!(ranked.apply(&change));
                apply_to_store(&mut store, &change);
                assert_same_ranking(&ranked, &store, now + Duration::hours(3));
            }
        }
    }

    /// The best `k` current facts by brute force: every fact scored with its full
    /// cosine (`SparseIndex::score`) and exact decay, sorted by score then id.
    fn brute_force(ranked: &RankedFacts, query: &FactQuery, now: DateTime<Utc>) -> Vec<ScoredFact> {
        let policy = FactPolicy::default();
        let mut cos = vec![0.0f32; ranked.facts.len()];
        ranked
            .index
            .score(&query.text, |slot, c| cos[slot as usize] = c);
        let mut all: Vec<ScoredFact> = ranked
            .facts
            .iter()
            .enumerate()
            .filter(|(pos, _)| !ranked.is_dead(*pos))
            .filter_map(|(pos, fact)| {
                let effective = fact.effective_confidence(now, policy.half_life);
                (effective >= policy.min_confidence).then(|| ScoredFact {
                    fact: fact.clone(),
                    relevance: cos[pos],
                    effective_confidence: effective,
                    score: rank_score(cos[pos], effective),
                })
            })
            .collect();
        all.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.fact.id.cmp(&b.fact.id))
        });
        all.truncate(query.top_k);
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The pruned search (block bounds, skipped cosines, skipped decays) returns what
        /// brute force does, on lists long enough to have block bounds.
        #[test]
        fn pruned_ranking_equals_brute_force(
            seed in any::<u64>(),
            n in 1usize..6_000,
            k in 1usize..12,
        ) {
            let now = Utc::now();
            let mut x = seed | 1;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let facts: Vec<MemoryFact> = (0..n)
                .map(|i| {
                    let words: Vec<&str> = (0..1 + next() % 4)
                        .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
                        .collect();
                    let text = format!("{} n{}", words.join(" "), next() % 50);
                    let confidence = 0.2 + (next() % 80) as f32 / 100.0;
                    let age = Duration::minutes((next() % 200_000) as i64);
                    let _ = i;
                    MemoryFact::from_candidate("u", FactCandidate::new(text, confidence), now - age)
                })
                .collect();
            let ranked = RankedFacts::new(facts);
            for q in ["jazz", "jazz tea", "the cat likes chess", "n7 Lyon", "nothing known"] {
                let query = FactQuery::new(q, k);
                let got = ranked.rank(&query, FactPolicy::default(), now);
                let want = brute_force(&ranked, &query, now);
                let key = |hits: &[ScoredFact]| {
                    hits.iter().map(|h| (h.fact.id.clone(), h.score.to_bits())).collect::<Vec<_>>()
                };
                prop_assert_eq!(key(&got), key(&want), "query {:?} top {}", q, k);
            }
        }
    }

    #[test]
    fn a_change_to_a_fact_it_does_not_hold_is_refused() {
        let now = Utc::now();
        let held = MemoryFact::from_candidate("u", FactCandidate::new("likes jazz", 0.8), now);
        let other = MemoryFact::from_candidate("u", FactCandidate::new("likes tea", 0.8), now);
        let mut ranked = RankedFacts::new(vec![held.clone()]);
        assert!(!ranked.apply(&FactChange::Reinforced {
            fact: other.clone()
        }));
        let mut old = other.clone();
        old.superseded_by = Some(held.id.clone());
        assert!(!ranked.apply(&FactChange::Superseded {
            old,
            new: held.clone()
        }));
        assert!(!ranked.apply(&FactChange::Added { fact: held }));
        assert_eq!(ranked.len(), 1);
    }
}
