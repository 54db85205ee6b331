//! [`Tensor`]: a run of `f32` values inside one buffer shared by all the encoder's tensors,
//! the buffer either in memory or a memory-mapped packed-weights file.

use std::ops::{Deref, Range};
use std::sync::Arc;

use super::packed::Mapped;

/// Every weight of the encoder in its packed form ([`layout`](super::layout)).
pub(crate) enum Buffer {
    /// Read and converted in this process.
    Owned(Vec<f32>),
    /// Mapped from a packed-weights file written by an earlier load.
    Mapped(Mapped),
}

impl Buffer {
    pub(crate) fn values(&self) -> &[f32] {
        match self {
            Buffer::Owned(values) => values,
            Buffer::Mapped(mapped) => mapped.values(),
        }
    }
}

/// Values `range` of a shared [`Buffer`], read as a slice.
#[derive(Clone)]
pub(crate) struct Tensor {
    buffer: Arc<Buffer>,
    range: Range<usize>,
}

impl Tensor {
    /// The values `range` of `buffer`; `None` when the buffer is shorter.
    pub(crate) fn new(buffer: Arc<Buffer>, range: Range<usize>) -> Option<Self> {
        buffer.values().get(range.clone())?;
        Some(Self { buffer, range })
    }
}

impl Deref for Tensor {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        // In bounds: checked in `new`, and a buffer never changes length.
        &self.buffer.values()[self.range.clone()]
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor({:?})", self.range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tensor_is_its_range_of_the_buffer_and_never_past_it() {
        let buffer = Arc::new(Buffer::Owned((0..10).map(|v| v as f32).collect()));
        let t = Tensor::new(Arc::clone(&buffer), 2..5).unwrap();
        assert_eq!(&*t, &[2.0, 3.0, 4.0]);
        assert_eq!(t.len(), 3);
        assert!(Tensor::new(Arc::clone(&buffer), 8..11).is_none());
        assert!(Tensor::new(buffer, 10..10).is_some_and(|t| t.is_empty()));
    }
}
