//! The in-memory search index of each document namespace, kept in step with SQLite.
//!
//! The `documents` table is the source of truth; FTS5 ranked every matching row of a
//! query, which made common-word queries cost tens of milliseconds. Instead each
//! namespace is mirrored, the first time it is searched or written, into an
//! [`InMemoryVectorStore`] (the inverted index and dense vectors of `agentmemory-core`,
//! so SQLite ranks exactly as the in-memory store does, sparse, dense or hybrid).
//!
//! Keeping the mirror right:
//!
//! - every insert, update and delete of a document appends `(namespace, id)` to
//!   `document_log` (triggers, so any writer is covered), numbered by an
//!   `AUTOINCREMENT` sequence;
//! - a mirror records the last sequence number it reflects ([`Mirror::applied`]);
//! - before a search, the store reads the current last number (one indexed lookup); when
//!   another connection or process has written since, the changed ids are re-read and
//!   applied (a catch-up), so two processes on one file see each other's writes;
//! - this process's own writes are applied directly after their transaction commits,
//!   when the mirror was current before it; otherwise they are caught up like anyone's;
//! - the log is pruned to its last [`LOG_KEEP`] entries; a mirror older than that (or
//!   one whose update failed half-way) is rebuilt from the table.
//!
//! Nothing of the index is written to disk, so a crash can never leave it inconsistent:
//! an acknowledged write is in the table, and the next process builds its mirror from it.
//! That build is one batch upsert of the namespace's rows, which the core store analyses
//! in parallel before indexing (about 0.3 s of CPU for 100,000 short documents; see
//! `benches/documents.rs`, `open_and_load_index`).
//!
//! The mirrors are bounded by bytes ([`CacheBudget::indexes`](crate::CacheBudget), 128 MiB
//! by default): the least recently used namespaces are dropped (see `lru`) and mirrored
//! again from the table when next used. A mirror's size is measured
//! ([`InMemoryVectorStore::heap_bytes`]) after a load and again once the documents
//! changed since the last measure reach an eighth of those it held then, so measuring
//! costs O(1) per document written, and a recorded size lags at most by that eighth.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use agentmemory_core::vector::{Document, InMemoryVectorStore};
use agentmemory_core::{Result, VectorStore};
use rusqlite::types::{FromSqlError, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};

use super::on;
use crate::lru::{Lru, Remeasure};

/// The namespace used inside each mirror's [`InMemoryVectorStore`] (one per SQLite namespace).
pub(crate) const INNER: &str = "documents";
/// Log entries kept when the log is pruned (pruning starts at twice as many).
pub(crate) const LOG_KEEP: i64 = 100_000;
/// [`Mirror::applied`] of a mirror that has not been loaded, or must be rebuilt.
const UNLOADED: i64 = -1;

/// One namespace's index.
pub(crate) struct Mirror {
    pub(crate) docs: InMemoryVectorStore,
    applied: AtomicI64,
    /// Held while the mirror is loaded, caught up or written through.
    pub(crate) sync: tokio::sync::Mutex<()>,
    /// When its size is due to be measured again.
    remeasure: Remeasure,
}

impl Mirror {
    fn new() -> Self {
        Self {
            docs: InMemoryVectorStore::new(),
            applied: AtomicI64::new(UNLOADED),
            sync: tokio::sync::Mutex::new(()),
            remeasure: Remeasure::default(),
        }
    }

    /// The last `document_log` sequence number reflected, or `-1` when unloaded.
    pub(crate) fn applied(&self) -> i64 {
        self.applied.load(Ordering::Acquire)
    }

    pub(crate) fn set_applied(&self, seq: i64) {
        self.applied.store(seq, Ordering::Release);
    }

    /// Forces a rebuild at the next use.
    pub(crate) fn invalidate(&self) {
        self.set_applied(UNLOADED);
    }

    pub(crate) fn is_loaded(&self) -> bool {
        self.applied() != UNLOADED
    }
}

/// The mirrors of the namespaces used lately by this store, bounded by bytes.
pub(crate) struct Mirrors {
    map: Lru<Arc<Mirror>>,
}

impl Default for Mirrors {
    fn default() -> Self {
        Self {
            map: Lru::new(crate::CacheBudget::from_env().indexes),
        }
    }
}

impl Mirrors {
    /// Changes the budget (evicting what no longer fits).
    pub(crate) fn set_budget(&self, budget: usize) {
        self.map.set_budget(budget);
    }

    /// What the mirrors hold.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> crate::lru::LruStats {
        self.map.stats()
    }

    /// The namespace's mirror, created (unloaded) if needed.
    pub(crate) fn get(&self, namespace: &str) -> Arc<Mirror> {
        self.map
            .get_or_insert_with(namespace, 0, || Arc::new(Mirror::new()))
    }

    /// The namespace's mirror if it has been loaded (writes to other namespaces skip it).
    pub(crate) fn loaded(&self, namespace: &str) -> Option<Arc<Mirror>> {
        self.map.get_if(namespace, |m| m.is_loaded())
    }

    /// Applies `delta` to `mirror`, the namespace's (whose `sync` lock the caller holds),
    /// then measures it when due and files its size.
    pub(crate) async fn apply(&self, namespace: &str, mirror: &Mirror, delta: Delta) -> Result<()> {
        let (full, changed) = match &delta {
            Delta::Current => return Ok(()),
            Delta::Full { documents, .. } => (true, documents.len()),
            Delta::Changes {
                upserted, removed, ..
            } => (false, upserted.len() + removed.len()),
        };
        apply(mirror, delta).await?;
        if mirror.remeasure.changed(changed) || full {
            let held = mirror.docs.len(INNER).await?;
            let bytes = mirror.docs.heap_bytes();
            mirror.remeasure.measured(held);
            self.map
                .resize(namespace, bytes, |m| std::ptr::eq(Arc::as_ptr(m), mirror));
        }
        Ok(())
    }
}

/// The last sequence number handed out by `document_log` (0 before the first write).
pub(crate) fn last_seq(conn: &Connection, label: &str) -> Result<i64> {
    let seq: Option<i64> = conn
        .prepare_cached("SELECT seq FROM sqlite_sequence WHERE name = 'document_log'")
        .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
        .map_err(on(label, "read the document log"))?;
    Ok(seq.unwrap_or(0))
}

fn pruned_through(conn: &Connection, label: &str) -> Result<i64> {
    conn.prepare_cached("SELECT pruned_through FROM document_log_state WHERE one = 1")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(on(label, "read the document log"))
}

/// Drops old log entries once there are more than `2 × LOG_KEEP`; runs inside a write
/// transaction.
pub(crate) fn prune(conn: &Connection, label: &str) -> Result<()> {
    prune_keeping(conn, label, LOG_KEEP)
}

fn prune_keeping(conn: &Connection, label: &str, keep: i64) -> Result<()> {
    let last = last_seq(conn, label)?;
    let pruned = pruned_through(conn, label)?;
    if last - pruned <= 2 * keep {
        return Ok(());
    }
    let through = last - keep;
    let op = "prune the document log";
    conn.prepare_cached("DELETE FROM document_log WHERE seq <= ?1")
        .and_then(|mut s| s.execute([through]))
        .and_then(|_| {
            conn.prepare_cached("UPDATE document_log_state SET pruned_through = ?1 WHERE one = 1")
                .and_then(|mut s| s.execute([through]))
        })
        .map_err(on(label, op))?;
    Ok(())
}

/// What a mirror needs to become current.
pub(crate) enum Delta {
    /// Nothing was written since.
    Current,
    /// Rebuild from every document of the namespace, as of log position `last`.
    Full { last: i64, documents: Vec<Document> },
    /// Apply these, then the mirror is current as of `last`.
    Changes {
        last: i64,
        upserted: Vec<Document>,
        removed: Vec<String>,
    },
}

/// Reads what a mirror at `applied` lacks. The log position is read first, so whatever
/// is read after it is at least as new; applying a change twice is harmless.
pub(crate) fn delta(
    conn: &Connection,
    label: &str,
    namespace: &str,
    applied: i64,
) -> Result<Delta> {
    let last = last_seq(conn, label)?;
    if applied != UNLOADED && last <= applied {
        return Ok(Delta::Current);
    }
    if applied == UNLOADED || applied < pruned_through(conn, label)? {
        let documents = all_documents(conn, label, namespace)?;
        return Ok(Delta::Full { last, documents });
    }
    let op = "catch up the document index";
    let mut stmt = conn
        .prepare_cached(
            "SELECT l.id, d.content, d.metadata, d.embedding \
             FROM (SELECT DISTINCT id FROM document_log WHERE seq > ?2 AND namespace = ?1) l \
             LEFT JOIN documents d ON d.namespace = ?1 AND d.id = l.id",
        )
        .map_err(on(label, op))?;
    let mut rows = stmt
        .query(params![namespace, applied])
        .map_err(on(label, op))?;
    let (mut upserted, mut removed) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next().map_err(on(label, op))? {
        let id: String = row.get(0).map_err(on(label, op))?;
        let content: Option<String> = row.get(1).map_err(on(label, op))?;
        match content {
            None => removed.push(id),
            Some(content) => upserted.push(document(row, label, id, content)?),
        }
    }
    Ok(Delta::Changes {
        last,
        upserted,
        removed,
    })
}

fn all_documents(conn: &Connection, label: &str, namespace: &str) -> Result<Vec<Document>> {
    let op = "load a document namespace";
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, content, metadata, embedding FROM documents WHERE namespace = ?1",
        )
        .map_err(on(label, op))?;
    let mut rows = stmt.query([namespace]).map_err(on(label, op))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(on(label, op))? {
        let id: String = row.get(0).map_err(on(label, op))?;
        let content: String = row.get(1).map_err(on(label, op))?;
        out.push(document(row, label, id, content)?);
    }
    Ok(out)
}

/// A document from a row whose columns 2 and 3 are metadata and embedding.
fn document(row: &rusqlite::Row<'_>, label: &str, id: String, content: String) -> Result<Document> {
    let op = "read a document";
    // Borrowed from the row: the metadata text and the blob are parsed, never kept.
    let meta = row
        .get_ref(2)
        .and_then(|v| v.as_str().map_err(|e| wrong_type(2, v, e)))
        .map_err(on(label, op))?;
    let blob = row
        .get_ref(3)
        .and_then(|v| v.as_blob_or_null().map_err(|e| wrong_type(3, v, e)))
        .map_err(on(label, op))?;
    let what = || format!("document `{id}` in {label}");
    let metadata = super::vector::metadata(meta, what)?;
    let embedding = blob
        .map(|b| super::vector::from_blob(b, what))
        .transpose()?;
    let mut doc = Document::new(content).with_id(id);
    doc.metadata = metadata;
    doc.embedding = embedding;
    Ok(doc)
}

fn wrong_type(column: usize, v: ValueRef<'_>, e: FromSqlError) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, v.data_type(), Box::new(e))
}

/// Applies `delta` to `mirror` (whose `sync` lock the caller holds).
async fn apply(mirror: &Mirror, delta: Delta) -> Result<()> {
    match delta {
        Delta::Current => Ok(()),
        Delta::Full { last, documents } => {
            mirror.invalidate();
            mirror.docs.clear(INNER).await?;
            if !documents.is_empty() {
                mirror.docs.upsert_batch(INNER, documents).await?;
            }
            mirror.set_applied(last);
            Ok(())
        }
        Delta::Changes {
            last,
            upserted,
            removed,
        } => {
            mirror.invalidate();
            if !removed.is_empty() {
                mirror.docs.delete(INNER, &removed).await?;
            }
            if !upserted.is_empty() {
                mirror.docs.upsert_batch(INNER, upserted).await?;
            }
            mirror.set_applied(last);
            Ok(())
        }
    }
}

/// [`last_seq`] in the shape of a store read.
pub(crate) fn last_seq_of(conn: &mut Connection, label: &str) -> Result<i64> {
    last_seq(conn, label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().expect("open");
        super::super::schema::migrate(&mut conn, "test").expect("migrate");
        conn
    }

    fn insert(conn: &Connection, id: &str, content: &str) {
        conn.execute(
            "INSERT INTO documents (namespace, id, content, metadata) VALUES ('ns', ?1, ?2, '{}') \
             ON CONFLICT (namespace, id) DO UPDATE SET content = excluded.content",
            [id, content],
        )
        .expect("insert");
    }

    #[test]
    fn every_write_is_logged_and_a_delta_names_current_state() {
        let conn = db();
        assert_eq!(last_seq(&conn, "t").expect("seq"), 0);
        insert(&conn, "a", "one");
        insert(&conn, "b", "two");
        let after_two = last_seq(&conn, "t").expect("seq");
        assert_eq!(after_two, 2);
        insert(&conn, "a", "one again");
        conn.execute("DELETE FROM documents WHERE id = 'b'", [])
            .expect("delete");
        match delta(&conn, "t", "ns", after_two).expect("delta") {
            Delta::Changes {
                last,
                upserted,
                removed,
            } => {
                assert_eq!(last, 4);
                assert_eq!(upserted.len(), 1);
                assert_eq!(upserted[0].content, "one again");
                assert_eq!(removed, ["b"]);
            }
            _ => panic!("expected changes"),
        }
        assert!(matches!(delta(&conn, "t", "ns", 4), Ok(Delta::Current)));
        assert!(matches!(
            delta(&conn, "t", "other", 2),
            Ok(Delta::Changes { upserted, removed, .. }) if upserted.is_empty() && removed.is_empty()
        ));
    }

    #[test]
    fn a_mirror_older_than_the_pruned_log_is_rebuilt() {
        const KEEP: i64 = 10;
        let conn = db();
        for i in 0..(2 * KEEP + 5) {
            insert(&conn, &format!("d{}", i % 3), "text");
        }
        prune_keeping(&conn, "t", KEEP).expect("prune");
        let kept: i64 = conn
            .query_row("SELECT count(*) FROM document_log", [], |r| r.get(0))
            .expect("count");
        assert_eq!(kept, KEEP);
        match delta(&conn, "t", "ns", 3).expect("delta") {
            Delta::Full { documents, last } => {
                assert_eq!(documents.len(), 3);
                assert_eq!(last, 2 * KEEP + 5);
            }
            _ => panic!("expected a rebuild"),
        }
        assert!(matches!(
            delta(&conn, "t", "ns", 2 * KEEP),
            Ok(Delta::Changes { .. })
        ));
    }
}
