//! [`UserMemoryStore`] as one JSON file per user holding every fact (current and
//! superseded) oldest first, followed by a log of the upserts since (see `fact_state`).
//!
//! Every operation on a user's facts runs under the user's file lock. An upsert
//! reconciles the candidate with the user's kept current facts
//! ([`RankedFacts::plan`](agentmemory_core::store_support::RankedFacts::plan), the rules
//! every backend shares) and appends what it wrote to the log; a search ranks the kept
//! facts with the shared ranking. Both read the files only when nothing is kept or the
//! files changed since. Deleting, forgetting and importing rewrite the file atomically
//! (the log folded in).

use agentmemory_core::facts::FactQuery;
use agentmemory_core::store_support::prepare_candidate;
use agentmemory_core::{
    FactCandidate, FactChange, MemoryFact, Result, ScoredFact, UserMemoryStore,
};
use async_trait::async_trait;
use chrono::Utc;

use super::fact_state::{load, rewrite, FactsFile, Paths};
use super::{FileStore, FACTS_DIR};
use crate::fact_rows::{chain, doomed, rows};

impl FileStore {
    fn fact_paths(&self, user: &str) -> Result<Paths> {
        Ok(Paths::new(self.path(FACTS_DIR, "user id", user)?))
    }

    /// Loads, changes and saves one user's facts under their lock; `f` says whether it
    /// changed anything. The facts file is then rewritten with every fact (the log folded
    /// in); a user left without facts has no files.
    pub(super) async fn modify_facts<T, F>(
        &self,
        user: &str,
        operation: &'static str,
        f: F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut FactsFile) -> Result<(T, bool)> + Send + 'static,
    {
        let paths = self.fact_paths(user)?;
        let owner = user.to_owned();
        let inner = std::sync::Arc::clone(&self.inner);
        self.exclusive(paths.file.clone(), operation, move || {
            inner.kept.forget(&owner);
            let mut file = load(&paths, &owner)?.file;
            let (out, changed) = f(&mut file)?;
            if changed {
                rewrite(&paths, &mut file)?;
            }
            Ok(out)
        })
        .await
    }

    /// Every fact of `user`, history included, oldest first.
    pub(super) async fn read_facts(
        &self,
        user: &str,
        operation: &'static str,
    ) -> Result<Vec<MemoryFact>> {
        let paths = self.fact_paths(user)?;
        let owner = user.to_owned();
        self.exclusive(paths.file.clone(), operation, move || {
            Ok(load(&paths, &owner)?.file.facts)
        })
        .await
    }
}

#[async_trait]
impl UserMemoryStore for FileStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        let paths = self.fact_paths(user_id)?;
        let user = user_id.to_owned();
        let inner = std::sync::Arc::clone(&self.inner);
        let limit = self.fact_log_limit;
        self.exclusive(paths.file.clone(), "upsert a fact", move || {
            let mut kept = inner.kept.take_or_load(&paths, &user)?;
            let now = Utc::now();
            let change = kept.ranked.plan(&user, candidate, now)?;
            // What the change ended takes the facts about it along, in the same append.
            let dependents = kept.ranked.dependents(&change);
            let made = || std::iter::once(&change).chain(&dependents);
            // A contest is recorded on the fact, so it is written too.
            let written: Vec<&MemoryFact> = made().flat_map(rows).map(|r| r.fact).collect();
            if !written.is_empty() {
                kept.write(&paths, &user, &written, limit)?;
                if !made().all(|made| kept.ranked.apply(made)) {
                    return Ok(change);
                }
            }
            inner.kept.put(&user, kept);
            Ok(change)
        })
        .await
    }

    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let paths = self.fact_paths(user_id)?;
        let user = user_id.to_owned();
        let inner = std::sync::Arc::clone(&self.inner);
        let (query, policy) = (query.clone(), self.policy);
        self.exclusive(paths.file.clone(), "search facts", move || {
            let kept = inner.kept.take_or_load(&paths, &user)?;
            let hits = kept.ranked.rank(&query, policy, Utc::now());
            inner.kept.put(&user, kept);
            Ok(hits)
        })
        .await
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let facts = self.read_facts(user_id, "list facts").await?;
        Ok(facts.into_iter().filter(MemoryFact::is_current).collect())
    }

    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        let facts = self.read_facts(user_id, "get a fact").await?;
        Ok(facts.into_iter().find(|f| f.id == fact_id))
    }

    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        let fact_id = fact_id.to_owned();
        self.modify_facts(user_id, "delete a fact", move |file| {
            let doomed = doomed(&file.facts, &fact_id);
            if doomed.is_empty() {
                return Ok((false, false));
            }
            file.facts.retain(|f| !doomed.contains(&f.id));
            Ok((true, true))
        })
        .await
    }

    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        self.modify_facts(user_id, "forget a user", |file| {
            let n = file.facts.len();
            file.facts.clear();
            Ok((n, n > 0))
        })
        .await
    }

    async fn versions(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        self.read_facts(user_id, "read every version of the facts")
            .await
    }

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        let facts = self.read_facts(user_id, "read a fact's history").await?;
        Ok(chain(&facts, fact_id))
    }

    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        let user = user_id.to_owned();
        self.modify_facts(user_id, "import facts", move |file| {
            let mut held: std::collections::HashSet<String> =
                file.facts.iter().map(|f| f.id.clone()).collect();
            let mut written = 0;
            for mut fact in records {
                if !held.insert(fact.id.clone()) {
                    continue;
                }
                fact.user_id.clone_from(&user);
                file.facts.push(fact);
                written += 1;
            }
            Ok((written, written > 0))
        })
        .await
    }
}
