//! [`MemoryStores`]: the records of the memory-stores API over the server's key/value
//! and vector stores (see [`records`](super::records) for the layout), with one write
//! lock per store in this process so that a `content_sha256` precondition is checked
//! and applied at once.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use agentmemory_core::kv::{KvStore, MemoryEntry, MemoryScope};
use agentmemory_core::vector::{Document, SearchQuery, VectorStore};
use agentmemory_core::MemoryError;

use super::records::{
    memories_namespace, search_namespace, stores_namespace, versions_namespace, MemoryRecord,
    StoreRecord, VersionRecord,
};

type Result<T> = std::result::Result<T, MemoryError>;

/// Writers of different stores rarely wait for each other: one lock per stripe.
const LOCK_STRIPES: usize = 64;

/// The memory stores of every tenant.
#[derive(Clone)]
pub struct MemoryStores {
    kv: Arc<dyn KvStore>,
    vectors: Arc<dyn VectorStore>,
    locks: Arc<[tokio::sync::Mutex<()>]>,
}

impl MemoryStores {
    /// Memory stores kept in `kv`, their contents searchable in `vectors`.
    pub fn new(kv: Arc<dyn KvStore>, vectors: Arc<dyn VectorStore>) -> Self {
        Self {
            kv,
            vectors,
            locks: (0..LOCK_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
        }
    }

    /// Holds the write lock of one store.
    pub async fn lock(&self, tenant: &str, store: &str) -> tokio::sync::MutexGuard<'_, ()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (tenant, store).hash(&mut hasher);
        self.locks[(hasher.finish() % self.locks.len() as u64) as usize]
            .lock()
            .await
    }

    async fn read<T: DeserializeOwned>(&self, ns: &str, key: &str) -> Result<Option<T>> {
        match self.kv.get(ns, key).await? {
            Some(entry) => serde_json::from_value(entry.content)
                .map(Some)
                .map_err(|e| MemoryError::corrupt(format!("memory-stores record `{key}`"), e)),
            None => Ok(None),
        }
    }

    async fn read_all<T: DeserializeOwned>(&self, ns: &str) -> Result<Vec<T>> {
        let mut out = Vec::new();
        for entry in self.kv.list(ns).await? {
            out.push(serde_json::from_value(entry.content).map_err(|e| {
                MemoryError::corrupt(format!("memory-stores record `{}`", entry.key), e)
            })?);
        }
        Ok(out)
    }

    async fn write<T: Serialize>(&self, ns: &str, key: &str, record: &T) -> Result<()> {
        let value = serde_json::to_value(record)
            .map_err(|e| MemoryError::corrupt("memory-stores record", e))?;
        self.kv
            .put(ns, MemoryEntry::new(MemoryScope::LongTerm, key, value))
            .await
    }

    /// One store of `tenant`.
    pub async fn store(&self, tenant: &str, id: &str) -> Result<Option<StoreRecord>> {
        self.read(&stores_namespace(tenant), id).await
    }

    /// Every store of `tenant`.
    pub async fn stores(&self, tenant: &str) -> Result<Vec<StoreRecord>> {
        self.read_all(&stores_namespace(tenant)).await
    }

    /// Writes a store.
    pub async fn put_store(&self, tenant: &str, store: &StoreRecord) -> Result<()> {
        self.write(&stores_namespace(tenant), &store.id, store)
            .await
    }

    /// Deletes a store with its memories and versions.
    pub async fn delete_store(&self, tenant: &str, id: &str) -> Result<()> {
        self.vectors.clear(&search_namespace(tenant, id)).await?;
        self.kv.clear(&memories_namespace(tenant, id)).await?;
        self.kv.clear(&versions_namespace(tenant, id)).await?;
        self.kv.delete(&stores_namespace(tenant), id).await?;
        Ok(())
    }

    /// One memory.
    pub async fn memory(
        &self,
        tenant: &str,
        store: &str,
        id: &str,
    ) -> Result<Option<MemoryRecord>> {
        self.read(&memories_namespace(tenant, store), id).await
    }

    /// Every memory of a store.
    pub async fn memories(&self, tenant: &str, store: &str) -> Result<Vec<MemoryRecord>> {
        self.read_all(&memories_namespace(tenant, store)).await
    }

    /// Writes a memory's version, then the memory and its searchable document.
    pub async fn put_memory(
        &self,
        tenant: &str,
        memory: &MemoryRecord,
        version: &VersionRecord,
    ) -> Result<()> {
        let store = &memory.memory_store_id;
        self.put_version(tenant, version).await?;
        self.write(&memories_namespace(tenant, store), &memory.id, memory)
            .await?;
        let doc = Document::new(memory.content.clone())
            .with_id(memory.id.clone())
            .with_metadata("path", memory.path.as_str())
            .with_metadata("memory_version_id", memory.memory_version_id.as_str());
        self.vectors
            .upsert(&search_namespace(tenant, store), doc)
            .await?;
        Ok(())
    }

    /// Writes a memory's `deleted` version, then removes the memory and its document.
    pub async fn remove_memory(
        &self,
        tenant: &str,
        memory: &MemoryRecord,
        version: &VersionRecord,
    ) -> Result<()> {
        let store = &memory.memory_store_id;
        self.put_version(tenant, version).await?;
        self.kv
            .delete(&memories_namespace(tenant, store), &memory.id)
            .await?;
        self.vectors
            .delete(
                &search_namespace(tenant, store),
                std::slice::from_ref(&memory.id),
            )
            .await?;
        Ok(())
    }

    /// One version.
    pub async fn version(
        &self,
        tenant: &str,
        store: &str,
        id: &str,
    ) -> Result<Option<VersionRecord>> {
        self.read(&versions_namespace(tenant, store), id).await
    }

    /// Every version of a store.
    pub async fn versions(&self, tenant: &str, store: &str) -> Result<Vec<VersionRecord>> {
        self.read_all(&versions_namespace(tenant, store)).await
    }

    /// Writes a version (a new one, or a redacted one over the same id).
    pub async fn put_version(&self, tenant: &str, version: &VersionRecord) -> Result<()> {
        self.write(
            &versions_namespace(tenant, &version.memory_store_id),
            &version.id,
            version,
        )
        .await
    }

    /// The store's memories that best match `query` (words, and meaning when the vector
    /// store embeds), best first, with their scores.
    pub async fn search(
        &self,
        tenant: &str,
        store: &str,
        query: &str,
        k: usize,
    ) -> Result<Vec<(MemoryRecord, f32)>> {
        let hits = self
            .vectors
            .search(
                &search_namespace(tenant, store),
                &SearchQuery::new(query, k),
            )
            .await?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            // a document a crash left without its record is skipped
            if let Some(memory) = self.memory(tenant, store, &hit.id).await? {
                out.push((memory, hit.score));
            }
        }
        Ok(out)
    }
}
