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
//!
//! Threads split the output's columns; each gets, from every row, the slice holding its
//! columns, split off with `split_at_mut` (no pointer to the whole destination is shared).
//! The AVX-512 kernel runs only with a `agentmemory_index::cpu::Avx512F` token, and checks the
//! slices it is given before its pointer arithmetic; its portable twin (the same loops in
//! plain code, returning the same bits) is what Miri and CPUs without AVX-512 test.

use std::ops::Range;

use gemm::Parallelism;
use rayon::prelude::*;

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

/// What sums a pass: the AVX-512 kernel, with the token that proves the CPU has it, or
/// (in tests, and so under Miri) its portable twin, the same loops in plain code.
#[derive(Clone, Copy)]
enum Sums {
    #[cfg(target_arch = "x86_64")]
    Avx512(agentmemory_index::cpu::Avx512F),
    #[cfg(test)]
    Portable,
}

/// The AVX-512 kernel, if this CPU has it.
fn simd() -> Option<Sums> {
    #[cfg(target_arch = "x86_64")]
    {
        agentmemory_index::cpu::Avx512F::detect().map(Sums::Avx512)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Whether the product's shape is one it takes: 1 to [`MAX_ROWS`] rows, a whole number of
/// column blocks.
fn fits(rows: usize, n: usize) -> bool {
    (1..=MAX_ROWS).contains(&rows) && n > 0 && n.is_multiple_of(COLS)
}

/// Whether [`product`] runs `rows × k` by `k × n` on this CPU.
pub(crate) fn applies(rows: usize, n: usize) -> bool {
    fits(rows, n) && simd().is_some()
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
    let sums = simd().filter(|_| fits(rows, n));
    let sums = sums.unwrap_or_else(|| panic!("few_rows::product: {rows} rows × {n}"));
    run(sums, (rows, n, k), dst, x, w, add, parallelism);
}

/// [`product`] with `sums` summing each pass.
fn run(
    sums: Sums,
    (rows, n, k): (usize, usize, usize),
    dst: &mut [f32],
    x: &[f32],
    w: &[f32],
    add: bool,
    parallelism: Parallelism,
) {
    assert!(fits(rows, n), "few_rows::product: {rows} rows × {n}");
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
    let per = blocks.div_ceil(threads.min(blocks));
    // Each task writes its own column blocks of every row. Rows interleave, so the
    // destination is split row by row: each task gets, from each row, the slice of its
    // columns, cut off the row with `split_at_mut`, and nothing else.
    let mut rest: Vec<&mut [f32]> = dst[..rows * n].chunks_exact_mut(n).collect();
    let mut tasks = Vec::with_capacity(blocks.div_ceil(per));
    for start in (0..blocks).step_by(per) {
        let end = (start + per).min(blocks);
        let mine: Vec<&mut [f32]> = rest
            .iter_mut()
            .map(|row| {
                let (head, tail) = std::mem::take(row).split_at_mut((end - start) * COLS);
                *row = tail;
                head
            })
            .collect();
        tasks.push((start..end, mine));
    }
    if tasks.len() <= 1 {
        for (blocks, mut dst) in tasks {
            columns(sums, (rows, n, k), &mut dst, x, w, add, blocks);
        }
    } else {
        tasks.into_par_iter().for_each(|(blocks, mut dst)| {
            columns(sums, (rows, n, k), &mut dst, x, w, add, blocks);
        });
    }
}

/// The products of column blocks `blocks` (of [`COLS`] columns), every row, in passes of
/// at most [`PASS_ROWS`] rows of even size: `dst` holds, for each of the `rows` rows, the
/// `blocks.len() × COLS` values of those columns.
fn columns(
    sums: Sums,
    (rows, n, k): (usize, usize, usize),
    dst: &mut [&mut [f32]],
    x: &[f32],
    w: &[f32],
    add: bool,
    blocks: Range<usize>,
) {
    let passes = rows.div_ceil(PASS_ROWS);
    let per = rows.div_ceil(passes);
    for (pass, dst) in dst.chunks_mut(per).enumerate() {
        let first = pass * per;
        let x = &x[first * k..(first + dst.len()) * k];
        match sums {
            #[cfg(target_arch = "x86_64")]
            Sums::Avx512(cpu) => avx512::pass(cpu, (n, k), dst, x, w, add, blocks.clone()),
            #[cfg(test)]
            Sums::Portable => portable::pass((n, k), dst, x, w, add, blocks.clone()),
        }
    }
}

/// Checks a pass's slices against its shape: `dst` holds `rows` (1..=[`PASS_ROWS`])
/// slices of the columns of `blocks`, within `n`; `x` holds `rows × k` values, `w` `k × n`.
fn check_pass(
    (n, k): (usize, usize),
    dst: &[&mut [f32]],
    x: &[f32],
    w: &[f32],
    blocks: &Range<usize>,
) {
    let width = blocks.len() * COLS;
    assert!(
        (1..=PASS_ROWS).contains(&dst.len()) && dst.iter().all(|row| row.len() == width),
        "few_rows: destination of a pass"
    );
    assert!(
        blocks.end * COLS <= n && x.len() >= dst.len() * k && w.len() >= k * n,
        "few_rows: operands of a pass"
    );
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::ops::Range;

    use super::{check_pass, COLS, K_BLOCK};
    use agentmemory_index::cpu::Avx512F;

    /// One pass over the weights for `dst.len()` rows (1..=`PASS_ROWS`): dispatches to the
    /// monomorphised kernel, whose sums stay in registers.
    pub(super) fn pass(
        cpu: Avx512F,
        nk: (usize, usize),
        dst: &mut [&mut [f32]],
        x: &[f32],
        w: &[f32],
        add: bool,
        blocks: Range<usize>,
    ) {
        macro_rules! dispatch {
            ($($r:literal)*) => {
                match dst.len() {
                    // SAFETY: `cpu` proves the CPU has AVX-512F, what `kernel` is
                    // compiled for (it checks the shapes itself).
                    $($r => unsafe { kernel::<$r>(cpu, nk, dst, x, w, add, blocks) },)*
                    _ => unreachable!("1..=PASS_ROWS rows per pass"),
                }
            };
        }
        dispatch!(1 2 3 4 5 6 7 8 9 10 11 12);
    }

    /// `R` rows: for each block of [`K_BLOCK`] inputs, sweep the column blocks, loading
    /// each block's running sums from `dst` (or zeros for the first inputs without `add`),
    /// adding the block's inputs, storing them back; the next block's weights of each
    /// column block are prefetched as it is summed (about 10 % faster with the weights in
    /// memory). `portable::pass` is the same loops in plain code.
    ///
    /// The token proves the CPU has AVX-512F; the shapes are checked here, so the pointer
    /// arithmetic below stays within the slices.
    #[target_feature(enable = "avx512f")]
    fn kernel<const R: usize>(
        _: Avx512F,
        (n, k): (usize, usize),
        dst: &mut [&mut [f32]],
        x: &[f32],
        w: &[f32],
        add: bool,
        blocks: Range<usize>,
    ) {
        use std::arch::x86_64::*;
        check_pass((n, k), dst, x, w, &blocks);
        assert_eq!(dst.len(), R, "few_rows: rows of a pass");
        // Row r's values of the task's first column, `base`.
        let base = blocks.start * COLS;
        let rows: [*mut f32; R] = std::array::from_fn(|r| dst[r].as_mut_ptr());
        let (x, w) = (x.as_ptr(), w.as_ptr());
        let mut k0 = 0;
        while k0 < k {
            let k1 = (k0 + K_BLOCK).min(k);
            for block in blocks.clone() {
                let j = block * COLS;
                let mut lo = [_mm512_setzero_ps(); R];
                let mut hi = [_mm512_setzero_ps(); R];
                if add || k0 > 0 {
                    for r in 0..R {
                        // SAFETY: row r's slice holds the columns of `blocks`, so its
                        // values j - base .. j - base + 32 (checked above).
                        unsafe {
                            lo[r] = _mm512_loadu_ps(rows[r].add(j - base));
                            hi[r] = _mm512_loadu_ps(rows[r].add(j - base + 16));
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
                    // SAFETY: input row kk < k and columns j..j + 32 ≤ n of the `k × n` w
                    // (checked above).
                    let (w_lo, w_hi) = unsafe {
                        let at = w.add(kk * n + j);
                        (_mm512_loadu_ps(at), _mm512_loadu_ps(at.add(16)))
                    };
                    for r in 0..R {
                        // SAFETY: element (r, kk) of the `R × k` x (checked above).
                        let v = _mm512_set1_ps(unsafe { *x.add(r * k + kk) });
                        lo[r] = _mm512_fmadd_ps(v, w_lo, lo[r]);
                        hi[r] = _mm512_fmadd_ps(v, w_hi, hi[r]);
                    }
                }
                for r in 0..R {
                    // SAFETY: as for the loads above.
                    unsafe {
                        _mm512_storeu_ps(rows[r].add(j - base), lo[r]);
                        _mm512_storeu_ps(rows[r].add(j - base + 16), hi[r]);
                    }
                }
            }
            k0 = k1;
        }
    }
}

/// The AVX-512 kernel's twin in plain code, the same loops in the same order (`mul_add`
/// is the fused `vfmadd`), so it returns the same bits: what Miri and the tests run.
#[cfg(test)]
mod portable {
    use std::ops::Range;

    use super::{check_pass, COLS, K_BLOCK, PASS_ROWS};

    pub(super) fn pass(
        (n, k): (usize, usize),
        dst: &mut [&mut [f32]],
        x: &[f32],
        w: &[f32],
        add: bool,
        blocks: Range<usize>,
    ) {
        check_pass((n, k), dst, x, w, &blocks);
        let rows = dst.len();
        let base = blocks.start * COLS;
        let mut k0 = 0;
        while k0 < k {
            let k1 = (k0 + K_BLOCK).min(k);
            for block in blocks.clone() {
                let j = block * COLS;
                let mut sums = [[0f32; COLS]; PASS_ROWS];
                if add || k0 > 0 {
                    for (s, row) in sums.iter_mut().zip(dst.iter()) {
                        s.copy_from_slice(&row[j - base..][..COLS]);
                    }
                }
                for kk in k0..k1 {
                    let weights = &w[kk * n + j..][..COLS];
                    for (r, s) in sums[..rows].iter_mut().enumerate() {
                        let v = x[r * k + kk];
                        for (s, w) in s.iter_mut().zip(weights) {
                            *s = v.mul_add(*w, *s);
                        }
                    }
                }
                for (s, row) in sums.iter().zip(dst.iter_mut()) {
                    row[j - base..][..COLS].copy_from_slice(s);
                }
            }
            k0 = k1;
        }
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

    /// `sums` on every row count of `rows_set`, alone and on 3 threads, set and added,
    /// against the definition; returns the results, in that order, for comparisons.
    fn check(sums: Sums, (k, n): (usize, usize), rows_set: &[usize]) -> Vec<Vec<f32>> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let w = values(k * n, 7);
        let mut results = Vec::new();
        for &rows in rows_set {
            let x = values(rows * k, rows as u32);
            let want = naive(&x, &w, rows, k, n);
            let bias = values(rows * n, 99);
            for parallelism in [Parallelism::None, Parallelism::Rayon(3)] {
                let mut set = vec![f32::NAN; rows * n];
                pool.install(|| run(sums, (rows, n, k), &mut set, &x, &w, false, parallelism));
                let mut added = bias.clone();
                pool.install(|| run(sums, (rows, n, k), &mut added, &x, &w, true, parallelism));
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
                results.push(set);
                results.push(added);
            }
        }
        results
    }

    #[test]
    fn portable_twin_matches_the_definition_alone_and_on_threads() {
        if cfg!(miri) {
            // k past one block of inputs, 3 column blocks (one per thread); one pass,
            // two uneven passes, two full ones.
            check(Sums::Portable, (11, 3 * COLS), &[1, 7, 13, 24]);
        } else {
            // k not a multiple of K_BLOCK, n several column blocks (and more than 3
            // threads get one each).
            let all: Vec<usize> = (1..=MAX_ROWS).collect();
            check(Sums::Portable, (37, 4 * COLS), &all);
        }
        assert!(!fits(MAX_ROWS + 1, COLS) && !fits(1, COLS + 1) && !fits(0, COLS));
        assert!(!applies(MAX_ROWS + 1, COLS) && !applies(1, COLS + 1) && !applies(0, COLS));
    }

    #[test]
    fn the_avx512_kernel_returns_the_bits_of_its_portable_twin() {
        let Some(simd) = simd() else {
            eprintln!("skipped: this CPU has no AVX-512F (the product falls back to gemm)");
            return;
        };
        assert!(applies(1, COLS));
        let (shape, rows_set): ((usize, usize), Vec<usize>) = if cfg!(miri) {
            ((11, 3 * COLS), vec![1, 7, 13, 24])
        } else {
            ((37, 4 * COLS), (1..=MAX_ROWS).collect())
        };
        let got = check(simd, shape, &rows_set);
        let want = check(Sums::Portable, shape, &rows_set);
        for (g, w) in got.iter().zip(&want) {
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(g), bits(w));
        }
        // The public entry point is the SIMD run.
        let (k, n) = shape;
        let (x, w) = (values(2 * k, 3), values(k * n, 4));
        let (mut a, mut b) = (vec![0.0; 2 * n], vec![0.0; 2 * n]);
        product((2, n, k), &mut a, &x, &w, false, Parallelism::None);
        run(
            Sums::Portable,
            (2, n, k),
            &mut b,
            &x,
            &w,
            false,
            Parallelism::None,
        );
        assert_eq!(a, b);
    }
}
