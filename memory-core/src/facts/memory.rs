//! `InMemoryUserMemoryStore`: facts per user, reconciled on write, ranked on read.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use dashmap::DashMap;
use parking_lot::RwLock;

use super::strength::{Decay, Needed, Strength};
use super::{
    prepare_candidate, rank_score, reconcile_by_meaning_keyed, FactCandidate, FactChange, FactKey,
    FactPolicy, FactQuery, MemoryFact, Reconciliation, ScoredFact, UserMemoryStore,
};
use crate::error::{MemoryError, Result};
use crate::vector::sparse::SparseIndex;
use crate::vector::topk::TopK;

/// A [`UserMemoryStore`] held in memory.
///
/// Each user has their own lock (users never contend with each other), all versions of
/// their facts, and a TF-IDF inverted index over the text of their *current* facts, so
/// a search costs O(the user's current facts) whatever the number of users.
///
/// ```
/// use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryUserMemoryStore::new();
/// let paris = FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris");
/// let berlin = FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin");
/// store.upsert("ana", paris).await.unwrap();
/// let change = store.upsert("ana", berlin).await.unwrap();
/// assert_eq!(change.kind(), "superseded");
///
/// let hits = store.search("ana", "where does she live?", 3).await.unwrap();
/// assert_eq!(hits.len(), 1);
/// assert_eq!(hits[0].fact.text, "lives in Berlin");
/// let history = store.history("ana", &hits[0].fact.id).await.unwrap();
/// assert_eq!(history.len(), 2);
/// # });
/// ```
#[derive(Default)]
pub struct InMemoryUserMemoryStore {
    users: DashMap<String, Arc<RwLock<UserFacts>>>,
    policy: FactPolicy,
}

impl fmt::Debug for InMemoryUserMemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryUserMemoryStore")
            .field("users", &self.users.len())
            .field("policy", &self.policy)
            .finish()
    }
}

/// One user's facts.
///
/// Current facts live in a dense `Vec` whose positions are also their slots in the
/// sparse index (a removal swap-removes and re-indexes the one fact that moved), so
/// reconciliation reads them as a slice and search scans them linearly.
#[derive(Debug, Default)]
struct UserFacts {
    current: Vec<MemoryFact>,
    /// What reconciliation compares each current fact by, computed once.
    keys: Vec<FactKey>,
    /// How strong each current fact is, for bounding its decayed confidence cheaply.
    strength: Vec<Strength>,
    /// Insertion sequence of each current fact, for oldest-first listing.
    seqs: Vec<u64>,
    pos_of: HashMap<String, usize>,
    superseded: HashMap<String, MemoryFact>,
    /// `new id → id of the fact it superseded`.
    prev_of: HashMap<String, String>,
    index: SparseIndex,
    /// An upper bound on the confidence of every current fact (raised on insert and
    /// reinforcement, never lowered), so search can tell when no fact outside the
    /// relevant ones could enter the top k.
    max_confidence: f32,
    next_seq: u64,
    /// Set when `forget_user` unlinks this state; a writer that fetched it before then
    /// must fetch the user again.
    retired: bool,
}

impl UserFacts {
    fn record_count(&self) -> usize {
        self.current.len() + self.superseded.len()
    }

    fn push_current(&mut self, fact: MemoryFact) {
        let pos = self.current.len();
        self.index.insert(pos as u32, &fact.text);
        self.pos_of.insert(fact.id.clone(), pos);
        self.keys.push(FactKey::of(&fact));
        self.strength.push(Strength::of(&fact));
        self.seqs.push(self.next_seq);
        self.next_seq += 1;
        self.max_confidence = self.max_confidence.max(fact.confidence);
        self.current.push(fact);
    }

    fn remove_current(&mut self, id: &str) -> Option<MemoryFact> {
        let pos = self.pos_of.remove(id)?;
        let last = self.current.len() - 1;
        let fact = self.current.swap_remove(pos);
        self.seqs.swap_remove(pos);
        self.keys.swap_remove(pos);
        self.strength.swap_remove(pos);
        self.index.remove(pos as u32);
        if pos != last {
            self.index.remove(last as u32);
            let moved = &self.current[pos];
            self.index.insert(pos as u32, &moved.text);
            self.pos_of.insert(moved.id.clone(), pos);
        }
        Some(fact)
    }

    /// The best `top_k` current facts for `query` and its normalised `embedding`, scored
    /// as [`rank_facts`](crate::store_support::rank_facts) scores them (the same scan).
    fn hybrid(
        &self,
        query: &str,
        embedding: Vec<f32>,
        top_k: usize,
        policy: FactPolicy,
    ) -> Vec<ScoredFact> {
        super::ranked::rank_scan(
            super::ranked::Indexed {
                facts: &self.current,
                strength: &self.strength,
                dead: &[],
                index: &self.index,
            },
            &FactQuery::new(query, top_k).with_embedding(embedding),
            policy,
            Utc::now(),
        )
    }

    fn get(&self, id: &str) -> Option<&MemoryFact> {
        match self.pos_of.get(id) {
            Some(&pos) => self.current.get(pos),
            None => self.superseded.get(id),
        }
    }

    fn apply(
        &mut self,
        user_id: &str,
        candidate: FactCandidate,
        now: chrono::DateTime<Utc>,
    ) -> Result<FactChange> {
        let (decision, candidate) =
            reconcile_by_meaning_keyed(&self.current, &self.keys, candidate);
        match decision {
            Reconciliation::Add => {
                let fact = MemoryFact::from_candidate(user_id, candidate, now);
                self.push_current(fact.clone());
                Ok(FactChange::Added { fact })
            }
            Reconciliation::Reinforce(id) => {
                let pos = *self
                    .pos_of
                    .get(&id)
                    .ok_or_else(|| MemoryError::not_found("fact", id.clone()))?;
                let fact = &mut self.current[pos];
                fact.reinforce(candidate.confidence, now);
                self.strength[pos] = Strength::of(fact);
                self.max_confidence = self.max_confidence.max(fact.confidence);
                Ok(FactChange::Reinforced { fact: fact.clone() })
            }
            Reconciliation::Supersede(id) => {
                let new = MemoryFact::from_candidate(user_id, candidate, now);
                let mut old = self
                    .remove_current(&id)
                    .ok_or_else(|| MemoryError::not_found("fact", id.clone()))?;
                old.superseded_by = Some(new.id.clone());
                self.superseded.insert(old.id.clone(), old.clone());
                self.prev_of.insert(new.id.clone(), old.id.clone());
                self.push_current(new.clone());
                Ok(FactChange::Superseded { old, new })
            }
            Reconciliation::Contest(id) => {
                let pos = *self
                    .pos_of
                    .get(&id)
                    .ok_or_else(|| MemoryError::not_found("fact", id.clone()))?;
                let fact = &mut self.current[pos];
                fact.contest(&candidate, now);
                Ok(FactChange::Contested {
                    fact: fact.clone(),
                    candidate,
                })
            }
            Reconciliation::Ignore(reason) => Ok(FactChange::Ignored { candidate, reason }),
        }
    }

    /// `id` and the versions before it, newest first.
    fn chain_back(&self, id: &str) -> Vec<String> {
        let mut chain = Vec::new();
        let mut cur = Some(id.to_owned());
        while let Some(c) = cur {
            if chain.len() > self.record_count() {
                break; // defensive: links never form a cycle
            }
            cur = self.prev_of.get(&c).cloned();
            chain.push(c);
        }
        chain
    }

    fn delete(&mut self, id: &str) -> bool {
        let Some(fact) = self.get(id) else {
            return false;
        };
        // Deleting a superseded version: its successor no longer has a predecessor.
        if let Some(next) = fact.superseded_by.clone() {
            self.prev_of.remove(&next);
        }
        for c in self.chain_back(id) {
            self.prev_of.remove(&c);
            if self.remove_current(&c).is_none() {
                self.superseded.remove(&c);
            }
        }
        true
    }

    fn history(&self, id: &str) -> Vec<MemoryFact> {
        if self.get(id).is_none() {
            return Vec::new();
        }
        let mut out: Vec<MemoryFact> = self
            .chain_back(id)
            .iter()
            .rev()
            .filter_map(|c| self.get(c).cloned())
            .collect();
        let mut next = out.last().and_then(|f| f.superseded_by.clone());
        while let Some(n) = next {
            if out.len() > self.record_count() {
                break;
            }
            let Some(f) = self.get(&n) else { break };
            next = f.superseded_by.clone();
            out.push(f.clone());
        }
        out
    }
}

impl InMemoryUserMemoryStore {
    /// An empty store with the default [`FactPolicy`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store with `policy` for decay and the minimum confidence of results.
    pub fn with_policy(policy: FactPolicy) -> Self {
        Self {
            users: DashMap::new(),
            policy,
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> FactPolicy {
        self.policy
    }

    fn user(&self, user_id: &str) -> Option<Arc<RwLock<UserFacts>>> {
        self.users.get(user_id).map(|u| Arc::clone(&u))
    }
}

#[async_trait]
impl UserMemoryStore for InMemoryUserMemoryStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        loop {
            let user = match self.user(user_id) {
                Some(u) => u,
                None => Arc::clone(&self.users.entry(user_id.to_owned()).or_default()),
            };
            let mut user = user.write();
            if user.retired {
                continue; // forgotten meanwhile: write to the user's fresh state
            }
            return user.apply(user_id, candidate.clone(), Utc::now());
        }
    }

    /// With a query embedding every current fact is scored (hybrid relevance, the rules
    /// of [`rank_facts`](crate::store_support::rank_facts)); without one, only the facts sharing a term
    /// with the query are, and unrelated ones only while they could still enter the top k.
    async fn search_query(&self, user_id: &str, q: &FactQuery) -> Result<Vec<ScoredFact>> {
        let (query, top_k) = (q.text.as_str(), q.top_k);
        let embedding = q
            .embedding
            .clone()
            .map(|v| crate::vector::normalized(v, "query embedding"))
            .transpose()?;
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let Some(user) = self.user(user_id) else {
            return Ok(Vec::new());
        };
        let user = user.read();
        if let Some(embedding) = embedding {
            return Ok(user.hybrid(query, embedding, top_k, self.policy));
        }
        let mut relevant: Vec<(usize, f32)> = Vec::new();
        user.index.score(query, |slot, cos| {
            if cos > 0.0 && (slot as usize) < user.current.len() {
                relevant.push((slot as usize, cos));
            }
        });
        let now = Utc::now();
        let policy = self.policy;
        let decay = Decay::at(now, policy.half_life);
        let mut top: TopK<&str, (usize, f32, f32)> = TopK::new(top_k);
        let consider = |top: &mut TopK<_, _>, pos: usize, rel: f32| {
            let Some(fact) = user.current.get(pos) else {
                return;
            };
            let effective = decay.effective(user.strength[pos]);
            if effective >= policy.min_confidence {
                top.push(
                    rank_score(rel, effective),
                    fact.id.as_str(),
                    (pos, rel, effective),
                );
            }
        };
        // The effective confidence a fact of relevance `rel` needs to enter the top k.
        let needed = |top: &TopK<_, _>, rel: f32| {
            let floor = rank_score(rel, 1.0);
            Needed::new((top.threshold() / floor).max(policy.min_confidence))
        };
        // Relevant facts first: they fill the heap with high scores, so most of the
        // unrelated ones are then rejected by the bound alone.
        for &(pos, rel) in &relevant {
            if decay.may_reach(user.strength[pos], needed(&top, rel)) {
                consider(&mut top, pos, rel);
            }
        }
        // Unrelated facts need what the threshold asks of relevance 0; it is recomputed
        // only when the threshold moves, and a fact is decayed exactly only when its bound
        // passes.
        if top.admits(rank_score(0.0, user.max_confidence)) {
            let mut is_relevant = vec![false; user.current.len()];
            for &(pos, _) in &relevant {
                is_relevant[pos] = true;
            }
            let mut threshold = top.threshold();
            let mut need = needed(&top, 0.0);
            for (pos, strength) in user.strength.iter().enumerate() {
                if is_relevant[pos] || !decay.may_reach(*strength, need) {
                    continue;
                }
                consider(&mut top, pos, 0.0);
                if top.threshold() != threshold {
                    threshold = top.threshold();
                    need = needed(&top, 0.0);
                }
            }
        }
        Ok(top
            .into_sorted()
            .into_iter()
            .map(
                |(score, _, (pos, relevance, effective_confidence))| ScoredFact {
                    fact: user.current[pos].clone(),
                    relevance,
                    effective_confidence,
                    score,
                },
            )
            .collect())
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let Some(user) = self.user(user_id) else {
            return Ok(Vec::new());
        };
        let user = user.read();
        let mut order: Vec<usize> = (0..user.current.len()).collect();
        order.sort_by_key(|&i| user.seqs[i]);
        Ok(order.into_iter().map(|i| user.current[i].clone()).collect())
    }

    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        Ok(self
            .user(user_id)
            .and_then(|u| u.read().get(fact_id).cloned()))
    }

    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        Ok(self
            .user(user_id)
            .is_some_and(|u| u.write().delete(fact_id)))
    }

    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        let Some(user) = self.user(user_id) else {
            return Ok(0);
        };
        // Empty the state and unlink it under its lock: a writer that already fetched it
        // sees `retired` and starts over, so nothing is written into forgotten state.
        // Nobody waits on a user lock while holding a map shard, so this cannot deadlock.
        let mut state = user.write();
        let count = state.record_count();
        *state = UserFacts {
            retired: true,
            ..UserFacts::default()
        };
        self.users
            .remove_if(user_id, |_, current| Arc::ptr_eq(current, &user));
        Ok(count)
    }

    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        loop {
            let user = match self.user(user_id) {
                Some(u) => u,
                None => Arc::clone(&self.users.entry(user_id.to_owned()).or_default()),
            };
            let mut user = user.write();
            if user.retired {
                continue; // forgotten meanwhile: write to the user's fresh state
            }
            let mut written = 0;
            for mut fact in records {
                if user.get(&fact.id).is_some() {
                    continue;
                }
                user_id.clone_into(&mut fact.user_id);
                if let Some(next) = &fact.superseded_by {
                    user.prev_of.insert(next.clone(), fact.id.clone());
                    user.superseded.insert(fact.id.clone(), fact);
                } else {
                    user.push_current(fact);
                }
                written += 1;
            }
            return Ok(written);
        }
    }

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        Ok(self
            .user(user_id)
            .map(|u| u.read().history(fact_id))
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn index_follows_swap_removal() {
        block_on(async {
            let store = InMemoryUserMemoryStore::new();
            let a = FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris");
            store.upsert("u", a).await.unwrap();
            store
                .upsert("u", FactCandidate::new("likes jazz music", 0.9))
                .await
                .unwrap();
            store
                .upsert("u", FactCandidate::new("owns a bicycle", 0.9))
                .await
                .unwrap();
            // Superseding the first fact swap-moves "owns a bicycle" into slot 0.
            let b = FactCandidate::new("lives in Rome", 0.9).with_attribute("location", "Rome");
            store.upsert("u", b).await.unwrap();
            let hits = store.search("u", "bicycle", 1).await.unwrap();
            assert_eq!(hits[0].fact.text, "owns a bicycle");
            assert!(hits[0].relevance > 0.5);
            let hits = store.search("u", "paris", 4).await.unwrap();
            assert!(hits.iter().all(|h| h.relevance == 0.0));
            let texts: Vec<_> = store
                .list("u")
                .await
                .unwrap()
                .into_iter()
                .map(|f| f.text)
                .collect();
            assert_eq!(
                texts,
                ["likes jazz music", "owns a bicycle", "lives in Rome"]
            );
        });
    }

    #[test]
    fn pruned_search_agrees_with_a_full_ranking() {
        block_on(async {
            let store = InMemoryUserMemoryStore::new();
            let words = ["tea", "jazz", "hiking", "chess", "rust", "paris", "dogs"];
            for i in 0..60usize {
                let text = format!("{} {} note{i}", words[i % 7], words[(i * 3) % 7]);
                let confidence = 0.25 + (i % 10) as f32 * 0.075;
                store
                    .upsert("u", FactCandidate::new(text, confidence))
                    .await
                    .unwrap();
            }
            for query in ["tea jazz", "chess", "unrelated words", ""] {
                let all = store.search("u", query, 1000).await.unwrap();
                assert_eq!(all.len(), 60);
                for k in [1, 3, 10, 59] {
                    let top = store.search("u", query, k).await.unwrap();
                    assert_eq!(top, all[..k].to_vec(), "query {query:?}, k {k}");
                }
            }
        });
    }

    #[test]
    fn bounded_search_agrees_with_the_shared_ranking_at_every_age() {
        use crate::facts::rank_facts;
        block_on(async {
            let store = InMemoryUserMemoryStore::new();
            let now = Utc::now();
            let words = ["tea", "jazz", "hiking", "chess", "rust", "paris", "dogs"];
            let mut user = UserFacts::default();
            for i in 0..200usize {
                let text = format!("{} {} note{i}", words[i % 7], words[(i * 5) % 7]);
                // Confidence and age both vary, so decay reorders the facts.
                let confidence = 0.3 + ((i * 37) % 70) as f32 / 100.0;
                let age = chrono::Duration::minutes(((i * 7919) % 100_000) as i64);
                let fact = MemoryFact::from_candidate(
                    "u",
                    FactCandidate::new(text, confidence),
                    now - age,
                );
                user.push_current(fact);
            }
            let facts = user.current.clone();
            store.users.insert("u".into(), Arc::new(RwLock::new(user)));
            for query in ["tea jazz", "chess", "unrelated words", ""] {
                let full = rank_facts(
                    facts.clone(),
                    &FactQuery::new(query, 1000),
                    store.policy,
                    Utc::now(),
                );
                let full: Vec<&str> = full.iter().map(|f| f.fact.id.as_str()).collect();
                for k in [1, 3, 10, 150, 1000] {
                    let top = store.search("u", query, k).await.unwrap();
                    let ids: Vec<&str> = top.iter().map(|f| f.fact.id.as_str()).collect();
                    assert_eq!(ids, full[..k.min(full.len())], "query {query:?}, k {k}");
                }
            }
        });
    }

    #[test]
    fn decayed_facts_are_left_out() {
        block_on(async {
            let store = InMemoryUserMemoryStore::with_policy(FactPolicy {
                half_life: Duration::from_secs(3600),
                min_confidence: 0.5,
            });
            store
                .upsert("u", FactCandidate::new("likes tea", 0.4))
                .await
                .unwrap();
            store
                .upsert("u", FactCandidate::new("likes coffee", 0.9))
                .await
                .unwrap();
            let hits = store.search("u", "tea", 5).await.unwrap();
            assert_eq!(hits.len(), 1);
            assert_eq!(hits[0].fact.text, "likes coffee");
            assert_eq!(store.policy().min_confidence, 0.5);
        });
    }

    #[test]
    fn deleting_a_middle_version_keeps_the_current_one() {
        block_on(async {
            let store = InMemoryUserMemoryStore::new();
            let mut ids = Vec::new();
            for city in ["Paris", "Rome", "Oslo"] {
                let c = FactCandidate::new(format!("lives in {city}"), 0.9)
                    .with_attribute("location", city);
                ids.push(
                    store
                        .upsert("u", c)
                        .await
                        .unwrap()
                        .current()
                        .unwrap()
                        .id
                        .clone(),
                );
            }
            assert_eq!(store.history("u", &ids[0]).await.unwrap().len(), 3);
            assert!(store.delete("u", &ids[1]).await.unwrap());
            assert!(store.get("u", &ids[0]).await.unwrap().is_none());
            let h = store.history("u", &ids[2]).await.unwrap();
            assert_eq!(h.len(), 1);
            assert_eq!(h[0].id, ids[2]);
            assert_eq!(store.forget_user("u").await.unwrap(), 1);
        });
    }
}
