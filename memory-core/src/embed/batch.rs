//! From texts to pooled, normalised vectors: tokenise, group by length, pad each group to
//! its longest sequence, run the network, mean-pool over the real tokens.

use candle_core::{DType, Device, Tensor, D};
use rayon::prelude::*;
use tokenizers::TruncationDirection;

use super::files::LoadedModel;
use crate::error::Result;

/// How to cut the work.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Sequences per forward pass.
    pub(crate) batch_size: usize,
    /// Tokens per sequence, special tokens included; longer texts are truncated.
    pub(crate) max_length: usize,
}

/// One embedding per text, in order. Runs on the rayon pool it is installed in.
pub(crate) fn embed(model: &LoadedModel, texts: &[&str], plan: Plan) -> Result<Vec<Vec<f32>>> {
    let sequences = texts
        .iter()
        .map(|text| token_ids(model, text, plan.max_length))
        .collect::<Result<Vec<_>>>()?;

    // Longest first, so each batch holds sequences of about the same length and padding
    // (computed, then thrown away) stays small.
    let mut order: Vec<usize> = (0..sequences.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sequences[i].len()));

    // Batches run side by side, one per pool thread: coarse tasks that need no
    // synchronisation inside a forward pass. candle's matrix products still split
    // themselves, so a lone batch (a single query) uses every thread too.
    let groups: Vec<&[usize]> = order.chunks(plan.batch_size.max(1)).collect();
    let pooled = groups
        .par_iter()
        .map(|group| {
            let batch: Vec<&[u32]> = group.iter().map(|&i| sequences[i].as_slice()).collect();
            forward(model, &batch)
        })
        .collect::<Result<Vec<_>>>()?;

    let mut vectors = vec![Vec::new(); texts.len()];
    for (group, pooled) in groups.iter().zip(pooled) {
        for (&i, vector) in group.iter().zip(pooled) {
            vectors[i] = vector;
        }
    }
    Ok(vectors)
}

/// The token ids of one text, with [CLS]/[SEP], at most `max_length` of them.
fn token_ids(model: &LoadedModel, text: &str, max_length: usize) -> Result<Vec<u32>> {
    let tokenizer = &model.tokenizer;
    let mut encoding = tokenizer
        .encode_fast(text, false)
        .map_err(|e| model.error(format!("cannot tokenize: {e}")))?;
    encoding.truncate(
        max_length.saturating_sub(model.special_tokens),
        0,
        TruncationDirection::Right,
    );
    let encoding = tokenizer
        .post_process(encoding, None, true)
        .map_err(|e| model.error(format!("cannot tokenize: {e}")))?;
    Ok(encoding.get_ids().to_vec())
}

/// Mean-pooled, L2-normalised embeddings of one batch, padded to its longest sequence.
fn forward(model: &LoadedModel, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
    let run = || -> candle_core::Result<Vec<Vec<f32>>> {
        let rows = batch.len();
        let width = batch.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0u32; rows * width];
        let mut mask = vec![0u32; rows * width];
        for (row, sequence) in batch.iter().enumerate() {
            let start = row * width;
            ids[start..start + sequence.len()].copy_from_slice(sequence);
            mask[start..start + sequence.len()].fill(1);
        }
        let device = Device::Cpu;
        let ids = Tensor::from_vec(ids, (rows, width), &device)?;
        let mask = Tensor::from_vec(mask, (rows, width), &device)?;
        let token_types = ids.zeros_like()?;

        let hidden = model.bert.forward(&ids, &token_types, Some(&mask))?; // (rows, width, dim)
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, width, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (rows, dim)
        let counts = mask.sum(1)?; // (rows, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(D::Minus1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    };
    run().map_err(|e| model.error(format!("inference failed: {e}")))
}
