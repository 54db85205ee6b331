//! [`RankedFacts`]: a user's current facts with their word index built once, so a
//! backend that keeps them between searches ranks each query without re-indexing.

use chrono::{DateTime, Utc};

use super::strength::{Decay, Needed, Strength};
use super::{fact_relevance, rank_score, FactPolicy, FactQuery, MemoryFact, ScoredFact};
use crate::vector::sparse::SparseIndex;
use crate::vector::topk::TopK;

/// A user's current facts, indexed for [`rank`](Self::rank).
///
/// Ranks exactly as [`rank_facts`](super::rank_facts) does (which builds one and ranks
/// once); a store that caches it per user (SQLite does, until the user's facts change)
/// pays the indexing once instead of per query.
///
/// ```
/// use agentmemory_core::facts::{FactCandidate, FactPolicy, FactQuery, MemoryFact, RankedFacts};
///
/// let now = chrono::Utc::now();
/// let facts = vec![
///     MemoryFact::from_candidate("u", FactCandidate::new("likes jazz", 0.8), now),
///     MemoryFact::from_candidate("u", FactCandidate::new("lives in Porto", 0.9), now),
/// ];
/// let ranked = RankedFacts::new(facts);
/// let hits = ranked.rank(&FactQuery::new("any jazz tonight?", 1), FactPolicy::default(), now);
/// assert_eq!(hits[0].fact.text, "likes jazz");
/// ```
#[derive(Debug, Default)]
pub struct RankedFacts {
    facts: Vec<MemoryFact>,
    strength: Vec<Strength>,
    index: SparseIndex,
}

impl RankedFacts {
    /// Indexes the current ones of `facts` (superseded versions are dropped).
    pub fn new(facts: Vec<MemoryFact>) -> Self {
        let facts: Vec<MemoryFact> = facts.into_iter().filter(MemoryFact::is_current).collect();
        let mut index = SparseIndex::default();
        for (slot, fact) in facts.iter().enumerate() {
            index.insert(slot as u32, &fact.text);
        }
        let strength = facts.iter().map(Strength::of).collect();
        Self {
            facts,
            strength,
            index,
        }
    }

    /// How many current facts are indexed.
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    /// Whether no current fact is indexed.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// The best `query.top_k` facts under `policy` at `now`: [`rank_score`] over
    /// [`fact_relevance`], ties by id.
    pub fn rank(
        &self,
        query: &FactQuery,
        policy: FactPolicy,
        now: DateTime<Utc>,
    ) -> Vec<ScoredFact> {
        if query.top_k == 0 {
            return Vec::new();
        }
        rank_scan(
            Indexed {
                facts: &self.facts,
                strength: &self.strength,
                index: &self.index,
            },
            query,
            policy,
            now,
        )
    }
}

/// A user's current facts with their strengths and word index, in the same order.
pub(super) struct Indexed<'a> {
    pub(super) facts: &'a [MemoryFact],
    pub(super) strength: &'a [Strength],
    pub(super) index: &'a SparseIndex,
}

/// The one ranking scan every fact search ends in: the best `query.top_k` of `facts` by
/// [`rank_score`] over [`fact_relevance`], ties by id. Relevance is at most 1, so a fact
/// whose decayed confidence cannot reach the threshold is skipped before its cosine and
/// its exact decay.
pub(super) fn rank_scan(
    facts: Indexed<'_>,
    query: &FactQuery,
    policy: FactPolicy,
    now: DateTime<Utc>,
) -> Vec<ScoredFact> {
    let Indexed {
        facts,
        strength,
        index,
    } = facts;
    let mut sparse = vec![0.0f32; facts.len()];
    index.score(&query.text, |slot, cos| {
        if let Some(s) = sparse.get_mut(slot as usize) {
            *s = cos;
        }
    });
    let q = query.embedding.as_deref();
    let decay = Decay::at(now, policy.half_life);
    let mut top: TopK<&str, (usize, f32, f32)> = TopK::new(query.top_k);
    let needed = |top: &TopK<_, _>| Needed::new(top.threshold().max(policy.min_confidence));
    let (mut threshold, mut need) = (top.threshold(), needed(&top));
    for (pos, fact) in facts.iter().enumerate() {
        if top.threshold() != threshold {
            threshold = top.threshold();
            need = needed(&top);
        }
        if !decay.may_reach(strength[pos], need) {
            continue;
        }
        let relevance = fact_relevance(sparse[pos], q, fact.embedding.as_deref());
        let effective = decay.effective(strength[pos]);
        if effective >= policy.min_confidence {
            top.push(
                rank_score(relevance, effective),
                fact.id.as_str(),
                (pos, relevance, effective),
            );
        }
    }
    top.into_sorted()
        .into_iter()
        .map(
            |(score, _, (pos, relevance, effective_confidence))| ScoredFact {
                fact: facts[pos].clone(),
                relevance,
                effective_confidence,
                score,
            },
        )
        .collect()
}
