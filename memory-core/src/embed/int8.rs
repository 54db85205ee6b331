//! The int8 embedder's weights: BERT's dense layers quantised to 8-bit integers, and their
//! product with activations quantised on the fly.
//!
//! Weights: symmetric, one scale per output column (`code = round(w / scale)`,
//! `scale = max |w| / 127`), packed for [`kernels_i8`](super::kernels_i8). Activations:
//! asymmetric, one scale and zero point per token row, computed at each product
//! (`code = round(x / scale) + zero` in `0..=255`, the range always holding 0), which
//! keeps the resolution where a row's values are (GELU outputs are nearly all positive).
//! Biases, layer norms, attention and pooling stay in `f32`.
//!
//! A layer whose input comes out of a layer norm is *smoothed* first (SmoothQuant, Xiao et
//! al. 2023, with its default α = 0.5): input channel `j` is divided by
//! `s_j = √(a_j / max_c |w_jc|)` and weight row `j` multiplied by it, which leaves the
//! product unchanged but moves the range of the few channels a norm makes large (its
//! scale and shift, `a_j = |γ_j| + |β_j|`, bound them, with no calibration data) into the
//! weights, so one outlier channel no longer coarsens the codes of a whole token. On
//! all-MiniLM-L6-v2 this halves the distance to the `f32` vectors.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use gemm::Parallelism;
use parking_lot::Mutex;
use rayon::prelude::*;

use super::bert::Bert;
use super::files::LoadedModel;
use super::kernels::Write;
use super::kernels_i8::{self, Cols, Out, Rows, GROUP, MAX_K};
use crate::error::{MemoryError, Result};

/// A dense layer as the encoder holds it, for [`Int8Weights::quantize`].
pub(crate) struct Dense<'a> {
    /// `inputs × outputs`, input-major.
    w: &'a [f32],
    inputs: usize,
    /// The scale and shift of the layer norm the layer's input comes out of, if any.
    norm: Option<(&'a [f32], &'a [f32])>,
}

impl<'a> Dense<'a> {
    pub(crate) fn new(w: &'a [f32], inputs: usize, norm: Option<(&'a [f32], &'a [f32])>) -> Self {
        Self { w, inputs, norm }
    }

    /// The layer quantised, smoothed when its input comes out of a layer norm.
    fn quantize(&self) -> Result<QuantizedLinear, String> {
        let outputs = self.w.len() / self.inputs.max(1);
        let smooth = self
            .norm
            .map(|(scale, shift)| smoothing(self.w, self.inputs, outputs, scale, shift));
        QuantizedLinear::new(self.w, self.inputs, outputs, smooth.as_deref())
    }
}

/// SmoothQuant's factors with α = 0.5: `s_j = √(a_j / max_c |w_jc|)`, with the
/// activation bound `a_j = |scale_j| + |shift_j|` of a layer norm's output; 1 where either
/// side is 0 or not finite.
fn smoothing(w: &[f32], inputs: usize, outputs: usize, scale: &[f32], shift: &[f32]) -> Vec<f32> {
    (0..inputs)
        .map(|j| {
            let a = scale.get(j).map_or(0.0, |g| g.abs()) + shift.get(j).map_or(0.0, |b| b.abs());
            let row = &w[j * outputs..(j + 1) * outputs];
            let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let s = (a / max).sqrt();
            if s.is_finite() && s > 0.0 {
                s
            } else {
                1.0
            }
        })
        .collect()
}

/// One dense layer's weights in 8 bits, packed for the integer kernels.
pub(crate) struct QuantizedLinear {
    inputs: usize,
    outputs: usize,
    /// Per input channel, the factor activations are multiplied by before they are
    /// quantised (`1 / s_j` of the smoothing; all 1 when not smoothed).
    unsmooth: Vec<f32>,
    /// `inputs` rounded up to a multiple of 4 (the kernels step 4 codes at a time).
    k: usize,
    packed: Vec<i8>,
    /// Per output column, padded to whole groups.
    scale: Vec<f32>,
    /// Per output column, the sum of its codes, padded to whole groups.
    sum: Vec<i32>,
}

impl QuantizedLinear {
    /// The weights `w` (`inputs × outputs`, input-major, as [`Bert`] stores them),
    /// quantised, each input's row multiplied by `smooth[j]` first when given (and the
    /// activations divided by it at each product).
    pub(crate) fn new(
        w: &[f32],
        inputs: usize,
        outputs: usize,
        smooth: Option<&[f32]>,
    ) -> Result<Self, String> {
        if inputs == 0 || outputs == 0 || w.len() != inputs * outputs {
            return Err(format!(
                "a {inputs} × {outputs} layer cannot hold {} weights",
                w.len()
            ));
        }
        let smooth = smooth.map_or_else(|| vec![1.0; inputs], <[f32]>::to_vec);
        if smooth.len() != inputs || smooth.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return Err("smoothing factors must be positive, one per input".into());
        }
        let w = |i: usize, c: usize| w[i * outputs + c] * smooth[i];
        let k = inputs.next_multiple_of(4);
        if k > MAX_K {
            return Err(format!(
                "a layer of {inputs} inputs is too wide for int8 products (at most {MAX_K})"
            ));
        }
        let groups = outputs.div_ceil(GROUP);
        let mut packed = vec![0i8; groups * GROUP * k];
        let mut scale = vec![0.0f32; groups * GROUP];
        let mut sum = vec![0i32; groups * GROUP];
        for c in 0..outputs {
            let column = || (0..inputs).map(|i| w(i, c));
            let max = column().fold(0.0f32, |m, v| m.max(v.abs()));
            if !max.is_finite() {
                return Err(format!(
                    "output {c} of a layer has a weight that is not finite"
                ));
            }
            // An all-zero column keeps codes 0 whatever its scale.
            let s = if max > 0.0 { max / 127.0 } else { 1.0 };
            scale[c] = s;
            let at = c / GROUP * GROUP * k + c % GROUP * 4;
            for (i, v) in column().enumerate() {
                let code = (v / s).round().clamp(-127.0, 127.0) as i8;
                packed[at + i / 4 * GROUP * 4 + i % 4] = code;
                sum[c] += i32::from(code);
            }
        }
        Ok(Self {
            inputs,
            outputs,
            unsmooth: smooth.iter().map(|s| 1.0 / s).collect(),
            k,
            packed,
            scale,
            sum,
        })
    }

    /// `out = x · W` (or `out += x · W`) over `rows` rows of `x` (`rows × inputs`) into
    /// `out` (`rows × outputs`), through 8-bit codes. `parallelism` splits the output
    /// columns over the pool.
    pub(crate) fn product(
        &self,
        x: &[f32],
        out: &mut [f32],
        write: Write,
        rows: usize,
        parallelism: Parallelism,
    ) {
        assert!(
            x.len() == rows * self.inputs && out.len() == rows * self.outputs,
            "int8 product: {rows} rows of {} inputs and {} outputs, got {} and {} values",
            self.inputs,
            self.outputs,
            x.len(),
            out.len()
        );
        if rows == 0 {
            return;
        }
        ACTIVATIONS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut codes) => self.product_with(&mut codes, x, out, write, rows, parallelism),
            // This thread is already inside a product (it picked up other work while
            // waiting on its own parallel tasks): use fresh buffers.
            Err(_) => self.product_with(
                &mut Activations::default(),
                x,
                out,
                write,
                rows,
                parallelism,
            ),
        });
    }

    fn product_with(
        &self,
        codes: &mut Activations,
        x: &[f32],
        out: &mut [f32],
        write: Write,
        rows: usize,
        parallelism: Parallelism,
    ) {
        let a = codes.quantize(x, rows, &self.unsmooth, self.k);
        let cols = Cols {
            packed: &self.packed,
            k: self.k,
            n: self.outputs,
            scale: &self.scale,
            sum: &self.sum,
        };
        let kernel = kernels_i8::kernel();
        let groups = cols.groups();
        let tasks = match parallelism {
            Parallelism::Rayon(threads) => threads.min(groups),
            _ => 1,
        };
        if tasks <= 1 {
            kernel.gemm(
                a,
                cols,
                &mut Out {
                    data: out,
                    stride: self.outputs,
                    groups: 0..groups,
                    write,
                },
            );
            return;
        }
        // Few rows (a single query): split the columns, each task into a strip of its own,
        // then copied (or added) into place.
        let per_task = groups.div_ceil(tasks);
        let strips: Vec<(usize, Vec<f32>)> = (0..groups)
            .step_by(per_task)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|g0| {
                let g1 = (g0 + per_task).min(groups);
                let width = self.outputs.min(g1 * GROUP) - g0 * GROUP;
                let mut strip = vec![0.0; rows * width];
                kernel.gemm(
                    a,
                    cols,
                    &mut Out {
                        data: &mut strip,
                        stride: width,
                        groups: g0..g1,
                        write: Write::Set,
                    },
                );
                (g0 * GROUP, strip)
            })
            .collect();
        for (c0, strip) in strips {
            let width = strip.len() / rows;
            for (row, values) in out
                .chunks_exact_mut(self.outputs)
                .zip(strip.chunks_exact(width))
            {
                let dst = &mut row[c0..c0 + width];
                match write {
                    Write::Set => dst.copy_from_slice(values),
                    Write::Add => dst.iter_mut().zip(values).for_each(|(d, v)| *d += v),
                }
            }
        }
    }
}

/// Activation codes and their per-row terms, kept by each thread between products.
#[derive(Default)]
struct Activations {
    codes: Vec<u8>,
    scale: Vec<f32>,
    zero: Vec<i32>,
}

/// What a thread keeps between passes, in bytes of codes: a pass over more frees them.
const KEEP: usize = 8 << 20;

impl Activations {
    /// `x` (`rows × inputs`, `inputs` the length of `unsmooth`), each value multiplied
    /// by its channel's `unsmooth` factor, quantised, one scale and zero point per row,
    /// into rows of `k` codes (the padding is 0; it meets zero weights).
    fn quantize(&mut self, x: &[f32], rows: usize, unsmooth: &[f32], k: usize) -> Rows<'_> {
        let inputs = unsmooth.len();
        if self.codes.capacity() > KEEP && rows * k <= KEEP {
            *self = Self::default();
        }
        self.codes.clear();
        self.codes.resize(rows * k, 0);
        self.scale.clear();
        self.zero.clear();
        for (row, codes) in x.chunks_exact(inputs).zip(self.codes.chunks_exact_mut(k)) {
            let (scale, zero) = quantize_row(row, unsmooth, &mut codes[..inputs]);
            self.scale.push(scale);
            self.zero.push(zero);
        }
        Rows {
            codes: &self.codes,
            k,
            scale: &self.scale,
            zero: &self.zero,
        }
    }
}

/// The codes of one row multiplied by `unsmooth` (`value · unsmooth ≈ scale · (code −
/// zero)`), its scale and zero point. The range spans the products' minimum and maximum
/// and always holds 0.
#[inline]
fn quantize_row(row: &[f32], unsmooth: &[f32], codes: &mut [u8]) -> (f32, i32) {
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for (&v, &u) in row.iter().zip(unsmooth) {
        lo = lo.min(v * u);
        hi = hi.max(v * u);
    }
    let scale = (hi - lo) / 255.0;
    if !(scale > 0.0 && scale.is_finite()) {
        // All zeros (or not finite, which no layer norm produces): every code is 0.
        codes.fill(0);
        return (if scale > 0.0 { scale } else { 1.0 }, 0);
    }
    let inv = 1.0 / scale;
    // Both in 0..=255 as lo ≤ 0 ≤ hi; rounding by adding one half and truncating (the
    // value is non-negative), which vectorises where `round` would call libm.
    let zero = ((-lo * inv + 0.5) as i32).min(255);
    let shift = zero as f32 + 0.5;
    for ((c, &v), &u) in codes.iter_mut().zip(row).zip(unsmooth) {
        *c = ((v * u) * inv + shift).clamp(0.0, 255.0) as u8;
    }
    (scale, zero)
}

thread_local! {
    static ACTIVATIONS: RefCell<Activations> = RefCell::default();
}

/// One encoder layer's dense layers in 8 bits.
pub(crate) struct Int8Layer {
    pub(crate) qkv: QuantizedLinear,
    pub(crate) attn_out: QuantizedLinear,
    pub(crate) up: QuantizedLinear,
    pub(crate) down: QuantizedLinear,
}

/// Every layer of an encoder in 8 bits; the rest of the network is [`Bert`]'s.
pub(crate) struct Int8Weights {
    pub(crate) layers: Vec<Int8Layer>,
}

impl Int8Weights {
    /// `bert`'s dense layers, quantised.
    pub(crate) fn quantize(bert: &Bert) -> Result<Self, String> {
        let layers = bert
            .dense_layers()
            .into_iter()
            .map(|[qkv, attn_out, up, down]| -> Result<Int8Layer, String> {
                Ok(Int8Layer {
                    qkv: qkv.quantize()?,
                    attn_out: attn_out.quantize()?,
                    up: up.quantize()?,
                    down: down.quantize()?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { layers })
    }
}

/// The quantised weights of `model`, made once per process and model directory, as the
/// model itself is.
pub(crate) fn quantized_shared(model: &LoadedModel) -> Result<Arc<Int8Weights>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Int8Weights>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock();
    if let Some(weights) = cache.get(&model.dir) {
        return Ok(Arc::clone(weights));
    }
    let weights = Int8Weights::quantize(&model.bert).map_err(|e| {
        MemoryError::invalid("precision", format!("int8 cannot run this model: {e}"))
    })?;
    tracing::debug!(
        dir = %model.dir.display(),
        kernel = kernels_i8::kernel().name(),
        "dense layers quantised to int8"
    );
    let weights = Arc::new(weights);
    cache.insert(model.dir.clone(), Arc::clone(&weights));
    Ok(weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator of values in `[-1, 1)`.
    struct Values(u64);

    impl Values {
        fn next(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        }

        fn vec(&mut self, len: usize) -> Vec<f32> {
            (0..len).map(|_| self.next()).collect()
        }
    }

    #[test]
    fn rows_quantize_within_half_a_step_and_keep_zero_exact() {
        let row = [-0.7, 0.0, 0.25, 3.1, -0.01, 1.5];
        let mut codes = [0u8; 6];
        let (scale, zero) = quantize_row(&row, &[1.0; 6], &mut codes);
        assert!((scale - 3.8 / 255.0).abs() < 1e-7);
        assert_eq!(codes[1] as i32, zero, "0 is a code");
        for (&v, &c) in row.iter().zip(&codes) {
            let back = scale * (i32::from(c) - zero) as f32;
            assert!(
                (back - v).abs() <= scale * 0.5 + 1e-6,
                "{v} came back as {back}"
            );
        }
        assert_eq!((codes[0], codes[3]), (0, 255), "the ends of the range");

        // Only positive values: zero point 0. All zeros: codes 0.
        let (_, zero) = quantize_row(&[0.5, 2.0], &[1.0; 2], &mut codes[..2]);
        assert_eq!(zero, 0);
        let (scale, zero) = quantize_row(&[0.0; 4], &[1.0; 4], &mut codes[..4]);
        assert_eq!((scale, zero, &codes[..4]), (1.0, 0, &[0u8; 4][..]));
    }

    #[test]
    fn the_int8_product_is_close_to_the_f32_one_set_added_and_split() {
        let (rows, inputs, outputs) = (9, 22, 70); // ragged: padding in k and in columns
        let mut r = Values(4);
        let w = r.vec(inputs * outputs);
        let x = r.vec(rows * inputs);
        let layer = QuantizedLinear::new(&w, inputs, outputs, None).unwrap();
        let exact: Vec<f32> = (0..rows * outputs)
            .map(|i| {
                let (row, c) = (i / outputs, i % outputs);
                (0..inputs)
                    .map(|j| x[row * inputs + j] * w[j * outputs + c])
                    .sum()
            })
            .collect();
        let mut set = vec![f32::NAN; rows * outputs];
        layer.product(&x, &mut set, Write::Set, rows, Parallelism::None);
        let worst = set
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        // Each of the 22 terms is off by at most half a step of each factor's scale.
        assert!(worst < 0.05, "worst error {worst}");

        let mut added = vec![1.0; rows * outputs];
        layer.product(&x, &mut added, Write::Add, rows, Parallelism::None);
        for (a, s) in added.iter().zip(&set) {
            assert_eq!(*a, 1.0 + s);
        }

        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut split = vec![f32::NAN; rows * outputs];
        pool.install(|| layer.product(&x, &mut split, Write::Set, rows, Parallelism::Rayon(3)));
        assert_eq!(split, set, "splitting the columns changes nothing");
    }

    /// The largest error of `layer`'s product against the exact one.
    fn worst_error(layer: &QuantizedLinear, x: &[f32], w: &[f32], rows: usize) -> f32 {
        let (inputs, outputs) = (layer.inputs, layer.outputs);
        let mut got = vec![0.0; rows * outputs];
        layer.product(x, &mut got, Write::Set, rows, Parallelism::None);
        (0..rows * outputs)
            .map(|i| {
                let (row, c) = (i / outputs, i % outputs);
                let exact: f32 = (0..inputs)
                    .map(|j| x[row * inputs + j] * w[j * outputs + c])
                    .sum();
                (got[i] - exact).abs()
            })
            .fold(0.0, f32::max)
    }

    #[test]
    fn smoothing_an_outlier_channel_out_of_a_norm_cuts_the_error() {
        // A layer norm whose scale makes channel 3 forty times the others, as BERT's do
        // for a few channels: its values set every token's step without smoothing.
        let (rows, inputs, outputs) = (12, 32, 48);
        let mut r = Values(8);
        let mut gamma = vec![1.0; inputs];
        gamma[3] = 40.0;
        let beta = vec![0.0; inputs];
        let x: Vec<f32> = r
            .vec(rows * inputs)
            .iter()
            .enumerate()
            .map(|(i, v)| v * gamma[i % inputs])
            .collect();
        let w = r.vec(inputs * outputs);
        let plain = QuantizedLinear::new(&w, inputs, outputs, None).unwrap();
        let smoothed = Dense::new(&w, inputs, Some((&gamma, &beta)))
            .quantize()
            .unwrap();
        assert!(
            smoothed.unsmooth[3] < smoothed.unsmooth[0],
            "channel 3 is scaled down"
        );
        let (before, after) = (
            worst_error(&plain, &x, &w, rows),
            worst_error(&smoothed, &x, &w, rows),
        );
        assert!(
            after < before / 2.0,
            "error {before} without smoothing, {after} with"
        );
        // Degenerate norms (zero scale and shift) leave a channel alone.
        let flat = smoothing(&w, inputs, outputs, &vec![0.0; inputs], &beta);
        assert!(flat.iter().all(|&s| s == 1.0));
    }

    #[test]
    fn bad_layers_are_refused() {
        assert!(QuantizedLinear::new(&[1.0; 4], 2, 2, Some(&[1.0, 0.0])).is_err());
        assert!(QuantizedLinear::new(&[1.0; 5], 2, 3, None).is_err());
        assert!(QuantizedLinear::new(&[1.0, f32::INFINITY], 1, 2, None).is_err());
        assert!(
            QuantizedLinear::new(&[0.0; 4], 2, 2, None).is_ok(),
            "zero weights are fine"
        );
    }
}
