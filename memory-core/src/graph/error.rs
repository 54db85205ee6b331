//! What can go wrong with a knowledge graph.

use crate::error::MemoryError;

/// A knowledge-graph operation that failed. Nothing was written when it is returned by a
/// change (except [`GraphError::Store`] after the change was logged, which says so).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A change names an entity the graph does not hold. The text is the reference
    /// server's.
    #[error("Entity with name {0} not found")]
    EntityNotFound(String),
    /// A line of a JSONL file is not an entity or a relation.
    #[error("line {line}: not an entity or a relation of the memory file format: {reason}")]
    Jsonl {
        /// The line number, from 1.
        line: usize,
        /// Why.
        reason: String,
    },
    /// The log holds a change of a format newer than this build reads.
    #[error("the graph log `{log}` holds a change of format version {version}; this build reads up to {GRAPH_CHANGE_VERSION}", GRAPH_CHANGE_VERSION = super::GRAPH_CHANGE_VERSION)]
    FutureChange {
        /// The log's id.
        log: String,
        /// The version found.
        version: u32,
    },
    /// A store failed.
    #[error(transparent)]
    Store(#[from] MemoryError),
}
