//! # agentmemory-index
//!
//! The search engine of [agentmemory](https://docs.rs/agentmemory), as values with no
//! knowledge of messages, facts or stores:
//!
//! - [`text`]: text analysis (normalisation, stop words, Snowball stemming, CJK bigrams,
//!   sentences);
//! - [`sparse`]: the keyword index (compressed postings, IDF-weighted coverage), with
//!   [`tfidf`] its scoring and a flat snapshot format;
//! - [`dense`]: the embedding index (int8-quantised rows rescored in f32), over the SIMD
//!   kernels of [`simd`], reached through the CPU-feature tokens of [`cpu`];
//! - [`fuse`]: fusion of the two rankings; [`topk`]: bounded best-k selection.
//!
//! `agentmemory-core` builds its in-memory stores on these; most users depend on the
//! `agentmemory` facade instead of this crate.
//!
//! ```
//! use agentmemory_index::text::terms;
//!
//! assert_eq!(terms("Lives in Zürich"), ["live", "zurich"]);
//! ```
// Unsafe code lives only in `simd.rs` (dense search's AVX2 and AVX-512 VNNI dot-product
// kernels, intrinsics over raw pointers), called only with a `cpu` token that proves the
// CPU's features; every block says why it is sound. Each kernel has a portable twin with
// the same logic, which Miri runs (`.ci/miri.sh`) and the tests compare against.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod analyse;
mod codec;
#[cfg(target_arch = "x86_64")]
pub mod cpu;
pub mod dense;
mod dictionary;
pub mod error;
mod flat;
pub mod fuse;
mod packed;
mod postings;
mod quantized;
mod shared;
pub mod simd;
pub mod sparse;
pub mod text;
pub mod tfidf;
pub mod topk;

pub use error::{IndexError, Result};
