//! [`Reembed`] on PostgreSQL.
//!
//! - What has no vector is found through two partial indexes (schema version 4): current
//!   facts whose body has no `embedding` key (by their `n`), documents whose `embedding`
//!   is NULL (by namespace and id), so a pass costs time in what is missing. Pages run
//!   over facts, then documents: cursor `f<n>` or `d<namespace>\0<id>` (PostgreSQL text
//!   never holds a NUL).
//! - Vectors are written in one transaction per page, each only where the record still
//!   has the text it was made from and no vector; the `fact_versions` trigger tells the
//!   fact caches of every client. A namespace's first vector fixes its dimension and
//!   creates that dimension's HNSW index, as on every write.
//! - The model is one row of `store_meta` (key `embedding_model`).

use agentmemory_core::reembed::{
    Embedded, EmbeddingModel, EmbeddingTarget, Reembed, Unembedded, UnembeddedPage,
};
use agentmemory_core::{MemoryError, Result};
use async_trait::async_trait;

use super::{on, PostgresStore};
use crate::dense::normalised;
use crate::model_record;

const MODEL_KEY: &str = "embedding_model";

/// Where a page starts.
enum Cursor {
    Facts(i64),
    Documents(String, String),
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
        if let Some(n) = after.strip_prefix('f') {
            return n.parse().map(Cursor::Facts).map_err(|_| bad());
        }
        let (ns, id) = after
            .strip_prefix('d')
            .and_then(|rest| rest.split_once('\u{0}'))
            .ok_or_else(bad)?;
        Ok(Cursor::Documents(ns.to_owned(), id.to_owned()))
    }
}

impl PostgresStore {
    async fn facts_page(
        &self,
        client: &deadpool_postgres::Object,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, Unembedded)>> {
        let op = "list facts without a vector";
        let rows = client
            .query(
                &format!(
                    "SELECT n, user_id, id, body->>'text' FROM {} \
                     WHERE is_current AND NOT (body ? 'embedding') AND n > $1 \
                     ORDER BY n LIMIT $2",
                    self.table("facts")
                ),
                &[&after, &limit],
            )
            .await
            .map_err(on(op))?;
        rows.iter()
            .map(|r| {
                let text: Option<String> = r.try_get(3).map_err(on(op))?;
                Ok((
                    r.try_get(0).map_err(on(op))?,
                    Unembedded::new(
                        EmbeddingTarget::Fact {
                            user_id: r.try_get(1).map_err(on(op))?,
                            fact_id: r.try_get(2).map_err(on(op))?,
                        },
                        text.unwrap_or_default(),
                    ),
                ))
            })
            .collect()
    }

    async fn documents_page(
        &self,
        client: &deadpool_postgres::Object,
        after: (&str, &str),
        limit: i64,
    ) -> Result<Vec<Unembedded>> {
        let op = "list documents without a vector";
        let rows = client
            .query(
                &format!(
                    "SELECT namespace, id, content FROM {} \
                     WHERE embedding IS NULL AND (namespace, id) > ($1, $2) \
                     ORDER BY namespace, id LIMIT $3",
                    self.table("documents")
                ),
                &[&after.0, &after.1, &limit],
            )
            .await
            .map_err(on(op))?;
        rows.iter()
            .map(|r| {
                Ok(Unembedded::new(
                    EmbeddingTarget::Document {
                        namespace: r.try_get(0).map_err(on(op))?,
                        id: r.try_get(1).map_err(on(op))?,
                    },
                    r.try_get::<_, String>(2).map_err(on(op))?,
                ))
            })
            .collect()
    }

    /// One page from `cursor`; blank texts are skipped (they still move the cursor).
    async fn page(&self, mut cursor: Cursor, limit: usize) -> Result<UnembeddedPage> {
        let client = self.client("list what has no vector").await?;
        let mut items: Vec<Unembedded> = Vec::new();
        loop {
            let room = limit - items.len();
            match &cursor {
                Cursor::Facts(n) => {
                    let rows = self.facts_page(&client, *n, room as i64).await?;
                    let full = rows.len() == room;
                    let last = rows.last().map(|(n, _)| *n);
                    items.extend(
                        rows.into_iter()
                            .map(|(_, u)| u)
                            .filter(|u| !u.text.trim().is_empty()),
                    );
                    cursor = match (full, last) {
                        (true, Some(n)) if items.len() == limit => {
                            return Ok(UnembeddedPage::new(items, Some(format!("f{n}"))))
                        }
                        (true, Some(n)) => Cursor::Facts(n),
                        _ => Cursor::Documents(String::new(), String::new()),
                    };
                }
                Cursor::Documents(ns, id) => {
                    let rows = self.documents_page(&client, (ns, id), room as i64).await?;
                    let full = rows.len() == room;
                    let last = rows.last().map(|u| match &u.target {
                        EmbeddingTarget::Document { namespace, id } => {
                            (namespace.clone(), id.clone())
                        }
                        _ => (String::new(), String::new()),
                    });
                    items.extend(rows.into_iter().filter(|u| !u.text.trim().is_empty()));
                    cursor = match (full, last) {
                        (true, Some((ns, id))) if items.len() == limit => {
                            let next = format!("d{ns}\u{0}{id}");
                            return Ok(UnembeddedPage::new(items, Some(next)));
                        }
                        (true, Some((ns, id))) => Cursor::Documents(ns, id),
                        _ => return Ok(UnembeddedPage::new(items, None)),
                    };
                }
            }
        }
    }
}

#[async_trait]
impl Reembed for PostgresStore {
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>> {
        let op = "read the embedding model";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT value FROM {} WHERE key = $1",
                        self.table("store_meta")
                    ),
                    &[&MODEL_KEY],
                )
                .await
                .map_err(on(op))?;
            row.map(|r| {
                let json: String = r.try_get(0).map_err(on(op))?;
                model_record::decode(&json, "postgres")
            })
            .transpose()
        })
        .await
    }

    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()> {
        let op = "record the embedding model";
        let json = model_record::encode(model)?;
        self.bounded(op, async {
            let client = self.client(op).await?;
            client
                .execute(
                    &format!(
                        "INSERT INTO {} (key, value) VALUES ($1, $2) \
                         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        self.table("store_meta")
                    ),
                    &[&MODEL_KEY, &json],
                )
                .await
                .map_err(on(op))?;
            Ok(())
        })
        .await
    }

    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage> {
        let cursor = Cursor::parse(after)?;
        self.bounded("list what has no vector", self.page(cursor, limit.max(1)))
            .await
    }

    async fn count_unembedded(&self) -> Result<usize> {
        let op = "count what has no vector";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let n: i64 = client
                .query_one(
                    &format!(
                        "SELECT (SELECT count(*) FROM {} WHERE is_current AND NOT (body ? 'embedding') \
                                 AND btrim(body->>'text') <> '') \
                              + (SELECT count(*) FROM {} WHERE embedding IS NULL AND btrim(content) <> '')",
                        self.table("facts"),
                        self.table("documents")
                    ),
                    &[],
                )
                .await
                .map_err(on(op))?
                .try_get(0)
                .map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }

    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize> {
        let op = "store vectors";
        let mut prepared = Vec::with_capacity(embedded.len());
        for e in embedded {
            let v = normalised(&e.embedding)?;
            prepared.push((e.target, e.text, v));
        }
        let mut new_dims = Vec::new();
        let written = self
            .bounded(op, async {
                let mut client = self.client(op).await?;
                let tx = client.transaction().await.map_err(on(op))?;
                let mut written = 0u64;
                for (target, text, v) in &prepared {
                    match target {
                        EmbeddingTarget::Fact { user_id, fact_id } => {
                            let json = serde_json::to_string(v)
                                .map_err(|e| MemoryError::invalid("embedding", e.to_string()))?;
                            written += tx
                                .execute(
                                    &format!(
                                        "UPDATE {} SET body = jsonb_set(body, '{{embedding}}', $4::text::jsonb) \
                                         WHERE user_id = $1 AND id = $2 AND is_current \
                                         AND body->>'text' = $3 AND NOT (body ? 'embedding')",
                                        self.table("facts")
                                    ),
                                    &[user_id, fact_id, text, &json],
                                )
                                .await
                                .map_err(on(op))?;
                        }
                        EmbeddingTarget::Document { namespace, id } => {
                            let updated = tx
                                .execute(
                                    &format!(
                                        "UPDATE {} SET embedding = $4 WHERE namespace = $1 AND id = $2 \
                                         AND content = $3 AND embedding IS NULL",
                                        self.table("documents")
                                    ),
                                    &[namespace, id, text, v],
                                )
                                .await
                                .map_err(on(op))?;
                            if updated == 0 {
                                continue;
                            }
                            // Lock the namespace's row so two first writers agree on one
                            // dimension.
                            let fresh = tx
                                .execute(
                                    &format!(
                                        "INSERT INTO {} (namespace, dimension) VALUES ($1, $2) \
                                         ON CONFLICT DO NOTHING",
                                        self.table("vector_namespaces")
                                    ),
                                    &[namespace, &(v.len() as i32)],
                                )
                                .await
                                .map_err(on(op))?;
                            let dim: i32 = tx
                                .query_one(
                                    &format!(
                                        "SELECT dimension FROM {} WHERE namespace = $1 FOR SHARE",
                                        self.table("vector_namespaces")
                                    ),
                                    &[namespace],
                                )
                                .await
                                .map_err(on(op))?
                                .try_get(0)
                                .map_err(on(op))?;
                            if dim as usize != v.len() {
                                return Err(MemoryError::DimensionMismatch {
                                    expected: usize::try_from(dim).unwrap_or(0),
                                    found: v.len(),
                                });
                            }
                            if fresh > 0 {
                                new_dims.push(v.len());
                            }
                            written += 1;
                        }
                        _ => {}
                    }
                }
                tx.commit().await.map_err(on(op))?;
                Ok(usize::try_from(written).unwrap_or(usize::MAX))
            })
            .await?;
        if !new_dims.is_empty() {
            let mut client = self.client("create a vector index").await?;
            new_dims.dedup();
            for dim in new_dims {
                self.ensure_dense_index(&mut client, dim).await?;
            }
        }
        Ok(written)
    }

    /// Not bounded by the operation timeout: it rewrites every row that has a vector.
    async fn drop_embeddings(&self) -> Result<usize> {
        let op = "drop the vectors";
        let mut client = self.client(op).await?;
        let tx = client.transaction().await.map_err(on(op))?;
        let facts = tx
            .execute(
                &format!(
                    "UPDATE {} SET body = body - 'embedding' WHERE body ? 'embedding'",
                    self.table("facts")
                ),
                &[],
            )
            .await
            .map_err(on(op))?;
        let documents = tx
            .execute(
                &format!(
                    "UPDATE {} SET embedding = NULL WHERE embedding IS NOT NULL",
                    self.table("documents")
                ),
                &[],
            )
            .await
            .map_err(on(op))?;
        tx.execute(
            &format!("DELETE FROM {}", self.table("vector_namespaces")),
            &[],
        )
        .await
        .map_err(on(op))?;
        tx.commit().await.map_err(on(op))?;
        Ok(usize::try_from(facts + documents).unwrap_or(usize::MAX))
    }
}
