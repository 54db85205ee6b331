//! Sealed posting blocks: 128 document slots and term counts bit-packed by the
//! `bitpacking` crate's [`BitPacker4x`] (tantivy's own block codec, SIMD where the CPU has
//! it), the layout of every block of a [`PostingList`](super::postings::PostingList) but
//! its last.
//!
//! A block of `n ≤ 128` postings sorted by slot is stored as two packed runs of 128
//! values, padded past `n` (slots repeat the last one, counts are zero, so padding never
//! widens a run):
//!
//! - the slot deltas from the block's first slot ([`BitPacker::compress_sorted`]), at the
//!   width of the largest gap;
//! - `tf − 1` per posting, at the width of the largest (zero bits, so no bytes, when every
//!   count is one, the common case).
//!
//! Each run takes `16 × width` bytes; the widths and `n` are kept by the caller.

use bitpacking::{BitPacker, BitPacker4x};

/// Postings in one sealed block (the packer's run length).
pub const BLOCK: usize = BitPacker4x::BLOCK_LEN;

/// Bit widths of a sealed block's two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Widths {
    /// Width of the slot deltas.
    pub gaps: u8,
    /// Width of `tf − 1`.
    pub tfs: u8,
}

impl Widths {
    /// Bytes the block takes.
    #[inline]
    pub fn len(self) -> usize {
        BitPacker4x::compressed_block_size(self.gaps) + BitPacker4x::compressed_block_size(self.tfs)
    }
}

/// Most bytes one packed run takes (32 bits a value).
const RUN_BYTES: usize = 4 * BLOCK;

/// Appends `pairs` (`(slot, tf)`, 1 to [`BLOCK`] of them, sorted by strictly increasing
/// slot, every `tf ≥ 1`) packed; returns the widths to read them back with.
pub fn pack(out: &mut Vec<u8>, pairs: &[(u32, u32)]) -> Widths {
    debug_assert!(!pairs.is_empty() && pairs.len() <= BLOCK);
    let packer = BitPacker4x::new();
    let first = pairs[0].0;
    let last = pairs[pairs.len() - 1].0;
    let mut slots = [last; BLOCK];
    let mut tfs = [0u32; BLOCK];
    for (i, &(slot, tf)) in pairs.iter().enumerate() {
        slots[i] = slot;
        tfs[i] = tf - 1;
    }
    let widths = Widths {
        gaps: packer.num_bits_sorted(first, &slots),
        tfs: packer.num_bits(&tfs),
    };
    let mut run = [0u8; RUN_BYTES];
    let n = packer.compress_sorted(first, &slots, &mut run, widths.gaps);
    out.extend_from_slice(&run[..n]);
    let n = packer.compress(&tfs, &mut run, widths.tfs);
    out.extend_from_slice(&run[..n]);
    widths
}

/// Unpacks a block packed by [`pack`] whose first slot is `first`: the slots into
/// `slots`, `tf − 1` into `tfs` (all 128 values; those past the block's count are
/// padding). `bytes` must hold at least [`Widths::len`] bytes.
#[inline]
pub fn unpack(
    bytes: &[u8],
    first: u32,
    widths: Widths,
    slots: &mut [u32; BLOCK],
    tfs: &mut [u32; BLOCK],
) {
    unpack_slots(bytes, first, widths, slots);
    unpack_tfs(bytes, widths, tfs);
}

/// The slots of a packed block (see [`unpack`]).
#[inline]
pub fn unpack_slots(bytes: &[u8], first: u32, widths: Widths, slots: &mut [u32; BLOCK]) {
    let packer = BitPacker4x::new();
    if widths.gaps == 0 {
        slots.fill(first);
    } else {
        packer.decompress_sorted(first, bytes, slots, widths.gaps);
    }
}

/// `tf − 1` of each posting of a packed block (see [`unpack`]).
#[inline]
pub fn unpack_tfs(bytes: &[u8], widths: Widths, tfs: &mut [u32; BLOCK]) {
    if widths.tfs == 0 {
        tfs.fill(0);
        return;
    }
    let at = BitPacker4x::compressed_block_size(widths.gaps);
    BitPacker4x::new().decompress(&bytes[at..], tfs, widths.tfs);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn counts_of_one_take_no_bytes() {
        let pairs: Vec<(u32, u32)> = (0..128).map(|i| (10 + 3 * i, 1)).collect();
        let mut out = Vec::new();
        let widths = pack(&mut out, &pairs);
        // Gaps of three: two bits each, 32 bytes for the run; counts of one: nothing.
        assert_eq!(widths, Widths { gaps: 2, tfs: 0 });
        assert_eq!((out.len(), widths.len()), (32, 32));
    }

    proptest! {
        #[test]
        fn packed_blocks_read_back(
            mut pairs in prop::collection::vec((prop_oneof![0u32..400, any::<u32>()], 1u32..u32::MAX), 1..=BLOCK),
        ) {
            pairs.sort_by_key(|p| p.0);
            pairs.dedup_by_key(|p| p.0);
            let mut out = vec![0xAA]; // bytes before the block are left alone
            let widths = pack(&mut out, &pairs);
            prop_assert_eq!(out.len(), 1 + widths.len());
            let (mut slots, mut tfs) = ([0u32; BLOCK], [0u32; BLOCK]);
            unpack(&out[1..], pairs[0].0, widths, &mut slots, &mut tfs);
            for (i, &(slot, tf)) in pairs.iter().enumerate() {
                prop_assert_eq!((slots[i], tfs[i] + 1), (slot, tf), "posting {}", i);
            }
        }
    }
}
