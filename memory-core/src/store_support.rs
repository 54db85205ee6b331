//! For authors of store backends: the rules every backend shares, so that a new store
//! reconciles, ranks and indexes exactly as the built-in ones do (the SQLite, file, Redis
//! and PostgreSQL stores of `agentmemory-stores` are built on them). Applications never
//! need this module; the store traits themselves ([`UserMemoryStore`](crate::UserMemoryStore),
//! [`VectorStore`](crate::VectorStore), [`ConversationStore`](crate::ConversationStore),
//! [`KvStore`](crate::KvStore)) and their conformance suites (`testkit`) are where a
//! backend starts.
//!
//! - **Facts, on write**: [`prepare_candidate`] checks a candidate; [`decide`] (the words
//!   and attributes) or [`reconcile_by_meaning`] (with embeddings) says whether it adds,
//!   reinforces, supersedes or contests a held fact ([`Reconciliation`]); [`resolve`],
//!   [`value_key`], [`closes`] and the thresholds are the pieces they are made of.
//! - **Facts, on read**: [`RankedFacts`] is the word index a store keeps per user and
//!   ranks with; [`rank_facts`] ranks a list of facts the same way; [`fact_relevance_among`]
//!   fuses word and embedding relevance ([`fact_relevance`] for a fact scored alone).
//! - **Documents**: [`normalized`] checks and scales an embedding before it is stored;
//!   [`fuse`] merges a word ranking and a dense ranking ([`Fusion`]); [`dense_kernel`]
//!   names the SIMD kernel the dense scan runs on.
//! - **Conversations**: [`message_ids`] and [`without_known_messages`] keep appends
//!   idempotent.
//! - **Text analysis**: [`terms`], [`for_each_term`] and [`index_text`] turn text into the
//!   terms every index stores (Unicode words, folding, stop words, stemming, CJK bigrams),
//!   the same way at index time and at query time:
//!
//! ```
//! use agentmemory_core::store_support::terms;
//!
//! assert_eq!(terms("The user LIKES museums, since 2024!"), ["user", "like", "museum", "sinc", "2024"]);
//! assert_eq!(terms("Where do I live?"), terms("lives")); // both "live"
//! assert_eq!(terms("我住在北京"), ["我住", "住在", "在北", "北京"]);
//! ```

pub use crate::conversation::known::{message_ids, without_known_messages};
pub use crate::facts::plan::plan_change;
pub use crate::facts::quality::is_low_quality;
pub use crate::facts::ranked::RankedFacts;
pub use crate::facts::reconcile::{
    decide, is_single_valued, normalize, reconcile, reconcile_with, resolve, supersede_threshold,
    value_key, FactKey, Reconciliation, Similarity, CORRECTION_ATTRIBUTE, PARAPHRASE_SIMILARITY,
};
pub use crate::facts::semantic::{
    cosine, fact_relevance, fact_relevance_among, paraphrase_of, prepare_candidate, rank_facts,
    reconcile_by_meaning, reconcile_by_meaning_keyed, PARAPHRASE_THRESHOLD,
};
pub use crate::facts::transition::{closes, CLOSE_SIMILARITY};
pub use crate::facts::versions::{
    chain as version_chain, doomed as doomed_versions, facts_at, held_at,
};
pub use crate::text::{for_each_term, index_text, terms};
pub use crate::vector::fuse::{fuse, fuse_covered, Fusion};
pub use crate::vector::normalized;
pub use crate::vector::simd::kernel_name as dense_kernel;
pub use crate::vector::topk::{best, Ties};

/// The TF-IDF cosine every word index scores documents with, as plain functions, for
/// stores that keep their own term statistics (the PostgreSQL store does).
pub mod tfidf {
    pub use crate::vector::tfidf::*;
}
