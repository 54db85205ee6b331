//! The byte encoding of the sparse index's lists: runs of `(key, tf)` pairs sorted by
//! key, where the key is a document slot (a posting list block) or a term id (a document's
//! term list) and `tf` the term's count in the document (at least 1).
//!
//! Each pair is one LEB128 varint of `(key − previous key) << 1 | (tf > 1)` (up to 33 bits), the first
//! key's delta taken from a base the caller keeps (a block's first slot, or 0), followed
//! by a varint of `tf − 2` when the flag is set. Keys close together and `tf = 1`, the
//! common case, take one byte a pair.
//!
//! Weights are not stored: `1 + ln tf` is recomputed from the count ([`tf_weight`]), the
//! same `f32` the analyser computes, so scores do not change by being compressed.

/// The weight `1 + ln tf` of a term counted `tf` times, exactly as analysis computes it
/// (`1.0 + (tf as f32).ln()`), from a table for small counts.
#[inline]
pub fn tf_weight(tf: u32) -> f32 {
    if tf == 1 {
        return 1.0; // 1 + ln 1, most postings
    }
    weight_in(tf_weights(), tf)
}

/// `1 + ln tf` for `tf` below 64, computed once (at run time: the same `ln` as analysis).
#[inline]
pub fn tf_weights() -> &'static [f32; 64] {
    static TABLE: std::sync::LazyLock<[f32; 64]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|tf| 1.0 + (tf as f32).ln()));
    &TABLE
}

/// [`tf_weight`] with the table at hand (fetched once for many counts).
#[inline]
pub fn weight_in(table: &[f32; 64], tf: u32) -> f32 {
    match table.get(tf as usize) {
        Some(&w) => w,
        None => 1.0 + (tf as f32).ln(),
    }
}

/// Appends `value` to `out` as an LEB128 varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads an LEB128 varint at `*at`, advancing it. Bytes are produced by [`put_varint`]
/// only, so a well-formed value is assumed; a truncated one ends at the slice's end.
#[inline]
fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 || shift >= 63 {
            break;
        }
        shift += 7;
    }
    value
}

/// Appends one pair, `key` following `prev` (`key >= prev`), to `out`.
#[inline]
pub fn put(out: &mut Vec<u8>, prev: u32, key: u32, tf: u32) {
    debug_assert!(key >= prev && tf >= 1);
    let delta = u64::from(key - prev) << 1;
    if tf > 1 {
        put_varint(out, delta | 1);
        put_varint(out, u64::from(tf - 2));
    } else {
        put_varint(out, delta);
    }
}

/// Encodes `pairs` (sorted by key, keys at least `base`) after `base` into `out`.
pub fn encode(out: &mut Vec<u8>, base: u32, pairs: impl IntoIterator<Item = (u32, u32)>) {
    let mut prev = base;
    for (key, tf) in pairs {
        put(out, prev, key, tf);
        prev = key;
    }
}

/// The pairs encoded in `bytes` after `base`, in key order.
#[derive(Debug, Clone)]
pub struct Pairs<'a> {
    bytes: &'a [u8],
    at: usize,
    key: u32,
}

impl<'a> Pairs<'a> {
    /// Reads the pairs of `bytes`, encoded by [`encode`] after `base`.
    #[inline]
    pub fn new(bytes: &'a [u8], base: u32) -> Self {
        Self {
            bytes,
            at: 0,
            key: base,
        }
    }
}

impl Pairs<'_> {
    /// Bytes read so far.
    pub fn consumed(&self) -> usize {
        self.at
    }
}

impl Iterator for Pairs<'_> {
    type Item = (u32, u32);

    #[inline]
    fn next(&mut self) -> Option<(u32, u32)> {
        let &first = self.bytes.get(self.at)?;
        // One-byte delta, the common case, without the loop.
        let v = if first < 0x80 {
            self.at += 1;
            u64::from(first)
        } else {
            get_varint(self.bytes, &mut self.at)
        };
        self.key = self.key.wrapping_add((v >> 1) as u32);
        let tf = if v & 1 == 1 {
            (get_varint(self.bytes, &mut self.at) as u32).wrapping_add(2)
        } else {
            1
        };
        Some((self.key, tf))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn small_deltas_with_tf_one_take_a_byte_each() {
        let mut out = Vec::new();
        encode(&mut out, 10, [(10, 1), (11, 1), (74, 1)]);
        assert_eq!(out.len(), 3);
        out.clear();
        // 64 needs a second byte once shifted; a count above one adds its own varint.
        encode(&mut out, 0, [(64, 1), (65, 3)]);
        assert_eq!(out.len(), 4);
        assert_eq!(Pairs::new(&out, 0).collect::<Vec<_>>(), [(64, 1), (65, 3)]);
    }

    #[test]
    fn weights_are_the_analysers() {
        for tf in [1u32, 2, 3, 63, 64, 65, 1000, u32::MAX] {
            assert_eq!(
                tf_weight(tf).to_bits(),
                (1.0 + (tf as f32).ln()).to_bits(),
                "{tf}"
            );
        }
    }

    proptest! {
        #[test]
        fn encode_then_decode_gives_the_pairs_back(
            base in 0u32..1_000,
            mut pairs in prop::collection::vec((prop_oneof![0u32..300, 0u32..u32::MAX - 1_000], 1u32..u32::MAX), 0..200),
        ) {
            pairs.sort_by_key(|p| p.0);
            pairs.dedup_by_key(|p| p.0);
            let pairs: Vec<(u32, u32)> = pairs.into_iter().map(|(k, tf)| (k + base, tf)).collect();
            let mut out = Vec::new();
            encode(&mut out, base, pairs.iter().copied());
            prop_assert_eq!(Pairs::new(&out, base).collect::<Vec<_>>(), pairs);
        }
    }
}
