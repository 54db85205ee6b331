//! One term's posting list, compressed: blocks of up to [`BLOCK`] postings, sorted by
//! document slot across the whole list (each block's slots are above the previous
//! block's), in one byte buffer per term.
//!
//! - **Sealed blocks** (every block but the last) are bit-packed by the `bitpacking` crate
//!   ([`packed`](super::packed)): slot deltas and `tf − 1`, each at the width of its
//!   largest value, unpacked a whole block at a time with SIMD.
//! - **The last block** is open: [`codec`](super::codec) varints (a gap and a flag, one
//!   byte in the common case), so a posting for a new highest slot is appended without
//!   re-encoding anything. When it is full, the next insert seals it.
//!
//! Because the list is sorted, a [`Cursor`] finds a slot by skipping whole blocks on their
//! slot ranges and unpacking only the block that may hold it: searches look documents up
//! in the lists of the other query terms instead of decoding those lists whole.
//!
//! A posting for a slot below the list's last one (a slot freed and reused) goes into the
//! block whose range holds it, re-encoded; a block that overflows splits in two. A removal
//! re-encodes the one block holding the slot (see [`PostingList::remove`]); an emptied
//! block is dropped. Blocks double as the unit of
//! [`SparseIndex::score_top`](super::sparse::SparseIndex::score_top)'s bounds.

use crate::codec::{self, Pairs};
use crate::packed::{self, Widths};
use crate::shared::Buf;

pub use crate::packed::BLOCK;

/// Where a block is and which slots it covers.
#[derive(Debug, Clone, Copy)]
pub struct BlockMeta {
    /// Offset of its bytes in [`PostingList::bytes`].
    start: u32,
    /// Its smallest slot (the base its gaps start from) and its largest.
    first: u32,
    last: u32,
    /// Number of postings (1 to [`BLOCK`]).
    len: u8,
    /// Bit widths of a sealed block (unused for the open one).
    widths: Widths,
}

/// A term's postings: `(slot, tf)` for each document holding the term.
#[derive(Debug, Default)]
pub struct PostingList {
    bytes: Buf<u8>,
    blocks: Buf<BlockMeta>,
    len: u32,
    /// Bytes left unused inside the list by removals (see [`remove`](Self::remove)).
    padding: u32,
}

/// A decoded block: slots and counts (`tf`), in slot order; the first
/// [`len`](Self::len) entries are the block's.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub slots: [u32; BLOCK],
    /// `tf − 1` of each posting.
    pub tfs: [u32; BLOCK],
    pub len: usize,
}

impl Default for Decoded {
    fn default() -> Self {
        Self {
            slots: [0; BLOCK],
            tfs: [0; BLOCK],
            len: 0,
        }
    }
}

impl Decoded {
    /// `(slot, tf)` of posting `i`.
    #[inline]
    pub fn get(&self, i: usize) -> (u32, u32) {
        (self.slots[i], self.tfs[i] + 1)
    }
}

/// One block of a [`PostingList`], to decode.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    bytes: &'a [u8],
    meta: BlockMeta,
    sealed: bool,
}

impl Block<'_> {
    /// Decodes the block into `out`.
    #[inline]
    pub fn decode(self, out: &mut Decoded) {
        let n = self.meta.len as usize;
        out.len = n;
        if self.sealed {
            packed::unpack(
                self.bytes,
                self.meta.first,
                self.meta.widths,
                &mut out.slots,
                &mut out.tfs,
            );
            return;
        }
        for (i, (slot, tf)) in Pairs::new(self.bytes, self.meta.first).take(n).enumerate() {
            out.slots[i] = slot;
            out.tfs[i] = tf - 1;
        }
    }

    /// The block's smallest and largest slots.
    #[inline]
    pub fn range(self) -> (u32, u32) {
        (self.meta.first, self.meta.last)
    }

    /// Whether every posting of the block counts its term once (its `tf − 1` are all 0,
    /// known without decoding for a sealed block).
    #[inline]
    pub fn all_single(self) -> bool {
        self.sealed && self.meta.widths.tfs == 0
    }

    /// Decodes only the slots when every count is one (see [`all_single`](Self::all_single)),
    /// else everything.
    #[inline]
    pub fn decode_slots(self, out: &mut Decoded) {
        if self.all_single() {
            out.len = self.meta.len as usize;
            packed::unpack_slots(
                self.bytes,
                self.meta.first,
                self.meta.widths,
                &mut out.slots,
            );
        } else {
            self.decode(out);
        }
    }
}

/// Block `i` of a list whose bytes are `bytes` and block entries `metas` (a sealed
/// block's span may end in padding).
#[inline]
fn block_of<'a>(bytes: &'a [u8], metas: &'a [BlockMeta], i: usize) -> Block<'a> {
    let meta = metas[i];
    let end = metas.get(i + 1).map_or(bytes.len(), |b| b.start as usize);
    Block {
        bytes: &bytes[meta.start as usize..end],
        meta,
        sealed: i + 1 < metas.len(),
    }
}

/// Appends `pairs` (sorted by slot, 1 to [`BLOCK`] of them) as an open block.
fn open(out: &mut Vec<u8>, pairs: &[(u32, u32)]) {
    codec::encode(out, pairs[0].0, pairs.iter().copied());
}

/// The meta of a block holding `pairs` (sorted, 1 to [`BLOCK`]), starting at `start`.
fn meta(start: usize, pairs: &[(u32, u32)], widths: Widths) -> BlockMeta {
    BlockMeta {
        start: start as u32,
        first: pairs[0].0,
        last: pairs[pairs.len() - 1].0,
        len: pairs.len() as u8,
        widths,
    }
}

/// Widths of an open block (not used to read it).
const OPEN: Widths = Widths { gaps: 0, tfs: 0 };

impl PostingList {
    /// Number of postings (the term's document frequency).
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no document holds the term.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of blocks.
    #[inline]
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// The blocks, in slot order.
    #[inline]
    pub fn blocks(&self) -> impl Iterator<Item = Block<'_>> + '_ {
        // The slices once (each a branch and, when shared, a pointer more to follow).
        let (bytes, metas) = (&*self.bytes, &*self.blocks);
        (0..metas.len()).map(move |i| block_of(bytes, metas, i))
    }

    /// Block `i`.
    #[inline]
    pub fn block(&self, i: usize) -> Block<'_> {
        block_of(&self.bytes, &self.blocks, i)
    }

    /// Every `(slot, tf)`, in slot order.
    #[cfg(test)]
    pub fn postings(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::with_capacity(self.len());
        let mut buf = Decoded::default();
        for block in self.blocks() {
            block.decode(&mut buf);
            out.extend((0..buf.len).map(|i| buf.get(i)));
        }
        out
    }

    /// Makes room for about `postings` more postings.
    pub fn reserve(&mut self, postings: usize) {
        // Two bytes a posting covers slot gaps below 8,192 with a count of one.
        self.bytes.to_mut().reserve(2 * postings);
        self.blocks.to_mut().reserve(postings.div_ceil(BLOCK));
    }

    /// Gives back spare capacity beyond what doubling leaves (more than the length
    /// again): room reserved ahead of a batch and not used is given back, while a list
    /// growing batch after batch keeps its amortised growth (shrinking it after every
    /// batch made the next one copy it whole: a load in batches of 1,000 took 4x as long).
    pub fn shrink_to_fit(&mut self) {
        fn trim<T>(v: &mut Vec<T>) {
            if v.capacity() > 2 * v.len() {
                v.shrink_to_fit();
            }
        }
        if let Buf::Owned(bytes) = &mut self.bytes {
            trim(bytes);
        }
        if let Buf::Owned(blocks) = &mut self.blocks {
            trim(blocks);
        }
    }

    /// Bytes held on the heap (capacity, not just length; a range of a shared array
    /// counts as its length).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.held() + self.blocks.held() * std::mem::size_of::<BlockMeta>()
    }

    /// Bytes in use: encoded postings (with any padding) and block entries.
    #[cfg(test)]
    pub fn used_bytes(&self) -> usize {
        self.bytes.len() + self.blocks.len() * std::mem::size_of::<BlockMeta>()
    }

    /// The pairs of block `i` and the bytes they take.
    fn pairs(&self, i: usize) -> (Vec<(u32, u32)>, usize) {
        self.pairs_as(i, i + 1 < self.blocks.len())
    }

    /// The pairs of block `i`, read as sealed or open, and the bytes they take.
    fn pairs_as(&self, i: usize, sealed: bool) -> (Vec<(u32, u32)>, usize) {
        let block = Block {
            sealed,
            ..self.block(i)
        };
        if block.sealed {
            let mut buf = Decoded::default();
            block.decode(&mut buf);
            let pairs = (0..buf.len).map(|i| buf.get(i)).collect();
            return (pairs, block.meta.widths.len());
        }
        let mut pairs = Pairs::new(block.bytes, block.meta.first);
        let decoded = pairs.by_ref().take(block.meta.len as usize).collect();
        (decoded, pairs.consumed())
    }

    /// The index of the first block whose last slot is at least `slot` (the only block
    /// that may hold it), or the number of blocks.
    fn find(&self, slot: u32) -> usize {
        self.blocks.partition_point(|b| b.last < slot)
    }

    /// Adds the posting of `slot`, counted `tf` times; the list must not hold `slot`.
    pub fn insert(&mut self, slot: u32, tf: u32) {
        debug_assert!(tf >= 1);
        self.len += 1;
        let Some(&last) = self.blocks.last() else {
            self.blocks.to_mut().reserve_exact(1); // most terms are rare: one block, not four
            return self.start_block(slot, tf);
        };
        let open_at = self.blocks.len() - 1;
        if slot > last.last {
            if last.len as usize >= BLOCK {
                self.seal_open();
                return self.start_block(slot, tf);
            }
            codec::put(self.bytes.to_mut(), last.last, slot, tf);
            let b = &mut self.blocks.to_mut()[open_at];
            b.last = slot;
            b.len += 1;
            return;
        }
        // A slot below the list's last (freed and reused): into the block whose range
        // may hold it, re-encoded.
        let i = self.find(slot);
        let (mut pairs, used) = self.pairs(i);
        let at = pairs.partition_point(|&(s, _)| s < slot);
        debug_assert!(pairs.get(at).is_none_or(|&(s, _)| s != slot));
        pairs.insert(at, (slot, tf));
        if i == open_at {
            self.rewrite_open(&pairs);
        } else if pairs.len() <= BLOCK {
            self.rewrite_sealed(i, &[&pairs], used);
        } else {
            let (low, high) = pairs.split_at(pairs.len() / 2);
            self.rewrite_sealed(i, &[low, high], used);
        }
        self.tidy();
    }

    /// Appends a new open block holding one posting.
    fn start_block(&mut self, slot: u32, tf: u32) {
        let start = self.bytes.len();
        codec::put(self.bytes.to_mut(), slot, slot, tf);
        self.blocks.to_mut().push(meta(start, &[(slot, tf)], OPEN));
    }

    /// Re-encodes the open (last) block as sealed, in place: its bytes end the list.
    fn seal_open(&mut self) {
        let i = self.blocks.len() - 1;
        let (pairs, _) = self.pairs(i);
        let bytes = self.bytes.to_mut();
        bytes.truncate(self.blocks[i].start as usize);
        self.blocks.to_mut()[i].widths = packed::pack(bytes, &pairs);
    }

    /// Replaces the open (last) block's postings by `pairs` (sorted, at least one): the
    /// first [`BLOCK`] sealed and the rest open when there are more.
    fn rewrite_open(&mut self, pairs: &[(u32, u32)]) {
        let i = self.blocks.len() - 1;
        let start = self.blocks[i].start as usize;
        let (bytes, blocks) = (self.bytes.to_mut(), self.blocks.to_mut());
        bytes.truncate(start);
        if pairs.len() <= BLOCK {
            open(bytes, pairs);
            blocks[i] = meta(start, pairs, OPEN);
            return;
        }
        let (sealed, rest) = pairs.split_at(BLOCK);
        let widths = packed::pack(bytes, sealed);
        blocks[i] = meta(start, sealed, widths);
        let start = bytes.len();
        open(bytes, rest);
        blocks.push(meta(start, rest, OPEN));
    }

    /// Replaces sealed block `i`, which took `used` bytes, by sealed blocks of `parts`
    /// (each sorted, 1 to [`BLOCK`] postings, in slot order): in place, padded, when they
    /// are no longer than it was, spliced in otherwise.
    fn rewrite_sealed(&mut self, i: usize, parts: &[&[(u32, u32)]], used: usize) {
        let start = self.blocks[i].start as usize;
        let mut encoded = Vec::with_capacity(used);
        let mut metas = Vec::with_capacity(parts.len());
        for part in parts {
            let at = start + encoded.len();
            let widths = packed::pack(&mut encoded, part);
            metas.push(meta(at, part, widths));
        }
        let (bytes, blocks) = (self.bytes.to_mut(), self.blocks.to_mut());
        if encoded.len() <= used {
            bytes[start..start + encoded.len()].copy_from_slice(&encoded);
            self.padding += (used - encoded.len()) as u32;
        } else {
            let grown = (encoded.len() - used) as u32;
            bytes.splice(start..start + used, encoded);
            for b in &mut blocks[i + 1..] {
                b.start += grown;
            }
        }
        blocks.splice(i..=i, metas);
    }

    /// Removes the posting of `slot`; whether the list held it.
    ///
    /// The block holding it is re-encoded. A sealed block is rewritten in place when it
    /// is no longer than it was (the usual case: one value fewer), leaving padding that
    /// readers skip (a block's length follows from its widths), and spliced in otherwise
    /// (a merged gap wider than all others). The last block is kept without padding (it
    /// grows at the end of the bytes), and the whole list is rewritten once padding is
    /// half of it, so a removal costs one block, amortised.
    pub fn remove(&mut self, slot: u32) -> bool {
        let i = self.find(slot);
        let Some(&meta) = self.blocks.get(i) else {
            return false;
        };
        if slot < meta.first {
            return false;
        }
        let was_last = i + 1 == self.blocks.len();
        let (mut pairs, used) = self.pairs(i);
        let Ok(at) = pairs.binary_search_by_key(&slot, |&(s, _)| s) else {
            return false;
        };
        pairs.remove(at);
        self.len -= 1;
        if pairs.is_empty() {
            self.blocks.to_mut().remove(i);
            if was_last {
                self.bytes.to_mut().truncate(meta.start as usize);
                if i > 0 {
                    self.unseal_last();
                }
            } else {
                // A sealed block's own bytes (padding after it was counted already).
                self.padding += used as u32;
            }
        } else if was_last {
            self.rewrite_open(&pairs);
        } else {
            self.rewrite_sealed(i, &[&pairs], used);
        }
        self.tidy();
        true
    }

    /// Frees an emptied list; rewrites one that is half padding.
    fn tidy(&mut self) {
        if self.is_empty() {
            *self = Self::default();
        } else if 2 * self.padding as usize > self.bytes.len() {
            self.repack();
        }
    }

    /// Rewrites the last block, sealed until its successor was removed, as an open one at
    /// its start; the list ends there.
    fn unseal_last(&mut self) {
        let i = self.blocks.len() - 1;
        let start = self.blocks[i].start as usize;
        let span = self.bytes.len() - start;
        let (pairs, used) = self.pairs_as(i, true);
        let bytes = self.bytes.to_mut();
        bytes.truncate(start);
        open(bytes, &pairs);
        self.padding -= (span - used) as u32;
    }

    /// Rewrites every block without padding.
    fn repack(&mut self) {
        let mut bytes = Vec::with_capacity(self.bytes.len() - self.padding as usize);
        let n = self.blocks.len();
        for i in 0..n {
            let (pairs, _) = self.pairs(i);
            self.blocks.to_mut()[i].start = bytes.len() as u32;
            if i + 1 < n {
                packed::pack(&mut bytes, &pairs);
            } else {
                open(&mut bytes, &pairs);
            }
        }
        self.bytes = Buf::Owned(bytes);
        self.padding = 0;
    }
}

impl PostingList {
    /// Appends the list's bytes to `bytes`, and to `entries` what it takes to find its
    /// blocks again ([`check_block`](Self::check_block)): the number of postings and of
    /// bytes, and per block its first slot (after the previous block's first) and, when
    /// sealed, its two widths. The rest of a block's entry (its length, last slot and
    /// place) follows from these. Meant for a list built by appending, whose sealed blocks
    /// are full and unpadded (what an index built in one go holds); others do not read
    /// back.
    pub fn flatten(&self, bytes: &mut Vec<u8>, entries: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.bytes);
        codec::put_varint(entries, u64::from(self.len));
        codec::put_varint(entries, self.bytes.len() as u64);
        let mut prev = 0;
        for (i, b) in self.blocks.iter().enumerate() {
            codec::put_varint(entries, u64::from(b.first - prev));
            prev = b.first;
            if i + 1 < self.blocks.len() {
                entries.extend_from_slice(&[b.widths.gaps, b.widths.tfs]);
            }
        }
    }

    /// The entry of a block of `len` postings whose bytes are `raw` and first slot
    /// `first`, sealed with `widths` or open (`None`), at `start` in its list, after a
    /// block ending at slot `prev`, checked: it decodes to postings sorted by slot, after
    /// `prev` and below `slots`, and encoding them again gives `raw` exactly. The
    /// postings are appended to `out`; `scratch` is room to work in.
    ///
    /// # Errors
    ///
    /// What does not hold, for a `SnapshotError` (the kernel's).
    #[allow(clippy::too_many_arguments)]
    pub fn check_block(
        raw: &[u8],
        start: usize,
        first: u32,
        len: usize,
        widths: Option<Widths>,
        (prev, slots): (Option<u32>, u32),
        out: &mut Vec<(u32, u32)>,
        scratch: &mut Vec<u8>,
    ) -> Result<BlockMeta, &'static str> {
        let from = out.len();
        match widths {
            Some(widths) => {
                if widths.gaps > 32 || widths.tfs > 32 || raw.len() != widths.len() {
                    return Err("a packed posting block of a bad width");
                }
                let mut buf = Decoded::default();
                packed::unpack(raw, first, widths, &mut buf.slots, &mut buf.tfs);
                if buf.tfs.contains(&u32::MAX) {
                    return Err("a posting counted past the largest count");
                }
                out.extend((0..len).map(|k| (buf.slots[k], buf.tfs[k] + 1)));
            }
            None => out.extend(Pairs::new(raw, first).take(len)),
        }
        let pairs = &out[from..];
        let sorted = pairs.windows(2).all(|w| w[0].0 < w[1].0);
        if pairs.len() != len
            || !sorted
            || pairs[0].0 != first
            || prev.is_some_and(|p| p >= first)
            || pairs[len - 1].0 >= slots
            || pairs.iter().any(|&(_, tf)| tf == 0)
        {
            return Err("a posting block out of order");
        }
        scratch.clear();
        let widths = match widths {
            Some(_) => packed::pack(scratch, pairs),
            None => {
                open(scratch, pairs);
                OPEN
            }
        };
        if scratch[..] != *raw {
            return Err("a posting block not encoded as this build encodes it");
        }
        Ok(meta(start, pairs, widths))
    }

    /// The list of `len` postings whose bytes are `bytes[span]` and block entries
    /// `metas[blocks]`, each block checked by [`check_block`](Self::check_block): ranges
    /// of arrays shared with the other lists read back with it.
    pub fn shared(
        bytes: &std::sync::Arc<Vec<u8>>,
        span: (u32, u32),
        metas: &std::sync::Arc<Vec<BlockMeta>>,
        blocks: (u32, u32),
        len: u32,
    ) -> Self {
        Self {
            bytes: Buf::shared(bytes, span.0, span.1),
            blocks: Buf::shared(metas, blocks.0, blocks.1),
            len,
            padding: 0,
        }
    }
}

/// Looks slots up in one [`PostingList`], in increasing order: whole blocks are passed
/// over on their slot ranges, and only a block that may hold a sought slot is decoded
/// (once, however many of its slots are sought).
#[derive(Debug)]
pub struct Cursor<'a> {
    /// The list's bytes and block entries (taken once: see [`PostingList::blocks`]).
    bytes: &'a [u8],
    metas: &'a [BlockMeta],
    /// The first block whose last slot is at least the last slot sought.
    block: usize,
    /// The block held decoded in `buf`, if any.
    decoded: Option<usize>,
    /// Position in `buf` of the first posting not below the last slot sought.
    pos: usize,
    buf: Box<Decoded>,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `list`.
    pub fn new(list: &'a PostingList) -> Self {
        Self {
            bytes: &list.bytes,
            metas: &list.blocks,
            block: 0,
            decoded: None,
            pos: 0,
            buf: Box::default(),
        }
    }

    /// Back to the start of the list, for another increasing run of slots (the decoded
    /// block is kept).
    pub fn rewind(&mut self) {
        self.block = 0;
        self.pos = 0;
    }

    /// The index of the one block that may hold `slot`, without decoding anything;
    /// `None` when no block's range holds it (the list does not hold it). `slot` must not
    /// be below the slots sought since the last [`rewind`](Self::rewind).
    #[inline]
    pub fn locate(&mut self, slot: u32) -> Option<usize> {
        let blocks = self.metas;
        while blocks.get(self.block).is_some_and(|b| b.last < slot) {
            self.block += 1;
        }
        let b = blocks.get(self.block)?;
        (slot >= b.first).then_some(self.block)
    }

    /// The indexes of the blocks whose ranges meet `lo..=hi`, without decoding anything
    /// (`lo` in the same order as [`locate`](Self::locate)'s slots).
    #[inline]
    pub fn overlapping(&mut self, lo: u32, hi: u32) -> std::ops::Range<usize> {
        self.locate(lo);
        let blocks = self.metas;
        let mut end = self.block;
        while blocks.get(end).is_some_and(|b| b.first <= hi) {
            end += 1;
        }
        self.block..end
    }

    /// The count `tf` of `slot` in the list, if it holds it (same order as
    /// [`locate`](Self::locate)).
    #[inline]
    pub fn seek(&mut self, slot: u32) -> Option<u32> {
        let b = self.locate(slot)?;
        if self.decoded != Some(b) {
            block_of(self.bytes, self.metas, b).decode(&mut self.buf);
            self.decoded = Some(b);
            self.pos = 0;
        }
        let buf = &*self.buf;
        let mut pos = self.pos;
        while pos < buf.len && buf.slots[pos] < slot {
            pos += 1;
        }
        self.pos = pos;
        (pos < buf.len && buf.slots[pos] == slot).then(|| buf.tfs[pos] + 1)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn contents(list: &PostingList) -> BTreeMap<u32, u32> {
        list.postings().into_iter().collect()
    }

    #[test]
    fn a_growing_list_is_compact_and_kept_in_blocks() {
        let mut list = PostingList::default();
        for slot in 0..1_000u32 {
            list.insert(slot * 3, 1 + slot % 2);
        }
        assert_eq!(list.len(), 1_000);
        assert_eq!(list.block_count(), 1_000usize.div_ceil(BLOCK));
        // Seven sealed blocks: gaps of three (two bits), counts of one or two (one bit),
        // 16 bytes a bit of width.
        let sealed = 7 * 16 * (2 + 1);
        // The open block: one byte a posting, two for a count of two.
        let open = 104 * 3 / 2;
        assert_eq!(list.bytes.len(), sealed + open);
        assert_eq!(list.postings()[7], (21, 2));
    }

    #[test]
    fn reused_slots_go_into_the_block_holding_their_range() {
        let mut list = PostingList::default();
        for slot in (0..600u32).step_by(2) {
            list.insert(slot, 1);
        }
        // Odd slots in the middle of sealed blocks: full blocks split, the list stays sorted.
        for slot in (1..300u32).step_by(2) {
            list.insert(slot, 3);
        }
        let got = list.postings();
        assert_eq!(got.len(), 300 + 150);
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(list.blocks.iter().all(|b| b.len as usize <= BLOCK));
        assert_eq!(got[1], (1, 3));
    }

    #[test]
    fn emptying_the_open_block_reopens_the_one_before() {
        let mut list = PostingList::default();
        for slot in 0..300u32 {
            list.insert(slot * 2, 1 + slot % 3);
        }
        // Blocks of 128, 128 and 44: empty the last, then the one before it.
        for slot in (0..300u32).rev().take(44 + 128) {
            assert!(list.remove(slot * 2));
            let want: Vec<(u32, u32)> = (0..slot).map(|s| (s * 2, 1 + s % 3)).collect();
            assert_eq!(list.postings(), want);
        }
        assert_eq!(list.block_count(), 1);
        for slot in 128..200u32 {
            list.insert(slot * 2, 1);
        }
        assert_eq!(list.len(), 200);
        assert_eq!(list.postings()[150], (300, 1));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32, u32),
        Remove(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (prop_oneof![0u32..400, 0u32..3_000, any::<u32>()], prop_oneof![1u32..3, 1u32..u32::MAX])
                .prop_map(|(s, tf)| Op::Insert(s, tf)),
            1 => prop_oneof![0u32..400, 0u32..3_000].prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn a_list_holds_what_was_inserted_and_not_removed(ops in prop::collection::vec(op(), 1..800)) {
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
            prop_assert_eq!(contents(&list), reference.clone());
            // Blocks hold 1 to 128 postings and follow each other in slot order.
            let mut prev: Option<u32> = None;
            for b in list.blocks.iter() {
                prop_assert!(b.len >= 1 && b.len as usize <= BLOCK);
                prop_assert!(b.first <= b.last);
                prop_assert!(prev.is_none_or(|p| p < b.first));
                prev = Some(b.last);
            }
            prop_assert!(2 * list.padding as usize <= list.bytes.len().max(1));
            // A cursor finds exactly the held slots, sought in increasing order.
            let mut cursor = Cursor::new(&list);
            for round in 0..2 {
                cursor.rewind();
                for slot in (0..3_100u32).step_by(1 + round) {
                    prop_assert_eq!(cursor.seek(slot), reference.get(&slot).copied(), "slot {}", slot);
                }
            }
        }
    }
}
