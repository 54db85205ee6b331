//! [`FileStore`]: KV namespaces, conversations, user facts and vector documents as JSON
//! files in a directory.
//!
//! Layout: `<dir>/kv/<namespace>.json`, `<dir>/conversations/<id>.json`,
//! `<dir>/facts/<user>.json` (with `<dir>/facts/<user>.log`) and
//! `<dir>/vectors/<namespace>.json`, names derived from ids by a safe, injective encoding
//! (see `encode`). Each `.json` file is a versioned JSON document rewritten atomically
//! (temporary file, `fsync`, rename, directory `fsync`), so a crash never leaves a partial
//! file. Writers to one file within a process are serialised by a per-file lock, held by
//! the blocking write itself (a cancelled call cannot release it early); the store is
//! meant for one process per directory. A write of KV entries, conversations or documents
//! rewrites the whole file, so those suit small to medium data (a conversation of a few
//! thousand events); use [`SqliteStore`](crate::SqliteStore) beyond that. A fact upsert
//! appends one `fsync`ed line to the user's log instead, against facts kept in memory
//! (see `fact_state`), so its cost does not grow with the user's facts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentmemory_core::{FactPolicy, MemoryError, Result};
use dashmap::DashMap;
use tokio::sync::{Mutex, OwnedMutexGuard};

mod atomic;
mod conversation;
mod encode;
mod fact_log;
mod fact_state;
mod facts;
mod kv;
mod reembed;
mod vectors;

const KV_DIR: &str = "kv";
const CONVERSATIONS_DIR: &str = "conversations";
const FACTS_DIR: &str = "facts";
const VECTORS_DIR: &str = "vectors";

/// A directory of JSON files implementing all four store traits:
/// [`KvStore`](agentmemory_core::KvStore),
/// [`ConversationStore`](agentmemory_core::ConversationStore),
/// [`UserMemoryStore`](agentmemory_core::UserMemoryStore) (one file per user, history
/// included) and [`VectorStore`](agentmemory_core::VectorStore) (one file per namespace,
/// searched through an in-memory index that this store's writes update in place, rebuilt
/// when another process changes the file). Cloning is cheap and
/// shares the locks.
///
/// ```
/// use agentmemory_core::{KvStore, MemoryEntry, MemoryScope};
/// use agentmemory_stores::FileStore;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("agentmem-doc-{}", std::process::id()));
/// let store = FileStore::open(&dir).await?;
/// store.put("prefs", MemoryEntry::new(MemoryScope::LongTerm, "theme", "dark".into())).await?;
/// assert_eq!(store.get("prefs", "theme").await?.map(|e| e.content), Some("dark".into()));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct FileStore {
    inner: Arc<Inner>,
    policy: FactPolicy,
    /// Bytes a user's fact log may hold before it is folded into their facts file,
    /// unless the file is larger.
    fact_log_limit: u64,
}

/// The default of [`FileStore::with_fact_log_limit`]: 256 KiB.
pub const DEFAULT_FACT_LOG_LIMIT: u64 = 256 * 1024;

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    locks: DashMap<PathBuf, Arc<Mutex<()>>>,
    /// Search indexes of recently used vector namespaces, by namespace, bounded by bytes.
    indexes: crate::lru::Lru<Arc<vectors::IndexSlot>>,
    /// Documents read from namespace files (see [`FileStore::documents_read`]).
    documents_read: std::sync::atomic::AtomicU64,
    /// Each recently used user's current facts, indexed.
    kept: fact_state::KeptFacts,
}

/// A held per-file lock; on release, the lock's map entry is dropped when nobody else
/// holds or waits for it, so the map does not grow with every file ever touched.
struct FileLock {
    guard: Option<OwnedMutexGuard<()>>,
    inner: Arc<Inner>,
    path: PathBuf,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        drop(self.guard.take());
        // Cloning an entry's Arc needs its shard, which `remove_if` holds: a count of 1
        // here means no other task holds or awaits this lock.
        self.inner
            .locks
            .remove_if(&self.path, |_, lock| Arc::strong_count(lock) == 1);
    }
}

impl FileStore {
    /// Opens (creating if needed) the store in directory `dir`.
    pub async fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let root = dir.as_ref().to_path_buf();
        let make = root.clone();
        tokio::task::spawn_blocking(move || {
            for sub in [KV_DIR, CONVERSATIONS_DIR, FACTS_DIR, VECTORS_DIR] {
                let path = make.join(sub);
                std::fs::create_dir_all(&path).map_err(|e| {
                    MemoryError::store(
                        format!("file {}", path.display()),
                        "create the directory",
                        e,
                    )
                })?;
            }
            atomic::sync_dir(&make)
        })
        .await
        .map_err(|e| MemoryError::store(format!("file {}", root.display()), "open", e))??;
        Ok(Self {
            inner: Arc::new(Inner {
                root,
                locks: DashMap::new(),
                indexes: crate::lru::Lru::new(crate::CacheBudget::from_env().indexes),
                documents_read: Default::default(),
                kept: Default::default(),
            }),
            policy: FactPolicy::default(),
            fact_log_limit: DEFAULT_FACT_LOG_LIMIT,
        })
    }

    /// Sets how many bytes of upserts a user's fact log (`facts/<user>.log`) may hold
    /// before the next upsert folds it into the user's facts file (rewriting the file
    /// with every fact); a log is folded only once it is also larger than the file, so
    /// the rewrites cost at most about one byte written per byte appended. Default
    /// [`DEFAULT_FACT_LOG_LIMIT`]. A smaller limit keeps the files more compact and
    /// reopening faster, a larger one rewrites less often.
    pub fn with_fact_log_limit(mut self, bytes: u64) -> Self {
        self.fact_log_limit = bytes;
        self
    }

    /// Bounds the store's caches by `budget`: the kept facts of recently used users and
    /// the search index of recently used document namespaces, least recently used
    /// evicted first (and read again from their files at their next use). Without it the
    /// store uses [`CacheBudget::from_env`](crate::CacheBudget::from_env) (32 MiB of
    /// facts and 128 MiB of indexes unless `AGENTMEM_FACT_CACHE_BYTES` /
    /// `AGENTMEM_INDEX_CACHE_BYTES` say otherwise). The caches are shared with `self`'s
    /// clones, which get the budget too.
    pub fn with_cache_budget(self, budget: crate::CacheBudget) -> Self {
        self.inner.kept.set_budget(budget.facts);
        self.inner.indexes.set_budget(budget.indexes);
        self
    }

    /// Sets how fact confidence decays and what is too weak to return (the default
    /// otherwise).
    pub fn with_policy(mut self, policy: FactPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The directory the store lives in.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    fn path(&self, sub: &str, what: &'static str, id: &str) -> Result<PathBuf> {
        Ok(self.inner.root.join(sub).join(encode::file_name(what, id)?))
    }

    /// Takes the in-process lock of one file.
    async fn lock(&self, path: &Path) -> FileLock {
        let lock = Arc::clone(
            self.inner
                .locks
                .entry(path.to_path_buf())
                .or_default()
                .value(),
        );
        FileLock {
            guard: Some(lock.lock_owned().await),
            inner: Arc::clone(&self.inner),
            path: path.to_path_buf(),
        }
    }

    /// Runs `f` on tokio's blocking pool holding the lock of the file at `path`.
    ///
    /// The lock moves into the blocking closure: if the caller's future is dropped
    /// (cancelled) while `f` runs, the lock is released only when `f` has finished, so
    /// the next writer can never read the file before a cancelled write lands.
    async fn exclusive<T, F>(&self, path: PathBuf, operation: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T> + Send + 'static,
    {
        let guard = self.lock(&path).await;
        self.blocking(operation, move || {
            let _guard = guard;
            f()
        })
        .await
    }

    /// Runs blocking file work on tokio's blocking pool.
    async fn blocking<T, F>(&self, operation: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T> + Send + 'static,
    {
        tokio::task::spawn_blocking(f).await.map_err(|e| {
            MemoryError::store(format!("file {}", self.inner.root.display()), operation, e)
        })?
    }

    /// The ids of every file in `sub`, sorted.
    async fn ids_in(&self, sub: &'static str, operation: &'static str) -> Result<Vec<String>> {
        let dir = self.inner.root.join(sub);
        self.blocking(operation, move || {
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| MemoryError::store(format!("file {}", dir.display()), operation, e))?;
            let mut ids = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| {
                    MemoryError::store(format!("file {}", dir.display()), operation, e)
                })?;
                if let Some(id) = entry.file_name().to_str().and_then(encode::id_of) {
                    ids.push(id);
                }
            }
            ids.sort();
            Ok(ids)
        })
        .await
    }
}
