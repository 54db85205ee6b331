//! [`KvStore`] on PostgreSQL: one row per (namespace, key) with an indexed expiry column
//! that every read filters on.

use agentmemory_core::{KvStore, MemoryEntry, Result};
use async_trait::async_trait;
use chrono::Utc;

use super::{decode, encode, micros, on, PostgresStore};

/// Rows visible at `$2` (now, in µs): no expiry, or one in the future.
const LIVE: &str = "(expires_us IS NULL OR expires_us > $2)";

fn decode_entry(text: &str, namespace: &str, key: &str) -> Result<MemoryEntry> {
    decode(text, || {
        format!("KV entry `{key}` of namespace `{namespace}` in postgres")
    })
}

#[async_trait]
impl KvStore for PostgresStore {
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> Result<()> {
        entry.validate()?;
        let op = "put a KV entry";
        let body = encode(&entry, "KV entry")?;
        let expires = entry.expires_at.map(micros);
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "INSERT INTO {} (namespace, key, expires_us, body) VALUES ($1, $2, $3, $4::text::jsonb) \
                     ON CONFLICT (namespace, key) DO UPDATE \
                     SET expires_us = excluded.expires_us, body = excluded.body",
                    self.table("kv")
                ))
                .await
                .map_err(on(op))?;
            client
                .execute(&stmt, &[&namespace, &entry.key, &expires, &body])
                .await
                .map_err(on(op))?;
            Ok(())
        })
        .await
    }

    /// Every entry in one statement (one round trip): all are written or none.
    async fn put_many(&self, namespace: &str, entries: Vec<MemoryEntry>) -> Result<()> {
        let op = "put KV entries";
        // One row per key, the last entry of a key winning (a statement may not touch a
        // row twice).
        let mut last = std::collections::HashMap::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            entry.validate()?;
            last.insert(entry.key.as_str(), i);
        }
        let (mut keys, mut expires, mut bodies) = (Vec::new(), Vec::new(), Vec::new());
        for (i, entry) in entries.iter().enumerate() {
            if last.get(entry.key.as_str()) != Some(&i) {
                continue;
            }
            keys.push(entry.key.clone());
            expires.push(entry.expires_at.map(micros));
            bodies.push(encode(entry, "KV entry")?);
        }
        if keys.is_empty() {
            return Ok(());
        }
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "INSERT INTO {} (namespace, key, expires_us, body) \
                     SELECT $1, k, e, b::jsonb FROM UNNEST($2::text[], $3::int8[], $4::text[]) AS t(k, e, b) \
                     ON CONFLICT (namespace, key) DO UPDATE \
                     SET expires_us = excluded.expires_us, body = excluded.body",
                    self.table("kv")
                ))
                .await
                .map_err(on(op))?;
            client
                .execute(&stmt, &[&namespace, &keys, &expires, &bodies])
                .await
                .map_err(on(op))?;
            Ok(())
        })
        .await
    }

    async fn get(&self, namespace: &str, key: &str) -> Result<Option<MemoryEntry>> {
        let op = "get a KV entry";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT body::text FROM {} WHERE namespace = $1 AND {LIVE} AND key = $3",
                    self.table("kv")
                ))
                .await
                .map_err(on(op))?;
            let row = client
                .query_opt(&stmt, &[&namespace, &micros(Utc::now()), &key])
                .await
                .map_err(on(op))?;
            row.map(|r| {
                let text: &str = r.try_get(0).map_err(on(op))?;
                decode_entry(text, namespace, key)
            })
            .transpose()
        })
        .await
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        let op = "delete a KV entry";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "DELETE FROM {} WHERE namespace = $1 AND key = $3 RETURNING {LIVE}",
                    self.table("kv")
                ))
                .await
                .map_err(on(op))?;
            let row = client
                .query_opt(&stmt, &[&namespace, &micros(Utc::now()), &key])
                .await
                .map_err(on(op))?;
            Ok(row
                .map(|r| r.try_get::<_, bool>(0))
                .transpose()
                .map_err(on(op))?
                .unwrap_or(false))
        })
        .await
    }

    async fn list(&self, namespace: &str) -> Result<Vec<MemoryEntry>> {
        let op = "list KV entries";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT key, body::text FROM {} WHERE namespace = $1 AND {LIVE} ORDER BY key",
                    self.table("kv")
                ))
                .await
                .map_err(on(op))?;
            let rows = client
                .query(&stmt, &[&namespace, &micros(Utc::now())])
                .await
                .map_err(on(op))?;
            rows.iter()
                .map(|r| {
                    let key: &str = r.try_get(0).map_err(on(op))?;
                    let text: &str = r.try_get(1).map_err(on(op))?;
                    decode_entry(text, namespace, key)
                })
                .collect()
        })
        .await
    }

    async fn clear(&self, namespace: &str) -> Result<usize> {
        let op = "clear a KV namespace";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let n = client
                .execute(
                    &format!("DELETE FROM {} WHERE namespace = $1", self.table("kv")),
                    &[&namespace],
                )
                .await
                .map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
        .await
    }

    async fn cleanup_expired(&self) -> Result<usize> {
        let op = "delete expired KV entries";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let n = client
                .execute(
                    &format!(
                        "DELETE FROM {} WHERE expires_us IS NOT NULL AND expires_us <= $1",
                        self.table("kv")
                    ),
                    &[&micros(Utc::now())],
                )
                .await
                .map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
        .await
    }
}
