//! # memory-stores
//!
//! Persistent backends for the store traits of [`memory_core`], each behind a cargo feature:
//!
//! - `sqlite` (default): [`SqliteStore`], one SQLite file (WAL) implementing
//!   [`ConversationStore`](memory_core::ConversationStore), [`KvStore`](memory_core::KvStore),
//!   [`VectorStore`](memory_core::VectorStore) and
//!   [`UserMemoryStore`](memory_core::UserMemoryStore);
//! - `file`: [`FileStore`], a directory of JSON files implementing
//!   [`ConversationStore`](memory_core::ConversationStore) and [`KvStore`](memory_core::KvStore).
#![warn(missing_docs)]

#[cfg(feature = "file")]
mod file;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod text;
mod url;

#[cfg(feature = "file")]
pub use file::FileStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use url::{StoreUrl, STORE_URL_ENV};
