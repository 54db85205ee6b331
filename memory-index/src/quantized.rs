//! Embeddings quantised to one byte per dimension, scanned with error bounds so that
//! exact re-scoring of a few candidates gives exactly the exact search's results.
//!
//! Each stored (unit) vector `x` keeps a scale `s = max|xᵢ| / 127`, codes
//! `cᵢ = round(xᵢ / s)` (stored as `cᵢ + 128`, a `u8`) and the L2 norm `e` of its
//! quantisation error `x − s·c`. A query `q` is quantised the same way to ±63 (so `u8 × i8`
//! pair sums fit the `i16` of the integer kernel), with scale `t` and error `f`. Then, by
//! Cauchy–Schwarz with `|q| = |x| = 1`,
//!
//! `|x·q − s·t·(c·d)| ≤ e·|q| + |s·c|·f ≤ e + (1 + e)·f`,
//!
//! so every row has an interval that holds its exact score. A scan keeps, per query, the
//! `k`-th best *lower* bound `L` among accepted rows (never above the final `k`-th exact
//! score) and every row whose *upper* bound reaches `L`; the true top `k`, ties included,
//! are always among those candidates, which the caller re-scores in `f32`. A small slack
//! covers the rounding of the `f32` arithmetic on both sides.

use std::ops::Range;

use crate::simd::{pack_queries, Kernels, Terms, GROUP, LANE_BYTES, MAX_GROUPS};
use crate::topk::TopK;

/// Rows scored per tile: the tile stays in cache while every query block passes over it.
const TILE_ROWS: usize = 64;
/// Queries per block within a tile.
const QUERY_BLOCK: usize = 16;
/// Rows per chunk of the packed scan: the chunk (18 KB at 384 dimensions) stays in L1
/// while every panel of queries passes over it, and its dots for one panel fit beside it.
const CHUNK_ROWS: usize = 48;
/// Largest magnitude of a stored code.
const ROW_LEVELS: f64 = 127.0;
/// Largest magnitude of a query code (255 · 63 · 2 < 2¹⁵).
const QUERY_LEVELS: f64 = 63.0;

/// `dim` rounded up to the kernel's lane width.
pub fn padded(dim: usize) -> usize {
    dim.div_ceil(LANE_BYTES) * LANE_BYTES
}

/// Quantises `v` to codes in `±levels`; returns the scale and the L2 norm of the error
/// (rounded up so it stays a bound).
fn quantise(v: &[f32], levels: f64, mut emit: impl FnMut(i32)) -> (f32, f32) {
    let max = v.iter().fold(0.0f64, |m, x| m.max(f64::from(x.abs())));
    if max == 0.0 {
        v.iter().for_each(|_| emit(0));
        return (0.0, 0.0);
    }
    let scale = (max / levels) as f32;
    let s = f64::from(scale);
    let mut err2 = 0.0f64;
    for x in v {
        let c = (f64::from(*x) / s).round().clamp(-levels, levels);
        err2 += (f64::from(*x) - s * c).powi(2);
        emit(c as i32);
    }
    (scale, (err2.sqrt() * (1.0 + 1e-6) + 1e-9) as f32)
}

/// The quantised copy of a [`DenseIndex`](super::dense::DenseIndex)'s rows, kept in the
/// same order.
#[derive(Debug, Default)]
pub struct QuantizedRows {
    padded: usize,
    codes: Vec<u8>,
    scale: Vec<f32>,
    err: Vec<f32>,
}

impl QuantizedRows {
    /// Appends the quantised form of `v`.
    pub fn push(&mut self, v: &[f32]) {
        self.padded = padded(v.len());
        let (scale, err) = quantise(v, ROW_LEVELS, |c| self.codes.push((c + 128) as u8));
        self.codes
            .extend(std::iter::repeat_n(128u8, self.padded - v.len()));
        self.scale.push(scale);
        self.err.push(err);
    }

    /// Moves the last row into `row` and drops the last row (mirrors the index's swap-remove).
    pub fn swap_remove(&mut self, row: usize) {
        let p = self.padded;
        let last = self.scale.len() - 1;
        if row != last {
            self.codes.copy_within(last * p..(last + 1) * p, row * p);
        }
        self.codes.truncate(last * p);
        self.scale.swap_remove(row);
        self.err.swap_remove(row);
    }

    /// Number of rows.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.scale.len()
    }

    /// Bytes held on the heap (capacities; allocator overhead not counted).
    pub fn heap_bytes(&self) -> usize {
        self.codes.capacity() + (self.scale.capacity() + self.err.capacity()) * 4
    }

    /// Bytes held per row.
    #[cfg(test)]
    pub fn bytes_per_row(&self) -> usize {
        self.padded + 8
    }
}

/// A query quantised for the integer kernel.
#[derive(Debug, Clone)]
pub struct QuantizedQuery {
    /// `x·q ≈ scale_i · scale · (dot(codes_i, codes) − offset)`.
    scale: f32,
    offset: i32,
    /// Bound terms: `|x·q − approx| ≤ err_i · widen + pad`.
    widen: f32,
    pad: f32,
    /// How many candidates to keep exactly.
    k: usize,
}

/// Quantises `query` (unit length) into `codes` (padded with zeros) and returns its terms.
pub fn quantise_query(query: &[f32], k: usize, codes: &mut Vec<i8>) -> QuantizedQuery {
    let start = codes.len();
    let (scale, err) = quantise(query, QUERY_LEVELS, |c| codes.push(c as i8));
    codes.extend(std::iter::repeat_n(0i8, padded(query.len()) - query.len()));
    let offset = 128 * codes[start..].iter().map(|&c| i32::from(c)).sum::<i32>();
    // Rounding of both f32 dot products: a few ulps per dimension, plus the products above.
    let slack = 4.0 * query.len() as f32 * f32::EPSILON + 1e-6;
    QuantizedQuery {
        scale,
        offset,
        widen: 1.0 + err,
        pad: err + slack,
        k,
    }
}

/// What one scan of some rows found for one query: the best `k` lower bounds and the rows
/// whose upper bound reached the `k`-th of them when they were seen.
#[derive(Debug)]
pub struct Candidates {
    /// The best `k` lower bounds (the one top-k, [`TopK`], with no keys: equal bounds
    /// are interchangeable).
    lower: TopK<(), ()>,
    /// `(row, upper bound)`.
    rows: Vec<(u32, f32)>,
}

impl Candidates {
    /// Nothing found yet, for a query that wants `k` rows.
    pub fn new(k: usize) -> Self {
        Self {
            lower: TopK::new(k),
            rows: Vec::new(),
        }
    }

    /// The `k`-th best lower bound so far (`NEG_INFINITY` until `k` are known).
    fn threshold(&self) -> f32 {
        self.lower.threshold()
    }

    fn offer_lower(&mut self, lower: f32) {
        self.lower.push(lower, (), ());
    }

    /// Drops candidates that can no longer reach the threshold.
    fn prune(&mut self) {
        let t = self.threshold();
        self.rows.retain(|&(_, upper)| upper >= t);
    }

    /// Combines the findings of two disjoint row ranges.
    pub fn merge(mut self, other: Self) -> Self {
        self.lower.merge(other.lower);
        self.rows.extend(other.rows);
        self
    }

    /// The rows that may hold the exact top `k` (ties included).
    pub fn finish(mut self) -> Vec<u32> {
        self.prune();
        self.rows.into_iter().map(|(row, _)| row).collect()
    }
}

/// Files row `row` as a candidate for query `qi` if its upper bound reaches the query's
/// threshold (and the filter accepts it), then updates the threshold.
#[allow(clippy::too_many_arguments)]
#[inline]
fn consider(
    c: &mut Candidates,
    threshold: &mut f32,
    k: usize,
    qi: usize,
    row: usize,
    approx: f32,
    bound: f32,
    accept: Option<&(dyn Fn(usize, u32) -> bool + Sync)>,
) {
    if approx + bound < *threshold {
        return;
    }
    if accept.is_some_and(|f| !f(qi, row as u32)) {
        return;
    }
    c.rows.push((row as u32, approx + bound));
    c.offer_lower(approx - bound);
    *threshold = c.threshold();
    if c.rows.len() >= 4 * k + 256 {
        c.prune();
    }
}

/// Scans `range` of `rows` for every query with `kernels` (the packed batch kernel from
/// as many queries as [`Kernels::packs`] says); `codes` holds the queries' codes back to
/// back. `accept(query, row)` is asked only for rows whose bound could still
/// enter the top.
pub fn scan(
    rows: &QuantizedRows,
    range: Range<usize>,
    queries: &[QuantizedQuery],
    codes: &[i8],
    accept: Option<&(dyn Fn(usize, u32) -> bool + Sync)>,
    kernels: &Kernels,
) -> Vec<Candidates> {
    if kernels.packs(queries.len()) {
        scan_packed(rows, range, queries, codes, accept, kernels)
    } else {
        scan_rows(rows, range, queries, codes, accept, kernels)
    }
}

/// The scan for one or a few queries: row-major integer dot products, a few rows and
/// queries per register block.
fn scan_rows(
    rows: &QuantizedRows,
    range: Range<usize>,
    queries: &[QuantizedQuery],
    codes: &[i8],
    accept: Option<&(dyn Fn(usize, u32) -> bool + Sync)>,
    kernels: &Kernels,
) -> Vec<Candidates> {
    let p = rows.padded;
    let mut found: Vec<Candidates> = queries.iter().map(|q| Candidates::new(q.k)).collect();
    let mut thresholds: Vec<f32> = found.iter().map(Candidates::threshold).collect();
    let mut raw = vec![0i32; TILE_ROWS * QUERY_BLOCK.min(queries.len().max(1))];
    // Per-query terms, contiguous so the per-row check below vectorises.
    let offset: Vec<i32> = queries.iter().map(|q| q.offset).collect();
    let scale: Vec<f32> = queries.iter().map(|q| q.scale).collect();
    let widen: Vec<f32> = queries.iter().map(|q| q.widen).collect();
    let pad: Vec<f32> = queries.iter().map(|q| q.pad).collect();
    let mut start = range.start;
    while start < range.end {
        let end = (start + TILE_ROWS).min(range.end);
        let tile = &rows.codes[start * p..end * p];
        for q0 in (0..queries.len()).step_by(QUERY_BLOCK) {
            let q1 = (q0 + QUERY_BLOCK).min(queries.len());
            let nq = q1 - q0;
            let out = &mut raw[..(end - start) * nq];
            kernels.dots_u8i8(tile, p, &codes[q0 * p..q1 * p], nq, out);
            let (off, sc, wi, pa) = (
                &offset[q0..q1],
                &scale[q0..q1],
                &widen[q0..q1],
                &pad[q0..q1],
            );
            for (i, row) in (start..end).enumerate() {
                let (s, e) = (rows.scale[row], rows.err[row]);
                let dots = &out[i * nq..(i + 1) * nq];
                let upper = |j: usize| {
                    let approx = (dots[j] - off[j]) as f32 * (sc[j] * s);
                    (approx, e.mul_add(wi[j], pa[j]))
                };
                // Branch-free test first: almost every row is rejected for every query.
                let thr = &thresholds[q0..q1];
                let mut any = 0u32;
                for (j, t) in thr.iter().enumerate() {
                    let (a, b) = upper(j);
                    any |= u32::from(a + b >= *t);
                }
                if any == 0 {
                    continue;
                }
                for j in 0..nq {
                    let qi = q0 + j;
                    let (approx, bound) = upper(j);
                    let k = queries[qi].k;
                    consider(
                        &mut found[qi],
                        &mut thresholds[qi],
                        k,
                        qi,
                        row,
                        approx,
                        bound,
                        accept,
                    );
                }
            }
        }
        start = end;
    }
    found
}

/// The scan for a batch: queries packed in groups of [`GROUP`], taken by panels of up to
/// [`MAX_GROUPS`] groups over each chunk of [`CHUNK_ROWS`] rows, so every row loaded from
/// memory serves the whole batch and every query code loaded serves a block of rows. The
/// kernel's [`Kernels::screen`] flags the (row, query) lanes whose upper bound reaches the
/// query's current threshold; only those are looked at one by one, with the same bound
/// arithmetic as [`scan_rows`].
fn scan_packed(
    rows: &QuantizedRows,
    range: Range<usize>,
    queries: &[QuantizedQuery],
    codes: &[i8],
    accept: Option<&(dyn Fn(usize, u32) -> bool + Sync)>,
    kernels: &Kernels,
) -> Vec<Candidates> {
    let p = rows.padded;
    let nq = queries.len();
    let packed = pack_queries(codes, p, nq);
    let groups = nq.div_ceil(GROUP);
    let lanes = groups * GROUP;
    let mut found: Vec<Candidates> = queries.iter().map(|q| Candidates::new(q.k)).collect();
    // Per-lane terms; padding lanes have an infinite threshold, so they never pass.
    let mut offset = vec![0i32; lanes];
    let mut scale = vec![0f32; lanes];
    let mut widen = vec![0f32; lanes];
    let mut pad = vec![0f32; lanes];
    let mut thresholds = vec![f32::INFINITY; lanes];
    for (i, q) in queries.iter().enumerate() {
        (offset[i], scale[i], widen[i], pad[i]) = (q.offset, q.scale, q.widen, q.pad);
        thresholds[i] = found[i].threshold();
    }
    let panel_lanes = MAX_GROUPS * GROUP;
    let mut dots = vec![0i32; CHUNK_ROWS * panel_lanes];
    let mut masks = vec![0u64; CHUNK_ROWS];
    let mut start = range.start;
    while start < range.end {
        let end = (start + CHUNK_ROWS).min(range.end);
        let n = end - start;
        let chunk = &rows.codes[start * p..end * p];
        let (scales, errors) = (&rows.scale[start..end], &rows.err[start..end]);
        for g0 in (0..groups).step_by(MAX_GROUPS) {
            let g = (groups - g0).min(MAX_GROUPS);
            let (width, l0) = (g * GROUP, g0 * GROUP);
            let dots = &mut dots[..n * width];
            kernels.dots_packed(chunk, p, &packed[l0 * p..], g, dots);
            let lane = l0..l0 + width;
            let terms = Terms {
                offset: &offset[lane.clone()],
                scale: &scale[lane.clone()],
                widen: &widen[lane.clone()],
                pad: &pad[lane.clone()],
                threshold: &thresholds[lane],
            };
            let masks = &mut masks[..n];
            kernels.screen(dots, width, scales, errors, terms, masks);
            for (i, &mask) in masks.iter().enumerate() {
                let mut m = mask;
                while m != 0 {
                    let j = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let qi = l0 + j;
                    if qi >= nq {
                        break;
                    }
                    let (s, e) = (scales[i], errors[i]);
                    let approx = (dots[i * width + j] - offset[qi]) as f32 * (scale[qi] * s);
                    let bound = e.mul_add(widen[qi], pad[qi]);
                    let k = queries[qi].k;
                    consider(
                        &mut found[qi],
                        &mut thresholds[qi],
                        k,
                        qi,
                        start + i,
                        approx,
                        bound,
                        accept,
                    );
                }
            }
        }
        start = end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::available;

    /// `n` unit vectors of `dim` values from a seeded generator.
    fn unit_vectors(n: usize, dim: usize, mut seed: u64) -> Vec<Vec<f32>> {
        let mut next = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        (0..n)
            .map(|_| {
                let v: Vec<f32> = (0..dim).map(|_| next()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect()
    }

    type Scan = fn(
        &QuantizedRows,
        Range<usize>,
        &[QuantizedQuery],
        &[i8],
        Option<&(dyn Fn(usize, u32) -> bool + Sync)>,
        &Kernels,
    ) -> Vec<Candidates>;

    /// Small enough for Miri: both scans (row-major and packed, over all rows and over
    /// two parts merged) on every kernel set keep the exact top `k` of every query among
    /// their candidates, and rows a filter rejects out of them. 18 queries fill one packed
    /// group and part of a second.
    #[test]
    fn small_scans_keep_the_exact_top_k_on_every_kernel() {
        let (n, dim) = (40, 24);
        let data = unit_vectors(n, dim, 1);
        let mut rows = QuantizedRows::default();
        for v in &data {
            rows.push(v);
        }
        let even = |_: usize, row: u32| row.is_multiple_of(2);
        let even: &(dyn Fn(usize, u32) -> bool + Sync) = &even;
        // The packed scan only for a batch that fills a group (the cost of the portable
        // packed loops under Miri grows with every lane, padding included).
        for (nq, k, filter) in [(1, 1, None), (3, 4, Some(even)), (18, 3, Some(even))] {
            let queries = unit_vectors(nq, dim, 2 + nq as u64);
            let mut codes = Vec::new();
            let quantised: Vec<_> = queries
                .iter()
                .map(|q| quantise_query(q, k, &mut codes))
                .collect();
            // The exact top k of each query among the rows the filter accepts.
            let want: Vec<Vec<u32>> = queries
                .iter()
                .enumerate()
                .map(|(qi, q)| {
                    let mut scored: Vec<(u32, f64)> = (0..n as u32)
                        .filter(|&r| filter.is_none_or(|f| f(qi, r)))
                        .map(|r| {
                            let row = &data[r as usize];
                            (r, row.iter().zip(q).map(|(a, b)| f64::from(a * b)).sum())
                        })
                        .collect();
                    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
                    scored.iter().take(k).map(|s| s.0).collect()
                })
                .collect();
            for kernels in available() {
                let scans: [(&str, Scan); 2] = [("rows", scan_rows), ("packed", scan_packed)];
                for (name, scan) in scans {
                    if name == "packed" && nq < GROUP {
                        continue;
                    }
                    let whole = scan(&rows, 0..n, &quantised, &codes, filter, kernels);
                    let a = scan(&rows, 0..17, &quantised, &codes, filter, kernels);
                    let b = scan(&rows, 17..n, &quantised, &codes, filter, kernels);
                    let merged = a.into_iter().zip(b).map(|(a, b)| a.merge(b));
                    for (part, found) in [whole, merged.collect()].into_iter().enumerate() {
                        assert_eq!(found.len(), nq);
                        for (qi, c) in found.into_iter().enumerate() {
                            let got = c.finish();
                            let at =
                                format!("{} {name} {part}: query {qi} of {nq}", kernels.name());
                            assert!(want[qi].iter().all(|r| got.contains(r)), "{at}");
                            assert!(got.len() < n / 2, "{at}: the bounds pruned little");
                            if filter.is_some() {
                                assert!(got.iter().all(|r| r.is_multiple_of(2)), "{at}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn row_errors_bound_the_reconstruction() {
        let v: Vec<f32> = (0..40)
            .map(|i| ((i * 37 % 11) as f32 - 5.0) / 13.0)
            .collect();
        let mut rows = QuantizedRows::default();
        rows.push(&v);
        assert_eq!(rows.bytes_per_row(), 64 + 8);
        let s = rows.scale[0];
        let err: f64 = v
            .iter()
            .zip(&rows.codes)
            .map(|(x, c)| (f64::from(*x) - f64::from(s) * (f64::from(*c) - 128.0)).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(err <= f64::from(rows.err[0]));
        assert!(rows.codes[40..].iter().all(|&c| c == 128));
    }

    #[test]
    fn swap_remove_moves_the_last_row() {
        let mut rows = QuantizedRows::default();
        rows.push(&[1.0, 0.0]);
        rows.push(&[0.0, 1.0]);
        rows.push(&[0.6, 0.8]);
        rows.swap_remove(0);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.codes[..2], [(128 + 95) as u8, (128 + 127) as u8]);
        rows.swap_remove(1);
        rows.swap_remove(0);
        assert_eq!(rows.len(), 0);
        assert!(rows.codes.is_empty());
    }
}
