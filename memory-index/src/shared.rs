//! Copy-on-write slices: a part of one array shared by many owners (the sparse index read
//! back from a snapshot keeps every term's postings, and every document's terms, as
//! ranges of a few arrays, instead of one allocation each), copied into a vector of its
//! own the first time it is changed.

use std::ops::Deref;
use std::sync::Arc;

/// A slice that is either owned or a range of a shared array.
#[derive(Debug, Clone)]
pub enum Buf<T> {
    /// A vector of its own.
    Owned(Vec<T>),
    /// `all[start..end]` (the array behind one more pointer, so a `Buf` is no larger
    /// than a `Vec`).
    Shared {
        all: Arc<Vec<T>>,
        start: u32,
        end: u32,
    },
}

impl<T> Default for Buf<T> {
    fn default() -> Self {
        Self::Owned(Vec::new())
    }
}

impl<T> Deref for Buf<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Self::Owned(v) => v,
            Self::Shared { all, start, end } => &all[*start as usize..*end as usize],
        }
    }
}

impl<T> Buf<T> {
    /// `all[range]`, shared. The caller checks that the range is within `all`.
    pub fn shared(all: &Arc<Vec<T>>, start: u32, end: u32) -> Self {
        debug_assert!(start <= end && end as usize <= all.len());
        Self::Shared {
            all: Arc::clone(all),
            start,
            end,
        }
    }

    /// Elements this slice stands for on the heap: its own room when owned, its range of
    /// the shared array otherwise (so the ranges of one array add up to about the array,
    /// which lives as long as any of them).
    pub fn held(&self) -> usize {
        match self {
            Self::Owned(v) => v.capacity(),
            Self::Shared { start, end, .. } => (end - start) as usize,
        }
    }

    /// Room held on the heap for this slice alone (a shared range holds none of its own).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        match self {
            Self::Owned(v) => v.capacity(),
            Self::Shared { .. } => 0,
        }
    }
}

impl<T: Clone> Buf<T> {
    /// The slice as a vector of its own, to change: a shared range is copied first.
    #[inline]
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if let Self::Shared { .. } = self {
            *self = Self::Owned(self.to_vec());
        }
        match self {
            Self::Owned(v) => v,
            Self::Shared { .. } => unreachable!("made owned just above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_range_is_copied_when_changed_and_the_array_is_left_alone() {
        assert_eq!(
            std::mem::size_of::<Buf<u8>>(),
            std::mem::size_of::<Vec<u8>>()
        );
        let all = Arc::new(b"abcdef".to_vec());
        let mut a = Buf::shared(&all, 1, 4);
        let b = Buf::shared(&all, 3, 6);
        assert_eq!((&*a, &*b), (&b"bcd"[..], &b"def"[..]));
        assert_eq!(a.capacity(), 0);
        a.to_mut().push(b'x');
        assert_eq!(
            (&*a, &*b, &all[..]),
            (&b"bcdx"[..], &b"def"[..], &b"abcdef"[..])
        );
        assert!(a.capacity() >= 4);
        assert_eq!(Arc::strong_count(&all), 2);
    }
}
