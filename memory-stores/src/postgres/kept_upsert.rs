//! The upsert of a user whose facts this instance keeps indexed (see `fact_cache`): one
//! round trip to the server.
//!
//! The candidate is reconciled against the kept facts first, optimistically, as if the
//! version they were read at were still the user's; then one pipeline (every statement
//! sent before any answer is awaited) runs, in one transaction: `BEGIN`, the user's
//! advisory lock (the one every writer of their facts takes), one statement writing the
//! change's rows only if the user's version is still the kept one, the version after it,
//! `COMMIT`. When the version moved (another writer came in between), nothing is written
//! and the caller takes the path that reads the user's facts under the lock, so no update
//! of another writer is ever lost. The statements are prepared once per connection.
//!
//! Nothing is acknowledged before the `COMMIT`'s answer, and every statement of the
//! pipeline is sent together, `COMMIT` included: a call cancelled or failing half-way
//! never leaves a transaction open on a pooled connection (a failed statement makes the
//! server roll the rest back).

use agentmemory_core::{FactCandidate, FactChange, Result};
use chrono::Utc;
use deadpool_postgres::GenericClient;
use futures_util::future::{try_join3, try_join5};

use super::{encode, on, PostgresStore};
use crate::fact_rows::rows;

/// Takes the user's advisory lock until the end of the transaction.
pub(super) const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))";

impl PostgresStore {
    /// `SELECT` of the user's fact version (no row before their first fact).
    pub(super) fn version_sql(&self) -> String {
        format!(
            "SELECT version FROM {} WHERE user_id = $1",
            self.table("fact_versions")
        )
    }

    /// One statement writing a change's rows (`$2` ids, `$3` whether each is current,
    /// `$4` JSON bodies) for user `$1`, only if the user's version is `$5`: how many it
    /// wrote (0 when the version moved).
    fn write_if_sql(&self) -> String {
        format!(
            "INSERT INTO {facts} (user_id, id, is_current, body) \
             SELECT $1, r.id, r.is_current, r.body::jsonb \
             FROM unnest($2::text[], $3::bool[], $4::text[]) AS r(id, is_current, body) \
             WHERE COALESCE((SELECT version FROM {versions} WHERE user_id = $1), 0) = $5 \
             ON CONFLICT (user_id, id) DO UPDATE \
             SET is_current = excluded.is_current, body = excluded.body",
            facts = self.table("facts"),
            versions = self.table("fact_versions"),
        )
    }

    /// An upsert reconciled against the user's kept facts and written in one round trip.
    /// `Err(candidate)` when nothing usable is kept or the user's version moved since:
    /// the caller then reads the user's facts under the lock.
    pub(super) async fn upsert_kept(
        &self,
        user: &str,
        candidate: FactCandidate,
        op: &'static str,
    ) -> Result<std::result::Result<FactChange, FactCandidate>> {
        let Some((version, mut ranked)) = self.fact_cache.take_any(user) else {
            return Ok(Err(candidate));
        };
        let now = Utc::now();
        let change = ranked.plan(user, candidate.clone(), now)?;
        // What the change ended takes the facts about it along, in the same statement.
        let dependents = ranked.dependents(&change);
        let made = || std::iter::once(&change).chain(&dependents);
        let written: Vec<_> = made().flat_map(rows).collect();
        let client = self.client(op).await?;
        if written.is_empty() {
            // Nothing to write, so no statement checks the version: this read does.
            let read = client
                .prepare_cached(&self.version_sql())
                .await
                .map_err(on(op))?;
            let now = client
                .query_opt(&read, &[&user])
                .await
                .map_err(on(op))?
                .map(|r| r.try_get::<_, i64>(0))
                .transpose()
                .map_err(on(op))?
                .unwrap_or(0);
            if now != version {
                return Ok(Err(candidate));
            }
            self.fact_cache.put(user, version, ranked);
            return Ok(Ok(change));
        }
        let ids: Vec<&str> = written.iter().map(|r| r.fact.id.as_str()).collect();
        let current: Vec<bool> = written.iter().map(|r| r.fact.is_current()).collect();
        let bodies = written
            .iter()
            .map(|r| encode(r.fact, "fact"))
            .collect::<Result<Vec<String>>>()?;
        let (lock, write, read) = try_join3(
            client.prepare_cached(LOCK),
            client.prepare_cached(&self.write_if_sql()),
            client.prepare_cached(&self.version_sql()),
        )
        .await
        .map_err(on(op))?;
        // Polled in this order on the first poll, each request queued as it is polled:
        // the five go out together, in order.
        let (_, _, n, after, _) = try_join5(
            client.batch_execute("BEGIN"),
            client.execute(&lock, &[&user]),
            client.execute(&write, &[&user, &ids, &current, &bodies, &version]),
            client.query_opt(&read, &[&user]),
            client.batch_execute("COMMIT"),
        )
        .await
        .map_err(on(op))?;
        if n == 0 {
            return Ok(Err(candidate));
        }
        let after: i64 = after
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(on(op))?
            .unwrap_or(0);
        self.fact_cache.advance(user, ranked, made(), after);
        Ok(Ok(change))
    }
}
