//! An incrementally maintained inverted index scoring documents by TF-IDF cosine.
//!
//! # Model
//!
//! - term weight in a document or query: `(1 + ln tf) × idf`, with
//!   `idf = ln(1 + N / df)` (`N` documents indexed, `df` of them containing the term);
//! - score: cosine of the two weight vectors, in `0.0..=1.0`.
//!
//! # Keeping it correct while IDF moves
//!
//! Postings store only the term count `tf`, which never changes for a document (its
//! weight `1 + ln tf` is recomputed when read). IDF is computed at query time from the
//! current `N` and `df`, so adding or removing documents is reflected immediately without
//! re-indexing anything.
//!
//! A document's norm depends on the IDF of *all* its terms, so it goes stale whenever
//! the index changes. Each document caches its norm together with the index *epoch*
//! (a counter bumped by every insert and remove) it was computed at; a search recomputes
//! the norm only for the candidate documents it touches whose cache is stale, from an
//! IDF table that is itself cached per epoch. Scores are therefore always exact for the
//! current index, a search never touches documents outside the query terms' postings,
//! and repeated searches between writes reuse the norms.
//!
//! # Compression
//!
//! Each term's postings are a `PostingList`: blocks of up to 128 `(slot, tf)`, the
//! whole list sorted by slot, slot gaps and counts bit-packed (SIMD, the `bitpacking`
//! crate) once a block is full, varints while it is open (1 to 1.5 bytes a posting on a
//! Zipf corpus, against eight for a slot and an `f32`). Each document keeps its own term
//! list, `(term id, tf)` by term id as `codec` varints: it gives the terms a norm sums
//! over, and those a removal must visit. Searches decode a block at a time, and a top-k
//! search looks documents up in the lists of common terms instead of decoding them whole
//! ([`SparseIndex::score_top`]).
//!
//! # Updates
//!
//! Removing a document visits its terms and removes its posting from each one's list,
//! re-encoding the one block that holds it (found by the blocks' slot ranges), so a
//! removal costs O(its distinct terms × a block) and leaves no tombstone behind: a slot
//! is free for reuse as soon as it is removed, and a document written into a reused slot
//! goes into the block whose range holds it (a full block splits). Terms whose posting list empties are
//! dropped and their ids reused.

#[cfg(test)]
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::analyse::{Analysed, UNMAPPED};
use crate::codec::{self, tf_weight, tf_weights, weight_in, Pairs};
use crate::dictionary::Dictionary;
use crate::postings::{Block, Cursor, Decoded, PostingList, BLOCK};
use crate::shared::Buf;
use crate::text;
use crate::tfidf::{document_counts, idf, inv_norm, Ubiquity};

/// One term's postings in a [`SparseIndex`], with the block maxima of a long list.
#[derive(Debug, Default)]
pub struct Term {
    pub(crate) postings: PostingList,
    /// Block maxima of a long posting list, for [`SparseIndex::score_top`]; valid for
    /// one epoch, computed when a search first needs them.
    bounds: Mutex<Option<Arc<BlockBounds>>>,
}

/// Lists at least this long get block bounds; shorter ones are cheaper to scan whole.
const BOUNDED_MIN: usize = 8 * BLOCK;

/// Upper bounds on a term's document-side factor `(1 + ln tf) / |d|` per block of its
/// [`PostingList`] (in list order), and over the whole list, at one epoch.
#[derive(Debug)]
struct BlockBounds {
    epoch: u64,
    blocks: Vec<f32>,
    max: f32,
}

/// A document's cached `1 / norm` and the epoch it was computed at, in one atomic word
/// (eight bytes a slot, scanned with good locality): the `f32` bits of `1 / norm` (0
/// for a document without terms) above the low 32 bits of the epoch (`tag`).
#[derive(Debug)]
pub struct NormCell(AtomicU64);

impl NormCell {
    pub(crate) fn stale() -> Self {
        Self(AtomicU64::new(u64::from(STALE)))
    }
}

/// The tag of a norm computed at `epoch`. The index skips the epochs tagged [`STALE`] and
/// marks every cell stale when the tags wrap around (once every 2³² writes), so a cell's
/// tag equals the current one only if it was computed at the current epoch.
#[inline]
fn tag(epoch: u64) -> u32 {
    epoch as u32
}

/// The tag of a norm never computed.
const STALE: u32 = u32::MAX;

/// IDF of every term id, valid for one epoch.
#[derive(Debug)]
struct IdfTable {
    epoch: u64,
    idf: Vec<f32>,
}

/// An inverted index over documents identified by small integer slots chosen by the caller.
#[derive(Debug, Default)]
pub struct SparseIndex {
    pub(crate) dict: Dictionary,
    /// By term id (an empty list for a free id).
    pub(crate) terms: Vec<Term>,
    /// Each slot's terms, `(term id, tf)` by term id, `codec`-encoded after 0.
    pub docs: Vec<Option<Buf<u8>>>,
    pub(crate) norms: Vec<NormCell>,
    /// Terms given room ahead of a batch, to trim by [`shrink_to_fit`](Self::shrink_to_fit).
    reserved: Vec<u32>,
    pub(crate) doc_count: usize,
    pub(crate) epoch: u64,
    idf_cache: Mutex<Option<Arc<IdfTable>>>,
}

impl SparseIndex {
    /// An empty index.
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of documents indexed.
    pub fn len(&self) -> usize {
        self.doc_count
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.doc_count == 0
    }

    /// Number of document slots (documents and slots left empty).
    pub fn slots(&self) -> usize {
        self.docs.len()
    }

    /// Number of distinct terms.
    #[cfg(test)]
    pub fn vocabulary(&self) -> usize {
        self.dict.len()
    }

    /// Indexes `text` under `slot`, replacing whatever the slot held.
    pub fn insert(&mut self, slot: u32, text: &str) {
        self.remove(slot);
        let mut terms: Vec<(u32, u32)> = document_counts(text)
            .into_iter()
            .map(|(text, tf)| (self.term_id(&text), tf))
            .collect();
        self.place(slot, &mut terms);
    }

    /// Records `terms` (`(term id, tf)`, distinct terms) as the document in the empty
    /// `slot`: its postings and its term list.
    fn place(&mut self, slot: u32, terms: &mut [(u32, u32)]) {
        terms.sort_unstable_by_key(|&(term, _)| term);
        for &(term, tf) in terms.iter() {
            self.terms[term as usize].postings.insert(slot, tf);
        }
        let mut encoded = Vec::with_capacity(2 * terms.len());
        codec::encode(&mut encoded, 0, terms.iter().copied());
        let idx = slot as usize;
        if self.docs.len() <= idx {
            self.docs.resize_with(idx + 1, || None);
            self.norms.resize_with(idx + 1, NormCell::stale);
        }
        self.docs[idx] = Some(Buf::Owned(encoded.into_boxed_slice().into_vec()));
        self.doc_count += 1;
        self.advance();
    }

    /// Moves to the next epoch: every cached norm and bound goes stale.
    fn advance(&mut self) {
        self.epoch += 1;
        match tag(self.epoch) {
            STALE => self.advance(),
            0 => {
                // Tags wrapped around: no old tag may pass for a new one.
                for cell in &mut self.norms {
                    *cell = NormCell::stale();
                }
            }
            _ => {}
        }
    }

    /// Indexes document `i` of `batch` under `slot`, replacing whatever the slot held:
    /// the same as [`insert`](Self::insert) of its text (same term ids, postings and
    /// counts, so the same scores to the bit), without analysing it again. Inserting a
    /// batch's documents in order, under the index's lock, is inserting them one by one.
    pub fn insert_analysed(&mut self, slot: u32, batch: &mut Analysed, i: usize) {
        let vocabulary = self.dict.len();
        self.remove(slot);
        if self.dict.len() < vocabulary {
            // Dropped term ids may be reused: mappings are checked from now on.
            batch.recheck = true;
        }
        let recheck = batch.recheck;
        let (c, j) = batch.locate(i);
        let chunk = &mut batch.chunks[c];
        let counted = &chunk.terms[chunk.range(j)];
        let mut terms = Vec::with_capacity(counted.len());
        for (local, tf) in Pairs::new(counted, 0) {
            let text = &chunk.vocab[local as usize];
            let mapped = &mut chunk.mapped[local as usize];
            if *mapped == UNMAPPED || (recheck && self.dict.text(*mapped) != &**text) {
                *mapped = self.term_id(text);
                // First use in this chunk: room for the chunk's documents using the term.
                let df = chunk.df[local as usize] as usize;
                self.terms[*mapped as usize].postings.reserve(df);
                self.reserved.push(*mapped);
            }
            terms.push((*mapped, tf));
        }
        self.place(slot, &mut terms);
    }

    /// Makes room for `additional` more document slots.
    pub fn reserve(&mut self, additional: usize) {
        self.docs.reserve(additional);
        self.norms.reserve(additional);
    }

    /// Gives back the room reserved for the postings of a batch
    /// ([`insert_analysed`](Self::insert_analysed)) and not used: call once the batch is in.
    pub fn shrink_to_fit(&mut self) {
        for term in std::mem::take(&mut self.reserved) {
            if let Some(t) = self.terms.get_mut(term as usize) {
                t.postings.shrink_to_fit();
            }
        }
    }

    /// Bytes the index holds on the heap (capacities, not lengths; allocator overhead
    /// not counted). Walks every term: O(terms + documents), for a cache's size estimate,
    /// not for every call.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let terms: usize = self.terms.iter().map(|t| t.postings.heap_bytes()).sum();
        let docs: usize = self.docs.iter().flatten().map(|d| d.len()).sum();
        terms
            + self.dict.heap_bytes()
            + docs
            + self.terms.capacity() * size_of::<Term>()
            + self.reserved.capacity() * size_of::<u32>()
            + self.docs.capacity() * size_of::<Option<Buf<u8>>>()
            + self.norms.capacity() * size_of::<NormCell>()
    }

    /// Makes room for `additional` more distinct terms (a batch's vocabulary), so
    /// inserting it does not grow the term table step by step.
    pub fn reserve_terms(&mut self, additional: usize) {
        self.dict.reserve(additional);
        self.terms.reserve(additional);
    }

    fn term_id(&mut self, text: &str) -> u32 {
        let (id, new) = self.dict.intern(text);
        if new && id as usize == self.terms.len() {
            self.terms.push(Term::default());
        }
        id
    }

    /// Removes the document in `slot`; whether there was one.
    pub fn remove(&mut self, slot: u32) -> bool {
        let Some(doc) = self.docs.get_mut(slot as usize).and_then(Option::take) else {
            return false;
        };
        for (id, _) in Pairs::new(&doc, 0) {
            let term = &mut self.terms[id as usize];
            let removed = term.postings.remove(slot);
            debug_assert!(removed, "slot {slot} missing from term {id}'s postings");
            if term.postings.is_empty() {
                *term.bounds.get_mut() = None;
                self.dict.remove(id);
            }
        }
        self.doc_count -= 1;
        self.advance();
        true
    }

    fn idf_table(&self) -> Arc<IdfTable> {
        let mut cache = self.idf_cache.lock();
        if let Some(table) = cache.as_ref().filter(|t| t.epoch == self.epoch) {
            return Arc::clone(table);
        }
        let n = self.doc_count;
        let table = Arc::new(IdfTable {
            epoch: self.epoch,
            idf: self
                .terms
                .iter()
                .map(|t| idf(n, t.postings.len()))
                .collect(),
        });
        *cache = Some(Arc::clone(&table));
        table
    }

    /// `1 / norm` of the document in `slot` under the current IDF, from the cache when
    /// it was computed at this epoch.
    #[inline]
    fn inv_norm(&self, slot: usize, table: &IdfTable) -> f32 {
        let Some(cell) = self.norms.get(slot) else {
            return 0.0;
        };
        // Tag and value are read and written as one word. Concurrent readers at one
        // epoch compute the same value, so racing stores are harmless; writers hold
        // `&mut self`.
        let now = tag(self.epoch);
        let word = cell.0.load(Ordering::Relaxed);
        if word as u32 == now {
            return f32::from_bits((word >> 32) as u32);
        }
        let Some(Some(doc)) = self.docs.get(slot) else {
            return 0.0;
        };
        let inv =
            inv_norm(Pairs::new(doc, 0).map(|(t, tf)| (tf_weight(tf), table.idf[t as usize])));
        cell.0.store(
            u64::from(inv.to_bits()) << 32 | u64::from(now),
            Ordering::Relaxed,
        );
        inv
    }

    /// The known terms of `query` with their weights `(1 + ln count) × idf`, and
    /// `1 / |query|`. `None` when no query term is known.
    fn query_terms(&self, query: &str) -> Option<QueryTerms> {
        // Known query terms with their counts, looked up without allocating a term.
        let mut known: Vec<(u32, f32)> = Vec::new();
        text::for_each_term(query, |t| {
            if let Some(id) = self.dict.get(t) {
                match known.iter_mut().find(|(k, _)| *k == id) {
                    Some((_, count)) => *count += 1.0,
                    None => known.push((id, 1.0)),
                }
            }
        });
        let df = |id: u32| self.terms[id as usize].postings.len();
        let rule = Ubiquity::of(self.doc_count, known.iter().map(|&(id, _)| df(id)));
        known.retain(|&(id, _)| rule.weighs(df(id)));
        let table = self.idf_table();
        let terms: Vec<(u32, f32)> = known
            .into_iter()
            .map(|(id, count)| (id, (1.0 + count.ln()) * table.idf[id as usize]))
            .collect();
        let q_norm_sq: f32 = terms.iter().map(|(_, w)| w * w).sum();
        if terms.is_empty() || q_norm_sq <= 0.0 {
            return None;
        }
        Some(QueryTerms {
            terms,
            inv_q: 1.0 / q_norm_sq.sqrt(),
            table,
        })
    }

    /// Calls `f(slot, cosine)` for every document sharing at least one term with
    /// `query`, in no particular order; cosine is within `0.0..=1.0`.
    ///
    /// Costs O(postings of the query terms) plus a zeroed buffer of one `f32` per slot.
    pub fn score(&self, query: &str, mut f: impl FnMut(u32, f32)) {
        let Some(QueryTerms {
            terms,
            inv_q,
            table,
        }) = self.query_terms(query)
        else {
            return;
        };
        let mut acc = vec![0.0f32; self.docs.len()];
        let mut buf = Box::<Decoded>::default();
        // In query order: the sums `score_top` makes, to the bit.
        for &(term, q_weight) in &terms {
            let factor = q_weight * table.idf[term as usize];
            for block in self.terms[term as usize].postings.blocks() {
                add_block(&mut acc, block, factor, &mut buf);
            }
        }
        for &(term, _) in &terms {
            for block in self.terms[term as usize].postings.blocks() {
                block.decode_slots(&mut buf);
                for &slot in &buf.slots[..buf.len] {
                    let dot = std::mem::take(&mut acc[slot as usize]);
                    if dot <= 0.0 {
                        continue; // scored already
                    }
                    let inv_d = self.inv_norm(slot as usize, &table);
                    if inv_d > 0.0 {
                        f(slot, (dot * inv_d * inv_q).clamp(0.0, 1.0));
                    }
                }
            }
        }
    }

    /// Calls `f(slot, coverage)` for every document sharing at least one term with
    /// `query`, in no particular order: the share of the query's term weight the document
    /// holds, as [`tfidf::coverage`](super::tfidf::coverage) computes it (a query term no
    /// document holds weighs as one a single document holds), to the bit.
    ///
    /// Costs O(postings of the query terms) plus a zeroed buffer of one `f32` per slot.
    pub fn coverage(&self, query: &str, mut f: impl FnMut(u32, f32)) {
        // Every query term with its count, known ones with their id, in query order.
        let mut terms: Vec<(Option<u32>, Box<str>, f32)> = Vec::new();
        text::for_each_term(query, |t| {
            match terms.iter_mut().find(|(_, k, _)| &**k == t) {
                Some((_, _, count)) => *count += 1.0,
                None => terms.push((self.dict.get(t), t.into(), 1.0)),
            }
        });
        let df = |id: Option<u32>| id.map_or(0, |id| self.terms[id as usize].postings.len());
        let rule = Ubiquity::of(self.doc_count, terms.iter().map(|(id, _, _)| df(*id)));
        terms.retain(|(id, _, _)| rule.weighs(df(*id)));
        if terms.iter().all(|(id, _, _)| id.is_none()) {
            return;
        }
        let table = self.idf_table();
        let unknown = idf(self.doc_count, 1);
        let weighted: Vec<(Option<u32>, f32)> = terms
            .iter()
            .map(|&(id, _, count)| {
                let idf = id.map_or(unknown, |id| table.idf[id as usize]);
                (id, (1.0 + count.ln()) * idf)
            })
            .collect();
        let total: f32 = weighted.iter().map(|(_, w)| w).sum();
        if total <= 0.0 {
            return;
        }
        let mut acc = vec![0.0f32; self.docs.len()];
        let mut buf = Box::<Decoded>::default();
        for &(id, w) in &weighted {
            if let Some(id) = id {
                for block in self.terms[id as usize].postings.blocks() {
                    block.decode_slots(&mut buf);
                    for &slot in &buf.slots[..buf.len] {
                        acc[slot as usize] += w;
                    }
                }
            }
        }
        for (slot, &held) in acc.iter().enumerate() {
            if held > 0.0 {
                f(slot as u32, (held / total).clamp(0.0, 1.0));
            }
        }
    }

    /// The block bounds of `term`'s posting list at the current epoch (computed now
    /// when the cached ones are older): one pass over the list, which also refreshes
    /// the norms it reads, so later searches reuse both until the next write.
    fn block_bounds(&self, term: u32, table: &IdfTable) -> Arc<BlockBounds> {
        let t = &self.terms[term as usize];
        let mut cached = t.bounds.lock();
        if let Some(bounds) = cached.as_ref().filter(|b| b.epoch == self.epoch) {
            return Arc::clone(bounds);
        }
        let mut buf = Box::<Decoded>::default();
        let blocks: Vec<f32> = t
            .postings
            .blocks()
            .map(|block| {
                block.decode(&mut buf);
                (0..buf.len).fold(0.0f32, |m, i| {
                    let (slot, tf) = buf.get(i);
                    m.max(tf_weight(tf) * self.inv_norm(slot as usize, table))
                })
            })
            .collect();
        let max = blocks.iter().copied().fold(0.0f32, f32::max);
        let bounds = Arc::new(BlockBounds {
            epoch: self.epoch,
            blocks,
            max,
        });
        *cached = Some(Arc::clone(&bounds));
        bounds
    }

    /// Like [`score`](Self::score) for a top-k search: `f(slot, cosine)` returns the
    /// score a candidate now needs to be kept (`NEG_INFINITY` while everything is), and
    /// candidates that provably cannot reach it are never computed. Scores are exact (the
    /// same `f32`s as [`score`](Self::score)'s); only documents that cannot enter the
    /// top k are skipped.
    ///
    /// A term's share of a document's cosine is `q_t × idf_t × (1 + ln tf) / |d| / |q|`.
    /// Its document-side factor `(1 + ln tf) / |d|` is at most `1 / idf_t`, and long
    /// posting lists keep its maximum per block (computed once per index epoch, see
    /// `BlockBounds`). Query terms are visited in decreasing order of their largest
    /// possible share, and each document is decided once, under the first of them it
    /// holds; whole blocks whose bound plus the shares of the terms not yet visited is
    /// below the threshold are skipped, and once the unvisited terms' shares alone are,
    /// the search stops. So a query for a word in most documents scores the few blocks
    /// holding its strongest documents, and a rare word mixed with common ones scores the
    /// rare word's documents and little else.
    ///
    /// When the strongest term is rare next to the others (most queries), a document's
    /// dot product is completed by looking it up in the other terms' lists (`Cursor`:
    /// lists are sorted by slot, so a lookup skips whole blocks and unpacks only the block
    /// that may hold the document), and only after its bound, tightened by the bounds of
    /// the blocks it would be in, still reaches the threshold; a block of the term being
    /// visited is skipped when its bound plus the largest bounds of the other terms'
    /// blocks meeting its slot range cannot reach it. So the lists of common words are
    /// mostly never unpacked. A query of common words only, or of many terms, sums every
    /// posting into one array of dot products first instead, which costs less there
    /// (`TopSearch::completion`).
    pub fn score_top(&self, query: &str, f: impl FnMut(u32, f32) -> f32) {
        self.score_top_by(query, None, f);
    }

    /// [`score_top`](Self::score_top), its way of completing dot products chosen by cost
    /// unless `forced` (tests hold both ways to the same results).
    fn score_top_by(
        &self,
        query: &str,
        forced: Option<Completion>,
        mut f: impl FnMut(u32, f32) -> f32,
    ) {
        let Some(QueryTerms {
            terms,
            inv_q,
            table,
        }) = self.query_terms(query)
        else {
            return;
        };
        // Per term: weight × idf (its factor in the dot product) and its bound.
        let mut plan: Vec<Planned> = terms
            .iter()
            .enumerate()
            .map(|(at, &(term, w))| {
                let weight = w * table.idf[term as usize];
                let long = self.terms[term as usize].postings.len() >= BOUNDED_MIN;
                let bounds = long.then(|| self.block_bounds(term, &table));
                let share = match &bounds {
                    Some(b) => weight * b.max * inv_q,
                    None => w * inv_q,
                };
                Planned {
                    term,
                    at,
                    weight,
                    share,
                    bounds,
                }
            })
            .collect();
        plan.sort_by(|a, b| b.share.total_cmp(&a.share));
        let search = TopSearch {
            index: self,
            rest: rest_bounds(&plan),
            plan,
            inv_q,
            table: &table,
        };
        let completion = forced.unwrap_or_else(|| search.completion());
        match completion {
            Completion::Lookups => search.looked_up(terms.len(), &mut f),
            Completion::OneArray => search.accumulated(&terms, &mut f),
        }
    }
}

/// How [`SparseIndex::score_top`] completes the dot products of the documents it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Completion {
    /// By looking each document up in the other terms' lists.
    Lookups,
    /// From one array of dot products summed over every posting first.
    OneArray,
}

/// Most query terms for which [`SparseIndex::score_top`] completes dot products by
/// looking documents up in the other terms' lists: each document it decides costs a
/// lookup in every other list, so a long query (a pasted message) sums every posting into
/// one array instead, at a cost independent of the number of terms.
const LOOKUP_MAX_TERMS: usize = 6;

/// Blocks of the strongest term visited first by [`TopSearch::looked_up`] (those of
/// largest bound), to raise the threshold early.
const SEED_BLOCKS: usize = 8;

/// Cost of deciding a document by lookups, in postings summed into one array: a
/// document met under the strongest term costs a lookup in each other term's list
/// (locating its block, unpacking it when first met, stepping to the slot), several
/// times the add of one posting.
const LOOKUP_COST: usize = 4;

/// Adds `(1 + ln tf) × factor` to `acc[slot]` for each posting of `block`.
#[inline]
fn add_block(acc: &mut [f32], block: Block<'_>, factor: f32, buf: &mut Decoded) {
    if block.all_single() {
        block.decode_slots(buf);
        for &slot in &buf.slots[..buf.len] {
            acc[slot as usize] += factor;
        }
    } else {
        block.decode(buf);
        let table = tf_weights();
        for (&slot, &tf) in buf.slots[..buf.len].iter().zip(&buf.tfs[..buf.len]) {
            acc[slot as usize] += weight_in(table, tf + 1) * factor;
        }
    }
}

/// `rest[i]`: a bound on the cosine of a document holding only terms `i..` of `plan`.
fn rest_bounds(plan: &[Planned]) -> Vec<f32> {
    let mut rest = vec![0.0f32; plan.len() + 1];
    for i in (0..plan.len()).rev() {
        rest[i] = rest[i + 1] + plan[i].share;
    }
    rest
}

/// Whether `bound` is certainly below `threshold`, with a margin for float rounding:
/// never skip on a bound that is merely close.
#[inline]
fn below(bound: f32, threshold: f32) -> bool {
    bound * (1.0 + 1e-3) + 1e-6 < threshold
}

/// One top-k search of [`SparseIndex::score_top`]: its plan and bounds.
struct TopSearch<'a> {
    index: &'a SparseIndex,
    /// Query terms by decreasing share.
    plan: Vec<Planned>,
    rest: Vec<f32>,
    inv_q: f32,
    table: &'a IdfTable,
}

impl TopSearch<'_> {
    /// [`Completion::Lookups`] when completing dot products by lookups ([`looked_up`](Self::looked_up)) should
    /// cost less than summing every posting ([`accumulated`](Self::accumulated)): when
    /// the query has few terms and the strongest one (whose documents are decided first,
    /// each with a lookup in every other list) is rare next to the others. A query of
    /// common words only (where bounds prune little) sums everything, as one of a single
    /// word never needs to.
    fn completion(&self) -> Completion {
        let m = self.plan.len();
        if m > LOOKUP_MAX_TERMS {
            return Completion::OneArray;
        }
        let len = |p: &Planned| self.index.terms[p.term as usize].postings.len();
        let all: usize = self.plan.iter().map(len).sum();
        if len(&self.plan[0]) * (m - 1) * LOOKUP_COST <= all {
            Completion::Lookups
        } else {
            Completion::OneArray
        }
    }

    /// Whether block `b` of planned term `i` can be skipped: its bound plus the shares of
    /// the terms after `i` is below `threshold`.
    #[inline]
    fn skips(&self, i: usize, b: usize, threshold: f32) -> bool {
        let p = &self.plan[i];
        p.bounds.as_ref().is_some_and(|bounds| {
            below(
                p.weight * bounds.blocks[b] * self.inv_q + self.rest[i + 1],
                threshold,
            )
        })
    }

    /// Dot products completed by lookups (see [`SparseIndex::score_top`]); `n_terms`
    /// query terms.
    fn looked_up(&self, n_terms: usize, f: &mut impl FnMut(u32, f32) -> f32) {
        let lists: Vec<&PostingList> = self
            .plan
            .iter()
            .map(|p| &self.index.terms[p.term as usize].postings)
            .collect();
        let mut cursors: Vec<Cursor<'_>> = lists.iter().map(|l| Cursor::new(l)).collect();
        // Each term's part of the dot product, in query order (summed in that order, as
        // `score` sums, so the cosines are the same to the bit).
        let mut parts = vec![0.0f32; n_terms];
        // Per later term: the bound of the block a document would be in, if any may
        // hold it.
        let mut later: Vec<Option<f32>> = vec![None; self.plan.len()];
        let mut buf = Box::<Decoded>::default();
        let mut threshold = f32::NEG_INFINITY;
        for (i, p) in self.plan.iter().enumerate() {
            if below(self.rest[i], threshold) {
                break;
            }
            for c in &mut cursors {
                c.rewind();
            }
            let (earlier, rest) = cursors.split_at_mut(i);
            let later_cursors = &mut rest[1..];
            let mut prev = 0;
            for b in self.visit_order(i) {
                if b < prev {
                    // Back to the start after the seeds: cursors move forward only.
                    later_cursors.iter_mut().for_each(Cursor::rewind);
                }
                prev = b;
                if below(self.rest[i], threshold) {
                    break;
                }
                if self.skips(i, b, threshold) {
                    continue;
                }
                let block = lists[i].block(b);
                // The block's bound with, for each later term, the largest bound of its
                // blocks meeting this block's slot range (0 when none does).
                let (lo, hi) = block.range();
                let mut block_bound = match &p.bounds {
                    Some(bounds) => p.weight * bounds.blocks[b] * self.inv_q,
                    None => p.share,
                };
                for (j, c) in later_cursors.iter_mut().enumerate() {
                    let q = &self.plan[i + 1 + j];
                    let met = c.overlapping(lo, hi);
                    block_bound += match &q.bounds {
                        _ if met.is_empty() => 0.0,
                        Some(bounds) => {
                            q.weight
                                * self.inv_q
                                * bounds.blocks[met].iter().fold(0.0f32, |m, &x| m.max(x))
                        }
                        None => q.share,
                    };
                }
                if below(block_bound, threshold) {
                    continue;
                }
                block.decode(&mut buf);
                'docs: for k in 0..buf.len {
                    let (slot, tf) = buf.get(k);
                    // A document holding an earlier (stronger) term was decided there.
                    for c in earlier.iter_mut() {
                        if c.seek(slot).is_some() {
                            continue 'docs;
                        }
                    }
                    let inv_d = self.index.inv_norm(slot as usize, self.table);
                    if inv_d <= 0.0 {
                        continue;
                    }
                    let scale = inv_d * self.inv_q;
                    let own = tf_weight(tf) * p.weight;
                    // Bound: this term's exact share, and for each later term the bound
                    // of the block the document would be in (0 when none may hold it).
                    let mut bound = own * scale;
                    for (j, c) in later_cursors.iter_mut().enumerate() {
                        let q = &self.plan[i + 1 + j];
                        later[j] = c.locate(slot).map(|b| match &q.bounds {
                            Some(bounds) => q.weight * bounds.blocks[b] * self.inv_q,
                            None => q.share,
                        });
                        bound += later[j].unwrap_or(0.0);
                    }
                    if below(bound, threshold) {
                        continue;
                    }
                    parts.fill(0.0);
                    parts[p.at] = own;
                    for (j, c) in later_cursors.iter_mut().enumerate() {
                        let Some(part_bound) = later[j] else {
                            continue;
                        };
                        let q = &self.plan[i + 1 + j];
                        bound -= part_bound;
                        if let Some(tf) = c.seek(slot) {
                            let part = tf_weight(tf) * q.weight;
                            parts[q.at] = part;
                            bound += part * scale;
                        }
                        if below(bound, threshold) {
                            continue 'docs;
                        }
                    }
                    let dot = parts.iter().fold(0.0f32, |sum, &x| sum + x);
                    let cos = (dot * inv_d * self.inv_q).clamp(0.0, 1.0);
                    if !below(cos, threshold) {
                        threshold = f(slot, cos);
                    }
                }
            }
        }
    }

    /// The order `looked_up` visits planned term `i`'s blocks in: slot order, except that
    /// the strongest term with block bounds has its [`SEED_BLOCKS`] blocks of largest
    /// bound visited first (in slot order among themselves), so the threshold is high
    /// before the other blocks are met and most of them are skipped on their bounds.
    fn visit_order(&self, i: usize) -> Vec<usize> {
        let n = self.index.terms[self.plan[i].term as usize]
            .postings
            .block_count();
        let bounds = match &self.plan[i].bounds {
            Some(bounds) if i == 0 && n > 2 * SEED_BLOCKS => bounds,
            _ => return (0..n).collect(),
        };
        let mut by_bound: Vec<usize> = (0..n).collect();
        by_bound.select_nth_unstable_by(SEED_BLOCKS, |&a, &b| {
            bounds.blocks[b].total_cmp(&bounds.blocks[a])
        });
        let mut seeds = by_bound[..SEED_BLOCKS].to_vec();
        seeds.sort_unstable();
        let mut seeded = vec![false; n];
        for &b in &seeds {
            seeded[b] = true;
        }
        seeds.extend((0..n).filter(|&b| !seeded[b]));
        seeds
    }

    /// Dot products summed over every posting of the query terms first, in query order
    /// (`terms`); then the terms are visited as in [`looked_up`](Self::looked_up), a
    /// document decided when first met (its entry zeroed).
    fn accumulated(&self, terms: &[(u32, f32)], f: &mut impl FnMut(u32, f32) -> f32) {
        let mut acc = vec![0.0f32; self.index.docs.len()];
        let mut buf = Box::<Decoded>::default();
        for &(term, w) in terms {
            let weight = w * self.table.idf[term as usize];
            for block in self.index.terms[term as usize].postings.blocks() {
                add_block(&mut acc, block, weight, &mut buf);
            }
        }
        let mut threshold = f32::NEG_INFINITY;
        for (i, p) in self.plan.iter().enumerate() {
            if below(self.rest[i], threshold) {
                break;
            }
            let list = &self.index.terms[p.term as usize].postings;
            for b in 0..list.block_count() {
                if self.skips(i, b, threshold) {
                    continue;
                }
                list.block(b).decode_slots(&mut buf);
                for &slot in &buf.slots[..buf.len] {
                    let dot = std::mem::take(&mut acc[slot as usize]);
                    if dot <= 0.0 {
                        continue; // scored already
                    }
                    let inv_d = self.index.inv_norm(slot as usize, self.table);
                    let cos = (dot * inv_d * self.inv_q).clamp(0.0, 1.0);
                    if inv_d > 0.0 && !below(cos, threshold) {
                        threshold = f(slot, cos);
                    }
                }
            }
        }
    }
}

/// The known terms of a query, from [`SparseIndex::query_terms`].
struct QueryTerms {
    /// Term ids and weights `(1 + ln count) × idf`, in query order.
    terms: Vec<(u32, f32)>,
    /// `1 / |query|`.
    inv_q: f32,
    table: Arc<IdfTable>,
}

/// One query term in [`SparseIndex::score_top`]'s plan.
struct Planned {
    term: u32,
    /// Its position in the query.
    at: usize,
    /// Query weight × idf: the term's factor in the dot product.
    weight: f32,
    /// Upper bound on the term's share of any document's cosine.
    share: f32,
    bounds: Option<Arc<BlockBounds>>,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::tfidf::document_terms as weighted_terms;
    use crate::topk::TopK;

    /// TF-IDF cosine computed from scratch over `docs`, the reference for the index.
    fn brute_force(docs: &BTreeMap<u32, String>, query: &str) -> BTreeMap<u32, f32> {
        let n = docs.len();
        let doc_terms: BTreeMap<u32, Vec<(String, f32)>> =
            docs.iter().map(|(s, t)| (*s, weighted_terms(t))).collect();
        let mut df: HashMap<String, usize> = HashMap::new();
        for terms in doc_terms.values() {
            for (t, _) in terms {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        let idf_of = |t: &str| idf(n, df.get(t).copied().unwrap_or(0));
        let df_of = |t: &str| df.get(t).copied().unwrap_or(0);
        let query_terms = weighted_terms(query);
        let rule = crate::tfidf::Ubiquity::of(n, query_terms.iter().map(|(t, _)| df_of(t)));
        let q: Vec<(String, f32)> = query_terms
            .into_iter()
            .filter(|(t, _)| rule.weighs(df_of(t)))
            .map(|(t, w)| {
                let v = w * idf_of(&t);
                (t, v)
            })
            .collect();
        let q_norm = q.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        let mut out = BTreeMap::new();
        for (slot, terms) in &doc_terms {
            let d: HashMap<&str, f32> = terms
                .iter()
                .map(|(t, w)| (t.as_str(), w * idf_of(t)))
                .collect();
            let d_norm = d.values().map(|w| w * w).sum::<f32>().sqrt();
            let dot: f32 = q
                .iter()
                .map(|(t, w)| w * d.get(t.as_str()).copied().unwrap_or(0.0))
                .sum();
            if dot > 0.0 && d_norm > 0.0 && q_norm > 0.0 {
                out.insert(*slot, dot / (d_norm * q_norm));
            }
        }
        out
    }

    fn scores(index: &SparseIndex, query: &str) -> BTreeMap<u32, f32> {
        let mut out = BTreeMap::new();
        index.score(query, |s, c| {
            out.insert(s, c);
        });
        out
    }

    #[test]
    fn identical_text_scores_one_and_unknown_terms_nothing() {
        let mut idx = SparseIndex::new();
        idx.insert(0, "rust borrow checker");
        idx.insert(1, "python garbage collector");
        let s = scores(&idx, "Rust borrow checker");
        assert_eq!(s.len(), 1);
        assert!((s[&0] - 1.0).abs() < 1e-5);
        assert!(scores(&idx, "haskell monads").is_empty());
        assert!(scores(&idx, "").is_empty());
    }

    #[test]
    fn replace_and_remove_update_postings_and_vocabulary() {
        let mut idx = SparseIndex::new();
        idx.insert(0, "alpha beta");
        idx.insert(1, "beta gamma");
        idx.insert(0, "delta");
        assert!(scores(&idx, "alpha").is_empty());
        assert_eq!(
            scores(&idx, "beta").keys().copied().collect::<Vec<_>>(),
            [1]
        );
        assert_eq!(idx.len(), 2);
        assert!(idx.remove(1));
        assert!(!idx.remove(1));
        assert_eq!(idx.vocabulary(), 1);
        assert!(idx.remove(0));
        assert_eq!(idx.len(), 0);
        assert_eq!(idx.vocabulary(), 0);
        assert!(scores(&idx, "delta").is_empty());
    }

    #[test]
    fn idf_change_is_reflected_without_reindexing() {
        let mut idx = SparseIndex::new();
        idx.insert(0, "apple banana");
        let before = scores(&idx, "apple")[&0];
        for i in 1..20 {
            idx.insert(i, "banana split");
        }
        // banana is now common, so apple dominates doc 0 more: its cosine to "apple" rises.
        let after = scores(&idx, "apple")[&0];
        assert!(after > before, "{after} <= {before}");
    }

    #[test]
    fn top_k_stops_before_scoring_the_common_term_docs() {
        let mut idx = SparseIndex::new();
        let mut reference = BTreeMap::new();
        for slot in 0..1000u32 {
            let text = format!("common filler{slot}");
            idx.insert(slot, &text);
            reference.insert(slot, text);
        }
        for slot in 1000..1003u32 {
            let text = format!("rare common extra{slot}");
            idx.insert(slot, &text);
            reference.insert(slot, text);
        }
        let mut calls = 0;
        let mut top = TopK::new(2);
        idx.score_top("rare common", |slot, cos| {
            calls += 1;
            top.push(cos, slot, ());
            top.threshold()
        });
        assert!(calls < 50, "scored {calls} documents");
        let got: Vec<u32> = top.into_sorted().into_iter().map(|(_, s, _)| s).collect();
        let want = brute_force(&reference, "rare common");
        let mut ranked: Vec<(u32, f32)> = want.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        assert_eq!(got, [ranked[0].0, ranked[1].0]);
    }

    /// A corpus large enough for block bounds: word `i` of `WORDS.len()` appears with
    /// Zipf-like frequency, documents are 3 to 12 words long.
    fn zipf_corpus(seed: u64, docs: u32) -> BTreeMap<u32, String> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let weights: Vec<f64> = (1..=WORDS.len()).map(|r| 1.0 / r as f64).collect();
        let total: f64 = weights.iter().sum();
        let mut draw = move || {
            let mut x = (next() % 1_000_000) as f64 / 1_000_000.0 * total;
            for (i, w) in weights.iter().enumerate() {
                if x < *w {
                    return WORDS[i];
                }
                x -= w;
            }
            WORDS[WORDS.len() - 1]
        };
        (0..docs)
            .map(|slot| {
                let len = 3 + (slot as usize * 7919) % 10;
                let words: Vec<&str> = (0..len).map(|_| draw()).collect();
                (slot, words.join(" "))
            })
            .collect()
    }

    fn top_k(index: &SparseIndex, query: &str, k: usize) -> (Vec<(f32, u32)>, usize) {
        top_k_by(index, query, k, None)
    }

    /// [`top_k`] completing dot products the `forced` way, if given.
    fn top_k_by(
        index: &SparseIndex,
        query: &str,
        k: usize,
        forced: Option<Completion>,
    ) -> (Vec<(f32, u32)>, usize) {
        let mut calls = 0;
        let mut top = TopK::new(k);
        index.score_top_by(query, forced, |slot, cos| {
            calls += 1;
            top.push(cos, slot, ());
            top.threshold()
        });
        let got = top
            .into_sorted()
            .into_iter()
            .map(|(c, s, _)| (c, s))
            .collect();
        (got, calls)
    }

    fn assert_top_matches(got: &[(f32, u32)], want: &BTreeMap<u32, f32>, k: usize) {
        let mut ranked: Vec<f32> = want.values().copied().collect();
        ranked.sort_by(|a, b| b.total_cmp(a));
        assert_eq!(got.len(), ranked.len().min(k));
        for ((g, slot), w) in got.iter().zip(&ranked) {
            assert!((g - w).abs() < 1e-4, "slot {slot}: {g} vs {w}");
            assert!((want[slot] - g).abs() < 1e-4, "slot {slot} scored {g}");
        }
    }

    #[test]
    fn a_word_in_most_documents_reads_few_of_them() {
        let mut idx = SparseIndex::new();
        let corpus = zipf_corpus(11, 5_000);
        for (slot, text) in &corpus {
            idx.insert(*slot, text);
        }
        let df = corpus
            .values()
            .filter(|t| t.split(' ').any(|w| w == "red"))
            .count();
        assert!(df > 2_000, "red is in {df} documents");
        // Two words in most documents leave more candidates (each one's bound counts
        // the other word's largest share), still well under all of them.
        for (query, most) in [("red", df / 20), ("owl red", df / 8), ("red green", df / 2)] {
            let want = brute_force(&corpus, query);
            let (got, calls) = top_k(&idx, query, 10);
            assert_top_matches(&got, &want, 10);
            assert!(calls < most, "{query}: scored {calls} of {df} documents");
        }
    }

    #[test]
    fn a_speakers_name_on_most_lines_does_not_outweigh_the_words_that_answer() {
        // A chat log: every line opens with its speaker's name. One of Ben's lines
        // mentions the guitar Maya bought; Maya's own lines about other things must not
        // outrank it because the question names her.
        let mut idx = SparseIndex::new();
        let mut corpus = BTreeMap::new();
        for slot in 0..120u32 {
            let text = match slot {
                7 => "Ben: wait you bought a guitar?? a fender one?".to_owned(),
                s if s % 2 == 0 => format!("Maya: day {s} was long, the weather was grey"),
                s => format!("Ben: ok see you on day {s}"),
            };
            idx.insert(slot, &text);
            corpus.insert(slot, text);
        }
        let (top, _) = top_k(&idx, "which guitar did Maya buy?", 3);
        // Only the line that holds the answer's words matches: not every line of Maya's.
        assert_eq!(
            top.iter().map(|&(_, s)| s).collect::<Vec<_>>(),
            [7],
            "{top:?}"
        );
        assert_top_matches(&top, &brute_force(&corpus, "which guitar did Maya buy?"), 3);
        // The name alone is still searched by.
        let (alone, _) = top_k(&idx, "Maya", 3);
        assert_eq!(alone.len(), 3);
        assert!(alone.iter().all(|&(_, s)| s % 2 == 0), "{alone:?}");
        // Too few documents to tell: the name weighs as any word.
        let mut small = SparseIndex::new();
        small.insert(0, "Maya: I bought a lamp");
        small.insert(1, "Ben: a guitar, nice");
        small.insert(2, "Maya: the guitar was cheap");
        let (top, _) = top_k(&small, "which guitar did Maya buy?", 1);
        assert_eq!(top.first().map(|&(_, s)| s), Some(2));
    }

    #[test]
    fn block_bounds_follow_writes() {
        let mut idx = SparseIndex::new();
        let mut corpus = zipf_corpus(5, 3_000);
        for (slot, text) in &corpus {
            idx.insert(*slot, text);
        }
        for round in 0..6u32 {
            for query in ["red", "blue red", "rain", "moon sun red", "red green blue"] {
                let want = brute_force(&corpus, query);
                assert_top_matches(&top_k(&idx, query, 5).0, &want, 5);
                // Long lists with block bounds, slots reused: both ways agree.
                for way in [Completion::Lookups, Completion::OneArray] {
                    assert_top_matches(&top_k_by(&idx, query, 5, Some(way)).0, &want, 5);
                }
            }
            // Move the strongest "red" documents around: replace, remove, add short ones.
            let slot = round * 97;
            idx.insert(slot, "red red red");
            corpus.insert(slot, "red red red".into());
            let gone = round * 131 + 1;
            idx.remove(gone);
            corpus.remove(&gone);
            let new = 3_000 + round;
            idx.insert(new, "red moon");
            corpus.insert(new, "red moon".into());
        }
    }

    /// Every query of one or two words of `WORDS` (and a few unknown ones) scores the
    /// same on both indexes, bit for bit.
    fn assert_same_scores(a: &SparseIndex, b: &SparseIndex) {
        let mut queries: Vec<String> = vec!["".into(), "unknown".into(), "zebra yak".into()];
        for x in WORDS {
            queries.push((*x).into());
            for y in WORDS {
                queries.push(format!("{x} {y}"));
            }
        }
        for q in &queries {
            let (sa, sb) = (scores(a, q), scores(b, q));
            assert_eq!(sa.len(), sb.len(), "{q}");
            for (slot, score) in &sa {
                assert_eq!(score.to_bits(), sb[slot].to_bits(), "{q}: slot {slot}");
            }
            assert_eq!(top_k(a, q, 3).0, top_k(b, q, 3).0, "{q}");
        }
    }

    #[test]
    fn a_batch_reuses_no_stale_term_mapping() {
        // Within one batch: "zebra" leaves the index (its slot is rewritten), its term id
        // is reused by "yak", and then "zebra" comes back: it must get a term of its own.
        let texts = ["zebra red", "red", "yak green", "zebra blue", "zebra"];
        let slots = [0u32, 0, 1, 2, 3];
        let mut one_by_one = SparseIndex::new();
        for (slot, text) in slots.iter().zip(texts) {
            one_by_one.insert(*slot, text);
        }
        let mut batched = SparseIndex::new();
        let mut batch = Analysed::in_chunks(&texts, texts.len(), false);
        for (i, slot) in slots.iter().enumerate() {
            batched.insert_analysed(*slot, &mut batch, i);
        }
        assert_eq!(scores(&batched, "yak").keys().collect::<Vec<_>>(), [&1]);
        assert_eq!(
            scores(&batched, "zebra").keys().collect::<Vec<_>>(),
            [&2, &3]
        );
        assert_same_scores(&one_by_one, &batched);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32, Vec<usize>),
        Remove(u32),
    }

    const WORDS: &[&str] = &[
        "red", "green", "blue", "apple", "pear", "fig", "cat", "dog", "owl", "sun", "moon", "rain",
    ];

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u32..12, prop::collection::vec(0..WORDS.len(), 0..8)).prop_map(|(s, w)| Op::Insert(s, w)),
            1 => (0u32..12).prop_map(Op::Remove),
        ]
    }

    /// Every slot's coverage of `query` from the index.
    fn coverages(idx: &SparseIndex, query: &str) -> BTreeMap<u32, f32> {
        let mut out = BTreeMap::new();
        idx.coverage(query, |slot, c| {
            assert!(out.insert(slot, c).is_none(), "slot {slot} reported twice");
        });
        out
    }

    /// [`tfidf::coverage`](crate::tfidf::coverage) over `docs`, for the documents
    /// holding a query term.
    fn brute_coverage(docs: &BTreeMap<u32, String>, query: &str) -> BTreeMap<u32, f32> {
        use crate::tfidf::{coverage, query_terms};
        let doc_terms: BTreeMap<u32, Vec<(String, f32)>> =
            docs.iter().map(|(s, t)| (*s, weighted_terms(t))).collect();
        let df = |t: &str| {
            doc_terms
                .values()
                .filter(|d| d.iter().any(|(k, _)| k == t))
                .count()
        };
        let q = query_terms(query);
        doc_terms
            .iter()
            .map(|(s, d)| (*s, coverage(&q, d, docs.len(), df)))
            .filter(|(_, c)| *c > 0.0)
            .collect()
    }

    /// The messages of real conversations (the episodes evaluation set), one a document.
    fn conversation_messages() -> Vec<String> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/episodes_eval/conversations.jsonl"
        );
        let data = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        data.lines()
            .map(|line| {
                let v: serde_json::Value =
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}: {e}"));
                v["content"].as_str().unwrap_or_default().to_owned()
            })
            .collect()
    }

    /// Heap bytes per document, and per posting, of `index` holding `docs` documents.
    fn footprint(index: &SparseIndex, docs: usize) -> (f64, f64) {
        let postings: usize = index.terms.iter().map(|t| t.postings.len()).sum();
        let bytes = index.heap_bytes() as f64;
        let used: usize = index.terms.iter().map(|t| t.postings.used_bytes()).sum();
        let held: usize = index.terms.iter().map(|t| t.postings.heap_bytes()).sum();
        let lists: usize = index.docs.iter().flatten().map(|d| d.len()).sum();
        eprintln!(
            "{docs} documents, {postings} postings: postings {used} bytes used ({held} held), \
             documents' term lists {lists}, dictionary {}, total {bytes}",
            index.dict.heap_bytes()
        );
        (bytes / docs as f64, bytes / postings as f64)
    }

    #[test]
    fn real_conversations_take_few_bytes_a_document() {
        let texts = conversation_messages();
        assert!(texts.len() > 500, "{} messages", texts.len());
        let mut idx = SparseIndex::new();
        for (slot, text) in texts.iter().enumerate() {
            idx.insert(slot as u32, text);
        }
        let (per_doc, per_posting) = footprint(&idx, texts.len());
        eprintln!("conversations: {per_doc:.1} bytes a document, {per_posting:.2} a posting");
        // Measured: 490 bytes a message (8 postings), most of it the vocabulary of a small
        // corpus (2,000-odd terms: a 72-byte entry each, with the spare room of a growing
        // vector, the text, the hash table); the postings take 70 bytes a message.
        assert!(per_doc < 500.0, "{per_doc:.1} bytes a document");
        assert!(per_posting < 62.0, "{per_posting:.1} bytes a posting");
        // Written one by one or as a batch, the same index, and no bigger once trimmed.
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut batched = SparseIndex::new();
        let mut batch = Analysed::new(&refs);
        for i in 0..texts.len() {
            batched.insert_analysed(i as u32, &mut batch, i);
        }
        batched.shrink_to_fit();
        assert!(batched.heap_bytes() <= idx.heap_bytes());
        for query in [
            "running schedule",
            "Leeds 10k",
            "what did I say about my sister",
        ] {
            assert_eq!(scores(&idx, query), scores(&batched, query), "{query}");
        }
    }

    /// `docs` documents of 30 pseudo-words drawn with Zipf frequencies from 5,000, the
    /// shape of the comparison harness's corpus (`bench/compare`).
    fn pseudo_word_corpus(docs: usize) -> Vec<String> {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "ta", "po", "vi", "se", "da", "gu", "fe", "ri", "zo",
            "be", "ha", "ju", "ni", "qu", "xe",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut seen = std::collections::HashSet::new();
        let mut words = Vec::new();
        while words.len() < 5_000 {
            let n = 2 + next() % 3;
            let w: String = (0..n).map(|_| SYLLABLES[(next() % 20) as usize]).collect();
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cumulative: Vec<f64> = (1..=words.len())
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        (0..docs)
            .map(|_| {
                (0..30)
                    .map(|_| {
                        let x = (next() >> 11) as f64 / (1u64 << 53) as f64 * total;
                        words[cumulative.partition_point(|&c| c < x).min(words.len() - 1)].as_str()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn coverage_weighs_the_query_terms_a_document_holds() {
        let mut idx = SparseIndex::new();
        idx.insert(0, "my sister moved to Nairobi");
        idx.insert(1, "my sister bakes");
        idx.insert(2, "rain again");
        // Every term held: full coverage; the common term alone: less than half.
        let got = coverages(&idx, "sister Nairobi");
        assert_eq!(got[&0], 1.0);
        assert!(got[&1] > 0.0 && got[&1] < 0.5, "{got:?}");
        assert!(!got.contains_key(&2));
        // A word no document holds weighs as the rarest: no document covers the query.
        let got = coverages(&idx, "sister Lagos");
        assert!(got[&0] < 0.5 && got[&0] == got[&1], "{got:?}");
        // Nothing known: nothing reported.
        assert!(coverages(&idx, "Lagos").is_empty());
        assert_eq!(
            coverages(&idx, "sister Lagos"),
            brute_coverage(
                &[
                    (0, "my sister moved to Nairobi"),
                    (1, "my sister bakes"),
                    (2, "rain again")
                ]
                .into_iter()
                .map(|(s, t)| (s, t.to_owned()))
                .collect(),
                "sister Lagos",
            )
        );
    }

    #[test]
    fn a_pseudo_word_corpus_takes_few_bytes_a_document() {
        let texts = pseudo_word_corpus(20_000);
        let mut idx = SparseIndex::new();
        for (slot, text) in texts.iter().enumerate() {
            idx.insert(slot as u32, text);
        }
        let (per_doc, per_posting) = footprint(&idx, texts.len());
        eprintln!("pseudo-words: {per_doc:.1} bytes a document, {per_posting:.2} a posting");
        // Measured: 168 bytes a document of 25 distinct terms, with the spare room of
        // vectors grown one document at a time: posting lists use 1.47 bytes a posting
        // (2.0 held, room doubling as a list grows), the documents' term lists 1.5, and a
        // slot 24 bytes (its list's pointer and its cached norm). Uncompressed, postings
        // took 8 bytes and the term lists 12, 500 bytes a document.
        assert!(per_doc < 185.0, "{per_doc:.1} bytes a document");
        let used: usize = idx.terms.iter().map(|t| t.postings.used_bytes()).sum();
        let postings: usize = idx.terms.iter().map(|t| t.postings.len()).sum();
        let per_posting = used as f64 / postings as f64;
        assert!(
            per_posting < 1.8,
            "posting lists use {per_posting:.2} bytes a posting"
        );
    }

    #[test]
    fn removing_every_document_leaves_nothing_behind() {
        let corpus = zipf_corpus(9, 2_000);
        let mut idx = SparseIndex::new();
        for (slot, text) in &corpus {
            idx.insert(*slot, text);
        }
        // Removed in an order unrelated to insertion, through every block of every list.
        for slot in (0..2_000u32).map(|i| (i * 7919) % 2_000) {
            assert!(idx.remove(slot));
            assert!(scores(&idx, "red").keys().all(|&s| s != slot));
        }
        assert_eq!((idx.len(), idx.vocabulary()), (0, 0));
        assert!(idx
            .terms
            .iter()
            .all(|t| t.postings.is_empty() && t.postings.heap_bytes() == 0));
        assert!(idx.docs.iter().all(Option::is_none));
    }

    /// Many slots, few words: long posting lists of several blocks, written out of order.
    fn big_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u32..700, prop::collection::vec(0..WORDS.len(), 0..8)).prop_map(|(s, w)| Op::Insert(s, w)),
            1 => (0u32..700).prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn coverage_matches_tfidf_coverage(ops in prop::collection::vec(op(), 1..40),
                                           query in prop::collection::vec(0..WORDS.len() + 1, 1..5)) {
            let mut idx = SparseIndex::new();
            let mut reference: BTreeMap<u32, String> = BTreeMap::new();
            // One index past the words: a word no document holds.
            let query: Vec<&str> = query.iter().map(|&i| WORDS.get(i).copied().unwrap_or("zzyzx")).collect();
            let query = query.join(" ");
            for op in ops {
                match op {
                    Op::Insert(slot, words) => {
                        let text: Vec<&str> = words.iter().map(|&i| WORDS[i]).collect();
                        let text = text.join(" ");
                        idx.insert(slot, &text);
                        reference.insert(slot, text);
                    }
                    Op::Remove(slot) => {
                        idx.remove(slot);
                        reference.remove(&slot);
                    }
                }
                // The same values, to the bit.
                prop_assert_eq!(coverages(&idx, &query), brute_coverage(&reference, &query));
            }
        }

        #[test]
        fn index_matches_brute_force(ops in prop::collection::vec(op(), 1..60),
                                     query in prop::collection::vec(0..WORDS.len(), 1..4),
                                     k in 1usize..4) {
            let mut idx = SparseIndex::new();
            let mut reference: BTreeMap<u32, String> = BTreeMap::new();
            let query: Vec<&str> = query.iter().map(|&i| WORDS[i]).collect();
            let query = query.join(" ");
            for op in ops {
                match op {
                    Op::Insert(slot, words) => {
                        let text: Vec<&str> = words.iter().map(|&i| WORDS[i]).collect();
                        let text = text.join(" ");
                        idx.insert(slot, &text);
                        reference.insert(slot, text);
                    }
                    Op::Remove(slot) => {
                        prop_assert_eq!(idx.remove(slot), reference.remove(&slot).is_some());
                    }
                }
                // Search after every step so cached norms are exercised across epochs.
                let got = scores(&idx, &query);
                let want = brute_force(&reference, &query);
                prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
                for (k, v) in &want {
                    prop_assert!((got[k] - v).abs() < 1e-4, "slot {}: {} vs {}", k, got[k], v);
                }
                // The early-stopping top-k agrees with the brute-force ranking.
                let mut ranked: Vec<f32> = want.values().copied().collect();
                ranked.sort_by(|a, b| b.total_cmp(a));
                let mut top = TopK::new(k);
                idx.score_top(&query, |slot, cos| {
                    top.push(cos, slot, ());
                    top.threshold()
                });
                let top: Vec<f32> = top.into_sorted().into_iter().map(|(s, _, _)| s).collect();
                prop_assert_eq!(top.len(), ranked.len().min(k));
                for (g, w) in top.iter().zip(&ranked) {
                    prop_assert!((g - w).abs() < 1e-4, "top-{}: {:?} vs {:?}", k, top, ranked);
                }
            }
            prop_assert_eq!(idx.len(), reference.len());
        }

        #[test]
        fn a_batch_indexes_what_inserts_one_by_one_do(
            docs in prop::collection::vec((0u32..12, prop::collection::vec(0..WORDS.len(), 0..8)), 1..40),
            removed in prop::collection::vec(0u32..12, 0..4),
            chunk_len in 1usize..8,
        ) {
            let texts: Vec<String> = docs
                .iter()
                .map(|(_, w)| w.iter().map(|&i| WORDS[i]).collect::<Vec<_>>().join(" "))
                .collect();
            // Both start from the same index, with some documents already removed.
            let mut one_by_one = SparseIndex::new();
            let mut batched = SparseIndex::new();
            for (slot, word) in WORDS.iter().enumerate() {
                one_by_one.insert(slot as u32, word);
                batched.insert(slot as u32, word);
            }
            for slot in removed {
                one_by_one.remove(slot);
                batched.remove(slot);
            }
            for ((slot, _), text) in docs.iter().zip(&texts) {
                one_by_one.insert(*slot, text);
            }
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            // Small chunks, analysed in parallel: terms map to the index chunk by chunk.
            let mut batch = Analysed::in_chunks(&refs, chunk_len, true);
            for (i, (slot, _)) in docs.iter().enumerate() {
                batched.insert_analysed(*slot, &mut batch, i);
            }
            prop_assert_eq!(one_by_one.len(), batched.len());
            prop_assert_eq!(one_by_one.vocabulary(), batched.vocabulary());
            assert_same_scores(&one_by_one, &batched);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn a_large_index_matches_brute_force(ops in prop::collection::vec(big_op(), 200..1_500),
                                             query in prop::collection::vec(0..WORDS.len(), 1..4)) {
            let mut idx = SparseIndex::new();
            let mut reference: BTreeMap<u32, String> = BTreeMap::new();
            let query: Vec<&str> = query.iter().map(|&i| WORDS[i]).collect();
            let query = query.join(" ");
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Insert(slot, words) => {
                        let text: Vec<&str> = words.iter().map(|&i| WORDS[i]).collect();
                        let text = text.join(" ");
                        idx.insert(slot, &text);
                        reference.insert(slot, text);
                    }
                    Op::Remove(slot) => {
                        prop_assert_eq!(idx.remove(slot), reference.remove(&slot).is_some());
                    }
                }
                if n % 97 != 0 {
                    continue;
                }
                let got = scores(&idx, &query);
                let want = brute_force(&reference, &query);
                prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
                for (k, v) in &want {
                    prop_assert!((got[k] - v).abs() < 1e-4, "slot {}: {} vs {}", k, got[k], v);
                }
                let (top, _) = top_k(&idx, &query, 3);
                assert_top_matches(&top, &want, 3);
                // Both ways of completing dot products, whichever the cost picks: the
                // same hits with the same scores, to the bit.
                for way in [Completion::Lookups, Completion::OneArray] {
                    let mut forced = TopK::new(3);
                    idx.score_top_by(&query, Some(way), |slot, cos| {
                        forced.push(cos, slot, ());
                        forced.threshold()
                    });
                    let forced: Vec<(f32, u32)> =
                        forced.into_sorted().into_iter().map(|(c, s, _)| (c, s)).collect();
                    prop_assert_eq!(&forced, &top, "{:?}", way);
                }
            }
            prop_assert_eq!(idx.len(), reference.len());
        }
    }
}
