//! [`Reembed`] on SQLite.
//!
//! - What has no vector is found through two partial indexes (schema version 5): current
//!   facts whose body carries no `embedding`, documents whose `embedding` is NULL, so a
//!   pass costs time in what is missing, not in the size of the tables. Pages run over
//!   facts (by row number), then documents (by row number): cursor `f<n>` or `d<n>`.
//! - Vectors are written in one transaction per page; the `fact_versions` triggers and
//!   the `document_log` tell the fact caches and the document mirrors of every connection
//!   and process.
//! - The model is one row of `store_meta` (key `embedding_model`).

use agentmemory_core::reembed::{
    Embedded, EmbeddingModel, EmbeddingTarget, Reembed, Unembedded, UnembeddedPage,
};
use agentmemory_core::{MemoryError, MemoryFact, Result};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{body, on, SqliteStore};
use crate::dense::normalised;
use crate::model_record;

const MODEL_KEY: &str = "embedding_model";

/// The condition on `facts` that the `facts_unembedded` index covers.
const FACT_MISSING: &str = "is_current = 1 AND json_extract(body, '$.data.embedding') IS NULL";

/// Where a page starts: after fact row `n`, or after document row `n`.
#[derive(Clone, Copy)]
enum Cursor {
    Facts(i64),
    Documents(i64),
}

impl Cursor {
    fn parse(after: Option<&str>) -> Result<Self> {
        let Some(after) = after else {
            return Ok(Cursor::Facts(0));
        };
        let bad = || {
            MemoryError::invalid(
                "reembed cursor",
                format!("`{after}` is not one of this store's"),
            )
        };
        let (kind, n) = after.split_at_checked(1).ok_or_else(bad)?;
        let n: i64 = n.parse().map_err(|_| bad())?;
        match kind {
            "f" => Ok(Cursor::Facts(n)),
            "d" => Ok(Cursor::Documents(n)),
            _ => Err(bad()),
        }
    }
}

fn facts_page(
    conn: &Connection,
    label: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, Unembedded)>> {
    let sql = format!(
        "SELECT n, user_id, id, json_extract(body, '$.data.text') FROM facts \
         WHERE {FACT_MISSING} AND n > ?1 ORDER BY n LIMIT ?2"
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .map_err(on(label, "list facts without a vector"))?;
    let rows = stmt
        .query_map(params![after, limit as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(on(label, "list facts without a vector"))?;
    Ok(rows
        .into_iter()
        .map(|(n, user_id, fact_id, text)| {
            let target = EmbeddingTarget::Fact { user_id, fact_id };
            (n, Unembedded::new(target, text.unwrap_or_default()))
        })
        .collect())
}

fn documents_page(
    conn: &Connection,
    label: &str,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, Unembedded)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT n, namespace, id, content FROM documents \
             WHERE embedding IS NULL AND n > ?1 ORDER BY n LIMIT ?2",
        )
        .map_err(on(label, "list documents without a vector"))?;
    let rows = stmt
        .query_map(params![after, limit as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(on(label, "list documents without a vector"))?;
    Ok(rows
        .into_iter()
        .map(|(n, namespace, id, content)| {
            (
                n,
                Unembedded::new(EmbeddingTarget::Document { namespace, id }, content),
            )
        })
        .collect())
}

/// One page from `cursor`: facts first, then documents. Blank texts are skipped (they
/// still move the cursor).
fn page(conn: &Connection, label: &str, cursor: Cursor, limit: usize) -> Result<UnembeddedPage> {
    let mut items = Vec::new();
    let mut cursor = cursor;
    loop {
        let rows = match cursor {
            Cursor::Facts(n) => facts_page(conn, label, n, limit - items.len())?,
            Cursor::Documents(n) => documents_page(conn, label, n, limit - items.len())?,
        };
        // The cursor at row `n` of the table being read.
        let next = |n: i64| match cursor {
            Cursor::Facts(_) => Cursor::Facts(n),
            Cursor::Documents(_) => Cursor::Documents(n),
        };
        let full = rows.len() == limit - items.len();
        let last = rows.last().map(|(n, _)| *n);
        items.extend(
            rows.into_iter()
                .map(|(_, u)| u)
                .filter(|u| !u.text.trim().is_empty()),
        );
        match (full, last, cursor) {
            (true, Some(n), _) if items.len() == limit => {
                let next = match next(n) {
                    Cursor::Facts(n) => format!("f{n}"),
                    Cursor::Documents(n) => format!("d{n}"),
                };
                return Ok(UnembeddedPage::new(items, Some(next)));
            }
            // Blank texts left room: read on from the last row.
            (true, Some(n), _) => cursor = next(n),
            (_, _, Cursor::Facts(_)) => cursor = Cursor::Documents(0),
            (_, _, Cursor::Documents(_)) => return Ok(UnembeddedPage::new(items, None)),
        }
    }
}

fn count(conn: &Connection, label: &str) -> Result<usize> {
    let sql = format!(
        "SELECT (SELECT count(*) FROM facts WHERE {FACT_MISSING} \
                 AND trim(json_extract(body, '$.data.text')) <> '') \
              + (SELECT count(*) FROM documents WHERE embedding IS NULL AND trim(content) <> '')"
    );
    conn.prepare_cached(&sql)
        .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
        .map(|n| usize::try_from(n).unwrap_or(0))
        .map_err(on(label, "count what has no vector"))
}

/// Stores a fact's vector if the fact is current, the user's, still has `text` and no vector.
fn set_fact(
    conn: &Connection,
    label: &str,
    user: &str,
    id: &str,
    text: &str,
    v: Vec<f32>,
) -> Result<bool> {
    let op = "store a fact's vector";
    let stored: Option<String> = conn
        .prepare_cached("SELECT body FROM facts WHERE user_id = ?1 AND id = ?2 AND is_current = 1")
        .and_then(|mut s| s.query_row([user, id], |r| r.get(0)).optional())
        .map_err(on(label, op))?;
    let Some(stored) = stored else {
        return Ok(false);
    };
    let mut fact: MemoryFact = body::decode(&stored, || format!("fact `{id}` in {label}"))?;
    if fact.text != text || fact.embedding.is_some() {
        return Ok(false);
    }
    fact.embedding = Some(v);
    let encoded = body::encode(&fact, "fact")?;
    conn.prepare_cached("UPDATE facts SET body = ?3 WHERE user_id = ?1 AND id = ?2")
        .and_then(|mut s| s.execute(params![user, id, encoded]))
        .map_err(on(label, op))?;
    Ok(true)
}

/// Stores a document's vector if it still has `text` and no vector; the namespace's
/// dimension is fixed by its first vector, as on every write.
fn set_document(
    conn: &Connection,
    label: &str,
    ns: &str,
    id: &str,
    text: &str,
    v: Vec<f32>,
) -> Result<bool> {
    let op = "store a document's vector";
    let dimension: Option<i64> = conn
        .prepare_cached("SELECT dimension FROM vector_namespaces WHERE namespace = ?1")
        .and_then(|mut s| s.query_row([ns], |r| r.get(0)).optional())
        .map_err(on(label, op))?;
    let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let updated = conn
        .prepare_cached(
            "UPDATE documents SET embedding = ?4 \
             WHERE namespace = ?1 AND id = ?2 AND content = ?3 AND embedding IS NULL",
        )
        .and_then(|mut s| s.execute(params![ns, id, text, blob]))
        .map_err(on(label, op))?;
    if updated == 0 {
        return Ok(false);
    }
    match dimension {
        Some(d) if d != v.len() as i64 => Err(MemoryError::DimensionMismatch {
            expected: usize::try_from(d).unwrap_or(0),
            found: v.len(),
        }),
        Some(_) => Ok(true),
        None => {
            conn.prepare_cached(
                "INSERT INTO vector_namespaces (namespace, dimension) VALUES (?1, ?2)",
            )
            .and_then(|mut s| s.execute(params![ns, v.len() as i64]))
            .map_err(on(label, op))?;
            Ok(true)
        }
    }
}

#[async_trait]
impl Reembed for SqliteStore {
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>> {
        let op = "read the embedding model";
        self.read(op, move |conn, label| {
            let json: Option<String> = conn
                .prepare_cached("SELECT value FROM store_meta WHERE key = ?1")
                .and_then(|mut s| s.query_row([MODEL_KEY], |r| r.get(0)).optional())
                .map_err(on(label, op))?;
            json.map(|j| model_record::decode(&j, label)).transpose()
        })
        .await
    }

    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()> {
        let op = "record the embedding model";
        let json = model_record::encode(model)?;
        self.write(op, move |conn, label| {
            conn.prepare_cached(
                "INSERT INTO store_meta (key, value) VALUES (?1, ?2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .and_then(|mut s| s.execute([MODEL_KEY, &json]))
            .map_err(on(label, op))?;
            Ok(())
        })
        .await
    }

    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage> {
        let cursor = Cursor::parse(after)?;
        let limit = limit.max(1);
        self.read("list what has no vector", move |conn, label| {
            page(conn, label, cursor, limit)
        })
        .await
    }

    async fn count_unembedded(&self) -> Result<usize> {
        self.read("count what has no vector", |conn, label| count(conn, label))
            .await
    }

    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize> {
        let op = "store vectors";
        let mut prepared = Vec::with_capacity(embedded.len());
        for e in embedded {
            let v = normalised(&e.embedding)?;
            prepared.push((e.target, e.text, v));
        }
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let mut written = 0;
            for (target, text, v) in prepared {
                let stored = match &target {
                    EmbeddingTarget::Fact { user_id, fact_id } => {
                        set_fact(&tx, label, user_id, fact_id, &text, v)?
                    }
                    EmbeddingTarget::Document { namespace, id } => {
                        set_document(&tx, label, namespace, id, &text, v)?
                    }
                    _ => false,
                };
                written += usize::from(stored);
            }
            tx.commit().map_err(on(label, op))?;
            Ok(written)
        })
        .await
    }

    async fn drop_embeddings(&self) -> Result<usize> {
        let op = "drop the vectors";
        self.write(op, move |conn, label| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(on(label, op))?;
            let facts = tx
                .execute(
                    "UPDATE facts SET body = json_remove(body, '$.data.embedding') \
                     WHERE json_extract(body, '$.data.embedding') IS NOT NULL",
                    [],
                )
                .map_err(on(label, op))?;
            let documents = tx
                .execute(
                    "UPDATE documents SET embedding = NULL WHERE embedding IS NOT NULL",
                    [],
                )
                .map_err(on(label, op))?;
            tx.execute("DELETE FROM vector_namespaces", [])
                .map_err(on(label, op))?;
            tx.commit().map_err(on(label, op))?;
            Ok(facts + documents)
        })
        .await
    }
}
