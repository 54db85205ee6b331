//! What loading or running a local model can fail with.

use std::path::PathBuf;

/// A boxed error kept as the [`source`](std::error::Error::source) of an [`EmbedError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a local model could not be loaded or run. `agentmemory-core` turns each into its
/// `EmbedError` variant of the same name (`Model` with the kind `Other`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The model directory is missing a file, or a file in it cannot be used.
    #[error("cannot load the model in `{}`: {reason}", .path.display())]
    ModelFiles {
        /// The model directory, or the file in it at fault.
        path: PathBuf,
        /// What is wrong, and how to fix it when known.
        reason: String,
    },
    /// An argument the embedder cannot use (a zero thread count, an empty batch size, ...).
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// What was wrong.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// An environment variable with a value the embedder cannot use.
    #[error("environment variable {variable}=`{value}`: {reason}")]
    Environment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        reason: String,
    },
    /// Running the model failed (its inference pool could not start, a task was lost).
    #[error("model `{model}` failed: {message}")]
    Model {
        /// The model, by its directory.
        model: String,
        /// What failed.
        message: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<BoxError>,
    },
}

impl EmbedError {
    /// An [`InvalidArgument`](Self::InvalidArgument) error.
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            what,
            reason: reason.into(),
        }
    }

    /// A [`Model`](Self::Model) error.
    pub fn model(model: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Model {
            model: model.into(),
            message: message.into(),
            source: None,
        }
    }

    /// A [`Model`](Self::Model) error caused by `source`.
    pub fn model_caused_by(
        model: impl Into<String>,
        message: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Self::Model {
            model: model.into(),
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// The embedder's result type.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;
