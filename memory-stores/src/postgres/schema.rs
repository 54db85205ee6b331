//! Versioned migrations of the store's schema, and `pgvector` detection.

use agentmemory_core::{MemoryError, Result};
use tokio_postgres::Client;

use super::{on, STORE};

/// The schema version this build creates and reads.
pub(crate) const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// A constant key for the advisory lock that serialises migrations across processes.
pub(crate) const MIGRATION_LOCK: i64 = 0x6167_656e_746d_656d; // "agentmem"

/// The SQL of each version, in order; `{s}` is the quoted schema.
pub(super) const MIGRATIONS: &[&str] = &[
    // 0 → 1: conversations, KV, documents, facts.
    r"
CREATE TABLE {s}.conversations (
    id text PRIMARY KEY,
    last_seq bigint NOT NULL,
    created_us bigint NOT NULL
);
CREATE TABLE {s}.events (
    conversation_id text NOT NULL REFERENCES {s}.conversations (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    at_us bigint NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE {s}.kv (
    namespace text NOT NULL,
    key text NOT NULL,
    expires_us bigint,
    body jsonb NOT NULL,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX kv_expiry ON {s}.kv (expires_us) WHERE expires_us IS NOT NULL;
CREATE TABLE {s}.vector_namespaces (
    namespace text PRIMARY KEY,
    dimension integer NOT NULL
);
CREATE TABLE {s}.documents (
    namespace text NOT NULL,
    id text NOT NULL,
    content text NOT NULL,
    metadata jsonb NOT NULL,
    embedding real[],
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, content)) STORED,
    PRIMARY KEY (namespace, id)
);
CREATE INDEX documents_tsv ON {s}.documents USING gin (tsv);
CREATE TABLE {s}.facts (
    user_id text NOT NULL,
    id text NOT NULL,
    n bigserial,
    is_current boolean NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (user_id, id)
);
",
    // 1 → 2: a version per user, raised by every change to their facts (from any client),
    // so a cached index of a user's facts knows when it is stale.
    r"
CREATE TABLE {s}.fact_versions (
    user_id text PRIMARY KEY,
    version bigint NOT NULL
);
CREATE FUNCTION {s}.bump_fact_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO {s}.fact_versions AS v (user_id, version) VALUES (OLD.user_id, 1)
            ON CONFLICT (user_id) DO UPDATE SET version = v.version + 1;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO {s}.fact_versions AS v (user_id, version) VALUES (NEW.user_id, 1)
            ON CONFLICT (user_id) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER facts_version AFTER INSERT OR UPDATE OR DELETE ON {s}.facts
    FOR EACH ROW EXECUTE FUNCTION {s}.bump_fact_version();
",
    // 2 → 3: documents indexed through the shared text analysis (`agentmemory_core::text`:
    // folding, stemming, CJK bigrams) instead of `to_tsvector('simple', …)`. Each document
    // keeps its distinct analysed terms and their `1 + ln tf` weights (written by the
    // client, GIN-indexed for retrieval); `document_terms` keeps each term's document
    // frequency per namespace, and under the term '' (never an analysed term) the number
    // of documents, kept by a trigger from any client, so a search scores with the same
    // TF-IDF cosine as every other backend. Rows written before have NULL terms until the
    // client that migrates fills them in (`backfill_terms`); they are not counted before.
    r"
DROP INDEX {s}.documents_tsv;
ALTER TABLE {s}.documents DROP COLUMN tsv;
ALTER TABLE {s}.documents ADD COLUMN terms text[], ADD COLUMN term_weights real[];
CREATE INDEX documents_terms ON {s}.documents USING gin (terms);
CREATE TABLE {s}.document_terms (
    namespace text NOT NULL,
    term text NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (namespace, term)
);
CREATE FUNCTION {s}.count_document_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The namespace's document count first: every writer of a namespace's statistics
    -- takes that row's lock before any term's, so concurrent writers queue instead of
    -- deadlocking over terms locked in different orders.
    IF TG_OP <> 'INSERT' AND OLD.terms IS NOT NULL THEN
        UPDATE {s}.document_terms AS t SET df = t.df - 1
            WHERE t.namespace = OLD.namespace AND t.term = '';
        UPDATE {s}.document_terms AS t SET df = t.df - 1
            WHERE t.namespace = OLD.namespace AND t.term = ANY(OLD.terms);
        DELETE FROM {s}.document_terms AS t
            WHERE t.namespace = OLD.namespace AND t.term = ANY(OLD.terms) AND t.df <= 0;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.terms IS NOT NULL THEN
        INSERT INTO {s}.document_terms AS t (namespace, term, df) VALUES (NEW.namespace, '', 1)
            ON CONFLICT (namespace, term) DO UPDATE SET df = t.df + 1;
        INSERT INTO {s}.document_terms AS t (namespace, term, df)
            SELECT NEW.namespace, u.term, 1
            FROM (SELECT DISTINCT unnest(NEW.terms) AS term) u
            ORDER BY u.term
            ON CONFLICT (namespace, term) DO UPDATE SET df = t.df + 1;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER documents_count_terms AFTER INSERT OR DELETE OR UPDATE OF namespace, terms
    ON {s}.documents FOR EACH ROW EXECUTE FUNCTION {s}.count_document_terms();
",
    // 3 → 4: what has no vector, indexed, so a store opened with a model finds what to
    // embed without reading every row; and a table of store-wide settings, which holds
    // the embedding model that made the vectors (`reembed.rs`).
    r"
CREATE INDEX facts_unembedded ON {s}.facts (n) WHERE is_current AND NOT (body ? 'embedding');
CREATE INDEX documents_unembedded ON {s}.documents (namespace, id) WHERE embedding IS NULL;
CREATE TABLE {s}.store_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
",
    // 4 → 5: a snapshot of each large user's indexed facts at one version (`fact_snapshot.rs`),
    // and the id each change to a user's facts wrote, under the version it made, for the
    // last 4,096 versions: a store opening the user reads the snapshot and the facts
    // written since instead of every fact. The version trigger logs as it counts, so every
    // writer (any client) logs.
    r"
CREATE TABLE {s}.fact_snapshots (
    user_id text PRIMARY KEY,
    version bigint NOT NULL,
    last_n bigint NOT NULL,
    body bytea NOT NULL
);
CREATE TABLE {s}.fact_log (
    user_id text NOT NULL,
    version bigint NOT NULL,
    id text NOT NULL,
    PRIMARY KEY (user_id, version)
);
CREATE OR REPLACE FUNCTION {s}.bump_fact_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v bigint;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO {s}.fact_versions AS fv (user_id, version) VALUES (OLD.user_id, 1)
            ON CONFLICT (user_id) DO UPDATE SET version = fv.version + 1
            RETURNING fv.version INTO v;
        INSERT INTO {s}.fact_log (user_id, version, id) VALUES (OLD.user_id, v, OLD.id);
        DELETE FROM {s}.fact_log WHERE user_id = OLD.user_id AND version <= v - 4096;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO {s}.fact_versions AS fv (user_id, version) VALUES (NEW.user_id, 1)
            ON CONFLICT (user_id) DO UPDATE SET version = fv.version + 1
            RETURNING fv.version INTO v;
        INSERT INTO {s}.fact_log (user_id, version, id) VALUES (NEW.user_id, v, NEW.id);
        DELETE FROM {s}.fact_log WHERE user_id = NEW.user_id AND version <= v - 4096;
    END IF;
    RETURN NULL;
END
$$;
",
];

/// How many documents [`backfill_terms`] analyses per statement.
const BACKFILL_BATCH: i64 = 500;

/// Fills in the analysed terms of documents written before schema version 3 (NULL
/// `terms`), in batches; how many it filled. Runs at connect after [`migrate`], so a
/// database created by an earlier version ranks its old documents like new ones.
pub(crate) async fn backfill_terms(client: &Client, schema: &str) -> Result<usize> {
    let op = "index documents written by an earlier version";
    let select = format!(
        "SELECT namespace, id, content FROM {schema}.documents WHERE terms IS NULL LIMIT $1"
    );
    let update = format!(
        "UPDATE {schema}.documents SET terms = $3, term_weights = $4 \
         WHERE namespace = $1 AND id = $2 AND terms IS NULL"
    );
    let mut filled = 0;
    loop {
        let rows = client
            .query(&select, &[&BACKFILL_BATCH])
            .await
            .map_err(on(op))?;
        if rows.is_empty() {
            return Ok(filled);
        }
        for row in &rows {
            let namespace: &str = row.try_get(0).map_err(on(op))?;
            let id: &str = row.try_get(1).map_err(on(op))?;
            let content: &str = row.try_get(2).map_err(on(op))?;
            let (terms, weights) = analysed(content);
            client
                .execute(&update, &[&namespace, &id, &terms, &weights])
                .await
                .map_err(on(op))?;
            filled += 1;
        }
    }
}

/// A document's distinct analysed terms (sorted) and their `1 + ln tf` weights, as the
/// `terms` and `term_weights` columns keep them.
pub(crate) fn analysed(content: &str) -> (Vec<String>, Vec<f32>) {
    agentmemory_core::store_support::tfidf::document_terms(content)
        .into_iter()
        .unzip()
}

/// `name` quoted as an identifier, if it is a plain lowercase one.
pub(crate) fn quoted(name: &str) -> Result<String> {
    let mut chars = name.chars();
    let ok = matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63;
    if !ok {
        return Err(MemoryError::invalid(
            "postgres schema",
            format!("`{name}` is not a plain identifier ([a-z_][a-z0-9_]*, at most 63 bytes)"),
        ));
    }
    Ok(format!("\"{name}\""))
}

/// Creates the schema if needed and applies every migration it lacks, in one transaction
/// under an advisory lock (so concurrent starters do not race).
pub(crate) async fn migrate(client: &mut Client, schema: &str) -> Result<()> {
    let op = "migrate the schema";
    let tx = client.transaction().await.map_err(on(op))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(on(op))?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema};
         CREATE TABLE IF NOT EXISTS {schema}.schema_version (version integer NOT NULL);"
    ))
    .await
    .map_err(on(op))?;
    let row = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {schema}.schema_version"),
            &[],
        )
        .await
        .map_err(on(op))?;
    let found: i32 = row.try_get(0).map_err(on(op))?;
    let found = u32::try_from(found).unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(MemoryError::UnsupportedVersion {
            what: "postgres schema",
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(&sql.replace("{s}", schema))
            .await
            .map_err(on(op))?;
        let version = i32::try_from(i + 1).unwrap_or(i32::MAX);
        tx.execute(
            &format!("INSERT INTO {schema}.schema_version (version) VALUES ($1)"),
            &[&version],
        )
        .await
        .map_err(on(op))?;
    }
    tx.commit().await.map_err(on(op))
}

/// Whether the `vector` type is usable: `CREATE EXTENSION IF NOT EXISTS vector` (which
/// needs the extension installed on the server and the right privileges), then a cast.
pub(crate) async fn enable_pgvector(client: &Client) -> bool {
    if let Err(e) = client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
        .await
    {
        tracing::info!(store = STORE, error = %e, "could not create the pgvector extension");
    }
    match client.query_one("SELECT '[1,0]'::vector::text", &[]).await {
        Ok(_) => true,
        Err(e) => {
            tracing::info!(store = STORE, error = %e, "pgvector is not available");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_identifiers_are_schema_names() {
        assert_eq!(quoted("agentmem").ok().as_deref(), Some("\"agentmem\""));
        assert!(quoted("_a1").is_ok());
        for bad in ["", "A", "1a", "a-b", "a\"b", "a; DROP", &"a".repeat(64)] {
            assert!(quoted(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_migration_is_schema_qualified() {
        for sql in MIGRATIONS {
            for line in sql.lines().filter(|l| l.starts_with("CREATE TABLE")) {
                assert!(line.contains("{s}."), "{line}");
            }
        }
    }
}
