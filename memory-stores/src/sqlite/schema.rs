//! Versioned migrations, tracked in `PRAGMA user_version`.
//!
//! `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`. All pending migrations
//! run in one `IMMEDIATE` transaction, so two processes opening a fresh file at once
//! cannot both apply them, and a crash mid-way leaves the previous version intact.

use agentmemory_core::{MemoryError, Result};
use rusqlite::{Connection, TransactionBehavior};

use super::on;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

const MIGRATIONS: &[&str] = &[
    // 0 → 1: conversations, KV, facts, documents with their full-text index.
    r#"
    CREATE TABLE conversations (
        id         TEXT PRIMARY KEY NOT NULL,
        last_seq   INTEGER NOT NULL,
        created_us INTEGER NOT NULL
    );
    CREATE TABLE events (
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        seq             INTEGER NOT NULL,
        at_us           INTEGER NOT NULL,
        body            TEXT NOT NULL,
        PRIMARY KEY (conversation_id, seq)
    ) WITHOUT ROWID;

    CREATE TABLE kv (
        namespace  TEXT NOT NULL,
        key        TEXT NOT NULL,
        expires_us INTEGER,
        body       TEXT NOT NULL,
        PRIMARY KEY (namespace, key)
    ) WITHOUT ROWID;
    CREATE INDEX kv_expiry ON kv (expires_us) WHERE expires_us IS NOT NULL;

    CREATE TABLE facts (
        n          INTEGER PRIMARY KEY,
        id         TEXT NOT NULL UNIQUE,
        user_id    TEXT NOT NULL,
        is_current INTEGER NOT NULL,
        body       TEXT NOT NULL
    );
    CREATE INDEX facts_by_user ON facts (user_id, is_current, n);

    CREATE TABLE vector_namespaces (
        namespace TEXT PRIMARY KEY NOT NULL,
        dimension INTEGER NOT NULL
    );
    CREATE TABLE documents (
        n         INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        id        TEXT NOT NULL,
        content   TEXT NOT NULL,
        metadata  TEXT NOT NULL,
        embedding BLOB,
        UNIQUE (namespace, id)
    );
    CREATE VIRTUAL TABLE documents_fts USING fts5(
        content, content = 'documents', content_rowid = 'n',
        tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
        INSERT INTO documents_fts (rowid, content) VALUES (new.n, new.content);
    END;
    CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, content) VALUES ('delete', old.n, old.content);
    END;
    CREATE TRIGGER documents_au AFTER UPDATE ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, content) VALUES ('delete', old.n, old.content);
        INSERT INTO documents_fts (rowid, content) VALUES (new.n, new.content);
    END;
    "#,
    // 1 → 2: documents are ranked by agentmem's own in-memory index (see `mirror.rs`),
    // kept in step through a change log; FTS5 goes.
    r#"
    DROP TRIGGER documents_ai;
    DROP TRIGGER documents_ad;
    DROP TRIGGER documents_au;
    DROP TABLE documents_fts;
    CREATE TABLE document_log (
        seq       INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        id        TEXT NOT NULL
    );
    CREATE TABLE document_log_state (
        one            INTEGER PRIMARY KEY CHECK (one = 1),
        pruned_through INTEGER NOT NULL
    );
    INSERT INTO document_log_state (one, pruned_through) VALUES (1, 0);
    CREATE TRIGGER documents_log_insert AFTER INSERT ON documents BEGIN
        INSERT INTO document_log (namespace, id) VALUES (new.namespace, new.id);
    END;
    CREATE TRIGGER documents_log_update AFTER UPDATE ON documents BEGIN
        INSERT INTO document_log (namespace, id) VALUES (new.namespace, new.id);
    END;
    CREATE TRIGGER documents_log_delete AFTER DELETE ON documents BEGIN
        INSERT INTO document_log (namespace, id) VALUES (old.namespace, old.id);
    END;
    "#,
    // 2 → 3: a version per user, raised by every change to their facts (from any
    // connection or process), so a cached index of a user's facts knows when it is stale.
    r#"
    CREATE TABLE fact_versions (
        user_id TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TRIGGER facts_version_insert AFTER INSERT ON facts BEGIN
        INSERT OR IGNORE INTO fact_versions (user_id, version) VALUES (new.user_id, 0);
        UPDATE fact_versions SET version = version + 1 WHERE user_id = new.user_id;
    END;
    CREATE TRIGGER facts_version_update AFTER UPDATE ON facts BEGIN
        INSERT OR IGNORE INTO fact_versions (user_id, version) VALUES (new.user_id, 0);
        UPDATE fact_versions SET version = version + 1 WHERE user_id IN (old.user_id, new.user_id);
    END;
    CREATE TRIGGER facts_version_delete AFTER DELETE ON facts BEGIN
        INSERT OR IGNORE INTO fact_versions (user_id, version) VALUES (old.user_id, 0);
        UPDATE fact_versions SET version = version + 1 WHERE user_id = old.user_id;
    END;
    "#,
    // 3 → 4: the id of each logged message in a column of its own, indexed, so an append
    // checks "already logged?" with one index probe instead of parsing every event.
    r#"
    ALTER TABLE events ADD COLUMN message_id TEXT;
    UPDATE events SET message_id = json_extract(body, '$.data.message.id');
    CREATE INDEX events_by_message ON events (conversation_id, message_id)
        WHERE message_id IS NOT NULL;
    "#,
    // 4 → 5: what has no vector, indexed, so a store opened with a model finds what to
    // embed without reading every row; and a table of store-wide settings, which holds
    // the embedding model that made the vectors (`reembed.rs`).
    r#"
    CREATE INDEX facts_unembedded ON facts (n)
        WHERE is_current = 1 AND json_extract(body, '$.data.embedding') IS NULL;
    CREATE INDEX documents_unembedded ON documents (n) WHERE embedding IS NULL;
    CREATE TABLE store_meta (
        key   TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    ) WITHOUT ROWID;
    "#,
];

fn user_version(conn: &Connection, label: &str) -> Result<u32> {
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(on(label, "read the schema version"))?;
    Ok(u32::try_from(v).unwrap_or(u32::MAX))
}

fn refuse_newer(found: u32) -> Result<()> {
    if found > SCHEMA_VERSION {
        return Err(MemoryError::UnsupportedVersion {
            what: "sqlite schema",
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Brings the database up to [`SCHEMA_VERSION`]; refuses one from a newer build.
pub(crate) fn migrate(conn: &mut Connection, label: &str) -> Result<()> {
    let found = user_version(conn, label)?;
    refuse_newer(found)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    let op = "migrate the schema";
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(on(label, op))?;
    // Another process may have migrated between the check and the lock.
    let found = user_version(&tx, label)?;
    refuse_newer(found)?;
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.execute_batch(sql).map_err(on(label, op))?;
        tracing::info!(
            store = label,
            from,
            to = from + 1,
            "applied sqlite migration"
        );
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(on(label, op))?;
    tx.commit().map_err(on(label, op))
}
