//! Local embedding models: text to dense vectors on this machine, with no service and no
//! network. The model runtime is the `agentmemory-embed` crate, re-exported here; this
//! module makes its [`LocalEmbedder`] an [`Embedder`](crate::Embedder) (feature
//! `local-embed`).
//!
//! ```no_run
//! # #[cfg(feature = "local-embed")]
//! # async fn demo() -> agentmemory_core::Result<()> {
//! use agentmemory_core::embed::LocalEmbedder;
//! use agentmemory_core::Embedder;
//!
//! // export AGENTMEM_EMBED_MODEL="$(scripts/fetch-model)"
//! let embedder = LocalEmbedder::from_env()?.expect("a model is fetched or named");
//! let vectors = Embedder::embed(
//!     &embedder,
//!     &["I'm lactose intolerant".into(), "Should I order the cheese platter?".into()],
//! )
//! .await?;
//! assert_eq!(vectors[0].len(), 384);
//! # Ok(())
//! # }
//! ```

#[doc(inline)]
pub use agentmemory_embed::*;

#[cfg(feature = "local-embed")]
mod local;
