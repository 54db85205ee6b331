//! `VectorStore`: documents searched by meaning, sparse (TF-IDF) or dense (embeddings).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{MemoryError, Result};
use crate::message::Metadata;

pub(crate) use agentmemory_index::analyse;
pub(crate) use agentmemory_index::dense;
mod embedding;
mod filter;
pub(crate) use agentmemory_index::fuse;
mod memory;
mod recent;
pub(crate) use agentmemory_index::simd;
pub(crate) use agentmemory_index::sparse;
pub(crate) use agentmemory_index::tfidf;
pub(crate) use agentmemory_index::topk;

pub use dense::DenseStats;
pub(crate) use embedding::wrap_stores;
pub use embedding::{embed_stores, EmbeddingVectorStore};
pub use filter::{Condition, Filter};
pub(crate) use fuse::{fuse, Fusion};
pub use memory::InMemoryVectorStore;
pub use recent::RecentEmbeddings;

/// `v` scaled to unit length, refused if empty, non-finite or zero (`what` names it in
/// the error): [`dense::normalized`] with the kernel's error type.
///
/// ```
/// use agentmemory_core::store_support::normalized;
///
/// let v = normalized(vec![3.0, 4.0], "embedding").unwrap();
/// assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
/// assert!(normalized(vec![0.0, 0.0], "embedding").is_err());
/// ```
pub fn normalized(v: Vec<f32>, what: &'static str) -> Result<Vec<f32>> {
    Ok(dense::normalized(v, what)?)
}

/// A document to store or as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Document {
    /// Stable id; a fresh ULID is assigned on upsert when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The text.
    pub content: String,
    /// Free metadata, matched by [`Filter`]s.
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
    /// A precomputed embedding; L2-normalised when stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

impl Document {
    /// A document with only content.
    pub fn new(content: impl Into<String>) -> Self {
        Self {
            id: None,
            content: content.into(),
            metadata: Metadata::new(),
            embedding: None,
        }
    }

    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Adds a metadata entry.
    pub fn with_metadata(
        mut self,
        key: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Sets the embedding.
    pub fn with_embedding(mut self, embedding: Vec<f32>) -> Self {
        self.embedding = Some(embedding);
        self
    }
}

/// A search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchHit {
    /// The document's id.
    pub id: String,
    /// Its content.
    pub content: String,
    /// Its metadata.
    pub metadata: Metadata,
    /// Cosine similarity in `0.0..=1.0` for sparse search, `-1.0..=1.0` for dense; higher is better.
    pub score: f32,
}

impl SearchHit {
    /// A hit for the document `id` with this content and score, without metadata (set
    /// [`metadata`](Self::metadata) when the document has some).
    ///
    /// ```
    /// use agentmemory_core::vector::SearchHit;
    ///
    /// let mut hit = SearchHit::new("doc-1", "The Albertina shows Dürer's hare", 0.8);
    /// hit.metadata.insert("lang".into(), "en".into());
    /// assert_eq!(hit.id, "doc-1");
    /// ```
    pub fn new(id: impl Into<String>, content: impl Into<String>, score: f32) -> Self {
        Self {
            id: id.into(),
            content: content.into(),
            metadata: Metadata::default(),
            score,
        }
    }
}

/// What to search for.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SearchQuery {
    /// The query text (used for sparse search, and embedded for dense search when an
    /// embedder is configured).
    pub text: String,
    /// A precomputed query embedding; selects dense search.
    pub embedding: Option<Vec<f32>>,
    /// At most this many hits.
    pub k: usize,
    /// Only documents matching this filter.
    pub filter: Option<Filter>,
}

impl SearchQuery {
    /// A text query for the best `k` hits.
    pub fn new(text: impl Into<String>, k: usize) -> Self {
        Self {
            text: text.into(),
            embedding: None,
            k,
            filter: None,
        }
    }

    /// Restricts hits to documents matching `filter`.
    pub fn with_filter(mut self, filter: Filter) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Searches by this embedding instead of the text.
    pub fn with_embedding(mut self, embedding: Vec<f32>) -> Self {
        self.embedding = Some(embedding);
        self
    }
}

/// Turns text into dense vectors.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// One embedding per input, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
    /// The dimension of the vectors, when fixed and known.
    fn dimensions(&self) -> Option<usize> {
        None
    }
    /// The name of the model, when known: with [`dimensions`](Self::dimensions), what a
    /// store records as the maker of its vectors, so that opening it with another model
    /// is detected ([`crate::reembed`]). Wrappers pass on the name of the embedder they
    /// wrap.
    fn model_name(&self) -> Option<String> {
        None
    }
}

/// Documents in namespaces, searched by similarity. Namespaces never see each other's
/// documents.
#[async_trait]
pub trait VectorStore: Send + Sync {
    /// Inserts or replaces many documents at once (one transaction where the backend has
    /// them); returns their ids, in order.
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>>;
    /// Inserts or replaces one document; returns its id.
    ///
    /// Provided: a batch of one through [`upsert_batch`](Self::upsert_batch).
    async fn upsert(&self, namespace: &str, document: Document) -> Result<String> {
        self.upsert_batch(namespace, vec![document])
            .await?
            .pop()
            .ok_or_else(|| {
                MemoryError::store(
                    "vector",
                    "upsert a document",
                    "upsert_batch returned no id for the document",
                )
            })
    }
    /// The best `query.k` documents, best first.
    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>>;
    /// One document by id.
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>>;
    /// The documents with these (distinct) ids, in the order given, those not stored left
    /// out: one round trip where the backend has them (episodes read what was said in a
    /// period this way).
    ///
    /// The default calls [`get`](Self::get) for each id.
    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(doc) = self.get(namespace, id).await? {
                out.push(doc);
            }
        }
        Ok(out)
    }
    /// Deletes documents by id; how many existed.
    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize>;
    /// Deletes every document of the namespace.
    async fn clear(&self, namespace: &str) -> Result<()>;
    /// Number of documents in the namespace.
    async fn len(&self, namespace: &str) -> Result<usize>;
    /// Every document id of the namespace, in byte order (empty when it is unknown).
    ///
    /// Ids that sort by time (ULIDs, [episode ids](crate::episodes::episode_id)) come
    /// back oldest first, which is what retention and time-ordered listing build on.
    async fn ids(&self, namespace: &str) -> Result<Vec<String>>;
    /// The document ids of the namespace from `from` (inclusive) to `to` (exclusive), in
    /// byte order: for ids that sort by time, what was stored in a period, without
    /// listing the whole namespace (episodes ask for it on every question that names a
    /// period).
    ///
    /// The default bisects [`ids`](Self::ids); stores that keep their ids in order answer
    /// it from their index.
    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        let mut ids = self.ids(namespace).await?;
        let hi = ids.partition_point(|id| id.as_str() < to);
        ids.truncate(hi);
        let lo = ids.partition_point(|id| id.as_str() < from);
        ids.drain(..lo);
        Ok(ids)
    }
}
