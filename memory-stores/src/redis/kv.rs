//! [`KvStore`] on Redis: one string per entry with native expiry (`PXAT`), an index set
//! of keys per namespace, and a set of namespaces (for [`KvStore::cleanup_expired`]).
//! Redis drops expired entries itself; `cleanup_expired` removes the index members whose
//! entry is gone and returns how many.
//!
//! A namespace's entries and index share one hash slot; the set of namespaces is
//! store-wide (another slot), so it is written outside the namespace's `MULTI`: a put adds
//! the namespace first (same pipeline; on a Redis Cluster a request of its own), a clear
//! removes it after. A put racing with a clear of the same namespace can leave the
//! namespace out of the set until its next put; its entries still expire (Redis drops
//! them) and reads skip index members without an entry; only `cleanup_expired` does not
//! visit it meanwhile.

use agentmemory_core::{KvStore, MemoryEntry, MemoryError, Result};
use async_trait::async_trait;
use chrono::Utc;

use super::{decode, encode, hex, RedisStore, STORE};

impl RedisStore {
    fn kv_key(&self, ns: &str, key: &str) -> String {
        self.tagged("kv", &hex(ns), &format!("e:{}", hex(key)))
    }

    fn kv_index(&self, ns: &str) -> String {
        self.tagged("kv", &hex(ns), "index")
    }

    fn kv_namespaces(&self) -> String {
        self.global("kvns")
    }

    /// The index members of `ns` and whether each one's entry still exists.
    async fn kv_members(&self, ns: &str, op: &'static str) -> Result<Vec<(String, bool)>> {
        let mut conn = self.conn();
        let keys: Vec<String> = self
            .run(
                op,
                redis::cmd("SMEMBERS")
                    .arg(self.kv_index(ns))
                    .query_async(&mut conn),
            )
            .await?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for k in &keys {
            pipe.cmd("EXISTS").arg(self.kv_key(ns, k));
        }
        let exists: Vec<bool> = self.run(op, pipe.query_async(&mut conn)).await?;
        Ok(keys.into_iter().zip(exists).collect())
    }

    /// `entries` (at least one) in one `MULTI` of the namespace's slot, all or none,
    /// after the namespace is added to the set of namespaces: one round trip on a single
    /// server, two on a cluster (the set lives in another slot). An expiry in the past
    /// makes Redis drop the key at once.
    async fn put_entries(
        &self,
        namespace: &str,
        entries: Vec<MemoryEntry>,
        op: &'static str,
    ) -> Result<()> {
        let mut sets = Vec::with_capacity(entries.len());
        for entry in &entries {
            entry.validate()?;
            let mut set = redis::cmd("SET");
            set.arg(self.kv_key(namespace, &entry.key))
                .arg(encode(entry, "KV entry")?);
            if let Some(at) = entry.expires_at {
                set.arg("PXAT").arg(at.timestamp_millis().max(1));
            }
            sets.push(set);
        }
        let mut pipe = redis::pipe();
        let mut conn = self.conn();
        let mut listing = redis::cmd("SADD");
        listing.arg(self.kv_namespaces()).arg(namespace);
        if conn.is_cluster() {
            self.run::<(), _>(op, listing.query_async(&mut conn))
                .await?;
        } else {
            pipe.add_command(listing).ignore();
        }
        pipe.cmd("MULTI").ignore();
        for set in sets {
            pipe.add_command(set).ignore();
        }
        let mut index = redis::cmd("SADD");
        index.arg(self.kv_index(namespace));
        for entry in &entries {
            index.arg(&entry.key);
        }
        pipe.add_command(index).ignore().cmd("EXEC");
        let (exec,): (redis::Value,) = self.run(op, pipe.query_async(&mut conn)).await?;
        if let redis::Value::Array(replies) = &exec {
            if let Some(redis::Value::ServerError(e)) = replies
                .iter()
                .find(|r| matches!(r, redis::Value::ServerError(_)))
            {
                return Err(MemoryError::store(STORE, op, format!("{e:?}")));
            }
        }
        Ok(())
    }
}

#[async_trait]
impl KvStore for RedisStore {
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> Result<()> {
        self.put_entries(namespace, vec![entry], "put a KV entry")
            .await
    }

    /// Every entry in one `MULTI` of the namespace's slot (all or none), after the
    /// namespace is added to the set of namespaces as [`put`](KvStore::put) adds it: one
    /// or two round trips however many entries there are.
    async fn put_many(&self, namespace: &str, entries: Vec<MemoryEntry>) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        self.put_entries(namespace, entries, "put KV entries").await
    }

    async fn get(&self, namespace: &str, key: &str) -> Result<Option<MemoryEntry>> {
        let mut conn = self.conn();
        let text: Option<String> = self
            .run(
                "get a KV entry",
                redis::cmd("GET")
                    .arg(self.kv_key(namespace, key))
                    .query_async(&mut conn),
            )
            .await?;
        let Some(text) = text else { return Ok(None) };
        let entry: MemoryEntry = decode(&text, || {
            format!("KV entry `{key}` of namespace `{namespace}` in redis")
        })?;
        // Redis expires with millisecond precision; honour the exact instant too.
        Ok((!entry.is_expired_at(Utc::now())).then_some(entry))
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("DEL")
            .arg(self.kv_key(namespace, key))
            .cmd("SREM")
            .arg(self.kv_index(namespace))
            .arg(key)
            .ignore();
        let mut conn = self.conn();
        let (n,): (i64,) = self
            .run("delete a KV entry", pipe.query_async(&mut conn))
            .await?;
        Ok(n > 0)
    }

    async fn list(&self, namespace: &str) -> Result<Vec<MemoryEntry>> {
        let op = "list KV entries";
        let mut conn = self.conn();
        let mut keys: Vec<String> = self
            .run(
                op,
                redis::cmd("SMEMBERS")
                    .arg(self.kv_index(namespace))
                    .query_async(&mut conn),
            )
            .await?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        keys.sort();
        let mut mget = redis::cmd("MGET");
        for k in &keys {
            mget.arg(self.kv_key(namespace, k));
        }
        let bodies: Vec<Option<String>> = self.run(op, mget.query_async(&mut conn)).await?;
        let now = Utc::now();
        let mut out = Vec::with_capacity(keys.len());
        for (key, body) in keys.iter().zip(bodies) {
            let Some(text) = body else { continue };
            let entry: MemoryEntry = decode(&text, || {
                format!("KV entry `{key}` of namespace `{namespace}` in redis")
            })?;
            if !entry.is_expired_at(now) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    async fn clear(&self, namespace: &str) -> Result<usize> {
        let op = "clear a KV namespace";
        let members = self.kv_members(namespace, op).await?;
        let mut del = redis::cmd("DEL");
        del.arg(self.kv_index(namespace));
        for (k, _) in &members {
            del.arg(self.kv_key(namespace, k));
        }
        let mut unlist = redis::cmd("SREM");
        unlist.arg(self.kv_namespaces()).arg(namespace);
        let mut conn = self.conn();
        // The namespace's keys, then the namespace set: one round trip on a single
        // server, two on a cluster (where they are in different slots).
        let deleted: usize = if conn.is_cluster() {
            let deleted = self.run(op, del.query_async(&mut conn)).await?;
            self.run::<(), _>(op, unlist.query_async(&mut conn)).await?;
            deleted
        } else {
            let mut pipe = redis::pipe();
            pipe.add_command(del).add_command(unlist).ignore();
            let (deleted,): (usize,) = self.run(op, pipe.query_async(&mut conn)).await?;
            deleted
        };
        // DEL counted the index set too when it existed.
        Ok(deleted.saturating_sub(usize::from(!members.is_empty())))
    }

    async fn cleanup_expired(&self) -> Result<usize> {
        let op = "delete expired KV entries";
        let mut conn = self.conn();
        let namespaces: Vec<String> = self
            .run(
                op,
                redis::cmd("SMEMBERS")
                    .arg(self.kv_namespaces())
                    .query_async(&mut conn),
            )
            .await?;
        let mut removed = 0;
        for ns in namespaces {
            let gone: Vec<String> = self
                .kv_members(&ns, op)
                .await?
                .into_iter()
                .filter_map(|(k, exists)| (!exists).then_some(k))
                .collect();
            if gone.is_empty() {
                continue;
            }
            let n: usize = self
                .run(
                    op,
                    redis::cmd("SREM")
                        .arg(self.kv_index(&ns))
                        .arg(&gone)
                        .query_async(&mut conn),
                )
                .await?;
            removed += n;
        }
        Ok(removed)
    }
}
