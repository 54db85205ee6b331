//! Opening a user's facts without reading them all: a snapshot of the user's indexed facts
//! ([`RankedFacts::snapshot`]) kept in `fact_snapshots` at one version of the user's
//! facts, with the largest row number it covered, and brought up to date from `fact_log`
//! (the id every change since wrote, logged by the version triggers) through
//! [`replay`](crate::fact_replay::replay).
//!
//! The snapshot is used only when the log holds every version since it was taken (the
//! triggers keep the last 4,096): otherwise, or when it cannot be read back (damaged,
//! another build's format or text analysis), the facts are read as before and a new
//! snapshot is made of them, so a bad snapshot costs one slow open, never a wrong answer.
//! Users with fewer than [`MIN_FACTS`] current facts have none: reading theirs is cheap.

use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::{MemoryFact, Result};
use rusqlite::{params, Connection, OptionalExtension};

use super::facts::load_facts;
use super::{body, on};
use crate::fact_replay::{replay, Written};

/// Fewest current facts for which a snapshot is kept.
pub(super) const MIN_FACTS: usize = 1_000;

/// A user's facts as opened: indexed, and the snapshot to keep when they were read in
/// full (and are many).
pub(super) struct Opened {
    pub(super) ranked: RankedFacts,
    pub(super) snapshot: Option<Vec<u8>>,
}

/// The user's current facts at `version` (read by the caller in the same transaction),
/// from the snapshot and the log when they allow it, from every row otherwise; filed for
/// reconciliation too when `for_writes` (see [`RankedFacts::from_snapshot_for_writes`]).
pub(super) fn open(
    conn: &Connection,
    label: &str,
    user: &str,
    version: i64,
    for_writes: bool,
) -> Result<Opened> {
    match from_snapshot(conn, label, user, version, for_writes) {
        Ok(Some(ranked)) => {
            return Ok(Opened {
                ranked,
                snapshot: None,
            })
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(
            store = label,
            user,
            error = %e,
            "fact snapshot not usable; reading every fact"
        ),
    }
    let facts = load_facts(conn, label, user, true)?;
    if facts.len() < MIN_FACTS {
        return Ok(Opened {
            ranked: RankedFacts::new(facts),
            snapshot: None,
        });
    }
    let (ranked, bytes) = RankedFacts::new_with_snapshot(facts, user);
    Ok(Opened {
        ranked,
        snapshot: Some(bytes),
    })
}

/// The snapshot brought up to `version`; `None` when there is none or the log does not
/// reach back to it.
fn from_snapshot(
    conn: &Connection,
    label: &str,
    user: &str,
    version: i64,
    for_writes: bool,
) -> Result<Option<RankedFacts>> {
    let err = on(label, "read a fact snapshot");
    let row: Option<(i64, i64)> = conn
        .prepare_cached("SELECT version, last_n FROM fact_snapshots WHERE user_id = ?1")
        .and_then(|mut s| {
            s.query_row([user], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(&err)?;
    let Some((taken, last_n)) = row else {
        return Ok(None);
    };
    if taken > version {
        return Ok(None);
    }
    let mut ids: Vec<String> = Vec::new();
    {
        let mut stmt = conn
            .prepare_cached(
                "SELECT id FROM fact_log WHERE user_id = ?1 AND version > ?2 AND version <= ?3 \
                 ORDER BY version",
            )
            .map_err(&err)?;
        let mut rows = stmt.query(params![user, taken, version]).map_err(&err)?;
        while let Some(r) = rows.next().map_err(&err)? {
            ids.push(r.get(0).map_err(&err)?);
        }
    }
    // One log row per version (its key): as many rows as versions is every version.
    if i64::try_from(ids.len()).ok() != Some(version - taken) {
        return Ok(None);
    }
    // Read in place, in SQLite's own buffer: no copy of the (many-megabyte) body. The
    // same transaction as the version, so the same snapshot as the row above.
    let read = conn
        .prepare_cached("SELECT body FROM fact_snapshots WHERE user_id = ?1")
        .and_then(|mut s| {
            s.query_row([user], |r| {
                let bytes = r.get_ref(0)?.as_blob()?;
                Ok(if for_writes {
                    RankedFacts::from_snapshot_for_writes(bytes, user)
                } else {
                    RankedFacts::from_snapshot(bytes, user)
                })
            })
        })
        .map_err(&err)?;
    let mut ranked = read?;
    ids.sort_unstable();
    ids.dedup();
    let mut written: Vec<Written<i64>> = Vec::with_capacity(ids.len());
    let mut stmt = conn
        .prepare_cached("SELECT n, body FROM facts WHERE user_id = ?1 AND id = ?2")
        .map_err(&err)?;
    for id in ids {
        let row: Option<(i64, String)> = stmt
            .query_row([user, &id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(&err)?;
        let now = row
            .map(|(n, text)| {
                let fact: MemoryFact = body::decode(&text, || format!("fact `{id}` in {label}"))?;
                Ok::<_, agentmemory_core::MemoryError>((n, fact))
            })
            .transpose()?;
        written.push((id, now));
    }
    Ok(replay(&mut ranked, written, Some(&last_n)).then_some(ranked))
}

/// Keeps `bytes`, the snapshot of the user's facts at `version`, replacing the one kept.
/// The caller holds the write lock and has checked that the user's facts are still at
/// `version`, so the largest row number read here is the snapshot's.
pub(super) fn keep(
    conn: &Connection,
    label: &str,
    user: &str,
    version: i64,
    bytes: &[u8],
) -> Result<()> {
    let err = on(label, "keep a fact snapshot");
    let last_n: i64 = conn
        .prepare_cached("SELECT coalesce(max(n), 0) FROM facts WHERE user_id = ?1")
        .and_then(|mut s| s.query_row([user], |r| r.get(0)))
        .map_err(&err)?;
    conn.prepare_cached(
        "INSERT INTO fact_snapshots (user_id, version, last_n, body) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (user_id) DO UPDATE SET version = excluded.version, \
         last_n = excluded.last_n, body = excluded.body",
    )
    .and_then(|mut s| s.execute(params![user, version, last_n, bytes]))
    .map_err(&err)?;
    Ok(())
}

/// Drops the user's snapshot and log (their facts are gone).
pub(super) fn forget(conn: &Connection, label: &str, user: &str) -> Result<()> {
    let err = on(label, "forget a fact snapshot");
    conn.prepare_cached("DELETE FROM fact_snapshots WHERE user_id = ?1")
        .and_then(|mut s| s.execute([user]))
        .map_err(&err)?;
    conn.prepare_cached("DELETE FROM fact_log WHERE user_id = ?1")
        .and_then(|mut s| s.execute([user]))
        .map_err(&err)?;
    Ok(())
}
