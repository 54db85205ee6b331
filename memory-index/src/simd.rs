//! Dot-product kernels with runtime CPU dispatch.
//!
//! Three kernels serve dense search: an `f32` dot product (exact scores), a `u8 × i8`
//! integer dot product over a tile of rows and a few queries at once (the quantised scan
//! of the `quantized` module for one or a few queries), and a batch kernel over queries
//! *packed* in groups of [`GROUP`] ([`pack_queries`]): four bytes of a row are broadcast
//! and multiplied with the same four bytes of sixteen queries at once, so each loaded row
//! serves a whole panel of queries and the sums land one query per lane, with no
//! horizontal additions. Its bounds check ([`Kernels::screen`]) runs over those lanes.
//!
//! On x86-64 the kernels are chosen at run time from the `crate::cpu` tokens, so a
//! default build (no `-C target-cpu=native`) uses them on any machine that has them:
//! AVX-512 VNNI (`vpdpbusd`, 64 multiply-adds per instruction) for the batch kernel and
//! its check where the CPU has AVX-512 F/BW/VNNI, AVX2 + FMA (`vpmaddubsw` + `vpmaddwd`)
//! otherwise; everything else gets portable loops the compiler vectorises for the
//! baseline target (there the row-major kernel also serves batches: plain loops over
//! packed queries were slower). The choice is made once and cached.
//!
//! Every path computes the same integers and the same `f32` bounds (same operations in
//! the same order, fused multiply-adds where the portable code uses `mul_add`); the `f32`
//! dot products may differ in the last bits between paths (different summation order),
//! which is why a search never mixes them: every exact score comes from [`dot_f32`],
//! whatever path it dispatches to.
//!
//! Soundness rests on one rule the types enforce: a SIMD kernel is reachable only through
//! a value that proves the CPU has its features. `cpu::Avx2Fma` and `cpu::Avx512Vnni` are
//! tokens made only by their `detect()`, after `is_x86_feature_detected!` said yes; the
//! safe wrappers that call the `#[target_feature]` code are defined inside the functions
//! that take the token, so the only way to get hold of one (as a function pointer in a
//! [`Kernels`] table or a [`dot_f32`] kernel) is to hold the token. Safe code can pick
//! any table [`available`] returns and never run an instruction its CPU lacks.

use std::sync::OnceLock;

/// Rows of a quantised tile processed together by [`Kernels::dots_u8i8`].
pub const ROWS: usize = 4;
/// Queries processed together by [`Kernels::dots_u8i8`].
pub const QUERIES: usize = 2;
/// Quantised rows and queries are padded to a multiple of this many bytes.
pub const LANE_BYTES: usize = 32;
/// Queries per packed group of the batch kernel ([`pack_queries`]).
pub const GROUP: usize = 16;
/// Most groups handed to one call of [`Kernels::dots_packed`] (a panel of 64 queries:
/// the bits of one `u64` mask per row in [`Kernels::screen`]).
pub const MAX_GROUPS: usize = 4;

/// The per-query terms of the bounds check, one entry per lane of a panel.
#[derive(Clone, Copy)]
pub struct Terms<'a> {
    pub(crate) offset: &'a [i32],
    pub(crate) scale: &'a [f32],
    pub(crate) widen: &'a [f32],
    pub(crate) pad: &'a [f32],
    pub(crate) threshold: &'a [f32],
}

/// `dots_u8i8(rows, dim, queries, n_queries, out)`.
type DotsU8I8 = fn(&[u8], usize, &[i8], usize, &mut [i32]);
/// `dots_packed(rows, dim, panel, groups, out)`.
type DotsPacked = fn(&[u8], usize, &[i8], usize, &mut [i32]);
/// `screen(dots, width, row_scales, row_errors, terms, masks)`.
type Screen = fn(&[i32], usize, &[f32], &[f32], Terms<'_>, &mut [u64]);

/// A set of integer kernels (one per CPU feature level).
#[derive(Clone, Copy)]
pub struct Kernels {
    dots_u8i8: DotsU8I8,
    dots_packed: DotsPacked,
    screen: Screen,
    /// From this many queries a scan uses [`Kernels::dots_packed`] (fewer fill too few of
    /// its lanes to beat the row-major kernel).
    packed_from: usize,
    name: &'static str,
}

impl Kernels {
    /// Integer dot products of every row of `rows` (rows of `dim` bytes, `u8`) with every
    /// query of `queries` (`dim` bytes each, `i8`), written row-major to `out`
    /// (`out[r * n_queries + q]`). `dim` is a multiple of [`LANE_BYTES`]; each `u8 × i8`
    /// pair sum must fit an `i16` (the quantiser keeps queries within ±63 for that).
    #[inline]
    pub fn dots_u8i8(
        &self,
        rows: &[u8],
        dim: usize,
        queries: &[i8],
        n_queries: usize,
        out: &mut [i32],
    ) {
        assert!(dim.is_multiple_of(LANE_BYTES));
        assert!(queries.len() >= dim * n_queries && out.len() >= rows.len() / dim * n_queries);
        (self.dots_u8i8)(rows, dim, queries, n_queries, out)
    }

    /// Integer dot products of every row of `rows` with the `groups` (1 to [`MAX_GROUPS`])
    /// packed query groups of `panel` (a slice of [`pack_queries`]' output), written to
    /// `out[r * groups * GROUP + q]`. Same limits as [`dots_u8i8`](Self::dots_u8i8).
    #[inline]
    pub fn dots_packed(
        &self,
        rows: &[u8],
        dim: usize,
        panel: &[i8],
        groups: usize,
        out: &mut [i32],
    ) {
        assert!(dim.is_multiple_of(LANE_BYTES) && (1..=MAX_GROUPS).contains(&groups));
        assert!(panel.len() >= groups * GROUP * dim);
        assert!(out.len() >= rows.len() / dim * groups * GROUP);
        (self.dots_packed)(rows, dim, panel, groups, out)
    }

    /// The bounds check of a panel: for row `r` (`width` dots from `dots[r * width]`, row
    /// scale `scales[r]` and error `errors[r]`), bit `j` of `masks[r]` is set when
    /// `(dot − offset[j]) as f32 · (scale[j] · s) + e.mul_add(widen[j], pad[j]) ≥
    /// threshold[j]`. A kernel may set more bits (whole groups of [`GROUP`]), never fewer;
    /// the caller re-checks each set bit. `width` is a multiple of [`GROUP`], at most 64.
    #[inline]
    pub fn screen(
        &self,
        dots: &[i32],
        width: usize,
        scales: &[f32],
        errors: &[f32],
        terms: Terms<'_>,
        masks: &mut [u64],
    ) {
        assert!(width.is_multiple_of(GROUP) && width <= 64 && width > 0);
        assert!(dots.len() >= masks.len() * width);
        assert!(scales.len() >= masks.len() && errors.len() >= masks.len());
        assert!(
            terms.offset.len() >= width
                && terms.scale.len() >= width
                && terms.widen.len() >= width
                && terms.pad.len() >= width
                && terms.threshold.len() >= width
        );
        (self.screen)(dots, width, scales, errors, terms, masks)
    }

    /// Whether a scan of `n` queries should use [`dots_packed`](Self::dots_packed).
    pub fn packs(&self, n: usize) -> bool {
        n >= self.packed_from
    }

    /// The name [`kernel_name`] reports for this set.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// The portable loops: no unsafe code, on every CPU.
const PORTABLE: Kernels = Kernels {
    dots_u8i8: portable::dots_u8i8,
    dots_packed: portable::dots_packed,
    screen: portable::screen,
    // The plain packed loops lose to the row-major ones (x86-64 baseline, 1,000 queries ×
    // 100,000 × 384: 8.7 s against 4.9 s), so the portable scan keeps the row-major
    // kernel; its packed loops stay the reference the SIMD ones are tested against.
    packed_from: usize::MAX,
    name: "portable",
};

/// Every kernel set this CPU can run, best last (the portable loops first). The SIMD sets
/// are built from the tokens that prove their features, so nothing else can be listed.
pub fn available() -> &'static [Kernels] {
    static ALL: OnceLock<Vec<Kernels>> = OnceLock::new();
    ALL.get_or_init(|| {
        #[allow(unused_mut)]
        let mut all = vec![PORTABLE];
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(cpu) = crate::cpu::Avx2Fma::detect() {
                all.push(avx2::kernels(cpu));
                if let Some(vnni) = crate::cpu::Avx512Vnni::detect() {
                    all.push(avx512::kernels(vnni, cpu));
                }
            }
        }
        all
    })
}

/// Names a kernel set to use instead of the best one (for measurements and tests of the
/// other paths); ignored unless it names one of [`available`].
const KERNEL_ENV: &str = "AGENTMEM_DENSE_KERNEL";

/// The kernels picked for this CPU: the best of [`available`], or the one named by
/// `AGENTMEM_DENSE_KERNEL` when the CPU has it.
pub fn kernels() -> &'static Kernels {
    static CHOSEN: OnceLock<&'static Kernels> = OnceLock::new();
    CHOSEN.get_or_init(|| {
        let all = available();
        let wanted = std::env::var(KERNEL_ENV).ok();
        all.iter()
            .find(|k| Some(k.name) == wanted.as_deref())
            .or_else(|| all.last())
            .unwrap_or(&PORTABLE)
    })
}

/// `dot_f32(a, b)`.
type DotF32 = fn(&[f32], &[f32]) -> f32;

fn f32_kernel() -> DotF32 {
    static CHOSEN: OnceLock<DotF32> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(cpu) = crate::cpu::Avx2Fma::detect() {
                return avx2::dot_f32_kernel(cpu);
            }
        }
        portable::dot_f32
    })
}

/// The integer kernels dense search uses on this CPU, chosen at run time whatever the
/// build flags: `"avx512-vnni+avx2+fma"` (x86-64 with AVX-512 F/BW/VNNI: the batch kernel
/// uses `vpdpbusd`), `"avx2+fma"` (x86-64 with AVX2 and FMA) or `"portable"`. The exact
/// `f32` scores use AVX2 + FMA on both x86-64 levels. The environment variable
/// `AGENTMEM_DENSE_KERNEL`, read once, picks a lesser set by this name (`"avx2+fma"`,
/// `"portable"`) to measure or test it; names the CPU cannot run are ignored.
///
/// ```
/// let k = agentmemory_index::simd::kernel_name();
/// assert!(["avx512-vnni+avx2+fma", "avx2+fma", "portable"].contains(&k));
/// ```
pub fn kernel_name() -> &'static str {
    kernels().name()
}

/// `Σ a[i]·b[i]`; `a` and `b` have the same length.
#[inline]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    f32_kernel()(a, b)
}

/// Packs `n` queries of `dim` bytes each (`dim` a multiple of 4), back to back in `codes`,
/// for [`Kernels::dots_packed`]: groups of [`GROUP`] queries (the last one padded with
/// zero queries), each holding, for every 4-byte step of `dim`, those 4 bytes of each of
/// its queries in turn.
pub fn pack_queries(codes: &[i8], dim: usize, n: usize) -> Vec<i8> {
    debug_assert!(dim.is_multiple_of(4) && codes.len() >= n * dim);
    let groups = n.div_ceil(GROUP);
    let mut packed = vec![0i8; groups * GROUP * dim];
    for (q, query) in codes.chunks_exact(dim).take(n).enumerate() {
        let base = q / GROUP * GROUP * dim + q % GROUP * 4;
        for (s, four) in query.as_chunks::<4>().0.iter().enumerate() {
            let at = base + s * GROUP * 4;
            packed[at..at + 4].copy_from_slice(four);
        }
    }
    packed
}

/// The bounds check of one lane, the reference every [`Kernels::screen`] follows.
#[inline(always)]
fn upper_reaches(dot: i32, s: f32, e: f32, t: &Terms<'_>, j: usize) -> bool {
    let approx = (dot - t.offset[j]) as f32 * (t.scale[j] * s);
    approx + e.mul_add(t.widen[j], t.pad[j]) >= t.threshold[j]
}

/// [`Kernels::screen`] in plain loops: each group of [`GROUP`] lanes is flagged whole when
/// any of its lanes passes (an OR-reduction the compiler vectorises).
#[inline(always)]
fn screen_groups(
    dots: &[i32],
    width: usize,
    scales: &[f32],
    errors: &[f32],
    t: Terms<'_>,
    masks: &mut [u64],
) {
    for (r, mask) in masks.iter_mut().enumerate() {
        let (s, e) = (scales[r], errors[r]);
        let row = &dots[r * width..(r + 1) * width];
        let mut m = 0u64;
        for g in 0..width / GROUP {
            let mut any = false;
            let base = g * GROUP;
            for (l, &dot) in row[base..base + GROUP].iter().enumerate() {
                any |= upper_reaches(dot, s, e, &t, base + l);
            }
            if any {
                m |= 0xffff << (g * GROUP);
            }
        }
        *mask = m;
    }
}

/// Plain loops; also the reference the SIMD kernels are tested against.
mod portable {
    use super::{Terms, GROUP};

    pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let mut lanes = [0.0f32; 16];
        let (ca, ta) = a.as_chunks::<16>();
        let (cb, tb) = b.as_chunks::<16>();
        let tail: f32 = ta.iter().zip(tb).map(|(x, y)| x * y).sum();
        for (x, y) in ca.iter().zip(cb) {
            for i in 0..16 {
                lanes[i] += x[i] * y[i];
            }
        }
        lanes.iter().sum::<f32>() + tail
    }

    pub fn dots_u8i8(rows: &[u8], dim: usize, queries: &[i8], n_queries: usize, out: &mut [i32]) {
        for (r, row) in rows.chunks_exact(dim).enumerate() {
            for (q, query) in queries.chunks_exact(dim).enumerate() {
                out[r * n_queries + q] = row
                    .iter()
                    .zip(query)
                    .map(|(&x, &y)| i32::from(x) * i32::from(y))
                    .sum();
            }
        }
    }

    pub fn dots_packed(rows: &[u8], dim: usize, panel: &[i8], groups: usize, out: &mut [i32]) {
        let width = groups * GROUP;
        for (r, row) in rows.chunks_exact(dim).enumerate() {
            for g in 0..groups {
                let group = &panel[g * GROUP * dim..(g + 1) * GROUP * dim];
                // Sixteen lanes, one per query: the same shape as the SIMD kernels, which
                // the compiler vectorises across the lanes.
                let mut acc = [0i32; GROUP];
                let steps = group.as_chunks::<{ 4 * GROUP }>().0;
                for (four, step) in row.as_chunks::<4>().0.iter().zip(steps) {
                    let x: [i32; 4] = std::array::from_fn(|b| i32::from(four[b]));
                    for (a, q) in acc.iter_mut().zip(step.as_chunks::<4>().0) {
                        *a += x[0] * i32::from(q[0])
                            + x[1] * i32::from(q[1])
                            + x[2] * i32::from(q[2])
                            + x[3] * i32::from(q[3]);
                    }
                }
                out[r * width + g * GROUP..][..GROUP].copy_from_slice(&acc);
            }
        }
    }

    pub fn screen(
        dots: &[i32],
        width: usize,
        scales: &[f32],
        errors: &[f32],
        terms: Terms<'_>,
        masks: &mut [u64],
    ) {
        super::screen_groups(dots, width, scales, errors, terms, masks)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{DotF32, DotsU8I8, Kernels, Terms, GROUP, LANE_BYTES, QUERIES, ROWS};
    use crate::cpu::Avx2Fma;

    /// The AVX2 + FMA integer kernels; the token proves the CPU has AVX2 and FMA.
    pub fn kernels(cpu: Avx2Fma) -> Kernels {
        // Defined here, so only a holder of the token can name them.
        fn dots_packed_entry(
            rows: &[u8],
            dim: usize,
            panel: &[i8],
            groups: usize,
            out: &mut [i32],
        ) {
            // SAFETY: only reachable through `kernels`, which takes an `Avx2Fma`, made
            // only when the CPU has AVX2 and FMA.
            unsafe { dots_packed(rows, dim, panel, groups, out) }
        }
        fn screen_entry(
            dots: &[i32],
            width: usize,
            scales: &[f32],
            errors: &[f32],
            terms: Terms<'_>,
            masks: &mut [u64],
        ) {
            // SAFETY: as above, the CPU has AVX2 and FMA.
            unsafe { screen(dots, width, scales, errors, terms, masks) }
        }
        Kernels {
            dots_u8i8: dots_u8i8_kernel(cpu),
            dots_packed: dots_packed_entry,
            screen: screen_entry,
            // Below a full group, most of each register's lanes would be padding.
            packed_from: GROUP,
            name: "avx2+fma",
        }
    }

    /// The AVX2 row-major integer kernel (the AVX-512 set uses it too); the token proves
    /// the CPU has AVX2 and FMA.
    pub fn dots_u8i8_kernel(_: Avx2Fma) -> DotsU8I8 {
        fn entry(rows: &[u8], dim: usize, queries: &[i8], n_queries: usize, out: &mut [i32]) {
            // SAFETY: only reachable through `dots_u8i8_kernel`, which takes an `Avx2Fma`,
            // made only when the CPU has AVX2 and FMA.
            unsafe { dots_u8i8(rows, dim, queries, n_queries, out) }
        }
        entry
    }

    /// The AVX2 + FMA `f32` dot product; the token proves the CPU has AVX2 and FMA.
    pub fn dot_f32_kernel(_: Avx2Fma) -> DotF32 {
        fn entry(a: &[f32], b: &[f32]) -> f32 {
            // SAFETY: only reachable through `dot_f32_kernel`, which takes an `Avx2Fma`,
            // made only when the CPU has AVX2 and FMA.
            unsafe { dot_f32(a, b) }
        }
        entry
    }

    /// The plain loops, compiled for AVX2 + FMA.
    #[target_feature(enable = "avx2,fma")]
    fn screen(
        dots: &[i32],
        width: usize,
        scales: &[f32],
        errors: &[f32],
        terms: Terms<'_>,
        masks: &mut [u64],
    ) {
        super::screen_groups(dots, width, scales, errors, terms, masks)
    }

    /// Rows per block of [`packed_block`]: 4 rows × 2 registers of 8 queries = 8
    /// accumulators, within the 16 registers with the temporaries.
    const PACKED_ROWS: usize = 4;

    /// `R` rows against one packed group of 16 queries: the four bytes of a row at each
    /// step are broadcast and multiplied with the same four bytes of 8 queries per register
    /// (`vpmaddubsw`, then `vpmaddwd` by ones sums each four into the query's `i32` lane).
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 and FMA; `dim` is a multiple of 4; `rows` is valid for reading `R`
    /// rows of `dim` bytes, `group` for `GROUP · dim` bytes, and `out` for writing `GROUP`
    /// lanes at the start of each of `R` rows `width` lanes apart, overlapping neither.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn packed_block<const R: usize>(
        rows: *const u8,
        dim: usize,
        group: *const i8,
        out: *mut i32,
        width: usize,
    ) {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        let mut s = 0;
        while s < dim {
            // SAFETY: s + 4 ≤ dim, so bytes 16·s .. 16·s + 64 lie in the group of 16 · dim.
            let q0 = unsafe { _mm256_loadu_si256(group.add(s * GROUP).cast()) };
            // SAFETY: as above.
            let q1 = unsafe { _mm256_loadu_si256(group.add(s * GROUP + 32).cast()) };
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: bytes s .. s + 4 of row r < R, in bounds as s + 4 ≤ dim.
                let four = unsafe { rows.add(r * dim + s).cast::<i32>().read_unaligned() };
                let x = _mm256_set1_epi32(four);
                acc[0] = _mm256_add_epi32(acc[0], madd32(x, q0, ones));
                acc[1] = _mm256_add_epi32(acc[1], madd32(x, q1, ones));
            }
            s += 4;
        }
        for (r, acc) in acc.iter().enumerate() {
            // SAFETY: lanes 0..16 of output row r < R, which the caller lets us write.
            unsafe {
                _mm256_storeu_si256(out.add(r * width).cast(), acc[0]);
                _mm256_storeu_si256(out.add(r * width + 8).cast(), acc[1]);
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    fn dots_packed(rows: &[u8], dim: usize, panel: &[i8], groups: usize, out: &mut [i32]) {
        let n = rows.len() / dim;
        let width = groups * GROUP;
        assert!(panel.len() >= width * dim && out.len() >= n * width && dim.is_multiple_of(4));
        let (rp, pp, op) = (rows.as_ptr(), panel.as_ptr(), out.as_mut_ptr());
        for g in 0..groups {
            // SAFETY: same features; group g is within the panel (checked above), rows
            // r..r + PACKED_ROWS (or r) are within `rows` (r + R ≤ n), and their output
            // lanes g·16 .. g·16 + 16 of rows `width` apart are within `out`, a mutable
            // borrow that overlaps neither input.
            unsafe {
                let group = pp.add(g * GROUP * dim);
                let mut r = 0;
                while r + PACKED_ROWS <= n {
                    let o = op.add(r * width + g * GROUP);
                    packed_block::<PACKED_ROWS>(rp.add(r * dim), dim, group, o, width);
                    r += PACKED_ROWS;
                }
                while r < n {
                    let o = op.add(r * width + g * GROUP);
                    packed_block::<1>(rp.add(r * dim), dim, group, o, width);
                    r += 1;
                }
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    fn hsum_ps(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
        _mm_cvtss_f32(s)
    }

    #[target_feature(enable = "avx2,fma")]
    fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i + 32 <= n {
            for (j, acc) in acc.iter_mut().enumerate() {
                // SAFETY: i + 8j + 8 <= n, within both slices.
                let x = unsafe { _mm256_loadu_ps(pa.add(i + 8 * j)) };
                // SAFETY: as above.
                let y = unsafe { _mm256_loadu_ps(pb.add(i + 8 * j)) };
                *acc = _mm256_fmadd_ps(x, y, *acc);
            }
            i += 32;
        }
        while i + 8 <= n {
            // SAFETY: i + 8 <= n.
            let x = unsafe { _mm256_loadu_ps(pa.add(i)) };
            // SAFETY: as above.
            let y = unsafe { _mm256_loadu_ps(pb.add(i)) };
            acc[0] = _mm256_fmadd_ps(x, y, acc[0]);
            i += 8;
        }
        let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let mut total = hsum_ps(sum);
        while i < n {
            total += a[i] * b[i];
            i += 1;
        }
        total
    }

    /// `u8 × i8` products of 32 bytes, pairwise summed to `i16`, then to `i32` lanes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn madd32(x: __m256i, q: __m256i, ones: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(x, q), ones)
    }

    /// The eight `i32` lanes of each of four vectors summed: `[Σa, Σb, Σc, Σd]`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn hsum4_epi32(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> __m128i {
        let ab = _mm256_hadd_epi32(a, b);
        let cd = _mm256_hadd_epi32(c, d);
        let abcd = _mm256_hadd_epi32(ab, cd);
        _mm_add_epi32(
            _mm256_castsi256_si128(abcd),
            _mm256_extracti128_si256::<1>(abcd),
        )
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn hsum_epi32(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }

    /// The four lanes of `v`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn lanes(v: __m128i) -> [i32; 4] {
        let mut lanes = [0i32; 4];
        // SAFETY: `lanes` holds the 16 bytes written.
        unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast(), v) };
        lanes
    }

    /// [`ROWS`] rows × [`QUERIES`] queries, register-blocked: each 32-byte chunk of a row
    /// is loaded once for both queries and each chunk of a query once for the four rows.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 and FMA; `dim` is a multiple of [`LANE_BYTES`]; `rows` is valid
    /// for reading [`ROWS`] rows of `dim` bytes and `queries` [`QUERIES`] queries of `dim`
    /// bytes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block(rows: *const u8, queries: *const i8, dim: usize) -> [__m128i; QUERIES] {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); ROWS]; QUERIES];
        let mut i = 0;
        while i < dim {
            // SAFETY: bytes i .. i + 32 ≤ dim of row r < ROWS, which the caller passes.
            let x: [__m256i; ROWS] = std::array::from_fn(|r| unsafe {
                _mm256_loadu_si256(rows.add(r * dim + i).cast())
            });
            for (q, acc) in acc.iter_mut().enumerate() {
                // SAFETY: bytes i .. i + 32 ≤ dim of query q < QUERIES.
                let y = unsafe { _mm256_loadu_si256(queries.add(q * dim + i).cast()) };
                for r in 0..ROWS {
                    acc[r] = _mm256_add_epi32(acc[r], madd32(x[r], y, ones));
                }
            }
            i += LANE_BYTES;
        }
        std::array::from_fn(|q| hsum4_epi32(acc[q][0], acc[q][1], acc[q][2], acc[q][3]))
    }

    /// One row against one query.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 and FMA; `dim` is a multiple of [`LANE_BYTES`]; `row` and `query`
    /// are valid for reading `dim` bytes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn single(row: *const u8, query: *const i8, dim: usize) -> i32 {
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_si256();
        let mut i = 0;
        while i < dim {
            // SAFETY: bytes i .. i + 32 ≤ dim of the row and the query.
            let x = unsafe { _mm256_loadu_si256(row.add(i).cast()) };
            // SAFETY: as above.
            let y = unsafe { _mm256_loadu_si256(query.add(i).cast()) };
            acc = _mm256_add_epi32(acc, madd32(x, y, ones));
            i += LANE_BYTES;
        }
        hsum_epi32(acc)
    }

    /// Four rows against one query.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 and FMA; `dim` is a multiple of [`LANE_BYTES`]; `rows` is valid
    /// for reading [`ROWS`] rows of `dim` bytes and `query` `dim` bytes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn rows4(rows: *const u8, query: *const i8, dim: usize) -> __m128i {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [_mm256_setzero_si256(); ROWS];
        let mut i = 0;
        while i < dim {
            // SAFETY: bytes i .. i + 32 ≤ dim of the query.
            let y = unsafe { _mm256_loadu_si256(query.add(i).cast()) };
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: bytes i .. i + 32 ≤ dim of row r < ROWS.
                let x = unsafe { _mm256_loadu_si256(rows.add(r * dim + i).cast()) };
                *acc = _mm256_add_epi32(*acc, madd32(x, y, ones));
            }
            i += LANE_BYTES;
        }
        hsum4_epi32(acc[0], acc[1], acc[2], acc[3])
    }

    #[target_feature(enable = "avx2,fma")]
    fn dots_u8i8(rows: &[u8], dim: usize, queries: &[i8], nq: usize, out: &mut [i32]) {
        let n_rows = rows.len() / dim;
        assert!(
            dim.is_multiple_of(LANE_BYTES) && queries.len() >= nq * dim && out.len() >= n_rows * nq
        );
        let (rp, qp) = (rows.as_ptr(), queries.as_ptr());
        let mut r = 0;
        while r + ROWS <= n_rows {
            let mut q = 0;
            while q + QUERIES <= nq {
                // SAFETY: same features; rows r..r+ROWS and queries q..q+QUERIES exist
                // (checked above).
                let sums = unsafe { block(rp.add(r * dim), qp.add(q * dim), dim) };
                for (j, s) in sums.iter().enumerate() {
                    for (k, v) in lanes(*s).into_iter().enumerate() {
                        out[(r + k) * nq + q + j] = v;
                    }
                }
                q += QUERIES;
            }
            while q < nq {
                // SAFETY: as above, one query.
                let s = unsafe { rows4(rp.add(r * dim), qp.add(q * dim), dim) };
                for (k, v) in lanes(s).into_iter().enumerate() {
                    out[(r + k) * nq + q] = v;
                }
                q += 1;
            }
            r += ROWS;
        }
        while r < n_rows {
            for q in 0..nq {
                // SAFETY: same features; row r and query q exist.
                out[r * nq + q] = unsafe { single(rp.add(r * dim), qp.add(q * dim), dim) };
            }
            r += 1;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Kernels, Terms, GROUP};
    use crate::cpu::{Avx2Fma, Avx512Vnni};

    /// The AVX-512 VNNI batch kernel and check, beside the AVX2 row-major kernel; the
    /// tokens prove the CPU has AVX-512 F/BW/VNNI, and AVX2 and FMA.
    pub fn kernels(_: Avx512Vnni, avx2: Avx2Fma) -> Kernels {
        // Defined here, so only a holder of the token can name them.
        fn dots_packed_entry(
            rows: &[u8],
            dim: usize,
            panel: &[i8],
            groups: usize,
            out: &mut [i32],
        ) {
            // SAFETY: only reachable through `kernels`, which takes an `Avx512Vnni`, made
            // only when the CPU has AVX-512 F/BW/VNNI.
            unsafe { dots_packed(rows, dim, panel, groups, out) }
        }
        fn screen_entry(
            dots: &[i32],
            width: usize,
            scales: &[f32],
            errors: &[f32],
            terms: Terms<'_>,
            masks: &mut [u64],
        ) {
            // SAFETY: as above, the CPU has AVX-512 F/BW/VNNI.
            unsafe { screen(dots, width, scales, errors, terms, masks) }
        }
        Kernels {
            dots_u8i8: super::avx2::dots_u8i8_kernel(avx2),
            dots_packed: dots_packed_entry,
            screen: screen_entry,
            // One `vpdpbusd` on 4 useful lanes of 16 still does more than the AVX2 row
            // kernel.
            packed_from: 4,
            name: "avx512-vnni+avx2+fma",
        }
    }

    /// `R` rows × `G` packed groups of 16 queries, one `zmm` accumulator each: per 4-byte
    /// step, `G` query loads and `R` row broadcasts feed `R · G` `vpdpbusd` (64
    /// multiply-adds each). `R · G + G + 1` registers stay within the 32.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F/BW/VNNI; `dim` is a multiple of 4; `rows` is valid for
    /// reading `R` rows of `dim` bytes, `panel` for `G` groups of `GROUP · dim` bytes, and
    /// `out` for writing `R · G · GROUP` lanes, overlapping neither.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn block<const G: usize, const R: usize>(
        rows: *const u8,
        dim: usize,
        panel: *const i8,
        out: *mut i32,
    ) {
        let mut acc = [[_mm512_setzero_si512(); G]; R];
        let mut s = 0;
        while s < dim {
            // SAFETY: s + 4 ≤ dim, so bytes 16·s .. 16·s + 64 lie in group g < G.
            let q: [__m512i; G] = std::array::from_fn(|g| unsafe {
                _mm512_loadu_si512(panel.add(g * GROUP * dim + s * GROUP).cast())
            });
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: bytes s .. s + 4 ≤ dim of row r < R.
                let four = unsafe { rows.add(r * dim + s).cast::<i32>().read_unaligned() };
                let x = _mm512_set1_epi32(four);
                for (a, q) in acc.iter_mut().zip(&q) {
                    *a = _mm512_dpbusd_epi32(*a, x, *q);
                }
            }
            s += 4;
        }
        for (r, acc) in acc.iter().enumerate() {
            for (g, a) in acc.iter().enumerate() {
                // SAFETY: lanes (r·G + g)·16 .. + 16 < R · G · GROUP of `out`.
                unsafe { _mm512_storeu_si512(out.add((r * G + g) * GROUP).cast(), *a) };
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    fn blocks<const G: usize, const R: usize>(
        rows: &[u8],
        dim: usize,
        panel: &[i8],
        out: &mut [i32],
    ) {
        let n = rows.len() / dim;
        assert!(panel.len() >= G * GROUP * dim && out.len() >= n * G * GROUP);
        assert!(dim.is_multiple_of(4));
        let (rp, pp, op) = (rows.as_ptr(), panel.as_ptr(), out.as_mut_ptr());
        let mut r = 0;
        // SAFETY: same features; rows r..r + R (or r) are within `rows` (r + R ≤ n), the
        // panel holds G groups and their output lanes are within `out` (checked above), a
        // mutable borrow that overlaps neither input.
        unsafe {
            while r + R <= n {
                block::<G, R>(rp.add(r * dim), dim, pp, op.add(r * G * GROUP));
                r += R;
            }
            while r < n {
                block::<G, 1>(rp.add(r * dim), dim, pp, op.add(r * G * GROUP));
                r += 1;
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn dots_packed(rows: &[u8], dim: usize, panel: &[i8], groups: usize, out: &mut [i32]) {
        match groups {
            1 => blocks::<1, 12>(rows, dim, panel, out),
            2 => blocks::<2, 10>(rows, dim, panel, out),
            3 => blocks::<3, 8>(rows, dim, panel, out),
            _ => blocks::<4, 6>(rows, dim, panel, out),
        }
    }

    /// The check of [`super::upper_reaches`] on 16 lanes at once, same operations in the
    /// same order (`vfmadd` is the fused `mul_add`), so the mask bits are exact.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn screen(
        dots: &[i32],
        width: usize,
        scales: &[f32],
        errors: &[f32],
        t: Terms<'_>,
        masks: &mut [u64],
    ) {
        let groups = width / GROUP;
        assert!(groups * GROUP == width && groups <= 4 && dots.len() >= masks.len() * width);
        assert!(scales.len() >= masks.len() && errors.len() >= masks.len());
        assert!(t.offset.len() >= width && t.scale.len() >= width && t.widen.len() >= width);
        assert!(t.pad.len() >= width && t.threshold.len() >= width);
        let load_f = |v: &[f32], g: usize| {
            let lanes = &v[g * GROUP..(g + 1) * GROUP];
            // SAFETY: `lanes` holds the 16 values read.
            unsafe { _mm512_loadu_ps(lanes.as_ptr()) }
        };
        let mut off = [_mm512_setzero_si512(); 4];
        let mut sc = [_mm512_setzero_ps(); 4];
        let mut wi = [_mm512_setzero_ps(); 4];
        let mut pa = [_mm512_setzero_ps(); 4];
        let mut th = [_mm512_setzero_ps(); 4];
        for g in 0..groups {
            let offset = &t.offset[g * GROUP..(g + 1) * GROUP];
            // SAFETY: `offset` holds the 16 lanes read.
            off[g] = unsafe { _mm512_loadu_si512(offset.as_ptr().cast()) };
            sc[g] = load_f(t.scale, g);
            wi[g] = load_f(t.widen, g);
            pa[g] = load_f(t.pad, g);
            th[g] = load_f(t.threshold, g);
        }
        for (r, mask) in masks.iter_mut().enumerate() {
            let s = _mm512_set1_ps(scales[r]);
            let e = _mm512_set1_ps(errors[r]);
            let mut m = 0u64;
            for g in 0..groups {
                // SAFETY: row r has `width` dots (checked above).
                let d =
                    unsafe { _mm512_loadu_si512(dots.as_ptr().add(r * width + g * GROUP).cast()) };
                let approx = _mm512_mul_ps(
                    _mm512_cvtepi32_ps(_mm512_sub_epi32(d, off[g])),
                    _mm512_mul_ps(sc[g], s),
                );
                let upper = _mm512_add_ps(approx, _mm512_fmadd_ps(e, wi[g], pa[g]));
                let hit = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(upper, th[g]);
                m |= u64::from(hit) << (g * GROUP);
            }
            *mask = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *seed >> 33
    }

    #[test]
    fn f32_kernel_matches_the_portable_loop() {
        let mut seed = 7;
        for n in [0, 1, 7, 8, 31, 32, 33, 100, 384, 385] {
            let a: Vec<f32> = (0..n)
                .map(|_| (lcg(&mut seed) % 1000) as f32 / 500.0 - 1.0)
                .collect();
            let b: Vec<f32> = (0..n)
                .map(|_| (lcg(&mut seed) % 1000) as f32 / 500.0 - 1.0)
                .collect();
            let want: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            assert!((f64::from(dot_f32(&a, &b)) - want).abs() < 1e-4, "n = {n}");
            assert!((f64::from(portable::dot_f32(&a, &b)) - want).abs() < 1e-4);
        }
    }

    #[test]
    fn integer_kernel_matches_the_portable_loop_on_every_shape() {
        let mut seed = 11;
        for kernels in available() {
            for (n_rows, nq, dim) in [(1, 1, 32), (4, 2, 64), (7, 3, 96), (9, 5, 384), (0, 2, 32)] {
                let rows: Vec<u8> = (0..n_rows * dim)
                    .map(|_| (lcg(&mut seed) % 256) as u8)
                    .collect();
                let queries: Vec<i8> = (0..nq * dim)
                    .map(|_| ((lcg(&mut seed) % 127) as i32 - 63) as i8)
                    .collect();
                let mut got = vec![0; n_rows * nq];
                let mut want = vec![0; n_rows * nq];
                kernels.dots_u8i8(&rows, dim, &queries, nq, &mut got);
                portable::dots_u8i8(&rows, dim, &queries, nq, &mut want);
                assert_eq!(got, want, "{}: {n_rows} x {nq} x {dim}", kernels.name());
            }
            // Extremes: 255 × ±63 pairs stay within i16 before widening.
            let rows = vec![255u8; 64];
            let queries = vec![-63i8; 64];
            let mut got = [0];
            kernels.dots_u8i8(&rows, 64, &queries, 1, &mut got);
            assert_eq!(got[0], -255 * 63 * 64);
        }
        // Built with AVX2 and FMA enabled (as the second Miri pass is), the CPU has them.
        if cfg!(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "fma"
        )) {
            assert!(available().iter().any(|k| k.name() == "avx2+fma"));
        }
        assert!(!kernel_name().is_empty());
        if std::env::var(KERNEL_ENV).is_err() {
            assert_eq!(kernel_name(), available().last().unwrap().name());
        }
    }

    /// The plain definition the packed kernels must reproduce: row `r` against query `q`.
    fn plain_dots(rows: &[u8], queries: &[i8], dim: usize, nq: usize) -> Vec<Vec<i32>> {
        rows.chunks_exact(dim)
            .map(|row| {
                (0..nq)
                    .map(|q| {
                        row.iter()
                            .zip(&queries[q * dim..(q + 1) * dim])
                            .map(|(&x, &y)| i32::from(x) * i32::from(y))
                            .sum()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn packed_kernels_equal_the_plain_dot_products_on_every_shape() {
        let mut seed = 5;
        // Row counts around every block size (1, 4, 6, 8, 10, 12), partial groups and panels.
        let shapes: &[(usize, usize, usize)] = if cfg!(miri) {
            // The interpreter is about 10⁵ times slower: one shape per case (no rows, one
            // row, a partial group, block rests, several groups and a second panel).
            &[
                (0, 3, 32),
                (1, 1, 32),
                (5, 16, 32),
                (9, 33, 32),
                (6, 70, 32),
            ]
        } else {
            &[
                (0, 3, 32),
                (1, 1, 32),
                (5, 16, 64),
                (13, 17, 96),
                (25, 33, 32),
                (37, 64, 384),
                (11, 49, 128),
                (7, 70, 64),
                // Past every block height: 1 group × 12 rows, 2 × 10, 3 × 8, 4 × 6, plus
                // rests.
                (30, 9, 64),
                (23, 20, 96),
                (19, 40, 32),
                (14, 64, 64),
            ]
        };
        for &(n_rows, nq, dim) in shapes {
            let mut rows: Vec<u8> = (0..n_rows * dim)
                .map(|_| (lcg(&mut seed) % 256) as u8)
                .collect();
            let mut queries: Vec<i8> = (0..nq * dim)
                .map(|_| ((lcg(&mut seed) % 127) as i32 - 63) as i8)
                .collect();
            if n_rows > 0 {
                // Extremes in the first row and query.
                rows[..dim].fill(255);
                queries[..dim].fill(-63);
            }
            let want = plain_dots(&rows, &queries, dim, nq);
            let packed = pack_queries(&queries, dim, nq);
            assert_eq!(packed.len(), nq.div_ceil(GROUP) * GROUP * dim);
            for kernels in available() {
                let groups = nq.div_ceil(GROUP);
                for g0 in (0..groups).step_by(MAX_GROUPS) {
                    let g = (groups - g0).min(MAX_GROUPS);
                    let width = g * GROUP;
                    let mut out = vec![i32::MIN; n_rows * width];
                    let panel = &packed[g0 * GROUP * dim..];
                    kernels.dots_packed(&rows, dim, panel, g, &mut out);
                    for r in 0..n_rows {
                        for j in 0..width {
                            let q = g0 * GROUP + j;
                            let expect = if q < nq { want[r][q] } else { 0 };
                            assert_eq!(
                                out[r * width + j],
                                expect,
                                "{}: row {r} query {q} of {n_rows} x {nq} x {dim}",
                                kernels.name()
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn screens_flag_exactly_the_lanes_the_bound_admits_or_whole_groups() {
        let mut seed = 9;
        for width in [16, 32, 48, 64] {
            let n_rows = 23;
            let dots: Vec<i32> = (0..n_rows * width)
                .map(|_| (lcg(&mut seed) % 200_000) as i32 - 100_000)
                .collect();
            let f = |seed: &mut u64, lo: f32, span: f32| {
                lo + (lcg(seed) % 10_000) as f32 / 10_000.0 * span
            };
            let scales: Vec<f32> = (0..n_rows).map(|_| f(&mut seed, 1e-3, 1e-3)).collect();
            let errors: Vec<f32> = (0..n_rows).map(|_| f(&mut seed, 0.0, 0.02)).collect();
            let offset: Vec<i32> = (0..width)
                .map(|_| (lcg(&mut seed) % 2000) as i32 - 1000)
                .collect();
            let scale: Vec<f32> = (0..width).map(|_| f(&mut seed, 1e-3, 1e-3)).collect();
            let widen: Vec<f32> = (0..width).map(|_| f(&mut seed, 1.0, 0.02)).collect();
            let pad: Vec<f32> = (0..width).map(|_| f(&mut seed, 0.0, 0.02)).collect();
            // Thresholds around the typical upper bound, some infinite either way.
            let mut threshold: Vec<f32> = (0..width).map(|_| f(&mut seed, -0.1, 0.2)).collect();
            threshold[0] = f32::NEG_INFINITY;
            threshold[width - 1] = f32::INFINITY;
            let terms = Terms {
                offset: &offset,
                scale: &scale,
                widen: &widen,
                pad: &pad,
                threshold: &threshold,
            };
            let mut flagged = 0;
            for kernels in available() {
                let mut masks = vec![0u64; n_rows];
                kernels.screen(&dots, width, &scales, &errors, terms, &mut masks);
                for (r, &mask) in masks.iter().enumerate() {
                    for j in 0..width {
                        let admit =
                            upper_reaches(dots[r * width + j], scales[r], errors[r], &terms, j);
                        let bit = mask >> j & 1 == 1;
                        assert!(bit || !admit, "{}: row {r} lane {j} lost", kernels.name());
                        flagged += u32::from(admit);
                        // Extra bits only within a group that has an admitted lane.
                        if bit && !admit {
                            let g = j / GROUP * GROUP;
                            assert!(
                                (g..g + GROUP).any(|l| upper_reaches(
                                    dots[r * width + l],
                                    scales[r],
                                    errors[r],
                                    &terms,
                                    l
                                )),
                                "{}: row {r} group {g} flagged for nothing",
                                kernels.name()
                            );
                        }
                    }
                    assert_eq!(mask.checked_shr(width as u32).unwrap_or(0), 0);
                }
            }
            assert!(flagged > 0 && flagged < (n_rows * width * available().len()) as u32);
        }
    }
}
