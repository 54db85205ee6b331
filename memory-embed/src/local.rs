//! [`LocalEmbedder`]: the embedder that runs the model on this machine.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::ThreadPool;

use super::batch::{self, Plan};
use super::builder::LocalEmbedderBuilder;
use super::files::LoadedModel;
use super::int8::Int8Weights;
use super::{locate_model, Precision};
use crate::error::{EmbedError, Result};

/// all-MiniLM-L6-v2 on the CPU: 384-dimensional, L2-normalised sentence embeddings, with
/// no service and no network.
///
/// Texts are tokenised with the model's own `tokenizer.json`, truncated to
/// [`max_length`](LocalEmbedderBuilder::max_length) tokens, sorted by length and run in
/// batches, packed without padding; each vector is the mean of the last hidden states over
/// the text's tokens, scaled to unit length, as sentence-transformers computes it. Inference
/// runs in a dedicated rayon pool of [`threads`](LocalEmbedderBuilder::threads) threads;
/// the async [`embed`](LocalEmbedder::embed) hands the work to that pool and waits for it without
/// holding a runtime worker.
///
/// Cloning is cheap, and embedders built on the same directory share one copy of the
/// weights for the life of the process.
///
/// ```no_run
/// # async fn demo() -> agentmemory_embed::Result<()> {
/// use agentmemory_embed::LocalEmbedder;
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
    /// The quantised dense layers, when running in [`Precision::Int8`].
    int8: Option<Arc<Int8Weights>>,
}

impl LocalEmbedder {
    pub(crate) fn new(
        model: Arc<LoadedModel>,
        pool: Arc<ThreadPool>,
        threads: usize,
        plan: Plan,
        int8: Option<Arc<Int8Weights>>,
    ) -> Self {
        Self {
            model,
            pool,
            threads,
            plan,
            int8,
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
    /// fetch` puts it), with the default settings but for the [`Precision`], which
    /// [`AGENTMEM_EMBED_PRECISION`](super::AGENTMEM_EMBED_PRECISION) picks (`f32` when
    /// unset); `Ok(None)` when the model variable is unset or empty and the cache
    /// directory holds no model ([`locate_model`]).
    ///
    /// # Errors
    ///
    /// [`EmbedError::ModelFiles`] naming the directory when [`AGENTMEM_EMBED_MODEL`](super::AGENTMEM_EMBED_MODEL) is
    /// set, or the cache directory holds the files, but they are not a loadable model;
    /// [`EmbedError::Environment`] when
    /// [`AGENTMEM_EMBED_PRECISION`](super::AGENTMEM_EMBED_PRECISION) names no precision.
    pub fn from_env() -> Result<Option<Self>> {
        let precision = Precision::from_env()?;
        match locate_model() {
            Some(found) => Self::builder(found.dir)
                .precision(precision)
                .build()
                .map(Some),
            None => Ok(None),
        }
    }

    /// Embeds `texts` on the calling thread (blocking it until done), one vector per
    /// text, in order. [`embed`](Self::embed) is the same work moved off the async runtime.
    pub fn embed_blocking<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        self.pool
            .install(|| batch::embed(&self.model, self.int8.as_deref(), &texts, self.plan))
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

    /// The number format of the dense layers ([`Precision::F32`] unless chosen).
    pub fn precision(&self) -> Precision {
        if self.int8.is_some() {
            Precision::Int8
        } else {
            Precision::F32
        }
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

impl LocalEmbedder {
    /// Embeds `texts`, one vector per text, in order, off the async runtime's workers:
    /// the work runs on the embedder's own thread pool and is awaited without blocking
    /// (outside a tokio runtime it runs on the calling thread). `agentmemory-core`'s
    /// `Embedder` implementation is this.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Inference is CPU-bound for milliseconds to seconds: keep it off the runtime's
        // workers. Outside a tokio runtime there is nowhere to move it, so run it here.
        if tokio::runtime::Handle::try_current().is_err() {
            return self.embed_blocking(texts);
        }
        // Straight onto the inference pool, and the result back through a channel: one
        // hop each way. (Going through tokio's blocking pool first, whose thread then
        // waits in the inference pool, costs two more thread wake-ups per call: on a busy
        // machine, each can cost more than a short query's whole forward pass.)
        let (done, result) = tokio::sync::oneshot::channel();
        let model = Arc::clone(&self.model);
        let int8 = self.int8.clone();
        let texts = texts.to_vec();
        let plan = self.plan;
        self.pool.spawn(move || {
            // A panic is carried back to the caller, as if the work had run there (a
            // panic escaping a pool task would abort the process).
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                batch::embed(&model, int8.as_deref(), &texts, plan)
            }));
            // The caller may have stopped waiting (its future dropped): nothing to do.
            let _ = done.send(out);
        });
        match result.await {
            Ok(Ok(out)) => out,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(gone) => Err(EmbedError::model_caused_by(
                self.model.dir.display().to_string(),
                "inference task failed",
                gone,
            )),
        }
    }

    /// The name of the model's directory (`all-minilm-l6-v2` for the one `agentmem model
    /// fetch` puts in the cache).
    pub fn model_name(&self) -> Option<String> {
        self.model
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
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
            .field("precision", &self.precision())
            .finish()
    }
}
