//! [`UserMemoryStore`] on SQLite: one row per fact version (current or superseded),
//! reconciled with [`agentmemory_core::store_support::decide`] inside the write transaction and
//! ranked with [`agentmemory_core::facts::rank_score`] over TF-IDF relevance. An upsert
//! that finds the user's facts cached at the version it reads inside its transaction
//! reconciles against them instead of reading them, and updates them in place.

use crate::fact_cache::FactCache;
use crate::fact_rows::{chain, doomed, rows};

use agentmemory_core::facts::FactQuery;
use agentmemory_core::store_support::{prepare_candidate, RankedFacts};
use agentmemory_core::{
    FactCandidate, FactChange, MemoryError, MemoryFact, Result, ScoredFact, UserMemoryStore,
};
use async_trait::async_trait;
use chrono::Utc;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{body, fact_snapshot, on, SqliteStore};

fn check_user(user_id: &str) -> Result<()> {
    if user_id.is_empty() {
        return Err(MemoryError::invalid("user id", "must not be empty"));
    }
    Ok(())
}

/// The user's facts, oldest first; only current ones when `current_only`.
pub(super) fn load_facts(
    conn: &Connection,
    label: &str,
    user_id: &str,
    current_only: bool,
) -> Result<Vec<MemoryFact>> {
    let err = on(label, "load facts");
    let sql = if current_only {
        "SELECT id, body FROM facts WHERE user_id = ?1 AND is_current = 1 ORDER BY n"
    } else {
        "SELECT id, body FROM facts WHERE user_id = ?1 ORDER BY n"
    };
    let mut stmt = conn.prepare_cached(sql).map_err(&err)?;
    let mut rows = stmt.query([user_id]).map_err(&err)?;
    let mut facts = Vec::new();
    // Each body decoded where SQLite holds it, without copying it out first.
    while let Some(row) = rows.next().map_err(&err)? {
        let text = row
            .get_ref(1)
            .and_then(|v| {
                v.as_str().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(1, v.data_type(), Box::new(e))
                })
            })
            .map_err(&err)?;
        facts.push(body::decode(text, || {
            let id = row.get::<_, String>(0).unwrap_or_default();
            format!("fact `{id}` in {label}")
        })?);
    }
    Ok(facts)
}

/// The user's fact version (0 before their first fact), raised by the `fact_versions`
/// triggers on every change to their facts.
fn fact_version(conn: &Connection, label: &str, user_id: &str) -> Result<i64> {
    conn.prepare_cached("SELECT version FROM fact_versions WHERE user_id = ?1")
        .and_then(|mut s| s.query_row([user_id], |r| r.get(0)).optional())
        .map(|v| v.unwrap_or(0))
        .map_err(on(label, "read the facts' version"))
}

fn insert_fact(conn: &Connection, label: &str, fact: &MemoryFact) -> Result<()> {
    let text = body::encode(fact, "fact")?;
    conn.prepare_cached(
        "INSERT INTO facts (id, user_id, is_current, body) VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut s| s.execute(params![fact.id, fact.user_id, fact.is_current(), text]))
    .map_err(on(label, "store a fact"))?;
    Ok(())
}

/// Rewrites `user`'s fact `fact.id`. The user is part of the statement, so no id can reach
/// another user's row; a fact that is not the user's is an error (nothing is written:
/// the caller's transaction rolls back).
fn update_fact(conn: &Connection, label: &str, user: &str, fact: &MemoryFact) -> Result<()> {
    let op = "update a fact";
    let text = body::encode(fact, "fact")?;
    let updated = conn
        .prepare_cached(
            "UPDATE facts SET is_current = ?3, body = ?4 WHERE user_id = ?1 AND id = ?2",
        )
        .and_then(|mut s| s.execute(params![user, fact.id, fact.is_current(), text]))
        .map_err(on(label, op))?;
    if updated == 0 {
        return Err(MemoryError::not_found("fact", fact.id.clone()));
    }
    Ok(())
}

/// The rows `change` makes, written in `conn`'s transaction.
fn write_change(conn: &Connection, label: &str, user: &str, change: &FactChange) -> Result<()> {
    for row in rows(change) {
        if row.new {
            insert_fact(conn, label, row.fact)?;
        } else {
            update_fact(conn, label, user, row.fact)?;
        }
    }
    Ok(())
}

/// `user`'s facts at `version` to reconcile a write against, under the write lock: the
/// cached ones when they are current, else read (and their snapshot kept: exact, taken
/// before this write's versions).
fn ranked_for_write(
    conn: &Connection,
    label: &str,
    cache: &FactCache,
    user: &str,
    version: i64,
) -> Result<RankedFacts> {
    if let Some(ranked) = cache.take(user, version) {
        return Ok(ranked);
    }
    let opened = fact_snapshot::open(conn, label, user, version, true)?;
    if let Some(bytes) = &opened.snapshot {
        fact_snapshot::keep(conn, label, user, version, bytes)?;
    }
    Ok(opened.ranked)
}

impl SqliteStore {
    /// Keeps the snapshot a search made of `user`'s facts at `version`, unless they
    /// moved since (a later open makes another). A failure only costs the next open its
    /// speed: it is logged, not returned.
    async fn keep_snapshot(&self, user: String, version: i64, bytes: Vec<u8>) {
        let op = "keep a fact snapshot";
        let kept = self
            .write(op, move |conn, label| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(on(label, op))?;
                if fact_version(&tx, label, &user)? == version {
                    fact_snapshot::keep(&tx, label, &user, version, &bytes)?;
                }
                tx.commit().map_err(on(label, op))
            })
            .await;
        if let Err(e) = kept {
            tracing::warn!(store = %self.inner.label, error = %e, "fact snapshot not kept");
        }
    }
}

#[async_trait]
impl UserMemoryStore for SqliteStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        check_user(user_id)?;
        let op = "upsert a fact";
        let user = user_id.to_owned();
        let store = self.clone();
        self.write(op, move |conn, label| {
            let cache = &store.inner.fact_cache;
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            // Exact: the immediate transaction holds the database's write lock.
            let version = fact_version(&tx, label, &user)?;
            let now = Utc::now();
            // Read once, then kept and updated in place: the next upsert (or search) of
            // this user does not read every fact again.
            let mut ranked = ranked_for_write(&tx, label, cache, &user, version)?;
            let change = ranked.plan(&user, candidate, now)?;
            if let FactChange::Ignored { .. } = change {
                cache.put(&user, version, ranked);
                return Ok(change);
            }
            // What the change ended takes the facts about it along, in this transaction.
            let dependents = ranked.dependents(&change);
            let made = || std::iter::once(&change).chain(&dependents);
            for made in made() {
                write_change(&tx, label, &user, made)?;
            }
            let written = fact_version(&tx, label, &user)?;
            tx.commit().map_err(on(label, op))?;
            cache.advance(&user, ranked, made(), written);
            Ok(change)
        })
        .await
    }

    /// Every candidate reconciled and written in one transaction (one commit for the
    /// facts of a turn), against the user's cached facts when they are current.
    async fn upsert_many(
        &self,
        user_id: &str,
        candidates: Vec<FactCandidate>,
    ) -> Result<Vec<FactChange>> {
        let candidates = candidates
            .into_iter()
            .map(prepare_candidate)
            .collect::<Result<Vec<_>>>()?;
        check_user(user_id)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let op = "upsert facts";
        let user = user_id.to_owned();
        let store = self.clone();
        self.write(op, move |conn, label| {
            let cache = &store.inner.fact_cache;
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            // Exact: the immediate transaction holds the database's write lock.
            let version = fact_version(&tx, label, &user)?;
            let now = Utc::now();
            let mut ranked = ranked_for_write(&tx, label, cache, &user, version)?;
            let mut changes = Vec::with_capacity(candidates.len());
            for candidate in candidates {
                let change = ranked.plan(&user, candidate, now)?;
                if !matches!(change, FactChange::Ignored { .. }) {
                    let dependents = ranked.dependents(&change);
                    let made = || std::iter::once(&change).chain(&dependents);
                    for made in made() {
                        write_change(&tx, label, &user, made)?;
                    }
                    if !made().all(|made| ranked.apply(made)) {
                        // The index missed a fact: read again, this transaction's rows
                        // included, for the next candidate.
                        let at = fact_version(&tx, label, &user)?;
                        ranked = fact_snapshot::open(&tx, label, &user, at, true)?.ranked;
                    }
                }
                changes.push(change);
            }
            let written = fact_version(&tx, label, &user)?;
            tx.commit().map_err(on(label, op))?;
            cache.put(&user, written, ranked);
            Ok(changes)
        })
        .await
    }

    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let op = "search facts";
        let user = user_id.to_owned();
        let query = query.clone();
        let policy = self.policy();
        let store = self.clone();
        let (hits, made) = self
            .read(op, move |conn, label| {
                let cache = &store.inner.fact_cache;
                // One read transaction: the version names exactly the facts read.
                let tx = conn.transaction().map_err(on(label, op))?;
                let version = fact_version(&tx, label, &user)?;
                let (ranked, made) = match cache.get(&user, version) {
                    Some(ranked) => (ranked, None),
                    None => {
                        let opened = fact_snapshot::open(&tx, label, &user, version, false)?;
                        let made = opened.snapshot.map(|bytes| (user.clone(), version, bytes));
                        (cache.put(&user, version, opened.ranked), made)
                    }
                };
                drop(tx);
                Ok((ranked.rank(&query, policy, Utc::now()), made))
            })
            .await?;
        if let Some((user, version, bytes)) = made {
            self.keep_snapshot(user, version, bytes).await;
        }
        Ok(hits)
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let user = user_id.to_owned();
        self.read("list facts", move |conn, label| {
            load_facts(conn, label, &user, true)
        })
        .await
    }

    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        let op = "get a fact";
        let (user, id) = (user_id.to_owned(), fact_id.to_owned());
        self.read(op, move |conn, label| {
            let text: Option<String> = conn
                .prepare_cached("SELECT body FROM facts WHERE user_id = ?1 AND id = ?2")
                .and_then(|mut s| s.query_row([&user, &id], |r| r.get(0)).optional())
                .map_err(on(label, op))?;
            text.map(|t| body::decode(&t, || format!("fact `{id}` in {label}")))
                .transpose()
        })
        .await
    }

    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        let op = "delete a fact";
        let (user, id) = (user_id.to_owned(), fact_id.to_owned());
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let all = load_facts(&tx, label, &user, false)?;
            // The fact and the versions that led to it; later versions stay.
            let doomed = doomed(&all, &id);
            {
                let mut stmt = tx
                    .prepare_cached("DELETE FROM facts WHERE user_id = ?1 AND id = ?2")
                    .map_err(on(label, op))?;
                for doomed_id in &doomed {
                    stmt.execute([&user, doomed_id]).map_err(on(label, op))?;
                }
            }
            tx.commit().map_err(on(label, op))?;
            Ok(!doomed.is_empty())
        })
        .await
    }

    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        let op = "forget a user";
        let user = user_id.to_owned();
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let n = tx
                .prepare_cached("DELETE FROM facts WHERE user_id = ?1")
                .and_then(|mut s| s.execute([&user]))
                .map_err(on(label, op))?;
            fact_snapshot::forget(&tx, label, &user)?;
            tx.commit().map_err(on(label, op))?;
            Ok(n)
        })
        .await
    }

    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        check_user(user_id)?;
        let op = "import facts";
        let user = user_id.to_owned();
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let mut written = 0;
            {
                let mut insert = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO facts (id, user_id, is_current, body) \
                         VALUES (?1, ?2, ?3, ?4)",
                    )
                    .map_err(on(label, op))?;
                for mut fact in records {
                    fact.user_id.clone_from(&user);
                    let text = body::encode(&fact, "fact")?;
                    written += insert
                        .execute(params![fact.id, fact.user_id, fact.is_current(), text])
                        .map_err(on(label, op))?;
                }
            }
            tx.commit().map_err(on(label, op))?;
            Ok(written)
        })
        .await
    }

    async fn versions(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let user = user_id.to_owned();
        self.read("read every version of the facts", move |conn, label| {
            load_facts(conn, label, &user, false)
        })
        .await
    }

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        let (user, id) = (user_id.to_owned(), fact_id.to_owned());
        self.read("read a fact's history", move |conn, label| {
            let all = load_facts(conn, label, &user, false)?;
            Ok(chain(&all, &id))
        })
        .await
    }
}
