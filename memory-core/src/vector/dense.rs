//! L2-normalised embeddings stored contiguously, searched by brute-force cosine.

use crate::error::{MemoryError, Result};

const NO_ROW: u32 = u32::MAX;

/// Returns `v / |v|`, refusing empty, zero, infinite and NaN vectors; `what` names the
/// vector in the error. Every store normalises embeddings with this before storing or
/// comparing them, so cosine similarity is a dot product.
///
/// ```
/// use agentmemory_core::vector::normalized;
///
/// let v = normalized(vec![3.0, 4.0], "embedding").unwrap();
/// assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
/// assert!(normalized(vec![0.0, 0.0], "embedding").is_err());
/// ```
pub fn normalized(mut v: Vec<f32>, what: &'static str) -> Result<Vec<f32>> {
    if v.is_empty() {
        return Err(MemoryError::invalid(what, "the embedding is empty"));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(MemoryError::invalid(
            what,
            "the embedding contains NaN or infinite values",
        ));
    }
    let norm = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(MemoryError::invalid(
            what,
            "the embedding has zero length and cannot be normalised",
        ));
    }
    for x in &mut v {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(v)
}

/// One row of `dim` floats per embedded document, in one `Vec<f32>` so a search scans
/// memory linearly. Rows are swap-removed; `slot_row` / `row_slot` map between caller
/// slots and rows.
#[derive(Debug, Default)]
pub(crate) struct DenseIndex {
    dim: Option<usize>,
    data: Vec<f32>,
    row_slot: Vec<u32>,
    slot_row: Vec<u32>,
}

impl DenseIndex {
    /// Number of embedded documents.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.row_slot.len()
    }

    /// Whether no document has an embedding.
    pub(crate) fn is_empty(&self) -> bool {
        self.row_slot.is_empty()
    }

    fn row_of(&self, slot: u32) -> Option<usize> {
        match self.slot_row.get(slot as usize) {
            Some(&r) if r != NO_ROW => Some(r as usize),
            _ => None,
        }
    }

    /// The dimension fixed by the stored vectors, `None` while there are none.
    pub(crate) fn dim(&self) -> Option<usize> {
        self.dim
    }

    /// Fails with [`MemoryError::DimensionMismatch`] unless a vector of `len` floats fits.
    pub(crate) fn check_dim(&self, len: usize) -> Result<()> {
        match self.dim {
            Some(d) if d != len => Err(MemoryError::DimensionMismatch {
                expected: d,
                found: len,
            }),
            _ => Ok(()),
        }
    }

    /// Stores a normalised vector for `slot`, replacing its previous one.
    pub(crate) fn insert(&mut self, slot: u32, v: &[f32]) -> Result<()> {
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
        Ok(())
    }

    /// Drops the vector of `slot`, if any. The dimension is released when no vector is left.
    pub(crate) fn remove(&mut self, slot: u32) {
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
        self.slot_row[slot as usize] = NO_ROW;
        if self.row_slot.is_empty() {
            self.dim = None;
        }
    }

    /// The stored (normalised) vector of `slot`.
    pub(crate) fn get(&self, slot: u32) -> Option<&[f32]> {
        let row = self.row_of(slot)?;
        let dim = self.dim?;
        self.data.get(row * dim..(row + 1) * dim)
    }

    /// Calls `f(slot, cosine)` for every stored vector; `query` must be normalised and of
    /// the index's dimension.
    pub(crate) fn score(&self, query: &[f32], mut f: impl FnMut(u32, f32)) {
        let Some(dim) = self.dim else { return };
        if query.len() != dim {
            return;
        }
        for (row, chunk) in self.data.chunks_exact(dim).enumerate() {
            f(self.row_slot[row], dot(chunk, query));
        }
    }
}

/// Dot product in eight independent lanes so the compiler can vectorise it.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Err(MemoryError::DimensionMismatch {
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

    #[test]
    fn dot_handles_remainders() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let want: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), want);
    }
}
