//! The sparse index as a few flat arrays, and back: what a fact snapshot keeps of its word
//! index, so that reading one back allocates an array per part (the terms' texts, the
//! postings' bytes, their block entries, the documents' term lists) instead of building
//! every term's and document's structures again. Each term's postings and each
//! document's terms are then ranges of those arrays ([`Buf`]), copied out only when an
//! update changes them.
//!
//! Layout (little-endian; counts `u32`, the sections' lengths `u32`, the rest LEB128
//! varints): the epoch (`u64`), the number of documents, of slots and of terms; the
//! terms' texts, then each one's length; the postings' bytes, then per term its number
//! of postings and of bytes and per block its first slot (and widths when sealed: see
//! [`PostingList::flatten`]); the documents' term lists, then each one's length. What a
//! block entry or a document's place is otherwise follows from those while reading (which
//! decodes everything to check it anyway), so a snapshot does not carry them.
//!
//! Reading checks everything a search or an update relies on: every posting list and
//! term list decodes, and encodes back to exactly its bytes; the postings of the terms
//! are exactly the documents' terms (same slots, same counts); the texts are distinct
//! UTF-8. Bytes that fail are refused, never read as another index.

use std::sync::Arc;

use crate::codec::{self, put_varint, Pairs};
use crate::dictionary::Dictionary;
use crate::packed::Widths;
use crate::postings::{PostingList, BLOCK};
use crate::shared::Buf;
use crate::sparse::{NormCell, SparseIndex, Term};

/// Appends `v` as four little-endian bytes.
fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes());
}

/// Appends `section` after its length.
fn put_section(out: &mut Vec<u8>, section: &[u8]) {
    put_u32(out, section.len());
    out.extend_from_slice(section);
}

impl SparseIndex {
    /// Appends the index to `out` as flat arrays, read back by
    /// [`read_flat`](Self::read_flat). Meant for an index built in one go (no term
    /// removed, no slot left empty, every list appended to): one that is not does not
    /// read back.
    pub fn write_flat(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.epoch.to_le_bytes());
        put_u32(out, self.doc_count);
        put_u32(out, self.docs.len());
        put_u32(out, self.terms.len());
        let (mut texts, mut ends) = (Vec::new(), Vec::with_capacity(self.terms.len()));
        self.dict.flatten(&mut texts, &mut ends);
        put_section(out, &texts);
        let mut lens = Vec::with_capacity(ends.len());
        let mut at = 0;
        for end in ends {
            put_varint(&mut lens, u64::from(end - at));
            at = end;
        }
        put_section(out, &lens);
        let (mut bytes, mut entries) = (Vec::new(), Vec::new());
        for term in &self.terms {
            term.postings.flatten(&mut bytes, &mut entries);
        }
        put_section(out, &bytes);
        put_section(out, &entries);
        let (mut docs, mut lens) = (Vec::new(), Vec::with_capacity(self.docs.len()));
        for doc in &self.docs {
            let doc = doc.as_deref().unwrap_or_default();
            docs.extend_from_slice(doc);
            put_varint(&mut lens, doc.len() as u64);
        }
        put_section(out, &docs);
        put_section(out, &lens);
    }

    /// The index written by [`write_flat`](Self::write_flat) as exactly `bytes`.
    ///
    /// # Errors
    ///
    /// What is wrong with the bytes (for a
    /// `SnapshotError` (the kernel's)): cut short, trailing bytes, or any
    /// part that is not what [`write_flat`](Self::write_flat) writes of an index.
    pub fn read_flat(bytes: &[u8]) -> Result<Self, &'static str> {
        let mut r = Reader(bytes);
        let epoch = u64::from_le_bytes(r.array()?);
        let doc_count = r.u32()? as usize;
        let slots = r.count()?;
        let n_terms = r.count()?;
        if doc_count != slots {
            return Err("documents missing from their slots");
        }
        let texts = r.section()?;
        let mut lens = Reader(r.section()?);
        let mut ends = Vec::with_capacity(n_terms);
        let mut at = 0u32;
        for _ in 0..n_terms {
            at = at
                .checked_add(lens.varint()?)
                .ok_or("a term past the texts")?;
            ends.push(at);
        }
        lens.done()?;
        let dict = Dictionary::from_flat(texts, &ends)?;
        let postings = Arc::new(r.section()?.to_vec());
        let mut entries = Reader(r.section()?);
        let doc_bytes = Arc::new(r.section()?.to_vec());
        let mut doc_lens = Reader(r.section()?);
        r.done()?;

        // Every term's blocks, checked (their entries made on the way), and its postings
        // kept in one list to check the documents' terms against.
        let mut all = Vec::new();
        let mut starts = Vec::with_capacity(n_terms + 1);
        let mut spans = Vec::with_capacity(n_terms);
        let mut metas = Vec::with_capacity(n_terms);
        let mut scratch = Vec::new();
        let mut byte_at = 0usize;
        for _ in 0..n_terms {
            starts.push(all.len());
            let len = entries.varint()? as usize;
            let size = entries.varint()? as usize;
            let list = postings
                .get(byte_at..byte_at.saturating_add(size))
                .ok_or("a posting list past the postings")?;
            if len == 0 {
                return Err("a term without postings");
            }
            let n_blocks = len.div_ceil(BLOCK);
            let meta_at = metas.len();
            let (mut first, mut at, mut prev) = (0u32, 0usize, None);
            for b in 0..n_blocks {
                first = first
                    .checked_add(entries.varint()?)
                    .ok_or("a slot past the largest")?;
                let sealed = b + 1 < n_blocks;
                let (raw, widths, n) = if sealed {
                    let [gaps, tfs] = entries.array()?;
                    let widths = Widths { gaps, tfs };
                    let end = at.saturating_add(widths.len());
                    let raw = list.get(at..end).ok_or("a posting block past its list")?;
                    (raw, Some(widths), BLOCK)
                } else {
                    (&list[at.min(list.len())..], None, len - b * BLOCK)
                };
                let meta = PostingList::check_block(
                    raw,
                    at,
                    first,
                    n,
                    widths,
                    (prev, slots as u32),
                    &mut all,
                    &mut scratch,
                )?;
                prev = all.last().map(|&(slot, _)| slot);
                at += raw.len();
                metas.push(meta);
            }
            spans.push((byte_at, byte_at + size, meta_at, metas.len(), len));
            byte_at += size;
        }
        entries.done()?;
        if byte_at != postings.len() {
            return Err("postings no term holds");
        }
        let metas = Arc::new(metas);
        let terms: Vec<Term> = spans
            .into_iter()
            .map(|(start, end, m_start, m_end, len)| {
                let mut term = Term::default();
                term.postings = PostingList::shared(
                    &postings,
                    (start as u32, end as u32),
                    &metas,
                    (m_start as u32, m_end as u32),
                    len as u32,
                );
                term
            })
            .collect();

        // Every document's terms: sorted known term ids with counts, encoded as this
        // build encodes them, and each the next posting of its term.
        let mut cursors = starts.clone();
        starts.push(all.len());
        let mut docs = Vec::with_capacity(slots);
        let (mut pairs, mut again) = (Vec::new(), Vec::new());
        let mut at = 0usize;
        for slot in 0..slots {
            let end = at.saturating_add(doc_lens.varint()? as usize);
            let raw = doc_bytes
                .get(at..end)
                .ok_or("a document past the documents")?;
            pairs.clear();
            pairs.extend(Pairs::new(raw, 0));
            let sorted = pairs.windows(2).all(|w| w[0].0 < w[1].0);
            if !sorted
                || pairs
                    .iter()
                    .any(|&(t, tf)| t as usize >= n_terms || tf == 0)
            {
                return Err("a document's terms out of order or unknown");
            }
            again.clear();
            codec::encode(&mut again, 0, pairs.iter().copied());
            if again != raw {
                return Err("a document's terms not encoded as this build encodes them");
            }
            for &(t, tf) in &pairs {
                let c = &mut cursors[t as usize];
                if *c >= starts[t as usize + 1] || all[*c] != (slot as u32, tf) {
                    return Err("a document's terms are not the postings");
                }
                *c += 1;
            }
            docs.push(Some(Buf::shared(&doc_bytes, at as u32, end as u32)));
            at = end;
        }
        doc_lens.done()?;
        if cursors[..n_terms] != starts[1..] || at != doc_bytes.len() {
            return Err("postings of no document, or document bytes of none");
        }

        let mut index = Self::default();
        index.dict = dict;
        index.terms = terms;
        index.docs = docs;
        index.norms = (0..slots).map(|_| NormCell::stale()).collect();
        index.doc_count = doc_count;
        index.epoch = epoch;
        Ok(index)
    }
}

/// The bytes left to read.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn array<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let Some((head, rest)) = self.0.split_first_chunk::<N>() else {
            return Err("the index ends early");
        };
        self.0 = rest;
        Ok(*head)
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        self.array().map(u32::from_le_bytes)
    }

    /// A count of items taking at least a byte each, never more than the bytes left
    /// could hold (so a damaged count reserves no more memory than the bytes).
    fn count(&mut self) -> Result<usize, &'static str> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return Err("the index ends early");
        }
        Ok(n)
    }

    /// A length and that many bytes.
    fn section(&mut self) -> Result<&'a [u8], &'static str> {
        let n = self.u32()? as usize;
        if self.0.len() < n {
            return Err("the index ends early");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    /// A LEB128 varint of at most 32 bits, in the fewest bytes.
    fn varint(&mut self) -> Result<u32, &'static str> {
        let mut value = 0u64;
        for (i, &b) in self.0.iter().enumerate().take(5) {
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                if (i > 0 && b == 0) || value > u64::from(u32::MAX) {
                    return Err("a number not written as this build writes it");
                }
                self.0 = &self.0[i + 1..];
                return Ok(value as u32);
            }
        }
        Err("a number cut short")
    }

    /// Nothing left.
    fn done(&self) -> Result<(), &'static str> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err("bytes after the index's parts")
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn scores(index: &SparseIndex, query: &str) -> BTreeMap<u32, u32> {
        let mut out = BTreeMap::new();
        index.score(query, |s, c| {
            out.insert(s, c.to_bits());
        });
        out
    }

    fn built(texts: &[String]) -> SparseIndex {
        let mut index = SparseIndex::default();
        for (slot, text) in texts.iter().enumerate() {
            index.insert(slot as u32, text);
        }
        index
    }

    const WORDS: &[&str] = &[
        "jazz", "tea", "Lyon", "note", "the", "北京", "hiking", "runs",
    ];

    fn texts() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(
            prop::collection::vec((0..WORDS.len(), 0u32..300), 0..8).prop_map(|words| {
                words
                    .iter()
                    .map(|&(w, n)| {
                        if n % 3 == 0 {
                            format!("{} {n}", WORDS[w])
                        } else {
                            WORDS[w].to_owned()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            0..400,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Read back, the index scores every query as the index it was written from, to
        /// the bit, and takes updates as that one does.
        #[test]
        fn the_flat_index_reads_back_as_the_index(texts in texts(), extra in texts()) {
            let mut index = built(&texts);
            let mut bytes = Vec::new();
            index.write_flat(&mut bytes);
            let mut again = SparseIndex::read_flat(&bytes).unwrap();
            for q in ["jazz", "tea Lyon note", "the 3", "北京 runs hiking", "nothing"] {
                prop_assert_eq!(scores(&index, q), scores(&again, q), "{}", q);
            }
            // Updates copy what they change out of the shared arrays.
            for (i, text) in extra.iter().enumerate() {
                let slot = (i * 7 % (texts.len() + extra.len() + 1)) as u32;
                if i % 3 == 0 {
                    prop_assert_eq!(index.remove(slot), again.remove(slot));
                } else {
                    index.insert(slot, text);
                    again.insert(slot, text);
                }
            }
            for q in ["jazz", "tea Lyon note", "the 3", "北京 runs hiking"] {
                prop_assert_eq!(scores(&index, q), scores(&again, q), "{}", q);
            }
        }

        /// Bytes cut short, or with any bit flipped, are refused or read as an index that
        /// holds together; never a panic.
        #[test]
        fn damaged_flat_bytes_are_refused_never_a_panic(
            texts in texts(),
            cut in any::<prop::sample::Index>(),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let mut bytes = Vec::new();
            built(&texts).write_flat(&mut bytes);
            let cut = cut.index(bytes.len());
            prop_assert!(SparseIndex::read_flat(&bytes[..cut]).is_err());
            let at = flip.index(bytes.len());
            bytes[at] ^= 1 << bit;
            if let Ok(mut index) = SparseIndex::read_flat(&bytes) {
                // Whatever was read is searched and updated without a panic.
                let _ = scores(&index, "jazz the 3");
                for slot in 0..index.docs.len() as u32 {
                    index.remove(slot);
                }
                prop_assert_eq!(index.doc_count, 0);
            }
        }
    }

    #[test]
    fn a_term_listed_under_the_wrong_document_is_refused() {
        let index = built(&["jazz tea".to_owned(), "tea Lyon".to_owned()]);
        let mut bytes = Vec::new();
        index.write_flat(&mut bytes);
        assert!(SparseIndex::read_flat(&bytes).is_ok());
        // The documents' term lists come before their two lengths (a byte each, after
        // the section's length): document 1's list is `tea` (id 1, delta 1 → 0x02) then
        // `Lyon` (id 2, delta 1 → 0x02); making its first id 0 (`jazz`) names a term
        // whose postings do not hold it.
        let lists_end = bytes.len() - 2 - 4;
        let doc1 = lists_end - 2;
        assert_eq!(&bytes[doc1..lists_end], &[0x02, 0x02]);
        bytes[doc1] = 0x00;
        assert_eq!(
            SparseIndex::read_flat(&bytes).err(),
            Some("a document's terms are not the postings")
        );
    }
}
