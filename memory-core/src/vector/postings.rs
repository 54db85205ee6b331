//! One term's posting list, compressed: blocks of up to [`BLOCK`] postings, each sorted by
//! document slot, in one byte buffer per term.
//!
//! - **Sealed blocks** (every block but the last) are bit-packed, as tantivy's are: the
//!   slot gaps at the width of the block's largest gap, then `tf − 1` at the width of its
//!   largest (zero bits when every count is one), after two bytes giving both widths.
//!   A block decodes in a tight loop with no position carried from value to value.
//! - **The last block** is open: [`codec`](super::codec) varints (a gap and a flag, one
//!   byte in the common case), so a posting is appended without re-encoding anything.
//!   When it is full, the next insert seals it.
//!
//! Blocks are sorted within themselves, not against each other: a new posting goes into
//! the last block (appended when its slot is above the block's last, the usual case of a
//! growing index, else re-encoding that block), so an insert costs at most one block.
//! A removal re-encodes the one block holding the slot (found by the blocks' slot ranges)
//! in place (see [`PostingList::remove`]); an emptied block is dropped. Blocks double as
//! the unit of [`SparseIndex::score_top`]'s bounds.
//!
//! [`SparseIndex::score_top`]: super::sparse::SparseIndex::score_top

use super::bitpack;
use super::codec::{self, tf_weight, tf_weights, weight_in, Pairs};

/// Most postings of one block.
pub(super) const BLOCK: usize = 128;
const _: () = assert!(BLOCK == bitpack::RUN, "a sealed block unpacks as one run");

/// Where a block is and which slots it covers.
#[derive(Debug, Clone, Copy)]
struct BlockMeta {
    /// Offset of its bytes in [`PostingList::bytes`].
    start: u32,
    /// Its smallest slot (the base its gaps start from) and its largest.
    first: u32,
    last: u32,
    /// Number of postings.
    len: u32,
}

/// A term's postings: `(slot, tf)` for each document holding the term.
#[derive(Debug, Default)]
pub(super) struct PostingList {
    bytes: Vec<u8>,
    blocks: Vec<BlockMeta>,
    len: u32,
    /// Bytes left unused inside the list by removals (see [`remove`](Self::remove)).
    padding: u32,
}

/// One block of a [`PostingList`], to decode.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block<'a> {
    bytes: &'a [u8],
    first: u32,
    len: u32,
    sealed: bool,
}

/// A decoded block: `(slot, 1 + ln tf)` in slot order.
pub(super) type Decoded = [(u32, f32); BLOCK];

impl Block<'_> {
    /// Decodes the block into `out`; its postings are `out[..n]` for the `n` returned.
    #[inline]
    pub(super) fn decode(self, out: &mut Decoded) -> usize {
        let n = (self.len as usize).min(BLOCK);
        if !self.sealed {
            for (o, (slot, tf)) in out
                .iter_mut()
                .zip(Pairs::new(self.bytes, self.first).take(n))
            {
                *o = (slot, tf_weight(tf));
            }
            return n;
        }
        let (gap_width, tf_width) = (u32::from(self.bytes[0]), u32::from(self.bytes[1]));
        let gaps = &self.bytes[2..];
        let tfs = &gaps[bitpack::packed_len(n.saturating_sub(1), gap_width)..];
        let mut values = [0u32; BLOCK];
        let mut slot = self.first;
        out[0].0 = slot;
        if gap_width > 0 {
            bitpack::unpack(gaps, gap_width, &mut values);
            for (o, gap) in out[1..n].iter_mut().zip(values) {
                slot = slot.wrapping_add(gap);
                o.0 = slot;
            }
        } else {
            for o in &mut out[1..n] {
                o.0 = slot;
            }
        }
        if tf_width == 0 {
            for o in &mut out[..n] {
                o.1 = 1.0;
            }
        } else {
            bitpack::unpack(tfs, tf_width, &mut values);
            let table = tf_weights();
            for (o, tf) in out[..n].iter_mut().zip(values) {
                o.1 = weight_in(table, tf + 1);
            }
        }
        n
    }

    /// Adds `(1 + ln tf) × factor` to `acc[slot]` for each of the block's postings (the
    /// dot-product pass of a search), without materialising the decoded pairs.
    #[inline]
    pub(super) fn add_to(self, acc: &mut [f32], factor: f32) {
        let n = (self.len as usize).min(BLOCK);
        if !self.sealed {
            for (slot, tf) in Pairs::new(self.bytes, self.first).take(n) {
                acc[slot as usize] += tf_weight(tf) * factor;
            }
            return;
        }
        let (gap_width, tf_width) = (u32::from(self.bytes[0]), u32::from(self.bytes[1]));
        let gaps = &self.bytes[2..];
        let tfs = &gaps[bitpack::packed_len(n.saturating_sub(1), gap_width)..];
        let mut gap = [0u32; BLOCK];
        if gap_width > 0 {
            bitpack::unpack(gaps, gap_width, &mut gap);
        }
        // Gap i leads from posting i to posting i + 1; the first posting has none.
        gap.copy_within(0..n - 1, 1);
        gap[0] = 0;
        let mut slot = self.first;
        if tf_width == 0 {
            for &g in &gap[..n] {
                slot = slot.wrapping_add(g);
                acc[slot as usize] += factor;
            }
        } else {
            let mut tf = [0u32; BLOCK];
            bitpack::unpack(tfs, tf_width, &mut tf);
            let table = tf_weights();
            for (&g, &t) in gap[..n].iter().zip(&tf[..n]) {
                slot = slot.wrapping_add(g);
                acc[slot as usize] += weight_in(table, t + 1) * factor;
            }
        }
    }

    /// The block's `(slot, 1 + ln tf)`, in slot order.
    #[cfg(test)]
    pub(super) fn postings(self) -> impl Iterator<Item = (u32, f32)> {
        let mut out = [(0, 0.0); BLOCK];
        let n = self.decode(&mut out);
        out.into_iter().take(n)
    }
}

/// Appends `pairs` (sorted by slot, at least one) as a sealed block.
fn seal(out: &mut Vec<u8>, pairs: &[(u32, u32)]) {
    let gaps = pairs.windows(2).map(|w| w[1].0 - w[0].0);
    let gap_width = bitpack::width(gaps.clone().max().unwrap_or(0));
    let tf_width = bitpack::width(pairs.iter().map(|p| p.1 - 1).max().unwrap_or(0));
    out.push(gap_width as u8);
    out.push(tf_width as u8);
    bitpack::pack(out, gaps, gap_width);
    bitpack::pack(out, pairs.iter().map(|p| p.1 - 1), tf_width);
}

/// Appends `pairs` (sorted by slot, at least one) as an open block.
fn open(out: &mut Vec<u8>, pairs: &[(u32, u32)]) {
    codec::encode(out, pairs[0].0, pairs.iter().copied());
}

impl PostingList {
    /// Number of postings (the term's document frequency).
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no document holds the term.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The blocks, in list order.
    #[inline]
    pub(super) fn blocks(&self) -> impl Iterator<Item = Block<'_>> + '_ {
        self.blocks
            .iter()
            .enumerate()
            .map(|(i, b)| self.block(i, b))
    }

    fn block(&self, i: usize, b: &BlockMeta) -> Block<'_> {
        Block {
            bytes: &self.bytes[b.start as usize..self.end(i)],
            first: b.first,
            len: b.len,
            sealed: i + 1 < self.blocks.len(),
        }
    }

    /// Every `(slot, 1 + ln tf)`, block after block.
    #[cfg(test)]
    pub(super) fn postings(&self) -> impl Iterator<Item = (u32, f32)> + '_ {
        self.blocks().flat_map(Block::postings)
    }

    /// End of block `i`'s bytes.
    fn end(&self, i: usize) -> usize {
        self.blocks
            .get(i + 1)
            .map_or(self.bytes.len(), |b| b.start as usize)
    }

    /// Makes room for about `postings` more postings.
    pub(super) fn reserve(&mut self, postings: usize) {
        // Two bytes a posting covers slot gaps below 8,192 with a count of one.
        self.bytes.reserve(2 * postings);
        self.blocks.reserve(postings.div_ceil(BLOCK));
    }

    /// Gives back spare capacity.
    pub(super) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.blocks.shrink_to_fit();
    }

    /// Bytes held on the heap (capacity, not just length).
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.blocks.capacity() * std::mem::size_of::<BlockMeta>()
    }

    /// Bytes in use: encoded postings (with any padding) and block entries.
    #[cfg(test)]
    pub(super) fn used_bytes(&self) -> usize {
        self.bytes.len() + self.blocks.len() * std::mem::size_of::<BlockMeta>()
    }

    /// The pairs of block `i`, read as sealed or open, and the bytes they take (a sealed
    /// block's span may end in padding).
    fn decode(&self, i: usize, sealed: bool) -> (Vec<(u32, u32)>, usize) {
        let meta = self.blocks[i];
        let bytes = &self.bytes[meta.start as usize..self.end(i)];
        let n = meta.len as usize;
        if !sealed {
            let mut pairs = Pairs::new(bytes, meta.first);
            let decoded = pairs.by_ref().take(n).collect();
            return (decoded, pairs.consumed());
        }
        let (gap_width, tf_width) = (u32::from(bytes[0]), u32::from(bytes[1]));
        let gaps_len = bitpack::packed_len(n - 1, gap_width);
        let (gaps, tfs) = bytes[2..].split_at(gaps_len);
        let mut slot = meta.first;
        let decoded = (0..n)
            .map(|i| {
                if i > 0 && gap_width > 0 {
                    slot = slot.wrapping_add(bitpack::get(gaps, i - 1, gap_width));
                }
                let tf = if tf_width == 0 {
                    0
                } else {
                    bitpack::get(tfs, i, tf_width)
                };
                (slot, tf + 1)
            })
            .collect();
        (decoded, 2 + gaps_len + bitpack::packed_len(n, tf_width))
    }

    /// Adds the posting of `slot`, counted `tf` times; the list must not hold `slot`.
    pub(super) fn insert(&mut self, slot: u32, tf: u32) {
        self.len += 1;
        let Some(&last) = self.blocks.last() else {
            self.blocks.reserve_exact(1); // most terms are rare: one block, not four
            return self.start_block(slot, tf);
        };
        if last.len as usize >= BLOCK {
            // Seal the full block (it is no longer the last) and start another.
            let i = self.blocks.len() - 1;
            let (pairs, _) = self.decode(i, false);
            self.bytes.truncate(last.start as usize);
            seal(&mut self.bytes, &pairs);
            return self.start_block(slot, tf);
        }
        let i = self.blocks.len() - 1;
        if slot > last.last {
            codec::put(&mut self.bytes, last.last, slot, tf);
            self.blocks[i].last = slot;
            self.blocks[i].len += 1;
            return;
        }
        // Below the block's last slot: re-encode the block with the posting in place.
        let (mut pairs, _) = self.decode(i, false);
        let at = pairs.partition_point(|&(s, _)| s < slot);
        debug_assert!(pairs.get(at).is_none_or(|&(s, _)| s != slot));
        pairs.insert(at, (slot, tf));
        self.bytes.truncate(last.start as usize);
        open(&mut self.bytes, &pairs);
        self.blocks[i].first = pairs[0].0;
        self.blocks[i].len += 1;
    }

    /// Appends a new open block holding one posting.
    fn start_block(&mut self, slot: u32, tf: u32) {
        let start = self.bytes.len() as u32;
        codec::put(&mut self.bytes, slot, slot, tf);
        self.blocks.push(BlockMeta {
            start,
            first: slot,
            last: slot,
            len: 1,
        });
    }

    /// Removes the posting of `slot`; whether the list held it.
    ///
    /// The block holding it is re-encoded. A sealed block is rewritten in place when it
    /// is no longer than it was (the usual case: one value fewer), leaving padding that
    /// readers skip (a block is read by its count of postings), and spliced in otherwise
    /// (a merged gap wider than all others). The last block is kept without padding (it
    /// grows at the end of the bytes), and the whole list is rewritten once padding is
    /// half of it, so a removal costs one block, amortised.
    pub(super) fn remove(&mut self, slot: u32) -> bool {
        for i in 0..self.blocks.len() {
            let meta = self.blocks[i];
            if slot < meta.first || slot > meta.last {
                continue;
            }
            let was_last = i + 1 == self.blocks.len();
            let (mut pairs, used) = self.decode(i, !was_last);
            let Ok(at) = pairs.binary_search_by_key(&slot, |&(s, _)| s) else {
                continue;
            };
            pairs.remove(at);
            self.len -= 1;
            let start = meta.start as usize;
            if pairs.is_empty() {
                self.blocks.remove(i);
                if was_last {
                    self.bytes.truncate(start);
                    if i > 0 {
                        self.unseal_last();
                    }
                } else {
                    self.padding += used as u32;
                }
            } else {
                self.blocks[i].first = pairs[0].0;
                self.blocks[i].last = pairs[pairs.len() - 1].0;
                self.blocks[i].len -= 1;
                let mut encoded = Vec::with_capacity(used);
                if was_last {
                    open(&mut encoded, &pairs);
                    self.bytes.truncate(start);
                    self.bytes.extend_from_slice(&encoded);
                } else {
                    seal(&mut encoded, &pairs);
                    if encoded.len() <= used {
                        self.bytes[start..start + encoded.len()].copy_from_slice(&encoded);
                        self.padding += (used - encoded.len()) as u32;
                    } else {
                        let grown = (encoded.len() - used) as u32;
                        self.bytes.splice(start..start + used, encoded);
                        for b in &mut self.blocks[i + 1..] {
                            b.start += grown;
                        }
                    }
                }
            }
            if self.is_empty() {
                *self = Self::default();
            } else if 2 * self.padding as usize > self.bytes.len() {
                self.repack();
            }
            return true;
        }
        false
    }

    /// Rewrites the last block, sealed until its successor was removed, as an open one at
    /// its start; the list ends there.
    fn unseal_last(&mut self) {
        let i = self.blocks.len() - 1;
        let start = self.blocks[i].start as usize;
        let span = self.bytes.len() - start;
        let (pairs, used) = self.decode(i, true);
        self.bytes.truncate(start);
        open(&mut self.bytes, &pairs);
        self.padding -= (span - used) as u32;
    }

    /// Rewrites every block without padding.
    fn repack(&mut self) {
        let mut bytes = Vec::with_capacity(self.bytes.len() - self.padding as usize);
        let n = self.blocks.len();
        for i in 0..n {
            let sealed = i + 1 < n;
            let (pairs, _) = self.decode(i, sealed);
            self.blocks[i].start = bytes.len() as u32;
            if sealed {
                seal(&mut bytes, &pairs);
            } else {
                open(&mut bytes, &pairs);
            }
        }
        self.bytes = bytes;
        self.padding = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn contents(list: &PostingList) -> BTreeMap<u32, f32> {
        list.postings().collect()
    }

    #[test]
    fn a_growing_list_is_compact_and_kept_in_blocks() {
        let mut list = PostingList::default();
        for slot in 0..1_000u32 {
            list.insert(slot * 3, 1 + slot % 2);
        }
        assert_eq!(list.len(), 1_000);
        assert_eq!(list.blocks().count(), 1_000usize.div_ceil(BLOCK));
        // Seven sealed blocks: gaps of three (two bits), counts of one or two (one bit).
        let sealed = 7 * (2 + bitpack::packed_len(127, 2) + bitpack::packed_len(128, 1));
        // The open block: one byte a posting, two for a count of two.
        let open = 104 * 3 / 2;
        assert_eq!(list.bytes.len(), sealed + open);
        assert_eq!(list.postings().nth(7), Some((21, tf_weight(2))));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32, u32),
        Remove(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (prop_oneof![0u32..400, any::<u32>()], 1u32..300).prop_map(|(s, tf)| Op::Insert(s, tf)),
            1 => (0u32..400).prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn a_list_holds_what_was_inserted_and_not_removed(ops in prop::collection::vec(op(), 1..600)) {
            let mut list = PostingList::default();
            let mut reference: BTreeMap<u32, u32> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(slot, tf) => {
                        if reference.insert(slot, tf).is_some() {
                            prop_assert!(list.remove(slot));
                        }
                        list.insert(slot, tf);
                    }
                    Op::Remove(slot) => {
                        prop_assert_eq!(list.remove(slot), reference.remove(&slot).is_some());
                    }
                }
                prop_assert_eq!(list.len(), reference.len());
            }
            let want: BTreeMap<u32, f32> =
                reference.iter().map(|(&s, &tf)| (s, tf_weight(tf))).collect();
            prop_assert_eq!(contents(&list), want);
            for block in list.blocks() {
                let slots: Vec<u32> = block.postings().map(|(s, _)| s).collect();
                prop_assert!(slots.len() <= BLOCK);
                prop_assert!(slots.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}
