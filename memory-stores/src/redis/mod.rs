//! [`RedisStore`]: conversations, key/value entries, user facts and vector documents in Redis.
//!
//! Every key lives under a configurable prefix (default `agentmem:`), and every id that
//! goes into a key (conversation, namespace, entry key, user) is hex-encoded first, so no
//! id can contain `:`, `*`, `{` or anything else that would collide with another id's keys
//! or act as a pattern. Ids are never interpolated into `SCAN`/`KEYS` patterns: listings go
//! through index sets.
//!
//! | data | key | type |
//! | --- | --- | --- |
//! | conversation events | `P{conv:HEX id}:events` | sorted set, score = seq |
//! | conversation seq counter | `P{conv:HEX id}:seq` | string (`INCRBY`) |
//! | conversation message ids | `P{conv:HEX id}:message_ids` | set |
//! | conversation index | `P{index}:conversations` | set of ids |
//! | KV entry | `P{kv:HEX ns}:e:HEX key` | string (JSON), native `PXAT` expiry |
//! | KV namespace index | `P{kv:HEX ns}:index` and `P{index}:kvns` | sets |
//! | user facts | `P{facts:HEX user}:facts` | hash fact id → JSON |
//! | user facts version | `P{facts:HEX user}:version` | string, bumped by every write |
//! | user facts snapshot | `P{facts:HEX user}:snapshot` | hash: `version`, `body` (bytes) |
//! | user facts log | `P{facts:HEX user}:log` | sorted set `version:fact id`, score = version |
//! | vector documents | `P{docs:HEX ns}:docs` | hash document id → JSON |
//! | their version and dimension | `P{docs:HEX ns}:version`, `P{docs:HEX ns}:dim` | strings |
//! | their change log | `P{docs:HEX ns}:log` | list `VERSION\tJSON ids` (last 4,096) |
//! | their ids | `P{docs:HEX ns}:ids` | sorted set, score 0 (`ZRANGEBYLEX`) |
//! | key layout version | `P{index}:layout` | string (`2`) |
//!
//! The `{...}` part is the Redis Cluster hash tag: every key one command, `MULTI` or
//! script touches shares it, so each runs on a cluster (see `layout` for the tags, and
//! for the move of keys written by agentmem versions before the tags, done on connect).
//!
//! Appends run as one Lua script (the seq counter and the events move together, atomically
//! across processes); fact writes read the user's facts and version, reconcile in Rust with
//! [`agentmemory_core::store_support::decide`], and commit with a Lua compare-and-set on the version,
//! retrying when another writer got there first.
//!
//! Connections go through redis-rs's [`ConnectionManager`], which reconnects after the
//! server comes back. Connecting and every response are bounded by timeouts, so an
//! unreachable server gives [`MemoryError::Store`] with `store: "redis"` instead of a hang.
//!
//! A Redis Cluster (`redis+cluster://HOST:PORT,HOST:PORT/`, see [`RedisStore`]) goes
//! through redis-rs's cluster client instead, which sends each command to the primary
//! owning its keys' slot. What spans slots is then done slot by slot: the store-wide
//! index writes that share a pipeline with a conversation's script or a namespace's
//! `MULTI` on a single server are separate requests, in the same order (the orders above
//! are what keeps listings right, not the pipeline); the conversation listing checks each
//! conversation on its own node; and the layout move scans every primary.

use std::time::Duration;

use agentmemory_core::{FactPolicy, MemoryError, Result};
use conn::Conn;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

mod cluster;
mod conn;
mod conversation;
mod fact_snapshot;
mod facts;
mod kv;
mod layout;
mod reembed;
mod vectors;

/// The prefix of every key unless configured otherwise.
pub const DEFAULT_PREFIX: &str = "agentmem:";
/// The store name used in [`MemoryError::Store`].
const STORE: &str = "redis";

/// How a [`RedisStore`] connects.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// Prefix of every key (default `"agentmem:"`); must not contain `{` or `}`.
    pub prefix: String,
    /// Time allowed to open a connection (default 2 s).
    pub connect_timeout: Duration,
    /// How many connections the store opens and spreads its commands over, round robin
    /// (default 1). Each is multiplexed and reconnects on its own; more than one helps when
    /// large replies (a namespace of documents) would hold up small ones.
    pub pool_size: usize,
    /// Time allowed for one response (default 3 s).
    pub response_timeout: Duration,
    /// Policy used to rank and filter facts in searches.
    pub fact_policy: FactPolicy,
    /// **Dangerous**: accept any certificate from a `rediss://` server, unchecked (chain,
    /// expiry and host name), so anyone on the path can read and change what is stored.
    /// Default `false`. For tests against a throwaway server; to trust a private CA, name
    /// its PEM file with `sslrootcert=PATH` in the URL instead. Only this option turns
    /// the checks off: no URL can (`#insecure` is refused).
    pub danger_accept_invalid_certs: bool,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self {
            prefix: DEFAULT_PREFIX.to_owned(),
            connect_timeout: Duration::from_secs(2),
            pool_size: 1,
            response_timeout: Duration::from_secs(3),
            fact_policy: FactPolicy::default(),
            danger_accept_invalid_certs: false,
        }
    }
}

/// Redis implementing [`ConversationStore`](agentmemory_core::ConversationStore),
/// [`KvStore`](agentmemory_core::KvStore), [`UserMemoryStore`](agentmemory_core::UserMemoryStore)
/// and [`VectorStore`](agentmemory_core::VectorStore) (documents kept in Redis, searched
/// through an in-process index that reads only the documents changed since its last
/// search, by this process or another, from a change log kept per namespace).
///
/// Cloning is cheap and shares the connection.
///
/// ```no_run
/// use agentmemory_core::{ConversationEvent, ConversationStore, Message};
/// use agentmemory_stores::RedisStore;
///
/// # async fn demo() -> agentmemory_core::Result<()> {
/// let store = RedisStore::connect("redis://127.0.0.1:6379/").await?;
/// store
///     .append("conv-1", vec![ConversationEvent::Message { message: Message::user("hi") }])
///     .await?;
/// # Ok(()) }
/// ```
///
/// # TLS
///
/// `rediss://HOST:PORT/DB` connects over TLS (rustls, `ring` provider) and always checks the
/// server's certificate chain and host name. Trusted roots: the PEM file named by the
/// URL parameter `sslrootcert=PATH` (the same name as for PostgreSQL; taken off the URL
/// before the redis crate sees it), otherwise the platform's store (`/etc/ssl/certs`, ...).
/// Nothing in a URL turns the checks off: the redis crate's `#insecure` fragment is
/// refused with [`MemoryError::InvalidArgument`]. Only the explicitly named
/// [`RedisOptions::danger_accept_invalid_certs`], set in code, skips them (for tests).
/// A certificate that fails the checks gives [`MemoryError::Store`] whose operation names
/// the URL (password shown as `***`) and whose source is a [`TlsError`](crate::TlsError).
///
/// The redis crate builds its TLS configuration from the process-wide rustls
/// `CryptoProvider`. An application that installed one keeps it; only when none is
/// installed does connecting to a `rediss://` URL install `ring`'s.
///
/// ```text
/// rediss://:secret@cache.internal:6380/0?sslrootcert=/etc/agentmem/ca.pem
/// ```
///
/// # Redis Cluster
///
/// `redis+cluster://HOST:PORT,HOST:PORT,.../` names a cluster by seed nodes (one that
/// answers is enough; the client learns every primary from it), and connects through
/// redis-rs's cluster client: every command goes to the node owning its keys' slot,
/// `MOVED`/`ASK` redirections are followed, and a node that went away is reconnected to
/// when it is back. While a node is down, operations on the keys it owns fail with
/// [`MemoryError::Store`] (after a few quick retries) and the other nodes keep serving.
/// The store-wide indexes (the lists of conversations and KV namespaces) live in one slot
/// (`{index}`), so appends, saves and KV puts also need that slot's node.
/// `rediss+cluster://` connects to every node over TLS, with the same checks and the same
/// `sslrootcert` as `rediss://`. The user info and parameters apply to every node.
///
/// ```text
/// redis+cluster://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000/?pool_size=2
/// rediss+cluster://:secret@cache-1:6380,cache-2:6380/?sslrootcert=/etc/agentmem/ca.pem
/// ```
///
/// A plain `redis://` URL to a cluster node talks to that node only: it works when the
/// node owns every slot, and fails with `MOVED` errors on a cluster of several primaries.
///
/// # Durability
///
/// A write is as durable as the server makes it, which is the server's configuration, not
/// the store's: with `appendonly yes` and `appendfsync always`, Redis answers a write once
/// it is flushed to disk (nothing acknowledged is lost, and each write waits for a disk
/// flush: one per fact upsert, which is one script call); with `appendfsync everysec`
/// (Redis's recommended setting) it flushes once a second, so a crash of the server's
/// machine can lose about the last second of writes; without persistence, a restart loses
/// everything. `everysec` is the counterpart of the SQLite store's `synchronous=NORMAL`
/// and of PostgreSQL's `synchronous_commit=off` (see "Durability" on `PostgresStore`,
/// feature `postgres`).
#[derive(Clone)]
pub struct RedisStore {
    /// The connections, used round robin (at least one).
    conns: std::sync::Arc<[Conn]>,
    next: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    prefix: String,
    timeout: Duration,
    policy: FactPolicy,
    /// Each recently searched user's facts, indexed (see `fact_cache`).
    fact_cache: std::sync::Arc<crate::fact_cache::FactCache>,
    /// Search indexes of recently used vector namespaces, by namespace, bounded by bytes
    /// (shared by clones).
    indexes: std::sync::Arc<crate::lru::Lru<std::sync::Arc<vectors::CachedIndex>>>,
    /// Documents read from Redis (see [`RedisStore::documents_read`]).
    documents_read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to `url` (`redis://host:port/db`, or `rediss://...` over TLS: see the
    /// [TLS](Self#tls); a cluster: `redis+cluster://host:port,host:port/`, see
    /// [Redis Cluster](Self#redis-cluster)) with default [`RedisOptions`].
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with(url, RedisOptions::default()).await
    }

    /// Connects to `url` with `options`. An unreachable server gives
    /// [`MemoryError::Store`] within about `options.connect_timeout`.
    /// Keys written by an agentmem before hash-tagged keys are moved to their new names
    /// on the first connect (a typed error when that cannot be done without overwriting).
    ///
    /// The URL's `pool_size` parameter (`redis://host:6379/0?pool_size=4`) overrides
    /// [`RedisOptions::pool_size`] (on a cluster: how many cluster connections, each with
    /// one connection per node). Besides it, a URL takes the redis crate's `protocol`,
    /// `db`, `user` and `pass` and agentmem's `sslrootcert`; any other parameter is a
    /// [`MemoryError::UrlParameter`] naming it.
    pub async fn connect_with(url: &str, mut options: RedisOptions) -> Result<Self> {
        layout::check_prefix(&options.prefix)?;
        let params = crate::params::UrlParams::take(
            url,
            &["pool_size"],
            &["protocol", "db", "user", "pass", "sslrootcert"],
        )?;
        if let Some(n) = params.positive("pool_size")? {
            options.pool_size = n;
        }
        let url = params.rest.as_str();
        let shown_url = crate::url::redact(url);
        let (url, params) = crate::tls::take_params(url, &["sslrootcert"]);
        let cluster = cluster::is_cluster_url(&url);
        let tls =
            url.starts_with("rediss://") || url.starts_with("valkeys://") || cluster::is_tls(&url);
        if url.split_once('#').is_some_and(|(_, f)| f == "insecure") {
            return Err(MemoryError::invalid(
                "redis URL",
                format!(
                    "`{shown_url}`: a `#insecure` fragment does not turn off certificate \
                     checks; trust the server's CA with sslrootcert=PATH, or (tests only) \
                     set RedisOptions::danger_accept_invalid_certs"
                ),
            ));
        }
        let root_cert = match params.into_iter().next_back() {
            Some(_) if !tls => {
                return Err(MemoryError::invalid(
                    "redis URL",
                    format!(
                        "`{shown_url}` names sslrootcert but is not a rediss:// or \
                         rediss+cluster:// URL"
                    ),
                ))
            }
            Some((_, path)) => Some(crate::tls::read_pem(std::path::Path::new(&path)).map_err(
                |e| MemoryError::store(STORE, format!("set up TLS for {shown_url}"), e),
            )?),
            None => None,
        };
        if tls {
            crate::tls::install_default_provider();
        }
        let conns = if cluster {
            cluster::connect(&url, &shown_url, root_cert, &options).await?
        } else {
            connect_single(&url, &shown_url, root_cert, &options).await?
        };
        let store = Self {
            conns: conns.into(),
            next: Default::default(),
            prefix: options.prefix,
            timeout: options.response_timeout + options.connect_timeout,
            policy: options.fact_policy,
            fact_cache: Default::default(),
            indexes: std::sync::Arc::new(crate::lru::Lru::new(
                crate::CacheBudget::from_env().indexes,
            )),
            documents_read: Default::default(),
        };
        store.migrate_layout().await?;
        Ok(store)
    }

    /// Bounds the store's caches by `budget`: the indexed facts of recently used users
    /// and the search index of recently used document namespaces, least recently used
    /// evicted first (and read again from Redis at their next use). Without it the store
    /// uses [`CacheBudget::from_env`](crate::CacheBudget::from_env) (32 MiB of facts and
    /// 128 MiB of indexes unless `AGENTMEM_FACT_CACHE_BYTES` /
    /// `AGENTMEM_INDEX_CACHE_BYTES` say otherwise). The caches are shared with `self`'s
    /// clones, which get the budget too.
    pub fn with_cache_budget(self, budget: crate::CacheBudget) -> Self {
        self.fact_cache.set_budget(budget.facts);
        self.indexes.set_budget(budget.indexes);
        self
    }

    /// The next connection, round robin.
    fn conn(&self) -> Conn {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.conns[i % self.conns.len()].clone()
    }

    /// How many connections the store spreads its commands over.
    pub fn pool_size(&self) -> usize {
        self.conns.len()
    }

    /// The prefix of every key of this store.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Runs one command or pipeline with the store's overall time bound.
    async fn run<T, F>(&self, operation: &'static str, fut: F) -> Result<T>
    where
        F: std::future::Future<Output = redis::RedisResult<T>>,
    {
        match tokio::time::timeout(self.timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(MemoryError::store(STORE, operation, e)),
            Err(_) => Err(MemoryError::store(STORE, operation, "timed out")),
        }
    }
}

/// `pool_size` connections to the one server of `url` (`redis://` or `rediss://`), each
/// a [`ConnectionManager`] that reconnects after the server comes back.
async fn connect_single(
    url: &str,
    shown_url: &str,
    root_cert: Option<Vec<u8>>,
    options: &RedisOptions,
) -> Result<Vec<Conn>> {
    let tls = url.starts_with("rediss://") || url.starts_with("valkeys://");
    let info = redis::IntoConnectionInfo::into_connection_info(url)
        .map_err(|e| MemoryError::invalid("redis URL", e.to_string()))?;
    let info = if options.danger_accept_invalid_certs {
        accept_invalid_certs(info)
    } else {
        info
    };
    let client = match root_cert {
        Some(pem) => {
            let certs = redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(pem),
            };
            redis::Client::build_with_tls(info, certs)
        }
        None => redis::Client::open(info),
    }
    .map_err(|e| MemoryError::invalid("redis URL", e.to_string()))?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(options.connect_timeout))
        .set_response_timeout(Some(options.response_timeout))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500));
    let bound = options.connect_timeout * 3;
    let mut conns = Vec::with_capacity(options.pool_size.max(1));
    for _ in 0..options.pool_size.max(1) {
        let conn = tokio::time::timeout(
            bound,
            ConnectionManager::new_with_config(client.clone(), config.clone()),
        )
        .await
        .map_err(|_| MemoryError::store(STORE, "connect", "timed out"))?
        .map_err(|e| connect_error(e, tls, shown_url))?;
        conns.push(Conn::Single(conn));
    }
    Ok(conns)
}

/// The error of a failed connect: a [`TlsError`](crate::TlsError) source when TLS failed.
fn connect_error(e: redis::RedisError, tls: bool, shown_url: &str) -> MemoryError {
    match crate::tls::classify(&e).filter(|_| tls) {
        Some(tls) => MemoryError::store(STORE, format!("connect over TLS to {shown_url}"), tls),
        None => MemoryError::store(STORE, "connect", e),
    }
}

/// `info` with certificate checks off, for a TLS address (others are returned as they are).
fn accept_invalid_certs(info: redis::ConnectionInfo) -> redis::ConnectionInfo {
    match info.addr().clone() {
        redis::ConnectionAddr::TcpTls {
            host,
            port,
            tls_params,
            ..
        } => {
            tracing::warn!(
                host = %host,
                port,
                "TLS certificate checks are off for this Redis connection \
                 (RedisOptions::danger_accept_invalid_certs)"
            );
            info.set_addr(redis::ConnectionAddr::TcpTls {
                host,
                port,
                insecure: true,
                tls_params,
            })
        }
        _ => info,
    }
}

/// Lowercase hex of `id`'s UTF-8 bytes: only `[0-9a-f]`, so never a separator or pattern.
pub(crate) fn hex(id: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(id.len() * 2);
    for b in id.as_bytes() {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Decodes a stored JSON body.
fn decode<T: serde::de::DeserializeOwned>(text: &str, what: impl FnOnce() -> String) -> Result<T> {
    serde_json::from_str(text).map_err(|e| MemoryError::corrupt(what(), e))
}

/// Encodes a JSON body.
fn encode<T: serde::Serialize>(value: &T, what: &'static str) -> Result<String> {
    serde_json::to_string(value).map_err(|e| MemoryError::invalid(what, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::hex;

    #[test]
    fn hex_ids_never_contain_separators_or_patterns() {
        assert_eq!(hex("a:*"), "613a2a");
        assert_eq!(hex(""), "");
        for id in ["*", ":", "%", "'\"", "{x}", "a b", "ü"] {
            assert!(hex(id).chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        }
        assert_ne!(hex("a:b"), hex("a") + ":" + &hex("b"));
    }
}
