//! Local embedding models: text to dense vectors on this machine, with no service and no
//! network.
//!
//! [`LocalEmbedder`] (cargo feature `runtime`, on by default) runs
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
//! # #[cfg(feature = "runtime")]
//! # async fn demo() -> agentmemory_embed::Result<()> {
//! use agentmemory_embed::LocalEmbedder;
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

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Unsafe code lives only in these files (`grep -rln unsafe src` lists them all); every block
// says why it is sound, every unsafe operation in an `unsafe fn` sits in its own block:
// - `kernels.rs`: the one call into `gemm` (a raw-pointer API), and the element-wise loops
//   compiled for AVX2 / AVX-512, called with an `agentmemory_index::cpu` token;
// - `kernels_i8.rs`: the int8 embedder's AVX2 and AVX-512 VNNI matrix products
//   (intrinsics over raw pointers), reachable only through a `cpu` token;
// - `few_rows.rs`: the AVX-512 product for a few token rows (intrinsics over raw pointers
//   into slices it checks first), called with a `cpu` token; the threads get disjoint
//   slices of the destination, split safely;
// - `packed.rs`: memory-mapping the packed weights file (`memmap2`'s `map` is unsafe
//   because another process could change the file while it is mapped).
// Every SIMD kernel has a portable twin with the same logic, which Miri runs
// (`.ci/miri.sh`) and the tests compare the SIMD kernel against.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "runtime")]
mod batch;
#[cfg(feature = "runtime")]
mod bert;
#[cfg(feature = "runtime")]
mod builder;
mod discover;
pub mod error;
#[cfg(feature = "runtime")]
mod few_rows;
#[cfg(feature = "runtime")]
mod files;
#[cfg(feature = "runtime")]
mod int8;
#[cfg(feature = "runtime")]
mod kernels;
#[cfg(feature = "runtime")]
mod kernels_i8;
#[cfg(feature = "runtime")]
mod layout;
#[cfg(feature = "runtime")]
mod local;
#[cfg(feature = "runtime")]
mod packed;
mod precision;
#[cfg(feature = "runtime")]
mod tensor;
#[cfg(feature = "runtime")]
mod threads;
#[cfg(feature = "runtime")]
mod tokenizer;

#[cfg(feature = "runtime")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
pub use builder::LocalEmbedderBuilder;
pub use discover::{
    holds_model, locate_model, model_cache_dir, ModelLocation, ModelSource, AGENTMEM_MODEL_DIR,
    MODEL_FILES,
};
pub use error::{EmbedError, Result};
#[cfg(feature = "runtime")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
pub use local::LocalEmbedder;
pub use precision::{Precision, UnknownPrecision, AGENTMEM_EMBED_PRECISION};

/// The environment variable naming the model directory (`model.safetensors`,
/// `config.json`, `tokenizer.json`) that turns the local embedder on; it wins over the
/// cache directory ([`model_cache_dir`]).
///
/// Defined with or without the `runtime` feature, so a program built without it can
/// still say which variable would turn semantic recall on.
pub const AGENTMEM_EMBED_MODEL: &str = "AGENTMEM_EMBED_MODEL";

/// The model directory [`AGENTMEM_EMBED_MODEL`] names, for tests that need the real model:
/// `None` after a visible message when it is unset, a failure under `CI=true` (where
/// `.ci/embed.sh` sets it).
#[cfg(all(test, feature = "runtime"))]
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
