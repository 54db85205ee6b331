//! The int8 embedder's weights: BERT's dense layers quantised to 8-bit integers, and their
//! product with activations quantised on the fly.
//!
//! Weights: symmetric, one scale per output column (`code = round(w / scale)`,
//! `scale = max |w| / 127`), packed for [`kernels_i8`](super::kernels_i8). Activations:
//! asymmetric, one scale and zero point per token row, computed at each product
//! (`code = round(x / scale) + zero` in `0..=255`, the range always holding 0), which
//! keeps the resolution where a row's values are (GELU outputs are nearly all positive).
//! Biases, layer norms, attention and pooling stay in `f32`.

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
use crate::error::{EmbedError, Result};

/// One dense layer's weights in 8 bits, packed for the integer kernels.
pub(crate) struct QuantizedLinear {
    inputs: usize,
    outputs: usize,
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
    /// quantised.
    pub(crate) fn new(w: &[f32], inputs: usize, outputs: usize) -> Result<Self, String> {
        if inputs == 0 || outputs == 0 || w.len() != inputs * outputs {
            return Err(format!(
                "a {inputs} × {outputs} layer cannot hold {} weights",
                w.len()
            ));
        }
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
            let column = || (0..inputs).map(|i| w[i * outputs + c]);
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
        let a = codes.quantize(x, rows, self.inputs, self.k);
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
    /// `x` (`rows × inputs`) quantised, one scale and zero point per row, into rows of `k`
    /// codes (the padding is 0; it meets zero weights).
    fn quantize(&mut self, x: &[f32], rows: usize, inputs: usize, k: usize) -> Rows<'_> {
        if self.codes.capacity() > KEEP && rows * k <= KEEP {
            *self = Self::default();
        }
        self.codes.clear();
        self.codes.resize(rows * k, 0);
        self.scale.clear();
        self.zero.clear();
        for (row, codes) in x.chunks_exact(inputs).zip(self.codes.chunks_exact_mut(k)) {
            let (scale, zero) = quantize_row(row, &mut codes[..inputs]);
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

/// One row's codes (`value ≈ scale · (code − zero)`), its scale and zero point. The range
/// spans the row's minimum and maximum and always holds 0.
#[inline]
fn quantize_row(row: &[f32], codes: &mut [u8]) -> (f32, i32) {
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for &v in row {
        lo = lo.min(v);
        hi = hi.max(v);
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
    for (c, &v) in codes.iter_mut().zip(row) {
        *c = (v * inv + shift).clamp(0.0, 255.0) as u8;
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
                let q = |(w, inputs): (&[f32], usize)| {
                    QuantizedLinear::new(w, inputs, w.len() / inputs.max(1))
                };
                Ok(Int8Layer {
                    qkv: q(qkv)?,
                    attn_out: q(attn_out)?,
                    up: q(up)?,
                    down: q(down)?,
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
        EmbedError::invalid("precision", format!("int8 cannot run this model: {e}"))
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
        let (scale, zero) = quantize_row(&row, &mut codes);
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
        let (_, zero) = quantize_row(&[0.5, 2.0], &mut codes[..2]);
        assert_eq!(zero, 0);
        let (scale, zero) = quantize_row(&[0.0; 4], &mut codes[..4]);
        assert_eq!((scale, zero, &codes[..4]), (1.0, 0, &[0u8; 4][..]));
    }

    #[test]
    fn the_int8_product_is_close_to_the_f32_one_set_added_and_split() {
        let (rows, inputs, outputs) = (9, 22, 70); // ragged: padding in k and in columns
        let mut r = Values(4);
        let w = r.vec(inputs * outputs);
        let x = r.vec(rows * inputs);
        let layer = QuantizedLinear::new(&w, inputs, outputs).unwrap();
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

    #[test]
    fn bad_layers_are_refused() {
        assert!(QuantizedLinear::new(&[1.0; 5], 2, 3).is_err());
        assert!(QuantizedLinear::new(&[1.0, f32::INFINITY], 1, 2).is_err());
        assert!(
            QuantizedLinear::new(&[0.0; 4], 2, 2).is_ok(),
            "zero weights are fine"
        );
    }
}
