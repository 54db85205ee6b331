//! The index that lists a namespace's document ids in byte order.
//!
//! [`VectorStore::ids`](agentmemory_core::VectorStore::ids) and
//! [`ids_in_range`](agentmemory_core::VectorStore::ids_in_range) order and compare ids
//! with `COLLATE "C"` (byte order, whatever the database's collation), which the primary
//! key `(namespace, id)` (in the database's default collation) cannot answer: a range
//! would filter every id of the namespace. `documents_ids` is the same key in byte order,
//! so a range is one index range scan.
//!
//! It is created at connect (once, under the migration lock) rather than by a versioned
//! migration: it is only an index, kept by the server for every client, so a database
//! that has it still opens with earlier agentmem versions.

use agentmemory_core::Result;
use deadpool_postgres::Object;

use super::on;

/// The index's name.
pub(super) const INDEX: &str = "documents_ids";

/// `CREATE INDEX` of the id index on `{schema}.documents`.
pub(super) fn create_sql(schema: &str) -> String {
    format!(
        "CREATE INDEX IF NOT EXISTS {INDEX} ON {schema}.documents (namespace, id COLLATE \"C\")"
    )
}

/// The ids of namespace `$1` from `$2` (inclusive) to `$3` (exclusive), in byte order,
/// from the quoted, schema-qualified `documents` table.
pub(super) fn range_sql(documents: &str) -> String {
    format!(
        "SELECT id FROM {documents} WHERE namespace = $1 \
         AND id COLLATE \"C\" >= $2 AND id COLLATE \"C\" < $3 ORDER BY id COLLATE \"C\""
    )
}

/// Creates the id index unless it exists (asked first without a lock, so a connect to a
/// database that has it takes no lock on the table). The first creation indexes every
/// stored document, once.
pub(super) async fn ensure(client: &mut Object, schema: &str) -> Result<()> {
    let op = "create the document id index";
    let name = format!("{schema}.{INDEX}");
    let exists = |row: tokio_postgres::Row| row.try_get::<_, bool>(0).map_err(on(op));
    let present = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
        .await
        .map_err(on(op))?;
    if exists(present)? {
        return Ok(());
    }
    let tx = client.transaction().await.map_err(on(op))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&super::schema::MIGRATION_LOCK],
    )
    .await
    .map_err(on(op))?;
    tx.batch_execute(&create_sql(schema))
        .await
        .map_err(on(op))?;
    tx.commit().await.map_err(on(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_compares_in_the_order_the_index_keeps() {
        assert!(create_sql("\"s\"").contains("(namespace, id COLLATE \"C\")"));
        let sql = range_sql("\"s\".documents");
        assert_eq!(sql.matches("COLLATE \"C\"").count(), 3, "{sql}");
    }
}
