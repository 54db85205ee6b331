//! Local embedding models: text to dense vectors on this machine, with no service and no
//! network.
//!
//! [`LocalEmbedder`] (cargo feature `local-embed`) runs
//! [all-MiniLM-L6-v2](https://www.sbert.net/docs/sentence_transformer/pretrained_models.html)
//! (a 6-layer BERT, 384 dimensions, mean pooling, L2-normalised) on the CPU, with its own
//! forward pass over [`gemm`](https://docs.rs/gemm) matrix products. It loads `model.safetensors`, `config.json` and
//! `tokenizer.json` from a directory and never downloads anything: `agentmem model fetch`
//! (or `scripts/fetch-model`) puts the files in the cache directory ([`model_cache_dir`]),
//! where [`LocalEmbedder::from_env`] finds them with no variable set;
//! [`AGENTMEM_EMBED_MODEL`] names another directory and wins over the cache.
//!
//! The first load of a model converts its weights to the layout the forward pass reads
//! and saves that packed form beside the model (`model.agentmem-f32.packed`, or under
//! agentmem's cache directory when the model's directory cannot be written); every later
//! process maps that file instead, so a command with the embedder on starts in tens of
//! milliseconds. The file records the size and modification time of the
//! `model.safetensors` it came from and a checksum of its contents: a changed model or a
//! damaged file is never used, only packed again.
//!
//! ```no_run
//! # #[cfg(feature = "local-embed")]
//! # async fn demo() -> agentmemory_core::Result<()> {
//! use agentmemory_core::embed::LocalEmbedder;
//! use agentmemory_core::Embedder;
//!
//! // export AGENTMEM_EMBED_MODEL="$(scripts/fetch-model)"
//! let embedder = LocalEmbedder::from_env()?.expect("a model is fetched or named");
//! let vectors = embedder
//!     .embed(&["I'm lactose intolerant".into(), "Should I order the cheese platter?".into()])
//!     .await?;
//! assert_eq!(vectors[0].len(), 384);
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "local-embed")]
mod batch;
#[cfg(feature = "local-embed")]
mod bert;
#[cfg(feature = "local-embed")]
mod builder;
mod discover;
#[cfg(feature = "local-embed")]
mod few_rows;
#[cfg(feature = "local-embed")]
mod files;
#[cfg(feature = "local-embed")]
mod int8;
#[cfg(feature = "local-embed")]
mod kernels;
#[cfg(feature = "local-embed")]
mod kernels_i8;
#[cfg(feature = "local-embed")]
mod layout;
#[cfg(feature = "local-embed")]
mod local;
#[cfg(feature = "local-embed")]
mod packed;
mod precision;
#[cfg(feature = "local-embed")]
mod tensor;
#[cfg(feature = "local-embed")]
mod threads;
#[cfg(feature = "local-embed")]
mod tokenizer;

#[cfg(feature = "local-embed")]
#[cfg_attr(docsrs, doc(cfg(feature = "local-embed")))]
pub use builder::LocalEmbedderBuilder;
pub use discover::{
    holds_model, locate_model, model_cache_dir, ModelLocation, ModelSource, AGENTMEM_MODEL_DIR,
    MODEL_FILES,
};
#[cfg(feature = "local-embed")]
#[cfg_attr(docsrs, doc(cfg(feature = "local-embed")))]
pub use local::LocalEmbedder;
pub use precision::{Precision, UnknownPrecision, AGENTMEM_EMBED_PRECISION};

/// The environment variable naming the model directory (`model.safetensors`,
/// `config.json`, `tokenizer.json`) that turns the local embedder on; it wins over the
/// cache directory ([`model_cache_dir`]).
///
/// Defined with or without the `local-embed` feature, so a program built without it can
/// still say which variable would turn semantic recall on.
pub const AGENTMEM_EMBED_MODEL: &str = "AGENTMEM_EMBED_MODEL";

/// The model directory [`AGENTMEM_EMBED_MODEL`] names, for tests that need the real model:
/// `None` after a visible message when it is unset, a failure under `CI=true` (where
/// `.ci/embed.sh` sets it).
#[cfg(all(test, feature = "local-embed"))]
pub(crate) fn test_model_dir() -> Option<std::path::PathBuf> {
    match std::env::var(AGENTMEM_EMBED_MODEL) {
        Ok(dir) if !dir.trim().is_empty() => Some(dir.trim().into()),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{AGENTMEM_EMBED_MODEL} is not set: CI must `source .ci/embed.sh`")
        }
        _ => {
            eprintln!("skipping: set {AGENTMEM_EMBED_MODEL} to the model directory to run");
            None
        }
    }
}
