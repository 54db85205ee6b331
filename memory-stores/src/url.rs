//! Building a [`Container`] of stores from a URL such as `AGENTMEM_STORE_URL`.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use agentmemory_core::di::tokens;
use agentmemory_core::reembed::Reembed;
use agentmemory_core::{
    Container, InMemoryConversationStore, InMemoryKvStore, InMemoryUserMemoryStore,
    InMemoryVectorStore, MemoryError, Result,
};

/// The environment variable that names the stores.
pub const STORE_URL_ENV: &str = "AGENTMEM_STORE_URL";

/// The four kinds of record a store URL serves, one per store trait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreKind {
    /// Conversation logs ([`ConversationStore`](agentmemory_core::ConversationStore)).
    Conversations,
    /// Key/value entries ([`KvStore`](agentmemory_core::KvStore)).
    KeyValue,
    /// Facts about users ([`UserMemoryStore`](agentmemory_core::UserMemoryStore)).
    UserFacts,
    /// Documents searched by words or meaning ([`VectorStore`](agentmemory_core::VectorStore)).
    Vectors,
}

impl StoreKind {
    /// Every kind.
    pub const ALL: [StoreKind; 4] = [
        StoreKind::Conversations,
        StoreKind::KeyValue,
        StoreKind::UserFacts,
        StoreKind::Vectors,
    ];

    /// What records of this kind are called in messages (`"user facts"`, ...).
    pub fn describe(self) -> &'static str {
        match self {
            StoreKind::Conversations => "conversations",
            StoreKind::KeyValue => "key/value entries",
            StoreKind::UserFacts => "user facts",
            StoreKind::Vectors => "vector documents",
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

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
    /// `file://DIR`: every store as JSON files in a directory
    /// ([`FileStore`](crate::FileStore)).
    File(PathBuf),
    /// `redis://HOST:PORT/DB` or, over TLS, `rediss://...` (the whole URL): every store in
    /// Redis (vector documents are kept in Redis and searched through an in-process index
    /// that catches up from each namespace's change log: a search after a write reads only
    /// the documents written). A Redis Cluster is named by its seed nodes,
    /// `redis+cluster://HOST:PORT,HOST:PORT/` (`rediss+cluster://` over TLS), and reached
    /// through a cluster client that routes each command to the node owning its keys.
    /// Takes `?pool_size=N` (see `RedisStore::connect_with`, feature `redis`); an unknown
    /// parameter is a [`MemoryError::UrlParameter`] naming it.
    Redis(String),
    /// `postgres://USER@HOST:PORT/DB` or `postgresql://...` (the whole URL): every store in
    /// PostgreSQL. Takes `?schema=`, `pool_size`, `pool_min_size`, `connect_timeout` and
    /// `synchronous_commit` (see "URL parameters" and "Durability" on `PostgresStore`,
    /// feature `postgres`); an unknown parameter is a [`MemoryError::UrlParameter`]
    /// naming it.
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
            "redis" | "rediss" | "redis+cluster" | "rediss+cluster" => {
                Ok(StoreUrl::Redis(url.to_owned()))
            }
            "postgres" | "postgresql" => Ok(StoreUrl::Postgres(url.to_owned())),
            other => Err(MemoryError::invalid(
                "store URL",
                format!("unsupported scheme `{other}` in `{url}`; supported: memory://, sqlite://PATH, file://DIR, redis:// (rediss:// over TLS), redis+cluster://HOST:PORT,HOST:PORT/, postgres://"),
            )),
        }
    }
}

impl StoreUrl {
    /// The kinds of record this URL keeps: durably for every URL but `memory://`, which
    /// keeps them all in process memory on purpose. [`open`](Self::open) registers a store
    /// for each of these kinds and no other, so nothing is ever silently kept in memory
    /// in place of a durable store.
    pub fn kinds(&self) -> &'static [StoreKind] {
        &StoreKind::ALL
    }

    /// Fails with [`MemoryError::Unsupported`] naming the first of `needed` this URL cannot
    /// keep, or whose backend this build lacks (its cargo feature is not compiled in).
    /// Call it at start, before anything is written.
    ///
    /// ```
    /// use agentmemory_stores::{StoreKind, StoreUrl};
    ///
    /// let url: StoreUrl = "memory://".parse().unwrap();
    /// assert!(url.require(&StoreKind::ALL).is_ok());
    /// ```
    pub fn require(&self, needed: &[StoreKind]) -> Result<()> {
        self.check_compiled()?;
        match needed.iter().find(|kind| !self.kinds().contains(kind)) {
            Some(kind) => Err(MemoryError::unsupported(
                self.to_string(),
                format!("persist {kind}"),
                "this backend does not store them; use sqlite://, file:// or postgres:// instead",
            )),
            None => Ok(()),
        }
    }

    /// The cargo feature that opens this URL, when one is needed.
    fn feature(&self) -> Option<&'static str> {
        match self {
            StoreUrl::Memory => None,
            StoreUrl::Sqlite(_) => Some("sqlite"),
            StoreUrl::File(_) => Some("file"),
            StoreUrl::Redis(_) => Some("redis"),
            StoreUrl::Postgres(_) => Some("postgres"),
        }
    }

    /// Fails with [`MemoryError::Unsupported`] when this build lacks the URL's backend.
    fn check_compiled(&self) -> Result<()> {
        let compiled = match self {
            StoreUrl::Memory => true,
            StoreUrl::Sqlite(_) => cfg!(feature = "sqlite"),
            StoreUrl::File(_) => cfg!(feature = "file"),
            StoreUrl::Redis(_) => cfg!(feature = "redis"),
            StoreUrl::Postgres(_) => cfg!(feature = "postgres"),
        };
        match self.feature() {
            Some(feature) if !compiled => Err(not_compiled(self.to_string(), feature)),
            _ => Ok(()),
        }
    }

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
    /// works by meaning as well as words.
    ///
    /// With an embedder, what the stores hold without a vector (written while no model was
    /// on), or with another model's vector, is embedded in the background, in batches
    /// ([`embed_stores_backfilled`](agentmemory_core::reembed::embed_stores_backfilled)):
    /// the opener does not wait for it. Follow it through the
    /// [`Backfill`](agentmemory_core::reembed::Backfill) handle registered in the container
    /// (`container.resolve::<Backfill>(Some(BACKFILL_TOKEN))`, then `progress()` or
    /// `wait()`). Without one, the stores are opened as they are, vectors left alone; each
    /// is also registered as a [`Reembed`](agentmemory_core::reembed::Reembed) store, for
    /// an on-demand [`Backfill::run`](agentmemory_core::reembed::Backfill::run).
    pub async fn open_with_embedder(
        &self,
        embedder: Option<Arc<dyn agentmemory_core::Embedder>>,
    ) -> Result<Container> {
        let container = self.open_plain().await?;
        if let Some(embedder) = embedder {
            agentmemory_core::reembed::embed_stores_backfilled(&container, embedder)?;
        }
        Ok(container)
    }

    async fn open_plain(&self) -> Result<Container> {
        self.check_compiled()?;
        let container = Container::new();
        match self {
            StoreUrl::Memory => {
                let facts = Arc::new(InMemoryUserMemoryStore::new());
                let vectors = Arc::new(InMemoryVectorStore::new());
                container
                    .register::<dyn Reembed>(tokens::USER_MEMORY, facts.clone())
                    .register::<dyn Reembed>(tokens::VECTORS, vectors.clone());
                container
                    .register_user_memory(tokens::USER_MEMORY, facts)
                    .register_conversations(
                        tokens::CONVERSATIONS,
                        Arc::new(InMemoryConversationStore::new()),
                    )
                    .register_vectors(tokens::VECTORS, vectors)
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

/// The URL as given, with a password in it (`redis://:secret@host`, `postgres://me:secret@db`)
/// replaced by `***`, so it can be shown in messages and logs.
impl std::fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreUrl::Memory => f.write_str("memory://"),
            StoreUrl::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            StoreUrl::File(dir) => write!(f, "file://{}", dir.display()),
            StoreUrl::Redis(url) | StoreUrl::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// `url` with the password of its user info, if any, replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The error for a URL whose backend's cargo feature this build lacks.
fn not_compiled(store: String, feature: &str) -> MemoryError {
    MemoryError::unsupported(
        store,
        "be opened by this build",
        format!(
            "it was compiled without the `{feature}` feature; rebuild with \
             `--features {feature}` (the command line: \
             `cargo install agentmemory --locked --features cli,{feature}`)"
        ),
    )
}

/// The token a store URL registers its [`Reembed`] store under.
#[cfg(any(
    feature = "sqlite",
    feature = "postgres",
    feature = "file",
    feature = "redis"
))]
const REEMBED_TOKEN: &str = "reembed";

/// Registers one store that implements all four traits under every default token.
#[cfg(any(
    feature = "sqlite",
    feature = "postgres",
    feature = "file",
    feature = "redis"
))]
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
    let store = Arc::new(crate::SqliteStore::open(path).await?);
    container.register::<dyn Reembed>(REEMBED_TOKEN, store.clone());
    register_all(container, store);
    Ok(())
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_: &Container, path: &std::path::Path) -> Result<()> {
    Err(not_compiled(
        format!("sqlite://{}", path.display()),
        "sqlite",
    ))
}

#[cfg(feature = "file")]
async fn open_file(container: &Container, dir: &std::path::Path) -> Result<()> {
    let store = Arc::new(crate::FileStore::open(dir).await?);
    container.register::<dyn Reembed>(REEMBED_TOKEN, store.clone());
    register_all(container, store);
    Ok(())
}

#[cfg(not(feature = "file"))]
async fn open_file(_: &Container, dir: &std::path::Path) -> Result<()> {
    Err(not_compiled(format!("file://{}", dir.display()), "file"))
}

#[cfg(feature = "redis")]
async fn open_redis(container: &Container, url: &str) -> Result<()> {
    let store = Arc::new(crate::RedisStore::connect(url).await?);
    container.register::<dyn Reembed>(REEMBED_TOKEN, store.clone());
    register_all(container, store);
    Ok(())
}

#[cfg(not(feature = "redis"))]
async fn open_redis(_: &Container, url: &str) -> Result<()> {
    Err(not_compiled(redact(url), "redis"))
}

#[cfg(feature = "postgres")]
async fn open_postgres(container: &Container, url: &str) -> Result<()> {
    let store = Arc::new(crate::PostgresStore::connect(url).await?);
    container.register::<dyn Reembed>(REEMBED_TOKEN, store.clone());
    register_all(container, store);
    Ok(())
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_: &Container, url: &str) -> Result<()> {
    Err(not_compiled(redact(url), "postgres"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        for (url, shown) in [
            ("redis://:secret@h:6379/0", "redis://:***@h:6379/0"),
            (
                "postgres://me:pw@db/app?x=1",
                "postgres://me:***@db/app?x=1",
            ),
            ("postgresql://me@db/app", "postgresql://me@db/app"),
            ("redis://h/0", "redis://h/0"),
            (
                "rediss://:secret@h:6380/0?sslrootcert=/ca.pem",
                "rediss://:***@h:6380/0?sslrootcert=/ca.pem",
            ),
            ("redis://u:p@w@h/0", "redis://u:***@h/0"),
            (
                "redis+cluster://:pw@h1:7000,h2:7001/",
                "redis+cluster://:***@h1:7000,h2:7001/",
            ),
            ("rediss+cluster://h1:7000/", "rediss+cluster://h1:7000/"),
        ] {
            let parsed: StoreUrl = url.parse().expect("parse");
            assert_eq!(parsed.to_string(), shown);
        }
    }

    #[test]
    fn every_url_keeps_every_kind_or_says_which_feature_is_missing() {
        for url in [
            "memory://",
            "sqlite://a.db",
            "file://dir",
            "redis://h/0",
            "redis+cluster://h1:7000,h2:7001/",
            "postgres://db/x",
        ] {
            let parsed: StoreUrl = url.parse().expect("parse");
            assert_eq!(parsed.kinds(), &StoreKind::ALL, "{url}");
            match parsed.require(&StoreKind::ALL) {
                Ok(()) => assert!(parsed
                    .feature()
                    .is_none_or(|_| parsed.check_compiled().is_ok())),
                Err(MemoryError::Unsupported {
                    store,
                    what,
                    reason,
                }) => {
                    assert_eq!(store, url);
                    assert_eq!(what, "be opened by this build");
                    let feature = parsed.feature().expect("a feature");
                    assert!(
                        reason.contains(&format!("--features {feature}")),
                        "{reason}"
                    );
                }
                Err(e) => panic!("{url}: {e}"),
            }
        }
    }

    #[cfg(not(feature = "file"))]
    #[tokio::test]
    async fn a_backend_not_compiled_in_is_unsupported_not_a_fallback() {
        let url: StoreUrl = "file:///tmp/agentmem-never".parse().expect("parse");
        let err = url.open().await.expect_err("no file feature");
        assert!(matches!(err, MemoryError::Unsupported { .. }), "{err}");
        assert!(err.to_string().contains("`file` feature"), "{err}");
    }
}
