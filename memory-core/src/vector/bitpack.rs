//! Runs of small integers packed at a fixed number of bits each (least significant bit
//! first), the layout of the sparse index's sealed posting blocks: a block's values are
//! read independently of each other (no byte position carried from one to the next), so
//! decoding a block is a tight loop.

/// Bits needed for `max` (0 for 0).
#[inline]
pub(super) fn width(max: u32) -> u32 {
    32 - max.leading_zeros()
}

/// Bytes taken by `n` values of `width` bits.
#[inline]
pub(super) fn packed_len(n: usize, width: u32) -> usize {
    (n * width as usize).div_ceil(8)
}

/// Appends `values`, each below `2^width`, packed at `width` bits (at most 32).
pub(super) fn pack(out: &mut Vec<u8>, values: impl IntoIterator<Item = u32>, width: u32) {
    debug_assert!(width <= 32);
    if width == 0 {
        return;
    }
    let mut acc = 0u64;
    let mut bits = 0u32;
    for v in values {
        debug_assert!(u64::from(v) < 1u64 << width);
        acc |= u64::from(v) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
    if bits > 0 {
        out.push(acc as u8);
    }
}

/// Most bytes a run of [`RUN`] values takes, plus room to read a word past its end.
const RUN_BYTES: usize = RUN * 4 + 8;

/// Values unpacked at once by [`unpack`].
pub(super) const RUN: usize = 128;

/// Unpacks the first [`RUN`] values packed at `width` bits (at most 32) in `bytes` into
/// `out`; values past the end of `bytes` read as zero bits.
///
/// The width is dispatched to a copy of the loop specialised for it, which the compiler
/// unrolls into straight-line shifts and masks at constant offsets.
pub(super) fn unpack(bytes: &[u8], width: u32, out: &mut [u32; RUN]) {
    let mut buf = [0u8; RUN_BYTES];
    let len = packed_len(RUN, width).min(bytes.len());
    buf[..len].copy_from_slice(&bytes[..len]);
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                $($w => unpack_width::<$w>(&buf, out),)*
                _ => out.fill(0),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
}

#[inline(always)]
fn unpack_width<const W: usize>(buf: &[u8; RUN_BYTES], out: &mut [u32; RUN]) {
    let mask = (1u64 << W) - 1;
    for (i, o) in out.iter_mut().enumerate() {
        let bit = i * W;
        let at = bit / 8;
        let b = &buf[at..at + 8];
        let word = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        *o = ((word >> (bit % 8)) & mask) as u32;
    }
}

/// Value `i` of a run packed at `width` bits (0 < `width` <= 32) in `bytes`.
#[inline]
pub(super) fn get(bytes: &[u8], i: usize, width: u32) -> u32 {
    let bit = i * width as usize;
    let at = bit / 8;
    let word = match bytes.get(at..at + 8) {
        Some(b) => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        None => {
            // The run's last bytes: read what there is.
            let mut b = [0u8; 8];
            let tail = bytes.get(at..).unwrap_or_default();
            b[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(b)
        }
    };
    ((word >> (bit % 8)) & ((1u64 << width) - 1)) as u32
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn widths_and_lengths() {
        assert_eq!((width(0), width(1), width(255), width(256)), (0, 1, 8, 9));
        assert_eq!(width(u32::MAX), 32);
        assert_eq!((packed_len(128, 3), packed_len(127, 5)), (48, 80));
    }

    proptest! {
        #[test]
        fn packed_values_read_back(values in prop::collection::vec(any::<u32>(), 0..200), shift in 0u32..32) {
            let values: Vec<u32> = values.into_iter().map(|v| v >> shift).collect();
            let w = width(values.iter().copied().max().unwrap_or(0));
            let mut out = Vec::new();
            pack(&mut out, values.iter().copied(), w);
            prop_assert_eq!(out.len(), packed_len(values.len(), w));
            for (i, v) in values.iter().enumerate() {
                let got = if w == 0 { 0 } else { get(&out, i, w) };
                prop_assert_eq!(got, *v);
            }
            let mut run = [u32::MAX; RUN];
            unpack(&out, w, &mut run);
            for (i, got) in run.iter().enumerate() {
                prop_assert_eq!(*got, values.get(i).copied().unwrap_or(0), "value {}", i);
            }
        }
    }
}
