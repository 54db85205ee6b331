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

use super::codec::{self, Pairs};
use crate::text;

/// Fewest documents worth a chunk of their own (and a task on the pool).
const MIN_CHUNK: usize = 4096;

/// A chunk-local term not yet mapped to an index term.
pub(super) const UNMAPPED: u32 = u32::MAX;

/// A chunk's vocabulary, documents' `(local id, tf)` pairs ([`codec`]-encoded after 0,
/// one document after the other) and documents' ends in those bytes.
pub(crate) type ChunkParts<'a> = (&'a [Box<str>], &'a [u8], &'a [u32]);

/// Consecutive documents analysed together.
#[derive(Debug, Default)]
pub(crate) struct Chunk {
    /// The distinct terms of the chunk, indexed by chunk-local id.
    pub(super) vocab: Vec<Box<str>>,
    /// Each document's `(local id, tf)`, one per distinct term by local id,
    /// [`codec`]-encoded after 0 (two bytes a term or so, where pairs of `u32` took eight:
    /// a batch's transient memory is mostly this), documents one after the other.
    pub(super) terms: Vec<u8>,
    /// End of each document's run in `terms`.
    pub(super) ends: Vec<u32>,
    /// Number of the chunk's documents containing each local id (to reserve postings).
    pub(super) df: Vec<u32>,
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

    /// A chunk from what [`analyse`](Self::analyse) made of its documents: the
    /// vocabulary, each document's `(local id, tf)` pairs encoded one document after the
    /// other, and the end of each document's run. Checked, so inserting it cannot index
    /// out of bounds or break a list's order whatever the parts (read back from storage,
    /// say): ids strictly increase within a document and stay inside the vocabulary (a
    /// varint cut short by a document's end decodes as a smaller number, so any bytes
    /// read as some pairs).
    pub(crate) fn from_parts(
        vocab: Vec<Box<str>>,
        terms: Vec<u8>,
        ends: Vec<u32>,
    ) -> Result<Self, &'static str> {
        let mut df = vec![0u32; vocab.len()];
        let mut start = 0usize;
        for &end in &ends {
            let end = end as usize;
            if end < start || end > terms.len() {
                return Err("a document's terms run past the chunk's");
            }
            let mut prev: Option<u32> = None;
            for (id, tf) in Pairs::new(&terms[start..end], 0) {
                if prev.is_some_and(|p| id <= p) || tf == 0 {
                    return Err("a document's terms out of order");
                }
                match df.get_mut(id as usize) {
                    Some(n) => *n += 1,
                    None => return Err("a term outside the chunk's vocabulary"),
                }
                prev = Some(id);
            }
            start = end;
        }
        if start != terms.len() {
            return Err("terms after the chunk's last document");
        }
        let mapped = vec![UNMAPPED; vocab.len()];
        Ok(Self {
            vocab,
            terms,
            ends,
            df,
            mapped,
        })
    }

    /// The vocabulary, each document's encoded `(local id, tf)` pairs one after the
    /// other, and the end of each document's run: what [`from_parts`](Self::from_parts)
    /// takes.
    pub(crate) fn parts(&self) -> ChunkParts<'_> {
        (&self.vocab, &self.terms, &self.ends)
    }

    /// Number of documents in the chunk.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
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
    ///
    /// A chunk re-learns the words it shares with other chunks (stems, term lookups in
    /// the index), so there are only as many as keep the pool's threads busy: two per
    /// thread, a late thread's share can still be taken by another.
    pub(crate) fn new(texts: &[&str]) -> Self {
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
    pub(super) fn in_chunks(texts: &[&str], chunk_len: usize, parallel: bool) -> Self {
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

    /// A batch from chunks of `chunk_len` documents each (the last may hold fewer), as
    /// [`in_chunks`](Self::in_chunks) makes them; `None` when the chunks are not so.
    pub(crate) fn from_chunks(chunks: Vec<Chunk>, chunk_len: usize) -> Option<Self> {
        let full = chunks.len().saturating_sub(1);
        let shaped = chunk_len > 0
            && chunks[..full].iter().all(|c| c.len() == chunk_len)
            && chunks.last().is_none_or(|c| c.len() <= chunk_len);
        shaped.then_some(Self {
            chunks,
            chunk_len,
            recheck: false,
        })
    }

    /// An upper bound on the batch's distinct terms: the sum of its chunks'
    /// vocabularies.
    pub(crate) fn vocabulary_bound(&self) -> usize {
        self.chunks.iter().map(|c| c.vocab.len()).sum()
    }

    /// Number of documents in the batch.
    pub(crate) fn len(&self) -> usize {
        self.chunks.iter().map(Chunk::len).sum()
    }

    /// Each chunk, and how many documents a chunk holds (the last may hold fewer).
    pub(crate) fn chunks(&self) -> (&[Chunk], usize) {
        (&self.chunks, self.chunk_len)
    }

    /// The chunk holding document `i`, and its position there.
    pub(super) fn locate(&self, i: usize) -> (usize, usize) {
        (i / self.chunk_len, i % self.chunk_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(n: usize) -> Vec<Box<str>> {
        (0..n).map(|i| format!("t{i}").into()).collect()
    }

    #[test]
    fn a_chunk_read_back_is_the_chunk_analysed() {
        let texts = ["red apples and red pears", "pears again", "sun"];
        let chunk = Chunk::analyse(&texts);
        let (v, terms, ends) = chunk.parts();
        let back = Chunk::from_parts(v.to_vec(), terms.to_vec(), ends.to_vec()).unwrap();
        assert_eq!(back.parts(), chunk.parts());
        assert_eq!(back.df, chunk.df);
        assert_eq!(back.len(), 3);
    }

    #[test]
    fn parts_that_no_analysis_makes_are_refused() {
        let encoded = |pairs: &[(u32, u32)]| {
            let mut out = Vec::new();
            codec::encode(&mut out, 0, pairs.iter().copied());
            out
        };
        // Ids inside the vocabulary, increasing: accepted.
        let good = encoded(&[(0, 1), (2, 3)]);
        let good_len = good.len() as u32;
        assert!(Chunk::from_parts(vocab(3), good.clone(), vec![good_len]).is_ok());
        // An id past the vocabulary.
        let past = encoded(&[(0, 1), (3, 1)]);
        let n = past.len() as u32;
        assert!(Chunk::from_parts(vocab(3), past, vec![n]).is_err());
        // The same id twice in one document (a zero delta after the first).
        let twice = encoded(&[(1, 1), (1, 1)]);
        let n = twice.len() as u32;
        assert!(Chunk::from_parts(vocab(3), twice, vec![n]).is_err());
        // Ends out of order, past the bytes, or short of them.
        assert!(Chunk::from_parts(vocab(3), good.clone(), vec![good_len, 1]).is_err());
        assert!(Chunk::from_parts(vocab(3), good.clone(), vec![good_len + 1]).is_err());
        assert!(Chunk::from_parts(vocab(3), good, vec![1]).is_err());
    }
}
