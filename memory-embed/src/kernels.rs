//! The numeric building blocks of the forward pass, over plain `f32` slices: matrix
//! products (the `gemm` crate), layer norm, GELU, softmax and mean pooling.
//!
//! The element-wise loops are written so the compiler vectorises them: no calls into libm
//! in the hot ones, and reductions spread over several accumulators.

use gemm::Parallelism;

/// Defines `fn $portable` over the body (the portable loops, which Miri runs and the tests
/// check the others against), and `fn $name`, which runs the same body compiled for
/// AVX-512, for AVX2 with FMA, or for the baseline: the best the CPU running it has, as the
/// `crate::cpu` tokens prove (the check is a cached load). The loops inside vectorise to
/// the widest registers available; the compiler never fuses or reorders floating-point
/// operations, so every version returns the same bits.
macro_rules! multiversion {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident / $portable:ident($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        #[doc = concat!(
            "The portable loops of [`", stringify!($name), "`] (what it runs on CPUs ",
            "without AVX2), and its twin in Miri and the tests."
        )]
        #[inline(always)]
        $vis fn $portable($($arg: $ty),*) $body

        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                use agentmemory_index::cpu::{Avx2Fma, Avx512F};
                #[target_feature(enable = "avx512f")]
                fn avx512(_: Avx512F, $($arg: $ty),*) {
                    $portable($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn avx2(_: Avx2Fma, $($arg: $ty),*) {
                    $portable($($arg),*)
                }
                if let Some(cpu) = Avx512F::detect() {
                    // SAFETY: `cpu` proves the CPU has the features `avx512` is compiled for.
                    return unsafe { avx512(cpu, $($arg),*) };
                }
                if let Some(cpu) = Avx2Fma::detect() {
                    // SAFETY: `cpu` proves the CPU has the features `avx2` is compiled for.
                    return unsafe { avx2(cpu, $($arg),*) };
                }
            }
            $portable($($arg),*)
        }
    };
}

/// Lanes a reduction is spread over, so it vectorises (floating-point addition is not
/// associative, so the compiler never reorders a single running sum by itself).
const LANES: usize = 16;

/// The sum of `x`, computed over [`LANES`] partial sums.
#[inline(always)]
pub(crate) fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (chunks, rest) = x.as_chunks::<LANES>();
    let tail: f32 = rest.iter().sum();
    for chunk in chunks {
        for (a, v) in acc.iter_mut().zip(chunk) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The sum of squares of `x - shift`, computed over [`LANES`] partial sums.
#[inline(always)]
fn sum_sq_dev(x: &[f32], shift: f32) -> f32 {
    let mut acc = [0f32; LANES];
    let (chunks, rest) = x.as_chunks::<LANES>();
    let tail: f32 = rest.iter().map(|v| (v - shift) * (v - shift)).sum();
    for chunk in chunks {
        for (a, v) in acc.iter_mut().zip(chunk) {
            let d = v - shift;
            *a += d * d;
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// A row-major matrix in a slice: `rows` rows, each `stride` values apart, of which the
/// product uses `cols` starting at `offset`.
#[derive(Clone, Copy)]
pub(crate) struct View {
    pub(crate) offset: usize,
    pub(crate) stride: usize,
}

impl View {
    /// A dense row-major matrix with `stride` columns, starting at the slice's start.
    pub(crate) fn dense(stride: usize) -> Self {
        Self { offset: 0, stride }
    }

    /// The same rows, `by` columns further right.
    pub(crate) fn shifted(self, by: usize) -> Self {
        Self {
            offset: self.offset + by,
            ..self
        }
    }

    /// Whether `rows × cols` values from this view fit in `len` values (computed without
    /// overflow), with a stride a pointer offset can hold.
    fn fits(self, rows: usize, cols: usize, len: usize) -> bool {
        if rows == 0 || cols == 0 {
            return true;
        }
        let end = (rows - 1)
            .checked_mul(self.stride)
            .and_then(|v| v.checked_add(self.offset))
            .and_then(|v| v.checked_add(cols));
        isize::try_from(self.stride).is_ok() && end.is_some_and(|end| end <= len)
    }
}

/// How a product's result lands in its destination.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// `dst = scale × a·b`.
    Set,
    /// `dst += scale × a·b`.
    Add,
}

/// The `m × n` product `scale × a·b` of `a` (`m × k`) and `b` (`k × n`), written or added
/// to `dst` (`m × n`), all row-major views into their slices; `transpose_b` reads `b` as
/// the transpose of the `n × k` matrix it views.
///
/// # Panics
///
/// When a view runs past the end of its slice, or the destination's rows overlap (`n`
/// wider than its stride, so two elements of the product would share a value): a bug in
/// the caller, never bad input.
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul(
    (m, n, k): (usize, usize, usize),
    dst: (&mut [f32], View),
    a: (&[f32], View),
    b: (&[f32], View),
    transpose_b: bool,
    write: Write,
    scale: f32,
    parallelism: Parallelism,
) {
    let (dst, dv) = dst;
    let (a, av) = a;
    let (b, bv) = b;
    assert!(dv.fits(m, n, dst.len()), "matmul: destination too small");
    // gemm writes element (r, c) at r · stride + c: with n > stride, rows would overlap
    // (several tasks of a parallel product writing the same values).
    assert!(
        m <= 1 || n <= dv.stride,
        "matmul: destination rows of {n} values overlap at stride {}",
        dv.stride
    );
    assert!(av.fits(m, k, a.len()), "matmul: left operand too small");
    let b_fits = if transpose_b {
        bv.fits(n, k, b.len())
    } else {
        bv.fits(k, n, b.len())
    };
    assert!(b_fits, "matmul: right operand too small");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if write == Write::Set {
            for row in 0..m {
                let start = dv.offset + row * dv.stride;
                dst[start..start + n].fill(0.0);
            }
        }
        return;
    }
    // Element (r, c) of b: row-major b at r * stride + c; transposed at c * stride + r.
    let (b_rs, b_cs) = if transpose_b {
        (1, bv.stride as isize)
    } else {
        (bv.stride as isize, 1)
    };
    // SAFETY: every element the product reads or writes lies inside its slice (the
    // `fits` checks above, so every offset below stays within its allocation), the
    // strides fit `isize` (also checked by `fits`), the destination's `m × n` elements are
    // distinct values (`n <= stride` when there are several rows), and `dst` is borrowed
    // mutably, so it aliases neither operand, which are only read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr().add(dv.offset),
            1,
            dv.stride as isize,
            write == Write::Add,
            a.as_ptr().add(av.offset),
            1,
            av.stride as isize,
            b.as_ptr().add(bv.offset),
            b_cs,
            b_rs,
            1.0,
            scale,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// One row normalised to zero mean and unit variance, then scaled by `w` and shifted by
/// `b`.
#[inline(always)]
fn norm_row(row: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    let width = w.len();
    let mean = sum(row) / width as f32;
    let var = sum_sq_dev(row, mean) / width as f32;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, w), b) in row.iter_mut().zip(w).zip(b) {
        *v = (*v - mean) * inv * w + b;
    }
}

multiversion! {
    /// Each row of `x` (rows of `w.len()` values) normalised to zero mean and unit
    /// variance, then scaled by `w` and shifted by `b`.
    pub(crate) fn layer_norm / layer_norm_portable(x: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
        for row in x.chunks_exact_mut(w.len()) {
            norm_row(row, w, b, eps);
        }
    }
}

multiversion! {
    /// The residual step after a projection: each row of `x` becomes
    /// `layer_norm(x + y + bias)` (rows of `bias.len()` values), with `w` and `b` the
    /// norm's scale and shift.
    pub(crate) fn add_bias_norm / add_bias_norm_portable(
        x: &mut [f32],
        y: &[f32],
        bias: &[f32],
        w: &[f32],
        b: &[f32],
        eps: f32,
    ) {
        let width = bias.len();
        for (row, add) in x.chunks_exact_mut(width).zip(y.chunks_exact(width)) {
            for ((v, a), c) in row.iter_mut().zip(add).zip(bias) {
                *v += a + c;
            }
            norm_row(row, w, b, eps);
        }
    }
}

/// `x += y` element-wise.
pub(crate) fn add_assign(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// Every row of `x` (rows of `bias.len()` values) set to `bias`.
pub(crate) fn fill_rows(x: &mut [f32], bias: &[f32]) {
    for row in x.chunks_exact_mut(bias.len()) {
        row.copy_from_slice(bias);
    }
}

/// The error function, to about 1e-7 absolute: a rational approximation on [-4, 4] (past
/// which erf is ±1 in `f32`), the one XLA and Eigen use for `f32`. Only multiplications,
/// additions and one division, so loops over it vectorise.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p - 2.101_024e-6;
    p = x2 * p - 5.692_506_4e-5;
    p = x2 * p - 7.349_906_3e-4;
    p = x2 * p - 2.954_6e-3;
    p = x2 * p - 1.609_603_3e-2;
    p *= x;
    let mut q = x2 * -1.456_607_2e-5 - 2.133_740_6e-4;
    q = x2 * q - 1.682_827e-3;
    q = x2 * q - 7.373_329e-3;
    q = x2 * q - 1.426_474e-2;
    p / q
}

multiversion! {
    /// `x + bias` through the exact GELU BERT uses, `x·Φ(x) = x/2·(1 + erf(x/√2))` (not
    /// the tanh approximation), in place, over rows of `bias.len()` values.
    pub(crate) fn bias_gelu / bias_gelu_portable(x: &mut [f32], bias: &[f32]) {
        for row in x.chunks_exact_mut(bias.len()) {
            for (v, b) in row.iter_mut().zip(bias) {
                let z = *v + b;
                *v = 0.5 * z * (1.0 + erf(z * std::f32::consts::FRAC_1_SQRT_2));
            }
        }
    }
}

/// `e^x` for `x ≤ 0`, to about 1 ulp, 0 below -87 (where `f32` runs out of normal
/// numbers; a softmax loses nothing there): `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2`, Cephes' degree-6 polynomial for
/// `e^r`, and `2^n` built from its bits. No libm call, so loops over it vectorise.
#[inline(always)]
pub(crate) fn exp_nonpositive(x: f32) -> f32 {
    let underflows = x < -87.0;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E + 0.5).floor();
    // ln 2 in two parts, so n·ln 2 is subtracted without rounding error.
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let e_r = p * r * r + r + 1.0;
    // n is within -126..=0 here: 2^n is a normal float.
    let e = e_r * f32::from_bits(((n as i32 + 127) as u32) << 23);
    if underflows {
        0.0
    } else {
        e
    }
}

multiversion! {
    /// Each row of `x` (rows of `width` values) replaced by its softmax.
    pub(crate) fn softmax_rows / softmax_rows_portable(x: &mut [f32], width: usize) {
        // Rows are short (a sentence's length): shift them all first, then take the
        // exponentials in one long pass, which fills the vector registers.
        for row in x.chunks_exact_mut(width) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for v in row.iter_mut() {
                *v -= max;
            }
        }
        for v in x.iter_mut() {
            *v = exp_nonpositive(*v);
        }
        for row in x.chunks_exact_mut(width) {
            let inv = 1.0 / sum(row);
            for v in row.iter_mut() {
                *v *= inv;
            }
        }
    }
}

/// The dot product of `a` and `b` (of equal length), over [`LANES`] partial sums.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ac, ar) = a.as_chunks::<LANES>();
    let (bc, br) = b.as_chunks::<LANES>();
    for (x, y) in ac.iter().zip(bc) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

multiversion! {
    /// One attention head of a short sequence, written out instead of two matrix
    /// products (which cost more in set-up than in arithmetic at a few tokens): `rows` holds
    /// the sequence's `len` fused query/key/value rows; `at` is `(stride, q, k, v, d)`: rows
    /// `stride` values apart, the head's query, key and value starting at `q`, `k` and `v`
    /// in each, `d` wide; `scores`
    /// (`len × len`) is scratch; `block` (`len × d`) receives
    /// `softmax(scale · Q Kᵀ) V`, row by row.
    pub(crate) fn short_head / short_head_portable(
        rows: &[f32],
        at: (usize, usize, usize, usize, usize),
        len: usize,
        scale: f32,
        scores: &mut [f32],
        block: &mut [f32],
    ) {
        let (stride, q, k, v, d) = at;
        for (i, row) in scores.chunks_exact_mut(len).enumerate() {
            let query = &rows[i * stride + q..][..d];
            for (j, score) in row.iter_mut().enumerate() {
                *score = scale * dot(query, &rows[j * stride + k..][..d]);
            }
        }
        // The portable body, inlined: compiled for the caller's features.
        softmax_rows_portable(scores, len);
        for (out, weights) in block.chunks_exact_mut(d).zip(scores.chunks_exact(len)) {
            out.fill(0.0);
            for (j, &w) in weights.iter().enumerate() {
                for (o, x) in out.iter_mut().zip(&rows[j * stride + v..][..d]) {
                    *o += w * x;
                }
            }
        }
    }
}

/// The mean of the rows of `x` (rows of `out.len()` values), scaled to unit length (a
/// zero mean stays zero), into `out`.
pub(crate) fn mean_pool_normalised(x: &[f32], out: &mut [f32]) {
    let width = out.len();
    out.fill(0.0);
    let rows = x.len() / width;
    for row in x.chunks_exact(width) {
        add_assign(out, row);
    }
    let inv_rows = 1.0 / rows.max(1) as f32;
    let squares: f32 = out.iter().map(|v| (v * inv_rows) * (v * inv_rows)).sum();
    let inv_norm = inv_rows / squares.sqrt().max(1e-12);
    for v in out.iter_mut() {
        *v *= inv_norm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf to 1e-15 by its Taylor series (|x| < 3) or continued fraction, for the test.
    fn erf_reference(x: f64) -> f64 {
        if x.abs() > 3.0 {
            // erfc by Lentz's continued fraction, good far out.
            let z = x.abs();
            let mut f = z;
            let mut c = z;
            let mut d = 0.0;
            for n in 1..200 {
                let an = n as f64 / 2.0;
                d = 1.0 / (z + an * d);
                c = z + an / c;
                let delta = c * d;
                f *= delta;
                if (delta - 1.0).abs() < 1e-16 {
                    break;
                }
            }
            let erfc = (-z * z).exp() / (f * std::f64::consts::PI.sqrt());
            return x.signum() * (1.0 - erfc);
        }
        let mut term = x;
        let mut total = x;
        for n in 1..200 {
            term *= -x * x / n as f64;
            let add = term / (2 * n + 1) as f64;
            total += add;
            if add.abs() < 1e-17 {
                break;
            }
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn erf_matches_the_series_everywhere() {
        let mut worst = 0f64;
        for i in -6000..=6000 {
            let x = i as f64 / 1000.0;
            let err = (f64::from(erf(x as f32)) - erf_reference(x)).abs();
            worst = worst.max(err);
        }
        assert!(worst < 1e-6, "worst erf error {worst:e}");
        assert_eq!(erf(f32::INFINITY), erf(4.0));
    }

    #[test]
    fn layer_norm_and_pooling_by_hand() {
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut x, &[1.0, 1.0], &[0.0, 10.0], 0.0);
        assert_eq!(x, vec![-1.0, 11.0, -1.0, 11.0]);

        let mut out = [0.0; 2];
        mean_pool_normalised(&[3.0, 0.0, 3.0, 8.0], &mut out);
        assert!((out[0] - 0.6).abs() < 1e-6 && (out[1] - 0.8).abs() < 1e-6);
        mean_pool_normalised(&[0.0, 0.0], &mut out);
        assert_eq!(out, [0.0, 0.0]);
    }

    #[test]
    fn fused_kernels_match_their_parts() {
        let mut x = vec![-3.0, -0.5, 0.0, 0.7, 2.0, 5.0];
        bias_gelu(&mut x, &[0.0, 0.5, 1.0]);
        let exact = |z: f64| 0.5 * z * (1.0 + erf_reference(z / std::f64::consts::SQRT_2));
        for (got, z) in x.iter().zip([-3.0, 0.0, 1.0, 0.7, 2.5, 6.0]) {
            assert!(
                (f64::from(*got) - exact(z)).abs() < 1e-6,
                "gelu({z}) = {got}"
            );
        }

        let mut fused = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let (w, b) = ([1.0, 2.0, 0.5], [0.0, 1.0, -1.0]);
        add_bias_norm(&mut fused, &[1.0; 6], &[0.0, 1.0, 2.0], &w, &b, 1e-12);
        let mut plain = vec![2.0, 4.0, 6.0, 5.0, 7.0, 9.0];
        layer_norm(&mut plain, &w, &b, 1e-12);
        for (f, p) in fused.iter().zip(&plain) {
            assert!((f - p).abs() < 1e-6, "{fused:?} vs {plain:?}");
        }
    }

    #[test]
    fn exp_matches_libm_on_the_softmax_range() {
        let mut worst = 0f64;
        for i in 0..=100_000 {
            let x = -90.0 * i as f32 / 100_000.0;
            let exact = f64::from(x).exp();
            let got = f64::from(exp_nonpositive(x));
            if exact > 1e-37 {
                worst = worst.max((got - exact).abs() / exact);
            } else {
                assert!(got < 1e-37, "exp({x}) = {got}");
            }
            if x < -87.0 {
                assert_eq!(got, 0.0, "exp({x})");
            }
        }
        assert!(worst < 5e-7, "worst relative error {worst:e}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    fn softmax_rows_sum_to_one() {
        let mut x = vec![0.0, 0.0, 1000.0, 0.0];
        softmax_rows(&mut x, 2);
        assert_eq!(x, vec![0.5, 0.5, 1.0, 0.0]);
    }

    /// `len` values in -2..2, spread by a multiplicative hash of `seed`.
    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len as u32)
            .map(|i| {
                ((i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) % 4001) as f32 / 1000.0
                    - 2.0
            })
            .collect()
    }

    /// Each multiversioned kernel, run as dispatched (AVX-512 or AVX2 + FMA on CPUs with
    /// them), returns the bits of its portable twin; under Miri this runs the twins' logic.
    #[test]
    fn multiversioned_kernels_equal_their_portable_twins() {
        // Widths with and without a tail past the 16 lanes of a reduction.
        let shapes: &[(usize, usize)] = if cfg!(miri) {
            &[(3, 5), (2, 19)]
        } else {
            &[(1, 1), (3, 5), (4, 16), (7, 37), (5, 384)]
        };
        let same = |a: &[f32], b: &[f32], what: &str| {
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(a), bits(b), "{what}");
        };
        for &(rows, width) in shapes {
            let what = format!("{rows} x {width}");
            let x = values(rows * width, 1);
            let (y, bias) = (values(rows * width, 2), values(width, 3));
            let (w, b) = (values(width, 4), values(width, 5));

            let (mut got, mut want) = (x.clone(), x.clone());
            layer_norm(&mut got, &w, &b, 1e-12);
            layer_norm_portable(&mut want, &w, &b, 1e-12);
            same(&got, &want, &format!("layer_norm {what}"));

            let (mut got, mut want) = (x.clone(), x.clone());
            add_bias_norm(&mut got, &y, &bias, &w, &b, 1e-12);
            add_bias_norm_portable(&mut want, &y, &bias, &w, &b, 1e-12);
            same(&got, &want, &format!("add_bias_norm {what}"));

            let (mut got, mut want) = (x.clone(), x.clone());
            bias_gelu(&mut got, &bias);
            bias_gelu_portable(&mut want, &bias);
            same(&got, &want, &format!("bias_gelu {what}"));

            let (mut got, mut want) = (x.clone(), x.clone());
            softmax_rows(&mut got, width);
            softmax_rows_portable(&mut want, width);
            same(&got, &want, &format!("softmax_rows {what}"));

            // `rows` tokens of fused q/k/v rows, 3 heads of `width` values each.
            let stride = 3 * width;
            let fused = values(rows * stride, 6);
            let at = (stride, 0, width, 2 * width, width);
            let (mut scores, mut block) = (vec![0.0; rows * rows], vec![0.0; rows * width]);
            let (mut scores2, mut block2) = (scores.clone(), block.clone());
            short_head(&fused, at, rows, 0.125, &mut scores, &mut block);
            short_head_portable(&fused, at, rows, 0.125, &mut scores2, &mut block2);
            same(&block, &block2, &format!("short_head {what}"));
            same(&scores, &scores2, &format!("short_head scores {what}"));
        }
    }

    #[test]
    fn matmul_plain_transposed_and_strided() {
        // a = [[1, 2], [3, 4]], b = [[5, 6], [7, 8]].
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [5.0, 6.0, 7.0, 8.0];
        let mut dst = [1.0; 4];
        let none = Parallelism::None;
        matmul(
            (2, 2, 2),
            (&mut dst, View::dense(2)),
            (&a, View::dense(2)),
            (&b, View::dense(2)),
            false,
            Write::Add,
            1.0,
            none,
        );
        assert_eq!(dst, [20.0, 23.0, 44.0, 51.0]);
        matmul(
            (2, 2, 2),
            (&mut dst, View::dense(2)),
            (&a, View::dense(2)),
            (&b, View::dense(2)),
            true,
            Write::Set,
            0.5,
            none,
        );
        assert_eq!(dst, [8.5, 11.5, 19.5, 26.5]);
        // Column 1 of a (2 × 1) times row 0 of b (1 × 2), into the right half of a 2 × 3.
        let mut wide = [0.0; 6];
        matmul(
            (2, 2, 1),
            (&mut wide, View::dense(3).shifted(1)),
            (&a, View::dense(2).shifted(1)),
            (&b, View::dense(2)),
            false,
            Write::Set,
            1.0,
            none,
        );
        assert_eq!(wide, [0.0, 10.0, 12.0, 0.0, 20.0, 24.0]);
    }

    #[test]
    #[should_panic(expected = "destination rows of 2 values overlap at stride 1")]
    fn matmul_refuses_overlapping_destination_rows() {
        // A 2 × 2 product into rows 1 value apart: in bounds (3 values), but element
        // (0, 1) and (1, 0) would be the same value.
        let a = [1.0; 4];
        let mut dst = [0.0; 3];
        matmul(
            (2, 2, 2),
            (&mut dst, View::dense(1)),
            (&a, View::dense(2)),
            (&a, View::dense(2)),
            false,
            Write::Set,
            1.0,
            Parallelism::None,
        );
    }

    #[test]
    fn views_that_overflow_do_not_fit() {
        let huge = View {
            offset: 2,
            stride: usize::MAX / 2,
        };
        assert!(!huge.fits(3, 1, 8));
        assert!(!View::dense(usize::MAX).fits(1, 1, 8), "stride past isize");
        assert!(View::dense(4).fits(2, 4, 8) && !View::dense(4).fits(2, 4, 7));
        assert!(View::dense(4).shifted(3).fits(0, 9, 0));
    }
}
