//! Documents analysed into weighted terms ahead of insertion into a
//! [`SparseIndex`](super::sparse::SparseIndex), without the index.
//!
//! Analysis (segmentation, folding, stemming, counting) is most of the cost of indexing,
//! and it needs nothing of the index, so it runs before the namespace's lock is taken, and
//! large batches are analysed in parallel on the rayon pool, in chunks of consecutive
//! documents. Each chunk interns its terms into a vocabulary of its own, so a term is
//! allocated and hashed into the index's vocabulary once per chunk rather than once per
//! occurrence; [`SparseIndex::insert_analysed`](super::sparse::SparseIndex::insert_analysed)
//! maps chunk terms to index terms, remembering the mapping for the rest of the batch.

use foldhash::{HashMap, HashMapExt};
use rayon::prelude::*;

use crate::text;

/// Documents per chunk of a large batch.
const CHUNK: usize = 8192;

/// A chunk-local term not yet mapped to an index term.
pub(super) const UNMAPPED: u32 = u32::MAX;

/// Consecutive documents analysed together.
#[derive(Debug, Default)]
pub(super) struct Chunk {
    /// The distinct terms of the chunk, indexed by chunk-local id.
    pub(super) vocab: Vec<Box<str>>,
    /// Each document's `(local id, 1 + ln tf)`, one per distinct term sorted by term
    /// text, documents one after the other.
    pub(super) terms: Vec<(u32, f32)>,
    /// End of each document's run in `terms`.
    pub(super) ends: Vec<u32>,
    /// Index term id of each local id ([`UNMAPPED`] until looked up); filled while the
    /// batch is inserted.
    pub(super) mapped: Vec<u32>,
}

impl Chunk {
    fn analyse(texts: &[&str]) -> Self {
        let mut chunk = Chunk {
            ends: Vec::with_capacity(texts.len()),
            ..Chunk::default()
        };
        let mut ids: HashMap<Box<str>, u32> = HashMap::new();
        let mut words: HashMap<Box<str>, u32> = HashMap::new();
        let mut tokens: Vec<u32> = Vec::new();
        for text in texts {
            tokens.clear();
            let vocab = &mut chunk.vocab;
            let id = |t: &str| match ids.get(t) {
                Some(&id) => id,
                None => {
                    let id = vocab.len() as u32;
                    vocab.push(t.into());
                    ids.insert(t.into(), id);
                    id
                }
            };
            text::for_each_term_id(text, &mut words, id, |t| tokens.push(t));
            // Count repeats: equal terms have equal ids.
            tokens.sort_unstable();
            let mut i = 0;
            while i < tokens.len() {
                let id = tokens[i];
                let mut n = 1;
                while i + n < tokens.len() && tokens[i + n] == id {
                    n += 1;
                }
                chunk.terms.push((id, 1.0 + (n as f32).ln()));
                i += n;
            }
            chunk.ends.push(chunk.terms.len() as u32);
        }
        // Each document's terms in the order of their text, as the index lists them:
        // texts are compared once per chunk term, documents sorted by rank.
        let mut by_text: Vec<u32> = (0..chunk.vocab.len() as u32).collect();
        by_text.sort_unstable_by(|&a, &b| chunk.vocab[a as usize].cmp(&chunk.vocab[b as usize]));
        let mut rank = vec![0u32; by_text.len()];
        for (r, &id) in by_text.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        for i in 0..chunk.ends.len() {
            let range = chunk.range(i);
            chunk.terms[range].sort_unstable_by_key(|&(id, _)| rank[id as usize]);
        }
        chunk.mapped = vec![UNMAPPED; chunk.vocab.len()];
        chunk
    }

    /// Where the chunk's `i`-th document's terms are in `terms`.
    pub(super) fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }
}

/// A batch of documents analysed for a sparse index, addressed by position in the batch.
#[derive(Debug)]
pub(crate) struct Analysed {
    pub(super) chunks: Vec<Chunk>,
    chunk_len: usize,
    /// Set once index terms were dropped while inserting the batch: their ids may have
    /// been reused for other terms, so mappings are checked against the term's text.
    pub(super) recheck: bool,
}

impl Analysed {
    /// Analyses `texts`, in parallel on the rayon pool when there are many.
    pub(crate) fn new(texts: &[&str]) -> Self {
        let chunks = if texts.len() > CHUNK && rayon::current_num_threads() > 1 {
            texts.par_chunks(CHUNK).map(Chunk::analyse).collect()
        } else {
            texts.chunks(CHUNK).map(Chunk::analyse).collect()
        };
        Self {
            chunks,
            chunk_len: CHUNK,
            recheck: false,
        }
    }

    /// The chunk holding document `i`, and its position there.
    pub(super) fn locate(&self, i: usize) -> (usize, usize) {
        (i / self.chunk_len, i % self.chunk_len)
    }
}
