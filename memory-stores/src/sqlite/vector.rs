//! [`VectorStore`] on SQLite.
//!
//! - Documents live in `documents` (one row per namespace and id) with their metadata as
//!   JSON and an optional embedding as a BLOB of little-endian `f32`, L2-normalised on
//!   write. The first embedding stored in a namespace fixes its dimension (until the
//!   namespace is cleared); a different one is refused with
//!   [`MemoryError::DimensionMismatch`].
//! - **Search** (sparse, dense or both) runs on the namespace's in-memory mirror
//!   ([`mirror`](super::mirror)): the inverted index and vectors of
//!   [`InMemoryVectorStore`](agentmemory_core::vector::InMemoryVectorStore), loaded at the
//!   namespace's first use and kept current with the table through `document_log`, so
//!   scores and order are the in-memory store's (TF-IDF cosine in `0.0..=1.0`, cosine for
//!   embeddings) and a query costs time in its terms' postings, not in the table's size.
//!   Writes commit to SQLite first; the mirror follows.

use agentmemory_core::vector::{Document, SearchHit, SearchQuery};
use agentmemory_core::{MemoryError, Metadata, Result, VectorStore};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::mirror::{self, Delta, Mirror, INNER};
use super::{on, SqliteStore};
use crate::dense::normalised;

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) fn from_blob(bytes: &[u8], what: impl FnOnce() -> String) -> Result<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(MemoryError::corrupt(
            what(),
            format!("embedding blob of {} bytes", bytes.len()),
        ));
    }
    Ok(bytes
        .as_chunks::<4>()
        .0
        .iter()
        .map(|c| f32::from_le_bytes(*c))
        .collect())
}

pub(super) fn metadata(json: &str, what: impl FnOnce() -> String) -> Result<Metadata> {
    if json == "{}" {
        return Ok(Metadata::new()); // what most documents carry, without a parser
    }
    serde_json::from_str(json).map_err(|e| MemoryError::corrupt(what(), e))
}

fn dimension(conn: &Connection, label: &str, ns: &str) -> Result<Option<usize>> {
    let d: Option<i64> = conn
        .prepare_cached("SELECT dimension FROM vector_namespaces WHERE namespace = ?1")
        .and_then(|mut s| s.query_row([ns], |r| r.get(0)).optional())
        .map_err(on(label, "read a namespace's dimension"))?;
    Ok(d.map(|d| usize::try_from(d).unwrap_or(0)))
}

/// Writes one document; returns it with its id set.
fn upsert_one(conn: &Connection, label: &str, ns: &str, mut doc: Document) -> Result<Document> {
    let op = "upsert a document";
    let id = doc
        .id
        .take()
        .unwrap_or_else(|| ulid::Ulid::new().to_string());
    let meta = serde_json::to_string(&doc.metadata)
        .map_err(|e| MemoryError::invalid("metadata", e.to_string()))?;
    let blob = match &doc.embedding {
        None => None,
        Some(v) => {
            let v = normalised(v)?;
            match dimension(conn, label, ns)? {
                Some(expected) if expected != v.len() => {
                    return Err(MemoryError::DimensionMismatch {
                        expected,
                        found: v.len(),
                    })
                }
                Some(_) => {}
                None => {
                    conn.prepare_cached(
                        "INSERT INTO vector_namespaces (namespace, dimension) VALUES (?1, ?2)",
                    )
                    .and_then(|mut s| s.execute(params![ns, v.len() as i64]))
                    .map_err(on(label, op))?;
                }
            }
            Some(to_blob(&v))
        }
    };
    conn.prepare_cached(
        "INSERT INTO documents (namespace, id, content, metadata, embedding) \
         VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (namespace, id) DO UPDATE SET content = excluded.content, \
         metadata = excluded.metadata, embedding = excluded.embedding",
    )
    .and_then(|mut s| s.execute(params![ns, id, doc.content, meta, blob]))
    .map_err(on(label, op))?;
    doc.id = Some(id);
    Ok(doc)
}

/// A committed write, and the `document_log` positions before and after it.
struct Written<T> {
    out: T,
    before: i64,
    after: i64,
}

impl SqliteStore {
    /// Runs `f` in an immediate transaction on the writer, noting the log positions
    /// around it and pruning the log.
    async fn write_documents<T, F>(&self, op: &'static str, f: F) -> Result<Written<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &str) -> Result<T> + Send + 'static,
    {
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let before = mirror::last_seq(&tx, label)?;
            let out = f(&tx, label)?;
            let after = mirror::last_seq(&tx, label)?;
            mirror::prune(&tx, label)?;
            tx.commit().map_err(on(label, op))?;
            Ok(Written { out, before, after })
        })
        .await
    }

    /// Brings a loaded mirror up to date after this process's own committed write:
    /// directly with `delta` when the mirror was current before the write, otherwise by
    /// a catch-up. A failure leaves the mirror to be rebuilt; the write itself stands.
    async fn write_through(&self, namespace: &str, m: &Mirror, before: i64, delta: Delta) {
        let result = if m.applied() == before {
            self.mirrors().apply(namespace, m, delta).await
        } else {
            self.catch_up(namespace, m).await
        };
        if let Err(e) = result {
            tracing::warn!(store = self.label(), namespace, error = %e,
                "document index fell behind; it is rebuilt at next use");
            m.invalidate();
        }
    }

    /// Applies what `m` lacks; the caller holds `m.sync`.
    async fn catch_up(&self, namespace: &str, m: &Mirror) -> Result<()> {
        let applied = m.applied();
        let ns = namespace.to_owned();
        let delta = self
            .read("catch up the document index", move |conn, label| {
                mirror::delta(conn, label, &ns, applied)
            })
            .await?;
        self.mirrors().apply(namespace, m, delta).await
    }

    /// The namespace's mirror, loaded and current with every committed write.
    async fn current_mirror(&self, namespace: &str) -> Result<std::sync::Arc<Mirror>> {
        let m = self.mirrors().get(namespace);
        if m.is_loaded() {
            let last = self
                .read("read the document log", mirror::last_seq_of)
                .await?;
            if last <= m.applied() {
                return Ok(m);
            }
        }
        {
            let _sync = m.sync.lock().await;
            self.catch_up(namespace, &m).await?;
        }
        Ok(m)
    }
}

#[async_trait]
impl VectorStore for SqliteStore {
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let m = self.mirrors().loaded(namespace);
        let _sync = match &m {
            Some(m) => Some(m.sync.lock().await),
            None => None,
        };
        let ns = namespace.to_owned();
        let written = self
            .write_documents("upsert documents", move |tx, label| {
                documents
                    .into_iter()
                    .map(|d| upsert_one(tx, label, &ns, d))
                    .collect::<Result<Vec<_>>>()
            })
            .await?;
        let ids = written
            .out
            .iter()
            .map(|d| d.id.clone().unwrap_or_default())
            .collect();
        if let Some(m) = &m {
            let delta = Delta::Changes {
                last: written.after,
                upserted: written.out,
                removed: Vec::new(),
            };
            self.write_through(namespace, m, written.before, delta)
                .await;
        }
        Ok(ids)
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if query.k == 0 {
            return Ok(Vec::new());
        }
        let m = self.current_mirror(namespace).await?;
        // Sparse, dense or (once the core store fuses them) hybrid: one call site.
        m.docs.search(INNER, query).await
    }

    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        let op = "get a document";
        let (ns, id) = (namespace.to_owned(), id.to_owned());
        self.read(op, move |conn, label| {
            let row: Option<(String, String, Option<Vec<u8>>)> = conn
                .prepare_cached(
                    "SELECT content, metadata, embedding FROM documents \
                     WHERE namespace = ?1 AND id = ?2",
                )
                .and_then(|mut s| {
                    s.query_row([&ns, &id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                        .optional()
                })
                .map_err(on(label, op))?;
            let Some((content, meta, blob)) = row else {
                return Ok(None);
            };
            let what = || format!("document `{id}` in {label}");
            let mut doc = Document::new(content).with_id(id.clone());
            doc.metadata = metadata(&meta, what)?;
            doc.embedding = blob.map(|b| from_blob(&b, what)).transpose()?;
            Ok(Some(doc))
        })
        .await
    }

    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        let op = "get documents";
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ns = namespace.to_owned();
        let wanted = serde_json::to_string(ids)
            .map_err(|e| MemoryError::invalid("document ids", e.to_string()))?;
        let mut found = self
            .read(op, move |conn, label| {
                // One statement for any number of ids: they come as one JSON array.
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT id, content, metadata, embedding FROM documents \
                         WHERE namespace = ?1 AND id IN (SELECT value FROM json_each(?2))",
                    )
                    .map_err(on(label, op))?;
                let rows = stmt
                    .query_map([&ns, &wanted], |r| {
                        Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                    })
                    .map_err(on(label, op))?;
                let mut found = std::collections::HashMap::new();
                for row in rows {
                    let (id, content, meta, blob): (String, String, String, Option<Vec<u8>>) =
                        row.map_err(on(label, op))?;
                    let what = || format!("document `{id}` in {label}");
                    let mut doc = Document::new(content).with_id(id.clone());
                    doc.metadata = metadata(&meta, what)?;
                    doc.embedding = blob.map(|b| from_blob(&b, what)).transpose()?;
                    found.insert(id, doc);
                }
                Ok(found)
            })
            .await?;
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        let m = self.mirrors().loaded(namespace);
        let _sync = match &m {
            Some(m) => Some(m.sync.lock().await),
            None => None,
        };
        let op = "delete documents";
        let (ns, owned) = (namespace.to_owned(), ids.to_vec());
        let written = self
            .write_documents(op, move |tx, label| {
                let mut stmt = tx
                    .prepare_cached("DELETE FROM documents WHERE namespace = ?1 AND id = ?2")
                    .map_err(on(label, op))?;
                let mut n = 0;
                for id in &owned {
                    n += stmt.execute([&ns, id]).map_err(on(label, op))?;
                }
                Ok(n)
            })
            .await?;
        if let Some(m) = &m {
            let delta = Delta::Changes {
                last: written.after,
                upserted: Vec::new(),
                removed: ids.to_vec(),
            };
            self.write_through(namespace, m, written.before, delta)
                .await;
        }
        Ok(written.out)
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        let m = self.mirrors().loaded(namespace);
        let _sync = match &m {
            Some(m) => Some(m.sync.lock().await),
            None => None,
        };
        let op = "clear a document namespace";
        let ns = namespace.to_owned();
        let written = self
            .write_documents(op, move |tx, label| {
                tx.execute("DELETE FROM documents WHERE namespace = ?1", [&ns])
                    .and_then(|_| {
                        tx.execute("DELETE FROM vector_namespaces WHERE namespace = ?1", [&ns])
                    })
                    .map_err(on(label, op))?;
                Ok(())
            })
            .await?;
        if let Some(m) = &m {
            let delta = Delta::Full {
                last: written.after,
                documents: Vec::new(),
            };
            self.write_through(namespace, m, written.before, delta)
                .await;
        }
        Ok(())
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        let op = "count documents";
        let ns = namespace.to_owned();
        self.read(op, move |conn, label| {
            let n: i64 = conn
                .prepare_cached("SELECT count(*) FROM documents WHERE namespace = ?1")
                .and_then(|mut s| s.query_row([&ns], |r| r.get(0)))
                .map_err(on(label, op))?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        let op = "list document ids";
        let ns = namespace.to_owned();
        self.read(op, move |conn, label| {
            // BINARY collation: byte order, served by the (namespace, id) index.
            let mut stmt = conn
                .prepare_cached("SELECT id FROM documents WHERE namespace = ?1 ORDER BY id")
                .map_err(on(label, op))?;
            let rows = stmt
                .query_map([&ns], |r| r.get::<_, String>(0))
                .map_err(on(label, op))?;
            rows.collect::<std::result::Result<Vec<_>, _>>()
                .map_err(on(label, op))
        })
        .await
    }

    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        let op = "list a range of document ids";
        let (ns, from, to) = (namespace.to_owned(), from.to_owned(), to.to_owned());
        self.read(op, move |conn, label| {
            // A range of the (namespace, id) index, in byte order.
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id FROM documents WHERE namespace = ?1 AND id >= ?2 AND id < ?3 \
                     ORDER BY id",
                )
                .map_err(on(label, op))?;
            let rows = stmt
                .query_map([&ns, &from, &to], |r| r.get::<_, String>(0))
                .map_err(on(label, op))?;
            rows.collect::<std::result::Result<Vec<_>, _>>()
                .map_err(on(label, op))
        })
        .await
    }
}
