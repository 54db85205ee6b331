//! # memory-stores
//!
//! Persistent backends for the store traits of [`agentmemory_core`], each behind a cargo feature:
//!
//! - `sqlite` (default): [`SqliteStore`], one SQLite file (WAL) implementing
//!   [`ConversationStore`](agentmemory_core::ConversationStore), [`KvStore`](agentmemory_core::KvStore),
//!   [`VectorStore`](agentmemory_core::VectorStore) and
//!   [`UserMemoryStore`](agentmemory_core::UserMemoryStore);
//! - `file`: [`FileStore`], a directory of JSON files implementing all four traits;
//! - `redis`: [`RedisStore`], every store trait in Redis;
//! - `postgres`: [`PostgresStore`], every store trait in PostgreSQL (pgvector when available).
//!
//! Both server stores speak TLS through rustls (`rediss://`, and libpq's `sslmode` for
//! PostgreSQL); see "TLS" on [`RedisStore`] and [`PostgresStore`], and [`TlsError`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// docs.rs builds with every feature on a nightly toolchain and `--cfg docsrs`: `doc(cfg)`
// marks what each feature adds.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod cache_budget;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod dense;
#[cfg(any(feature = "sqlite", feature = "redis", feature = "postgres"))]
mod fact_cache;
#[cfg(any(feature = "sqlite", feature = "redis", feature = "postgres"))]
mod fact_replay;
#[cfg(any(
    feature = "sqlite",
    feature = "redis",
    feature = "postgres",
    feature = "file"
))]
mod fact_rows;
#[cfg(feature = "file")]
mod file;
#[cfg(any(
    feature = "sqlite",
    feature = "redis",
    feature = "postgres",
    feature = "file"
))]
mod lru;
#[cfg(any(feature = "sqlite", feature = "redis", feature = "postgres"))]
mod model_record;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod params;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod tls;
mod url;

pub use cache_budget::CacheBudget;
#[cfg(feature = "file")]
#[cfg_attr(docsrs, doc(cfg(feature = "file")))]
pub use file::{FileStore, DEFAULT_FACT_LOG_LIMIT};
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{PostgresOptions, PostgresStore, SynchronousCommit, UnknownSynchronousCommit};
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::{RedisOptions, RedisStore};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;
#[cfg(any(feature = "redis", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "redis", feature = "postgres"))))]
pub use tls::TlsError;
pub use url::{StoreKind, StoreUrl, STORE_URL_ENV};
