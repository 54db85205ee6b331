//! [`KvStore`] as one JSON file per namespace.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agentmemory_core::{KvStore, MemoryEntry, Result};
use async_trait::async_trait;
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::atomic::{read_doc, remove, write_doc, FORMAT_VERSION};
use super::{FileStore, KV_DIR};

const FORMAT: &str = "agentmem.kv";

/// The document in a namespace's file.
#[derive(Serialize, Deserialize)]
struct KvFile {
    format: String,
    version: u32,
    namespace: String,
    entries: BTreeMap<String, MemoryEntry>,
}

impl KvFile {
    fn new(namespace: &str) -> Self {
        Self {
            format: FORMAT.to_owned(),
            version: FORMAT_VERSION,
            namespace: namespace.to_owned(),
            entries: BTreeMap::new(),
        }
    }
}

/// Writes `file`, or removes it when it holds nothing.
fn save(path: &std::path::Path, file: &KvFile) -> Result<()> {
    if file.entries.is_empty() {
        remove(path).map(|_| ())
    } else {
        write_doc(path, file)
    }
}

impl FileStore {
    fn kv_path(&self, namespace: &str) -> Result<PathBuf> {
        self.path(KV_DIR, "namespace", namespace)
    }

    /// Loads, changes and saves one namespace's file under its lock.
    async fn modify_kv<T, F>(&self, namespace: &str, operation: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut KvFile) -> Result<(T, bool)> + Send + 'static,
    {
        let path = self.kv_path(namespace)?;
        let ns = namespace.to_owned();
        self.exclusive(path.clone(), operation, move || {
            let mut file = read_doc::<KvFile>(&path, FORMAT)?.unwrap_or_else(|| KvFile::new(&ns));
            let (out, changed) = f(&mut file)?;
            if changed {
                save(&path, &file)?;
            }
            Ok(out)
        })
        .await
    }

    async fn read_kv(&self, namespace: &str, operation: &'static str) -> Result<Option<KvFile>> {
        let path = self.kv_path(namespace)?;
        self.blocking(operation, move || read_doc(&path, FORMAT))
            .await
    }
}

#[async_trait]
impl KvStore for FileStore {
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> Result<()> {
        entry.validate()?;
        self.modify_kv(namespace, "put a KV entry", move |file| {
            file.entries.insert(entry.key.clone(), entry);
            Ok(((), true))
        })
        .await
    }

    async fn get(&self, namespace: &str, key: &str) -> Result<Option<MemoryEntry>> {
        let now = Utc::now();
        Ok(self
            .read_kv(namespace, "get a KV entry")
            .await?
            .and_then(|mut f| f.entries.remove(key))
            .filter(|e| !e.is_expired_at(now)))
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        let key = key.to_owned();
        self.modify_kv(namespace, "delete a KV entry", move |file| {
            let removed = file.entries.remove(&key);
            let changed = removed.is_some();
            Ok((
                removed.is_some_and(|e| !e.is_expired_at(Utc::now())),
                changed,
            ))
        })
        .await
    }

    async fn list(&self, namespace: &str) -> Result<Vec<MemoryEntry>> {
        let now = Utc::now();
        Ok(self
            .read_kv(namespace, "list KV entries")
            .await?
            .map(|f| {
                f.entries
                    .into_values()
                    .filter(|e| !e.is_expired_at(now))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn clear(&self, namespace: &str) -> Result<usize> {
        self.modify_kv(namespace, "clear a KV namespace", |file| {
            let n = file.entries.len();
            file.entries.clear();
            Ok((n, n > 0))
        })
        .await
    }

    async fn cleanup_expired(&self) -> Result<usize> {
        let mut removed = 0;
        for ns in self.ids_in(KV_DIR, "list KV namespaces").await? {
            removed += self
                .modify_kv(&ns, "delete expired KV entries", |file| {
                    let now = Utc::now();
                    let before = file.entries.len();
                    file.entries.retain(|_, e| !e.is_expired_at(now));
                    let n = before - file.entries.len();
                    Ok((n, n > 0))
                })
                .await?;
        }
        Ok(removed)
    }
}
