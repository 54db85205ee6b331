//! [`FileStore`]: KV namespaces, conversations, user facts and vector documents as JSON
//! files in a directory.
//!
//! Layout: `<dir>/kv/<namespace>.json`, `<dir>/conversations/<id>.json`,
//! `<dir>/facts/<user>.json` and `<dir>/vectors/<namespace>.json`, names
//! derived from ids by a safe, injective encoding (see `encode`). Each file is a
//! versioned JSON document rewritten atomically on every change (temporary file,
//! `fsync`, rename, directory `fsync`), so a crash never leaves a partial file. Writers
//! to one file within a process are serialised by a per-file lock, held by the blocking
//! write itself (a cancelled call cannot release it early); the store is
//! meant for one process per directory. Each write rewrites the whole file, so it
//! suits small to medium data (a conversation of a few thousand events); use
//! [`SqliteStore`](crate::SqliteStore) beyond that.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentmemory_core::{FactPolicy, MemoryError, Result};
use dashmap::DashMap;
use tokio::sync::{Mutex, OwnedMutexGuard};

mod atomic;
mod conversation;
mod encode;
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
/// searched through an in-memory index rebuilt when the file changes). Cloning is cheap and
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
}

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    locks: DashMap<PathBuf, Arc<Mutex<()>>>,
    /// Search indexes of vector namespaces, by namespace.
    indexes: DashMap<String, vectors::CachedIndex>,
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
                indexes: DashMap::new(),
            }),
            policy: FactPolicy::default(),
        })
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
