//! The integer matrix product of the int8 embedder, with runtime CPU dispatch.
//!
//! `out (m × n) = dequantise(a · w)`: `a` holds `m` rows of `k` activation codes (`u8`,
//! one scale and zero point per row), `w` the `n` weight columns (`i8`, one scale per
//! column) *packed* in groups of [`GROUP`] columns: for every 4-byte step along `k`, the
//! four codes of each of the group's columns in turn (the layout `vpdpbusd` reads). Each
//! result is computed exactly in `i32` (`Σ a·w − zero·Σ w`), then turned into `f32` the
//! same way by every path: `(dot as f32) · (row_scale · col_scale)`, written or added to
//! `out`. So every kernel returns the same bits, which the tests check.
//!
//! On x86-64 the kernel is chosen at run time from the `crate::cpu` tokens, whatever the
//! build flags: AVX-512 VNNI (`vpdpbusd`, 64 multiply-adds per instruction, on CPUs
//! with AVX-512 F/BW/VNNI), else AVX2 (the codes widened to `i16` and multiplied with
//! `vpmaddwd`, which cannot saturate, so full 8-bit weights stay exact; 16 multiply-adds
//! per instruction pair, so little faster than `f32` FMA: int8 pays off with VNNI), else
//! portable loops, which are also the reference and what Miri runs.
//!
//! Soundness follows `vector::simd`: a SIMD kernel is reachable only through a
//! `crate::cpu` token (`Avx512Vnni`, `Avx2`), which only its `detect()` makes, after the
//! CPU said it has the features; the safe entry points that call the `#[target_feature]`
//! code are defined inside the function that takes the token, so holding the token is the
//! only way to name them.

use std::ops::Range;
use std::sync::OnceLock;

use super::kernels::Write;

/// Weight columns per packed group (one 512-bit register of `i32` lanes).
pub(crate) const GROUP: usize = 16;

/// The largest `k` the products take: `|Σ a·w − zero·Σ w|` stays below
/// `2 · 255 · 127 · k`, which must fit an `i32`.
pub(crate) const MAX_K: usize = 32_768;

/// `m` rows of activation codes, `k` bytes each (`k` a multiple of 4), and how to turn
/// them back into numbers: value ≈ `scale[r] · (code − zero[r])`.
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a> {
    pub(crate) codes: &'a [u8],
    pub(crate) k: usize,
    pub(crate) scale: &'a [f32],
    pub(crate) zero: &'a [i32],
}

impl Rows<'_> {
    fn m(&self) -> usize {
        self.scale.len()
    }
}

/// `n` weight columns of `k` codes each, packed in groups of [`GROUP`] (the last group
/// padded with zero columns): weight ≈ `scale[c] · code`. `sum[c]` is the sum of column
/// `c`'s codes; `scale` and `sum` are padded to whole groups too.
#[derive(Clone, Copy)]
pub(crate) struct Cols<'a> {
    pub(crate) packed: &'a [i8],
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) scale: &'a [f32],
    pub(crate) sum: &'a [i32],
}

impl Cols<'_> {
    pub(crate) fn groups(&self) -> usize {
        self.n.div_ceil(GROUP)
    }
}

/// Where the products of column groups `groups` land: element `(r, c)` at
/// `out[r · stride + c − groups.start · GROUP]`, for the real columns `c < n` only.
pub(crate) struct Out<'a> {
    pub(crate) data: &'a mut [f32],
    pub(crate) stride: usize,
    pub(crate) groups: Range<usize>,
    pub(crate) write: Write,
}

/// `gemm(rows, cols, out)`, the checks of [`Kernel::gemm`] done.
type Gemm = fn(Rows<'_>, Cols<'_>, &mut Out<'_>);

/// One implementation of the product (one per CPU feature level).
#[derive(Clone, Copy)]
pub(crate) struct Kernel {
    gemm: Gemm,
    name: &'static str,
}

impl Kernel {
    /// The products of every row of `rows` with the columns of the groups `out.groups` of
    /// `cols`, dequantised into `out`.
    ///
    /// # Panics
    ///
    /// When the shapes disagree or a buffer is too small: a bug in the caller.
    pub(crate) fn gemm(&self, rows: Rows<'_>, cols: Cols<'_>, out: &mut Out<'_>) {
        let (m, k) = (rows.m(), rows.k);
        assert!(
            k.is_multiple_of(4) && k <= MAX_K && cols.k == k,
            "int8 gemm: k = {k}"
        );
        assert!(
            rows.codes.len() >= m * k && rows.zero.len() == m,
            "int8 gemm: rows"
        );
        let padded = cols.groups() * GROUP;
        assert!(
            cols.packed.len() >= padded * k
                && cols.scale.len() >= padded
                && cols.sum.len() >= padded,
            "int8 gemm: columns"
        );
        let g = &out.groups;
        assert!(
            g.start <= g.end && g.end <= cols.groups(),
            "int8 gemm: groups"
        );
        let width = (cols.n.min(g.end * GROUP)).saturating_sub(g.start * GROUP);
        assert!(
            m == 0
                || width == 0
                || (width <= out.stride && (m - 1) * out.stride + width <= out.data.len()),
            "int8 gemm: destination"
        );
        (self.gemm)(rows, cols, out)
    }

    /// The kernel's name: `"avx512-vnni"`, `"avx2"` or `"portable"`.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }
}

/// The plain loops: no unsafe code, on every CPU.
const PORTABLE: Kernel = Kernel {
    gemm: portable::gemm,
    name: "portable",
};

/// Every kernel this CPU can run, best last (the portable loops first).
pub(crate) fn available() -> &'static [Kernel] {
    static ALL: OnceLock<Vec<Kernel>> = OnceLock::new();
    ALL.get_or_init(|| {
        #[allow(unused_mut)]
        let mut all = vec![PORTABLE];
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(cpu) = agentmemory_index::cpu::Avx2::detect() {
                all.push(avx2::kernel(cpu));
            }
            if let Some(cpu) = agentmemory_index::cpu::Avx512Vnni::detect() {
                all.push(avx512::kernel(cpu));
            }
        }
        all
    })
}

/// The best kernel this CPU has.
pub(crate) fn kernel() -> &'static Kernel {
    available().last().unwrap_or(&PORTABLE)
}

/// One result, the reference every kernel follows: the exact integer dot product
/// corrected for the row's zero point, then scaled.
#[inline(always)]
fn dequantise(dot: i32, zero: i32, sum: i32, row_scale: f32, col_scale: f32) -> f32 {
    (dot - zero * sum) as f32 * (row_scale * col_scale)
}

/// Writes or adds `value` to `*dst`.
#[inline(always)]
fn land(dst: &mut f32, value: f32, write: Write) {
    match write {
        Write::Set => *dst = value,
        Write::Add => *dst += value,
    }
}

/// Plain loops; also the reference the SIMD kernels are tested against.
mod portable {
    use super::{dequantise, land, Cols, Out, Rows, GROUP};

    pub(super) fn gemm(rows: Rows<'_>, cols: Cols<'_>, out: &mut Out<'_>) {
        let k = rows.k;
        let base = out.groups.start * GROUP;
        for g in out.groups.clone() {
            let group = &cols.packed[g * GROUP * k..(g + 1) * GROUP * k];
            let steps = group.as_chunks::<{ 4 * GROUP }>().0;
            let c0 = g * GROUP;
            let valid = cols.n.min(c0 + GROUP) - c0;
            for r in 0..rows.m() {
                let row = &rows.codes[r * k..(r + 1) * k];
                // Sixteen lanes, one per column: the shape of the SIMD kernels, which the
                // compiler vectorises across the lanes.
                let mut acc = [0i32; GROUP];
                for (four, step) in row.as_chunks::<4>().0.iter().zip(steps) {
                    let x: [i32; 4] = std::array::from_fn(|b| i32::from(four[b]));
                    for (a, w) in acc.iter_mut().zip(step.as_chunks::<4>().0) {
                        *a += x[0] * i32::from(w[0])
                            + x[1] * i32::from(w[1])
                            + x[2] * i32::from(w[2])
                            + x[3] * i32::from(w[3]);
                    }
                }
                let dst = &mut out.data[r * out.stride + c0 - base..][..valid];
                for (l, d) in dst.iter_mut().enumerate() {
                    let c = c0 + l;
                    let v = dequantise(
                        acc[l],
                        rows.zero[r],
                        cols.sum[c],
                        rows.scale[r],
                        cols.scale[c],
                    );
                    land(d, v, out.write);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Cols, Kernel, Out, Rows, Write, GROUP};
    use agentmemory_index::cpu::Avx512Vnni;

    /// The AVX-512 VNNI kernel; the token proves the CPU has its features.
    pub(super) fn kernel(_: Avx512Vnni) -> Kernel {
        // Defined here, so only a holder of the token can name it.
        fn entry(rows: Rows<'_>, cols: Cols<'_>, out: &mut Out<'_>) {
            // SAFETY: only reachable through `kernel`, which takes an `Avx512Vnni`, made
            // only when the CPU has AVX-512 F/BW/VNNI.
            unsafe { gemm(rows, cols, out) }
        }
        Kernel {
            gemm: entry,
            name: "avx512-vnni",
        }
    }

    /// Rows per block: 6 rows × 4 groups = 24 accumulators, with 4 weight registers and a
    /// broadcast within the 32.
    const ROWS: usize = 6;

    /// A panel of the product: rows of activation codes from `a` (`k` bytes each, with
    /// their scales and zero points), packed weight groups from `w` (with their columns'
    /// scales and sums), and the destination of the first row's first column.
    #[derive(Clone, Copy)]
    struct Panel<'a> {
        a: *const u8,
        k: usize,
        row_scale: &'a [f32],
        zero: &'a [i32],
        w: *const i8,
        scale: *const f32,
        sum: *const i32,
        dst: *mut f32,
        stride: usize,
        /// Real columns of the panel; the rest of its last group is padding.
        valid: usize,
        write: Write,
    }

    /// `R` rows × `G` groups of 16 columns from row `r` of `p`: per 4-byte step, `G`
    /// weight loads and `R` broadcast activations feed `R · G` `vpdpbusd`, then each
    /// accumulator is dequantised and stored.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F/BW/VNNI; `p.k` is a multiple of 4; `p.a` is valid for
    /// reading rows `r .. r + R` of `k` bytes; `p.w` for `G` packed groups of `GROUP · k`
    /// bytes; `p.scale` and `p.sum` for `G · GROUP` values; `p.dst` for reading and
    /// writing, at each of rows `r .. r + R` (`stride` apart), the first `valid` of
    /// `G · GROUP` values, overlapping no input; `row_scale` and `zero` hold those rows.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn block<const G: usize, const R: usize>(p: Panel<'_>, r0: usize) {
        let k = p.k;
        // SAFETY: row r0 is within the rows the caller passes.
        let a = unsafe { p.a.add(r0 * k) };
        let mut acc = [[_mm512_setzero_si512(); G]; R];
        let mut s = 0;
        while s < k {
            // SAFETY: s + 4 ≤ k, so bytes 16·s .. 16·s + 64 lie in group g < G.
            let ws: [__m512i; G] = std::array::from_fn(|g| unsafe {
                _mm512_loadu_si512(p.w.add(g * GROUP * k + s * GROUP).cast())
            });
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: bytes s .. s + 4 ≤ k of row r0 + r, r < R.
                let four = unsafe { a.add(r * k + s).cast::<i32>().read_unaligned() };
                let x = _mm512_set1_epi32(four);
                for (acc, w) in acc.iter_mut().zip(&ws) {
                    *acc = _mm512_dpbusd_epi32(*acc, x, *w);
                }
            }
            s += 4;
        }
        for (r, acc) in acc.iter().enumerate() {
            let z = _mm512_set1_epi32(p.zero[r0 + r]);
            let rs = _mm512_set1_ps(p.row_scale[r0 + r]);
            for (g, acc) in acc.iter().enumerate() {
                let lanes = p.valid.saturating_sub(g * GROUP).min(GROUP);
                if lanes == 0 {
                    break;
                }
                let mask: __mmask16 = if lanes == GROUP { !0 } else { (1 << lanes) - 1 };
                // SAFETY: lanes g·16 .. g·16 + 16 < G · GROUP of `scale` and `sum`.
                let (cs, cz) = unsafe {
                    (
                        _mm512_loadu_ps(p.scale.add(g * GROUP)),
                        _mm512_loadu_si512(p.sum.add(g * GROUP).cast()),
                    )
                };
                // The same operations, in the same order, as `super::dequantise`.
                let dot = _mm512_sub_epi32(*acc, _mm512_mullo_epi32(z, cz));
                let v = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(rs, cs));
                // SAFETY: the first `lanes` values from column g·16 of row r0 + r are
                // within `dst` (`lanes` ≤ valid − g·16); masked lanes are neither read
                // nor written.
                unsafe {
                    let at = p.dst.add((r0 + r) * p.stride + g * GROUP);
                    let v = match p.write {
                        Write::Set => v,
                        Write::Add => _mm512_add_ps(_mm512_maskz_loadu_ps(mask, at), v),
                    };
                    _mm512_mask_storeu_ps(at, mask, v);
                }
            }
        }
    }

    /// All `m` rows of a panel of `G` groups, [`ROWS`] at a time, then the rest together.
    ///
    /// # Safety
    ///
    /// As [`block`], for rows `0 .. m`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn panel<const G: usize>(p: Panel<'_>, m: usize) {
        let mut r = 0;
        // SAFETY: every block covers rows within 0 .. m, which the caller vouches for.
        unsafe {
            while r + ROWS <= m {
                block::<G, ROWS>(p, r);
                r += ROWS;
            }
            match m - r {
                1 => block::<G, 1>(p, r),
                2 => block::<G, 2>(p, r),
                3 => block::<G, 3>(p, r),
                4 => block::<G, 4>(p, r),
                5 => block::<G, 5>(p, r),
                _ => {}
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn gemm(rows: Rows<'_>, cols: Cols<'_>, out: &mut Out<'_>) {
        // The shapes were checked by `Kernel::gemm`.
        let (m, k) = (rows.m(), rows.k);
        let base = out.groups.start;
        let dst = out.data.as_mut_ptr();
        let mut g = out.groups.start;
        while g < out.groups.end {
            let take = (out.groups.end - g).min(4);
            let c0 = g * GROUP;
            // SAFETY: same features; groups g .. g + take are within `cols` (checked by
            // `Kernel::gemm`), as are their scales and sums, padded to whole groups; the
            // m rows' codes are within `rows`; the destination of the `valid` real
            // columns from c0 of every row is within `out.data` (checked), a mutable
            // borrow that overlaps no input.
            unsafe {
                let p = Panel {
                    a: rows.codes.as_ptr(),
                    k,
                    row_scale: rows.scale,
                    zero: rows.zero,
                    w: cols.packed.as_ptr().add(c0 * k),
                    scale: cols.scale.as_ptr().add(c0),
                    sum: cols.sum.as_ptr().add(c0),
                    dst: dst.add((g - base) * GROUP),
                    stride: out.stride,
                    valid: cols.n.min(c0 + take * GROUP) - c0,
                    write: out.write,
                };
                match take {
                    4 => panel::<4>(p, m),
                    3 => panel::<3>(p, m),
                    2 => panel::<2>(p, m),
                    _ => panel::<1>(p, m),
                }
            }
            g += take;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{Cols, Kernel, Out, Rows, Write, GROUP};
    use agentmemory_index::cpu::Avx2;

    /// The AVX2 kernel; the token proves the CPU has AVX2.
    pub(super) fn kernel(_: Avx2) -> Kernel {
        // Defined here, so only a holder of the token can name it.
        fn entry(rows: Rows<'_>, cols: Cols<'_>, out: &mut Out<'_>) {
            // SAFETY: only reachable through `kernel`, which takes an `Avx2`, made only
            // when the CPU has AVX2.
            unsafe { gemm(rows, cols, out) }
        }
        Kernel {
            gemm: entry,
            name: "avx2",
        }
    }

    /// Rows per block: 4 rows × 2 registers of 8 columns = 8 accumulators, with 4 weight
    /// registers and 2 of activations within the 16.
    const ROWS: usize = 4;

    /// One group of the product: rows of activation codes from `a` (`k` bytes each, with
    /// their scales and zero points), the packed weight group at `w` (with its columns'
    /// scales and sums), and the destination of the first row's first column.
    #[derive(Clone, Copy)]
    struct Group<'a> {
        a: *const u8,
        k: usize,
        row_scale: &'a [f32],
        zero: &'a [i32],
        w: *const i8,
        scale: *const f32,
        sum: *const i32,
        dst: *mut f32,
        stride: usize,
        /// Real columns of the group (the rest is padding).
        valid: usize,
        write: Write,
    }

    /// `R` rows from row `r0` × one group of 16 columns. Each 32-bit lane of a weight
    /// register holds a column's four codes of a step; its even and odd bytes are
    /// sign-extended to `i16` (two shifts and one), the row's four codes split the same way
    /// (zero-extended), and `vpmaddwd` sums the products in pairs straight into `i32`,
    /// which cannot saturate (unlike `vpmaddubsw`'s `i16` sums of two `255 · 127`).
    ///
    /// # Safety
    ///
    /// The CPU has AVX2; `p.k` is a multiple of 4; `p.a` is valid for reading rows
    /// `r0 .. r0 + R` of `k` bytes; `p.w` for one packed group of `GROUP · k` bytes;
    /// `p.scale` and `p.sum` for `GROUP` values; `p.dst` for reading and writing, at each
    /// of those rows (`stride` apart), the first `valid` (≤ `GROUP`) values, overlapping no
    /// input; `row_scale` and `zero` hold those rows.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn block<const R: usize>(p: Group<'_>, r0: usize) {
        let k = p.k;
        // SAFETY: row r0 is within the rows the caller passes.
        let a = unsafe { p.a.add(r0 * k) };
        let low_bytes = _mm256_set1_epi16(0x00ff);
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        let mut s = 0;
        while s < k {
            // SAFETY: s + 4 ≤ k, so bytes 16·s .. 16·s + 64 lie in the group.
            let w0 = unsafe { _mm256_loadu_si256(p.w.add(s * GROUP).cast()) };
            // SAFETY: as above.
            let w1 = unsafe { _mm256_loadu_si256(p.w.add(s * GROUP + 32).cast()) };
            let even = [
                _mm256_srai_epi16::<8>(_mm256_slli_epi16::<8>(w0)),
                _mm256_srai_epi16::<8>(_mm256_slli_epi16::<8>(w1)),
            ];
            let odd = [_mm256_srai_epi16::<8>(w0), _mm256_srai_epi16::<8>(w1)];
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: bytes s .. s + 4 ≤ k of row r0 + r, r < R.
                let four = unsafe { a.add(r * k + s).cast::<i32>().read_unaligned() };
                let x = _mm256_set1_epi32(four);
                let (xe, xo) = (_mm256_and_si256(x, low_bytes), _mm256_srli_epi16::<8>(x));
                for h in 0..2 {
                    let pairs = _mm256_add_epi32(
                        _mm256_madd_epi16(xe, even[h]),
                        _mm256_madd_epi16(xo, odd[h]),
                    );
                    acc[h] = _mm256_add_epi32(acc[h], pairs);
                }
            }
            s += 4;
        }
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for (r, acc) in acc.iter().enumerate() {
            let z = _mm256_set1_epi32(p.zero[r0 + r]);
            let rs = _mm256_set1_ps(p.row_scale[r0 + r]);
            for (h, acc) in acc.iter().enumerate() {
                let lanes = p.valid.saturating_sub(h * 8).min(8);
                if lanes == 0 {
                    break;
                }
                let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes as i32), lane);
                // SAFETY: lanes h·8 .. h·8 + 8 < GROUP of `scale` and `sum`.
                let (cs, cz) = unsafe {
                    (
                        _mm256_loadu_ps(p.scale.add(h * 8)),
                        _mm256_loadu_si256(p.sum.add(h * 8).cast()),
                    )
                };
                // The same operations, in the same order, as `super::dequantise`.
                let dot = _mm256_sub_epi32(*acc, _mm256_mullo_epi32(z, cz));
                let v = _mm256_mul_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(rs, cs));
                // SAFETY: the first `lanes` values from column h·8 of row r0 + r are
                // within `dst` (`lanes` ≤ valid − h·8); masked lanes are neither read nor
                // written.
                unsafe {
                    let at = p.dst.add((r0 + r) * p.stride + h * 8);
                    let v = match p.write {
                        Write::Set => v,
                        Write::Add => _mm256_add_ps(_mm256_maskload_ps(at, mask), v),
                    };
                    _mm256_maskstore_ps(at, mask, v);
                }
            }
        }
    }

    #[target_feature(enable = "avx2")]
    fn gemm(rows: Rows<'_>, cols: Cols<'_>, out: &mut Out<'_>) {
        // The shapes were checked by `Kernel::gemm`.
        let (m, k) = (rows.m(), rows.k);
        let base = out.groups.start;
        let dst = out.data.as_mut_ptr();
        for g in out.groups.clone() {
            let c0 = g * GROUP;
            // SAFETY: same features; group g is within `cols` (checked by `Kernel::gemm`),
            // as are its scales and sums, padded to whole groups; every block's rows are
            // within 0 .. m, whose codes are within `rows`; the destination of the
            // `valid` real columns from c0 of every row is within `out.data` (checked), a
            // mutable borrow that overlaps no input.
            unsafe {
                let p = Group {
                    a: rows.codes.as_ptr(),
                    k,
                    row_scale: rows.scale,
                    zero: rows.zero,
                    w: cols.packed.as_ptr().add(c0 * k),
                    scale: cols.scale.as_ptr().add(c0),
                    sum: cols.sum.as_ptr().add(c0),
                    dst: dst.add((g - base) * GROUP),
                    stride: out.stride,
                    valid: cols.n.min(c0 + GROUP) - c0,
                    write: out.write,
                };
                let mut r = 0;
                while r + ROWS <= m {
                    block::<ROWS>(p, r);
                    r += ROWS;
                }
                match m - r {
                    1 => block::<1>(p, r),
                    2 => block::<2>(p, r),
                    3 => block::<3>(p, r),
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Packs `n` columns of `k` codes (column-major: column `c` at `c · k`) the way
    /// [`Cols`] holds them.
    fn pack(columns: &[i8], k: usize, n: usize) -> Vec<i8> {
        let groups = n.div_ceil(GROUP);
        let mut packed = vec![0i8; groups * GROUP * k];
        for c in 0..n {
            for i in 0..k {
                packed[c / GROUP * GROUP * k + i / 4 * GROUP * 4 + c % GROUP * 4 + i % 4] =
                    columns[c * k + i];
            }
        }
        packed
    }

    /// A product by its definition, in `i64`, dequantised as [`dequantise`] does.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        codes: &[u8],
        zero: &[i32],
        row_scale: &[f32],
        columns: &[i8],
        col_scale: &[f32],
        k: usize,
        n: usize,
    ) -> Vec<f32> {
        let m = zero.len();
        let mut out = vec![0.0; m * n];
        for r in 0..m {
            for c in 0..n {
                let dot: i64 = (0..k)
                    .map(|i| {
                        (i64::from(codes[r * k + i]) - i64::from(zero[r]))
                            * i64::from(columns[c * k + i])
                    })
                    .sum();
                out[r * n + c] = dot as i32 as f32 * (row_scale[r] * col_scale[c]);
            }
        }
        out
    }

    #[derive(Debug)]
    struct Case {
        m: usize,
        k: usize,
        n: usize,
        codes: Vec<u8>,
        zero: Vec<i32>,
        row_scale: Vec<f32>,
        columns: Vec<i8>,
        col_scale: Vec<f32>,
        start: Vec<f32>,
    }

    fn case() -> impl Strategy<Value = Case> {
        let shapes = if cfg!(miri) {
            (1usize..8, 1usize..4, 1usize..40).boxed()
        } else {
            (0usize..20, 1usize..40, 1usize..150).boxed()
        };
        shapes.prop_flat_map(|(m, k4, n)| {
            let k = 4 * k4;
            (
                proptest::collection::vec(any::<u8>(), m * k),
                proptest::collection::vec(0i32..=255, m),
                proptest::collection::vec(1e-4f32..1.0, m),
                proptest::collection::vec(-127i8..=127, n * k),
                proptest::collection::vec(1e-4f32..1.0, n),
                proptest::collection::vec(-10f32..10.0, m * n),
            )
                .prop_map(
                    move |(codes, zero, row_scale, columns, col_scale, start)| Case {
                        m,
                        k,
                        n,
                        codes,
                        zero,
                        row_scale,
                        columns,
                        col_scale,
                        start,
                    },
                )
        })
    }

    /// Every kernel on `case`, over all groups and over a strip of them, set and added.
    fn check(c: &Case) {
        let groups = c.n.div_ceil(GROUP);
        let packed = pack(&c.columns, c.k, c.n);
        let sums: Vec<i32> = (0..groups * GROUP)
            .map(|col| {
                if col < c.n {
                    c.columns[col * c.k..(col + 1) * c.k]
                        .iter()
                        .map(|&w| i32::from(w))
                        .sum()
                } else {
                    0
                }
            })
            .collect();
        let mut col_scale = c.col_scale.clone();
        col_scale.resize(groups * GROUP, 0.0);
        let rows = Rows {
            codes: &c.codes,
            k: c.k,
            scale: &c.row_scale,
            zero: &c.zero,
        };
        let cols = Cols {
            packed: &packed,
            k: c.k,
            n: c.n,
            scale: &col_scale,
            sum: &sums,
        };
        let want = reference(
            &c.codes,
            &c.zero,
            &c.row_scale,
            &c.columns,
            &c.col_scale,
            c.k,
            c.n,
        );
        for kernel in available() {
            for write in [Write::Set, Write::Add] {
                let mut out = c.start.clone();
                kernel.gemm(
                    rows,
                    cols,
                    &mut Out {
                        data: &mut out,
                        stride: c.n,
                        groups: 0..groups,
                        write,
                    },
                );
                for (i, (got, want)) in out.iter().zip(&want).enumerate() {
                    let want = if write == Write::Add {
                        c.start[i] + want
                    } else {
                        *want
                    };
                    assert_eq!(got.to_bits(), want.to_bits(), "{} {i}", kernel.name());
                }
            }
            // The groups after the first, into a strip of their own (stride = its width).
            if groups > 1 {
                let width = c.n - GROUP;
                let mut strip = vec![f32::NAN; c.m * width];
                kernel.gemm(
                    rows,
                    cols,
                    &mut Out {
                        data: &mut strip,
                        stride: width,
                        groups: 1..groups,
                        write: Write::Set,
                    },
                );
                for r in 0..c.m {
                    assert_eq!(
                        strip[r * width..(r + 1) * width],
                        want[r * c.n + GROUP..(r + 1) * c.n],
                        "{} strip",
                        kernel.name()
                    );
                }
            }
        }
    }

    proptest! {
        // Under Miri: few cases, and no failure file (isolation forbids the file system).
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 4 } else { 64 },
            failure_persistence: if cfg!(miri) {
                None
            } else {
                ProptestConfig::default().failure_persistence
            },
            ..ProptestConfig::default()
        })]

        #[test]
        fn every_kernel_returns_the_bits_of_the_definition(c in case()) {
            check(&c);
        }
    }

    #[test]
    fn extremes_do_not_overflow_or_saturate() {
        // Codes 255 against weights ±127 (the pair sums `vpmaddubsw` would saturate),
        // zero points at both ends, k at a size MiniLM uses.
        let (m, k, n) = (7, if cfg!(miri) { 16 } else { 1536 }, 33);
        let mut codes = vec![255u8; m * k];
        codes[k..2 * k].fill(0);
        let columns: Vec<i8> = (0..n * k)
            .map(|i| if (i / k) % 2 == 0 { 127 } else { -127 })
            .collect();
        let c = Case {
            m,
            k,
            n,
            codes,
            zero: vec![0, 255, 0, 128, 255, 1, 0],
            row_scale: vec![0.5; m],
            columns,
            col_scale: vec![0.25; n],
            start: vec![1.0; m * n],
        };
        check(&c);
    }

    #[test]
    fn the_best_kernel_is_picked() {
        assert_eq!(kernel().name(), available().last().unwrap().name());
        if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
            assert!(available().iter().any(|k| k.name() == "avx2"));
        }
    }
}
