//! [`VectorStore`] on PostgreSQL.
//!
//! - Documents are rows of `documents`, metadata as `jsonb`, embeddings L2-normalised on
//!   write and kept as `real[]`. The first embedding of a namespace fixes its dimension
//!   (until the namespace is cleared); another is refused with
//!   [`MemoryError::DimensionMismatch`].
//! - **Sparse search** matches a generated `tsvector` column (GIN-indexed, `simple`
//!   configuration) against the query's words OR-ed together, ranked by
//!   `ts_rank_cd(..., 32)`, which is `rank / (rank + 1)`: `0.0..1.0`, in BM25-like order.
//! - **Dense search** with `pgvector` ranks in the server, exactly, with the cosine
//!   distance operator `<=>` on the `real[]` column cast to `vector` (namespaces may use
//!   different dimensions, so there is no approximate index); without `pgvector` every
//!   embedding of the namespace is fetched and ranked in the client. Either way the
//!   score is the cosine similarity in `-1.0..=1.0`.
//! - Filters run in Rust over the candidates in rank order until `k` hits are found.

use agentmemory_core::vector::{Document, SearchHit, SearchQuery};
use agentmemory_core::{MemoryError, Metadata, Result, VectorStore};
use async_trait::async_trait;
use tokio_postgres::Row;

use super::{decode, on, PostgresStore};
use crate::dense::{best, cosine, normalised};
use crate::text::words;

/// The `to_tsquery` text matching any word of `text` (words are alphanumeric only, so no
/// tsquery syntax can leak in).
fn ts_query(text: &str) -> Option<String> {
    let terms = words(text);
    (!terms.is_empty()).then(|| terms.join(" | "))
}

/// A hit from a row `(id, content, metadata::text, score)`, or `None` when the filter
/// rejects it.
fn hit(row: &Row, query: &SearchQuery, score: f32) -> Result<Option<SearchHit>> {
    let op = "search documents";
    let id: String = row.try_get(0).map_err(on(op))?;
    let meta_text: &str = row.try_get(2).map_err(on(op))?;
    let metadata: Metadata = decode(meta_text, || {
        format!("metadata of document `{id}` in postgres")
    })?;
    if query.filter.as_ref().is_some_and(|f| !f.matches(&metadata)) {
        return Ok(None);
    }
    Ok(Some(SearchHit {
        content: row.try_get(1).map_err(on(op))?,
        id,
        metadata,
        score,
    }))
}

impl PostgresStore {
    async fn dimension<C: deadpool_postgres::GenericClient>(
        &self,
        client: &C,
        ns: &str,
    ) -> Result<Option<usize>> {
        let row = client
            .query_opt(
                &format!(
                    "SELECT dimension FROM {} WHERE namespace = $1",
                    self.table("vector_namespaces")
                ),
                &[&ns],
            )
            .await
            .map_err(on("read a namespace's dimension"))?;
        let d: Option<i32> = row
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(on("read a namespace's dimension"))?;
        Ok(d.map(|d| usize::try_from(d).unwrap_or(0)))
    }

    async fn sparse_search(&self, ns: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let op = "search documents";
        let Some(tsq) = ts_query(&query.text) else {
            return Ok(Vec::new());
        };
        let client = self.client(op).await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT d.id, d.content, d.metadata::text, ts_rank_cd(d.tsv, q, 32) AS r \
                 FROM {} d, to_tsquery('simple'::regconfig, $2) q \
                 WHERE d.namespace = $1 AND d.tsv @@ q ORDER BY r DESC, d.id",
                self.table("documents")
            ))
            .await
            .map_err(on(op))?;
        let rows = client.query(&stmt, &[&ns, &tsq]).await.map_err(on(op))?;
        let mut hits = Vec::new();
        for row in &rows {
            let r: f32 = row.try_get(3).map_err(on(op))?;
            if let Some(h) = hit(row, query, r.clamp(0.0, 1.0))? {
                hits.push(h);
                if hits.len() >= query.k {
                    break;
                }
            }
        }
        Ok(hits)
    }

    /// Words and meaning fused with the rule every backend shares
    /// ([`agentmemory_core::vector::fuse`]): both sides return a deeper candidate list
    /// than `k`, filters apply to both, and a namespace without embeddings ranks by words.
    async fn hybrid_search(
        &self,
        ns: &str,
        query: &SearchQuery,
        embedding: &[f32],
    ) -> Result<Vec<SearchHit>> {
        let mut deeper = query.clone();
        deeper.k = query.k.saturating_mul(4).max(50);
        let sparse = self.sparse_search(ns, &deeper).await?;
        let dense = self.dense_search(ns, &deeper, embedding).await?;
        if dense.is_empty() {
            let mut hits = sparse;
            hits.truncate(query.k);
            return Ok(hits);
        }
        let mut by_id: std::collections::HashMap<String, SearchHit> =
            std::collections::HashMap::with_capacity(sparse.len() + dense.len());
        let scored = |hits: &[SearchHit]| -> Vec<(String, f32)> {
            hits.iter().map(|h| (h.id.clone(), h.score)).collect()
        };
        // ts_rank is not bounded like a cosine: scale the word side to 0..=1 (best = 1) so
        // the weighting means what it means for the other backends.
        let top = sparse.iter().map(|h| h.score).fold(0.0f32, f32::max);
        let mut words = scored(&sparse);
        if top > 0.0 {
            for (_, score) in &mut words {
                *score /= top;
            }
        }
        let fused = agentmemory_core::vector::fuse(
            &words,
            &scored(&dense),
            agentmemory_core::vector::Fusion::DEFAULT,
        );
        for hit in sparse.into_iter().chain(dense) {
            by_id.entry(hit.id.clone()).or_insert(hit);
        }
        Ok(fused
            .into_iter()
            .take(query.k)
            .filter_map(|(id, score)| {
                by_id.remove(&id).map(|mut hit| {
                    hit.score = score;
                    hit
                })
            })
            .collect())
    }

    async fn dense_search(
        &self,
        ns: &str,
        query: &SearchQuery,
        embedding: &[f32],
    ) -> Result<Vec<SearchHit>> {
        let op = "search documents";
        let q = normalised(embedding)?;
        let client = self.client(op).await?;
        match self.dimension(&client, ns).await? {
            None => return Ok(Vec::new()),
            Some(expected) if expected != q.len() => {
                return Err(MemoryError::DimensionMismatch {
                    expected,
                    found: q.len(),
                })
            }
            Some(_) => {}
        }
        let mut hits = Vec::new();
        if self.pgvector {
            // Without a filter the server can stop at k; with one, rows stream in rank order.
            let limit: Option<i64> = query
                .filter
                .is_none()
                .then(|| i64::try_from(query.k).unwrap_or(i64::MAX));
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT id, content, metadata::text, \
                     (1 - (embedding::vector <=> $2::real[]::vector))::real AS s \
                     FROM {} WHERE namespace = $1 AND embedding IS NOT NULL \
                     ORDER BY embedding::vector <=> $2::real[]::vector, id LIMIT $3",
                    self.table("documents")
                ))
                .await
                .map_err(on(op))?;
            let rows = client
                .query(&stmt, &[&ns, &q, &limit])
                .await
                .map_err(on(op))?;
            for row in &rows {
                let s: f32 = row.try_get(3).map_err(on(op))?;
                if let Some(h) = hit(row, query, s.clamp(-1.0, 1.0))? {
                    hits.push(h);
                    if hits.len() >= query.k {
                        break;
                    }
                }
            }
            return Ok(hits);
        }
        let stmt = client
            .prepare_cached(&format!(
                "SELECT id, content, metadata::text, embedding FROM {} \
                 WHERE namespace = $1 AND embedding IS NOT NULL",
                self.table("documents")
            ))
            .await
            .map_err(on(op))?;
        let rows = client.query(&stmt, &[&ns]).await.map_err(on(op))?;
        for row in &rows {
            let v: Vec<f32> = row.try_get(3).map_err(on(op))?;
            if let Some(h) = hit(row, query, cosine(&v, &q))? {
                hits.push(h);
            }
        }
        Ok(best(hits, query.k))
    }
}

#[async_trait]
impl VectorStore for PostgresStore {
    async fn upsert(&self, namespace: &str, document: Document) -> Result<String> {
        let mut ids = self.upsert_batch(namespace, vec![document]).await?;
        ids.pop()
            .ok_or_else(|| MemoryError::store(super::STORE, "upsert a document", "no id returned"))
    }

    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let op = "upsert documents";
        // Validate everything before touching the server.
        let mut prepared = Vec::with_capacity(documents.len());
        for doc in documents {
            let id = doc.id.unwrap_or_else(|| ulid::Ulid::new().to_string());
            let meta = serde_json::to_string(&doc.metadata)
                .map_err(|e| MemoryError::invalid("metadata", e.to_string()))?;
            let emb = doc.embedding.as_deref().map(normalised).transpose()?;
            prepared.push((id, doc.content, meta, emb));
        }
        if let Some(first) = prepared.iter().find_map(|p| p.3.as_ref()) {
            let dim = first.len();
            if let Some(other) = prepared
                .iter()
                .filter_map(|p| p.3.as_ref())
                .find(|e| e.len() != dim)
            {
                return Err(MemoryError::DimensionMismatch {
                    expected: dim,
                    found: other.len(),
                });
            }
        }
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            if let Some(dim) = prepared.iter().find_map(|p| p.3.as_ref()).map(Vec::len) {
                // Lock the namespace's row so two first writers agree on one dimension.
                tx.execute(
                    &format!(
                        "INSERT INTO {} (namespace, dimension) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                        self.table("vector_namespaces")
                    ),
                    &[&namespace, &i32::try_from(dim).unwrap_or(i32::MAX)],
                )
                .await
                .map_err(on(op))?;
                let row = tx
                    .query_one(
                        &format!(
                            "SELECT dimension FROM {} WHERE namespace = $1 FOR SHARE",
                            self.table("vector_namespaces")
                        ),
                        &[&namespace],
                    )
                    .await
                    .map_err(on(op))?;
                let expected: i32 = row.try_get(0).map_err(on(op))?;
                let expected = usize::try_from(expected).unwrap_or(0);
                if expected != dim {
                    return Err(MemoryError::DimensionMismatch { expected, found: dim });
                }
            }
            let stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO {} (namespace, id, content, metadata, embedding) \
                     VALUES ($1, $2, $3, $4::text::jsonb, $5) \
                     ON CONFLICT (namespace, id) DO UPDATE SET content = excluded.content, \
                     metadata = excluded.metadata, embedding = excluded.embedding",
                    self.table("documents")
                ))
                .await
                .map_err(on(op))?;
            let mut ids = Vec::with_capacity(prepared.len());
            for (id, content, meta, emb) in &prepared {
                tx.execute(&stmt, &[&namespace, id, content, meta, emb])
                    .await
                    .map_err(on(op))?;
                ids.push(id.clone());
            }
            tx.commit().await.map_err(on(op))?;
            Ok(ids)
        })
        .await
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if query.k == 0 {
            return Ok(Vec::new());
        }
        self.bounded("search documents", async {
            match &query.embedding {
                Some(e) if query.text.trim().is_empty() => {
                    self.dense_search(namespace, query, e).await
                }
                Some(e) => self.hybrid_search(namespace, query, e).await,
                None => self.sparse_search(namespace, query).await,
            }
        })
        .await
    }

    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        let op = "get a document";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT content, metadata::text, embedding FROM {} WHERE namespace = $1 AND id = $2",
                        self.table("documents")
                    ),
                    &[&namespace, &id],
                )
                .await
                .map_err(on(op))?;
            let Some(row) = row else { return Ok(None) };
            let meta: &str = row.try_get(1).map_err(on(op))?;
            Ok(Some(Document {
                id: Some(id.to_owned()),
                content: row.try_get(0).map_err(on(op))?,
                metadata: decode(meta, || format!("metadata of document `{id}` in postgres"))?,
                embedding: row.try_get(2).map_err(on(op))?,
            }))
        })
        .await
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        let op = "delete documents";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let n = client
                .execute(
                    &format!(
                        "DELETE FROM {} WHERE namespace = $1 AND id = ANY($2)",
                        self.table("documents")
                    ),
                    &[&namespace, &ids],
                )
                .await
                .map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
        .await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        let op = "clear a document namespace";
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            tx.execute(
                &format!(
                    "DELETE FROM {} WHERE namespace = $1",
                    self.table("documents")
                ),
                &[&namespace],
            )
            .await
            .map_err(on(op))?;
            tx.execute(
                &format!(
                    "DELETE FROM {} WHERE namespace = $1",
                    self.table("vector_namespaces")
                ),
                &[&namespace],
            )
            .await
            .map_err(on(op))?;
            tx.commit().await.map_err(on(op))
        })
        .await
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        let op = "count documents";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let row = client
                .query_one(
                    &format!(
                        "SELECT count(*) FROM {} WHERE namespace = $1",
                        self.table("documents")
                    ),
                    &[&namespace],
                )
                .await
                .map_err(on(op))?;
            let n: i64 = row.try_get(0).map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsquery_text_holds_only_words_joined_by_or() {
        assert_eq!(ts_query("Hello, world!").as_deref(), Some("hello | world"));
        assert_eq!(ts_query("a & !b | c:*").as_deref(), Some("a | b | c"));
        assert_eq!(ts_query("?!"), None);
    }
}
