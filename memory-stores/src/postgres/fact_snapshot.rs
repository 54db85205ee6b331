//! Opening a user's facts without reading them all: a snapshot of the user's indexed facts
//! ([`RankedFacts::snapshot`]) kept in `fact_snapshots` at one version of the user's
//! facts, with the largest row number it covered, and brought up to date from `fact_log`
//! (the id every change since wrote, logged by the version trigger) through
//! [`replay`](crate::fact_replay::replay): three statements and the bytes of the
//! snapshot instead of every fact's JSON.
//!
//! The snapshot is used only when the log holds every version since it was taken (the
//! trigger keeps the last 4,096): otherwise, or when it cannot be read back (damaged,
//! another build's format or text analysis), the facts are read as before and a new
//! snapshot is made of them, so a bad snapshot costs one slow open, never a wrong answer.
//! Users with fewer than [`MIN_FACTS`] current facts have none: reading theirs is cheap.

use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::{MemoryFact, Result};
use deadpool_postgres::GenericClient;

use super::{decode, on, PostgresStore};
use crate::fact_replay::{replay, Written};

/// Fewest current facts for which a snapshot is kept.
const MIN_FACTS: usize = 1_000;

/// A user's facts as opened: indexed, and the snapshot to keep when they were read in
/// full (and are many).
pub(super) struct Opened {
    pub(super) ranked: RankedFacts,
    pub(super) snapshot: Option<Vec<u8>>,
}

impl PostgresStore {
    /// The user's current facts at `version` (read by the caller just before), from the
    /// snapshot and the log when they allow it, from every row otherwise; filed for
    /// reconciliation too when `for_writes` (see [`RankedFacts::from_snapshot_for_writes`]).
    pub(super) async fn open_facts<C: GenericClient>(
        &self,
        client: &C,
        user: &str,
        version: i64,
        for_writes: bool,
    ) -> Result<Opened> {
        match self.read_snapshot(client, user, version, for_writes).await {
            Ok(Some(ranked)) => {
                return Ok(Opened {
                    ranked,
                    snapshot: None,
                })
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(
                store = "postgres",
                user,
                error = %e,
                "fact snapshot not usable; reading every fact"
            ),
        }
        let facts = self.load_facts(client, user, true).await?;
        if facts.len() < MIN_FACTS {
            return Ok(Opened {
                ranked: RankedFacts::new(facts),
                snapshot: None,
            });
        }
        let user = user.to_owned();
        // Analysing and encoding 100,000 facts is CPU work: off the async workers.
        let (ranked, bytes) =
            tokio::task::spawn_blocking(move || RankedFacts::new_with_snapshot(facts, &user))
                .await
                .map_err(|e| agentmemory_core::MemoryError::store("postgres", "index facts", e))?;
        Ok(Opened {
            ranked,
            snapshot: Some(bytes),
        })
    }

    /// The snapshot brought up to `version`; `None` when there is none or the log does
    /// not reach back to it.
    async fn read_snapshot<C: GenericClient>(
        &self,
        client: &C,
        user: &str,
        version: i64,
        for_writes: bool,
    ) -> Result<Option<RankedFacts>> {
        let op = "read a fact snapshot";
        let stmt = client
            .prepare_cached(&format!(
                "SELECT version, last_n, body FROM {} WHERE user_id = $1",
                self.table("fact_snapshots")
            ))
            .await
            .map_err(on(op))?;
        let Some(row) = client.query_opt(&stmt, &[&user]).await.map_err(on(op))? else {
            return Ok(None);
        };
        let taken: i64 = row.try_get(0).map_err(on(op))?;
        let last_n: i64 = row.try_get(1).map_err(on(op))?;
        if taken > version {
            return Ok(None);
        }
        let stmt = client
            .prepare_cached(&format!(
                "SELECT id FROM {} WHERE user_id = $1 AND version > $2 AND version <= $3",
                self.table("fact_log")
            ))
            .await
            .map_err(on(op))?;
        let logged = client
            .query(&stmt, &[&user, &taken, &version])
            .await
            .map_err(on(op))?;
        // One log row per version (its key): as many rows as versions is every version.
        if i64::try_from(logged.len()).ok() != Some(version - taken) {
            return Ok(None);
        }
        let mut ids = logged
            .iter()
            .map(|r| r.try_get::<_, String>(0))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(on(op))?;
        ids.sort_unstable();
        ids.dedup();
        let mut written: Vec<Written<i64>> = Vec::with_capacity(ids.len());
        if !ids.is_empty() {
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT id, n, body::text FROM {} WHERE user_id = $1 AND id = ANY($2)",
                    self.table("facts")
                ))
                .await
                .map_err(on(op))?;
            let rows = client.query(&stmt, &[&user, &ids]).await.map_err(on(op))?;
            let mut stored = std::collections::HashMap::with_capacity(rows.len());
            for r in &rows {
                let id: String = r.try_get(0).map_err(on(op))?;
                let n: i64 = r.try_get(1).map_err(on(op))?;
                let text: &str = r.try_get(2).map_err(on(op))?;
                let fact: MemoryFact = decode(text, || format!("fact `{id}` in postgres"))?;
                stored.insert(id, (n, fact));
            }
            for id in ids {
                let now = stored.remove(&id);
                written.push((id, now));
            }
        }
        let user = user.to_owned();
        tokio::task::spawn_blocking(move || {
            // Read in place, in the row's own buffer: no copy of the (many-megabyte) body.
            let bytes: &[u8] = row.try_get(2).map_err(on(op))?;
            let mut ranked = if for_writes {
                RankedFacts::from_snapshot_for_writes(bytes, &user)?
            } else {
                RankedFacts::from_snapshot(bytes, &user)?
            };
            drop(row);
            Ok(replay(&mut ranked, written, Some(&last_n)).then_some(ranked))
        })
        .await
        .map_err(|e| agentmemory_core::MemoryError::store("postgres", op, e))?
    }

    /// Keeps `bytes`, the snapshot of the user's facts at `version`, replacing the one
    /// kept. The caller holds the user's lock and has checked that the facts are still at
    /// `version`, so the largest row number read here is the snapshot's.
    pub(super) async fn keep_snapshot<C: GenericClient>(
        &self,
        client: &C,
        user: &str,
        version: i64,
        bytes: &[u8],
    ) -> Result<()> {
        let op = "keep a fact snapshot";
        let stmt = client
            .prepare_cached(&format!(
                "INSERT INTO {snapshots} (user_id, version, last_n, body) \
                 SELECT $1, $2, coalesce(max(n), 0), $3 FROM {facts} WHERE user_id = $1 \
                 ON CONFLICT (user_id) DO UPDATE SET version = excluded.version, \
                 last_n = excluded.last_n, body = excluded.body",
                snapshots = self.table("fact_snapshots"),
                facts = self.table("facts"),
            ))
            .await
            .map_err(on(op))?;
        client
            .execute(&stmt, &[&user, &version, &bytes])
            .await
            .map_err(on(op))?;
        Ok(())
    }

    /// Drops the user's snapshot and log (their facts are gone).
    pub(super) async fn forget_snapshot<C: GenericClient>(
        &self,
        client: &C,
        user: &str,
    ) -> Result<()> {
        let op = "forget a fact snapshot";
        for table in ["fact_snapshots", "fact_log"] {
            client
                .execute(
                    &format!("DELETE FROM {} WHERE user_id = $1", self.table(table)),
                    &[&user],
                )
                .await
                .map_err(on(op))?;
        }
        Ok(())
    }
}
