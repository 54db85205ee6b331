//! [`PostgresStore`]: every store trait in PostgreSQL, in a schema of its own.
//!
//! - Tables live in one schema (default `agentmem`), created and upgraded by versioned
//!   migrations recorded in `schema_version`; a schema written by a newer agentmem is
//!   refused with [`MemoryError::UnsupportedVersion`].
//! - Every value goes through query parameters; the only text spliced into SQL is the
//!   schema name, which must be a plain identifier (`[a-z_][a-z0-9_]*`) and is quoted.
//! - Connections come from a `deadpool-postgres` pool; connecting and every operation are
//!   bounded by timeouts, so an unreachable or vanished server gives
//!   [`MemoryError::Store`] with `store: "postgres"`, never a hang.

use std::str::FromStr;
use std::time::Duration;

use agentmemory_core::{FactPolicy, MemoryError, Result};
use deadpool_postgres::{
    Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime,
};

mod conversation;
mod durability;
mod fact_snapshot;
mod facts;
mod id_order;
mod kept_upsert;
mod kv;
mod options;
mod reembed;
mod schema;
mod tls;
mod vector;

/// The store name used in [`MemoryError::Store`].
const STORE: &str = "postgres";

pub use durability::{SynchronousCommit, UnknownSynchronousCommit};

/// How a [`PostgresStore`] connects and what it uses.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// The schema holding the tables (default `agentmem`); a plain lowercase identifier.
    pub schema: String,
    /// Use the `pgvector` extension for dense search when the server has it (default
    /// `true`). Without it (or with `false`), embeddings are ranked exactly in the client.
    pub use_pgvector: bool,
    /// Largest number of pooled connections (default 16).
    pub max_connections: usize,
    /// Connections opened when the store connects and kept in the pool (default 0: opened
    /// on first use). At most `max_connections`.
    pub min_connections: usize,
    /// Time allowed to open a connection (default 3 s).
    pub connect_timeout: Duration,
    /// Time allowed for one operation, waiting for a connection included (default 10 s).
    pub operation_timeout: Duration,
    /// Policy used to rank and filter facts in searches.
    pub fact_policy: FactPolicy,
    /// When a commit is acknowledged: the `synchronous_commit` of every session the store
    /// opens (see [`SynchronousCommit`] for the trade-off). Default `None`: the server's
    /// own setting (`on` unless changed there), every acknowledged write flushed to disk.
    pub synchronous_commit: Option<SynchronousCommit>,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            schema: "agentmem".to_owned(),
            use_pgvector: true,
            max_connections: 16,
            min_connections: 0,
            connect_timeout: Duration::from_secs(3),
            operation_timeout: Duration::from_secs(10),
            fact_policy: FactPolicy::default(),
            synchronous_commit: None,
        }
    }
}

/// PostgreSQL implementing [`ConversationStore`](agentmemory_core::ConversationStore),
/// [`KvStore`](agentmemory_core::KvStore), [`VectorStore`](agentmemory_core::VectorStore) and
/// [`UserMemoryStore`](agentmemory_core::UserMemoryStore).
///
/// Cloning is cheap and shares the pool.
///
/// ```no_run
/// use agentmemory_core::{KvStore, MemoryEntry, MemoryScope};
/// use agentmemory_stores::PostgresStore;
///
/// # async fn demo() -> agentmemory_core::Result<()> {
/// let store = PostgresStore::connect("postgres://me@127.0.0.1:5432/app").await?;
/// store
///     .put("prefs", MemoryEntry::new(MemoryScope::Working, "theme", "dark".into()))
///     .await?;
/// # Ok(()) }
/// ```
///
/// # TLS
///
/// The URL's libpq-style `sslmode` decides (rustls, `ring` provider):
///
/// | `sslmode` | TLS | certificate checks |
/// | --- | --- | --- |
/// | `disable` | never | none |
/// | `prefer` (the default, as in libpq) | when the server offers it, else plain | as `require` |
/// | `require` | always; a server without TLS is refused | **none** without `sslrootcert` (encrypted, not authenticated, as libpq); with it, as `verify-ca` |
/// | `verify-ca` | always | the chain must lead to a trusted root; the host name is not checked |
/// | `verify-full` | always | the chain and the host name (DNS name or IP address in the URL) |
///
/// Trusted roots come from `sslrootcert=PATH` (a PEM file) or, without it or with
/// `sslrootcert=system`, from the platform's store (`/etc/ssl/certs`, ...); libpq's
/// `~/.postgresql/root.crt` is not read. Both parameters are taken off the URL before
/// tokio-postgres parses the rest. A `key=value` connection string (not a URL) gets only
/// tokio-postgres's `disable`/`prefer`/`require`, unverified.
///
/// A server that refuses TLS under `require`/`verify-*`, or a certificate that fails the
/// checks, gives [`MemoryError::Store`] whose operation names the URL (password shown as
/// `***`) and whose source is a [`TlsError`](crate::TlsError) saying why.
///
/// ```text
/// postgres://me@db.internal:5432/app?sslmode=verify-full&sslrootcert=/etc/agentmem/ca.pem
/// ```
///
/// # URL parameters
///
/// Besides libpq's parameters that tokio-postgres reads (`sslmode`, `application_name`,
/// `options`, `keepalives`, ...), a `postgres://` URL takes:
///
/// | parameter | meaning | default |
/// | --- | --- | --- |
/// | `schema` | the schema holding the tables, created when missing (a plain lowercase identifier) | `agentmem` |
/// | `pool_size` | the largest number of pooled connections | 16 |
/// | `pool_min_size` | connections opened at connect and kept (at most `pool_size`) | 0 |
/// | `connect_timeout` | seconds allowed to open a connection (`0.5` allowed) | 3 |
/// | `synchronous_commit` | `on`, `off`, `local`, `remote_write` or `remote_apply`: when a commit is acknowledged, set for every session (see [`SynchronousCommit`]) | the server's (`on`) |
///
/// Any other parameter (or a value these do not take) is a [`MemoryError::UrlParameter`]
/// naming it, before any connection.
///
/// ```text
/// postgres://me@db:5432/app?schema=tenant_a&pool_size=32&pool_min_size=2&connect_timeout=5
/// ```
///
/// # Durability
///
/// By default every write is acknowledged once PostgreSQL has flushed it to disk
/// (`synchronous_commit = on`, the server's default): nothing acknowledged is lost in a
/// crash, and each write waits for one disk flush. `synchronous_commit=off` in the URL
/// (or [`PostgresOptions::synchronous_commit`]) acknowledges before the flush, which the
/// server does within about 0.6 s: a crash of the server can then lose the writes of that
/// last moment (whole transactions, never a part of one; the database is never
/// corrupted). That is the durability [`SqliteStore`](crate::SqliteStore) runs at
/// (`synchronous=NORMAL` in WAL mode), so it is also the setting to compare the two at.
///
/// ```text
/// postgres://me@db:5432/app?synchronous_commit=off
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    /// The quoted schema name, e.g. `"agentmem"`.
    schema: String,
    pgvector: bool,
    timeout: Duration,
    policy: FactPolicy,
    /// Each recently searched user's facts, indexed (see `fact_cache`).
    fact_cache: std::sync::Arc<crate::fact_cache::FactCache>,
    /// The URL with its password hidden, for connection errors.
    shown_url: std::sync::Arc<str>,
    /// The `sslmode` in force.
    ssl_mode: tls::SslMode,
    /// The HNSW indexes of dense search (see `vector`).
    dense: std::sync::Arc<vector::DenseIndexes>,
    /// Document rows read from the server (see [`PostgresStore::documents_read`]).
    documents_read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .field("pgvector", &self.pgvector)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// The schema version this build creates and reads.
    pub const SCHEMA_VERSION: u32 = schema::SCHEMA_VERSION;

    /// Connects to `url` (`postgres://user@host:port/db`, optionally with `?sslmode=...` and
    /// `sslrootcert=PATH`: see the [TLS](Self#tls)) with default [`PostgresOptions`]
    /// and brings the schema up to date.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// Connects to `url` with `options` and brings the schema up to date.
    ///
    /// The URL's [parameters](Self#url-parameters) `schema`, `pool_size`, `pool_min_size`,
    /// `connect_timeout` and `synchronous_commit` override the matching fields of
    /// `options`.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self> {
        let (url, options) = options::from_url(url, options)?;
        let url = url.as_str();
        let schema = schema::quoted(&options.schema)?;
        let shown_url: std::sync::Arc<str> = crate::url::redact(url).into();
        let (driver_url, settings) = tls::TlsSettings::from_url(url)
            .map_err(|reason| MemoryError::invalid("postgres URL", reason))?;
        let mut config = tokio_postgres::Config::from_str(&driver_url)
            .map_err(|e| MemoryError::invalid("postgres URL", e.to_string()))?;
        config.connect_timeout(options.connect_timeout);
        if let Some(level) = options.synchronous_commit {
            level.apply(&mut config);
        }
        let settings = settings.unwrap_or_else(|| tls::TlsSettings {
            mode: match config.get_ssl_mode() {
                tokio_postgres::config::SslMode::Disable => tls::SslMode::Disable,
                tokio_postgres::config::SslMode::Require => tls::SslMode::Require,
                _ => tls::SslMode::Prefer,
            },
            root_cert: None,
        });
        config.ssl_mode(settings.driver_mode());
        let tls_config = settings.client_config().map_err(|e| {
            MemoryError::store(
                STORE,
                format!(
                    "set up TLS for {shown_url} (sslmode={})",
                    settings.mode.name()
                ),
                e,
            )
        })?;
        let manager = Manager::from_config(
            config,
            tls::RustlsConnect(std::sync::Arc::new(tls_config)),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.operation_timeout))
            .create_timeout(Some(options.connect_timeout))
            .recycle_timeout(Some(options.connect_timeout))
            .build()
            .map_err(|e| MemoryError::store(STORE, "build the connection pool", e))?;
        let mut store = Self {
            pool,
            schema,
            pgvector: false,
            timeout: options.operation_timeout,
            policy: options.fact_policy,
            fact_cache: Default::default(),
            shown_url,
            ssl_mode: settings.mode,
            dense: Default::default(),
            documents_read: Default::default(),
        };
        store.open_min_connections(options.min_connections).await?;
        store
            .bounded("migrate the schema", async {
                let mut client = store.client("migrate the schema").await?;
                schema::migrate(&mut client, &store.schema).await
            })
            .await?;
        // Unbounded by the operation timeout, like the index builds below: a database
        // written by an earlier version may hold many documents to analyse, once.
        let filled = {
            let client = store.client("migrate the schema").await?;
            schema::backfill_terms(&client, &store.schema).await?
        };
        if filled > 0 {
            tracing::info!(schema = %store.schema, documents = filled, "indexed documents written by an earlier version through the shared text analysis");
        }
        {
            let mut client = store.client("create the document id index").await?;
            id_order::ensure(&mut client, &store.schema).await?;
        }
        store.pgvector = if options.use_pgvector {
            let client = store.client("detect pgvector").await?;
            schema::enable_pgvector(&client).await
        } else {
            false
        };
        if store.pgvector {
            store.ensure_dense_indexes().await?;
        } else {
            tracing::warn!(
                schema = %store.schema,
                "postgres store without pgvector: dense search ranks every embedding of a namespace in the client"
            );
        }
        Ok(store)
    }

    /// Opens `n` connections at once and returns them to the pool, which keeps them (a
    /// `deadpool` pool never closes an idle connection).
    async fn open_min_connections(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let mut opened = Vec::with_capacity(n);
        for _ in 0..n {
            opened.push(
                self.bounded("open the pool's minimum connections", async {
                    self.client("open the pool's minimum connections").await
                })
                .await?,
            );
        }
        drop(opened);
        Ok(())
    }

    /// Bounds the store's cache of indexed facts (recently used users, least recently
    /// used evicted first and read again from the database at their next use) by
    /// `budget.facts` bytes. PostgreSQL searches documents in the database and keeps no
    /// index per namespace, so `budget.indexes` is unused here. Without it the store uses
    /// [`CacheBudget::from_env`](crate::CacheBudget::from_env) (32 MiB of facts unless
    /// `AGENTMEM_FACT_CACHE_BYTES` says otherwise). The cache is shared with `self`'s
    /// clones, which get the budget too.
    pub fn with_cache_budget(self, budget: crate::CacheBudget) -> Self {
        self.fact_cache.set_budget(budget.facts);
        self
    }

    /// How many connections the pool holds now (in use or idle), and its largest size.
    pub fn pool_status(&self) -> (usize, usize) {
        let status = self.pool.status();
        (status.size, status.max_size)
    }

    /// The schema the tables live in, unquoted.
    pub fn schema(&self) -> &str {
        self.schema.trim_matches('"')
    }

    /// The `synchronous_commit` this store's sessions commit with, as the server reports
    /// it (`SHOW synchronous_commit`): what [`PostgresOptions::synchronous_commit`] set,
    /// or the server's own setting.
    pub async fn synchronous_commit(&self) -> Result<String> {
        let op = "read synchronous_commit";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let row = client
                .query_one("SHOW synchronous_commit", &[])
                .await
                .map_err(on(op))?;
            row.try_get(0).map_err(on(op))
        })
        .await
    }

    /// Whether dense search runs in the server through `pgvector`.
    pub fn uses_pgvector(&self) -> bool {
        self.pgvector
    }

    /// `schema.table`, quoted.
    fn table(&self, name: &str) -> String {
        format!("{}.{name}", self.schema)
    }

    /// A pooled connection.
    async fn client(&self, operation: &'static str) -> Result<Object> {
        self.pool.get().await.map_err(|e| match e {
            PoolError::Backend(e) => match tls::tls_failure(&e, self.ssl_mode) {
                Some(tls) => MemoryError::store(
                    STORE,
                    format!(
                        "connect over TLS to {} (sslmode={})",
                        self.shown_url,
                        self.ssl_mode.name()
                    ),
                    tls,
                ),
                None => MemoryError::store(STORE, operation, e),
            },
            e => MemoryError::store(STORE, operation, e),
        })
    }

    /// Runs `fut` within the operation timeout.
    async fn bounded<T>(
        &self,
        operation: &'static str,
        fut: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        tokio::time::timeout(self.timeout, fut)
            .await
            .map_err(|_| MemoryError::store(STORE, operation, "timed out"))?
    }
}

/// A closure mapping driver errors of `operation` to [`MemoryError::Store`].
fn on(operation: &'static str) -> impl Fn(tokio_postgres::Error) -> MemoryError {
    move |e| MemoryError::store(STORE, operation, e)
}

/// Decodes a stored JSON body.
fn decode<T: serde::de::DeserializeOwned>(text: &str, what: impl FnOnce() -> String) -> Result<T> {
    serde_json::from_str(text).map_err(|e| MemoryError::corrupt(what(), e))
}

/// Encodes a JSON body.
fn encode<T: serde::Serialize>(value: &T, what: &'static str) -> Result<String> {
    serde_json::to_string(value).map_err(|e| MemoryError::invalid(what, e.to_string()))
}

/// Microseconds since the epoch, the unit of every timestamp column.
fn micros(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_micros()
}

fn from_micros(us: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_micros(us).unwrap_or_default()
}
