//! Embedding what was stored without a model, and again when the model changes.
//!
//! Facts and documents written while no embedder was on carry no vector and are found by
//! words alone. A store opened with a model catches up: a [`Backfill`] asks the store
//! ([`Reembed`]) for what has no vector, page by page, embeds each page in one call and
//! writes the vectors back, in the background ([`Backfill::spawn`]) or on demand
//! ([`Backfill::run`], `agentmem reembed`).
//!
//! Every store also records which model made its vectors ([`EmbeddingModel`]: a name and a
//! dimension). Opening it with another model is a **model change**: the old vectors are
//! dropped rather than compared with the new model's (two models' vectors share no space,
//! even at the same dimension), everything is embedded again, and the new model is
//! recorded once that is done. Until the old vectors are gone, the embedding stores of
//! [`embed_stores_backfilled`] search by words only ([`DenseGate`]).
//!
//! A store that records no model yet (written before models were recorded) is taken to
//! hold the opening model's vectors. Opening a store without a model changes nothing.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{MemoryError, Result};
use crate::vector::Embedder;

mod backfill;
mod gate;
mod open;

pub use backfill::{Backfill, BackfillOptions, BackfillProgress, BackfillReport, Phase};
pub use gate::DenseGate;
pub use open::{embed_stores_backfilled, targets, BACKFILL_TOKEN};

/// Texts per call to the embedder, and items per page asked of a store, by default.
pub const DEFAULT_BATCH: usize = 64;

/// Which embedding model made a store's vectors: its name and the dimension of its vectors.
///
/// Two models are the same when both agree. An embedder that names no model
/// ([`Embedder::model_name`] is `None`) is `"unnamed"`, so only a change of dimension is
/// seen between two such embedders.
///
/// ```
/// use agentmemory_core::reembed::EmbeddingModel;
///
/// let minilm = EmbeddingModel::new("all-minilm-l6-v2", 384);
/// assert_ne!(minilm, EmbeddingModel::new("all-minilm-l6-v2", 768));
/// assert_eq!(minilm.to_string(), "all-minilm-l6-v2 (384 dimensions)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddingModel {
    /// The model's name (for the local embedder, the name of its directory).
    pub name: String,
    /// The length of its vectors.
    pub dimension: usize,
}

impl EmbeddingModel {
    /// The model `name` making vectors of `dimension` numbers.
    pub fn new(name: impl Into<String>, dimension: usize) -> Self {
        Self {
            name: name.into(),
            dimension,
        }
    }

    /// The model behind `embedder`: its [`model_name`](Embedder::model_name) and its
    /// [`dimensions`](Embedder::dimensions), or, when it does not say, the length of the
    /// vector of one probe text.
    pub async fn of(embedder: &dyn Embedder) -> Result<Self> {
        let name = embedder
            .model_name()
            .unwrap_or_else(|| "unnamed".to_owned());
        let dimension = match embedder.dimensions() {
            Some(d) => d,
            None => embedder
                .embed(&["dimension probe".to_owned()])
                .await?
                .first()
                .map(Vec::len)
                .ok_or_else(|| {
                    MemoryError::invalid("embedder output", "no vector for the probe text")
                })?,
        };
        if dimension == 0 {
            return Err(MemoryError::invalid(
                "embedder output",
                "vectors of dimension 0",
            ));
        }
        Ok(Self::new(name, dimension))
    }
}

impl std::fmt::Display for EmbeddingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} dimensions)", self.name, self.dimension)
    }
}

/// The record an embedding belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum EmbeddingTarget {
    /// A current fact of a user.
    Fact {
        /// The user.
        user_id: String,
        /// The fact's id.
        fact_id: String,
    },
    /// A document of a vector namespace (episodes are documents too).
    Document {
        /// The namespace.
        namespace: String,
        /// The document's id.
        id: String,
    },
}

/// A fact or document that has no vector: what to embed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Unembedded {
    /// Where the vector goes.
    pub target: EmbeddingTarget,
    /// The text to embed (the fact's text, the document's content).
    pub text: String,
}

impl Unembedded {
    /// `text`, to be embedded for `target`.
    pub fn new(target: EmbeddingTarget, text: impl Into<String>) -> Self {
        Self {
            target,
            text: text.into(),
        }
    }
}

/// One page of [`Reembed::unembedded`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct UnembeddedPage {
    /// What to embed, in the store's order.
    pub items: Vec<Unembedded>,
    /// Where the next page starts; `None` after the last page.
    pub next: Option<String>,
}

impl UnembeddedPage {
    /// A page of `items`, followed by the page at `next` (`None`: none follows).
    pub fn new(items: Vec<Unembedded>, next: Option<String>) -> Self {
        Self { items, next }
    }
}

/// A vector made for a record's text, to be stored with it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Embedded {
    /// The record.
    pub target: EmbeddingTarget,
    /// The text the vector was made from: a record whose text is no longer this (a
    /// document rewritten meanwhile) is left alone.
    pub text: String,
    /// The vector (stores normalise it, as on every write).
    pub embedding: Vec<f32>,
}

impl Embedded {
    /// `embedding`, made from `text`, for `target`.
    pub fn new(target: EmbeddingTarget, text: impl Into<String>, embedding: Vec<f32>) -> Self {
        Self {
            target,
            text: text.into(),
            embedding,
        }
    }
}

/// A store whose facts and documents can be embedded after they were written: what
/// [`Backfill`] drives. Every backend implements it (the persistent ones in
/// `agentmemory-stores`); its conformance suite is `testkit::reembed`.
///
/// Only current facts are embedded (superseded versions are history, never searched);
/// facts and documents with blank text are never embedded and never listed.
#[async_trait]
pub trait Reembed: Send + Sync {
    /// The model recorded as having made this store's vectors; `None` before one is
    /// recorded.
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>>;

    /// Records `model` as the one that made this store's vectors.
    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()>;

    /// About `limit` current facts and documents with no vector, from the page `after`
    /// names (`None`: from the start); `next` is `None` on the last page. Pages follow one
    /// order, so a pass over them sees each record at least once, and records written
    /// meanwhile are seen unless they sort before the page being read. A backend whose
    /// natural step is coarser (Redis walks hashes with `HSCAN`) may end a page a little
    /// past `limit`; the others return at most `limit`.
    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage>;

    /// How many current facts and documents have no vector.
    async fn count_unembedded(&self) -> Result<usize>;

    /// Stores each vector with its record, unless the record is gone, no longer has the
    /// text the vector was made from, or has a vector already; how many were stored.
    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize>;

    /// Removes every fact's and document's vector (and what fixes a namespace's
    /// dimension), leaving the records themselves alone; how many vectors were removed.
    async fn drop_embeddings(&self) -> Result<usize>;
}

#[cfg(test)]
mod tests;
