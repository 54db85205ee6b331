//! [`SqliteStore`]: every store trait in one SQLite file.
//!
//! The file is opened in WAL mode with `synchronous=NORMAL` (a committed transaction
//! survives a process crash; a power loss may drop the last few), a busy timeout so
//! several processes can share it, and foreign keys on. One writer connection carries
//! every write; a small pool of reader connections serves reads in parallel (WAL lets
//! readers run beside the writer). All SQLite calls run on tokio's blocking pool.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::CacheBudget;
use agentmemory_core::{FactPolicy, MemoryError, Result};
use rusqlite::{Connection, OpenFlags};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

mod body;
#[cfg(test)]
mod budget_tests;
mod busy;
mod conversation;
mod fact_snapshot;
mod facts;
mod kv;
mod mirror;
mod reembed;
mod schema;
mod vector;

/// How long a connection waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Reader connections opened next to the writer for a file-backed store.
const DEFAULT_READERS: usize = 4;

/// One SQLite database implementing [`ConversationStore`](agentmemory_core::ConversationStore),
/// [`KvStore`](agentmemory_core::KvStore), [`VectorStore`](agentmemory_core::VectorStore) and
/// [`UserMemoryStore`](agentmemory_core::UserMemoryStore).
///
/// Cloning is cheap and shares the connections.
///
/// ```
/// use agentmemory_core::{ConversationEvent, ConversationStore, Message};
/// use agentmemory_stores::SqliteStore;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let store = SqliteStore::open_in_memory().await?;
/// let seq = store
///     .append("conv-1", vec![ConversationEvent::Message { message: Message::user("hi") }])
///     .await?;
/// assert_eq!(seq, 1);
/// assert_eq!(store.load("conv-1").await?.len(), 1);
/// # Ok::<(), agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
    policy: FactPolicy,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("location", &self.inner.label)
            .finish_non_exhaustive()
    }
}

struct Inner {
    /// `sqlite <path>` or `sqlite :memory:`, used in errors.
    label: String,
    writer: Arc<Mutex<Connection>>,
    /// `None` for an in-memory database, whose only connection is the writer.
    readers: Option<ReaderPool>,
    /// The in-memory search index of each document namespace used so far.
    mirrors: mirror::Mirrors,
    /// Each recently searched user's facts, indexed.
    fact_cache: crate::fact_cache::FactCache,
}

struct ReaderPool {
    idle: parking_lot::Mutex<Vec<Connection>>,
    permits: Arc<Semaphore>,
}

/// A reader connection borrowed from the pool; returned to it on drop.
struct Lease {
    conn: Option<Connection>,
    inner: Arc<Inner>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let (Some(conn), Some(pool)) = (self.conn.take(), &self.inner.readers) {
            pool.idle.lock().push(conn);
        }
    }
}

impl SqliteStore {
    /// The schema version this build creates and reads (kept in `PRAGMA user_version`).
    pub const SCHEMA_VERSION: u32 = schema::SCHEMA_VERSION;

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    /// Missing parent directories of `path` are created.
    ///
    /// A file that is not a SQLite database gives [`MemoryError::Corrupt`] naming the file
    /// (the file is left untouched); a database written by a newer version of agentmem
    /// gives [`MemoryError::UnsupportedVersion`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, FactPolicy::default()).await
    }

    /// [`open`](Self::open) with a custom [`FactPolicy`] for fact search.
    pub async fn open_with(path: impl AsRef<Path>, policy: FactPolicy) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let label = format!("sqlite {}", path.display());
        let opened = {
            let label = label.clone();
            tokio::task::spawn_blocking(move || open_file(&path, &label))
        }
        .await
        .map_err(|e| MemoryError::store(label.clone(), "open the database", e))??;
        let (writer, readers) = opened;
        Ok(Self::from_parts(label, writer, Some(readers), policy))
    }

    /// A private in-memory database (for tests); it disappears with the store.
    pub async fn open_in_memory() -> Result<Self> {
        let label = "sqlite :memory:".to_owned();
        let conn = Connection::open_in_memory()
            .map_err(|e| MemoryError::store(label.clone(), "open the database", e))?;
        configure(&conn, &label, false)?;
        let mut conn = conn;
        schema::migrate(&mut conn, &label)?;
        Ok(Self::from_parts(label, conn, None, FactPolicy::default()))
    }

    /// Replaces the policy used to rank and filter facts in searches.
    /// The connections stay shared with `self`'s clones.
    pub fn with_policy(mut self, policy: FactPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Bounds the store's caches by `budget`: the indexed facts of recently used users
    /// and the in-memory search index of recently used document namespaces, least
    /// recently used evicted first (and read again from the database at their next use).
    /// Without it the store uses [`CacheBudget::from_env`] (32 MiB of facts and 128 MiB
    /// of indexes unless `AGENTMEM_FACT_CACHE_BYTES` / `AGENTMEM_INDEX_CACHE_BYTES` say
    /// otherwise). The caches are shared with `self`'s clones, which get the budget too.
    pub fn with_cache_budget(self, budget: CacheBudget) -> Self {
        self.inner.fact_cache.set_budget(budget.facts);
        self.inner.mirrors.set_budget(budget.indexes);
        self
    }

    fn from_parts(
        label: String,
        writer: Connection,
        readers: Option<Vec<Connection>>,
        policy: FactPolicy,
    ) -> Self {
        let readers = readers.filter(|r| !r.is_empty()).map(|conns| ReaderPool {
            permits: Arc::new(Semaphore::new(conns.len())),
            idle: parking_lot::Mutex::new(conns),
        });
        Self {
            inner: Arc::new(Inner {
                label,
                writer: Arc::new(Mutex::new(writer)),
                readers,
                mirrors: mirror::Mirrors::default(),
                fact_cache: crate::fact_cache::FactCache::default(),
            }),
            policy,
        }
    }

    /// Where the store lives, as used in error messages (`sqlite /path/to/file.db`).
    pub fn location(&self) -> &str {
        &self.inner.label
    }

    pub(crate) fn label(&self) -> &str {
        &self.inner.label
    }

    pub(crate) fn mirrors(&self) -> &mirror::Mirrors {
        &self.inner.mirrors
    }

    pub(crate) fn policy(&self) -> FactPolicy {
        self.policy
    }

    /// Runs `f` on the writer connection on the blocking pool.
    pub(crate) async fn write<T, F>(&self, operation: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &str) -> Result<T> + Send + 'static,
    {
        let guard = Arc::clone(&self.inner.writer).lock_owned().await;
        let label = self.inner.label.clone();
        let mut guard = guard;
        tokio::task::spawn_blocking(move || f(&mut guard, &label))
            .await
            .map_err(|e| MemoryError::store(self.inner.label.clone(), operation, e))?
    }

    /// Runs a short write `f` on the writer connection in place, on the calling task's
    /// thread, when the database's write lock is free; when another connection holds it,
    /// on the blocking pool, where it waits for the lock (up to the busy timeout).
    ///
    /// For writes of a few statements (a conversation append: tens of microseconds, less
    /// than the hop to a blocking thread and back, which on a loaded machine can cost more
    /// than the write itself). In place, SQLite's busy handler declines at once instead of
    /// sleeping, so the async worker never waits for another process's lock: the attempt
    /// fails before `f` changed anything (an `IMMEDIATE` transaction takes the lock
    /// first), and `f` runs again on the blocking pool. `f` must therefore be safe to run
    /// again after such an attempt, which a write that starts with `BEGIN IMMEDIATE` is.
    pub(crate) async fn write_in_place<T, F>(&self, operation: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&mut Connection, &str) -> Result<T> + Send + 'static,
    {
        let mut guard = Arc::clone(&self.inner.writer).lock_owned().await;
        let label = &self.inner.label;
        match busy::without_waiting(&mut guard, label, |conn| f(conn, label))? {
            Some(result) => result,
            None => {
                let label = label.clone();
                tokio::task::spawn_blocking(move || f(&mut guard, &label))
                    .await
                    .map_err(|e| MemoryError::store(self.inner.label.clone(), operation, e))?
            }
        }
    }

    /// Runs `f` on a reader connection (the writer for in-memory stores) on the blocking pool.
    pub(crate) async fn read<T, F>(&self, operation: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &str) -> Result<T> + Send + 'static,
    {
        let Some(pool) = &self.inner.readers else {
            return self.write(operation, f).await;
        };
        let permit = Arc::clone(&pool.permits)
            .acquire_owned()
            .await
            .map_err(|e| MemoryError::store(self.inner.label.clone(), operation, e))?;
        let conn = pool.idle.lock().pop();
        let Some(conn) = conn else {
            return Err(MemoryError::store(
                self.inner.label.clone(),
                operation,
                "no idle reader connection",
            ));
        };
        let mut lease = Lease {
            conn: Some(conn),
            inner: Arc::clone(&self.inner),
            _permit: permit,
        };
        let label = self.inner.label.clone();
        tokio::task::spawn_blocking(move || match lease.conn.as_mut() {
            Some(conn) => f(conn, &label),
            None => Err(MemoryError::store(
                label,
                operation,
                "reader lease is empty",
            )),
        })
        .await
        .map_err(|e| MemoryError::store(self.inner.label.clone(), operation, e))?
    }
}

/// Opens the writer, checks the file, migrates, then opens the readers.
fn open_file(path: &Path, label: &str) -> Result<(Connection, Vec<Connection>)> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| MemoryError::store(label, "create the database's directory", e))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut writer = Connection::open_with_flags(path, flags)
        .map_err(|e| sql_error(label, "open the database", e))?;
    configure(&writer, label, true)?;
    schema::migrate(&mut writer, label)?;
    let mut readers = Vec::with_capacity(DEFAULT_READERS);
    for _ in 0..DEFAULT_READERS {
        let reader = Connection::open_with_flags(path, flags)
            .map_err(|e| sql_error(label, "open a reader connection", e))?;
        configure(&reader, label, false)?;
        readers.push(reader);
    }
    Ok((writer, readers))
}

/// Checks that the file is a database (before anything could write to it), then sets the
/// pragmas every connection needs.
fn configure(conn: &Connection, label: &str, set_wal: bool) -> Result<()> {
    let op = "configure the connection";
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| sql_error(label, op, e))?;
    // Reading the schema fails with SQLITE_NOTADB on a foreign file, before any write.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(|e| sql_error(label, "read the schema", e))?;
    if set_wal {
        let mode = wal_mode(conn).map_err(|e| sql_error(label, op, e))?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            tracing::warn!(store = label, mode, "SQLite refused WAL journal mode");
        }
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        .map_err(|e| sql_error(label, op, e))?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// Puts the database in WAL mode (a setting kept in the file) and returns the mode it is
/// in. Switching needs the file to itself, and SQLite answers `SQLITE_BUSY` at once,
/// without its busy handler, while another connection opens the same new file: that is
/// retried, a few milliseconds apart, for up to [`BUSY_TIMEOUT`]. A file already in WAL
/// mode is not switched again.
fn wal_mode(conn: &Connection) -> rusqlite::Result<String> {
    let current: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if current.eq_ignore_ascii_case("wal") {
        return Ok(current);
    }
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            result => return result,
        }
    }
}

/// Maps a SQLite error to a [`MemoryError`]: a damaged or foreign file becomes
/// [`MemoryError::Corrupt`] naming the store, anything else [`MemoryError::Store`].
pub(crate) fn sql_error(label: &str, operation: &str, err: rusqlite::Error) -> MemoryError {
    use rusqlite::ErrorCode;
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => {
            MemoryError::corrupt(format!("{label} (while trying to {operation})"), err)
        }
        _ => MemoryError::store(label, operation, err),
    }
}

/// A closure mapping SQLite errors of `operation` on the store `label`.
pub(crate) fn on<'a>(
    label: &'a str,
    operation: &'static str,
) -> impl Fn(rusqlite::Error) -> MemoryError + 'a {
    move |e| sql_error(label, operation, e)
}

/// Microseconds since the epoch, the unit of every timestamp column.
pub(crate) fn micros(t: chrono::DateTime<chrono::Utc>) -> i64 {
    t.timestamp_micros()
}

/// The inverse of [`micros`].
pub(crate) fn from_micros(us: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_micros(us).unwrap_or_default()
}
