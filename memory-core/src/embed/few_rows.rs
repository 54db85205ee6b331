//! The dense layers' matrix product for a few token rows (one short query): every row's
//! sums held in registers while the weights stream past once.
//!
//! At a dozen rows a product is bound by reading the weights (one pass over all of them
//! per query, 42 MB for MiniLM, mostly from memory), not by arithmetic. The general `gemm`
//! tiles such a product 6 rows at a time and walks each weight column block down all of
//! its input rows, one page apart per step. Here up to [`PASS_ROWS`] rows are done in one
//! pass over the weights, and the inputs are taken [`K_BLOCK`] at a time across the whole
//! width of the output, so the weights are read as a few sequential streams the hardware
//! prefetcher follows. AVX-512 only (24 of its 32 vector registers hold the sums); other
//! CPUs, and widths not a multiple of [`COLS`], keep `gemm`.

use gemm::Parallelism;

/// Rows summed in one pass over the weights: 12 rows × 2 vectors of 16 columns.
const PASS_ROWS: usize = 12;
/// Rows this product takes at most: two passes. Longer inputs go to `gemm`, whose tiles
/// reuse the weights in cache across rows.
pub(crate) const MAX_ROWS: usize = 2 * PASS_ROWS;
/// Output columns per block: two 16-lane vectors.
const COLS: usize = 32;
/// Input rows (of the weights) per sweep across the output's width: as many sequential
/// streams. Measured on the harness's queries: 8 and 4 alike, 16 about 15 % slower, 32
/// twice as slow (more streams than the prefetchers follow).
const K_BLOCK: usize = 8;

/// Whether [`product`] runs `rows × k` by `k × n` on this CPU.
pub(crate) fn applies(rows: usize, n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        (1..=MAX_ROWS).contains(&rows)
            && n > 0
            && n.is_multiple_of(COLS)
            && std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (rows, n);
        false
    }
}

/// `dst = x · w`, or `dst += x · w` with `add`: `x` is `rows × k`, `w` is `k × n`, `dst` is
/// `rows × n`, all dense and row-major. With [`Parallelism::Rayon`], the output's columns
/// are split between the threads (each streams its own part of the weights).
///
/// # Panics
///
/// When [`applies`] is false for `rows` and `n`, or a slice is shorter than its shape: a
/// bug in the caller, never bad input.
pub(crate) fn product(
    (rows, n, k): (usize, usize, usize),
    dst: &mut [f32],
    x: &[f32],
    w: &[f32],
    add: bool,
    parallelism: Parallelism,
) {
    assert!(applies(rows, n), "few_rows::product: {rows} rows × {n}");
    assert!(x.len() >= rows * k, "few_rows::product: input too small");
    assert!(w.len() >= k * n, "few_rows::product: weights too small");
    assert!(
        dst.len() >= rows * n,
        "few_rows::product: destination too small"
    );
    let threads = match parallelism {
        Parallelism::Rayon(t) => t.max(1),
        _ => 1,
    };
    let blocks = n / COLS;
    let tasks = threads.min(blocks);
    if tasks <= 1 {
        columns((rows, n, k), dst, x, w, add, 0..blocks);
        return;
    }
    // Each task writes its own columns of every row: rows interleave, so the destination
    // cannot be split into disjoint slices; each task gets the whole of it through a
    // pointer and touches only its columns.
    let dst = Shared(dst.as_mut_ptr(), dst.len());
    let per = blocks.div_ceil(tasks);
    rayon::scope(|scope| {
        for start in (0..blocks).step_by(per) {
            let dst = &dst;
            scope.spawn(move |_| {
                // SAFETY: the pointer and length are those of the `&mut [f32]` borrowed
                // for this call, which outlives the scope; the tasks write disjoint
                // column ranges (`start..start + per` blocks of COLS) of its rows and
                // nothing else reads or writes it meanwhile.
                let dst = unsafe { std::slice::from_raw_parts_mut(dst.0, dst.1) };
                columns(
                    (rows, n, k),
                    dst,
                    x,
                    w,
                    add,
                    start..(start + per).min(blocks),
                );
            });
        }
    });
}

/// The destination of a product split between threads.
struct Shared(*mut f32, usize);
// SAFETY: the tasks sharing it write disjoint elements (see `product`).
unsafe impl Sync for Shared {}

/// The products of column blocks `blocks` (of [`COLS`] columns), every row, in passes of
/// at most [`PASS_ROWS`] rows of even size.
fn columns(
    (rows, n, k): (usize, usize, usize),
    dst: &mut [f32],
    x: &[f32],
    w: &[f32],
    add: bool,
    blocks: std::ops::Range<usize>,
) {
    let passes = rows.div_ceil(PASS_ROWS);
    let per = rows.div_ceil(passes);
    let mut first = 0;
    while first < rows {
        let take = per.min(rows - first);
        let x = &x[first * k..(first + take) * k];
        let dst = &mut dst[first * n..(first + take) * n];
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `applies` checked that the CPU has AVX-512F, `take` is
            // 1..=PASS_ROWS, and the slices hold `take × k`, `k × n` and `take × n`
            // values, with `n` a multiple of COLS and `blocks` within `n / COLS` (checked
            // by the callers).
            unsafe { pass(take, (n, k), dst, x, w, add, blocks.clone()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (dst, x, w, add, &blocks);
        first += take;
    }
}

/// One pass over the weights for `rows` (1..=[`PASS_ROWS`]) rows: dispatches to the
/// monomorphised kernel, whose sums stay in registers.
///
/// # Safety
///
/// The CPU has AVX-512F; `x` holds `rows × k` values, `w` `k × n`, `dst` `rows × n`; `n`
/// is a multiple of [`COLS`] and `blocks` lies within `0..n / COLS`.
#[cfg(target_arch = "x86_64")]
unsafe fn pass(
    rows: usize,
    nk: (usize, usize),
    dst: &mut [f32],
    x: &[f32],
    w: &[f32],
    add: bool,
    blocks: std::ops::Range<usize>,
) {
    macro_rules! dispatch {
        ($($r:literal)*) => {
            match rows {
                // SAFETY: the caller's contract, with `rows` equal to the constant.
                $($r => unsafe { kernel::<$r>(nk, dst, x, w, add, blocks) },)*
                _ => unreachable!("1..=PASS_ROWS rows per pass"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12);
}

/// `R` rows: for each block of [`K_BLOCK`] inputs, sweep the column blocks, loading each
/// block's running sums from `dst` (or zeros for the first inputs without `add`), adding
/// the block's inputs, storing them back; the next block's weights of each column block
/// are prefetched as it is summed (about 10 % faster with the weights in memory).
///
/// # Safety
///
/// As [`pass`], with `R` rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn kernel<const R: usize>(
    (n, k): (usize, usize),
    dst: &mut [f32],
    x: &[f32],
    w: &[f32],
    add: bool,
    blocks: std::ops::Range<usize>,
) {
    use std::arch::x86_64::*;
    let (dst, x, w) = (dst.as_mut_ptr(), x.as_ptr(), w.as_ptr());
    let mut k0 = 0;
    while k0 < k {
        let k1 = (k0 + K_BLOCK).min(k);
        for block in blocks.clone() {
            let j = block * COLS;
            let mut lo = [_mm512_setzero_ps(); R];
            let mut hi = [_mm512_setzero_ps(); R];
            if add || k0 > 0 {
                for r in 0..R {
                    // SAFETY: row r < R and columns j..j + 32 ≤ n of the `R × n` dst.
                    unsafe {
                        lo[r] = _mm512_loadu_ps(dst.add(r * n + j));
                        hi[r] = _mm512_loadu_ps(dst.add(r * n + j + 16));
                    }
                }
            }
            // The same columns of the next block of inputs, fetched into cache while
            // this one is summed (the next sweep reaches them after n / 32 blocks).
            for kk in k1..(k1 + K_BLOCK).min(k) {
                let at = w.wrapping_add(kk * n + j);
                _mm_prefetch::<_MM_HINT_T0>(at.cast());
                _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(16).cast());
            }
            for kk in k0..k1 {
                // SAFETY: input row kk < k and columns j..j + 32 ≤ n of the `k × n` w.
                let (w_lo, w_hi) = unsafe {
                    let at = w.add(kk * n + j);
                    (_mm512_loadu_ps(at), _mm512_loadu_ps(at.add(16)))
                };
                for r in 0..R {
                    // SAFETY: element (r, kk) of the `R × k` x.
                    let v = _mm512_set1_ps(unsafe { *x.add(r * k + kk) });
                    lo[r] = _mm512_fmadd_ps(v, w_lo, lo[r]);
                    hi[r] = _mm512_fmadd_ps(v, w_hi, hi[r]);
                }
            }
            for r in 0..R {
                // SAFETY: as for the loads above.
                unsafe {
                    _mm512_storeu_ps(dst.add(r * n + j), lo[r]);
                    _mm512_storeu_ps(dst.add(r * n + j + 16), hi[r]);
                }
            }
        }
        k0 = k1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x · w` in f64, by the definition.
    fn naive(x: &[f32], w: &[f32], rows: usize, k: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0.0; rows * n];
        for r in 0..rows {
            for c in 0..n {
                let s: f64 = (0..k)
                    .map(|i| f64::from(x[r * k + i]) * f64::from(w[i * n + c]))
                    .sum();
                out[r * n + c] = s as f32;
            }
        }
        out
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len as u32)
            .map(|i| {
                ((i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0
                    - 1.0
            })
            .collect()
    }

    #[test]
    fn matches_the_definition_for_every_row_count_alone_and_on_threads() {
        if !applies(1, COLS) {
            eprintln!("skipped: this CPU has no AVX-512F (the product falls back to gemm)");
            return;
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // k not a multiple of K_BLOCK, n several column blocks (and more than 3 threads
        // get one each).
        let (k, n) = (37, 4 * COLS);
        let w = values(k * n, 7);
        for rows in 1..=MAX_ROWS {
            let x = values(rows * k, rows as u32);
            let want = naive(&x, &w, rows, k, n);
            let bias = values(rows * n, 99);
            for parallelism in [Parallelism::None, Parallelism::Rayon(3)] {
                let mut set = vec![f32::NAN; rows * n];
                pool.install(|| product((rows, n, k), &mut set, &x, &w, false, parallelism));
                let mut added = bias.clone();
                pool.install(|| product((rows, n, k), &mut added, &x, &w, true, parallelism));
                for i in 0..rows * n {
                    assert!(
                        (set[i] - want[i]).abs() < 1e-4,
                        "rows {rows}: {} vs {}",
                        set[i],
                        want[i]
                    );
                    assert!(
                        (added[i] - want[i] - bias[i]).abs() < 1e-4,
                        "rows {rows}, add: {} vs {}",
                        added[i],
                        want[i] + bias[i]
                    );
                }
            }
        }
        assert!(!applies(MAX_ROWS + 1, n) && !applies(1, COLS + 1) && !applies(0, n));
    }
}
