//! `InMemoryUserMemoryStore`: facts per user, reconciled on write, ranked on read, through
//! the same engine ([`RankedFacts`]) as every persistent store.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use dashmap::DashMap;
use parking_lot::RwLock;

use super::versions;
use super::{
    prepare_candidate, FactCandidate, FactChange, FactPolicy, FactQuery, MemoryFact, RankedFacts,
    ScoredFact, UserMemoryStore,
};
use crate::error::{MemoryError, Result};

mod reembed;

/// A [`UserMemoryStore`] held in memory.
///
/// Each user has their own lock (users never contend with each other), all versions of
/// their facts, and their current facts in a [`RankedFacts`] (the engine the persistent
/// stores cache per user): reconciled and planned by [`RankedFacts::plan`], updated in
/// place by [`RankedFacts::apply`], searched by [`RankedFacts::rank`], so a search costs
/// O(the user's current facts) whatever the number of users, and every backend decides
/// and ranks alike.
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
    /// The model recorded as having made the vectors ([`crate::reembed::Reembed`]).
    embedding_model: parking_lot::Mutex<Option<crate::reembed::EmbeddingModel>>,
}

impl fmt::Debug for InMemoryUserMemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryUserMemoryStore")
            .field("users", &self.users.len())
            .field("policy", &self.policy)
            .finish()
    }
}

/// One user's facts: the current ones indexed, the superseded versions beside them.
#[derive(Debug, Default)]
struct UserFacts {
    current: RankedFacts,
    superseded: HashMap<String, MemoryFact>,
    /// Set when `forget_user` unlinks this state; a writer that fetched it before then
    /// must fetch the user again.
    retired: bool,
}

impl UserFacts {
    fn get(&self, id: &str) -> Option<&MemoryFact> {
        self.current.current(id).or_else(|| self.superseded.get(id))
    }

    /// Every version, current and superseded.
    fn versions(&self) -> Vec<MemoryFact> {
        self.current
            .facts()
            .chain(self.superseded.values())
            .cloned()
            .collect()
    }

    /// Plans what `candidate` changes and makes the change, with the facts about what it
    /// ended ([`RankedFacts::dependents`](super::RankedFacts::dependents)).
    fn upsert(
        &mut self,
        user_id: &str,
        candidate: FactCandidate,
        now: chrono::DateTime<Utc>,
    ) -> Result<FactChange> {
        let change = self.current.plan(user_id, candidate, now)?;
        let dependents = self.current.dependents(&change);
        for change in std::iter::once(&change).chain(&dependents) {
            self.make(change)?;
        }
        Ok(change)
    }

    /// Makes one planned change: the index updated in place, a superseded fact (or a
    /// statement folded in behind a later one) kept as history.
    fn make(&mut self, change: &FactChange) -> Result<()> {
        if !self.current.apply(change) {
            // The plan was made against these very facts under this lock.
            return Err(MemoryError::invalid(
                "fact change",
                "planned against facts the index does not hold",
            ));
        }
        match change {
            FactChange::Superseded { old: gone, .. } | FactChange::Closed { fact: gone } => {
                self.superseded.insert(gone.id.clone(), gone.clone());
            }
            FactChange::Added { fact } if !fact.is_current() => {
                self.superseded.insert(fact.id.clone(), fact.clone());
            }
            _ => {}
        }
        Ok(())
    }

    fn delete(&mut self, id: &str) -> bool {
        let doomed = versions::doomed(&self.versions(), id);
        for c in &doomed {
            if self.superseded.remove(c).is_none() {
                if let Some(fact) = self.current.current(c).cloned() {
                    self.current.apply(&FactChange::Deleted { fact });
                }
            }
        }
        !doomed.is_empty()
    }

    fn history(&self, id: &str) -> Vec<MemoryFact> {
        if self.get(id).is_none() {
            return Vec::new();
        }
        versions::chain(&self.versions(), id)
    }

    /// Writes `fact` as it is (an import): current ones into the index, superseded ones
    /// into the history. Whether it was new.
    fn import(&mut self, user_id: &str, mut fact: MemoryFact) -> bool {
        if self.get(&fact.id).is_some() {
            return false;
        }
        user_id.clone_into(&mut fact.user_id);
        if fact.superseded_by.is_some() {
            self.superseded.insert(fact.id.clone(), fact);
            true
        } else {
            self.current.apply(&FactChange::Added { fact })
        }
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
            embedding_model: parking_lot::Mutex::new(None),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> FactPolicy {
        self.policy
    }

    fn user(&self, user_id: &str) -> Option<Arc<RwLock<UserFacts>>> {
        self.users.get(user_id).map(|u| Arc::clone(&u))
    }

    /// Runs `write` on the user's state under its write lock, creating the state when
    /// the user has none and starting over when it was forgotten meanwhile.
    fn write<T>(&self, user_id: &str, write: impl FnOnce(&mut UserFacts) -> T) -> T {
        loop {
            let user = match self.user(user_id) {
                Some(u) => u,
                None => Arc::clone(&self.users.entry(user_id.to_owned()).or_default()),
            };
            let mut user = user.write();
            if user.retired {
                continue; // forgotten meanwhile: write to the user's fresh state
            }
            return write(&mut user);
        }
    }
}

#[async_trait]
impl UserMemoryStore for InMemoryUserMemoryStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        self.write(user_id, |user| user.upsert(user_id, candidate, Utc::now()))
    }

    /// Ranked by [`RankedFacts::rank`], the search of every backend.
    async fn search_query(&self, user_id: &str, q: &FactQuery) -> Result<Vec<ScoredFact>> {
        let mut query = FactQuery::new(q.text.clone(), q.top_k);
        if let Some(embedding) = q.embedding.clone() {
            query = query.with_embedding(crate::vector::normalized(embedding, "query embedding")?);
        }
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let Some(user) = self.user(user_id) else {
            return Ok(Vec::new());
        };
        let user = user.read();
        Ok(user.current.rank(&query, self.policy, Utc::now()))
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let Some(user) = self.user(user_id) else {
            return Ok(Vec::new());
        };
        let user = user.read();
        Ok(user.current.facts().cloned().collect())
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
        let count = state.current.len() + state.superseded.len();
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
        Ok(self.write(user_id, |user| {
            records
                .into_iter()
                .map(|fact| user.import(user_id, fact))
                .filter(|&new| new)
                .count()
        }))
    }

    async fn versions(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        Ok(self
            .user(user_id)
            .map(|u| u.read().versions())
            .unwrap_or_default())
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
    fn index_follows_supersession() {
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
            // Superseding the first fact buries its slot; the others keep theirs.
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
            let mut facts = Vec::new();
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
                facts.push(fact);
            }
            let user = UserFacts {
                current: RankedFacts::new(facts.clone()),
                ..UserFacts::default()
            };
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
