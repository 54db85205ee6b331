//! What can go wrong with a knowledge graph.

use agentmemory_core::error::MemoryError;

/// A knowledge-graph operation that failed.
///
/// A change that fails with [`EntityNotFound`](GraphError::EntityNotFound) wrote nothing.
/// One that fails with [`Store`](GraphError::Store) may have been logged before the index
/// or the user's facts were written: the graph (the log) holds it, and the index is
/// repaired from the log when a handle next opens it.
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
