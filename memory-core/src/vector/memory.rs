//! `InMemoryVectorStore`: TF-IDF over an inverted index, plus brute-force dense search.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use async_trait::async_trait;
use dashmap::DashMap;
use parking_lot::RwLock;

use super::analyse::Analysed;
use super::dense::{normalized, DenseIndex, DenseStats};
use super::sparse::SparseIndex;
use super::topk::TopK;
use super::{fuse, Document, Embedder, Filter, Fusion, SearchHit, SearchQuery, VectorStore};
use crate::error::{MemoryError, Result};
use crate::message::Metadata;
use crate::offload;

mod reembed;

/// Fewest documents of a batch analysed ahead of writing ([`Analysed`]).
const ANALYSED_MIN: usize = 32;

/// Most bytes of text a write analyses and indexes on the caller's thread (the async
/// runtime's worker); a larger write runs on tokio's blocking pool. Analysis and indexing
/// run at some 10–20 MB/s here (100,000 short documents, 5.5 MB, in 0.3–0.6 s on two busy
/// cores, release build), so this is 100–200 µs of work: about the most tokio advises
/// between two `.await`s, and several times the cost of the hop to a blocking thread
/// (waking a pooled thread and the task back, tens of µs). A message-sized upsert stays
/// inline.
const INLINE_MAX_TEXT_BYTES: usize = 2 * 1024;

/// Most embedding values a write normalises, stores and quantises inline (about 40
/// documents of 384 dimensions; at a few ns per value, under 100 µs).
const INLINE_MAX_FLOATS: usize = 16 * 1024;

/// Most bytes of vectors a search scans inline (the one-byte copy for a screened search,
/// the `f32` rows for an exact or hybrid one): one core screens 6–17 GB/s here (100,000 ×
/// 384 in 2.3 ms idle, 6 ms on two busy cores), so 60–160 µs. A 100,000 × 384 namespace
/// (39 MB screened) is searched off the runtime.
const INLINE_MAX_SCAN_BYTES: usize = 1024 * 1024;

/// The namespaces of a store, shared with the work it moves off the runtime.
type Namespaces = Arc<DashMap<String, Arc<RwLock<Namespace>>>>;

/// A [`VectorStore`] held in memory.
///
/// - **Sparse search** (the default): TF-IDF cosine over an inverted index updated on
///   every write, scores in `0.0..=1.0`; a query sharing no term with the namespace
///   returns nothing. A search costs time proportional to the postings of its terms.
/// - **Hybrid search**: when the namespace holds embedded documents and a query embedding
///   is available (carried by the query, or made by the store's [`Embedder`], see
///   [`with_embedder`](Self::with_embedder)), the sparse and the dense (brute-force cosine
///   over L2-normalised vectors stored contiguously) rankings are fused by the store's
///   [`Fusion`] ([`Fusion::DEFAULT`] unless [`with_fusion`](Self::with_fusion) says
///   otherwise). Filters apply to both sides; documents without an embedding take part
///   with a dense score of 0. A query embedding with empty text is a dense-only search.
///   A namespace's dimension is set by its first embedding and released when it holds no
///   embedding any more.
///
/// Each namespace has its own lock, so namespaces never contend with each other. A batch
/// of many documents ([`upsert_batch`](VectorStore::upsert_batch), 32 or more) is analysed
/// into terms before the lock is taken, split across the rayon thread pool when large; the
/// index it builds is the one upserting the documents one by one would. A batch loaded
/// into an empty namespace is built aside and swapped in, so readers of the namespace
/// never wait for it.
///
/// Heavy calls leave the async runtime's worker: a write of more than 2 KiB of text (or
/// 16 Ki embedding values) and a search scanning more than 1 MiB of vectors run on tokio's
/// blocking pool, so a bulk load or a large scan does not stall the other tasks of the
/// runtime. Smaller calls run inline, where they cost less than the hop. A call that finds
/// its namespace locked by a writer waits for it on the blocking pool too. Work moved to
/// the blocking pool splits across rayon's global pool; outside a tokio runtime (another
/// executor, or a future polled to completion by hand) every call runs on the calling
/// thread, in the rayon pool that thread is installed in.
///
/// ```
/// use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
///
/// # tokio_test(async {
/// let store = InMemoryVectorStore::new();
/// store.upsert("docs", Document::new("Rust has no garbage collector")).await.unwrap();
/// store.upsert("docs", Document::new("Python is garbage collected")).await.unwrap();
/// let hits = store.search("docs", &SearchQuery::new("rust collector", 1)).await.unwrap();
/// assert_eq!(hits[0].content, "Rust has no garbage collector");
/// # });
/// # fn tokio_test(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Default)]
pub struct InMemoryVectorStore {
    namespaces: Namespaces,
    embedder: Option<Arc<dyn Embedder>>,
    fusion: Fusion,
    /// The model recorded as having made the vectors ([`crate::reembed::Reembed`]).
    embedding_model: parking_lot::Mutex<Option<crate::reembed::EmbeddingModel>>,
}

impl fmt::Debug for InMemoryVectorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryVectorStore")
            .field("namespaces", &self.namespaces.len())
            .field("embedder", &self.embedder.is_some())
            .field("fusion", &self.fusion)
            .finish()
    }
}

#[derive(Debug)]
struct Record {
    /// The same allocation as the id's key in [`Namespace::ids`]: each id is stored once.
    id: Arc<str>,
    content: String,
    metadata: Metadata,
}

/// One namespace: records in slots, and the two indexes keyed by the same slots.
#[derive(Debug, Default)]
struct Namespace {
    /// Slot of each id, in id order (so ids, and ranges of them, are listed unsorted).
    /// Keys share their text with the records' ids.
    ids: BTreeMap<Arc<str>, u32>,
    records: Vec<Option<Record>>,
    free: Vec<u32>,
    sparse: SparseIndex,
    dense: DenseIndex,
    /// Set (on an emptied namespace) when `clear` unlinks it from the store; a writer
    /// that fetched it before then must fetch the namespace again.
    retired: bool,
}

/// A write moved off the runtime: documents as given (with the vectors made for those
/// without one), or already prepared.
enum Pending {
    Raw(Vec<Document>, Option<Vec<Vec<f32>>>),
    Prepared(Vec<Prepared>),
}

/// A document checked and ready to be written.
struct Prepared {
    id: String,
    content: String,
    metadata: Metadata,
    embedding: Option<Vec<f32>>,
}

impl Namespace {
    /// See [`InMemoryVectorStore::heap_bytes`].
    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let records: usize = self
            .records
            .iter()
            .flatten()
            .map(|r| {
                // The id's text and counts, shared by the record and its key.
                r.id.len()
                    + 2 * size_of::<usize>()
                    + r.content.capacity()
                    + crate::heap::metadata(&r.metadata)
            })
            .sum();
        self.ids.len() * (size_of::<(Arc<str>, u32)>() + crate::heap::BTREE_ENTRY)
            + self.records.capacity() * size_of::<Option<Record>>()
            + records
            + self.free.capacity() * size_of::<u32>()
            + self.sparse.heap_bytes()
            + self.dense.heap_bytes()
    }

    /// The slot of `id` and the id as the namespace keeps it (shared by its key and its
    /// record), taking a free slot for a new id.
    fn slot_for(&mut self, id: &str) -> Result<(u32, Arc<str>)> {
        if let Some((key, &slot)) = self.ids.get_key_value(id) {
            return Ok((slot, Arc::clone(key)));
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => u32::try_from(self.records.len()).map_err(|_| {
                MemoryError::invalid("namespace", "holds the maximum number of documents")
            })?,
        };
        if slot as usize == self.records.len() {
            self.records.push(None);
        }
        let id: Arc<str> = id.into();
        self.ids.insert(Arc::clone(&id), slot);
        Ok((slot, id))
    }

    /// Writes a prepared document (document `i` of `analysed` when the batch was analysed
    /// ahead); dimensions must have been checked.
    fn write(
        &mut self,
        doc: Prepared,
        analysed: Option<&mut Analysed>,
        i: usize,
    ) -> Result<String> {
        let (slot, id) = self.slot_for(&doc.id)?;
        match &doc.embedding {
            Some(v) => self.dense.insert(slot, v)?,
            None => self.dense.remove(slot),
        }
        match analysed {
            Some(batch) => self.sparse.insert_analysed(slot, batch, i),
            None => self.sparse.insert(slot, &doc.content),
        }
        self.records[slot as usize] = Some(Record {
            id,
            content: doc.content,
            metadata: doc.metadata,
        });
        Ok(doc.id)
    }

    /// Writes a prepared batch (analysed ahead as `analysed` when given), all or nothing:
    /// dimensions are checked before anything is written.
    fn write_all(
        &mut self,
        prepared: Vec<Prepared>,
        mut analysed: Option<Analysed>,
    ) -> Result<Vec<String>> {
        check_dimensions(self, &prepared)?;
        self.reserve(prepared.len());
        let written = prepared
            .into_iter()
            .enumerate()
            .map(|(i, d)| self.write(d, analysed.as_mut(), i))
            .collect();
        if analysed.is_some() {
            // Postings were given room for the whole batch ahead: keep what they use.
            self.sparse.shrink_to_fit();
        }
        written
    }

    /// Whether nothing was ever written here (a namespace as created or as cleared):
    /// writing a batch into it is the same as writing it into a new one.
    fn is_pristine(&self) -> bool {
        self.ids.is_empty() && self.records.is_empty() && !self.retired
    }

    /// The documents held, as prepared documents in slot order.
    fn into_prepared(mut self) -> Vec<Prepared> {
        let records = std::mem::take(&mut self.records);
        records
            .into_iter()
            .enumerate()
            .filter_map(|(slot, rec)| {
                let rec = rec?;
                Some(Prepared {
                    embedding: self.dense.get(slot as u32).map(<[f32]>::to_vec),
                    id: rec.id.to_string(),
                    content: rec.content,
                    metadata: rec.metadata,
                })
            })
            .collect()
    }

    /// Bytes of vectors a search of this namespace scans (see [`INLINE_MAX_SCAN_BYTES`]):
    /// `hybrid` searches score every row exactly.
    fn scan_bytes(&self, queries: usize, k: usize, hybrid: bool) -> usize {
        self.dense.scan_bytes(queries, k, hybrid)
    }

    /// Makes room for `additional` more documents (some of a batch may replace others).
    fn reserve(&mut self, additional: usize) {
        let free = additional.saturating_sub(self.free.len());
        self.records.reserve(free);
        self.sparse.reserve(free);
    }

    /// A copy of the document stored as `id`.
    fn document(&self, id: &str) -> Option<Document> {
        let slot = *self.ids.get(id)?;
        self.record(slot).map(|rec| Document {
            id: Some(rec.id.to_string()),
            content: rec.content.clone(),
            metadata: rec.metadata.clone(),
            embedding: self.dense.get(slot).map(<[f32]>::to_vec),
        })
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some(slot) = self.ids.remove(id) else {
            return false;
        };
        self.sparse.remove(slot);
        self.dense.remove(slot);
        self.records[slot as usize] = None;
        self.free.push(slot);
        true
    }

    /// The best `k` documents for `text` and `embedding` (normalised, of the right
    /// dimension), sparse and dense rankings fused by `fusion`; `filter` applies to both.
    fn hybrid(
        &self,
        text: &str,
        embedding: &[f32],
        filter: Option<&Filter>,
        k: usize,
        fusion: Fusion,
    ) -> Vec<SearchHit> {
        let passes = |slot: u32| {
            self.record(slot)
                .is_some_and(|rec| filter.is_none_or(|f| f.matches(&rec.metadata)))
        };
        // Sparse cosine per slot (0 for documents sharing no term): no hashing per match.
        let mut sparse = vec![0.0f32; self.records.len()];
        self.sparse.score(text, |slot, score| {
            if let Some(s) = sparse.get_mut(slot as usize) {
                *s = score;
            }
        });
        // An adaptive fusion picks this query's weight from both rankings' heads first.
        let fusion = match fusion {
            Fusion::Adaptive { depth, .. } => {
                let head = depth.saturating_add(1);
                let mut words: Vec<f32> = sparse
                    .iter()
                    .enumerate()
                    .filter(|&(slot, &s)| s > 0.0 && passes(slot as u32))
                    .map(|(_, &s)| s)
                    .collect();
                words.sort_by(|a, b| b.total_cmp(a));
                words.truncate(head);
                // The exact cosines the fused scores use below (one more pass over the
                // vectors; an approximate head would pick another weight).
                let mut meaning: Vec<f32> = Vec::new();
                self.dense.score(embedding, |slot, cosine| {
                    if passes(slot) {
                        meaning.push(cosine);
                    }
                });
                meaning.sort_by(|a, b| b.total_cmp(a));
                meaning.truncate(head);
                fusion.for_query(&words, &meaning)
            }
            other => other,
        };
        let mut top = TopK::new(k);
        if fusion.combine(0.0, 0.0).is_some() {
            // The query's best word score among the documents it may return (a fusion
            // that scales the word side by it needs it before any document is scored).
            let best = match fusion {
                Fusion::MaxScaled { .. } | Fusion::Coverage { .. } => sparse
                    .iter()
                    .enumerate()
                    .filter(|&(slot, &s)| s > 0.0 && passes(slot as u32))
                    .map(|(_, &s)| s)
                    .fold(0.0f32, f32::max),
                _ => 0.0,
            };
            // Each document's query coverage, for a fusion that ranks words by it.
            let mut coverage: Vec<f32> = Vec::new();
            if matches!(fusion, Fusion::Coverage { .. }) {
                coverage = vec![0.0; self.records.len()];
                self.sparse.coverage(text, |slot, c| {
                    if let Some(at) = coverage.get_mut(slot as usize) {
                        *at = c;
                    }
                });
            }
            let covered = |slot: u32| coverage.get(slot as usize).copied().unwrap_or(0.0);
            // A score per document: exact over every candidate of either side.
            self.dense.score(embedding, |slot, cosine| {
                let s = sparse.get(slot as usize).copied().unwrap_or(0.0);
                if let Some(score) = fusion.combine_covered(s, cosine, best, covered(slot)) {
                    self.offer(&mut top, filter, slot, score);
                }
            });
            // Documents without an embedding take part by words alone.
            for (slot, &s) in sparse.iter().enumerate() {
                let slot = slot as u32;
                if s > 0.0 && self.dense.get(slot).is_none() {
                    if let Some(score) = fusion.combine_covered(s, 0.0, best, covered(slot)) {
                        self.offer(&mut top, filter, slot, score);
                    }
                }
            }
        } else {
            // Rank fusion needs both whole rankings (filtered first).
            let mut sparse: Vec<(u32, f32)> = sparse
                .into_iter()
                .enumerate()
                .map(|(slot, s)| (slot as u32, s))
                .filter(|&(slot, s)| s > 0.0 && passes(slot))
                .collect();
            let mut dense: Vec<(u32, f32)> = Vec::new();
            self.dense.score(embedding, |slot, cosine| {
                if passes(slot) {
                    dense.push((slot, cosine));
                }
            });
            let by_score = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            sparse.sort_by(by_score);
            dense.sort_by(by_score);
            for (slot, score) in fuse(&sparse, &dense, fusion) {
                self.offer(&mut top, None, slot, score);
            }
        }
        hits(top)
    }

    /// The answer to `query`, with `embedding` its normalised vector when it has one.
    fn search(
        &self,
        query: &SearchQuery,
        embedding: Option<Vec<f32>>,
        fusion: Fusion,
    ) -> Result<Vec<SearchHit>> {
        let filter = query.filter.as_ref();
        let mut top = TopK::new(query.k);
        match embedding {
            Some(v) if query.text.trim().is_empty() => {
                if self.dense.is_empty() {
                    return Ok(Vec::new());
                }
                self.dense.check_dim(v.len())?;
                let accept = |_: usize, slot: u32| self.accepts(filter, slot);
                let accept: &(dyn Fn(usize, u32) -> bool + Sync) = &accept;
                for (slot, score) in self.dense.nearest(&v, query.k, filter.map(|_| accept)) {
                    self.offer(&mut top, filter, slot, score);
                }
            }
            // Nothing to fuse with: a namespace without embeddings degrades to sparse.
            Some(v) if !self.dense.is_empty() => {
                self.dense.check_dim(v.len())?;
                return Ok(self.hybrid(&query.text, &v, filter, query.k, fusion));
            }
            _ => self.sparse.score_top(&query.text, |slot, score| {
                self.offer(&mut top, filter, slot, score);
                top.threshold()
            }),
        }
        Ok(hits(top))
    }

    /// The best `ks[i]` documents for each of `vectors` (normalised) passing
    /// `filters[i]`, by dense score alone.
    fn nearest_hits(
        &self,
        vectors: &[Vec<f32>],
        ks: &[usize],
        filters: &[Option<Filter>],
    ) -> Result<Vec<Vec<SearchHit>>> {
        if self.dense.is_empty() {
            return Ok(vec![Vec::new(); vectors.len()]);
        }
        for v in vectors {
            self.dense.check_dim(v.len())?;
        }
        let refs: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
        let accept = |qi: usize, slot: u32| self.accepts(filters[qi].as_ref(), slot);
        let accept: &(dyn Fn(usize, u32) -> bool + Sync) = &accept;
        let any_filter = filters.iter().any(Option::is_some);
        let found = self
            .dense
            .nearest_batch(&refs, ks, any_filter.then_some(accept));
        Ok(found
            .into_iter()
            .enumerate()
            .map(|(qi, found)| {
                let mut top = TopK::new(ks[qi]);
                for (slot, score) in found {
                    self.offer(&mut top, filters[qi].as_ref(), slot, score);
                }
                hits(top)
            })
            .collect())
    }

    fn record(&self, slot: u32) -> Option<&Record> {
        self.records.get(slot as usize).and_then(Option::as_ref)
    }

    /// Whether the document in `slot` exists and passes `filter`.
    fn accepts(&self, filter: Option<&Filter>, slot: u32) -> bool {
        self.record(slot)
            .is_some_and(|rec| filter.is_none_or(|f| f.matches(&rec.metadata)))
    }

    /// Offers a scored slot to `top` unless `filter` rejects it (checked only for
    /// candidates good enough to enter).
    #[inline]
    fn offer<'a>(
        &'a self,
        top: &mut TopK<&'a str, &'a Record>,
        filter: Option<&Filter>,
        slot: u32,
        score: f32,
    ) {
        if !top.admits(score) {
            return;
        }
        let Some(rec) = self.record(slot) else { return };
        if filter.is_some_and(|f| !f.matches(&rec.metadata)) {
            return;
        }
        top.push(score, &*rec.id, rec);
    }
}

/// The hits kept by `top`, best first.
fn hits(top: TopK<&str, &Record>) -> Vec<SearchHit> {
    top.into_sorted()
        .into_iter()
        .map(|(score, _, rec)| SearchHit {
            id: rec.id.to_string(),
            content: rec.content.clone(),
            metadata: rec.metadata.clone(),
            score,
        })
        .collect()
}

impl InMemoryVectorStore {
    /// An empty store doing sparse search unless queries carry embeddings.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that embeds, with `embedder`, the documents upserted without an
    /// embedding and the text of queries without one (when the namespace holds embedded
    /// documents), so search is hybrid.
    pub fn with_embedder(embedder: Arc<dyn Embedder>) -> Self {
        Self::new().embedder(embedder)
    }

    /// This store, embedding documents and queries with `embedder` (see
    /// [`with_embedder`](Self::with_embedder)).
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// This store, fusing sparse and dense rankings with `fusion`.
    pub fn with_fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = fusion;
        self
    }

    fn namespace(&self, name: &str) -> Option<Arc<RwLock<Namespace>>> {
        namespace(&self.namespaces, name)
    }

    async fn embed(&self, texts: Vec<String>) -> Result<Option<Vec<Vec<f32>>>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        if texts.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let n = texts.len();
        let vectors = embedder.embed(&texts).await?;
        if vectors.len() != n {
            return Err(MemoryError::invalid(
                "embedder output",
                format!("{} vectors for {n} texts", vectors.len()),
            ));
        }
        Ok(Some(vectors))
    }

    /// Embeds, when an embedder is configured, the documents without a vector (in order).
    async fn embed_missing(&self, documents: &[Document]) -> Result<Option<Vec<Vec<f32>>>> {
        let missing: Vec<String> = match self.embedder {
            None => Vec::new(),
            Some(_) => documents
                .iter()
                .filter(|d| d.embedding.is_none())
                .map(|d| d.content.clone())
                .collect(),
        };
        self.embed(missing).await
    }

    /// The search of `query` in `ns`, here when it is light and the namespace is free,
    /// on the blocking pool otherwise.
    async fn search_in(
        &self,
        ns: Arc<RwLock<Namespace>>,
        query: &SearchQuery,
        embedding: Option<Vec<f32>>,
    ) -> Result<Vec<SearchHit>> {
        let fusion = self.fusion;
        if let Some(guard) = ns.try_read() {
            let hybrid = embedding.is_some() && !query.text.trim().is_empty();
            let bytes = match &embedding {
                Some(_) => guard.scan_bytes(1, query.k, hybrid),
                None => 0,
            };
            if bytes <= INLINE_MAX_SCAN_BYTES {
                return guard.search(query, embedding, fusion);
            }
        }
        let query = query.clone();
        offload::run("search documents", move || {
            ns.read().search(&query, embedding, fusion)
        })
        .await
    }
}

/// The namespace called `name`, if it exists.
fn namespace(namespaces: &Namespaces, name: &str) -> Option<Arc<RwLock<Namespace>>> {
    namespaces.get(name).map(|ns| Arc::clone(&ns))
}

fn namespace_or_create(namespaces: &Namespaces, name: &str) -> Arc<RwLock<Namespace>> {
    if let Some(ns) = namespace(namespaces, name) {
        return ns;
    }
    Arc::clone(&namespaces.entry(name.to_owned()).or_default())
}

/// Runs `f` on the namespace under its read lock: here when the lock is free, on the
/// blocking pool when a writer holds it (so waiting does not stall the runtime).
async fn read_with<T, F>(ns: Arc<RwLock<Namespace>>, what: &'static str, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Namespace) -> T + Send + 'static,
{
    if let Some(guard) = ns.try_read() {
        return Ok(f(&guard));
    }
    offload::run(what, move || Ok(f(&ns.read()))).await
}

/// Runs `f` on the namespace under its write lock: here when the lock is free, on the
/// blocking pool otherwise.
async fn write_with<T, F>(ns: Arc<RwLock<Namespace>>, what: &'static str, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&mut Namespace) -> T + Send + 'static,
{
    if let Some(mut guard) = ns.try_write() {
        return Ok(f(&mut guard));
    }
    offload::run(what, move || Ok(f(&mut ns.write()))).await
}

/// Whether writing `documents` (with `embedded`, the vectors made for those without one)
/// is light enough to run on the caller's thread.
fn write_is_light(documents: &[Document], embedded: Option<&[Vec<f32>]>) -> bool {
    let text: usize = documents.iter().map(|d| d.content.len()).sum();
    let floats: usize = documents
        .iter()
        .filter_map(|d| d.embedding.as_ref())
        .chain(embedded.into_iter().flatten())
        .map(Vec::len)
        .sum();
    text <= INLINE_MAX_TEXT_BYTES && floats <= INLINE_MAX_FLOATS
}

/// Validates and normalises documents, taking the vectors made for those without one
/// from `embedded` in order. Needs no lock.
fn prepare(documents: Vec<Document>, embedded: Option<Vec<Vec<f32>>>) -> Result<Vec<Prepared>> {
    let mut embedded = embedded.map(Vec::into_iter);
    let mut out = Vec::with_capacity(documents.len());
    for doc in documents {
        let id = match doc.id {
            Some(id) if id.is_empty() => {
                return Err(MemoryError::invalid("document id", "must not be empty"))
            }
            Some(id) => id,
            None => ulid::Ulid::new().to_string(),
        };
        let embedding = match doc.embedding {
            Some(v) => Some(v),
            None => embedded.as_mut().and_then(Iterator::next),
        };
        let embedding = embedding
            .map(|v| normalized(v, "document embedding"))
            .transpose()?;
        out.push(Prepared {
            id,
            content: doc.content,
            metadata: doc.metadata,
            embedding,
        });
    }
    Ok(out)
}

/// The terms of a batch, analysed (without any lock) when it is large enough to gain by
/// it; a few documents are analysed as they are written.
fn analyse(prepared: &[Prepared]) -> Option<Analysed> {
    (prepared.len() >= ANALYSED_MIN).then(|| {
        let texts: Vec<&str> = prepared.iter().map(|d| d.content.as_str()).collect();
        Analysed::new(&texts)
    })
}

/// Writes `prepared` into the namespace `name` here, if its lock is free at once;
/// gives the batch back otherwise.
fn try_write_now(
    namespaces: &Namespaces,
    name: &str,
    prepared: Vec<Prepared>,
) -> std::result::Result<Result<Vec<String>>, Vec<Prepared>> {
    let analysed = analyse(&prepared);
    let ns = namespace_or_create(namespaces, name);
    let Some(mut ns) = ns.try_write() else {
        return Err(prepared);
    };
    if ns.retired {
        return Err(prepared);
    }
    Ok(ns.write_all(prepared, analysed))
}

/// Writes `prepared` into the namespace `name`, blocking the thread (call it off the
/// runtime). Analysis runs before the lock is taken; a large batch for a namespace that
/// holds nothing is written into a namespace of its own and swapped in, so readers wait
/// only for the swap.
fn write_batch(
    namespaces: &Namespaces,
    name: &str,
    prepared: Vec<Prepared>,
) -> Result<Vec<String>> {
    let analysed = analyse(&prepared);
    let empty = namespace(namespaces, name).is_none_or(|ns| ns.read().is_pristine());
    if analysed.is_some() && empty {
        let mut fresh = Namespace::default();
        let ids = fresh.write_all(prepared, analysed)?;
        loop {
            let ns = namespace_or_create(namespaces, name);
            let mut ns = ns.write();
            if ns.retired {
                continue; // cleared and unlinked meanwhile: write to the live namespace
            }
            if ns.is_pristine() {
                *ns = fresh;
                return Ok(ids);
            }
            break;
        }
        // Written to meanwhile: write the batch as stored in `fresh` (same documents, same
        // final state per id) into the live namespace.
        let prepared = fresh.into_prepared();
        let analysed = analyse(&prepared);
        return write_locked(namespaces, name, prepared, analysed).map(|_| ids);
    }
    write_locked(namespaces, name, prepared, analysed)
}

/// Writes `prepared` (analysed ahead as `analysed`) under the namespace's write lock.
fn write_locked(
    namespaces: &Namespaces,
    name: &str,
    prepared: Vec<Prepared>,
    analysed: Option<Analysed>,
) -> Result<Vec<String>> {
    loop {
        let ns = namespace_or_create(namespaces, name);
        let mut ns = ns.write();
        if ns.retired {
            continue; // cleared and unlinked meanwhile: write to the live namespace
        }
        return ns.write_all(prepared, analysed);
    }
}

impl InMemoryVectorStore {
    /// Bytes the store's namespaces hold on the heap, estimated (capacities; allocator
    /// overhead not counted): documents, ids, metadata, the inverted index and the
    /// vectors. For caches bounded by size; it walks every document and term of every
    /// namespace (O(documents + terms)), so call it after a load or a batch of writes,
    /// not on every search.
    pub fn heap_bytes(&self) -> usize {
        self.namespaces
            .iter()
            .map(|e| e.key().capacity() + e.value().read().heap_bytes())
            .sum()
    }

    /// What the dense searches of `namespace` have cost so far (all zero for a namespace
    /// that does not exist); see [`DenseStats`].
    pub async fn dense_stats(&self, namespace: &str) -> Result<DenseStats> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(DenseStats::default());
        };
        read_with(ns, "read search statistics", |ns| ns.dense.stats()).await
    }

    /// Answers many queries at once, in order; each answer is what
    /// [`search`](VectorStore::search) returns for that query.
    ///
    /// Queries carrying an embedding are answered together by one pass over the
    /// namespace's vectors (split across the rayon thread pool when large), which costs far
    /// less per query than searching one by one; the others are searched one by one.
    ///
    /// ```
    /// use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = InMemoryVectorStore::new();
    /// store.upsert("n", Document::new("east").with_id("e").with_embedding(vec![1.0, 0.0])).await?;
    /// store.upsert("n", Document::new("north").with_id("n").with_embedding(vec![0.0, 1.0])).await?;
    /// let queries = [
    ///     SearchQuery::new("", 1).with_embedding(vec![0.9, 0.1]),
    ///     SearchQuery::new("", 1).with_embedding(vec![0.1, 0.9]),
    /// ];
    /// let answers = store.search_batch("n", &queries).await?;
    /// assert_eq!(answers[0][0].id, "e");
    /// assert_eq!(answers[1][0].id, "n");
    /// # Ok::<_, agentmemory_core::MemoryError>(())
    /// # }).unwrap();
    /// ```
    pub async fn search_batch(
        &self,
        namespace: &str,
        queries: &[SearchQuery],
    ) -> Result<Vec<Vec<SearchHit>>> {
        let mut answers: Vec<Option<Vec<SearchHit>>> = vec![None; queries.len()];
        let mut dense = Vec::new();
        let mut vectors = Vec::new();
        for (i, q) in queries.iter().enumerate() {
            match &q.embedding {
                Some(v) => {
                    vectors.push(normalized(v.clone(), "query embedding")?);
                    dense.push(i);
                }
                None => answers[i] = Some(self.search(namespace, q).await?),
            }
        }
        if let Some(ns) = self.namespace(namespace).filter(|_| !dense.is_empty()) {
            let ks: Vec<usize> = dense.iter().map(|&i| queries[i].k).collect();
            let filters: Vec<Option<Filter>> =
                dense.iter().map(|&i| queries[i].filter.clone()).collect();
            let k = ks.iter().copied().max().unwrap_or(0);
            let light = ns
                .try_read()
                .is_some_and(|ns| ns.scan_bytes(ks.len(), k, false) <= INLINE_MAX_SCAN_BYTES);
            let found = offload::run_if_heavy(light, "search documents", move || {
                ns.read().nearest_hits(&vectors, &ks, &filters)
            })
            .await?;
            for (&i, hits) in dense.iter().zip(found) {
                answers[i] = Some(hits);
            }
        }
        Ok(answers.into_iter().map(Option::unwrap_or_default).collect())
    }
}

/// Fails unless every embedding of `docs` has the namespace's dimension (or, for a
/// namespace without one, the dimension of the first embedding of the batch).
fn check_dimensions(ns: &Namespace, docs: &[Prepared]) -> Result<()> {
    let mut dim = ns.dense.dim();
    for v in docs.iter().filter_map(|d| d.embedding.as_ref()) {
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
    Ok(())
}

#[async_trait]
impl VectorStore for InMemoryVectorStore {
    /// All or nothing: every document is validated before any is written.
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let embedded = self.embed_missing(&documents).await?;
        let pending = if write_is_light(&documents, embedded.as_deref()) {
            match try_write_now(&self.namespaces, namespace, prepare(documents, embedded)?) {
                Ok(written) => return written,
                // The namespace is being written: wait for it off the runtime.
                Err(prepared) => Pending::Prepared(prepared),
            }
        } else {
            Pending::Raw(documents, embedded)
        };
        let namespaces = Arc::clone(&self.namespaces);
        let name = namespace.to_owned();
        offload::run("upsert documents", move || {
            let prepared = match pending {
                Pending::Prepared(prepared) => prepared,
                Pending::Raw(documents, embedded) => prepare(documents, embedded)?,
            };
            write_batch(&namespaces, &name, prepared)
        })
        .await
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let explicit = query
            .embedding
            .clone()
            .map(|v| normalized(v, "query embedding"))
            .transpose()?;
        if query.k == 0 {
            return Ok(Vec::new());
        }
        let Some(ns) = self.namespace(namespace) else {
            return Ok(Vec::new());
        };
        let embedding = match explicit {
            Some(v) => Some(v),
            None if self.embedder.is_some() => {
                let has_dense = read_with(Arc::clone(&ns), "search documents", |ns| {
                    !ns.dense.is_empty()
                })
                .await?;
                if !has_dense {
                    None
                } else {
                    if query.text.trim().is_empty() {
                        return Ok(Vec::new());
                    }
                    let vectors = self.embed(vec![query.text.clone()]).await?;
                    let v = vectors.and_then(|mut v| v.pop()).ok_or_else(|| {
                        MemoryError::invalid("embedder output", "no vector for the query")
                    })?;
                    Some(normalized(v, "query embedding")?)
                }
            }
            None => None,
        };
        self.search_in(ns, query, embedding).await
    }

    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(None);
        };
        let id = id.to_owned();
        read_with(ns, "get a document", move |ns| ns.document(&id)).await
    }

    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(Vec::new());
        };
        let ids = ids.to_vec();
        read_with(ns, "get documents", move |ns| {
            ids.iter().filter_map(|id| ns.document(id)).collect()
        })
        .await
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(0);
        };
        let ids = ids.to_vec();
        write_with(ns, "delete documents", move |ns| {
            ids.iter().filter(|id| ns.remove(id)).count()
        })
        .await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        // Empty the namespace under its lock and unlink it while still holding the lock,
        // so no memory is kept for cleared namespaces and no write can land in it
        // unseen (writers re-check `retired`). Nobody waits on a namespace lock while
        // holding a map shard, so this cannot deadlock.
        let Some(arc) = self.namespace(namespace) else {
            return Ok(());
        };
        let namespaces = Arc::clone(&self.namespaces);
        let name = namespace.to_owned();
        let unlinked = Arc::clone(&arc);
        write_with(arc, "clear documents", move |ns| {
            *ns = Namespace {
                retired: true,
                ..Namespace::default()
            };
            namespaces.remove_if(&name, |_, current| Arc::ptr_eq(current, &unlinked));
        })
        .await
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(0);
        };
        read_with(ns, "count documents", |ns| ns.ids.len()).await
    }

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(Vec::new());
        };
        read_with(ns, "list documents", |ns| {
            ns.ids.keys().map(|id| id.to_string()).collect()
        })
        .await
    }

    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        let Some(ns) = self.namespace(namespace) else {
            return Ok(Vec::new());
        };
        if from >= to {
            return Ok(Vec::new()); // a reversed range would make `BTreeMap::range` panic
        }
        let (from, to) = (from.to_owned(), to.to_owned());
        read_with(ns, "list documents", move |ns| {
            ns.ids
                .range::<str, _>((Bound::Included(from.as_str()), Bound::Excluded(to.as_str())))
                .map(|(id, _)| id.to_string())
                .collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Letters;

    /// Embeds text as counts of a, b and c.
    #[async_trait]
    impl Embedder for Letters {
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| {
                    ['a', 'b', 'c']
                        .iter()
                        .map(|c| t.matches(*c).count() as f32)
                        .collect()
                })
                .collect())
        }
    }

    #[tokio::test]
    async fn embedder_makes_search_dense() {
        let store = InMemoryVectorStore::with_embedder(Arc::new(Letters));
        store
            .upsert("n", Document::new("aaa").with_id("a"))
            .await
            .unwrap();
        store
            .upsert("n", Document::new("bbb").with_id("b"))
            .await
            .unwrap();
        let hits = store
            .search("n", &SearchQuery::new("ab b", 2))
            .await
            .unwrap();
        assert_eq!(hits[0].id, "b");
        assert!(hits[0].score > hits[1].score);
        let doc = store.get("n", "a").await.unwrap().unwrap();
        assert_eq!(doc.embedding, Some(vec![1.0, 0.0, 0.0]));
        // Text without a, b or c embeds to zero: refused, not silently empty.
        assert!(matches!(
            store.search("n", &SearchQuery::new("zzz", 2)).await,
            Err(MemoryError::InvalidArgument { .. })
        ));
    }

    #[tokio::test]
    async fn batch_is_all_or_nothing() {
        let store = InMemoryVectorStore::new();
        let docs = vec![
            Document::new("one").with_embedding(vec![1.0, 0.0]),
            Document::new("two").with_embedding(vec![1.0, 0.0, 0.0]),
        ];
        assert!(matches!(
            store.upsert_batch("n", docs).await,
            Err(MemoryError::DimensionMismatch {
                expected: 2,
                found: 3
            })
        ));
        assert_eq!(store.len("n").await.unwrap(), 0);
        let bad = vec![
            Document::new("ok"),
            Document::new("zero").with_embedding(vec![0.0]),
        ];
        assert!(store.upsert_batch("n", bad).await.is_err());
        assert_eq!(store.len("n").await.unwrap(), 0);
        assert!(store
            .upsert("n", Document::new("x").with_id(""))
            .await
            .is_err());
    }

    #[tokio::test]
    async fn dimension_is_released_when_the_last_embedding_goes() {
        let store = InMemoryVectorStore::new();
        let id = store
            .upsert("n", Document::new("x").with_embedding(vec![1.0, 2.0]))
            .await
            .unwrap();
        store
            .upsert("n", Document::new("x").with_id(&id))
            .await
            .unwrap();
        store
            .upsert("n", Document::new("y").with_embedding(vec![1.0, 2.0, 3.0]))
            .await
            .unwrap();
        let q = SearchQuery::new("", 5).with_embedding(vec![0.0, 0.0, 1.0]);
        assert_eq!(store.search("n", &q).await.unwrap().len(), 1);
    }

    /// Varied documents: Zipf-like words in mixed case, stop words, accents, CJK,
    /// emoji, empty and punctuation-only texts, ids repeated near and far (within and
    /// across analysis chunks), every third document embedded, some with metadata.
    fn varied(n: usize, seed: u64) -> Vec<Document> {
        const WORDS: &[&str] = &[
            "Red",
            "red",
            "RED",
            "green",
            "blue",
            "apple",
            "pears",
            "fig",
            "cat",
            "dogs",
            "running",
            "runs",
            "the",
            "and",
            "not",
            "crème",
            "Zürich",
            "北京",
            "我住在北京",
            "🍕",
            "👍🏽",
            "3.14",
            "user's",
            "don't",
            "x_y",
            "naïve",
        ];
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..n)
            .map(|i| {
                let r = next();
                let len = (r % 13) as usize;
                let words: Vec<String> = (0..len)
                    .map(|_| {
                        let x = next();
                        // Skewed towards the first words, with a long tail of rare ones.
                        let k = (x % 1000) as usize;
                        if k < 900 {
                            WORDS[(k * k / 40_000) % WORDS.len()].to_owned()
                        } else {
                            format!("rare{}", x % 5_000)
                        }
                    })
                    .collect();
                let content = match r % 50 {
                    0 => String::new(),
                    1 => " ,;!! --".to_owned(),
                    _ => words.join(if r % 7 == 0 { ", " } else { " " }),
                };
                // Every tenth document rewrites an earlier id (a near or a far one).
                let id = if i % 10 == 9 {
                    format!("d{}", (next() as usize) % i)
                } else {
                    format!("d{i}")
                };
                let mut doc = Document::new(content).with_id(id);
                if i % 3 == 0 {
                    let v = (0..4).map(|j| ((next() % 100) as f32 + j as f32) / 50.0 + 0.01);
                    doc = doc.with_embedding(v.collect());
                }
                if i % 4 == 0 {
                    doc = doc.with_metadata("kind", serde_json::json!(i % 8));
                }
                doc
            })
            .collect()
    }

    async fn assert_same_search(a: &InMemoryVectorStore, b: &InMemoryVectorStore) {
        assert_eq!(a.len("n").await.unwrap(), b.len("n").await.unwrap());
        let mut queries: Vec<SearchQuery> = Vec::new();
        let texts = [
            "red",
            "RED apple",
            "running dog",
            "the",
            "crème zurich",
            "北京",
            "🍕 red",
            "rare17 red",
            "rare4999",
            "not fig cat",
            "3.14",
            "don't",
            "pears pear",
        ];
        for (i, t) in texts.iter().enumerate() {
            for k in [1, 10, 100_000] {
                queries.push(SearchQuery::new(*t, k));
            }
            let v: Vec<f32> = (0..4).map(|j| (i + j) as f32 + 0.5).collect();
            queries.push(SearchQuery::new(*t, 10).with_embedding(v.clone()));
            queries.push(SearchQuery::new("", 10).with_embedding(v));
            queries.push(SearchQuery::new(*t, 10).with_filter(Filter::new().eq("kind", 4)));
        }
        for q in &queries {
            let (ha, hb) = (
                a.search("n", q).await.unwrap(),
                b.search("n", q).await.unwrap(),
            );
            let key = |h: &[SearchHit]| -> Vec<(String, u32, String)> {
                h.iter()
                    .map(|h| (h.id.clone(), h.score.to_bits(), h.content.clone()))
                    .collect()
            };
            assert_eq!(key(&ha), key(&hb), "{q:?}");
        }
    }

    /// What `store` answers for `text` (and the embedding `v`) under `filter`: its word
    /// ranking and its meaning ranking (every hit of each, as `(id, score)`), and the
    /// scores of its hybrid top 10.
    async fn rankings(
        store: &InMemoryVectorStore,
        text: &str,
        v: &[f32],
        filter: Option<&Filter>,
    ) -> (Vec<(String, f32)>, Vec<(String, f32)>, Vec<f32>) {
        let query = |text: &str, k: usize| {
            let q = SearchQuery::new(text, k);
            match filter {
                Some(f) => q.with_filter(f.clone()),
                None => q,
            }
        };
        let list = |hits: Vec<SearchHit>| -> Vec<(String, f32)> {
            hits.into_iter().map(|h| (h.id, h.score)).collect()
        };
        let sparse = list(store.search("n", &query(text, 1000)).await.unwrap());
        let dense = list(
            store
                .search("n", &query("", 1000).with_embedding(v.to_vec()))
                .await
                .unwrap(),
        );
        assert!(!sparse.is_empty() && !dense.is_empty(), "{text}");
        let hybrid = store
            .search("n", &query(text, 10).with_embedding(v.to_vec()))
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.score)
            .collect();
        (sparse, dense, hybrid)
    }

    #[tokio::test]
    async fn coverage_hybrid_is_fuse_covered_over_the_filtered_rankings() {
        use crate::vector::fuse::fuse_covered;
        use crate::vector::tfidf;
        let fusion = Fusion::Coverage {
            dense_weight: 0.8,
            power: 3.0,
        };
        let store = InMemoryVectorStore::new().with_fusion(fusion);
        const WORDS: &[&str] = &[
            "red", "apple", "pears", "running", "dog", "nairobi", "sister", "moved", "cake",
        ];
        let texts: Vec<String> = (0..60usize)
            .map(|i| {
                let n = 1 + i % 5;
                (0..n)
                    .map(|j| WORDS[(i * 5 + j * 4 + i * j + i / 3) % WORDS.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let docs: Vec<Document> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let v: Vec<f32> = (0..4)
                    .map(|j| ((i * 13 + j * 5) % 17) as f32 + 0.5)
                    .collect();
                Document::new(t.as_str())
                    .with_id(format!("d{i}"))
                    .with_embedding(v)
                    .with_metadata("kind", serde_json::json!(i % 3))
            })
            .collect();
        store.upsert_batch("n", docs).await.unwrap();
        // Coverage from the documents' own terms, as any backend computes it.
        let doc_terms: Vec<Vec<(String, f32)>> =
            texts.iter().map(|t| tfidf::document_terms(t)).collect();
        let df = |t: &str| {
            doc_terms
                .iter()
                .filter(|d| d.iter().any(|(k, _)| k == t))
                .count()
        };
        let mut covered_somewhere = false;
        // "unheard" is in no document: it lowers every document's coverage.
        for (i, text) in [
            "red apple",
            "nairobi sister",
            "dog unheard",
            "cake cake moved",
        ]
        .iter()
        .enumerate()
        {
            let v: Vec<f32> = (0..4).map(|j| (i + j) as f32 + 0.5).collect();
            for filter in [None, Some(Filter::new().eq("kind", 1))] {
                let (sparse, dense, got) = rankings(&store, text, &v, filter.as_ref()).await;
                let q = tfidf::query_terms(text);
                let coverage: Vec<f32> = sparse
                    .iter()
                    .map(|(id, _)| {
                        let at: usize = id[1..].parse().unwrap();
                        tfidf::coverage(&q, &doc_terms[at], texts.len(), df)
                    })
                    .collect();
                covered_somewhere |= coverage.iter().any(|&c| c > 0.0 && c < 1.0);
                let want: Vec<f32> = fuse_covered(&sparse, Some(&coverage), &dense, fusion)
                    .into_iter()
                    .take(10)
                    .map(|(_, s)| s)
                    .collect();
                assert_eq!(got.len(), want.len(), "{text} {filter:?}");
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-5,
                        "{text} {filter:?}: {got:?} vs {want:?}"
                    );
                }
                // Not the max-scaled scores: the coverage is what ranks the word side.
                let scaled: Vec<f32> = fuse(&sparse, &dense, fusion)
                    .into_iter()
                    .take(10)
                    .map(|(_, s)| s)
                    .collect();
                assert_ne!(scaled, want, "{text} {filter:?}");
            }
        }
        assert!(covered_somewhere, "some document covers a query partly");
    }

    #[tokio::test]
    async fn max_scaled_hybrid_is_fuse_over_the_filtered_rankings() {
        let fusion = Fusion::MaxScaled { dense_weight: 0.8 };
        let store = InMemoryVectorStore::new().with_fusion(fusion);
        store.upsert_batch("n", varied(400, 11)).await.unwrap();
        for (i, text) in ["red apple", "rare17 red", "running dog", "pears pear"]
            .iter()
            .enumerate()
        {
            let v: Vec<f32> = (0..4).map(|j| (i + j) as f32 + 0.5).collect();
            for filter in [None, Some(Filter::new().eq("kind", 4))] {
                let (sparse, dense, got) = rankings(&store, text, &v, filter.as_ref()).await;
                let want: Vec<f32> = fuse(&sparse, &dense, fusion)
                    .into_iter()
                    .take(10)
                    .map(|(_, s)| s)
                    .collect();
                assert_eq!(got.len(), want.len(), "{text} {filter:?}");
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-4,
                        "{text} {filter:?}: {got:?} vs {want:?}"
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn a_batch_builds_what_upserts_one_by_one_build() {
        let docs = varied(20_000, 3);
        let one_by_one = InMemoryVectorStore::new();
        for doc in docs.clone() {
            one_by_one.upsert("n", doc).await.unwrap();
        }
        let batched = InMemoryVectorStore::new();
        batched.upsert_batch("n", docs.clone()).await.unwrap();
        assert_same_search(&one_by_one, &batched).await;
        for id in ["d0", "d9", "d19999", "d12345"] {
            assert_eq!(
                one_by_one.get("n", id).await.unwrap(),
                batched.get("n", id).await.unwrap()
            );
        }
        // Into a namespace that has documents and holes: a second batch rewriting many
        // of them, after deletes, is still the same as writing one by one.
        let gone: Vec<String> = (0..20_000).step_by(7).map(|i| format!("d{i}")).collect();
        one_by_one.delete("n", &gone).await.unwrap();
        batched.delete("n", &gone).await.unwrap();
        let more = varied(12_000, 9);
        for doc in more.clone() {
            one_by_one.upsert("n", doc).await.unwrap();
        }
        batched.upsert_batch("n", more).await.unwrap();
        assert_same_search(&one_by_one, &batched).await;
    }

    /// The fallback of a batch built aside whose namespace was written meanwhile: the
    /// documents taken back out of the namespace built aside are the batch's final state.
    #[tokio::test]
    async fn a_namespace_built_aside_gives_its_documents_back() {
        let docs = varied(3_000, 5);
        let direct = InMemoryVectorStore::new();
        direct.upsert_batch("n", docs.clone()).await.unwrap();
        let mut aside = Namespace::default();
        let prepared = prepare(docs, None).unwrap();
        let analysed = analyse(&prepared);
        aside.write_all(prepared, analysed).unwrap();
        let back = aside.into_prepared();
        let replayed = InMemoryVectorStore::new();
        write_batch(&replayed.namespaces, "n", back).unwrap();
        assert_same_search(&direct, &replayed).await;
    }

    #[tokio::test]
    async fn slots_are_reused_after_delete() {
        let store = InMemoryVectorStore::new();
        for i in 0..10 {
            store
                .upsert(
                    "n",
                    Document::new(format!("word{i} common")).with_id(format!("d{i}")),
                )
                .await
                .unwrap();
        }
        let ids: Vec<String> = (0..5).map(|i| format!("d{i}")).collect();
        assert_eq!(store.delete("n", &ids).await.unwrap(), 5);
        store
            .upsert("n", Document::new("fresh common").with_id("new"))
            .await
            .unwrap();
        let ns = store.namespace("n").unwrap();
        assert_eq!(ns.read().records.len(), 10);
        let hits = store
            .search("n", &SearchQuery::new("common", 10))
            .await
            .unwrap();
        assert_eq!(hits.len(), 6);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
}
