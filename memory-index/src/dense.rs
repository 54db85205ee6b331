//! L2-normalised embeddings stored contiguously, searched by brute-force cosine.
//!
//! Small stores are scanned exactly in `f32`. Larger ones are scanned over a one-byte
//! quantised copy (a quarter of the memory traffic, integer SIMD), with error bounds that
//! let exact `f32` re-scoring of the few surviving candidates return exactly what the
//! exact scan would; see the `quantized` module. A batch of queries is scanned with the
//! queries packed sixteen to a register, so each row loaded serves up to 64 queries at once
//! (see [`super::simd`]). Large scans and batches are split across the rayon thread pool by
//! rows, so each part of the matrix is read once for the whole batch.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::{IndexError, Result};
use crate::quantized::{padded, quantise_query, scan, Candidates, QuantizedRows};
use crate::simd::{dot_f32, kernels, Kernels};

/// Below this many rows, a search scans the `f32` rows directly.
const QUANTIZED_MIN_ROWS: usize = 2048;
/// Below this many rows × queries, a search stays on the calling thread.
const PARALLEL_MIN_WORK: usize = 32_768;
/// Smallest share of rows handed to one parallel task.
const MIN_ROWS_PER_TASK: usize = 4096;

/// Asked `(query index, slot)` whether a document may be returned (a metadata filter).
pub type Accept<'a> = &'a (dyn Fn(usize, u32) -> bool + Sync);

const NO_ROW: u32 = u32::MAX;

/// Returns `v / |v|`, refusing empty, zero, infinite and NaN vectors; `what` names the
/// vector in the error. Every store normalises embeddings with this before storing or
/// comparing them, so cosine similarity is a dot product.
///
/// ```
/// use agentmemory_index::dense::normalized;
///
/// let v = normalized(vec![3.0, 4.0], "embedding").unwrap();
/// assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
/// assert!(normalized(vec![0.0, 0.0], "embedding").is_err());
/// ```
pub fn normalized(mut v: Vec<f32>, what: &'static str) -> Result<Vec<f32>> {
    if v.is_empty() {
        return Err(IndexError::invalid(what, "the embedding is empty"));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(IndexError::invalid(
            what,
            "the embedding contains NaN or infinite values",
        ));
    }
    let norm = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(IndexError::invalid(
            what,
            "the embedding has zero length and cannot be normalised",
        ));
    }
    for x in &mut v {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(v)
}

/// What the dense searches of a namespace have cost so far: how many queries were
/// screened over the one-byte copy, how many candidates that screen left to re-score
/// exactly, and how many queries scanned every row exactly (small namespaces, large `k`,
/// hybrid searches).
///
/// The quantised screen keeps every row whose score bound reaches the `k`-th best
/// lower bound, so the number re-scored per screened query (`rescored / screened`) is
/// `k` plus the rows the one-byte copy cannot tell from the top `k`: close to `k` on
/// well-spread vectors, more where many documents are near-duplicates of each other.
/// The kernel's `InMemoryVectorStore::dense_stats` reports these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DenseStats {
    /// Queries answered through the quantised screen.
    pub screened: u64,
    /// Candidates the screen passed on to exact re-scoring, over all screened queries.
    pub rescored: u64,
    /// Queries answered by an exact scan of every row.
    pub exact: u64,
}

impl DenseStats {
    /// Candidates re-scored per screened query (0 when none was screened).
    pub fn rescored_per_query(&self) -> f64 {
        if self.screened == 0 {
            0.0
        } else {
            self.rescored as f64 / self.screened as f64
        }
    }
}

/// The counters behind [`DenseStats`] (updated under the namespace's read lock).
#[derive(Debug, Default)]
struct Counters {
    screened: AtomicU64,
    rescored: AtomicU64,
    exact: AtomicU64,
}

/// One row of `dim` floats per embedded document, in one `Vec<f32>` so a search scans
/// memory linearly. Rows are swap-removed; `slot_row` / `row_slot` map between caller
/// slots and rows.
#[derive(Debug, Default)]
pub struct DenseIndex {
    dim: Option<usize>,
    data: Vec<f32>,
    quantized: QuantizedRows,
    row_slot: Vec<u32>,
    slot_row: Vec<u32>,
    counters: Counters,
}

impl DenseIndex {
    /// Number of embedded documents.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.row_slot.len()
    }

    /// Bytes held on the heap (capacities; allocator overhead not counted): the `f32`
    /// rows, their quantised copy and the slot maps.
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity() * 4
            + self.quantized.heap_bytes()
            + (self.row_slot.capacity() + self.slot_row.capacity()) * 4
    }

    /// Whether no document has an embedding.
    pub fn is_empty(&self) -> bool {
        self.row_slot.is_empty()
    }

    fn row_of(&self, slot: u32) -> Option<usize> {
        match self.slot_row.get(slot as usize) {
            Some(&r) if r != NO_ROW => Some(r as usize),
            _ => None,
        }
    }

    /// Bytes of rows a search of `queries` queries asking for `k` each reads: the one-byte
    /// copy when the quantised screen serves it, the `f32` rows otherwise (and always for
    /// `exact` scans, as hybrid search makes).
    pub fn scan_bytes(&self, queries: usize, k: usize, exact: bool) -> usize {
        let Some(dim) = self.dim else { return 0 };
        let n = self.row_slot.len();
        let per_row = if !exact && n >= QUANTIZED_MIN_ROWS && k.saturating_mul(8) <= n {
            padded(dim) + 8
        } else {
            dim * 4
        };
        n.saturating_mul(per_row).saturating_mul(queries)
    }

    /// What the searches of this index have cost so far.
    pub fn stats(&self) -> DenseStats {
        DenseStats {
            screened: self.counters.screened.load(Ordering::Relaxed),
            rescored: self.counters.rescored.load(Ordering::Relaxed),
            exact: self.counters.exact.load(Ordering::Relaxed),
        }
    }

    /// The dimension fixed by the stored vectors, `None` while there are none.
    pub fn dim(&self) -> Option<usize> {
        self.dim
    }

    /// Fails with [`IndexError::DimensionMismatch`] unless a vector of `len` floats fits.
    pub fn check_dim(&self, len: usize) -> Result<()> {
        match self.dim {
            Some(d) if d != len => Err(IndexError::DimensionMismatch {
                expected: d,
                found: len,
            }),
            _ => Ok(()),
        }
    }

    /// Stores a normalised vector for `slot`, replacing its previous one.
    pub fn insert(&mut self, slot: u32, v: &[f32]) -> Result<()> {
        self.check_dim(v.len())?;
        self.remove(slot);
        self.dim = Some(v.len());
        let idx = slot as usize;
        if self.slot_row.len() <= idx {
            self.slot_row.resize(idx + 1, NO_ROW);
        }
        self.slot_row[idx] = self.row_slot.len() as u32;
        self.row_slot.push(slot);
        self.data.extend_from_slice(v);
        self.quantized.push(v);
        Ok(())
    }

    /// Drops the vector of `slot`, if any. The dimension is released when no vector is left.
    pub fn remove(&mut self, slot: u32) {
        let Some(row) = self.row_of(slot) else {
            return;
        };
        let dim = self.dim.unwrap_or(0);
        let last = self.row_slot.len() - 1;
        if row != last {
            self.data
                .copy_within(last * dim..(last + 1) * dim, row * dim);
            let moved = self.row_slot[last];
            self.row_slot[row] = moved;
            self.slot_row[moved as usize] = row as u32;
        }
        self.row_slot.pop();
        self.data.truncate(last * dim);
        self.quantized.swap_remove(row);
        self.slot_row[slot as usize] = NO_ROW;
        if self.row_slot.is_empty() {
            self.dim = None;
        }
    }

    /// The stored (normalised) vector of `slot`.
    pub fn get(&self, slot: u32) -> Option<&[f32]> {
        let row = self.row_of(slot)?;
        let dim = self.dim?;
        self.data.get(row * dim..(row + 1) * dim)
    }

    /// Calls `f(slot, cosine)` for every stored vector; `query` must be normalised and of
    /// the index's dimension.
    pub fn score(&self, query: &[f32], mut f: impl FnMut(u32, f32)) {
        let Some(dim) = self.dim else { return };
        if query.len() != dim {
            return;
        }
        self.counters.exact.fetch_add(1, Ordering::Relaxed);
        for (row, chunk) in self.data.chunks_exact(dim).enumerate() {
            f(self.row_slot[row], dot_f32(chunk, query));
        }
    }

    /// The documents that may be among the best `k` for `query`, with their exact scores:
    /// every accepted document scoring at least the `k`-th best accepted score is included
    /// (ties too), so ranking them gives exactly the result of an exact scan. `query` must
    /// be normalised and of the index's dimension.
    pub fn nearest(&self, query: &[f32], k: usize, accept: Option<Accept<'_>>) -> Vec<(u32, f32)> {
        self.nearest_batch(&[query], &[k], accept)
            .pop()
            .unwrap_or_default()
    }

    /// [`nearest`](Self::nearest) for many queries at once: the rows are scanned once for
    /// the whole batch, in parallel parts when the work is large.
    pub fn nearest_batch(
        &self,
        queries: &[&[f32]],
        ks: &[usize],
        accept: Option<Accept<'_>>,
    ) -> Vec<Vec<(u32, f32)>> {
        self.nearest_batch_with(queries, ks, accept, kernels())
    }

    /// [`nearest_batch`](Self::nearest_batch) with the given integer kernels (tests run
    /// every set the CPU has).
    fn nearest_batch_with(
        &self,
        queries: &[&[f32]],
        ks: &[usize],
        accept: Option<Accept<'_>>,
        kernels: &Kernels,
    ) -> Vec<Vec<(u32, f32)>> {
        let Some(dim) = self.dim else {
            return vec![Vec::new(); queries.len()];
        };
        let n = self.row_slot.len();
        let quantize = n >= QUANTIZED_MIN_ROWS;
        let mut out: Vec<Vec<(u32, f32)>> = vec![Vec::new(); queries.len()];
        // Queries the quantised scan can serve: valid and asking for few enough rows.
        let mut fast = Vec::new();
        for (i, (q, &k)) in queries.iter().zip(ks).enumerate() {
            if q.len() != dim || k == 0 {
                continue;
            }
            if quantize && k.saturating_mul(8) <= n {
                fast.push(i);
            } else {
                out[i] = self.exact(i, q, k, accept);
            }
        }
        if fast.is_empty() {
            return out;
        }
        let mut codes = Vec::new();
        let quantised: Vec<_> = fast
            .iter()
            .map(|&i| quantise_query(queries[i], ks[i], &mut codes))
            .collect();
        let local = |qi: usize, slot: u32| -> bool { accept.is_none_or(|f| f(fast[qi], slot)) };
        let slots = &self.row_slot;
        let by_row = |qi: usize, row: u32| local(qi, slots[row as usize]);
        let by_row: Accept<'_> = &by_row;
        let filter = accept.map(|_| by_row);
        let parts = if n * fast.len() >= PARALLEL_MIN_WORK && rayon::current_num_threads() > 1 {
            (rayon::current_num_threads() * 4)
                .min(n.div_ceil(MIN_ROWS_PER_TASK))
                .max(1)
        } else {
            1
        };
        let step = n.div_ceil(parts);
        let found = if parts == 1 {
            scan(&self.quantized, 0..n, &quantised, &codes, filter, kernels)
        } else {
            (0..parts)
                .into_par_iter()
                .map(|p| {
                    scan(
                        &self.quantized,
                        p * step..((p + 1) * step).min(n),
                        &quantised,
                        &codes,
                        filter,
                        kernels,
                    )
                })
                .reduce_with(|a, b| a.into_iter().zip(b).map(|(a, b)| a.merge(b)).collect())
                .unwrap_or_default()
        };
        self.counters
            .screened
            .fetch_add(fast.len() as u64, Ordering::Relaxed);
        let rescore = |(qi, c): (usize, Candidates)| {
            let i = fast[qi];
            let query = queries[i];
            let rows = c.finish();
            self.counters
                .rescored
                .fetch_add(rows.len() as u64, Ordering::Relaxed);
            rows.into_iter()
                .map(|row| {
                    let r = row as usize;
                    (
                        self.row_slot[r],
                        dot_f32(&self.data[r * dim..(r + 1) * dim], query),
                    )
                })
                .collect::<Vec<_>>()
        };
        let rescored: Vec<Vec<(u32, f32)>> = if parts > 1 && fast.len() > 1 {
            found.into_par_iter().enumerate().map(rescore).collect()
        } else {
            found.into_iter().enumerate().map(rescore).collect()
        };
        for (qi, hits) in rescored.into_iter().enumerate() {
            out[fast[qi]] = hits;
        }
        out
    }

    /// Exact scan of every row for query number `qi`: the accepted rows scoring at least
    /// the `k`-th best.
    fn exact(
        &self,
        qi: usize,
        query: &[f32],
        k: usize,
        accept: Option<Accept<'_>>,
    ) -> Vec<(u32, f32)> {
        let mut all = Vec::new();
        self.score(query, |slot, score| {
            if accept.is_none_or(|f| f(qi, slot)) {
                all.push((slot, score));
            }
        });
        if all.len() > k {
            let (_, kth, _) = all.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
            let kth = kth.1;
            all.retain(|&(_, s)| s >= kth);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd;

    #[test]
    fn normalises_and_refuses_bad_vectors() {
        let v = normalized(vec![3.0, 4.0], "embedding").unwrap();
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert!(normalized(vec![0.0, 0.0], "embedding").is_err());
        assert!(normalized(vec![f32::NAN, 1.0], "embedding").is_err());
        assert!(normalized(vec![], "embedding").is_err());
    }

    #[test]
    fn swap_remove_keeps_rows_consistent() {
        let mut d = DenseIndex::default();
        d.insert(0, &[1.0, 0.0]).unwrap();
        d.insert(1, &[0.0, 1.0]).unwrap();
        d.insert(2, &[0.6, 0.8]).unwrap();
        d.remove(0);
        assert_eq!(d.get(2), Some(&[0.6, 0.8][..]));
        assert_eq!(d.get(0), None);
        let mut seen = Vec::new();
        d.score(&[0.0, 1.0], |s, c| seen.push((s, c)));
        seen.sort_by_key(|(s, _)| *s);
        assert_eq!(seen, [(1, 1.0), (2, 0.8)]);
        assert!(matches!(
            d.insert(3, &[1.0, 0.0, 0.0]),
            Err(IndexError::DimensionMismatch {
                expected: 2,
                found: 3
            })
        ));
        d.remove(1);
        d.remove(2);
        assert!(d.is_empty());
        d.insert(5, &[1.0]).unwrap();
        assert_eq!(d.len(), 1);
    }

    /// The best `k` of `found` by score, then slot (the order a store's top-k keeps).
    fn ranked(mut found: Vec<(u32, f32)>, k: usize) -> Vec<(u32, u32)> {
        found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        found.truncate(k);
        found.into_iter().map(|(s, v)| (s, v.to_bits())).collect()
    }

    /// `n` unit vectors around a few centres (close scores are the hard case), with some
    /// exact duplicates (ties).
    fn clustered(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0
        };
        let centres: Vec<Vec<f32>> = (0..4).map(|_| (0..dim).map(|_| next()).collect()).collect();
        let mut out: Vec<Vec<f32>> = Vec::with_capacity(n);
        for i in 0..n {
            if i % 97 == 5 {
                out.push(out[i / 2].clone());
                continue;
            }
            let c = &centres[i % centres.len()];
            let v = c.iter().map(|x| x + 0.3 * next()).collect();
            out.push(normalized(v, "test").unwrap());
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        /// The quantised scan plus exact re-scoring returns exactly the exact scan's top k:
        /// same documents, same order, bit-identical scores, with and without a filter,
        /// for single queries and batches (one to several panels of the packed kernel,
        /// partial groups), with every integer kernel set this CPU has.
        #[test]
        fn quantised_search_equals_exact_search(
            seed in 1u64..u64::MAX,
            n in 2048usize..3500,
            dim in proptest::sample::select(vec![16usize, 45, 64, 130]),
            k in 1usize..40,
            modulus in 1u32..5,
            batch in proptest::sample::select(vec![1usize, 3, 4, 7, 16, 33, 70]),
        ) {
            let rows = clustered(n, dim, seed);
            let mut index = DenseIndex::default();
            for (slot, v) in rows.iter().enumerate() {
                index.insert(slot as u32, v).unwrap();
            }
            // Removals exercise the swap-remove of both copies.
            for slot in (0..n as u32).step_by(13) {
                index.remove(slot);
            }
            // Stored rows (and their duplicates) as queries: exact ties at the top.
            let queries: Vec<Vec<f32>> = clustered(batch.saturating_sub(1), dim, seed ^ 0xabcdef)
                .into_iter()
                .chain([rows[n / 3].clone()])
                .collect();
            let refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
            let ks: Vec<usize> = (0..refs.len()).map(|i| 1 + (k + 7 * i) % 40).collect();
            let keep = |_: usize, slot: u32| slot.is_multiple_of(modulus);
            let accept: Option<Accept<'_>> = (modulus > 1).then_some(&keep as Accept<'_>);
            let want: Vec<_> = refs
                .iter()
                .zip(&ks)
                .enumerate()
                .map(|(qi, (q, &k))| ranked(index.exact(qi, q, k, accept), k))
                .collect();
            for (qi, q) in refs.iter().enumerate() {
                let one = index.nearest(q, ks[qi], accept);
                proptest::prop_assert_eq!(&ranked(one, ks[qi]), &want[qi]);
            }
            for kernels in simd::available() {
                let batch = index.nearest_batch_with(&refs, &ks, accept, kernels);
                for (qi, got) in batch.into_iter().enumerate() {
                    proptest::prop_assert_eq!(&ranked(got, ks[qi]), &want[qi], "{}", kernels.name());
                }
            }
        }
    }

    /// Row counts around the packed scan's chunk and block sizes, fewer rows than `k`
    /// (the exact path), and many equal rows (ties broken by slot).
    #[test]
    fn batches_equal_exact_search_on_awkward_sizes_and_ties() {
        for n in [1usize, 9, 2047, 2048, 2049, 2048 + 47, 4096 + 5] {
            let mut rows = clustered(n, 40, n as u64);
            // A block of exact duplicates: more tied rows than k.
            for i in (n / 2..n).step_by(3).take(30) {
                rows[i] = rows[n / 2].clone();
            }
            let mut index = DenseIndex::default();
            for (slot, v) in rows.iter().enumerate() {
                index.insert(slot as u32, v).unwrap();
            }
            let queries: Vec<Vec<f32>> = clustered(66, 40, 77)
                .into_iter()
                .chain([rows[n / 2].clone(), rows[0].clone()])
                .collect();
            let refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
            for k in [1usize, 10, 25] {
                let ks = vec![k; refs.len()];
                for kernels in simd::available() {
                    let batch = index.nearest_batch_with(&refs, &ks, None, kernels);
                    for (qi, (q, got)) in refs.iter().zip(batch).enumerate() {
                        let want = ranked(index.exact(qi, q, k, None), k);
                        assert_eq!(want.len(), k.min(n));
                        assert_eq!(
                            ranked(got, k),
                            want,
                            "n {n} k {k} query {qi} {}",
                            kernels.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn small_and_wide_requests_use_the_exact_scan() {
        let rows = clustered(300, 8, 3);
        let mut index = DenseIndex::default();
        for (slot, v) in rows.iter().enumerate() {
            index.insert(slot as u32, v).unwrap();
        }
        let got = index.nearest(&rows[7], 3, None);
        let best = ranked(got, 3);
        assert_eq!(best[0].0, 7);
        assert_eq!(index.nearest(&rows[7], 0, None), []);
        assert_eq!(index.nearest(&[1.0], 3, None), []);
        assert_eq!(index.nearest(&rows[7], 1000, None).len(), 300);
    }

    #[test]
    fn dot_handles_remainders() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let want: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot_f32(&a, &a), want);
    }
}
