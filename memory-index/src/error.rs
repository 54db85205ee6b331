//! What the index refuses.

/// Bad input to an index: the kernel turns it into its own `MemoryError` with the same
/// meaning (`From` in `agentmemory-core`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// An argument that cannot be indexed (an empty or non-finite embedding, ...).
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// What was wrong (e.g. `"embedding"`).
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A vector whose length differs from the vectors the index already holds.
    #[error("embedding dimension mismatch: expected {expected}, found {found}")]
    DimensionMismatch {
        /// The dimension of the index.
        expected: usize,
        /// The dimension given.
        found: usize,
    },
}

impl IndexError {
    /// An [`InvalidArgument`](Self::InvalidArgument) error.
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            what,
            reason: reason.into(),
        }
    }
}

/// The index's result type.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;
