//! [`LocalEmbedder`]: the [`Embedder`] that runs the model on this machine.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use rayon::ThreadPool;

use super::batch::{self, Plan};
use super::builder::LocalEmbedderBuilder;
use super::files::LoadedModel;
use super::locate_model;
use crate::error::{MemoryError, Result};
use crate::vector::Embedder;

/// all-MiniLM-L6-v2 on the CPU: 384-dimensional, L2-normalised sentence embeddings, with
/// no service and no network.
///
/// Texts are tokenised with the model's own `tokenizer.json`, truncated to
/// [`max_length`](LocalEmbedderBuilder::max_length) tokens, sorted by length and run in
/// batches, packed without padding; each vector is the mean of the last hidden states over
/// the text's tokens, scaled to unit length, as sentence-transformers computes it. The async
/// [`Embedder::embed`] moves the work to tokio's blocking threads; inference itself runs in
/// a dedicated rayon pool of [`threads`](LocalEmbedderBuilder::threads) threads.
///
/// Cloning is cheap, and embedders built on the same directory share one copy of the
/// weights for the life of the process.
///
/// ```no_run
/// # async fn demo() -> agentmemory_core::Result<()> {
/// use agentmemory_core::embed::LocalEmbedder;
/// use agentmemory_core::Embedder;
///
/// // The directory scripts/fetch-model prints.
/// let embedder = LocalEmbedder::builder("/root/.cache/agentmem/all-minilm-l6-v2")
///     .threads(2)
///     .build()?;
/// let texts = ["The cat is asleep on the sofa".to_string(), "A kitten naps on the couch".into()];
/// let vectors = embedder.embed(&texts).await?;
/// // Unit vectors: the dot product is the cosine similarity.
/// let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
/// assert!(cosine > 0.5);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LocalEmbedder {
    model: Arc<LoadedModel>,
    pool: Arc<ThreadPool>,
    threads: usize,
    plan: Plan,
}

impl LocalEmbedder {
    pub(crate) fn new(
        model: Arc<LoadedModel>,
        pool: Arc<ThreadPool>,
        threads: usize,
        plan: Plan,
    ) -> Self {
        Self {
            model,
            pool,
            threads,
            plan,
        }
    }

    /// A builder for the model in `dir` (the directory holding `model.safetensors`,
    /// `config.json` and `tokenizer.json`).
    pub fn builder(dir: impl Into<PathBuf>) -> LocalEmbedderBuilder {
        LocalEmbedderBuilder::new(dir.into())
    }

    /// The model in `dir` with the default settings; see [`LocalEmbedderBuilder::build`].
    pub fn load(dir: impl Into<PathBuf>) -> Result<Self> {
        Self::builder(dir).build()
    }

    /// The model in the directory named by [`AGENTMEM_EMBED_MODEL`](super::AGENTMEM_EMBED_MODEL), else the one in the
    /// cache directory ([`model_cache_dir`](super::model_cache_dir), where `agentmem model
    /// fetch` puts it), with the default settings; `Ok(None)` when the variable is unset
    /// or empty and the cache directory holds no model ([`locate_model`]).
    ///
    /// # Errors
    ///
    /// [`MemoryError::ModelFiles`] naming the directory when [`AGENTMEM_EMBED_MODEL`](super::AGENTMEM_EMBED_MODEL) is
    /// set, or the cache directory holds the files, but they are not a loadable model.
    pub fn from_env() -> Result<Option<Self>> {
        match locate_model() {
            Some(found) => Self::load(found.dir).map(Some),
            None => Ok(None),
        }
    }

    /// Embeds `texts` on the calling thread (blocking it until done), one vector per
    /// text, in order. [`Embedder::embed`] is the same work moved off the async runtime.
    pub fn embed_blocking<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        self.pool
            .install(|| batch::embed(&self.model, &texts, self.plan))
    }

    /// The directory the model was loaded from (canonical).
    pub fn dir(&self) -> &Path {
        &self.model.dir
    }

    /// The embedding dimension (384 for all-MiniLM-L6-v2).
    pub fn dimension(&self) -> usize {
        self.model.hidden_size
    }

    /// The size of the thread pool inference runs in.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Texts per forward pass.
    pub fn batch_size(&self) -> usize {
        self.plan.batch_size
    }

    /// Tokens kept per text, special tokens included.
    pub fn max_length(&self) -> usize {
        self.plan.max_length
    }

    /// The packed-weights file this embedder's weights were mapped from, or saved to when
    /// this process packed them from `model.safetensors`; `None` when they could be saved
    /// nowhere (see the [module documentation](super)).
    pub fn packed_weights(&self) -> Option<&Path> {
        self.model.weights.file()
    }

    /// Whether both embedders run on the same loaded weights (the process-wide cache
    /// shares them between embedders built on the same directory).
    pub fn shares_model_with(&self, other: &LocalEmbedder) -> bool {
        Arc::ptr_eq(&self.model, &other.model)
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Inference is CPU-bound for milliseconds to seconds: keep it off the runtime's
        // workers. Outside a tokio runtime there is nowhere to move it, so run it here.
        if tokio::runtime::Handle::try_current().is_err() {
            return self.embed_blocking(texts);
        }
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts))
            .await
            .map_err(|e| {
                MemoryError::model_caused_by(
                    self.model.dir.display().to_string(),
                    crate::error::ModelErrorKind::Other,
                    "inference task failed",
                    e,
                )
            })?
    }

    fn dimensions(&self) -> Option<usize> {
        Some(self.model.hidden_size)
    }
}

impl fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("dir", &self.model.dir)
            .field("dimension", &self.model.hidden_size)
            .field("threads", &self.threads)
            .field("batch_size", &self.plan.batch_size)
            .field("max_length", &self.plan.max_length)
            .finish()
    }
}
