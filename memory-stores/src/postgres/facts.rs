//! [`UserMemoryStore`] on PostgreSQL: one row per fact version (current or superseded).
//! An upsert takes a per-user transaction-scoped advisory lock, reads the user's current
//! facts, reconciles them with [`agentmemory_core::store_support::decide`] and writes the result in
//! the same transaction, so concurrent writers (in any process) never lose an update.
//! When this instance keeps the user's facts indexed, an upsert reconciles against them
//! and writes in one round trip, checking the version under the lock (`kept_upsert`);
//! the facts are read under the lock only when nothing is kept or another writer moved
//! the version, then kept and updated in place.
//! Search ranks the user's current facts in Rust (TF-IDF cosine and
//! [`agentmemory_core::facts::rank_score`]).

use agentmemory_core::facts::FactQuery;
use agentmemory_core::store_support::{prepare_candidate, RankedFacts};
use agentmemory_core::{
    FactCandidate, FactChange, MemoryError, MemoryFact, Result, ScoredFact, UserMemoryStore,
};
use async_trait::async_trait;
use chrono::Utc;
use deadpool_postgres::GenericClient;

use super::kept_upsert::LOCK;
use super::{decode, encode, on, PostgresStore};
use crate::fact_rows::{chain, doomed, rows};

impl PostgresStore {
    /// The user's facts, oldest first; only current ones when `current_only`.
    pub(super) async fn load_facts<C: GenericClient>(
        &self,
        client: &C,
        user: &str,
        current_only: bool,
    ) -> Result<Vec<MemoryFact>> {
        let op = "load facts";
        let filter = if current_only { " AND is_current" } else { "" };
        let stmt = client
            .prepare_cached(&format!(
                "SELECT id, body::text FROM {} WHERE user_id = $1{filter} ORDER BY n",
                self.table("facts")
            ))
            .await
            .map_err(on(op))?;
        let rows = client.query(&stmt, &[&user]).await.map_err(on(op))?;
        rows.iter()
            .map(|r| {
                let id: &str = r.try_get(0).map_err(on(op))?;
                let text: &str = r.try_get(1).map_err(on(op))?;
                decode(text, || format!("fact `{id}` in postgres"))
            })
            .collect()
    }

    /// The user's fact version (0 before their first fact), raised by the
    /// `fact_versions` trigger on every change to their facts.
    async fn fact_version<C: GenericClient>(&self, client: &C, user: &str) -> Result<i64> {
        let op = "read the facts' version";
        let stmt = client
            .prepare_cached(&self.version_sql())
            .await
            .map_err(on(op))?;
        client
            .query_opt(&stmt, &[&user])
            .await
            .map_err(on(op))?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(on(op))
            .map(|v| v.unwrap_or(0))
    }

    async fn write_fact<C: GenericClient>(&self, client: &C, fact: &MemoryFact) -> Result<()> {
        let op = "store a fact";
        let body = encode(fact, "fact")?;
        let stmt = client
            .prepare_cached(&format!(
                "INSERT INTO {} (user_id, id, is_current, body) VALUES ($1, $2, $3, $4::text::jsonb) \
                 ON CONFLICT (user_id, id) DO UPDATE \
                 SET is_current = excluded.is_current, body = excluded.body",
                self.table("facts")
            ))
            .await
            .map_err(on(op))?;
        client
            .execute(&stmt, &[&fact.user_id, &fact.id, &fact.is_current(), &body])
            .await
            .map_err(on(op))?;
        Ok(())
    }

    /// `user`'s facts at `version` to reconcile a write against, under the user's lock:
    /// the cached ones when they are current, else read (and their snapshot kept: exact,
    /// taken before this write's versions).
    async fn ranked_for_write<C: GenericClient>(
        &self,
        client: &C,
        user: &str,
        version: i64,
    ) -> Result<RankedFacts> {
        if let Some(ranked) = self.fact_cache.take(user, version) {
            return Ok(ranked);
        }
        let opened = self.open_facts(client, user, version, true).await?;
        if let Some(bytes) = &opened.snapshot {
            self.keep_snapshot(client, user, version, bytes).await?;
        }
        Ok(opened.ranked)
    }
}

/// Locks `user`'s facts until the end of the transaction.
async fn lock_user<C: GenericClient>(client: &C, user: &str) -> Result<()> {
    let op = "lock a user's facts";
    let stmt = client.prepare_cached(LOCK).await.map_err(on(op))?;
    client.execute(&stmt, &[&user]).await.map_err(on(op))?;
    Ok(())
}

impl PostgresStore {
    /// Keeps the snapshot a search made of the user's facts at `version`, unless they
    /// moved since (a later open makes another).
    async fn keep_snapshot_at(&self, user: &str, version: i64, bytes: &[u8]) -> Result<()> {
        let op = "keep a fact snapshot";
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            lock_user(&tx, user).await?;
            if self.fact_version(&tx, user).await? == version {
                self.keep_snapshot(&tx, user, version, bytes).await?;
            }
            tx.commit().await.map_err(on(op))
        })
        .await
    }
}

#[async_trait]
impl UserMemoryStore for PostgresStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        let op = "upsert a fact";
        self.bounded(op, async {
            let candidate = match self.upsert_kept(user_id, candidate, op).await? {
                Ok(change) => return Ok(change),
                Err(candidate) => candidate,
            };
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            lock_user(&tx, user_id).await?;
            // Exact: every writer of the user's facts holds this lock.
            let version = self.fact_version(&tx, user_id).await?;
            let now = Utc::now();
            // Read once, then kept and updated in place: the next upsert (or search) of
            // this user does not read every fact again.
            let mut ranked = self.ranked_for_write(&tx, user_id, version).await?;
            let change = ranked.plan(user_id, candidate, now)?;
            if let FactChange::Ignored { .. } = change {
                self.fact_cache.put(user_id, version, ranked);
                return Ok(change);
            }
            // What the change ended takes the facts about it along, in this transaction.
            let dependents = ranked.dependents(&change);
            let made = || std::iter::once(&change).chain(&dependents);
            for row in made().flat_map(rows) {
                self.write_fact(&tx, row.fact).await?;
            }
            let written = self.fact_version(&tx, user_id).await?;
            tx.commit().await.map_err(on(op))?;
            self.fact_cache.advance(user_id, ranked, made(), written);
            Ok(change)
        })
        .await
    }

    /// Every candidate reconciled and written in one transaction under the user's lock
    /// (one commit for the facts of a turn).
    async fn upsert_many(
        &self,
        user_id: &str,
        candidates: Vec<FactCandidate>,
    ) -> Result<Vec<FactChange>> {
        let candidates = candidates
            .into_iter()
            .map(prepare_candidate)
            .collect::<Result<Vec<_>>>()?;
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let op = "upsert facts";
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            lock_user(&tx, user_id).await?;
            // Exact: every writer of the user's facts holds this lock.
            let version = self.fact_version(&tx, user_id).await?;
            let now = Utc::now();
            let mut ranked = self.ranked_for_write(&tx, user_id, version).await?;
            let mut changes = Vec::with_capacity(candidates.len());
            for candidate in candidates {
                let change = ranked.plan(user_id, candidate, now)?;
                if !matches!(change, FactChange::Ignored { .. }) {
                    let dependents = ranked.dependents(&change);
                    let made = || std::iter::once(&change).chain(&dependents);
                    for row in made().flat_map(rows) {
                        self.write_fact(&tx, row.fact).await?;
                    }
                    if !made().all(|made| ranked.apply(made)) {
                        // The index missed a fact: read again, this transaction's rows
                        // included, for the next candidate.
                        let at = self.fact_version(&tx, user_id).await?;
                        ranked = self.open_facts(&tx, user_id, at, true).await?.ranked;
                    }
                }
                changes.push(change);
            }
            let written = self.fact_version(&tx, user_id).await?;
            tx.commit().await.map_err(on(op))?;
            self.fact_cache.put(user_id, written, ranked);
            Ok(changes)
        })
        .await
    }

    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let op = "search facts";
        let (ranked, made) = self
            .bounded(op, async {
                let client = self.client(op).await?;
                let version = self.fact_version(&client, user_id).await?;
                if let Some(ranked) = self.fact_cache.get(user_id, version) {
                    return Ok((ranked, None));
                }
                let opened = self.open_facts(&client, user_id, version, false).await?;
                let made = opened.snapshot.map(|bytes| (version, bytes));
                Ok((self.fact_cache.put(user_id, version, opened.ranked), made))
            })
            .await?;
        let hits = ranked.rank(query, self.policy, Utc::now());
        if let Some((version, bytes)) = made {
            if let Err(e) = self.keep_snapshot_at(user_id, version, &bytes).await {
                tracing::warn!(store = "postgres", error = %e, "fact snapshot not kept");
            }
        }
        Ok(hits)
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let op = "list facts";
        self.bounded(op, async {
            let client = self.client(op).await?;
            self.load_facts(&client, user_id, true).await
        })
        .await
    }

    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        let op = "get a fact";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT body::text FROM {} WHERE user_id = $1 AND id = $2",
                        self.table("facts")
                    ),
                    &[&user_id, &fact_id],
                )
                .await
                .map_err(on(op))?;
            row.map(|r| {
                let text: &str = r.try_get(0).map_err(on(op))?;
                decode(text, || format!("fact `{fact_id}` in postgres"))
            })
            .transpose()
        })
        .await
    }

    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        let op = "delete a fact";
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            lock_user(&tx, user_id).await?;
            let all = self.load_facts(&tx, user_id, false).await?;
            let ids = doomed(&all, fact_id);
            if ids.is_empty() {
                return Ok(false);
            }
            tx.execute(
                &format!(
                    "DELETE FROM {} WHERE user_id = $1 AND id = ANY($2)",
                    self.table("facts")
                ),
                &[&user_id, &ids],
            )
            .await
            .map_err(on(op))?;
            tx.commit().await.map_err(on(op))?;
            Ok(true)
        })
        .await
    }

    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        let op = "forget a user";
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            lock_user(&tx, user_id).await?;
            let n = tx
                .execute(
                    &format!("DELETE FROM {} WHERE user_id = $1", self.table("facts")),
                    &[&user_id],
                )
                .await
                .map_err(on(op))?;
            self.forget_snapshot(&tx, user_id).await?;
            tx.commit().await.map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
        .await
    }

    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        let op = "import facts";
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            lock_user(&tx, user_id).await?;
            let stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO {} (user_id, id, is_current, body) VALUES ($1, $2, $3, $4::text::jsonb) \
                     ON CONFLICT (user_id, id) DO NOTHING",
                    self.table("facts")
                ))
                .await
                .map_err(on(op))?;
            let mut written = 0u64;
            for mut fact in records {
                user_id.clone_into(&mut fact.user_id);
                let body = encode(&fact, "fact")?;
                written += tx
                    .execute(&stmt, &[&user_id, &fact.id, &fact.is_current(), &body])
                    .await
                    .map_err(on(op))?;
            }
            tx.commit().await.map_err(on(op))?;
            Ok(written as usize)
        })
        .await
    }

    async fn versions(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let op = "read every version of the facts";
        self.bounded(op, async {
            let client = self.client(op).await?;
            self.load_facts(&client, user_id, false).await
        })
        .await
    }

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        let op = "read a fact's history";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let all = self.load_facts(&client, user_id, false).await?;
            Ok(chain(&all, fact_id))
        })
        .await
    }
}
