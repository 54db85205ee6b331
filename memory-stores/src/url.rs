//! Building a [`Container`] of stores from a URL such as `AGENTMEM_STORE_URL`.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use agentmemory_core::di::tokens;
use agentmemory_core::{
    Container, InMemoryConversationStore, InMemoryKvStore, InMemoryUserMemoryStore,
    InMemoryVectorStore, MemoryError, Result,
};

/// The environment variable that names the stores.
pub const STORE_URL_ENV: &str = "AGENTMEM_STORE_URL";

/// Where an application's memory lives.
///
/// ```
/// use agentmemory_stores::StoreUrl;
///
/// assert_eq!("memory://".parse::<StoreUrl>().unwrap(), StoreUrl::Memory);
/// assert_eq!(
///     "sqlite://data/agentmem.db".parse::<StoreUrl>().unwrap(),
///     StoreUrl::Sqlite("data/agentmem.db".into())
/// );
/// assert_eq!(
///     "redis://127.0.0.1:6379/0".parse::<StoreUrl>().unwrap(),
///     StoreUrl::Redis("redis://127.0.0.1:6379/0".into())
/// );
/// assert_eq!(
///     "postgresql://me@db/app".parse::<StoreUrl>().unwrap(),
///     StoreUrl::Postgres("postgresql://me@db/app".into())
/// );
/// assert!("ftp://x".parse::<StoreUrl>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// `memory://`: everything in process memory.
    Memory,
    /// `sqlite://PATH`: one SQLite file for every store (`sqlite:///abs/path` for an absolute path).
    Sqlite(PathBuf),
    /// `file://DIR`: conversations and key/value entries as JSON files in a directory.
    /// No user-fact or vector store is registered: asking for one is an error
    /// ([`MemoryError::NoProvider`]), never a store that forgets on exit.
    File(PathBuf),
    /// `redis://HOST:PORT/DB` (the whole URL): conversations, key/value entries and user
    /// facts in Redis. No vector store is registered (asking for one is
    /// [`MemoryError::NoProvider`]).
    Redis(String),
    /// `postgres://USER@HOST:PORT/DB` or `postgresql://...` (the whole URL): every store in
    /// PostgreSQL.
    Postgres(String),
}

impl FromStr for StoreUrl {
    type Err = MemoryError;

    fn from_str(url: &str) -> Result<Self> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            MemoryError::invalid(
                "store URL",
                format!("`{url}` is not a URL; expected memory://, sqlite://PATH or file://DIR"),
            )
        })?;
        let path = |what: &str| -> Result<PathBuf> {
            if rest.is_empty() {
                Err(MemoryError::invalid(
                    "store URL",
                    format!("`{url}` names no {what}"),
                ))
            } else {
                Ok(PathBuf::from(rest))
            }
        };
        match scheme {
            "memory" => Ok(StoreUrl::Memory),
            "sqlite" => path("database file").map(StoreUrl::Sqlite),
            "file" => path("directory").map(StoreUrl::File),
            "redis" => Ok(StoreUrl::Redis(url.to_owned())),
            "postgres" | "postgresql" => Ok(StoreUrl::Postgres(url.to_owned())),
            other => Err(MemoryError::invalid(
                "store URL",
                format!("unsupported scheme `{other}` in `{url}`; supported: memory://, sqlite://PATH, file://DIR, redis://, postgres://"),
            )),
        }
    }
}

impl StoreUrl {
    /// The URL in `AGENTMEM_STORE_URL`, or `default` when it is unset or empty.
    pub fn from_env_or(default: &str) -> Result<Self> {
        match std::env::var(STORE_URL_ENV) {
            Ok(url) if !url.trim().is_empty() => url.trim().parse(),
            _ => default.parse(),
        }
    }

    /// Opens the stores and registers them in a new container under the default tokens
    /// ([`tokens::USER_MEMORY`], [`tokens::CONVERSATIONS`], [`tokens::VECTORS`], [`tokens::KV`]).
    ///
    /// With the `local-embed` feature and `AGENTMEM_EMBED_MODEL` naming a model directory,
    /// semantic recall is on: facts and documents are embedded when written and searches
    /// are hybrid (see [`open_with_embedder`](Self::open_with_embedder)). A set variable
    /// whose directory holds no loadable model is an error naming the path.
    pub async fn open(&self) -> Result<Container> {
        #[cfg(feature = "local-embed")]
        if let Some(embedder) = agentmemory_core::embed::LocalEmbedder::from_env()? {
            return self.open_with_embedder(Some(Arc::new(embedder))).await;
        }
        self.open_with_embedder(None).await
    }

    /// Opens the stores like [`open`](Self::open), with `embedder` (when `Some`) embedding
    /// facts and documents as they are written and queries as they are searched, so recall
    /// works by meaning as well as words ([`agentmemory_core::vector::embed_stores`]).
    pub async fn open_with_embedder(
        &self,
        embedder: Option<Arc<dyn agentmemory_core::Embedder>>,
    ) -> Result<Container> {
        let container = self.open_plain().await?;
        if let Some(embedder) = embedder {
            agentmemory_core::vector::embed_stores(&container, embedder)?;
        }
        Ok(container)
    }

    async fn open_plain(&self) -> Result<Container> {
        let container = Container::new();
        match self {
            StoreUrl::Memory => {
                container
                    .register_user_memory(
                        tokens::USER_MEMORY,
                        Arc::new(InMemoryUserMemoryStore::new()),
                    )
                    .register_conversations(
                        tokens::CONVERSATIONS,
                        Arc::new(InMemoryConversationStore::new()),
                    )
                    .register_vectors(tokens::VECTORS, Arc::new(InMemoryVectorStore::new()))
                    .register_kv(tokens::KV, Arc::new(InMemoryKvStore::new()));
            }
            StoreUrl::Sqlite(path) => open_sqlite(&container, path).await?,
            StoreUrl::File(dir) => open_file(&container, dir).await?,
            StoreUrl::Redis(url) => open_redis(&container, url).await?,
            StoreUrl::Postgres(url) => open_postgres(&container, url).await?,
        }
        Ok(container)
    }
}

/// Registers one store that implements all four traits under every default token.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn register_all<S>(container: &Container, store: Arc<S>)
where
    S: agentmemory_core::UserMemoryStore
        + agentmemory_core::ConversationStore
        + agentmemory_core::VectorStore
        + agentmemory_core::KvStore
        + 'static,
{
    container
        .register_user_memory(tokens::USER_MEMORY, store.clone())
        .register_conversations(tokens::CONVERSATIONS, store.clone())
        .register_vectors(tokens::VECTORS, store.clone())
        .register_kv(tokens::KV, store);
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(container: &Container, path: &std::path::Path) -> Result<()> {
    register_all(container, Arc::new(crate::SqliteStore::open(path).await?));
    Ok(())
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_: &Container, path: &std::path::Path) -> Result<()> {
    Err(MemoryError::invalid(
        "store URL",
        format!(
            "sqlite://{} needs memory-stores built with the `sqlite` feature",
            path.display()
        ),
    ))
}

#[cfg(feature = "file")]
async fn open_file(container: &Container, dir: &std::path::Path) -> Result<()> {
    // Files hold conversations and key/value entries. Nothing else is registered, so a
    // caller that needs user facts or vector documents from a `file://` URL is refused
    // (no provider) instead of silently getting a memory that forgets on exit.
    let store = Arc::new(crate::FileStore::open(dir).await?);
    container
        .register_conversations(tokens::CONVERSATIONS, store.clone())
        .register_kv(tokens::KV, store);
    Ok(())
}

#[cfg(not(feature = "file"))]
async fn open_file(_: &Container, dir: &std::path::Path) -> Result<()> {
    Err(MemoryError::invalid(
        "store URL",
        format!(
            "file://{} needs memory-stores built with the `file` feature",
            dir.display()
        ),
    ))
}

#[cfg(feature = "redis")]
async fn open_redis(container: &Container, url: &str) -> Result<()> {
    // Redis holds conversations, key/value entries and user facts; vector documents are
    // not registered (refused, not kept in memory where they would be lost).
    let store = Arc::new(crate::RedisStore::connect(url).await?);
    container
        .register_conversations(tokens::CONVERSATIONS, store.clone())
        .register_kv(tokens::KV, store.clone())
        .register_user_memory(tokens::USER_MEMORY, store);
    Ok(())
}

#[cfg(not(feature = "redis"))]
async fn open_redis(_: &Container, url: &str) -> Result<()> {
    Err(MemoryError::invalid(
        "store URL",
        format!("`{url}` needs memory-stores built with the `redis` feature"),
    ))
}

#[cfg(feature = "postgres")]
async fn open_postgres(container: &Container, url: &str) -> Result<()> {
    register_all(
        container,
        Arc::new(crate::PostgresStore::connect(url).await?),
    );
    Ok(())
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_: &Container, url: &str) -> Result<()> {
    Err(MemoryError::invalid(
        "store URL",
        format!("`{url}` needs memory-stores built with the `postgres` feature"),
    ))
}
