//! From texts to pooled, normalised vectors: tokenise, group by length, run each group
//! through the network (packed, without padding), mean-pool over its tokens.

use gemm::Parallelism;
use rayon::prelude::*;
use tokenizers::TruncationDirection;

use super::files::LoadedModel;
use super::int8::Int8Weights;
use crate::error::Result;

/// How to cut the work.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Sequences per forward pass.
    pub(crate) batch_size: usize,
    /// Tokens per sequence, special tokens included; longer texts are truncated.
    pub(crate) max_length: usize,
}

/// One embedding per text, in order, the dense layers in 8 bits when `int8` (the model's
/// quantised weights) is given. Runs on the rayon pool it is installed in.
pub(crate) fn embed(
    model: &LoadedModel,
    int8: Option<&Int8Weights>,
    texts: &[&str],
    plan: Plan,
) -> Result<Vec<Vec<f32>>> {
    let sequences = texts
        .par_iter()
        .map(|text| token_ids(model, text, plan.max_length))
        .collect::<Result<Vec<_>>>()?;

    // Longest first, so the groups are of similar length and the longest start first,
    // which keeps the threads evenly busy to the end.
    let mut order: Vec<usize> = (0..sequences.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sequences[i].len()));

    // With at least as many groups as threads, groups run side by side, each on one
    // thread: coarse tasks that need no synchronisation inside a forward pass. Too few
    // texts to fill every thread with a full batch are cut into one group per thread
    // instead (40 texts on 2 threads: 20 and 20, not 32 and 8). A single text splits its
    // pass instead: matrix products by rows and columns, attention by head.
    let threads = rayon::current_num_threads();
    let group_size = plan
        .batch_size
        .min(sequences.len().div_ceil(threads.max(1)))
        .max(1);
    let groups: Vec<&[usize]> = order.chunks(group_size).collect();
    let run = |group: &&[usize], parallelism| {
        let batch: Vec<&[u32]> = group.iter().map(|&i| sequences[i].as_slice()).collect();
        model
            .bert
            .embed(&batch, parallelism, int8)
            .map_err(|e| model.error(format!("inference failed: {e}")))
    };
    let pooled = if threads > 1 && groups.len() >= threads {
        groups
            .par_iter()
            .map(|group| run(group, Parallelism::None))
            .collect::<Result<Vec<_>>>()?
    } else {
        let parallelism = if threads > 1 {
            Parallelism::Rayon(threads)
        } else {
            Parallelism::None
        };
        groups
            .iter()
            .map(|group| run(group, parallelism))
            .collect::<Result<Vec<_>>>()?
    };

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
