//! Opening a user's facts without reading them all: a snapshot of the user's indexed facts
//! ([`RankedFacts::snapshot`]) kept in the hash `P{facts:HEX user}:snapshot` (fields
//! `version` and `body`) at one version of the user's facts, and brought up to date from
//! the sorted set `P{facts:HEX user}:log` (member `version:fact id`, score the version;
//! the commit script logs every id it writes, for the last 4,096 versions) through
//! [`replay`](crate::fact_replay::replay). One script reads the version, the snapshot's
//! version, the log and the facts written since, atomically; the body follows by `HMGET`
//! with the version it was kept at, used only if that is the version the script saw.
//!
//! The snapshot is used only when the log holds every version since it was taken: a
//! version no commit logged (an import, a forget, a re-embedding pass, a writer of an
//! earlier build) makes it unusable, as does a snapshot that cannot be read back (damaged,
//! another build's format or text analysis); the facts are then read as before and a new
//! snapshot kept, so a bad snapshot costs one slow open, never a wrong answer. Users with
//! fewer than [`MIN_FACTS`] current facts have none: reading theirs is cheap.

use std::sync::LazyLock;

use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::{MemoryError, MemoryFact, Result};
use redis::Script;

use super::{decode, hex, RedisStore, STORE};
use crate::fact_replay::{replay, Written};

/// Fewest current facts for which a snapshot is kept.
const MIN_FACTS: usize = 1_000;

/// KEYS: version, facts hash, snapshot hash, log. Returns `{version, the snapshot's
/// version or nil, {id, body or nil, ...}}`: nil when there is no snapshot or the log
/// does not hold every version since it (then the list is empty). The snapshot's body is
/// fetched by `HMGET` after it, not returned by the script: a script returning a 14 MB
/// string took 50-90 ms where `HGET` of it takes 18-29 ms.
static READ: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local taken = tonumber(redis.call('HGET', KEYS[3], 'version') or '')
if not taken or taken > v then return {v, false, {}} end
local versions, seen, written = 0, {}, {}
for _, e in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. taken, v)) do
  local at = string.find(e, ':', 1, true)
  local ver, id = string.sub(e, 1, at - 1), string.sub(e, at + 1)
  if not seen[ver] then seen[ver] = true; versions = versions + 1 end
  if not seen['#' .. id] then
    seen['#' .. id] = true
    written[#written + 1] = id
    written[#written + 1] = redis.call('HGET', KEYS[2], id) or false
  end
end
if versions ~= v - taken then return {v, false, {}} end
return {v, taken, written}
",
    )
});

/// KEYS: version, snapshot hash. ARGV: the version the snapshot was taken at, its body.
/// Keeps it only if the user's facts are still at that version; 1 when kept.
static KEEP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'version', ARGV[1], 'body', ARGV[2])
return 1
",
    )
});

/// A user's facts as opened: the version they are at, indexed, and the snapshot to keep
/// when they were read in full (and are many).
pub(super) struct Opened {
    pub(super) version: i64,
    pub(super) ranked: RankedFacts,
    pub(super) snapshot: Option<Vec<u8>>,
}

impl RedisStore {
    /// Snapshot hash and log of a user (the facts' hash slot).
    pub(super) fn snapshot_keys(&self, user: &str) -> (String, String) {
        let h = hex(user);
        (
            self.tagged("facts", &h, "snapshot"),
            self.tagged("facts", &h, "log"),
        )
    }

    /// The user's current facts and the version they are at, from the snapshot and the
    /// log when they allow it, from every fact otherwise; filed for reconciliation too
    /// when `for_writes` (see [`RankedFacts::from_snapshot_for_writes`]).
    pub(super) async fn open_facts(
        &self,
        user: &str,
        op: &'static str,
        for_writes: bool,
    ) -> Result<Opened> {
        match self.read_snapshot(user, op, for_writes).await {
            Ok(Some((version, ranked))) => {
                return Ok(Opened {
                    version,
                    ranked,
                    snapshot: None,
                })
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(
                store = STORE,
                user,
                error = %e,
                "fact snapshot not usable; reading every fact"
            ),
        }
        let (version, facts) = self.load_facts(user, op).await?;
        let version = version
            .parse::<i64>()
            .map_err(|e| MemoryError::store(STORE, op, format!("fact version `{version}`: {e}")))?;
        let current = facts.iter().filter(|f| f.is_current()).count();
        if current < MIN_FACTS {
            return Ok(Opened {
                version,
                ranked: RankedFacts::new(facts),
                snapshot: None,
            });
        }
        let owner = user.to_owned();
        // Analysing and encoding 100,000 facts is CPU work: off the async workers.
        let (ranked, bytes) =
            tokio::task::spawn_blocking(move || RankedFacts::new_with_snapshot(facts, &owner))
                .await
                .map_err(|e| MemoryError::store(STORE, op, e))?;
        Ok(Opened {
            version,
            ranked,
            snapshot: Some(bytes),
        })
    }

    /// The version and the snapshot brought up to it; `None` when there is none or the
    /// log does not reach back to it.
    async fn read_snapshot(
        &self,
        user: &str,
        op: &'static str,
        for_writes: bool,
    ) -> Result<Option<(i64, RankedFacts)>> {
        let (ver, hash) = self.fact_keys(user);
        let (snapshot, log) = self.snapshot_keys(user);
        let mut inv = READ.prepare_invoke();
        inv.key(ver).key(hash).key(&snapshot).key(log);
        let mut conn = self.conn();
        let (version, taken, pairs): (i64, Option<i64>, Vec<Option<String>>) =
            self.run(op, inv.invoke_async(&mut conn)).await?;
        let Some(taken) = taken else {
            return Ok(None);
        };
        // The body, and the version it was kept at: another kept since (a later version)
        // is not the one the log was checked against, and is not used.
        let mut get = redis::cmd("HMGET");
        get.arg(&snapshot).arg("version").arg("body");
        let (kept, body): (Option<i64>, Option<Vec<u8>>) =
            self.run(op, get.query_async(&mut conn)).await?;
        let Some(body) = body.filter(|_| kept == Some(taken)) else {
            return Ok(None);
        };
        let mut written: Vec<Written<(chrono::DateTime<chrono::Utc>, String)>> = Vec::new();
        for pair in pairs.chunks(2) {
            let [Some(id), text] = pair else {
                return Err(MemoryError::store(STORE, op, "a log entry without an id"));
            };
            let now = text
                .as_deref()
                .map(|t| {
                    let fact: MemoryFact = decode(t, || format!("fact of user `{user}` in redis"))?;
                    Ok::<_, MemoryError>(((fact.created_at, fact.id.clone()), fact))
                })
                .transpose()?;
            written.push((id.clone(), now));
        }
        let owner = user.to_owned();
        tokio::task::spawn_blocking(move || {
            let mut ranked = if for_writes {
                RankedFacts::from_snapshot_for_writes(&body, &owner)?
            } else {
                RankedFacts::from_snapshot(&body, &owner)?
            };
            drop(body);
            // A fresh read sorts by creation time, then id.
            let after = ranked.last().map(|f| (f.created_at, f.id.clone()));
            Ok(replay(&mut ranked, written, after.as_ref()).then_some((version, ranked)))
        })
        .await
        .map_err(|e| MemoryError::store(STORE, op, e))?
    }

    /// Keeps `bytes`, the snapshot of the user's facts at `version`, unless they moved
    /// since; whether it was kept.
    pub(super) async fn keep_snapshot(
        &self,
        user: &str,
        version: i64,
        bytes: &[u8],
        op: &'static str,
    ) -> Result<bool> {
        let (ver, _) = self.fact_keys(user);
        let (snapshot, _) = self.snapshot_keys(user);
        let mut inv = KEEP.prepare_invoke();
        inv.key(ver)
            .key(snapshot)
            .arg(version.to_string())
            .arg(bytes);
        let mut conn = self.conn();
        let kept: i64 = self.run(op, inv.invoke_async(&mut conn)).await?;
        Ok(kept == 1)
    }
}
