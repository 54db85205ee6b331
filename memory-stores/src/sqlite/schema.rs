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
    // 5 → 6: a snapshot of each large user's indexed facts at one version (`fact_snapshot.rs`),
    // and the id each change to a user's facts wrote, under the version it made, for the
    // last 4,096 versions: a store opening the user reads the snapshot and the facts
    // written since instead of every fact. The version triggers log as they count, so
    // every writer (any connection or process) logs.
    r#"
    CREATE TABLE fact_snapshots (
        user_id TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL,
        last_n  INTEGER NOT NULL,
        body    BLOB NOT NULL
    );
    CREATE TABLE fact_log (
        user_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        id      TEXT NOT NULL,
        PRIMARY KEY (user_id, version)
    ) WITHOUT ROWID;
    DROP TRIGGER facts_version_insert;
    DROP TRIGGER facts_version_update;
    DROP TRIGGER facts_version_delete;
    CREATE TRIGGER facts_version_insert AFTER INSERT ON facts BEGIN
        INSERT OR IGNORE INTO fact_versions (user_id, version) VALUES (new.user_id, 0);
        UPDATE fact_versions SET version = version + 1 WHERE user_id = new.user_id;
        INSERT INTO fact_log (user_id, version, id)
            SELECT user_id, version, new.id FROM fact_versions WHERE user_id = new.user_id;
        DELETE FROM fact_log WHERE user_id = new.user_id AND version <=
            (SELECT version - 4096 FROM fact_versions WHERE user_id = new.user_id);
    END;
    CREATE TRIGGER facts_version_update AFTER UPDATE ON facts BEGIN
        INSERT OR IGNORE INTO fact_versions (user_id, version) VALUES (new.user_id, 0);
        UPDATE fact_versions SET version = version + 1 WHERE user_id IN (old.user_id, new.user_id);
        INSERT INTO fact_log (user_id, version, id)
            SELECT user_id, version, CASE WHEN user_id = new.user_id THEN new.id ELSE old.id END
            FROM fact_versions WHERE user_id IN (old.user_id, new.user_id);
        DELETE FROM fact_log WHERE user_id = new.user_id AND version <=
            (SELECT version - 4096 FROM fact_versions WHERE user_id = new.user_id);
    END;
    CREATE TRIGGER facts_version_delete AFTER DELETE ON facts BEGIN
        INSERT OR IGNORE INTO fact_versions (user_id, version) VALUES (old.user_id, 0);
        UPDATE fact_versions SET version = version + 1 WHERE user_id = old.user_id;
        INSERT INTO fact_log (user_id, version, id)
            SELECT user_id, version, old.id FROM fact_versions WHERE user_id = old.user_id;
        DELETE FROM fact_log WHERE user_id = old.user_id AND version <=
            (SELECT version - 4096 FROM fact_versions WHERE user_id = old.user_id);
    END;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(conn: &Connection, user: &str) -> Vec<(i64, String)> {
        let mut stmt = conn
            .prepare("SELECT version, id FROM fact_log WHERE user_id = ?1 ORDER BY version")
            .expect("prepare");
        stmt.query_map([user], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
    }

    /// A file at schema 5 (facts counted by the version triggers, nothing logged) is
    /// brought to 6 once, keeps its facts and versions, and logs every change from then
    /// on, the last 4,096 versions per user.
    #[test]
    fn a_schema_5_file_migrates_and_logs_changes_from_then_on() {
        let mut conn = Connection::open_in_memory().expect("open");
        for sql in &MIGRATIONS[..5] {
            conn.execute_batch(sql).expect("old migration");
        }
        conn.pragma_update(None, "user_version", 5)
            .expect("version 5");
        conn.execute(
            "INSERT INTO facts (id, user_id, is_current, body) VALUES ('f1', 'u', 1, '{}')",
            [],
        )
        .expect("old write");
        migrate(&mut conn, "test").expect("migrate");
        migrate(&mut conn, "test").expect("again: nothing to do");
        assert_eq!(
            user_version(&conn, "test").expect("version"),
            SCHEMA_VERSION
        );
        assert!(
            logged(&conn, "u").is_empty(),
            "writes before the log are not in it"
        );
        conn.execute("UPDATE facts SET is_current = 0 WHERE id = 'f1'", [])
            .expect("update");
        conn.execute(
            "INSERT INTO facts (id, user_id, is_current, body) VALUES ('f2', 'u', 1, '{}')",
            [],
        )
        .expect("insert");
        conn.execute("DELETE FROM facts WHERE id = 'f1'", [])
            .expect("delete");
        let want: Vec<(i64, String)> = vec![(2, "f1".into()), (3, "f2".into()), (4, "f1".into())];
        assert_eq!(logged(&conn, "u"), want);
        let tx = conn.transaction().expect("tx");
        for i in 0..5_000 {
            tx.execute(
                "INSERT INTO facts (id, user_id, is_current, body) VALUES (?1, 'u', 1, '{}')",
                [format!("g{i}")],
            )
            .expect("insert many");
        }
        tx.commit().expect("commit");
        let log = logged(&conn, "u");
        assert_eq!(log.len(), 4_096, "the last 4,096 versions are kept");
        assert_eq!(log.last().map(|(v, _)| *v), Some(5_004));
        assert_eq!(log.first().map(|(v, _)| *v), Some(5_004 - 4_095));
    }
}
