//! [`UserMemoryStore`] as one JSON file per user, holding every fact (current and
//! superseded) oldest first.
//!
//! A write loads the user's file, reconciles the candidate with the current facts
//! ([`reconcile_by_meaning`](agentmemory_core::store_support::reconcile_by_meaning), the rules every backend shares) and rewrites the file
//! atomically under the file's lock; reads rank the loaded facts with the shared ranking.

use std::path::PathBuf;

use agentmemory_core::facts::FactQuery;
use agentmemory_core::store_support::{plan_change, prepare_candidate};
use agentmemory_core::{
    FactCandidate, FactChange, MemoryError, MemoryFact, Result, ScoredFact, UserMemoryStore,
};
use async_trait::async_trait;
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::atomic::{read_doc, remove, write_doc, FORMAT_VERSION};
use super::{FileStore, FACTS_DIR};
use crate::fact_rows::{chain, doomed, rows};

const FORMAT: &str = "agentmem.facts";

/// The document in a user's file.
#[derive(Serialize, Deserialize)]
pub(super) struct FactsFile {
    format: String,
    version: u32,
    user: String,
    /// Every fact of the user, history included, oldest first.
    pub(super) facts: Vec<MemoryFact>,
}

impl FactsFile {
    fn new(user: &str) -> Self {
        Self {
            format: FORMAT.to_owned(),
            version: FORMAT_VERSION,
            user: user.to_owned(),
            facts: Vec::new(),
        }
    }
}

/// Applies `candidate` to `facts`: reconciled against the current ones, the change's
/// rows replace the facts with their ids or are appended.
fn apply(user: &str, facts: &mut Vec<MemoryFact>, candidate: FactCandidate) -> Result<FactChange> {
    let live: Vec<MemoryFact> = facts.iter().filter(|f| f.is_current()).cloned().collect();
    let change = plan_change(user, &live, candidate, Utc::now())?;
    for row in rows(&change) {
        if row.new {
            facts.push(row.fact.clone());
        } else {
            let stored = facts
                .iter_mut()
                .find(|f| f.id == row.fact.id)
                .ok_or_else(|| MemoryError::not_found("fact", row.fact.id.clone()))?;
            *stored = row.fact.clone();
        }
    }
    Ok(change)
}

impl FileStore {
    fn facts_path(&self, user: &str) -> Result<PathBuf> {
        self.path(FACTS_DIR, "user id", user)
    }

    /// Loads, changes and saves one user's file under its lock; `f` says whether it changed
    /// anything. A file left without facts is removed.
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
        let path = self.facts_path(user)?;
        let owner = user.to_owned();
        self.exclusive(path.clone(), operation, move || {
            let mut file =
                read_doc::<FactsFile>(&path, FORMAT)?.unwrap_or_else(|| FactsFile::new(&owner));
            let (out, changed) = f(&mut file)?;
            if changed {
                if file.facts.is_empty() {
                    remove(&path)?;
                } else {
                    write_doc(&path, &file)?;
                }
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
        let path = self.facts_path(user)?;
        let file = self
            .blocking(operation, move || read_doc::<FactsFile>(&path, FORMAT))
            .await?;
        Ok(file.map(|f| f.facts).unwrap_or_default())
    }
}

#[async_trait]
impl UserMemoryStore for FileStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        let user = user_id.to_owned();
        self.modify_facts(user_id, "upsert a fact", move |file| {
            let change = apply(&user, &mut file.facts, candidate)?;
            // a contest is recorded on the fact, so it is written too
            let changed = !matches!(change, FactChange::Ignored { .. });
            Ok((change, changed))
        })
        .await
    }

    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let facts = self.read_facts(user_id, "search facts").await?;
        Ok(agentmemory_core::store_support::rank_facts(
            facts,
            query,
            self.policy,
            Utc::now(),
        ))
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

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        let facts = self.read_facts(user_id, "read a fact's history").await?;
        Ok(chain(&facts, fact_id))
    }

    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        let user = user_id.to_owned();
        self.modify_facts(user_id, "import facts", move |file| {
            let mut written = 0;
            for mut fact in records {
                if file.facts.iter().any(|f| f.id == fact.id) {
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
