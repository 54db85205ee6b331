//! [`UserMemoryStore`] on Redis: a hash of fact id → JSON per user, and a version counter
//! bumped by every write to that user's facts.
//!
//! A write reads the facts and the version in one `MULTI`, reconciles in Rust with
//! [`agentmemory_core::store_support::decide`] (and [`MemoryFact::reinforce`]), then commits with a
//! Lua compare-and-set that applies the changes only if the version has not moved;
//! otherwise it reads again and retries, so concurrent writers never lose an update.
//! When this process has the user's facts cached, a write first reconciles against them
//! and commits with the cached version as the expected one: one round trip when no other
//! writer came in between, the path above when one did.

use std::sync::LazyLock;

use agentmemory_core::facts::FactQuery;
use agentmemory_core::store_support::{prepare_candidate, RankedFacts};
use agentmemory_core::{
    FactCandidate, FactChange, MemoryError, MemoryFact, Result, ScoredFact, UserMemoryStore,
};
use async_trait::async_trait;
use chrono::Utc;
use redis::Script;

use super::{decode, encode, hex, RedisStore, STORE};
use crate::fact_rows::{chain, doomed, rows};

/// How many times a write re-reads after losing a race before giving up.
const MAX_ATTEMPTS: usize = 64;

/// KEYS: version, facts hash, log. ARGV: expected version, then (op, field, value)
/// triples with op `s` (HSET) or `d` (HDEL, value ignored). Returns 1 when applied, 0 when
/// the version moved. Logs each id written under the new version (`fact_snapshot.rs`),
/// keeping the last 4,096 versions.
static COMMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 3 do
  if ARGV[i] == 's' then
    redis.call('HSET', KEYS[2], ARGV[i + 1], ARGV[i + 2])
  else
    redis.call('HDEL', KEYS[2], ARGV[i + 1])
  end
end
local v = redis.call('INCR', KEYS[1])
for i = 2, #ARGV, 3 do
  redis.call('ZADD', KEYS[3], v, v .. ':' .. ARGV[i + 1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', v - 4096)
return 1
",
    )
});

/// KEYS: version, facts hash, snapshot, log. Returns how many facts were removed.
static FORGET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = redis.call('HLEN', KEYS[2])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('INCR', KEYS[1])
return n
",
    )
});

/// One change to a user's hash: a fact stored (id and JSON body) or removed (id).
enum Write {
    Set(String, String),
    Delete(String),
}

fn set(fact: &MemoryFact) -> Result<Write> {
    Ok(Write::Set(fact.id.clone(), encode(fact, "fact")?))
}

impl RedisStore {
    /// Version and facts hash of a user (one hash slot).
    pub(super) fn fact_keys(&self, user: &str) -> (String, String) {
        let h = hex(user);
        (
            self.tagged("facts", &h, "version"),
            self.tagged("facts", &h, "facts"),
        )
    }

    /// Every fact of `user` (oldest first) and the version they were read at.
    pub(super) async fn load_facts(
        &self,
        user: &str,
        op: &'static str,
    ) -> Result<(String, Vec<MemoryFact>)> {
        let (ver, hash) = self.fact_keys(user);
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("GET").arg(ver).cmd("HVALS").arg(hash);
        let mut conn = self.conn();
        let (version, bodies): (Option<String>, Vec<String>) =
            self.run(op, pipe.query_async(&mut conn)).await?;
        let mut facts = bodies
            .iter()
            .map(|b| decode::<MemoryFact>(b, || format!("fact of user `{user}` in redis")))
            .collect::<Result<Vec<_>>>()?;
        facts.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok((version.unwrap_or_else(|| "0".to_owned()), facts))
    }

    /// Applies `writes` if the user's version is still `version`; whether it was.
    async fn commit(
        &self,
        user: &str,
        version: &str,
        writes: &[Write],
        op: &'static str,
    ) -> Result<bool> {
        let (ver, hash) = self.fact_keys(user);
        let (_, log) = self.snapshot_keys(user);
        let mut inv = COMMIT.prepare_invoke();
        inv.key(ver).key(hash).key(log).arg(version);
        for w in writes {
            match w {
                Write::Set(id, body) => inv.arg("s").arg(id).arg(body),
                Write::Delete(id) => inv.arg("d").arg(id).arg(""),
            };
        }
        let mut conn = self.conn();
        let applied: i64 = self.run(op, inv.invoke_async(&mut conn)).await?;
        Ok(applied == 1)
    }
}

/// The writes a change and the facts it closed with it ([`RankedFacts::dependents`])
/// need.
fn writes(change: &FactChange, dependents: &[FactChange]) -> Result<Vec<Write>> {
    std::iter::once(change)
        .chain(dependents)
        .flat_map(rows)
        .map(|row| set(row.fact))
        .collect()
}

/// `ranked` after a committed change and its dependents, when they fit it as a fresh
/// read would ([`keeps_order`]); `None` when the next read must open the facts again.
fn advanced(
    mut ranked: RankedFacts,
    change: &FactChange,
    dependents: &[FactChange],
) -> Option<RankedFacts> {
    std::iter::once(change)
        .chain(dependents)
        .all(|made| keeps_order(&ranked, made) && ranked.apply(made))
        .then_some(ranked)
}

/// Whether a fresh read of the user's facts (sorted by creation time, then id) would
/// put the facts `change` adds after every fact `ranked` holds, as
/// [`RankedFacts::apply`] does.
fn keeps_order(ranked: &RankedFacts, change: &FactChange) -> bool {
    let added = match change {
        FactChange::Added { fact } | FactChange::Superseded { new: fact, .. } => fact,
        _ => return true,
    };
    ranked
        .last()
        .is_none_or(|last| (last.created_at, &last.id) < (added.created_at, &added.id))
}

impl RedisStore {
    /// An upsert reconciled against the user's cached facts, committed only if the
    /// user's version is still the one they were read at (the commit script checks it).
    /// `Err(candidate)` when nothing usable is cached or the version moved: the caller
    /// then reads the facts.
    async fn upsert_cached(
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
        let dependents = ranked.dependents(&change);
        let writes = writes(&change, &dependents)?;
        if writes.is_empty() {
            // Nothing to commit, so nothing checked the version: check it here.
            let (ver, _) = self.fact_keys(user);
            let mut conn = self.conn();
            let now: Option<i64> = self
                .run(op, redis::cmd("GET").arg(ver).query_async(&mut conn))
                .await?;
            if now.unwrap_or(0) != version {
                return Ok(Err(candidate));
            }
            self.fact_cache.put(user, version, ranked);
            return Ok(Ok(change));
        }
        if !self.commit(user, &version.to_string(), &writes, op).await? {
            return Ok(Err(candidate));
        }
        // The script raised the version by one, exactly: this write.
        if let Some(ranked) = advanced(ranked, &change, &dependents) {
            self.fact_cache.put(user, version + 1, ranked);
        }
        Ok(Ok(change))
    }
}

#[async_trait]
impl UserMemoryStore for RedisStore {
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange> {
        let candidate = prepare_candidate(candidate)?;
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        let op = "upsert a fact";
        let candidate = match self.upsert_cached(user_id, candidate, op).await? {
            Ok(change) => return Ok(change),
            Err(candidate) => candidate,
        };
        for _ in 0..MAX_ATTEMPTS {
            // Read once, then kept and updated in place: the next upsert (or search) of
            // this user does not read every fact again.
            let opened = self.open_facts(user_id, op, true).await?;
            let (v, mut ranked) = (opened.version, opened.ranked);
            if let Some(bytes) = &opened.snapshot {
                // Kept only if still at `v`: before this write's version. A snapshot not
                // kept only costs the next open its speed.
                if let Err(e) = self.keep_snapshot(user_id, v, bytes, op).await {
                    tracing::warn!(store = STORE, error = %e, "fact snapshot not kept");
                }
            }
            let now = Utc::now();
            let change = ranked.plan(user_id, candidate.clone(), now)?;
            let dependents = ranked.dependents(&change);
            let writes = writes(&change, &dependents)?;
            if writes.is_empty() {
                self.fact_cache.put(user_id, v, ranked);
                return Ok(change);
            }
            if self.commit(user_id, &v.to_string(), &writes, op).await? {
                // The script raised the version by one, exactly: this write.
                if let Some(ranked) = advanced(ranked, &change, &dependents) {
                    self.fact_cache.put(user_id, v + 1, ranked);
                }
                return Ok(change);
            }
        }
        Err(MemoryError::store(
            STORE,
            op,
            "too many concurrent writers; gave up retrying",
        ))
    }

    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let op = "search facts";
        let (ver, _) = self.fact_keys(user_id);
        let mut conn = self.conn();
        let version: Option<i64> = self
            .run(op, redis::cmd("GET").arg(ver).query_async(&mut conn))
            .await?;
        let (ranked, made) = match self.fact_cache.get(user_id, version.unwrap_or(0)) {
            Some(ranked) => (ranked, None),
            None => {
                // Facts and version read together, so the version names exactly them.
                let opened = self.open_facts(user_id, op, false).await?;
                let made = opened.snapshot.map(|bytes| (opened.version, bytes));
                let version = opened.version;
                (self.fact_cache.put(user_id, version, opened.ranked), made)
            }
        };
        let hits = ranked.rank(query, self.policy, chrono::Utc::now());
        if let Some((version, bytes)) = made {
            if let Err(e) = self.keep_snapshot(user_id, version, &bytes, op).await {
                tracing::warn!(store = STORE, error = %e, "fact snapshot not kept");
            }
        }
        Ok(hits)
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let (_, facts) = self.load_facts(user_id, "list facts").await?;
        Ok(facts.into_iter().filter(MemoryFact::is_current).collect())
    }

    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        let (_, hash) = self.fact_keys(user_id);
        let mut conn = self.conn();
        let text: Option<String> = self
            .run(
                "get a fact",
                redis::cmd("HGET")
                    .arg(hash)
                    .arg(fact_id)
                    .query_async(&mut conn),
            )
            .await?;
        text.map(|t| decode(&t, || format!("fact `{fact_id}` in redis")))
            .transpose()
    }

    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        let op = "delete a fact";
        for _ in 0..MAX_ATTEMPTS {
            let (version, all) = self.load_facts(user_id, op).await?;
            let doomed: Vec<Write> = doomed(&all, fact_id)
                .into_iter()
                .map(Write::Delete)
                .collect();
            if doomed.is_empty() {
                return Ok(false);
            }
            if self.commit(user_id, &version, &doomed, op).await? {
                return Ok(true);
            }
        }
        Err(MemoryError::store(
            STORE,
            op,
            "too many concurrent writers; gave up retrying",
        ))
    }

    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        let (ver, hash) = self.fact_keys(user_id);
        let (snapshot, log) = self.snapshot_keys(user_id);
        let mut inv = FORGET.prepare_invoke();
        inv.key(ver).key(hash).key(snapshot).key(log);
        let mut conn = self.conn();
        self.run("forget a user", inv.invoke_async(&mut conn)).await
    }

    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize> {
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        if records.is_empty() {
            return Ok(0);
        }
        let (ver, hash) = self.fact_keys(user_id);
        // One MULTI/EXEC: every record set only where its id is new, then the version
        // moves so cached rankings and in-flight writers see the change.
        let mut pipe = redis::pipe();
        pipe.atomic();
        for mut fact in records {
            user_id.clone_into(&mut fact.user_id);
            let body = encode(&fact, "fact")?;
            pipe.cmd("HSETNX").arg(&hash).arg(&fact.id).arg(body);
        }
        pipe.cmd("INCR").arg(&ver).ignore();
        let mut conn = self.conn();
        let set: Vec<i64> = self
            .run("import facts", pipe.query_async(&mut conn))
            .await?;
        Ok(set.into_iter().filter(|n| *n == 1).count())
    }

    async fn versions(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let (_, all) = self
            .load_facts(user_id, "read every version of the facts")
            .await?;
        Ok(all)
    }

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        let (_, all) = self.load_facts(user_id, "read a fact's history").await?;
        Ok(chain(&all, fact_id))
    }
}
