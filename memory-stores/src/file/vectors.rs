//! [`VectorStore`] as one JSON file per namespace.
//!
//! The file holds every document (content, metadata and normalised embedding) and is the
//! source of truth. Searches run on an [`InMemoryVectorStore`] built from the file the
//! first time a namespace is searched and kept while the file is unchanged: it is rebuilt
//! when this store writes the namespace, or when the file's size or modification time
//! shows that another process did.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use agentmemory_core::store_support::normalized;
use agentmemory_core::{
    Document, InMemoryVectorStore, MemoryError, Result, SearchHit, SearchQuery, VectorStore,
};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::atomic::{read_doc, remove, write_doc, FORMAT_VERSION};
use super::{FileStore, VECTORS_DIR};

const FORMAT: &str = "agentmem.vectors";
/// The namespace every cached index keeps its documents under.
const INDEX_NAMESPACE: &str = "documents";

/// The document in a namespace's file.
#[derive(Serialize, Deserialize)]
pub(super) struct VectorsFile {
    format: String,
    version: u32,
    namespace: String,
    /// Documents by id; each has its `id` set and its embedding (if any) normalised.
    pub(super) documents: BTreeMap<String, Document>,
}

impl VectorsFile {
    fn new(namespace: &str) -> Self {
        Self {
            format: FORMAT.to_owned(),
            version: FORMAT_VERSION,
            namespace: namespace.to_owned(),
            documents: BTreeMap::new(),
        }
    }

    /// The dimension of the stored embeddings, if any is stored.
    pub(super) fn dimension(&self) -> Option<usize> {
        self.documents
            .values()
            .find_map(|d| d.embedding.as_ref().map(Vec::len))
    }
}

/// What identifies one version of a namespace's file: its size and modification time
/// (`None` when there is no file).
pub(super) type Stamp = Option<(u64, Option<SystemTime>)>;

/// A namespace's search index and the version of the file it was built from.
#[derive(Debug)]
pub(super) struct CachedIndex {
    stamp: Stamp,
    index: Arc<InMemoryVectorStore>,
}

fn stamp(path: &Path) -> Result<Stamp> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some((meta.len(), meta.modified().ok()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(MemoryError::store(
            format!("file {}", path.display()),
            "read metadata",
            e,
        )),
    }
}

/// Validates `documents` and gives each an id and a normalised embedding.
fn prepare(documents: Vec<Document>) -> Result<Vec<Document>> {
    documents
        .into_iter()
        .map(|mut doc| {
            match &doc.id {
                Some(id) if id.is_empty() => {
                    return Err(MemoryError::invalid("document id", "must not be empty"))
                }
                Some(_) => {}
                None => doc.id = Some(ulid::Ulid::new().to_string()),
            }
            doc.embedding = doc
                .embedding
                .map(|v| normalized(v, "document embedding"))
                .transpose()?;
            Ok(doc)
        })
        .collect()
}

impl FileStore {
    fn vectors_path(&self, namespace: &str) -> Result<PathBuf> {
        self.path(VECTORS_DIR, "namespace", namespace)
    }

    /// Loads, changes and saves one namespace's file under its lock (`f` says whether it
    /// changed anything), then drops the namespace's cached index.
    pub(super) async fn modify_vectors<T, F>(
        &self,
        namespace: &str,
        operation: &'static str,
        f: F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut VectorsFile) -> Result<(T, bool)> + Send + 'static,
    {
        let path = self.vectors_path(namespace)?;
        let ns = namespace.to_owned();
        let out = self
            .exclusive(path.clone(), operation, move || {
                let mut file = read_doc::<VectorsFile>(&path, FORMAT)?
                    .unwrap_or_else(|| VectorsFile::new(&ns));
                let (out, changed) = f(&mut file)?;
                if changed {
                    if file.documents.is_empty() {
                        remove(&path)?;
                    } else {
                        write_doc(&path, &file)?;
                    }
                }
                Ok(out)
            })
            .await;
        // Even a failed write may have replaced the file: rebuild on the next search.
        self.inner.indexes.remove(namespace);
        out
    }

    pub(super) async fn read_vectors(
        &self,
        namespace: &str,
        operation: &'static str,
    ) -> Result<Option<VectorsFile>> {
        let path = self.vectors_path(namespace)?;
        self.blocking(operation, move || read_doc(&path, FORMAT))
            .await
    }

    /// The search index of `namespace`, rebuilt from its file when the file changed since
    /// it was built; `None` when the namespace holds no documents.
    async fn vector_index(&self, namespace: &str) -> Result<Option<Arc<InMemoryVectorStore>>> {
        let path = self.vectors_path(namespace)?;
        let stamp_path = path.clone();
        let current = self
            .blocking("search documents", move || stamp(&stamp_path))
            .await?;
        if current.is_none() {
            return Ok(None);
        }
        if let Some(cached) = self.inner.indexes.get(namespace) {
            if cached.stamp == current {
                return Ok(Some(Arc::clone(&cached.index)));
            }
        }
        // Read the stamp again with the document, so the cache never pairs a newer stamp
        // with older contents.
        let (stamp, file) = self
            .blocking("search documents", move || {
                let before = stamp(&path)?;
                let file = read_doc::<VectorsFile>(&path, FORMAT)?;
                Ok((before, file))
            })
            .await?;
        let Some(file) = file else {
            return Ok(None);
        };
        let index = Arc::new(InMemoryVectorStore::new());
        index
            .upsert_batch(INDEX_NAMESPACE, file.documents.into_values().collect())
            .await?;
        self.inner.indexes.insert(
            namespace.to_owned(),
            CachedIndex {
                stamp,
                index: Arc::clone(&index),
            },
        );
        Ok(Some(index))
    }
}

#[async_trait]
impl VectorStore for FileStore {
    /// All or nothing: every document is validated before the file is rewritten.
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let documents = prepare(documents)?;
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        self.modify_vectors(namespace, "upsert documents", move |file| {
            let mut dim = file.dimension();
            for v in documents.iter().filter_map(|d| d.embedding.as_ref()) {
                match dim {
                    None => dim = Some(v.len()),
                    Some(d) if d != v.len() => {
                        return Err(MemoryError::DimensionMismatch {
                            expected: d,
                            found: v.len(),
                        })
                    }
                    Some(_) => {}
                }
            }
            let mut ids = Vec::with_capacity(documents.len());
            for doc in documents {
                let id = doc.id.clone().unwrap_or_default();
                ids.push(id.clone());
                file.documents.insert(id, doc);
            }
            Ok((ids, true))
        })
        .await
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if query.k == 0 {
            return Ok(Vec::new());
        }
        match self.vector_index(namespace).await? {
            Some(index) => index.search(INDEX_NAMESPACE, query).await,
            None => Ok(Vec::new()),
        }
    }

    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        Ok(self
            .read_vectors(namespace, "get a document")
            .await?
            .and_then(|mut f| f.documents.remove(id)))
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        let ids = ids.to_vec();
        self.modify_vectors(namespace, "delete documents", move |file| {
            let n = ids
                .iter()
                .filter(|id| file.documents.remove(id.as_str()).is_some())
                .count();
            Ok((n, n > 0))
        })
        .await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        self.modify_vectors(namespace, "clear a namespace", |file| {
            let changed = !file.documents.is_empty();
            file.documents.clear();
            Ok(((), changed))
        })
        .await
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        Ok(self
            .read_vectors(namespace, "count documents")
            .await?
            .map_or(0, |f| f.documents.len()))
    }

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        // A BTreeMap: the keys come in byte order.
        Ok(self
            .read_vectors(namespace, "list document ids")
            .await?
            .map_or_else(Vec::new, |f| f.documents.keys().cloned().collect()))
    }
}
