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
//! Postings store only the sublinear tf part `1 + ln tf`, which never changes for a
//! document. IDF is computed at query time from the current `N` and `df`, so adding or
//! removing documents is reflected immediately without re-indexing anything.
//!
//! A document's norm depends on the IDF of *all* its terms, so it goes stale whenever
//! the index changes. Each document caches its norm together with the index *epoch*
//! (a counter bumped by every insert and remove) it was computed at; a search recomputes
//! the norm only for the candidate documents it touches whose cache is stale, from an
//! IDF table that is itself cached per epoch. Scores are therefore always exact for the
//! current index, a search never touches documents outside the query terms' postings,
//! and repeated searches between writes reuse the norms.
//!
//! # Updates
//!
//! Each posting's position is remembered in its document's term list, so removing a
//! document swap-removes its postings in O(its distinct terms) instead of scanning
//! posting lists. Terms whose posting list empties are dropped and their ids reused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::analyse::{Analysed, UNMAPPED};
use crate::text;

/// One occurrence list entry: a document slot and its `1 + ln tf`.
#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    tf_weight: f32,
}

#[derive(Debug)]
struct Term {
    text: Box<str>,
    postings: Vec<Posting>,
    /// Block maxima of a long posting list, for [`SparseIndex::score_top`]; valid for
    /// one epoch, computed when a search first needs them.
    bounds: Mutex<Option<Arc<BlockBounds>>>,
}

/// Number of postings summarised by one block bound.
const BLOCK: usize = 128;
/// Lists at least this long get block bounds; shorter ones are cheaper to scan whole.
const BOUNDED_MIN: usize = 8 * BLOCK;

/// Upper bounds on a term's document-side factor `(1 + ln tf) / |d|` per block of
/// [`BLOCK`] postings (in posting-list order), and over the whole list, at one epoch.
#[derive(Debug)]
struct BlockBounds {
    epoch: u64,
    blocks: Vec<f32>,
    max: f32,
}

/// A document's term, with the position of its posting in that term's list.
#[derive(Debug, Clone, Copy)]
struct DocTerm {
    term: u32,
    pos: u32,
    tf_weight: f32,
}

#[derive(Debug)]
struct DocTerms {
    terms: Vec<DocTerm>,
}

/// A document's cached `1 / norm`, valid while `epoch` equals the index epoch. Kept in
/// an array of its own (16 bytes a slot) so a search scans it with good locality.
#[derive(Debug)]
struct NormCell {
    epoch: AtomicU64,
    /// `f32` bits of `1 / norm` (0 for a document without terms).
    inv_norm: AtomicU32,
}

impl NormCell {
    fn stale() -> Self {
        Self {
            epoch: AtomicU64::new(NEVER),
            inv_norm: AtomicU32::new(0),
        }
    }
}

/// IDF of every term id, valid for one epoch.
#[derive(Debug)]
struct IdfTable {
    epoch: u64,
    idf: Vec<f32>,
}

const NEVER: u64 = u64::MAX;

/// An inverted index over documents identified by small integer slots chosen by the caller.
#[derive(Debug, Default)]
pub(crate) struct SparseIndex {
    /// Term text → id. foldhash (randomly seeded per index), as the analysis that
    /// produces the terms uses: a large batch inserts one term per distinct word, and
    /// SipHash was a tenth of building a 100,000-fact index.
    term_ids: HashMap<Box<str>, u32, foldhash::fast::RandomState>,
    terms: Vec<Term>,
    free_terms: Vec<u32>,
    docs: Vec<Option<DocTerms>>,
    norms: Vec<NormCell>,
    doc_count: usize,
    epoch: u64,
    idf_cache: Mutex<Option<Arc<IdfTable>>>,
}

use super::tfidf::{document_terms as weighted_terms, idf};

impl SparseIndex {
    /// An empty index.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Number of documents indexed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.doc_count
    }

    /// Number of distinct terms.
    #[cfg(test)]
    pub(crate) fn vocabulary(&self) -> usize {
        self.term_ids.len()
    }

    /// Indexes `text` under `slot`, replacing whatever the slot held.
    pub(crate) fn insert(&mut self, slot: u32, text: &str) {
        self.remove(slot);
        let terms = weighted_terms(text)
            .into_iter()
            .map(|(text, tf_weight)| {
                let term = self.term_id(&text);
                self.post(slot, term, tf_weight)
            })
            .collect();
        self.place(slot, terms);
    }

    /// Appends `slot`'s posting to `term`'s list; returns the document's side of it.
    fn post(&mut self, slot: u32, term: u32, tf_weight: f32) -> DocTerm {
        let postings = &mut self.terms[term as usize].postings;
        let pos = postings.len() as u32;
        postings.push(Posting { slot, tf_weight });
        DocTerm {
            term,
            pos,
            tf_weight,
        }
    }

    /// Records `terms` (already posted) as the document in the empty `slot`.
    fn place(&mut self, slot: u32, terms: Vec<DocTerm>) {
        let idx = slot as usize;
        if self.docs.len() <= idx {
            self.docs.resize_with(idx + 1, || None);
            self.norms.resize_with(idx + 1, NormCell::stale);
        }
        self.docs[idx] = Some(DocTerms { terms });
        self.doc_count += 1;
        self.epoch += 1;
    }

    /// Indexes document `i` of `batch` under `slot`, replacing whatever the slot held:
    /// the same as [`insert`](Self::insert) of its text (same term ids, postings and
    /// sums, so the same scores to the bit), without analysing it again. Inserting a
    /// batch's documents in order, under the index's lock, is inserting them one by one.
    pub(crate) fn insert_analysed(&mut self, slot: u32, batch: &mut Analysed, i: usize) {
        let free = self.free_terms.len();
        self.remove(slot);
        if self.free_terms.len() > free {
            // Dropped term ids may be reused: mappings are checked from now on.
            batch.recheck = true;
        }
        let recheck = batch.recheck;
        let (c, j) = batch.locate(i);
        let chunk = &mut batch.chunks[c];
        let weighted = &chunk.terms[chunk.range(j)];
        let mut terms = Vec::with_capacity(weighted.len());
        for &(local, tf_weight) in weighted {
            let text = &chunk.vocab[local as usize];
            let mapped = &mut chunk.mapped[local as usize];
            if *mapped == UNMAPPED || (recheck && self.terms[*mapped as usize].text != *text) {
                *mapped = self.term_id(text);
                // First use in this chunk: room for the chunk's documents using the term.
                let df = chunk.df[local as usize] as usize;
                self.terms[*mapped as usize].postings.reserve(df);
            }
            terms.push(self.post(slot, *mapped, tf_weight));
        }
        self.place(slot, terms);
    }

    /// Makes room for `additional` more document slots.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.docs.reserve(additional);
        self.norms.reserve(additional);
    }

    /// Makes room for `additional` more distinct terms (a batch's vocabulary), so
    /// inserting it does not grow the term table step by step.
    pub(crate) fn reserve_terms(&mut self, additional: usize) {
        self.term_ids.reserve(additional);
        self.terms.reserve(additional);
    }

    fn term_id(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.term_ids.get(text) {
            return id;
        }
        let text: Box<str> = text.into();
        let term = Term {
            text: text.clone(),
            postings: Vec::new(),
            bounds: Mutex::new(None),
        };
        let id = match self.free_terms.pop() {
            Some(id) => {
                self.terms[id as usize] = term;
                id
            }
            None => {
                self.terms.push(term);
                (self.terms.len() - 1) as u32
            }
        };
        self.term_ids.insert(text, id);
        id
    }

    /// Removes the document in `slot`; whether there was one.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        let Some(doc) = self.docs.get_mut(slot as usize).and_then(Option::take) else {
            return false;
        };
        for dt in doc.terms {
            let term = &mut self.terms[dt.term as usize];
            let pos = dt.pos as usize;
            term.postings.swap_remove(pos);
            if let Some(moved) = term.postings.get(pos).copied() {
                // The last posting moved into `pos`: tell its document.
                if let Some(Some(other)) = self.docs.get_mut(moved.slot as usize) {
                    if let Some(t) = other.terms.iter_mut().find(|t| t.term == dt.term) {
                        t.pos = dt.pos;
                    }
                }
            }
            if term.postings.is_empty() {
                let text = std::mem::take(&mut term.text);
                term.postings = Vec::new();
                self.term_ids.remove(&text);
                self.free_terms.push(dt.term);
            }
        }
        self.doc_count -= 1;
        self.epoch += 1;
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
        // Acquire pairs with the Release below: seeing the current epoch means seeing
        // the value stored before it. Concurrent readers at one epoch compute the same
        // value, so racing stores are harmless; writers hold `&mut self`.
        if cell.epoch.load(Ordering::Acquire) == self.epoch {
            return f32::from_bits(cell.inv_norm.load(Ordering::Relaxed));
        }
        let Some(Some(doc)) = self.docs.get(slot) else {
            return 0.0;
        };
        let sum: f32 = doc
            .terms
            .iter()
            .map(|t| {
                let w = t.tf_weight * table.idf[t.term as usize];
                w * w
            })
            .sum();
        let inv = if sum > 0.0 { 1.0 / sum.sqrt() } else { 0.0 };
        cell.inv_norm.store(inv.to_bits(), Ordering::Relaxed);
        cell.epoch.store(self.epoch, Ordering::Release);
        inv
    }

    /// The known terms of `query` with their weights `(1 + ln count) × idf`, and
    /// `1 / |query|`. `None` when no query term is known.
    fn query_terms(&self, query: &str) -> Option<QueryTerms> {
        // Known query terms with their counts, looked up without allocating a term.
        let mut known: Vec<(u32, f32)> = Vec::new();
        text::for_each_term(query, |t| {
            if let Some(&id) = self.term_ids.get(t) {
                match known.iter_mut().find(|(k, _)| *k == id) {
                    Some((_, count)) => *count += 1.0,
                    None => known.push((id, 1.0)),
                }
            }
        });
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
    pub(crate) fn score(&self, query: &str, mut f: impl FnMut(u32, f32)) {
        let Some(QueryTerms {
            terms,
            inv_q,
            table,
        }) = self.query_terms(query)
        else {
            return;
        };
        let mut acc = vec![0.0f32; self.docs.len()];
        for &(term, q_weight) in &terms {
            let factor = q_weight * table.idf[term as usize];
            for p in &self.terms[term as usize].postings {
                acc[p.slot as usize] += p.tf_weight * factor;
            }
        }
        for &(term, _) in &terms {
            for p in &self.terms[term as usize].postings {
                let slot = p.slot as usize;
                let dot = acc[slot];
                if dot <= 0.0 {
                    continue; // scored already
                }
                acc[slot] = 0.0;
                let inv_d = self.inv_norm(slot, &table);
                if inv_d > 0.0 {
                    f(p.slot, (dot * inv_d * inv_q).clamp(0.0, 1.0));
                }
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
        let blocks: Vec<f32> = t
            .postings
            .chunks(BLOCK)
            .map(|block| {
                block.iter().fold(0.0f32, |m, p| {
                    m.max(p.tf_weight * self.inv_norm(p.slot as usize, table))
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
    /// candidates that provably cannot reach it are never computed.
    ///
    /// A term's share of a document's cosine is `q_t × idf_t × (1 + ln tf) / |d| / |q|`.
    /// Its document-side factor `(1 + ln tf) / |d|` is at most `1 / idf_t`, and long
    /// posting lists keep its maximum per block of 128 postings (computed once per index
    /// epoch, see [`BlockBounds`]). Complete dot products are summed in one pass over
    /// the postings (cheap: no norms, no calls); then query terms are visited in
    /// decreasing order of their largest possible share, each document is decided once,
    /// when first met, and whole blocks whose bound plus the shares of the terms not yet
    /// visited is below the threshold are skipped; once the unvisited terms' shares
    /// alone are, the search stops. So a query for a word in most documents scores the
    /// few blocks holding its strongest documents, and a rare word mixed with common
    /// ones scores the rare word's documents and little else. Scores are exact; only
    /// documents that cannot enter the top-k are skipped.
    pub(crate) fn score_top(&self, query: &str, mut f: impl FnMut(u32, f32) -> f32) {
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
            .map(|&(term, w)| {
                let weight = w * table.idf[term as usize];
                let long = self.terms[term as usize].postings.len() >= BOUNDED_MIN;
                let bounds = long.then(|| self.block_bounds(term, &table));
                let share = match &bounds {
                    Some(b) => weight * b.max * inv_q,
                    None => w * inv_q,
                };
                Planned {
                    term,
                    weight,
                    share,
                    bounds,
                }
            })
            .collect();
        plan.sort_by(|a, b| b.share.total_cmp(&a.share));
        // rest[i] = bound on the cosine of a document containing only terms i.. .
        let mut rest = vec![0.0f32; plan.len() + 1];
        for i in (0..plan.len()).rev() {
            rest[i] = rest[i + 1] + plan[i].share;
        }
        // Margin for float rounding: never skip on a bound that is merely close.
        let below = |bound: f32, threshold: f32| bound * (1.0 + 1e-3) + 1e-6 < threshold;
        // Complete dot products, one cheap pass over the postings; a document scored
        // already has its entry zeroed. A single term needs none: a list holds each
        // document once, and its dot product is its posting's.
        let mut acc = if plan.len() > 1 {
            let mut acc = vec![0.0f32; self.docs.len()];
            // In query order, as `score` sums: the same cosines to the bit.
            for &(term, w) in &terms {
                let weight = w * table.idf[term as usize];
                for posting in &self.terms[term as usize].postings {
                    acc[posting.slot as usize] += posting.tf_weight * weight;
                }
            }
            Some(acc)
        } else {
            None
        };
        let mut threshold = f32::NEG_INFINITY;
        for (i, p) in plan.iter().enumerate() {
            if below(rest[i], threshold) {
                break;
            }
            let postings = &self.terms[p.term as usize].postings;
            for (b, block) in postings.chunks(BLOCK).enumerate() {
                if let Some(bounds) = &p.bounds {
                    let block_share = p.weight * bounds.blocks[b] * inv_q;
                    if below(block_share + rest[i + 1], threshold) {
                        continue;
                    }
                }
                for posting in block {
                    let slot = posting.slot as usize;
                    let dot = match acc.as_mut() {
                        Some(acc) => std::mem::take(&mut acc[slot]),
                        None => posting.tf_weight * p.weight,
                    };
                    if dot <= 0.0 {
                        continue; // scored already
                    }
                    let inv_d = self.inv_norm(slot, &table);
                    let cos = (dot * inv_d * inv_q).clamp(0.0, 1.0);
                    if inv_d > 0.0 && !below(cos, threshold) {
                        threshold = f(posting.slot, cos);
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
    use crate::vector::topk::TopK;

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
        let q: Vec<(String, f32)> = weighted_terms(query)
            .into_iter()
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
        let mut calls = 0;
        let mut top = TopK::new(k);
        index.score_top(query, |slot, cos| {
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
    fn block_bounds_follow_writes() {
        let mut idx = SparseIndex::new();
        let mut corpus = zipf_corpus(5, 3_000);
        for (slot, text) in &corpus {
            idx.insert(*slot, text);
        }
        for round in 0..6u32 {
            for query in ["red", "blue red", "rain", "moon sun red"] {
                let want = brute_force(&corpus, query);
                assert_top_matches(&top_k(&idx, query, 5).0, &want, 5);
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

    proptest! {
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
}
