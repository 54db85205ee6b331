//! The BERT encoder behind all-MiniLM-L6-v2, written out over plain `f32` buffers.
//!
//! A batch runs packed: the token rows of all its sequences are stacked with no padding,
//! so every dense layer is one matrix product over exactly the real tokens, and attention
//! runs per sequence and head. Query, key and value projections are fused into one
//! product; weights are stored transposed (input-major) so the products stream them
//! without repacking; the buffers of a forward pass are kept per thread and reused.
//!
//! The weights live in one buffer in their packed form ([`layout`](super::layout)):
//! [`pack`] converts a safetensors file to it, and [`Bert::over`] runs on it, whether
//! just packed or mapped from a packed-weights file.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use gemm::Parallelism;
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use super::few_rows;
use super::int8::{Int8Layer, Int8Weights, QuantizedLinear};
use super::kernels::{self, matmul, View, Write};
use super::layout::{Layer, Shape, Weights};
use super::tensor::{Buffer, Tensor};

/// The parts of a BERT `config.json` the encoder reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab_size")]
    pub(crate) type_vocab_size: usize,
    #[serde(default = "default_layer_norm_eps")]
    pub(crate) layer_norm_eps: f64,
    #[serde(default = "default_hidden_act")]
    pub(crate) hidden_act: String,
    #[serde(default = "default_position_embedding_type")]
    pub(crate) position_embedding_type: String,
}

fn default_type_vocab_size() -> usize {
    2
}
fn default_layer_norm_eps() -> f64 {
    1e-12
}
fn default_hidden_act() -> String {
    "gelu".into()
}
fn default_position_embedding_type() -> String {
    "absolute".into()
}

impl Config {
    /// The sizes that place the encoder's tensors in their packed form.
    pub(crate) fn shape(&self) -> Shape {
        Shape {
            vocab: self.vocab_size,
            hidden: self.hidden_size,
            layers: self.num_hidden_layers,
            intermediate: self.intermediate_size,
            max_positions: self.max_position_embeddings,
        }
    }

    /// Why this encoder cannot run the network the configuration describes, if it cannot.
    pub(crate) fn unsupported(&self) -> Option<String> {
        if self.hidden_size == 0
            || self.num_attention_heads == 0
            || self.intermediate_size == 0
            || self.type_vocab_size == 0
            || self.max_position_embeddings < 3
        {
            return Some(format!(
                "hidden_size {}, num_attention_heads {}, intermediate_size {}, \
                 type_vocab_size {} and max_position_embeddings {} cannot make embeddings",
                self.hidden_size,
                self.num_attention_heads,
                self.intermediate_size,
                self.type_vocab_size,
                self.max_position_embeddings
            ));
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return Some(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if self.hidden_act != "gelu" {
            return Some(format!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                self.hidden_act
            ));
        }
        if self.position_embedding_type != "absolute" {
            return Some(format!(
                "position_embedding_type {:?} is not supported (only \"absolute\")",
                self.position_embedding_type
            ));
        }
        None
    }
}

/// The encoder: its sizes and weights, immutable once loaded.
pub(crate) struct Bert {
    hidden: usize,
    heads: usize,
    intermediate: usize,
    vocab: usize,
    max_positions: usize,
    eps: f32,
    w: Weights<Tensor>,
}

/// The tensors of a safetensors file, by name, with or without a `bert.` prefix.
struct Tensors<'a> {
    file: SafeTensors<'a>,
    prefix: &'static str,
}

impl Tensors<'_> {
    /// The `f32` values of tensor `name`, checked to have `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .file
            .tensor(&full)
            .map_err(|_| format!("has no tensor {full}"))?;
        if view.shape() != shape {
            return Err(format!(
                "tensor {full} has shape {:?}, the configuration needs {shape:?}",
                view.shape()
            ));
        }
        if view.dtype() != Dtype::F32 {
            return Err(format!(
                "tensor {full} is {:?}, only F32 is supported",
                view.dtype()
            ));
        }
        Ok(view
            .data()
            .as_chunks::<4>()
            .0
            .iter()
            .map(|b| f32::from_le_bytes(*b))
            .collect())
    }
}

/// A safetensors file's tensors being copied into their places in the packed form.
struct Packing<'a, 'f> {
    from: Tensors<'f>,
    into: &'a mut [f32],
}

impl Packing<'_, '_> {
    /// `values` at `at`, which the layout sized for them.
    fn put(&mut self, at: &Range<usize>, values: &[f32]) -> Result<(), String> {
        let place = &mut self.into[at.clone()];
        if place.len() != values.len() {
            return Err(format!(
                "{} values where the layout has {} (a bug)",
                values.len(),
                place.len()
            ));
        }
        place.copy_from_slice(values);
        Ok(())
    }

    /// Tensor `name`, checked to have `shape`, at `at`.
    fn tensor(&mut self, at: &Range<usize>, name: &str, shape: &[usize]) -> Result<(), String> {
        let values = self.from.get(name, shape)?;
        self.put(at, &values)
    }

    /// Linear layer `name`: its weight saved `[out][in]`, put transposed (`[in][out]`) at
    /// `w`, and its bias at `b`.
    fn linear(
        &mut self,
        (w, b): (&Range<usize>, &Range<usize>),
        name: &str,
        inputs: usize,
        outputs: usize,
    ) -> Result<(), String> {
        let weight = self
            .from
            .get(&format!("{name}.weight"), &[outputs, inputs])?;
        self.put(w, &transpose(&weight, outputs, inputs))?;
        self.tensor(b, &format!("{name}.bias"), &[outputs])
    }

    /// Layer norm `name` of `width` values: its weight at `w`, its bias at `b`.
    fn norm(
        &mut self,
        (w, b): (&Range<usize>, &Range<usize>),
        name: &str,
        width: usize,
    ) -> Result<(), String> {
        self.tensor(w, &format!("{name}.weight"), &[width])?;
        self.tensor(b, &format!("{name}.bias"), &[width])
    }
}

/// `m` (`rows × cols`, row-major) transposed.
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; m.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = m[r * cols + c];
        }
    }
    t
}

/// The packed form ([`layout`](super::layout)) of the encoder `config` describes, from
/// the bytes of a safetensors file. The error says what is wrong with the file.
pub(crate) fn pack(config: &Config, safetensors: &[u8]) -> Result<Vec<f32>, String> {
    if let Some(why) = config.unsupported() {
        return Err(why);
    }
    let file = SafeTensors::deserialize(safetensors)
        .map_err(|e| format!("is not a safetensors file: {e}"))?;
    // Every packed value comes from the file: a configuration asking for more than it
    // holds is refused before anything is allocated.
    let (layout, total) = Weights::layout(config.shape(), safetensors.len() / 4)
        .ok_or_else(|| "holds fewer weights than the configuration describes".to_owned())?;
    // Checkpoints saved from BertForX name every tensor "bert.…".
    let prefix = if file.names().iter().any(|n| n.starts_with("embeddings.")) {
        ""
    } else {
        "bert."
    };
    let (h, i) = (config.hidden_size, config.intermediate_size);
    let mut values = vec![0.0; total];
    let mut p = Packing {
        from: Tensors { file, prefix },
        into: &mut values,
    };

    let (vocab, positions) = (config.vocab_size, config.max_position_embeddings);
    p.tensor(
        &layout.word,
        "embeddings.word_embeddings.weight",
        &[vocab, h],
    )?;
    p.tensor(
        &layout.position,
        "embeddings.position_embeddings.weight",
        &[positions, h],
    )?;
    let token_types = p.from.get(
        "embeddings.token_type_embeddings.weight",
        &[config.type_vocab_size, h],
    )?;
    p.put(&layout.token_type, &token_types[..h])?;
    let embed_norm = (&layout.embed_norm_w, &layout.embed_norm_b);
    p.norm(embed_norm, "embeddings.LayerNorm", h)?;
    for (n, at) in layout.layers.iter().enumerate() {
        let name = |part: &str| format!("encoder.layer.{n}.{part}");
        let q = p.from.get(&name("attention.self.query.weight"), &[h, h])?;
        let k = p.from.get(&name("attention.self.key.weight"), &[h, h])?;
        let v = p.from.get(&name("attention.self.value.weight"), &[h, h])?;
        p.put(&at.qkv_w, &transpose(&[q, k, v].concat(), 3 * h, h))?; // from [3h][h]
        let mut qkv_b = p.from.get(&name("attention.self.query.bias"), &[h])?;
        qkv_b.extend(p.from.get(&name("attention.self.key.bias"), &[h])?);
        qkv_b.extend(p.from.get(&name("attention.self.value.bias"), &[h])?);
        p.put(&at.qkv_b, &qkv_b)?;
        let attn_out = (&at.attn_out_w, &at.attn_out_b);
        p.linear(attn_out, &name("attention.output.dense"), h, h)?;
        let attn_norm = (&at.attn_norm_w, &at.attn_norm_b);
        p.norm(attn_norm, &name("attention.output.LayerNorm"), h)?;
        p.linear((&at.up_w, &at.up_b), &name("intermediate.dense"), h, i)?;
        p.linear((&at.down_w, &at.down_b), &name("output.dense"), i, h)?;
        let out_norm = (&at.out_norm_w, &at.out_norm_b);
        p.norm(out_norm, &name("output.LayerNorm"), h)?;
    }
    Ok(values)
}

impl Bert {
    /// The encoder `config` describes, over `buffer`, its weights in their packed form
    /// ([`pack`]). The error says what does not fit.
    pub(crate) fn over(config: &Config, buffer: Buffer) -> Result<Self, String> {
        if let Some(why) = config.unsupported() {
            return Err(why);
        }
        let len = buffer.values().len();
        let (layout, total) = Weights::layout(config.shape(), len)
            .filter(|&(_, total)| total == len)
            .ok_or_else(|| {
                format!(
                    "{len} packed values, the configuration needs {:?}",
                    config.shape().values()
                )
            })?;
        debug_assert_eq!(total, len);
        let buffer = Arc::new(buffer);
        let w = layout.try_map(|range| {
            Tensor::new(Arc::clone(&buffer), range).ok_or("a tensor past the packed values")
        })?;
        Ok(Self {
            hidden: config.hidden_size,
            heads: config.num_attention_heads,
            intermediate: config.intermediate_size,
            vocab: config.vocab_size,
            max_positions: config.max_position_embeddings,
            eps: config.layer_norm_eps as f32,
            w,
        })
    }

    /// Each layer's dense weights, input-major, with their input counts: the fused
    /// query/key/value projection, the attention output, the intermediate and the output
    /// layer (what [`Int8Weights`] quantises).
    pub(crate) fn dense_layers(&self) -> Vec<[(&[f32], usize); 4]> {
        let (h, i) = (self.hidden, self.intermediate);
        self.w
            .layers
            .iter()
            .map(|l| {
                [
                    (&l.qkv_w[..], h),
                    (&l.attn_out_w[..], h),
                    (&l.up_w[..], h),
                    (&l.down_w[..], i),
                ]
            })
            .collect()
    }

    /// The mean-pooled, L2-normalised last hidden states of each sequence of token ids,
    /// the dense layers computed in 8 bits with `int8` (this encoder's layers quantised)
    /// when given.
    ///
    /// `parallelism` splits the work inside this one call (matrix products, attention
    /// heads); pass [`Parallelism::None`] when calls already run side by side.
    pub(crate) fn embed(
        &self,
        sequences: &[&[u32]],
        parallelism: Parallelism,
        int8: Option<&Int8Weights>,
    ) -> Result<Vec<Vec<f32>>, String> {
        if int8.is_some_and(|w| w.layers.len() != self.w.layers.len()) {
            return Err("the int8 weights are of another model".into());
        }
        for sequence in sequences {
            if sequence.len() > self.max_positions {
                return Err(format!(
                    "{} tokens, more than the {} positions the model has",
                    sequence.len(),
                    self.max_positions
                ));
            }
            if let Some(id) = sequence.iter().find(|&&id| id as usize >= self.vocab) {
                return Err(format!(
                    "token id {id} is outside the model's vocabulary of {}",
                    self.vocab
                ));
            }
        }
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => {
                let out = self.run(&mut scratch, sequences, parallelism, int8);
                scratch.trim();
                Ok(out)
            }
            // This thread is already inside a pass (it picked up this call while waiting
            // on its own parallel work): use fresh buffers.
            Err(_) => Ok(self.run(&mut Scratch::default(), sequences, parallelism, int8)),
        })
    }

    fn run(
        &self,
        s: &mut Scratch,
        sequences: &[&[u32]],
        parallelism: Parallelism,
        int8: Option<&Int8Weights>,
    ) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let tokens: usize = sequences.iter().map(|s| s.len()).sum();
        let mut spans = Vec::with_capacity(sequences.len());
        let mut start = 0;
        for sequence in sequences {
            spans.push((start, sequence.len()));
            start += sequence.len();
        }

        let hidden = grow(&mut s.hidden, tokens * h);
        let mut rows = hidden.chunks_exact_mut(h);
        for sequence in sequences {
            for (position, &id) in sequence.iter().enumerate() {
                let row = rows.next().expect("one row per token");
                let id = id as usize;
                row.copy_from_slice(&self.w.word[id * h..(id + 1) * h]);
                kernels::add_assign(row, &self.w.position[position * h..(position + 1) * h]);
                kernels::add_assign(row, &self.w.token_type);
            }
        }
        kernels::layer_norm(hidden, &self.w.embed_norm_w, &self.w.embed_norm_b, self.eps);

        for (n, layer) in self.w.layers.iter().enumerate() {
            let int8 = int8.map(|w| &w.layers[n]);
            self.layer(layer, int8, s, tokens, &spans, parallelism);
        }

        let hidden = &s.hidden[..tokens * h];
        spans
            .iter()
            .map(|&(start, len)| {
                let mut out = vec![0.0; h];
                kernels::mean_pool_normalised(&hidden[start * h..(start + len) * h], &mut out);
                out
            })
            .collect()
    }

    fn layer(
        &self,
        layer: &Layer<Tensor>,
        int8: Option<&Int8Layer>,
        s: &mut Scratch,
        tokens: usize,
        spans: &[(usize, usize)],
        parallelism: Parallelism,
    ) {
        let h = self.hidden;
        let i = self.intermediate;
        let hidden = &mut s.hidden[..tokens * h];

        // Self-attention.
        let qkv = grow(&mut s.qkv, tokens * 3 * h);
        kernels::fill_rows(qkv, &layer.qkv_b);
        // Each dense layer in 8 bits when the int8 weights are given, else in `f32`.
        let dense =
            |x: &[f32], out: &mut [f32], w: &[f32], write, q: Option<&QuantizedLinear>| match q {
                Some(q) => q.product(x, out, write, tokens, parallelism),
                None => product(x, out, w, write, tokens, parallelism),
            };
        dense(hidden, qkv, &layer.qkv_w, Write::Add, int8.map(|q| &q.qkv));
        let context = grow(&mut s.context, tokens * h);
        // `projected` is free until the output projection: the heads' scratch.
        let projected = grow(&mut s.projected, tokens * h);
        self.attention(qkv, projected, context, spans, parallelism);
        dense(
            context,
            projected,
            &layer.attn_out_w,
            Write::Set,
            int8.map(|q| &q.attn_out),
        );
        kernels::add_bias_norm(
            hidden,
            projected,
            &layer.attn_out_b,
            &layer.attn_norm_w,
            &layer.attn_norm_b,
            self.eps,
        );

        // Feed-forward.
        let up = grow(&mut s.up, tokens * i);
        dense(hidden, up, &layer.up_w, Write::Set, int8.map(|q| &q.up));
        kernels::bias_gelu(up, &layer.up_b);
        dense(
            up,
            projected,
            &layer.down_w,
            Write::Set,
            int8.map(|q| &q.down),
        );
        kernels::add_bias_norm(
            hidden,
            projected,
            &layer.down_b,
            &layer.out_norm_w,
            &layer.out_norm_b,
            self.eps,
        );
    }

    /// Scaled dot-product attention of every sequence and head, from the fused
    /// query/key/value rows into `context` (token-major, the heads side by side in each
    /// row).
    ///
    /// The heads are computed into `heads` (scratch as large as `context`), where each
    /// (sequence, head) pair owns one contiguous block of `len × d` values, sequence by
    /// sequence and head by head. Each parallel task is handed its block as its own `&mut`
    /// slice (split off the buffer), so no two tasks ever hold references to the same
    /// memory; the blocks are then copied into `context`'s rows.
    fn attention(
        &self,
        qkv: &[f32],
        heads: &mut [f32],
        context: &mut [f32],
        spans: &[(usize, usize)],
        parallelism: Parallelism,
    ) {
        let h = self.hidden;
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let one = |(start, len, head, block): (usize, usize, usize, &mut [f32])| {
            let rows = &qkv[start * 3 * h..(start + len) * 3 * h];
            SCORES.with(|scores| {
                let mut scores = scores.borrow_mut();
                let scores = grow(&mut scores, len * len);
                if len <= SHORT_SEQUENCE {
                    let at = (3 * h, head * d, h + head * d, 2 * h + head * d, d);
                    kernels::short_head(rows, at, len, scale, scores, block);
                    return;
                }
                let at = View::dense(3 * h).shifted(head * d);
                // scores = scale · Q_h K_hᵀ
                matmul(
                    (len, len, d),
                    (scores, View::dense(len)),
                    (rows, at),
                    (rows, at.shifted(h)),
                    true,
                    Write::Set,
                    scale,
                    Parallelism::None,
                );
                kernels::softmax_rows(scores, len);
                // block = softmax(scores) · V_h
                matmul(
                    (len, d, len),
                    (block, View::dense(d)),
                    (scores, View::dense(len)),
                    (rows, at.shifted(2 * h)),
                    false,
                    Write::Set,
                    1.0,
                    Parallelism::None,
                );
            });
        };
        let tasks = head_blocks(&mut heads[..context.len()], spans, h, d);
        match parallelism {
            Parallelism::None => tasks.into_iter().for_each(one),
            _ => tasks.into_par_iter().for_each(one),
        }
        for &(start, len) in spans {
            if len == 0 {
                continue;
            }
            let blocks = &heads[start * h..(start + len) * h];
            let rows = &mut context[start * h..(start + len) * h];
            for (head, block) in blocks.chunks_exact(len * d).enumerate() {
                for (row, values) in rows.chunks_exact_mut(h).zip(block.chunks_exact(d)) {
                    row[head * d..(head + 1) * d].copy_from_slice(values);
                }
            }
        }
    }
}

/// Sequences up to this many tokens (a query, a short message) take attention written
/// out ([`kernels::short_head`]); longer ones, two matrix products per head.
const SHORT_SEQUENCE: usize = 32;

/// `heads` cut into one `len × d` block per (sequence, head) pair, each with the
/// sequence's first row and length and the head's number: sequence `(start, len)` owns
/// values `start · h .. (start + len) · h`, its heads `d · len` values each in turn (the
/// sequences follow each other from row 0, as [`Bert::run`] packs them). Empty sequences
/// have no blocks.
fn head_blocks<'a>(
    heads: &'a mut [f32],
    spans: &[(usize, usize)],
    h: usize,
    d: usize,
) -> Vec<(usize, usize, usize, &'a mut [f32])> {
    let mut blocks = Vec::with_capacity(spans.len() * h / d.max(1));
    let mut rest = heads;
    let mut at = 0;
    for &(start, len) in spans {
        debug_assert_eq!(start * h, at, "spans follow each other from row 0");
        let (sequence, tail) = std::mem::take(&mut rest).split_at_mut(len * h);
        rest = tail;
        at += len * h;
        if len == 0 {
            continue;
        }
        for (head, block) in sequence.chunks_exact_mut(len * d).enumerate() {
            blocks.push((start, len, head, block));
        }
    }
    blocks
}

/// `out = x · w` (or `out += x · w`) over `rows` rows, `w` input-major. A few rows (a
/// short query) take [`few_rows::product`], which streams the weights once for all of
/// them; more take `gemm`.
fn product(x: &[f32], out: &mut [f32], w: &[f32], write: Write, rows: usize, par: Parallelism) {
    let inputs = x.len() / rows.max(1);
    let outputs = w.len() / inputs.max(1);
    if few_rows::applies(rows, outputs) {
        let add = write == Write::Add;
        few_rows::product((rows, outputs, inputs), out, x, w, add, par);
        return;
    }
    matmul(
        (rows, outputs, inputs),
        (out, View::dense(outputs)),
        (x, View::dense(inputs)),
        (w, View::dense(outputs)),
        false,
        write,
        1.0,
        par,
    );
}

/// The buffers of one forward pass, kept by each thread between passes.
#[derive(Default)]
struct Scratch {
    hidden: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    up: Vec<f32>,
}

/// What a thread keeps between passes, in values (32 MB in all): for MiniLM, about 2,000
/// tokens, a batch of 64 everyday sentences; a pass over more frees its buffers after
/// it, so long texts do not pin their memory for the life of the pool.
const KEEP: usize = 8 << 20;

impl Scratch {
    fn trim(&mut self) {
        let kept: usize = [
            &self.hidden,
            &self.qkv,
            &self.context,
            &self.projected,
            &self.up,
        ]
        .iter()
        .map(|v| v.capacity())
        .sum();
        if kept > KEEP {
            *self = Self::default();
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
    static SCORES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The first `len` values of `buffer`, grown (never shrunk) to hold them.
fn grow(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
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

    /// A random two-layer encoder: hidden size 8 in 2 heads of 4, 16 intermediate
    /// units, 30 token ids, 16 positions.
    fn tiny(seed: u64) -> Bert {
        let config = testing::tiny_config();
        let values = Values(seed).vec(config.shape().values().unwrap());
        Bert::over(&config, Buffer::Owned(values)).unwrap()
    }

    /// Attention by its definition, in `f64`: for each sequence and head,
    /// `softmax(Q Kᵀ / √d) V` into that head's columns of the sequence's rows.
    fn naive_attention(qkv: &[f32], spans: &[(usize, usize)], h: usize, heads: usize) -> Vec<f32> {
        let d = h / heads;
        let tokens: usize = spans.iter().map(|s| s.1).sum();
        let at = |row: usize, part: usize, head: usize, c: usize| {
            f64::from(qkv[row * 3 * h + part * h + head * d + c])
        };
        let mut out = vec![0.0; tokens * h];
        for &(start, len) in spans {
            for head in 0..heads {
                for i in start..start + len {
                    let scores: Vec<f64> = (start..start + len)
                        .map(|j| {
                            (0..d)
                                .map(|c| at(i, 0, head, c) * at(j, 1, head, c))
                                .sum::<f64>()
                                / (d as f64).sqrt()
                        })
                        .collect();
                    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let total: f64 = weights.iter().sum();
                    for c in 0..d {
                        let v: f64 = (start..start + len)
                            .zip(&weights)
                            .map(|(j, w)| w * at(j, 2, head, c))
                            .sum();
                        out[i * h + head * d + c] = (v / total) as f32;
                    }
                }
            }
        }
        out
    }

    /// A pool of three threads, so parallel tasks really interleave (also under Miri,
    /// whose machine has one core).
    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a thread pool")
    }

    #[test]
    fn attention_matches_its_definition_run_alone_or_in_parallel() {
        let bert = tiny(1);
        let h = bert.hidden;
        // Four sequences (one empty) packed back to back; the last is longer than
        // SHORT_SEQUENCE, so both ways of computing a head are checked.
        let spans = [(0, 3), (3, 0), (3, 5), (8, SHORT_SEQUENCE + 8)];
        let tokens = 8 + SHORT_SEQUENCE + 8;
        let qkv = Values(2).vec(tokens * 3 * h);
        let want = naive_attention(&qkv, &spans, h, bert.heads);

        let run = |parallelism| {
            // Stale values in both buffers must not leak into the result.
            let mut heads = vec![f32::NAN; tokens * h];
            let mut context = vec![f32::NAN; tokens * h];
            bert.attention(&qkv, &mut heads, &mut context, &spans, parallelism);
            context
        };
        let alone = run(Parallelism::None);
        let parallel = pool().install(|| run(Parallelism::Rayon(3)));
        assert_eq!(alone.len(), want.len());
        for (got, want) in alone.iter().zip(&want) {
            assert!((got - want).abs() < 1e-5, "{alone:?}\n{want:?}");
        }
        // Every head of every sequence is computed by the same code either way.
        assert_eq!(alone, parallel);
    }

    #[test]
    fn tiny_forward_pass_is_the_same_batched_alone_and_in_parallel() {
        let bert = tiny(3);
        let sequences: [&[u32]; 3] = [&[1, 5, 7], &[2, 3, 4, 9, 11, 29], &[0]];
        let batched = bert.embed(&sequences, Parallelism::None, None).unwrap();
        let parallel = pool()
            .install(|| bert.embed(&sequences, Parallelism::Rayon(3), None))
            .unwrap();
        assert_eq!(batched.len(), 3);
        for ((one, together), par) in sequences.iter().zip(&batched).zip(&parallel) {
            let alone = bert.embed(&[one], Parallelism::None, None).unwrap();
            assert_eq!(together.len(), bert.hidden);
            let norm: f32 = together.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "unit length, got {norm}");
            for ((a, b), c) in together.iter().zip(&alone[0]).zip(par) {
                assert!((a - b).abs() < 1e-5 && (a - c).abs() < 1e-5, "{a} {b} {c}");
            }
        }
        // Different inputs give different embeddings.
        assert!(batched[0]
            .iter()
            .zip(&batched[1])
            .any(|(a, b)| (a - b).abs() > 1e-3));
        assert!(bert.embed(&[&[30]], Parallelism::None, None).is_err());
    }

    #[test]
    // Safe code only (safetensors parsing and copies), and minutes under Miri.
    #[cfg_attr(miri, ignore)]
    fn packing_transposes_and_fuses_the_saved_tensors() {
        let config = testing::tiny_config();
        let file = testing::tiny_safetensors(&config, 5);
        let packed = pack(&config, &file).unwrap();
        let (layout, total) = Weights::layout(config.shape(), usize::MAX).unwrap();
        assert_eq!(packed.len(), total);
        let saved = SafeTensors::deserialize(&file).unwrap();
        let t = Tensors {
            file: saved,
            prefix: "",
        };
        let (h, i) = (8, 16);
        assert_eq!(
            packed[layout.word.clone()],
            t.get("embeddings.word_embeddings.weight", &[30, h])
                .unwrap()
        );
        assert_eq!(
            packed[layout.token_type.clone()],
            t.get("embeddings.token_type_embeddings.weight", &[2, h])
                .unwrap()[..h]
        );
        let at = &layout.layers[1];
        // Saved [out][in], packed [in][out]: row r, column c saved is row c, column r packed.
        let up = t
            .get("encoder.layer.1.intermediate.dense.weight", &[i, h])
            .unwrap();
        let packed_up = &packed[at.up_w.clone()];
        for (r, c) in [(0, 0), (3, 5), (15, 7)] {
            assert_eq!(packed_up[c * i + r], up[r * h + c]);
        }
        // Query, key and value side by side in each input row.
        let key = t
            .get("encoder.layer.1.attention.self.key.weight", &[h, h])
            .unwrap();
        let qkv = &packed[at.qkv_w.clone()];
        assert_eq!(qkv[2 * (3 * h) + h + 6], key[6 * h + 2]);
        let bias = t
            .get("encoder.layer.1.attention.self.value.bias", &[h])
            .unwrap();
        assert_eq!(packed[at.qkv_b.clone()][2 * h..], bias[..]);

        // The same network, run from the packed values.
        let bert = Bert::over(&config, Buffer::Owned(packed)).unwrap();
        let v = bert.embed(&[&[1, 2, 3]], Parallelism::None, None).unwrap();
        assert_eq!(v[0].len(), h);
    }

    #[test]
    // Safe code only (safetensors parsing and copies), and minutes under Miri.
    #[cfg_attr(miri, ignore)]
    fn packing_refuses_what_does_not_fit_the_configuration() {
        let config = testing::tiny_config();
        let file = testing::tiny_safetensors(&config, 5);
        let wider = Config {
            intermediate_size: 32,
            ..config.clone()
        };
        let error = pack(&wider, &file).unwrap_err();
        assert!(error.contains("intermediate.dense.weight"), "{error}");
        // More values than the whole file holds: refused before allocating.
        let huge = Config {
            vocab_size: 1 << 40,
            ..config.clone()
        };
        let error = pack(&huge, &file).unwrap_err();
        assert!(error.contains("fewer weights"), "{error}");
        assert!(pack(&config, &file[..file.len() / 2]).is_err());

        // A packed buffer one value short, or one too long, runs nothing.
        let total = config.shape().values().unwrap();
        for len in [total - 1, total + 1, 0] {
            let error = Bert::over(&config, Buffer::Owned(vec![0.0; len]))
                .err()
                .unwrap();
            assert!(error.contains("packed values"), "{error}");
        }
    }
}

/// A tiny model for tests: a configuration and a safetensors file of random weights for it.
#[cfg(test)]
pub(crate) mod testing {
    use super::Config;

    /// Two layers, hidden size 8 in 2 heads of 4, 16 intermediate units, 30 token ids, 16
    /// positions.
    pub(crate) fn tiny_config() -> Config {
        serde_json::from_str(TINY_CONFIG).expect("a BERT configuration")
    }

    /// The `config.json` of [`tiny_config`].
    pub(crate) const TINY_CONFIG: &str = r#"{"vocab_size": 30, "hidden_size": 8,
        "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16,
        "hidden_act": "gelu", "max_position_embeddings": 16, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12}"#;

    /// A safetensors file with every tensor a BERT checkpoint of `config` holds, values
    /// drawn from `seed`.
    pub(crate) fn tiny_safetensors(config: &Config, seed: u64) -> Vec<u8> {
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let mut shapes: Vec<(String, Vec<usize>)> = vec![
            (
                "embeddings.word_embeddings.weight".into(),
                vec![config.vocab_size, h],
            ),
            (
                "embeddings.position_embeddings.weight".into(),
                vec![config.max_position_embeddings, h],
            ),
            (
                "embeddings.token_type_embeddings.weight".into(),
                vec![config.type_vocab_size, h],
            ),
            ("embeddings.LayerNorm.weight".into(), vec![h]),
            ("embeddings.LayerNorm.bias".into(), vec![h]),
        ];
        for n in 0..config.num_hidden_layers {
            let linear = [
                ("attention.self.query", h, h),
                ("attention.self.key", h, h),
                ("attention.self.value", h, h),
                ("attention.output.dense", h, h),
                ("intermediate.dense", i, h),
                ("output.dense", h, i),
            ];
            for (part, outputs, inputs) in linear {
                shapes.push((
                    format!("encoder.layer.{n}.{part}.weight"),
                    vec![outputs, inputs],
                ));
                shapes.push((format!("encoder.layer.{n}.{part}.bias"), vec![outputs]));
            }
            for part in ["attention.output.LayerNorm", "output.LayerNorm"] {
                shapes.push((format!("encoder.layer.{n}.{part}.weight"), vec![h]));
                shapes.push((format!("encoder.layer.{n}.{part}.bias"), vec![h]));
            }
        }
        let mut state = seed;
        let data: Vec<Vec<u8>> = shapes
            .iter()
            .map(|(_, shape)| {
                (0..shape.iter().product::<usize>())
                    .flat_map(|_| {
                        state = state
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5).to_le_bytes()
                    })
                    .collect()
            })
            .collect();
        let views = shapes.iter().zip(&data).map(|((name, shape), bytes)| {
            let view =
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), bytes)
                    .expect("a tensor view");
            (name.clone(), view)
        });
        safetensors::tensor::serialize(views, None).expect("a safetensors file")
    }
}
