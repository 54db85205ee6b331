//! [`VectorStore`] on PostgreSQL.
//!
//! - Documents are rows of `documents`, metadata as `jsonb`, embeddings L2-normalised on
//!   write and kept as `real[]`. The first embedding of a namespace fixes its dimension
//!   (until the namespace is cleared); another is refused with
//!   [`MemoryError::DimensionMismatch`].
//! - **Sparse search** goes through the shared text analysis ([`agentmemory_core::text`]:
//!   folding, stemming, CJK bigrams), as every other backend's: each row keeps its
//!   document's analysed terms (GIN-indexed) and their weights, `document_terms` each
//!   term's document frequency (kept by a trigger), and the documents sharing a term with
//!   the query are scored with the same TF-IDF cosine ([`tfidf::cosine`]), `0.0..=1.0`.
//! - **Dense search** with `pgvector` ranks in the server with the cosine distance `<=>`.
//!   Each embedding dimension `N` in use has an HNSW index over the typed expression
//!   `embedding::vector(N)` of the rows with `cardinality(embedding) = N` (a partial
//!   expression index named `documents_hnsw_{N}`, `vector_cosine_ops`): namespaces of
//!   different dimensions share the `documents` table, and the index lives on the very
//!   rows it indexes, so every upsert, delete and clear (from any client, with or without
//!   `pgvector`, any agentmem version) keeps it in step in its own transaction. The index
//!   of a dimension is created when a namespace first stores embeddings of that
//!   dimension, and at connect for every dimension already in use (building it over the
//!   rows written before; see [`PostgresStore::ensure_dense_indexes`]).
//! - Which dense path runs (see [`PostgresStore::dense_search`]): the HNSW index
//!   (approximate) when the namespace holds at least [`EXACT_BELOW`] embeddings, `k` is
//!   at most [`EF_SEARCH_MAX`] and the dimension is at most [`HNSW_MAX_DIM`]; it runs
//!   with `hnsw.ef_search = max(`[`EF_SEARCH_MIN`]`, rows wanted)` and, on pgvector 0.8
//!   or later, `hnsw.iterative_scan = strict_order`, so the namespace condition does not
//!   starve the scan. When the index path yields fewer than `k` hits (a selective
//!   namespace or metadata filter, or an older pgvector without iterative scans) the
//!   search is answered by the exact scan instead, which ranks every embedding of the
//!   namespace (the `real[]` column cast to `vector`). Without `pgvector` every
//!   embedding of the namespace is fetched and ranked in the client. The score is always
//!   the cosine similarity in `-1.0..=1.0`.
//! - Filters run in Rust over the candidates in rank order until `k` hits are found.
//! - Nothing is cached in the client: every search asks the server's indexes (GIN on
//!   terms, HNSW), which each write keeps in step in its own transaction, so a search
//!   after a write reads the rows it ranks and no more (the documents sharing a term with
//!   the query; the `k` nearest embeddings, or every embedding of the namespace without
//!   pgvector) whatever was written before it ([`PostgresStore::documents_read`] counts
//!   them).
//! - [`get_many`](VectorStore::get_many) is one query (`id = ANY($2)`),
//!   [`ids_in_range`](VectorStore::ids_in_range) one range scan of the id index in byte
//!   order (see `id_order`).

use agentmemory_core::vector::{Document, SearchHit, SearchQuery};
use agentmemory_core::{MemoryError, Metadata, Result, VectorStore};
use async_trait::async_trait;
use tokio_postgres::Row;

use super::schema::analysed;
use super::{decode, on, PostgresStore};
use crate::dense::{best, cosine, normalised};
use agentmemory_core::store_support::{tfidf, Ties};

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
    let content: String = row.try_get(1).map_err(on(op))?;
    let mut hit = SearchHit::new(id, content, score);
    hit.metadata = metadata;
    Ok(Some(hit))
}

/// Namespaces holding fewer embeddings than this are ranked by the exact scan: it is
/// both exact and, at this size, about as fast as the index.
pub(crate) const EXACT_BELOW: i64 = 1_000;
/// The largest dimension pgvector's HNSW index takes for `vector`.
pub(crate) const HNSW_MAX_DIM: usize = 2_000;
/// The largest `hnsw.ef_search` pgvector accepts; a larger `k` uses the exact scan.
pub(crate) const EF_SEARCH_MAX: usize = 1_000;
/// The smallest `hnsw.ef_search` used (pgvector's default is 40): measured recall@10 on
/// 20,000 clustered 384-dimensional embeddings is in `benches/servers.rs`.
pub(crate) const EF_SEARCH_MIN: usize = 100;
/// The time allowed at connect to build the indexes of dimensions already in use.
pub(crate) const INDEX_BUILD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
/// How many rows the index path fetches for a search with a metadata filter, per hit wanted.
const FILTER_OVERFETCH: usize = 10;

/// The name of the HNSW index of embeddings of dimension `dim`.
pub(crate) fn index_name(dim: usize) -> String {
    format!("documents_hnsw_{dim}")
}

/// `CREATE INDEX` of the HNSW index of dimension `dim` on `documents` (the quoted,
/// schema-qualified table).
pub(crate) fn create_index_sql(schema: &str, dim: usize) -> String {
    format!(
        "CREATE INDEX IF NOT EXISTS {name} ON {schema}.documents \
         USING hnsw ((embedding::vector({dim})) vector_cosine_ops) \
         WHERE cardinality(embedding) = {dim}",
        name = index_name(dim)
    )
}

/// The statements run (in the search's transaction) before [`dense_index_query`].
pub(crate) fn dense_settings(ef_search: usize, iterative: bool) -> String {
    let ef = ef_search.clamp(EF_SEARCH_MIN, EF_SEARCH_MAX);
    let mut sql = format!("SET LOCAL hnsw.ef_search = {ef};");
    if iterative {
        sql.push_str(" SET LOCAL hnsw.iterative_scan = strict_order;");
    }
    sql
}

/// The dense query that the HNSW index of dimension `dim` answers: `$1` namespace, `$2`
/// the normalised query (`real[]`), `$3` the row limit. `documents` is the quoted,
/// schema-qualified table. The ordering expression is the index's expression, and the
/// partial index's predicate is repeated with the same literal, so the planner can use it.
pub(crate) fn dense_index_query(documents: &str, dim: usize) -> String {
    format!(
        "SELECT id, content, metadata::text, \
         (1 - (embedding::vector({dim}) <=> $2::real[]::vector({dim})))::real AS s \
         FROM {documents} WHERE namespace = $1 AND cardinality(embedding) = {dim} \
         ORDER BY embedding::vector({dim}) <=> $2::real[]::vector({dim}) LIMIT $3"
    )
}

/// The exact dense query (every embedding of the namespace, no index): `$1` namespace,
/// `$2` the normalised query (`real[]`), `$3` the row limit or `NULL` for all.
pub(crate) fn dense_exact_query(documents: &str) -> String {
    format!(
        "SELECT id, content, metadata::text, \
         (1 - (embedding::vector <=> $2::real[]::vector))::real AS s \
         FROM {documents} WHERE namespace = $1 AND embedding IS NOT NULL \
         ORDER BY embedding::vector <=> $2::real[]::vector, id LIMIT $3"
    )
}

/// What this store knows about the server's HNSW indexes (shared by clones).
#[derive(Debug, Default)]
pub(crate) struct DenseIndexes {
    /// pgvector is 0.8 or later (`hnsw.iterative_scan` exists).
    iterative: std::sync::atomic::AtomicBool,
    /// Dimensions whose index is known to exist.
    ready: std::sync::Mutex<std::collections::HashSet<usize>>,
    /// How many searches the index answered (the rest took the exact scan).
    answered: std::sync::atomic::AtomicU64,
}

impl DenseIndexes {
    fn is_ready(&self, dim: usize) -> bool {
        self.ready.lock().is_ok_and(|r| r.contains(&dim))
    }

    fn mark_ready(&self, dim: usize) {
        if let Ok(mut r) = self.ready.lock() {
            r.insert(dim);
        }
    }
}

/// Whether pgvector `version` (`major.minor.patch`) has `hnsw.iterative_scan` (0.8+).
fn has_iterative_scan(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (0, 8)
}

/// The first `query.k` hits the filter accepts from rows `(id, content, metadata::text,
/// score)` in rank order, each score clamped to `range`.
fn ranked_hits(
    rows: &[Row],
    query: &SearchQuery,
    range: std::ops::RangeInclusive<f32>,
) -> Result<Vec<SearchHit>> {
    let mut hits = Vec::new();
    for row in rows {
        let score: f32 = row.try_get(3).map_err(on("search documents"))?;
        if let Some(h) = hit(row, query, score.clamp(*range.start(), *range.end()))? {
            hits.push(h);
            if hits.len() >= query.k {
                break;
            }
        }
    }
    Ok(hits)
}

/// A document from a row `(id, content, metadata::text, embedding)`.
fn document(row: &Row, op: &'static str) -> Result<Document> {
    let id: String = row.try_get(0).map_err(on(op))?;
    let content: String = row.try_get(1).map_err(on(op))?;
    let meta: &str = row.try_get(2).map_err(on(op))?;
    let metadata = decode(meta, || format!("metadata of document `{id}` in postgres"))?;
    let embedding: Option<Vec<f32>> = row.try_get(3).map_err(on(op))?;
    let mut doc = Document::new(content).with_id(id);
    doc.metadata = metadata;
    doc.embedding = embedding;
    Ok(doc)
}

impl PostgresStore {
    /// How many document rows this store (and its clones) read from the server: the
    /// candidates and ranked rows of searches, and what `get` and `get_many` return. For
    /// tests and diagnostics: a search after a write reads what the search ranks, never
    /// the namespace again.
    pub fn documents_read(&self) -> u64 {
        self.documents_read
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts `n` document rows read from the server.
    fn count_read(&self, n: usize) {
        self.documents_read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
    }

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

    /// The document frequency of each of `terms` in `ns` (`""` holds the namespace's
    /// document count), read in `tx`; a term no document holds is left out.
    async fn term_dfs<C: deadpool_postgres::GenericClient>(
        &self,
        tx: &C,
        ns: &str,
        terms: &[&str],
        op: &'static str,
    ) -> Result<std::collections::HashMap<String, usize>> {
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT term, df FROM {} WHERE namespace = $1 AND term = ANY($2::text[])",
                self.table("document_terms")
            ))
            .await
            .map_err(on(op))?;
        let rows = tx.query(&stmt, &[&ns, &terms]).await.map_err(on(op))?;
        let mut df = std::collections::HashMap::with_capacity(rows.len());
        for row in &rows {
            let term: String = row.try_get(0).map_err(on(op))?;
            let count: i64 = row.try_get(1).map_err(on(op))?;
            df.insert(term, usize::try_from(count).unwrap_or(0));
        }
        Ok(df)
    }

    /// The documents sharing an analysed term with the query (found through the GIN
    /// index on `terms`), scored in the client with the TF-IDF cosine every backend
    /// ranks by ([`tfidf::cosine`]) from the namespace's document frequencies, read in
    /// the same snapshot; the best `query.k` the filter accepts, ties by id.
    async fn sparse_search(&self, ns: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let hits = self.sparse_scored(ns, query, false).await?;
        Ok(hits.into_iter().map(|(hit, _)| hit).collect())
    }

    /// [`sparse_search`](Self::sparse_search), each hit with its query coverage
    /// ([`tfidf::coverage`], from the same terms and frequencies: what
    /// [`Fusion::Coverage`](agentmemory_core::store_support::Fusion) ranks words by) when
    /// `with_coverage` asks for it, else 0.
    async fn sparse_scored(
        &self,
        ns: &str,
        query: &SearchQuery,
        with_coverage: bool,
    ) -> Result<Vec<(SearchHit, f32)>> {
        let op = "search documents";
        let q = tfidf::query_terms(&query.text);
        if q.is_empty() {
            return Ok(Vec::new());
        }
        let mut q_terms: Vec<&str> = q.iter().map(|(t, _)| t.as_str()).collect();
        let mut client = self.client(op).await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(on(op))?;
        // A term in most documents (a speaker's name) weighs nothing beside a rarer one
        // (`tfidf::Ubiquity`): its documents are not read for it. The query's terms'
        // frequencies read for that are kept for the scoring below.
        let mut df = std::collections::HashMap::new();
        if q_terms.len() > 1 {
            let mut asked = q_terms.clone();
            asked.push("");
            df = self.term_dfs(&tx, ns, &asked, op).await?;
            let n = df.get("").copied().unwrap_or(0);
            let held = |t: &str| df.get(t).copied().unwrap_or(0);
            let rule = tfidf::Ubiquity::of(n, q_terms.iter().map(|t| held(t)));
            q_terms.retain(|t| rule.weighs(held(t)));
        }
        let stmt = tx
            .prepare_cached(&format!(
                "SELECT d.id, d.content, d.metadata::text, d.terms, d.term_weights \
                 FROM {} d WHERE d.namespace = $1 AND d.terms && $2::text[]",
                self.table("documents")
            ))
            .await
            .map_err(on(op))?;
        let rows = tx.query(&stmt, &[&ns, &q_terms]).await.map_err(on(op))?;
        self.count_read(rows.len());
        let mut docs = Vec::with_capacity(rows.len());
        // Every query term (those left out above included: the scoring weighs them as
        // the in-memory index does) and every term of the documents read.
        let mut wanted: std::collections::HashSet<&str> =
            q.iter().map(|(t, _)| t.as_str()).collect();
        wanted.insert("");
        for row in &rows {
            let terms: Vec<&str> = row.try_get(3).map_err(on(op))?;
            let weights: Vec<f32> = row.try_get(4).map_err(on(op))?;
            wanted.extend(terms.iter().copied());
            docs.push((row, terms, weights));
        }
        let wanted: Vec<&str> = wanted
            .into_iter()
            .filter(|t| !df.contains_key(*t))
            .collect();
        if !wanted.is_empty() {
            df.extend(self.term_dfs(&tx, ns, &wanted, op).await?);
        }
        tx.commit().await.map_err(on(op))?;
        let n = df.get("").copied().unwrap_or(0);
        let df = |t: &str| df.get(t).copied().unwrap_or(0);
        let mut hits = Vec::new();
        for (row, terms, weights) in docs {
            let doc: Vec<(String, f32)> =
                terms.into_iter().map(str::to_owned).zip(weights).collect();
            let score = tfidf::cosine(&q, &doc, n, df);
            if score > 0.0 {
                if let Some(h) = hit(row, query, score)? {
                    let covered = if with_coverage {
                        tfidf::coverage(&q, &doc, n, df)
                    } else {
                        0.0
                    };
                    hits.push((h, covered));
                }
            }
        }
        Ok(agentmemory_core::store_support::best(
            hits,
            query.k,
            |(h, _)| (h.score, h.id.as_str()),
            Ties::SmallerIdFirst,
        ))
    }

    /// Words and meaning fused with the rule every backend shares
    /// ([`agentmemory_core::store_support::fuse`]): both sides return a deeper candidate list
    /// than `k`, filters apply to both, and a namespace without embeddings ranks by words.
    async fn hybrid_search(
        &self,
        ns: &str,
        query: &SearchQuery,
        embedding: &[f32],
    ) -> Result<Vec<SearchHit>> {
        let mut deeper = query.clone();
        deeper.k = query.k.saturating_mul(4).max(50);
        // Every document sharing a term is read and scored by the sparse side anyway: all
        // of them stay candidates, so a long message holding the query's words is pulled up
        // by its coverage however low its cosine ranks it (as in memory).
        let mut every_match = query.clone();
        every_match.k = usize::MAX;
        let sparse = self.sparse_scored(ns, &every_match, true).await?;
        let dense = self.dense_search(ns, &deeper, embedding).await?;
        if dense.is_empty() {
            return Ok(sparse
                .into_iter()
                .take(query.k)
                .map(|(hit, _)| hit)
                .collect());
        }
        // The word candidates meaning did not rank deep enough still fuse with their own
        // cosine, as every document does in memory: those that could reach the top k with
        // a cosine up to the last one meaning ranked (one more query fetches theirs).
        let fusion = agentmemory_core::store_support::Fusion::DEFAULT;
        let best_sparse = sparse.first().map_or(0.0, |(h, _)| h.score);
        let words: std::collections::HashMap<&str, (f32, f32)> = sparse
            .iter()
            .map(|(h, c)| (h.id.as_str(), (h.score, *c)))
            .collect();
        let fused = |id: &str, cos: f32| {
            let (s, c) = words.get(id).copied().unwrap_or((0.0, 0.0));
            fusion.combine_covered(s, cos, best_sparse, c)
        };
        let mut known: Vec<f32> = dense.iter().filter_map(|h| fused(&h.id, h.score)).collect();
        known.sort_by(|a, b| b.total_cmp(a));
        let bar = known.get(query.k.saturating_sub(1)).copied();
        let last_cos = dense.last().map_or(0.0, |h| h.score);
        let missing: Vec<&str> = {
            let seen: std::collections::HashSet<&str> =
                dense.iter().map(|h| h.id.as_str()).collect();
            sparse
                .iter()
                .map(|(h, _)| h.id.as_str())
                .filter(|id| !seen.contains(id))
                .filter(|id| match (bar, fused(id, last_cos)) {
                    (Some(bar), Some(bound)) => bound >= bar,
                    _ => true,
                })
                .collect()
        };
        let extra = self.cosines_of(ns, &missing, embedding).await?;
        // Both sides are cosines, as for every other backend.
        let mut meaning: Vec<(String, f32)> =
            dense.iter().map(|h| (h.id.clone(), h.score)).collect();
        if !extra.is_empty() {
            meaning.extend(extra);
            meaning.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        }
        let word_list: Vec<(String, f32)> = sparse
            .iter()
            .map(|(h, _)| (h.id.clone(), h.score))
            .collect();
        let covered: Vec<f32> = sparse.iter().map(|(_, c)| *c).collect();
        let fused = agentmemory_core::store_support::fuse_covered(
            &word_list,
            Some(&covered),
            &meaning,
            fusion,
        );
        let mut by_id: std::collections::HashMap<String, SearchHit> =
            std::collections::HashMap::with_capacity(sparse.len() + dense.len());
        for hit in sparse.into_iter().map(|(hit, _)| hit).chain(dense) {
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

    /// The cosine of `embedding` with each of the documents `ids` of `ns` that has an
    /// embedding (computed in the client from the stored, normalised vectors).
    async fn cosines_of(
        &self,
        ns: &str,
        ids: &[&str],
        embedding: &[f32],
    ) -> Result<Vec<(String, f32)>> {
        let op = "search documents";
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let q = normalised(embedding)?;
        let client = self.client(op).await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT id, embedding FROM {} \
                 WHERE namespace = $1 AND id = ANY($2::text[]) AND embedding IS NOT NULL",
                self.table("documents")
            ))
            .await
            .map_err(on(op))?;
        let rows = client.query(&stmt, &[&ns, &ids]).await.map_err(on(op))?;
        self.count_read(rows.len());
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: String = row.try_get(0).map_err(on(op))?;
            let v: Vec<f32> = row.try_get(1).map_err(on(op))?;
            if v.len() == q.len() {
                out.push((id, cosine(&v, &q)));
            }
        }
        Ok(out)
    }

    /// The exact dense ranking, in the server: every embedding of the namespace.
    async fn exact_search(
        &self,
        client: &deadpool_postgres::Object,
        ns: &str,
        query: &SearchQuery,
        q: &[f32],
    ) -> Result<Vec<SearchHit>> {
        let op = "search documents";
        // Without a filter the server can stop at k; with one, rows stream in rank order.
        let limit: Option<i64> = query
            .filter
            .is_none()
            .then(|| i64::try_from(query.k).unwrap_or(i64::MAX));
        let stmt = client
            .prepare_cached(&dense_exact_query(&self.table("documents")))
            .await
            .map_err(on(op))?;
        let rows = client
            .query(&stmt, &[&ns, &q, &limit])
            .await
            .map_err(on(op))?;
        self.count_read(rows.len());
        ranked_hits(&rows, query, -1.0..=1.0)
    }

    /// The dense ranking through the HNSW index of `q`'s dimension, or `None` when the
    /// exact scan must answer: no index for the dimension, `k` above [`EF_SEARCH_MAX`],
    /// fewer than [`EXACT_BELOW`] embeddings in the namespace, or fewer than `k` hits
    /// found through the index.
    async fn indexed_search(
        &self,
        client: &mut deadpool_postgres::Object,
        ns: &str,
        query: &SearchQuery,
        q: &[f32],
    ) -> Result<Option<Vec<SearchHit>>> {
        let op = "search documents";
        let dim = q.len();
        if query.k > EF_SEARCH_MAX || !self.dense_index_exists(client, dim).await? {
            return Ok(None);
        }
        let count = client
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 FROM {} \
                 WHERE namespace = $1 AND embedding IS NOT NULL LIMIT $2) c",
                self.table("documents")
            ))
            .await
            .map_err(on(op))?;
        let n: i64 = client
            .query_one(&count, &[&ns, &EXACT_BELOW])
            .await
            .map_err(on(op))?
            .try_get(0)
            .map_err(on(op))?;
        if n < EXACT_BELOW {
            return Ok(None);
        }
        let wanted = if query.filter.is_some() {
            query.k.saturating_mul(FILTER_OVERFETCH).max(EF_SEARCH_MIN)
        } else {
            query.k
        };
        let iterative = self
            .dense
            .iterative
            .load(std::sync::atomic::Ordering::Relaxed);
        let tx = client.transaction().await.map_err(on(op))?;
        tx.batch_execute(&dense_settings(wanted, iterative))
            .await
            .map_err(on(op))?;
        let stmt = tx
            .prepare_cached(&dense_index_query(&self.table("documents"), dim))
            .await
            .map_err(on(op))?;
        let limit = i64::try_from(wanted).unwrap_or(i64::MAX);
        let rows = tx.query(&stmt, &[&ns, &q, &limit]).await.map_err(on(op))?;
        tx.commit().await.map_err(on(op))?;
        self.count_read(rows.len());
        let hits = ranked_hits(&rows, query, -1.0..=1.0)?;
        if hits.len() < query.k {
            return Ok(None);
        }
        self.dense
            .answered
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Some(hits))
    }

    /// Whether the HNSW index of `dim` exists (asks the server until it does, since
    /// another client may create it).
    async fn dense_index_exists(
        &self,
        client: &deadpool_postgres::Object,
        dim: usize,
    ) -> Result<bool> {
        if dim > HNSW_MAX_DIM {
            return Ok(false);
        }
        if self.dense.is_ready(dim) {
            return Ok(true);
        }
        let name = format!("{}.{}", self.schema, index_name(dim));
        let row = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
            .await
            .map_err(on("search documents"))?;
        let exists: bool = row.try_get(0).map_err(on("search documents"))?;
        if exists {
            self.dense.mark_ready(dim);
        }
        Ok(exists)
    }

    /// Creates the HNSW index of `dim` unless it exists, under the migration lock (so
    /// concurrent clients create it once). It indexes the rows already stored, so the
    /// first call for a dimension with many rows takes a while.
    pub(super) async fn ensure_dense_index(
        &self,
        client: &mut deadpool_postgres::Object,
        dim: usize,
    ) -> Result<()> {
        let op = "create a vector index";
        if !self.pgvector || dim > HNSW_MAX_DIM || self.dense.is_ready(dim) {
            return Ok(());
        }
        let tx = client.transaction().await.map_err(on(op))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1)",
            &[&super::schema::MIGRATION_LOCK],
        )
        .await
        .map_err(on(op))?;
        let name = format!("{}.{}", self.schema, index_name(dim));
        let exists: bool = tx
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
            .await
            .map_err(on(op))?
            .try_get(0)
            .map_err(on(op))?;
        if !exists {
            tracing::info!(
                store = super::STORE,
                dim,
                "creating the HNSW index of a dimension"
            );
            tx.batch_execute(&create_index_sql(&self.schema, dim))
                .await
                .map_err(on(op))?;
        }
        tx.commit().await.map_err(on(op))?;
        self.dense.mark_ready(dim);
        Ok(())
    }

    /// At connect, with pgvector: notes whether it has iterative index scans, and creates
    /// the HNSW index of every dimension already in use (the upgrade path from stores
    /// written before these indexes existed: the index is built over the stored rows, so
    /// this can take a while once, and is bounded by [`INDEX_BUILD_TIMEOUT`]).
    pub(super) async fn ensure_dense_indexes(&self) -> Result<()> {
        let op = "create vector indexes";
        let build = async {
            let mut client = self.client(op).await?;
            let version: Option<String> = client
                .query_opt(
                    "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
                    &[],
                )
                .await
                .map_err(on(op))?
                .map(|r| r.try_get(0))
                .transpose()
                .map_err(on(op))?;
            let iterative = version.as_deref().is_some_and(has_iterative_scan);
            self.dense
                .iterative
                .store(iterative, std::sync::atomic::Ordering::Relaxed);
            let rows = client
                .query(
                    &format!(
                        "SELECT DISTINCT dimension FROM {}",
                        self.table("vector_namespaces")
                    ),
                    &[],
                )
                .await
                .map_err(on(op))?;
            for row in rows {
                let dim: i32 = row.try_get(0).map_err(on(op))?;
                self.ensure_dense_index(&mut client, usize::try_from(dim).unwrap_or(0))
                    .await?;
            }
            Ok(())
        };
        tokio::time::timeout(INDEX_BUILD_TIMEOUT, build)
            .await
            .map_err(|_| MemoryError::store(super::STORE, op, "timed out"))?
    }

    /// Dense search (see the module docs for which path runs when).
    async fn dense_search(
        &self,
        ns: &str,
        query: &SearchQuery,
        embedding: &[f32],
    ) -> Result<Vec<SearchHit>> {
        let op = "search documents";
        let q = normalised(embedding)?;
        let mut client = self.client(op).await?;
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
        if self.pgvector {
            if let Some(hits) = self.indexed_search(&mut client, ns, query, &q).await? {
                return Ok(hits);
            }
            return self.exact_search(&client, ns, query, &q).await;
        }
        let mut hits = Vec::new();
        let stmt = client
            .prepare_cached(&format!(
                "SELECT id, content, metadata::text, embedding FROM {} \
                 WHERE namespace = $1 AND embedding IS NOT NULL",
                self.table("documents")
            ))
            .await
            .map_err(on(op))?;
        let rows = client.query(&stmt, &[&ns]).await.map_err(on(op))?;
        self.count_read(rows.len());
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
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let op = "upsert documents";
        // Validate everything before touching the server.
        let mut prepared = Vec::with_capacity(documents.len());
        for doc in documents {
            let id = doc.id.unwrap_or_else(|| ulid::Ulid::new().to_string());
            let meta = serde_json::to_string(&doc.metadata)
                .map_err(|e| MemoryError::invalid("metadata", e.to_string()))?;
            let emb = doc.embedding.as_deref().map(normalised).transpose()?;
            let (terms, weights) = analysed(&doc.content);
            prepared.push((id, doc.content, meta, emb, terms, weights));
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
            if let Some(dim) = prepared.iter().find_map(|p| p.3.as_ref()).map(Vec::len) {
                self.ensure_dense_index(&mut client, dim).await?;
            }
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
                    "INSERT INTO {} (namespace, id, content, metadata, embedding, terms, term_weights) \
                     VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, $7) \
                     ON CONFLICT (namespace, id) DO UPDATE SET content = excluded.content, \
                     metadata = excluded.metadata, embedding = excluded.embedding, \
                     terms = excluded.terms, term_weights = excluded.term_weights",
                    self.table("documents")
                ))
                .await
                .map_err(on(op))?;
            // Rows written in id order (a stable sort: the last of one id wins), so
            // concurrent batches over the same documents lock them in one order and
            // queue instead of deadlocking; ids are returned in the order given.
            let mut order: Vec<usize> = (0..prepared.len()).collect();
            order.sort_by(|&a, &b| prepared[a].0.cmp(&prepared[b].0));
            for i in order {
                let (id, content, meta, emb, terms, weights) = &prepared[i];
                tx.execute(&stmt, &[&namespace, id, content, meta, emb, terms, weights])
                    .await
                    .map_err(on(op))?;
            }
            let ids = prepared.iter().map(|p| p.0.clone()).collect();
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
                        "SELECT id, content, metadata::text, embedding FROM {} \
                         WHERE namespace = $1 AND id = $2",
                        self.table("documents")
                    ),
                    &[&namespace, &id],
                )
                .await
                .map_err(on(op))?;
            let Some(row) = row else { return Ok(None) };
            self.count_read(1);
            document(&row, op).map(Some)
        })
        .await
    }

    /// One query for every id (`id = ANY($2)`); the documents come back in the order
    /// asked, those not stored left out.
    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        let op = "get documents";
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT id, content, metadata::text, embedding FROM {} \
                     WHERE namespace = $1 AND id = ANY($2::text[])",
                    self.table("documents")
                ))
                .await
                .map_err(on(op))?;
            let rows = client
                .query(&stmt, &[&namespace, &ids])
                .await
                .map_err(on(op))?;
            self.count_read(rows.len());
            let mut found = std::collections::HashMap::with_capacity(rows.len());
            for row in &rows {
                let doc = document(row, op)?;
                if let Some(id) = doc.id.clone() {
                    found.insert(id, doc);
                }
            }
            Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
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

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        let op = "list document ids";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT id FROM {} WHERE namespace = $1 ORDER BY id COLLATE \"C\"",
                        self.table("documents")
                    ),
                    &[&namespace],
                )
                .await
                .map_err(on(op))?;
            rows.iter()
                .map(|r| r.try_get::<_, String>(0).map_err(on(op)))
                .collect()
        })
        .await
    }

    /// One range scan of the id index in byte order (`id_order`).
    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        let op = "list a range of document ids";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&super::id_order::range_sql(&self.table("documents")))
                .await
                .map_err(on(op))?;
            let rows = client
                .query(&stmt, &[&namespace, &from, &to])
                .await
                .map_err(on(op))?;
            rows.iter()
                .map(|r| r.try_get::<_, String>(0).map_err(on(op)))
                .collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterative_scans_start_at_pgvector_0_8() {
        assert!(has_iterative_scan("0.8.0"));
        assert!(has_iterative_scan("0.8.2"));
        assert!(has_iterative_scan("1.0"));
        assert!(!has_iterative_scan("0.7.4"));
        assert!(!has_iterative_scan("garbage"));
    }

    #[test]
    fn ef_search_is_clamped_to_what_pgvector_accepts() {
        assert_eq!(
            dense_settings(10, false),
            format!("SET LOCAL hnsw.ef_search = {EF_SEARCH_MIN};")
        );
        assert!(dense_settings(5_000, true).contains(&format!("ef_search = {EF_SEARCH_MAX};")));
        assert!(dense_settings(5_000, true).contains("iterative_scan = strict_order"));
    }

    /// The server in `AGENTMEM_POSTGRES_URL`; `None` after a message outside CI.
    fn server_url() -> Option<String> {
        match std::env::var("AGENTMEM_POSTGRES_URL") {
            Ok(url) => Some(url),
            Err(_) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("AGENTMEM_POSTGRES_URL is not set: CI must `source .ci/services.sh`")
            }
            Err(_) => {
                eprintln!("skipped: set AGENTMEM_POSTGRES_URL to run this test");
                None
            }
        }
    }

    /// `n` unit vectors of `dim` around `clusters` centres (deterministic).
    fn clustered(n: usize, dim: usize, clusters: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..clusters)
            .map(|_| (0..dim).map(|_| next()).collect())
            .collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % clusters];
                let v: Vec<f32> = c.iter().map(|x| x + 0.4 * next()).collect();
                normalised(&v).expect("non-zero")
            })
            .collect()
    }

    /// The plan of the exact query text the store sends, under the settings it sets.
    async fn plan(store: &PostgresStore, ns: &str, q: &[f32], dim: usize) -> String {
        let mut client = store.client("explain").await.expect("client");
        let tx = client.transaction().await.expect("begin");
        tx.batch_execute(&dense_settings(10, true))
            .await
            .expect("settings");
        let sql = format!(
            "EXPLAIN {}",
            dense_index_query(&store.table("documents"), dim)
        );
        let rows = tx.query(&sql, &[&ns, &q, &10i64]).await.expect("explain");
        rows.iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Documents written before the HNSW indexes existed get one at the next connect
    /// (the upgrade path); the planner uses it for the query the store sends; searches
    /// through it agree with the exact ranking and follow deletes and clears.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dense_search_uses_the_hnsw_index_and_stays_in_step() {
        let Some(url) = server_url() else { return };
        let schema = format!("hnsw_{}", ulid::Ulid::new().to_string().to_lowercase());
        let options = |use_pgvector| crate::PostgresOptions {
            schema: schema.clone(),
            use_pgvector,
            ..crate::PostgresOptions::default()
        };
        // Written by a client that creates no index, as an older agentmem did.
        let old = PostgresStore::connect_with(&url, options(false))
            .await
            .expect("connect");
        let dim = 16;
        let n = 1_500;
        let vectors = clustered(n, dim, 30, 7);
        let docs = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut d = Document::new(format!("doc {i}"))
                    .with_metadata("group", i % 50)
                    .with_embedding(v.clone());
                d.id = Some(format!("d{i:05}"));
                d
            })
            .collect();
        old.upsert_batch("big", docs).await.expect("upsert");
        old.upsert(
            "small",
            Document::new("alone").with_embedding(vectors[0].clone()),
        )
        .await
        .expect("upsert");
        let client = old.client("check").await.expect("client");
        let index = format!("{}.{}", old.schema, index_name(dim));
        let exists = async |c: &deadpool_postgres::Object| {
            c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&index])
                .await
                .expect("to_regclass")
                .get::<_, bool>(0)
        };
        let before = exists(&client).await;
        assert!(!before, "no index without pgvector");

        let store = PostgresStore::connect_with(&url, options(true))
            .await
            .expect("connect");
        assert!(store.uses_pgvector(), "CI's PostgreSQL ships pgvector");
        let after = exists(&client).await;
        assert!(after, "connect built the index over the stored rows");
        client
            .batch_execute(&format!("ANALYZE {}", store.table("documents")))
            .await
            .expect("analyze");

        let q = normalised(&vectors[3]).expect("query");
        let plan = plan(&store, "big", &q, dim).await;
        assert!(
            plan.contains(&format!("Index Scan using {}", index_name(dim))),
            "{plan}"
        );

        // The indexed answer against the exact one.
        let answered = || {
            store
                .dense
                .answered
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        let query = SearchQuery::new("", 10).with_embedding(q.clone());
        let found = store.search("big", &query).await.expect("search");
        assert_eq!(answered(), 1, "the index answered");
        let exact = store
            .exact_search(
                &store.client("exact").await.expect("client"),
                "big",
                &query,
                &q,
            )
            .await
            .expect("exact");
        assert_eq!(found.len(), 10);
        let overlap = found
            .iter()
            .filter(|h| exact.iter().any(|e| e.id == h.id))
            .count();
        assert!(overlap >= 9, "recall@10 {overlap}/10");
        assert_eq!(found[0].id, exact[0].id);

        // The small namespace shares the index but is ranked exactly, and never sees "big".
        let small = store.search("small", &query).await.expect("search");
        assert_eq!(answered(), 1, "the exact scan answered");
        assert_eq!(small.len(), 1);
        assert_eq!(small[0].content, "alone");

        // A delete reaches the index in the same transaction.
        let top = found[0].id.clone();
        assert_eq!(
            store
                .delete("big", std::slice::from_ref(&top))
                .await
                .expect("delete"),
            1
        );
        let again = store.search("big", &query).await.expect("search");
        assert!(again.iter().all(|h| h.id != top), "deleted doc still found");
        assert_eq!(again.len(), 10);

        // A selective metadata filter (30 of 1,500 rows) still finds k hits, all matching.
        let filtered = SearchQuery::new("", 3)
            .with_embedding(q.clone())
            .with_filter(agentmemory_core::vector::Filter::new().eq("group", 7));
        let hits = store.search("big", &filtered).await.expect("search");
        assert_eq!(hits.len(), 3);
        assert!(hits.iter().all(|h| h.metadata["group"] == 7), "{hits:?}");

        store.clear("big").await.expect("clear");
        assert!(store
            .search("big", &query)
            .await
            .expect("search")
            .is_empty());
        client
            .batch_execute(&format!("DROP SCHEMA {} CASCADE", store.schema))
            .await
            .expect("drop schema");
    }

    /// A database written by the version before the shared analysis (schema 2, documents
    /// in a `simple` tsvector) is migrated at connect: its documents are analysed and
    /// rank exactly as the in-memory store ranks them.
    #[tokio::test]
    async fn documents_of_a_schema_2_database_rank_through_the_shared_analysis() {
        let Some(url) = server_url() else { return };
        let schema = format!("analysis_{}", ulid::Ulid::new().to_string().to_lowercase());
        let options = || crate::PostgresOptions {
            schema: schema.clone(),
            use_pgvector: false,
            ..crate::PostgresOptions::default()
        };
        let texts = [
            ("a", "Ana lives in Lisbon and loves living by the sea"),
            ("b", "She lived in PARIS for three years"),
            ("c", "Crème brûlée at the café"),
            ("d", "我住在北京"),
            ("e", "The team meets on Thursday"),
        ];
        // The previous version's schema, written the way it wrote documents.
        {
            let store = PostgresStore::connect_with(&url, options())
                .await
                .expect("connect");
            let client = store.client("test").await.expect("client");
            let quoted = store.schema.clone();
            client
                .batch_execute(&format!(
                    "DROP SCHEMA {quoted} CASCADE; CREATE SCHEMA {quoted}; \
                     CREATE TABLE {quoted}.schema_version (version integer NOT NULL); \
                     INSERT INTO {quoted}.schema_version VALUES (1), (2);"
                ))
                .await
                .expect("reset schema");
            for sql in &super::super::schema::MIGRATIONS[..2] {
                client
                    .batch_execute(&sql.replace("{s}", &quoted))
                    .await
                    .expect("schema 2");
            }
            for (id, text) in texts {
                client
                    .execute(
                        &format!(
                            "INSERT INTO {quoted}.documents (namespace, id, content, metadata) \
                             VALUES ('old', $1, $2, '{{}}'::jsonb)"
                        ),
                        &[&id, &text],
                    )
                    .await
                    .expect("old insert");
            }
        }
        let store = PostgresStore::connect_with(&url, options())
            .await
            .expect("migrating connect");
        let reference = agentmemory_core::InMemoryVectorStore::new();
        for (id, text) in texts {
            reference
                .upsert("old", Document::new(text).with_id(id))
                .await
                .expect("reference");
        }
        for (query, first) in [
            ("where does she live?", "a"),
            ("paris", "b"),
            ("creme brulee", "c"),
            ("北京", "d"),
        ] {
            let q = SearchQuery::new(query, 3);
            let got = store.search("old", &q).await.expect("search");
            let want = reference.search("old", &q).await.expect("reference search");
            assert_eq!(
                got.first().map(|h| h.id.as_str()),
                Some(first),
                "{query}: {got:?}"
            );
            let key = |hits: &[SearchHit]| {
                hits.iter()
                    .map(|h| (h.id.clone(), h.score.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(key(&got), key(&want), "{query}");
        }
        // New writes and deletes keep the statistics: the same ranking as in memory.
        store
            .upsert("old", Document::new("She lives near the café").with_id("f"))
            .await
            .expect("upsert");
        reference
            .upsert("old", Document::new("She lives near the café").with_id("f"))
            .await
            .expect("reference");
        store
            .delete("old", &["b".to_owned()])
            .await
            .expect("delete");
        reference
            .delete("old", &["b".to_owned()])
            .await
            .expect("reference");
        let q = SearchQuery::new("living in a cafe", 3);
        let got = store.search("old", &q).await.expect("search");
        let want = reference.search("old", &q).await.expect("reference search");
        assert_eq!(
            got.iter()
                .map(|h| (&h.id, h.score.to_bits()))
                .collect::<Vec<_>>(),
            want.iter()
                .map(|h| (&h.id, h.score.to_bits()))
                .collect::<Vec<_>>()
        );
        let client = store.client("test").await.expect("client");
        client
            .batch_execute(&format!("DROP SCHEMA {} CASCADE", store.schema))
            .await
            .expect("drop schema");
    }

    /// Writers of one namespace sharing terms, replacing each other's documents at the
    /// same time, neither deadlock nor lose a count: the statistics afterwards are
    /// those of the documents stored.
    #[tokio::test]
    async fn concurrent_writers_keep_the_term_statistics() {
        let Some(url) = server_url() else { return };
        let schema = format!("terms_{}", ulid::Ulid::new().to_string().to_lowercase());
        let store = PostgresStore::connect_with(
            &url,
            crate::PostgresOptions {
                schema,
                use_pgvector: false,
                ..crate::PostgresOptions::default()
            },
        )
        .await
        .expect("connect");
        let words = ["jazz", "tea", "lisbon", "chess", "piano", "sea"];
        let batch = |w: usize, round: usize| -> Vec<Document> {
            (0..8)
                .map(|i| {
                    let text = format!(
                        "{} {} {} round {round}",
                        words[(i + w) % 6],
                        words[(i * 5 + w) % 6],
                        words[(i + 3) % 6]
                    );
                    Document::new(text).with_id(format!("d{}", (i * 3 + w) % 12))
                })
                .collect()
        };
        for round in 0..5 {
            let (a, b, c, d) = tokio::join!(
                store.upsert_batch("shared", batch(0, round)),
                store.upsert_batch("shared", batch(1, round)),
                store.upsert_batch("shared", batch(2, round)),
                store.upsert_batch("shared", batch(3, round)),
            );
            for result in [a, b, c, d] {
                result.expect("concurrent upsert");
            }
        }
        let reference = agentmemory_core::InMemoryVectorStore::new();
        let ids = store.ids("shared").await.expect("ids");
        assert_eq!(ids.len(), 12, "every id written once");
        for doc in store.get_many("shared", &ids).await.expect("get many") {
            reference.upsert("shared", doc).await.expect("reference");
        }
        for query in ["jazz tea", "lisbon sea piano", "chess"] {
            let q = SearchQuery::new(query, 5);
            let got = store.search("shared", &q).await.expect("search");
            let want = reference
                .search("shared", &q)
                .await
                .expect("reference search");
            assert_eq!(
                got.iter()
                    .map(|h| (&h.id, h.score.to_bits()))
                    .collect::<Vec<_>>(),
                want.iter()
                    .map(|h| (&h.id, h.score.to_bits()))
                    .collect::<Vec<_>>(),
                "{query}"
            );
        }
        let client = store.client("test").await.expect("client");
        client
            .batch_execute(&format!("DROP SCHEMA {} CASCADE", store.schema))
            .await
            .expect("drop schema");
    }
}
