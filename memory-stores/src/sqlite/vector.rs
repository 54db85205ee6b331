//! [`VectorStore`] on SQLite.
//!
//! - Documents live in `documents` (one row per namespace and id) with their metadata as
//!   JSON and an optional embedding as a BLOB of little-endian `f32`, L2-normalised on
//!   write. The first embedding stored in a namespace fixes its dimension (until the
//!   namespace is cleared); a different one is refused with
//!   [`MemoryError::DimensionMismatch`].
//! - **Sparse search** (no query embedding) uses the FTS5 index `documents_fts`: any
//!   document sharing a word with the query is a candidate, ranked by FTS5's `bm25()`.
//!   `bm25()` is unbounded (more negative is better), so the score reported is
//!   `s / (1 + s)` with `s = -bm25`: `0.0` for no match, approaching `1.0` for strong
//!   matches, in the same order as BM25. FTS5 keeps its term statistics over the whole
//!   table, so a namespace's scores depend slightly on other namespaces' word counts
//!   (never on their documents: only the namespace's rows are candidates).
//! - **Dense search** (a query embedding) is brute force in Rust: the cosine of the
//!   normalised query with every normalised embedding of the namespace, in `-1.0..=1.0`.
//! - Filters are applied in Rust to the candidates, in rank order, until `k` hits are found.

use agentmemory_core::vector::{Document, SearchHit, SearchQuery};
use agentmemory_core::{MemoryError, Metadata, Result, VectorStore};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{on, SqliteStore};
use crate::dense::{best, cosine, normalised};
use crate::text::words;

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(bytes: &[u8], what: impl FnOnce() -> String) -> Result<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(MemoryError::corrupt(
            what(),
            format!("embedding blob of {} bytes", bytes.len()),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn metadata(json: &str, what: impl FnOnce() -> String) -> Result<Metadata> {
    serde_json::from_str(json).map_err(|e| MemoryError::corrupt(what(), e))
}

fn dimension(conn: &Connection, label: &str, ns: &str) -> Result<Option<usize>> {
    let d: Option<i64> = conn
        .prepare_cached("SELECT dimension FROM vector_namespaces WHERE namespace = ?1")
        .and_then(|mut s| s.query_row([ns], |r| r.get(0)).optional())
        .map_err(on(label, "read a namespace's dimension"))?;
    Ok(d.map(|d| usize::try_from(d).unwrap_or(0)))
}

fn upsert_one(conn: &Connection, label: &str, ns: &str, doc: Document) -> Result<String> {
    let op = "upsert a document";
    let id = doc.id.unwrap_or_else(|| ulid::Ulid::new().to_string());
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
    Ok(id)
}

/// The FTS5 query matching any word of `text` (each quoted, so no FTS syntax leaks in).
fn fts_query(text: &str) -> Option<String> {
    let terms: Vec<String> = words(text)
        .into_iter()
        .map(|w| format!("\"{w}\""))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

fn sparse_search(
    conn: &Connection,
    label: &str,
    ns: &str,
    query: &SearchQuery,
) -> Result<Vec<SearchHit>> {
    let Some(fts) = fts_query(&query.text) else {
        return Ok(Vec::new());
    };
    // FTS5 ranks every match, but only the best few rows need joining to `documents`
    // (half the cost of a query when joined before ranking). The namespace and the
    // filter are checked after the join, so fetch a few times `k` and widen the window
    // when too many of the best matches belong elsewhere.
    let mut window = query.k.saturating_mul(4).max(32);
    loop {
        let (hits, ranked) = best_matches(conn, label, ns, query, &fts, window)?;
        if hits.len() >= query.k || ranked < window {
            return Ok(hits);
        }
        window = window.saturating_mul(8);
    }
}

/// Up to `k` hits of namespace `ns` among the `window` best FTS matches, and how many
/// matches the window held.
fn best_matches(
    conn: &Connection,
    label: &str,
    ns: &str,
    query: &SearchQuery,
    fts: &str,
    window: usize,
) -> Result<(Vec<SearchHit>, usize)> {
    let err = on(label, "search documents");
    let mut stmt = conn
        .prepare_cached(
            "SELECT d.id, d.content, d.metadata, r.rank, d.namespace \
             FROM (SELECT rowid, bm25(documents_fts) AS rank FROM documents_fts \
                   WHERE documents_fts MATCH ?1 ORDER BY rank LIMIT ?2) r \
             LEFT JOIN documents d ON d.n = r.rowid ORDER BY r.rank",
        )
        .map_err(&err)?;
    let limit = i64::try_from(window).unwrap_or(i64::MAX);
    let mut rows = stmt.query(params![fts, limit]).map_err(&err)?;
    let (mut hits, mut ranked) = (Vec::new(), 0);
    while let Some(row) = rows.next().map_err(&err)? {
        ranked += 1;
        if hits.len() >= query.k {
            break;
        }
        let namespace: Option<String> = row.get(4).map_err(&err)?;
        if namespace.as_deref() != Some(ns) {
            continue;
        }
        let Some((id, meta)) = id_and_metadata(row, label, query, &err)? else {
            continue;
        };
        let bm25: f64 = row.get(3).map_err(&err)?;
        let s = (-bm25).max(0.0);
        hits.push(SearchHit {
            content: row.get(1).map_err(&err)?,
            id,
            metadata: meta,
            score: (s / (1.0 + s)) as f32,
        });
    }
    Ok((hits, ranked))
}

/// The id and metadata of a result row (columns 0 and 2), or `None` when the query's
/// filter rejects it.
fn id_and_metadata(
    row: &rusqlite::Row<'_>,
    label: &str,
    query: &SearchQuery,
    err: &impl Fn(rusqlite::Error) -> MemoryError,
) -> Result<Option<(String, Metadata)>> {
    let id: String = row.get(0).map_err(err)?;
    let meta_json: String = row.get(2).map_err(err)?;
    let meta = metadata(&meta_json, || {
        format!("metadata of document `{id}` in {label}")
    })?;
    if query.filter.as_ref().is_some_and(|f| !f.matches(&meta)) {
        return Ok(None);
    }
    Ok(Some((id, meta)))
}

fn dense_search(
    conn: &Connection,
    label: &str,
    ns: &str,
    query: &SearchQuery,
    embedding: &[f32],
) -> Result<Vec<SearchHit>> {
    let err = on(label, "search documents");
    let q = normalised(embedding)?;
    match dimension(conn, label, ns)? {
        None => return Ok(Vec::new()),
        Some(expected) if expected != q.len() => {
            return Err(MemoryError::DimensionMismatch {
                expected,
                found: q.len(),
            })
        }
        Some(_) => {}
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, content, metadata, embedding FROM documents \
             WHERE namespace = ?1 AND embedding IS NOT NULL",
        )
        .map_err(&err)?;
    let mut rows = stmt.query([ns]).map_err(&err)?;
    let mut hits = Vec::new();
    while let Some(row) = rows.next().map_err(&err)? {
        let Some((id, meta)) = id_and_metadata(row, label, query, &err)? else {
            continue;
        };
        let blob: Vec<u8> = row.get(3).map_err(&err)?;
        let v = from_blob(&blob, || format!("embedding of document `{id}` in {label}"))?;
        hits.push(SearchHit {
            content: row.get(1).map_err(&err)?,
            id,
            metadata: meta,
            score: cosine(&v, &q),
        });
    }
    Ok(best(hits, query.k))
}

#[async_trait]
impl VectorStore for SqliteStore {
    async fn upsert(&self, namespace: &str, document: Document) -> Result<String> {
        let mut ids = self.upsert_batch(namespace, vec![document]).await?;
        ids.pop()
            .ok_or_else(|| MemoryError::store(self.label(), "upsert a document", "no id returned"))
    }

    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let op = "upsert documents";
        let ns = namespace.to_owned();
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let ids = documents
                .into_iter()
                .map(|d| upsert_one(&tx, label, &ns, d))
                .collect::<Result<Vec<_>>>()?;
            tx.commit().map_err(on(label, op))?;
            Ok(ids)
        })
        .await
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if query.k == 0 {
            return Ok(Vec::new());
        }
        let ns = namespace.to_owned();
        let query = query.clone();
        self.read("search documents", move |conn, label| {
            match &query.embedding {
                Some(e) => dense_search(conn, label, &ns, &query, e),
                None => sparse_search(conn, label, &ns, &query),
            }
        })
        .await
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
            Ok(Some(Document {
                metadata: metadata(&meta, what)?,
                embedding: blob.map(|b| from_blob(&b, what)).transpose()?,
                content,
                id: Some(id.clone()),
            }))
        })
        .await
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        let op = "delete documents";
        let (ns, ids) = (namespace.to_owned(), ids.to_vec());
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let mut n = 0;
            {
                let mut stmt = tx
                    .prepare_cached("DELETE FROM documents WHERE namespace = ?1 AND id = ?2")
                    .map_err(on(label, op))?;
                for id in &ids {
                    n += stmt.execute([&ns, id]).map_err(on(label, op))?;
                }
            }
            tx.commit().map_err(on(label, op))?;
            Ok(n)
        })
        .await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        let op = "clear a document namespace";
        let ns = namespace.to_owned();
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            tx.execute("DELETE FROM documents WHERE namespace = ?1", [&ns])
                .and_then(|_| {
                    tx.execute("DELETE FROM vector_namespaces WHERE namespace = ?1", [&ns])
                })
                .map_err(on(label, op))?;
            tx.commit().map_err(on(label, op))
        })
        .await
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
}
