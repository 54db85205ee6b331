//! [`KvStore`] on SQLite: one row per (namespace, key), with an indexed expiry column
//! that every read filters on.

use agentmemory_core::{KvStore, MemoryEntry, Result};
use async_trait::async_trait;
use chrono::Utc;
use rusqlite::{params, OptionalExtension};

use super::{body, micros, on, SqliteStore};

/// Rows visible at `?now`: no expiry, or one in the future.
const LIVE: &str = "(expires_us IS NULL OR expires_us > ?2)";

fn decode_entry(text: &str, namespace: &str, key: &str, label: &str) -> Result<MemoryEntry> {
    body::decode(text, || {
        format!("KV entry `{key}` of namespace `{namespace}` in {label}")
    })
}

#[async_trait]
impl KvStore for SqliteStore {
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> Result<()> {
        entry.validate()?;
        let op = "put a KV entry";
        let text = body::encode(&entry, "KV entry")?;
        let ns = namespace.to_owned();
        self.write(op, move |conn, label| {
            conn.prepare_cached(
                "INSERT INTO kv (namespace, key, expires_us, body) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (namespace, key) DO UPDATE \
                 SET expires_us = excluded.expires_us, body = excluded.body",
            )
            .and_then(|mut s| s.execute(params![ns, entry.key, entry.expires_at.map(micros), text]))
            .map_err(on(label, op))?;
            Ok(())
        })
        .await
    }

    /// Every entry in one transaction: all are written or none.
    async fn put_many(&self, namespace: &str, entries: Vec<MemoryEntry>) -> Result<()> {
        let op = "put KV entries";
        let mut rows = Vec::with_capacity(entries.len());
        for entry in entries {
            entry.validate()?;
            let text = body::encode(&entry, "KV entry")?;
            rows.push((entry.key, entry.expires_at.map(micros), text));
        }
        if rows.is_empty() {
            return Ok(());
        }
        let ns = namespace.to_owned();
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT INTO kv (namespace, key, expires_us, body) VALUES (?1, ?2, ?3, ?4) \
                         ON CONFLICT (namespace, key) DO UPDATE \
                         SET expires_us = excluded.expires_us, body = excluded.body",
                    )
                    .map_err(on(label, op))?;
                for (key, expires, text) in &rows {
                    stmt.execute(params![ns, key, expires, text])
                        .map_err(on(label, op))?;
                }
            }
            tx.commit().map_err(on(label, op))
        })
        .await
    }

    async fn get(&self, namespace: &str, key: &str) -> Result<Option<MemoryEntry>> {
        let op = "get a KV entry";
        let (ns, key) = (namespace.to_owned(), key.to_owned());
        self.read(op, move |conn, label| {
            let sql = format!("SELECT body FROM kv WHERE namespace = ?1 AND {LIVE} AND key = ?3");
            let text: Option<String> = conn
                .prepare_cached(&sql)
                .and_then(|mut s| {
                    s.query_row(params![ns, micros(Utc::now()), key], |r| r.get(0))
                        .optional()
                })
                .map_err(on(label, op))?;
            text.map(|t| decode_entry(&t, &ns, &key, label)).transpose()
        })
        .await
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        let op = "delete a KV entry";
        let (ns, key) = (namespace.to_owned(), key.to_owned());
        self.write(op, move |conn, label| {
            let sql = format!("DELETE FROM kv WHERE namespace = ?1 AND key = ?3 RETURNING {LIVE}");
            let live: Option<bool> = conn
                .prepare_cached(&sql)
                .and_then(|mut s| {
                    s.query_row(params![ns, micros(Utc::now()), key], |r| r.get(0))
                        .optional()
                })
                .map_err(on(label, op))?;
            Ok(live.unwrap_or(false))
        })
        .await
    }

    async fn list(&self, namespace: &str) -> Result<Vec<MemoryEntry>> {
        let op = "list KV entries";
        let ns = namespace.to_owned();
        self.read(op, move |conn, label| {
            let err = on(label, op);
            let sql =
                format!("SELECT key, body FROM kv WHERE namespace = ?1 AND {LIVE} ORDER BY key");
            let mut stmt = conn.prepare_cached(&sql).map_err(&err)?;
            let rows = stmt
                .query_map(params![ns, micros(Utc::now())], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(&err)?;
            rows.iter()
                .map(|(key, text)| decode_entry(text, &ns, key, label))
                .collect()
        })
        .await
    }

    async fn clear(&self, namespace: &str) -> Result<usize> {
        let op = "clear a KV namespace";
        let ns = namespace.to_owned();
        self.write(op, move |conn, label| {
            conn.prepare_cached("DELETE FROM kv WHERE namespace = ?1")
                .and_then(|mut s| s.execute([&ns]))
                .map_err(on(label, op))
        })
        .await
    }

    async fn cleanup_expired(&self) -> Result<usize> {
        let op = "delete expired KV entries";
        self.write(op, move |conn, label| {
            conn.prepare_cached("DELETE FROM kv WHERE expires_us IS NOT NULL AND expires_us <= ?1")
                .and_then(|mut s| s.execute([micros(Utc::now())]))
                .map_err(on(label, op))
        })
        .await
    }
}
