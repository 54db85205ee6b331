//! A bounded heap keeping the best `k` scored items, ties broken by key.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// One candidate. Ordered so that the *worst* candidate is the greatest, which puts it at
/// the top of the (max-)heap where it can be evicted in O(log k).
#[derive(Debug)]
struct Entry<K, V> {
    score: f32,
    key: K,
    value: V,
}

impl<K: Ord, V> Entry<K, V> {
    /// `Less` when `self` ranks better than `other`: higher score, then smaller key.
    fn rank(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.key.cmp(&other.key))
    }
}

impl<K: Ord, V> PartialEq for Entry<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.rank(other) == Ordering::Equal
    }
}

impl<K: Ord, V> Eq for Entry<K, V> {}

impl<K: Ord, V> PartialOrd for Entry<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Ord, V> Ord for Entry<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank(other)
    }
}

/// The best `k` items pushed so far, by descending score then ascending key.
///
/// Memory is O(k) and each push is O(log k), so a scan over `n` candidates costs
/// O(n log k). Non-finite scores are ignored.
#[derive(Debug)]
pub struct TopK<K, V> {
    k: usize,
    heap: BinaryHeap<Entry<K, V>>,
}

impl<K: Ord, V> TopK<K, V> {
    /// An empty collector for the best `k` items.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k.min(1024) + 1),
        }
    }

    /// Offers a candidate.
    pub fn push(&mut self, score: f32, key: K, value: V) {
        if self.k == 0 || !score.is_finite() {
            return;
        }
        let entry = Entry { score, key, value };
        if self.heap.len() < self.k {
            self.heap.push(entry);
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if entry < *worst {
                *worst = entry;
            }
        }
    }

    /// Whether a candidate with this score could still enter (cheap pre-check before
    /// building the key and value).
    pub fn admits(&self, score: f32) -> bool {
        if self.k == 0 || !score.is_finite() {
            return false;
        }
        self.heap.len() < self.k || self.heap.peek().is_some_and(|w| score >= w.score)
    }

    /// The score a new candidate needs to be kept: `NEG_INFINITY` until `k` items are
    /// held (and `INFINITY` for `k == 0`); ties with the worst kept item may still enter.
    pub fn threshold(&self) -> f32 {
        if self.k == 0 {
            f32::INFINITY
        } else if self.heap.len() < self.k {
            f32::NEG_INFINITY
        } else {
            self.heap.peek().map_or(f32::NEG_INFINITY, |w| w.score)
        }
    }

    /// Offers every item `other` kept (the best `k` of two disjoint scans).
    pub fn merge(&mut self, other: Self) {
        for e in other.heap {
            self.push(e.score, e.key, e.value);
        }
    }

    /// The kept items, best first.
    pub fn into_sorted(self) -> Vec<(f32, K, V)> {
        // `into_sorted_vec` is ascending by `Ord`, i.e. best first.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|e| (e.score, e.key, e.value))
            .collect()
    }
}

/// How [`best`] breaks ties between equal scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// The smaller id first (documents, facts).
    SmallerIdFirst,
    /// The larger id first: with ULIDs, the more recent (episodes).
    LargerIdFirst,
}

/// The best `k` of `items`, best first: by descending score (`key`'s first part), ties
/// by id (its second part) as `ties` says; items with a non-finite score are left out.
/// The top-k selection every ranked list in the workspace ends in, O(n log k).
///
/// ```
/// use agentmemory_index::topk::{best, Ties};
///
/// let found = vec![("b", 0.5), ("a", 0.5), ("c", 0.9), ("d", 0.1)];
/// let top = best(found.clone(), 3, |&(id, s)| (s, id), Ties::SmallerIdFirst);
/// assert_eq!(top, [("c", 0.9), ("a", 0.5), ("b", 0.5)]);
/// let top = best(found, 2, |&(id, s)| (s, id), Ties::LargerIdFirst);
/// assert_eq!(top, [("c", 0.9), ("b", 0.5)]);
/// ```
pub fn best<T>(
    items: Vec<T>,
    k: usize,
    key: impl for<'a> Fn(&'a T) -> (f32, &'a str),
    ties: Ties,
) -> Vec<T> {
    fn order<'a, T, K: Ord>(
        items: &'a [T],
        k: usize,
        key: impl Fn(&'a T) -> (f32, K),
    ) -> Vec<usize> {
        let mut top = TopK::new(k);
        for (i, item) in items.iter().enumerate() {
            let (score, id) = key(item);
            top.push(score, id, i);
        }
        top.into_sorted().into_iter().map(|(_, _, i)| i).collect()
    }
    let order = match ties {
        Ties::SmallerIdFirst => order(&items, k, &key),
        Ties::LargerIdFirst => order(&items, k, |t| {
            let (score, id) = key(t);
            (score, Reverse(id))
        }),
    };
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_best_k_best_first_ties_by_key() {
        let mut top = TopK::new(3);
        for (s, k) in [
            (0.5, "e"),
            (0.9, "b"),
            (0.1, "z"),
            (0.9, "a"),
            (0.7, "c"),
            (0.5, "d"),
        ] {
            top.push(s, k, ());
        }
        let keys: Vec<_> = top.into_sorted().into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c"]);
    }

    #[test]
    fn zero_k_and_nan_keep_nothing() {
        let mut top = TopK::new(0);
        top.push(1.0, 1, ());
        assert!(top.into_sorted().is_empty());
        let mut top = TopK::new(2);
        top.push(f32::NAN, 1, ());
        assert!(top.into_sorted().is_empty());
    }

    #[test]
    fn equal_score_smaller_key_evicts_larger() {
        let mut top = TopK::new(1);
        top.push(0.5, "b", ());
        assert!(top.admits(0.5));
        top.push(0.5, "a", ());
        top.push(0.4, "0", ());
        let keys: Vec<_> = top.into_sorted().into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["a"]);
    }
}
