//! [`VectorStore`] as one JSON file per namespace.
//!
//! The file holds every document (content, metadata and normalised embedding) and is the
//! source of truth. Searches run on an [`InMemoryVectorStore`] built from the file the
//! first time a namespace is searched and kept with the size and modification time of
//! the file it matches. A write of this store brings the kept index up to date in place
//! (the documents it wrote upserted, the ids it deleted removed) and records the stamp of
//! the file it wrote, so the search after it reads nothing from the file; the index is
//! built again only when the file changed otherwise (another process wrote it, or a write
//! failed part way) or a re-embedding rewrote vectors. A namespace's index is checked and
//! updated under a lock of its own (see [`IndexSlot`]): a search waits for a write of its
//! namespace that is under way.
//!
//! `get_many` reads the file once for every id; `ids_in_range` answers from the kept
//! index when it matches the file, else from the file's ids (in byte order).

use std::collections::BTreeMap;
use std::ops::Bound;
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

/// A namespace's search index and the version of the file it matches.
#[derive(Debug)]
struct Built {
    stamp: Stamp,
    index: Arc<InMemoryVectorStore>,
}

/// The place of one namespace's search index: empty until a search builds it, and
/// emptied when the file changes in a way this store cannot follow in place. Searches
/// (checking the file's stamp, building) and writes (writing the file, updating the
/// index) of the namespace take turns on its lock, so an index and its stamp always
/// agree, and a search never sees the file of a write before the write updated the
/// index.
#[derive(Debug, Default)]
pub(super) struct IndexSlot {
    built: tokio::sync::Mutex<Option<Built>>,
    /// When its size is due to be measured again.
    remeasure: crate::lru::Remeasure,
}

/// What a write did to a namespace's documents, for its search index.
pub(super) enum Change {
    /// Nothing: the file was not written.
    Nothing,
    /// These documents (as stored in the file) were inserted or replaced.
    Upserted(Vec<Document>),
    /// These ids were deleted (some may not have existed).
    Deleted(Vec<String>),
    /// Anything else (every document deleted, vectors rewritten): the index is built
    /// again from the file on the next search.
    Other,
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

    /// How many documents this store (and its clones) read from namespace files to
    /// build search indexes and to answer `get` and `get_many`. For tests and
    /// diagnostics: a search after a write of this store reads none, since the write
    /// updated the index in place. (A write itself still reads and rewrites the whole
    /// file, which this does not count.)
    pub fn documents_read(&self) -> u64 {
        self.inner
            .documents_read
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts `n` documents read from a namespace file.
    fn count_read(&self, n: usize) {
        self.inner
            .documents_read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// The index slot of `namespace` (created empty).
    fn index_slot(&self, namespace: &str) -> Arc<IndexSlot> {
        self.inner
            .indexes
            .get_or_insert_with(namespace, 0, Default::default)
    }

    /// Notes `changed` documents applied to `slot`'s index (all of them when `rebuilt`)
    /// and files its size when due (see `lru::Remeasure`).
    async fn charge(
        &self,
        namespace: &str,
        slot: &Arc<IndexSlot>,
        index: &InMemoryVectorStore,
        changed: usize,
        rebuilt: bool,
    ) -> Result<()> {
        if slot.remeasure.changed(changed) || rebuilt {
            let held = index.len(INDEX_NAMESPACE).await?;
            slot.remeasure.measured(held);
            self.inner
                .indexes
                .resize(namespace, index.heap_bytes(), |s| Arc::ptr_eq(s, slot));
        }
        Ok(())
    }

    /// Loads, changes and saves one namespace's file under its lock (`f` says whether it
    /// changed anything), then drops the namespace's search index when it did.
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
        self.change_vectors(namespace, operation, move |file| {
            let (out, changed) = f(file)?;
            Ok((
                out,
                if changed {
                    Change::Other
                } else {
                    Change::Nothing
                },
            ))
        })
        .await
    }

    /// Loads, changes and saves one namespace's file under its lock (`f` says what it
    /// changed), and brings the namespace's search index up to date with the change
    /// when the index matched the file before it (else empties it, so the next search
    /// builds it from the file).
    async fn change_vectors<T, F>(
        &self,
        namespace: &str,
        operation: &'static str,
        f: F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut VectorsFile) -> Result<(T, Change)> + Send + 'static,
    {
        let path = self.vectors_path(namespace)?;
        let ns = namespace.to_owned();
        let slot = self.index_slot(namespace);
        let mut built = slot.built.lock().await;
        // Until the index is brought up to date below, the slot holds none: a write
        // failing or cancelled part way leaves the next search to build it afresh.
        let kept = built.take();
        let (out, change, before, after) = self
            .exclusive(path.clone(), operation, move || {
                let before = stamp(&path)?;
                let mut file = read_doc::<VectorsFile>(&path, FORMAT)?
                    .unwrap_or_else(|| VectorsFile::new(&ns));
                let (out, change) = match f(&mut file) {
                    Ok(done) => done,
                    // Refused before anything was written: the file is as it was.
                    Err(e) => return Ok((Err(e), Change::Nothing, before, before)),
                };
                if !matches!(change, Change::Nothing) {
                    if file.documents.is_empty() {
                        remove(&path)?;
                    } else {
                        write_doc(&path, &file)?;
                    }
                }
                Ok((Ok(out), change, before, stamp(&path)?))
            })
            .await?;
        if let Some(kept) = kept.filter(|k| k.stamp == before && after.is_some()) {
            let (updated, changed) = match change {
                Change::Nothing => (true, 0),
                Change::Upserted(docs) => {
                    let n = docs.len();
                    let done = kept.index.upsert_batch(INDEX_NAMESPACE, docs).await;
                    (done.is_ok(), n)
                }
                Change::Deleted(ids) => {
                    let done = kept.index.delete(INDEX_NAMESPACE, &ids).await;
                    (done.is_ok(), ids.len())
                }
                Change::Other => (false, 0),
            };
            if updated {
                let index = Arc::clone(&kept.index);
                *built = Some(Built {
                    stamp: after,
                    index: kept.index,
                });
                // The write stands whatever measuring says.
                let _ = self.charge(namespace, &slot, &index, changed, false).await;
            }
        }
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
        let slot = self.index_slot(namespace);
        let mut built = slot.built.lock().await;
        let stamp_path = path.clone();
        let current = self
            .blocking("search documents", move || stamp(&stamp_path))
            .await?;
        if current.is_none() {
            *built = None;
            return Ok(None);
        }
        if let Some(b) = built.as_ref().filter(|b| b.stamp == current) {
            return Ok(Some(Arc::clone(&b.index)));
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
            *built = None;
            return Ok(None);
        };
        self.count_read(file.documents.len());
        let index = Arc::new(InMemoryVectorStore::new());
        index
            .upsert_batch(INDEX_NAMESPACE, file.documents.into_values().collect())
            .await?;
        *built = Some(Built {
            stamp,
            index: Arc::clone(&index),
        });
        self.charge(namespace, &slot, &index, 0, true).await?;
        Ok(Some(index))
    }

    /// The kept search index of `namespace` if it matches the file now (none is built).
    async fn current_index(&self, namespace: &str) -> Result<Option<Arc<InMemoryVectorStore>>> {
        let path = self.vectors_path(namespace)?;
        let slot = self.index_slot(namespace);
        let built = slot.built.lock().await;
        let Some(b) = built.as_ref() else {
            return Ok(None);
        };
        let current = self
            .blocking("list document ids", move || stamp(&path))
            .await?;
        Ok((current.is_some() && b.stamp == current).then(|| Arc::clone(&b.index)))
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
        self.change_vectors(namespace, "upsert documents", move |file| {
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
            for doc in documents.iter().cloned() {
                let id = doc.id.clone().unwrap_or_default();
                ids.push(id.clone());
                file.documents.insert(id, doc);
            }
            Ok((ids, Change::Upserted(documents)))
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
        let doc = self
            .read_vectors(namespace, "get a document")
            .await?
            .and_then(|mut f| f.documents.remove(id));
        self.count_read(usize::from(doc.is_some()));
        Ok(doc)
    }

    /// One read of the namespace's file for every id.
    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let Some(mut file) = self.read_vectors(namespace, "get documents").await? else {
            return Ok(Vec::new());
        };
        let docs: Vec<Document> = ids
            .iter()
            .filter_map(|id| file.documents.remove(id))
            .collect();
        self.count_read(docs.len());
        Ok(docs)
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        let ids = ids.to_vec();
        self.change_vectors(namespace, "delete documents", move |file| {
            let n = ids
                .iter()
                .filter(|id| file.documents.remove(id.as_str()).is_some())
                .count();
            let change = if n > 0 {
                Change::Deleted(ids)
            } else {
                Change::Nothing
            };
            Ok((n, change))
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

    /// From the kept search index when it matches the file, else a range of the file's
    /// ids (a `BTreeMap`: byte order).
    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        if from >= to {
            return Ok(Vec::new()); // a reversed range would make `BTreeMap::range` panic
        }
        if let Some(index) = self.current_index(namespace).await? {
            return index.ids_in_range(INDEX_NAMESPACE, from, to).await;
        }
        let Some(file) = self
            .read_vectors(namespace, "list a range of document ids")
            .await?
        else {
            return Ok(Vec::new());
        };
        Ok(file
            .documents
            .range::<str, _>((Bound::Included(from), Bound::Excluded(to)))
            .map(|(id, _)| id.clone())
            .collect())
    }
}
