//! Dot-product kernels with runtime CPU dispatch.
//!
//! Two kernels serve dense search: an `f32` dot product (exact scores) and a `u8 × i8`
//! integer dot product over a tile of rows and a few queries at once (the quantised scan
//! of [`super::quantized`]). On x86-64 the AVX2 + FMA versions are chosen at run time with
//! `is_x86_feature_detected!`, so a default build (no `-C target-cpu=native`) runs them on
//! any machine that has them; everything else gets portable loops the compiler vectorises
//! for the baseline target. The choice is made once and cached.
//!
//! The two paths compute the same integer results; the `f32` paths may differ in the last
//! bits (different summation order), which is why a search never mixes them: every exact
//! score comes from [`dot_f32`], whatever path it dispatches to.

use std::sync::OnceLock;

/// Rows of a quantised tile processed together by [`dots_u8i8`].
pub(crate) const ROWS: usize = 4;
/// Queries processed together by [`dots_u8i8`].
pub(crate) const QUERIES: usize = 2;
/// Quantised rows and queries are padded to a multiple of this many bytes.
pub(crate) const LANE_BYTES: usize = 32;

/// The kernels picked for this CPU.
#[derive(Clone, Copy)]
struct Kernels {
    dot_f32: fn(&[f32], &[f32]) -> f32,
    dots_u8i8: fn(&[u8], usize, &[i8], usize, &mut [i32]),
    name: &'static str,
}

fn kernels() -> &'static Kernels {
    static CHOSEN: OnceLock<Kernels> = OnceLock::new();
    CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Kernels {
                    dot_f32: avx2::dot_f32_entry,
                    dots_u8i8: avx2::dots_u8i8_entry,
                    name: "avx2+fma",
                };
            }
        }
        Kernels {
            dot_f32: portable::dot_f32,
            dots_u8i8: portable::dots_u8i8,
            name: "portable",
        }
    })
}

/// The dot-product kernels dense search uses on this CPU: `"avx2+fma"` (chosen at run time
/// on x86-64 CPUs that have them, whatever the build flags) or `"portable"`.
///
/// ```
/// let k = agentmemory_core::vector::dense_kernel();
/// assert!(k == "avx2+fma" || k == "portable");
/// ```
pub fn kernel_name() -> &'static str {
    kernels().name
}

/// `Σ a[i]·b[i]`; `a` and `b` have the same length.
#[inline]
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    (kernels().dot_f32)(a, b)
}

/// Integer dot products of every row of `rows` (rows of `dim` bytes, `u8`) with every
/// query of `queries` (`dim` bytes each, `i8`), written row-major to `out`
/// (`out[r * n_queries + q]`). `dim` is a multiple of [`LANE_BYTES`]; each `u8 × i8` pair
/// sum must fit an `i16` (the quantiser keeps queries within ±63 for that).
#[inline]
pub(crate) fn dots_u8i8(
    rows: &[u8],
    dim: usize,
    queries: &[i8],
    n_queries: usize,
    out: &mut [i32],
) {
    debug_assert!(dim.is_multiple_of(LANE_BYTES));
    debug_assert_eq!(queries.len(), dim * n_queries);
    debug_assert_eq!(out.len(), rows.len() / dim * n_queries);
    (kernels().dots_u8i8)(rows, dim, queries, n_queries, out)
}

/// Plain loops; also the reference the SIMD kernels are tested against.
mod portable {
    pub(super) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let mut lanes = [0.0f32; 16];
        let ca = a.chunks_exact(16);
        let cb = b.chunks_exact(16);
        let tail: f32 = ca
            .remainder()
            .iter()
            .zip(cb.remainder())
            .map(|(x, y)| x * y)
            .sum();
        for (x, y) in ca.zip(cb) {
            for i in 0..16 {
                lanes[i] += x[i] * y[i];
            }
        }
        lanes.iter().sum::<f32>() + tail
    }

    pub(super) fn dots_u8i8(
        rows: &[u8],
        dim: usize,
        queries: &[i8],
        n_queries: usize,
        out: &mut [i32],
    ) {
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
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{LANE_BYTES, QUERIES, ROWS};

    pub(super) fn dot_f32_entry(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: chosen only when AVX2 and FMA were detected.
        unsafe { dot_f32(a, b) }
    }

    pub(super) fn dots_u8i8_entry(
        rows: &[u8],
        dim: usize,
        queries: &[i8],
        n_queries: usize,
        out: &mut [i32],
    ) {
        // SAFETY: chosen only when AVX2 and FMA were detected.
        unsafe { dots_u8i8(rows, dim, queries, n_queries, out) }
    }

    #[target_feature(enable = "avx2,fma")]
    fn hsum_ps(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
        _mm_cvtss_f32(s)
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i + 32 <= n {
            for (j, acc) in acc.iter_mut().enumerate() {
                // SAFETY: i + 8j + 8 <= n, within both slices.
                let x = unsafe { _mm256_loadu_ps(pa.add(i + 8 * j)) };
                let y = unsafe { _mm256_loadu_ps(pb.add(i + 8 * j)) };
                *acc = _mm256_fmadd_ps(x, y, *acc);
            }
            i += 32;
        }
        while i + 8 <= n {
            // SAFETY: i + 8 <= n.
            let x = unsafe { _mm256_loadu_ps(pa.add(i)) };
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

    /// [`ROWS`] rows × [`QUERIES`] queries, register-blocked: each 32-byte chunk of a row
    /// is loaded once for both queries and each chunk of a query once for the four rows.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block(rows: *const u8, queries: *const i8, dim: usize) -> [__m128i; QUERIES] {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); ROWS]; QUERIES];
        let mut i = 0;
        while i < dim {
            // SAFETY: the caller passes ROWS rows and QUERIES queries of `dim` bytes.
            let x: [__m256i; ROWS] = std::array::from_fn(|r| unsafe {
                _mm256_loadu_si256(rows.add(r * dim + i).cast())
            });
            for (q, acc) in acc.iter_mut().enumerate() {
                let y = unsafe { _mm256_loadu_si256(queries.add(q * dim + i).cast()) };
                for r in 0..ROWS {
                    acc[r] = _mm256_add_epi32(acc[r], madd32(x[r], y, ones));
                }
            }
            i += LANE_BYTES;
        }
        std::array::from_fn(|q| hsum4_epi32(acc[q][0], acc[q][1], acc[q][2], acc[q][3]))
    }

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn single(row: *const u8, query: *const i8, dim: usize) -> i32 {
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_si256();
        let mut i = 0;
        while i < dim {
            // SAFETY: one row and one query of `dim` bytes.
            let x = unsafe { _mm256_loadu_si256(row.add(i).cast()) };
            let y = unsafe { _mm256_loadu_si256(query.add(i).cast()) };
            acc = _mm256_add_epi32(acc, madd32(x, y, ones));
            i += LANE_BYTES;
        }
        hsum_epi32(acc)
    }

    /// Four rows against one query.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn rows4(rows: *const u8, query: *const i8, dim: usize) -> __m128i {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [_mm256_setzero_si256(); ROWS];
        let mut i = 0;
        while i < dim {
            // SAFETY: the caller passes ROWS rows and one query of `dim` bytes.
            let y = unsafe { _mm256_loadu_si256(query.add(i).cast()) };
            for (r, acc) in acc.iter_mut().enumerate() {
                let x = unsafe { _mm256_loadu_si256(rows.add(r * dim + i).cast()) };
                *acc = _mm256_add_epi32(*acc, madd32(x, y, ones));
            }
            i += LANE_BYTES;
        }
        hsum4_epi32(acc[0], acc[1], acc[2], acc[3])
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn dots_u8i8(rows: &[u8], dim: usize, queries: &[i8], nq: usize, out: &mut [i32]) {
        let n_rows = rows.len() / dim;
        assert!(
            dim.is_multiple_of(LANE_BYTES) && queries.len() >= nq * dim && out.len() >= n_rows * nq
        );
        let (rp, qp) = (rows.as_ptr(), queries.as_ptr());
        let mut r = 0;
        while r + ROWS <= n_rows {
            let mut q = 0;
            while q + QUERIES <= nq {
                // SAFETY: rows r..r+ROWS and queries q..q+QUERIES exist (checked above).
                let sums = unsafe { block(rp.add(r * dim), qp.add(q * dim), dim) };
                for (j, s) in sums.iter().enumerate() {
                    let mut lanes = [0i32; 4];
                    // SAFETY: `lanes` holds 16 bytes.
                    unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast(), *s) };
                    for (k, v) in lanes.into_iter().enumerate() {
                        out[(r + k) * nq + q + j] = v;
                    }
                }
                q += QUERIES;
            }
            while q < nq {
                // SAFETY: as above, one query.
                let s = unsafe { rows4(rp.add(r * dim), qp.add(q * dim), dim) };
                let mut lanes = [0i32; 4];
                unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast(), s) };
                for (k, v) in lanes.into_iter().enumerate() {
                    out[(r + k) * nq + q] = v;
                }
                q += 1;
            }
            r += ROWS;
        }
        while r < n_rows {
            for q in 0..nq {
                // SAFETY: row r and query q exist.
                out[r * nq + q] = unsafe { single(rp.add(r * dim), qp.add(q * dim), dim) };
            }
            r += 1;
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
        for (n_rows, nq, dim) in [(1, 1, 32), (4, 2, 64), (7, 3, 96), (9, 5, 384), (0, 2, 32)] {
            let rows: Vec<u8> = (0..n_rows * dim)
                .map(|_| (lcg(&mut seed) % 256) as u8)
                .collect();
            let queries: Vec<i8> = (0..nq * dim)
                .map(|_| ((lcg(&mut seed) % 127) as i32 - 63) as i8)
                .collect();
            let mut got = vec![0; n_rows * nq];
            let mut want = vec![0; n_rows * nq];
            dots_u8i8(&rows, dim, &queries, nq, &mut got);
            portable::dots_u8i8(&rows, dim, &queries, nq, &mut want);
            assert_eq!(got, want, "{n_rows} rows x {nq} queries x {dim}");
        }
        // Extremes: 255 × ±63 pairs stay within i16 before widening.
        let rows = vec![255u8; 64];
        let queries = vec![-63i8; 64];
        let mut got = [0];
        dots_u8i8(&rows, 64, &queries, 1, &mut got);
        assert_eq!(got[0], -255 * 63 * 64);
        assert!(!kernel_name().is_empty());
    }
}
