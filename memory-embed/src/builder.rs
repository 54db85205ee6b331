//! [`LocalEmbedderBuilder`]: where the model is and how to run it.

use std::path::PathBuf;

use super::batch::Plan;
use super::files::load_shared;
use super::int8::quantized_shared;
use super::local::LocalEmbedder;
use super::threads;
use super::Precision;
use crate::error::{EmbedError, Result};

/// Sequences per forward pass when not set.
pub(crate) const DEFAULT_BATCH_SIZE: usize = 32;
/// Tokens per text when not set: the length all-MiniLM-L6-v2 was trained on.
pub(crate) const DEFAULT_MAX_LENGTH: usize = 256;

/// Builds a [`LocalEmbedder`]; made by [`LocalEmbedder::builder`].
///
/// ```no_run
/// # fn demo() -> agentmemory_embed::Result<()> {
/// use agentmemory_embed::LocalEmbedder;
///
/// let embedder = LocalEmbedder::builder("/models/all-minilm-l6-v2")
///     .threads(2)
///     .batch_size(64)
///     .max_length(128)
///     .build()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct LocalEmbedderBuilder {
    dir: PathBuf,
    threads: Option<usize>,
    batch_size: usize,
    max_length: usize,
    precision: Precision,
}

impl LocalEmbedderBuilder {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            threads: None,
            batch_size: DEFAULT_BATCH_SIZE,
            max_length: DEFAULT_MAX_LENGTH,
            precision: Precision::F32,
        }
    }

    /// Threads inference may use (default: every core this process may run on).
    ///
    /// Inference runs inside a dedicated rayon pool of this many threads, shared by every
    /// embedder with the same count, never on the async runtime's workers. Batches run
    /// side by side on it, one per thread; a call with fewer batches than threads (a single
    /// query) splits its matrix products and attention heads over the pool instead.
    /// `RAYON_NUM_THREADS` plays no part: only this count does.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Texts per forward pass at most (default 32; fewer when a call has too few texts
    /// to give every thread a full batch). A pass runs its texts packed, without
    /// padding; larger batches make larger matrix products, which raises throughput a
    /// little up to about 64, while more batches than threads keeps every thread busy.
    pub fn batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Tokens kept per text, the `[CLS]` and `[SEP]` markers included (default 256, at most
    /// the model's `max_position_embeddings`, 512 for MiniLM); the rest is cut off.
    pub fn max_length(mut self, max_length: usize) -> Self {
        self.max_length = max_length;
        self
    }

    /// The number format of the dense layers (default [`Precision::F32`]).
    ///
    /// [`Precision::Int8`] quantises them to 8-bit integers when the embedder is built
    /// (once per process and model, a fraction of a second; about 22 MB beside the `f32`
    /// weights) and runs them in integer arithmetic: about twice the throughput on CPUs
    /// with AVX-512 VNNI, vectors within a cosine similarity of 0.99 of the `f32` ones.
    /// [`LocalEmbedder::from_env`] reads it from
    /// [`AGENTMEM_EMBED_PRECISION`](super::AGENTMEM_EMBED_PRECISION).
    ///
    /// ```no_run
    /// # fn demo() -> agentmemory_embed::Result<()> {
    /// use agentmemory_embed::{LocalEmbedder, Precision};
    ///
    /// let embedder = LocalEmbedder::builder("/models/all-minilm-l6-v2")
    ///     .precision(Precision::Int8)
    ///     .build()?;
    /// assert_eq!(embedder.precision(), Precision::Int8);
    /// # Ok(())
    /// # }
    /// ```
    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    /// Loads the model (or takes it from the process-wide cache when this directory was
    /// loaded before) and starts the thread pool. Blocks while loading: a few
    /// milliseconds to map the packed weights a previous load saved, else the time to read
    /// and convert `model.safetensors` (about 90 MB) and save their packed form for the
    /// next process (see the [module documentation](super)).
    ///
    /// # Errors
    ///
    /// [`EmbedError::ModelFiles`] naming the path when the directory or one of its files
    /// is missing or unreadable; [`EmbedError::InvalidArgument`] for a zero thread count
    /// or batch size, or a `max_length` the model cannot take, or [`Precision::Int8`] for
    /// a model whose layers are too wide for 8-bit products (more than 32,768 inputs).
    pub fn build(self) -> Result<LocalEmbedder> {
        let threads = self.threads.unwrap_or_else(threads::default_threads);
        if threads == 0 {
            return Err(EmbedError::invalid("threads", "must be at least 1"));
        }
        if self.batch_size == 0 {
            return Err(EmbedError::invalid("batch_size", "must be at least 1"));
        }
        let model = load_shared(&self.dir)?;
        let shortest = model.special_tokens + 1;
        if !(shortest..=model.max_positions).contains(&self.max_length) {
            return Err(EmbedError::invalid(
                "max_length",
                format!(
                    "must be within {shortest}..={} for this model, got {}",
                    model.max_positions, self.max_length
                ),
            ));
        }
        let pool = threads::pool(threads)?;
        let plan = Plan {
            batch_size: self.batch_size,
            max_length: self.max_length,
        };
        let int8 = match self.precision {
            Precision::F32 => None,
            Precision::Int8 => Some(quantized_shared(&model)?),
        };
        Ok(LocalEmbedder::new(model, pool, threads, plan, int8))
    }
}
