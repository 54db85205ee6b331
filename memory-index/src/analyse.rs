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

use crate::codec::{self, Pairs};
use crate::text;

/// Fewest documents worth a chunk of their own (and a task on the pool).
const MIN_CHUNK: usize = 4096;

/// A chunk-local term not yet mapped to an index term.
pub const UNMAPPED: u32 = u32::MAX;

/// Consecutive documents analysed together.
#[derive(Debug, Default)]
pub struct Chunk {
    /// The distinct terms of the chunk, indexed by chunk-local id.
    pub vocab: Vec<Box<str>>,
    /// Each document's `(local id, tf)`, one per distinct term by local id,
    /// `codec`-encoded after 0 (two bytes a term or so, where pairs of `u32` took eight:
    /// a batch's transient memory is mostly this), documents one after the other.
    pub terms: Vec<u8>,
    /// End of each document's run in `terms`.
    pub ends: Vec<u32>,
    /// Number of the chunk's documents containing each local id (to reserve postings).
    pub df: Vec<u32>,
    /// Index term id of each local id ([`UNMAPPED`] until looked up); filled while the
    /// batch is inserted.
    pub mapped: Vec<u32>,
}

impl Chunk {
    fn analyse(texts: &[&str]) -> Self {
        let mut chunk = Chunk {
            ends: Vec::with_capacity(texts.len()),
            ..Chunk::default()
        };
        let mut ids: HashMap<Box<str>, u32> = HashMap::new();
        let mut words = text::WordTerms::<foldhash::fast::RandomState>::default();
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
            let mut prev = 0;
            while i < tokens.len() {
                let id = tokens[i];
                let mut n = 1;
                while i + n < tokens.len() && tokens[i + n] == id {
                    n += 1;
                }
                codec::put(&mut chunk.terms, prev, id, n as u32);
                prev = id;
                i += n;
            }
            chunk.ends.push(chunk.terms.len() as u32);
        }
        chunk.df = vec![0; chunk.vocab.len()];
        for i in 0..chunk.ends.len() {
            for (id, _) in Pairs::new(&chunk.terms[chunk.range(i)], 0) {
                chunk.df[id as usize] += 1;
            }
        }
        chunk.mapped = vec![UNMAPPED; chunk.vocab.len()];
        chunk
    }

    /// Number of documents in the chunk.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the chunk holds no document.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Where the chunk's `i`-th document's terms are in `terms`.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }
}

/// A batch of documents analysed for a sparse index, addressed by position in the batch.
#[derive(Debug)]
pub struct Analysed {
    pub(crate) chunks: Vec<Chunk>,
    chunk_len: usize,
    /// Set once index terms were dropped while inserting the batch: their ids may have
    /// been reused for other terms, so mappings are checked against the term's text.
    pub recheck: bool,
}

impl Analysed {
    /// Analyses `texts`, in parallel on the rayon pool when there are many.
    ///
    /// A chunk re-learns the words it shares with other chunks (stems, term lookups in
    /// the index), so there are only as many as keep the pool's threads busy: two per
    /// thread, a late thread's share can still be taken by another.
    pub fn new(texts: &[&str]) -> Self {
        let threads = rayon::current_num_threads();
        let parallel = texts.len() >= 2 * MIN_CHUNK && threads > 1;
        let chunk_len = if parallel {
            texts.len().div_ceil(threads).max(MIN_CHUNK)
        } else {
            texts.len().max(1)
        };
        Self::in_chunks(texts, chunk_len, parallel)
    }

    /// Analyses `texts` in chunks of `chunk_len` (at least 1).
    pub fn in_chunks(texts: &[&str], chunk_len: usize, parallel: bool) -> Self {
        let chunks = if parallel {
            texts.par_chunks(chunk_len).map(Chunk::analyse).collect()
        } else {
            texts.chunks(chunk_len).map(Chunk::analyse).collect()
        };
        Self {
            chunks,
            chunk_len,
            recheck: false,
        }
    }

    /// An upper bound on the batch's distinct terms: the sum of its chunks'
    /// vocabularies.
    pub fn vocabulary_bound(&self) -> usize {
        self.chunks.iter().map(|c| c.vocab.len()).sum()
    }

    /// Number of documents in the batch.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(Chunk::len).sum()
    }

    /// Whether the batch holds no document.
    pub fn is_empty(&self) -> bool {
        self.chunks.iter().all(Chunk::is_empty)
    }

    /// The chunk holding document `i`, and its position there.
    pub fn locate(&self, i: usize) -> (usize, usize) {
        (i / self.chunk_len, i % self.chunk_len)
    }
}
