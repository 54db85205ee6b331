//! A map bounded by the estimated bytes of its entries, evicting the least recently used.
//!
//! The stores keep two caches in it: each recently used user's indexed facts
//! ([`RankedFacts`](agentmemory_core::store_support::RankedFacts)) and each recently used
//! document namespace's search index. Both are rebuilt from the backend when missing, so
//! evicting one only costs the next use a reload; values are `Arc`s (or hold them), so a
//! search or write still holding an evicted entry finishes on it undisturbed.
//!
//! Sizes are estimates given by the caller (`heap_bytes` of the value) plus
//! [`ENTRY_OVERHEAD`] and the key. The entry used last is never evicted, even when it
//! alone is over the budget: rebuilding it on every use would cost far more than it
//! holds. So the bytes held stay under the budget, or are one entry when that entry is
//! larger than the budget.
//!
//! One mutex guards the map; every operation is O(log n) (a `HashMap` lookup and a
//! `BTreeMap` of use ticks for the order).

// Each backend uses part of the cache's methods: all of them are used with every backend on.
#![cfg_attr(
    not(all(
        feature = "sqlite",
        feature = "file",
        feature = "redis",
        feature = "postgres"
    )),
    allow(dead_code)
)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Bytes an entry costs beyond its value's estimate and its key: the map's and the use
/// order's slots and bookkeeping.
pub(crate) const ENTRY_OVERHEAD: usize = 128;

/// What a cache holds and has evicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct LruStats {
    /// Entries held.
    pub(crate) entries: usize,
    /// Their estimated bytes.
    pub(crate) bytes: usize,
    /// The budget.
    pub(crate) budget: usize,
    /// Entries evicted for room since the cache was made.
    pub(crate) evictions: u64,
}

struct Slot<V> {
    value: V,
    bytes: usize,
    used_at: u64,
}

struct State<V> {
    budget: usize,
    bytes: usize,
    clock: u64,
    map: HashMap<Arc<str>, Slot<V>>,
    /// Keys by the tick of their last use, oldest first.
    order: BTreeMap<u64, Arc<str>>,
    evictions: u64,
}

impl<V> State<V> {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn touch(&mut self, key: &str) {
        let now = self.tick();
        if let Some((k, slot)) = self.map.get_key_value(key) {
            let (k, before) = (Arc::clone(k), slot.used_at);
            self.order.remove(&before);
            self.order.insert(now, k);
            if let Some(slot) = self.map.get_mut(key) {
                slot.used_at = now;
            }
        }
    }

    fn remove(&mut self, key: &str) -> Option<V> {
        let slot = self.map.remove(key)?;
        self.order.remove(&slot.used_at);
        self.bytes -= slot.bytes;
        Some(slot.value)
    }

    /// Evicts the least recently used entries while over the budget, keeping the last one.
    fn evict(&mut self) {
        while self.bytes > self.budget && self.map.len() > 1 {
            let Some((_, key)) = self.order.pop_first() else {
                break;
            };
            if let Some(slot) = self.map.remove(&key) {
                self.bytes -= slot.bytes;
                self.evictions += 1;
            }
        }
    }
}

fn cost(key: &str, bytes: usize) -> usize {
    bytes + key.len() + ENTRY_OVERHEAD
}

/// A map from string keys to `V`, bounded by estimated bytes (see the module).
pub(crate) struct Lru<V> {
    state: Mutex<State<V>>,
}

impl<V> std::fmt::Debug for Lru<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lru").field("stats", &self.stats()).finish()
    }
}

impl<V> Lru<V> {
    /// An empty cache holding at most about `budget` bytes.
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            state: Mutex::new(State {
                budget,
                bytes: 0,
                clock: 0,
                map: HashMap::new(),
                order: BTreeMap::new(),
                evictions: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<V>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the budget, evicting what no longer fits.
    pub(crate) fn set_budget(&self, budget: usize) {
        let mut state = self.lock();
        state.budget = budget;
        state.evict();
    }

    /// Files `value` under `key` as used now, costing `bytes` (plus the key and
    /// [`ENTRY_OVERHEAD`]), replacing any value there; evicts what no longer fits.
    pub(crate) fn insert(&self, key: &str, value: V, bytes: usize) {
        Self::file(&mut self.lock(), key, value, bytes);
    }

    fn file(state: &mut State<V>, key: &str, value: V, bytes: usize) {
        state.remove(key);
        let now = state.tick();
        let key: Arc<str> = key.into();
        let bytes = cost(&key, bytes);
        state.bytes += bytes;
        state.order.insert(now, Arc::clone(&key));
        state.map.insert(
            key,
            Slot {
                value,
                bytes,
                used_at: now,
            },
        );
        state.evict();
    }

    /// Takes the value of `key` out if `wanted` accepts it.
    pub(crate) fn remove_if(&self, key: &str, wanted: impl FnOnce(&V) -> bool) -> Option<V> {
        let mut state = self.lock();
        if !wanted(&state.map.get(key)?.value) {
            return None;
        }
        state.remove(key)
    }

    /// Takes the value of `key` out.
    pub(crate) fn remove(&self, key: &str) -> Option<V> {
        self.lock().remove(key)
    }

    /// Sets the cost of `key`'s entry to `bytes` if `same` says it still holds the value
    /// that was measured; evicts what no longer fits (never this entry, which counts as
    /// used now).
    pub(crate) fn resize(&self, key: &str, bytes: usize, same: impl FnOnce(&V) -> bool) {
        let mut state = self.lock();
        let Some(slot) = state.map.get_mut(key) else {
            return;
        };
        if !same(&slot.value) {
            return;
        }
        let (before, after) = (slot.bytes, cost(key, bytes));
        slot.bytes = after;
        state.bytes = state.bytes - before + after;
        state.touch(key);
        state.evict();
    }

    /// What the cache holds now.
    pub(crate) fn stats(&self) -> LruStats {
        let state = self.lock();
        LruStats {
            entries: state.map.len(),
            bytes: state.bytes,
            budget: state.budget,
            evictions: state.evictions,
        }
    }
}

impl<V: Clone> Lru<V> {
    /// The value of `key`, marked used, if `wanted` accepts it.
    pub(crate) fn get_if(&self, key: &str, wanted: impl FnOnce(&V) -> bool) -> Option<V> {
        let mut state = self.lock();
        let value = state.map.get(key).map(|s| &s.value).filter(|v| wanted(v))?;
        let value = value.clone();
        state.touch(key);
        Some(value)
    }

    /// The value of `key`, marked used.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<V> {
        self.get_if(key, |_| true)
    }

    /// The value of `key`, marked used, or `make()` filed under it with `bytes` (to be
    /// corrected by [`resize`](Self::resize) once known).
    pub(crate) fn get_or_insert_with(
        &self,
        key: &str,
        bytes: usize,
        make: impl FnOnce() -> V,
    ) -> V {
        let mut state = self.lock();
        if state.map.contains_key(key) {
            state.touch(key);
            return state.map[key].value.clone();
        }
        let value = make();
        Self::file(&mut state, key, value.clone(), bytes);
        value
    }
}

/// When a cached index that changes in place is due to be measured again: after a
/// (re)build, and once the documents written or removed since the last measure reach an
/// eighth of those it held then. Measuring walks the whole index, so this keeps its cost
/// O(1) per document written, and a recorded size lags the truth by at most that eighth.
#[derive(Debug, Default)]
#[cfg_attr(not(any(feature = "sqlite", feature = "redis")), allow(dead_code))]
pub(crate) struct Remeasure {
    measured_docs: std::sync::atomic::AtomicUsize,
    unmeasured: std::sync::atomic::AtomicUsize,
}

#[cfg_attr(not(any(feature = "sqlite", feature = "redis")), allow(dead_code))]
impl Remeasure {
    /// Notes `n` documents written or removed; whether a measure is due.
    pub(crate) fn changed(&self, n: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let unmeasured = self.unmeasured.fetch_add(n, Relaxed) + n;
        unmeasured.saturating_mul(8) > self.measured_docs.load(Relaxed)
    }

    /// Notes a measure of the index holding `docs` documents.
    pub(crate) fn measured(&self, docs: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.measured_docs.store(docs, Relaxed);
        self.unmeasured.store(0, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: usize = ENTRY_OVERHEAD + 1; // a one-letter key's cost beyond its value

    #[test]
    fn eviction_by_bytes_keeps_the_total_under_the_budget() {
        let one = 100 + 3 + ENTRY_OVERHEAD;
        let lru = Lru::new(10 * one + one / 2);
        for i in 0..100u32 {
            lru.insert(&format!("{i:03}"), i, 100);
            let stats = lru.stats();
            assert!(stats.bytes <= stats.budget, "{stats:?}");
        }
        let stats = lru.stats();
        assert_eq!(
            (stats.entries, stats.bytes, stats.evictions),
            (10, 10 * one, 90)
        );
        // The ten most recent are the ones kept.
        assert!((90..100).all(|i| lru.get(&format!("{i:03}")) == Some(i)));
    }

    #[test]
    fn the_least_recently_used_goes_first() {
        let lru = Lru::new(3 * (100 + E));
        lru.insert("a", 1, 100);
        lru.insert("b", 2, 100);
        lru.insert("c", 3, 100);
        assert_eq!(lru.get("a"), Some(1)); // a is now the most recent
        lru.insert("d", 4, 100); // evicts b, the least recently used
        assert_eq!(lru.get("b"), None);
        assert_eq!(lru.get("a"), Some(1));
        assert_eq!(lru.get("c"), Some(3));
        assert_eq!(lru.get("d"), Some(4));
        // One large entry pushes out as many as it needs.
        lru.insert("e", 5, 3 * (100 + E) - E);
        assert_eq!(lru.stats().entries, 1);
        assert_eq!(lru.get("e"), Some(5));
        assert_eq!(lru.stats().evictions, 4);
    }

    #[test]
    fn the_entry_used_last_is_kept_even_over_the_budget() {
        let lru = Lru::new(50);
        lru.insert("a", 1, 10);
        lru.insert("b", 2, 1_000);
        assert_eq!((lru.get("a"), lru.get("b")), (None, Some(2)));
        assert_eq!(lru.stats().entries, 1);
    }

    #[test]
    fn a_resize_counts_the_measured_value_only_and_evicts_others() {
        let lru = Lru::new(2 * (100 + E));
        let first = lru.get_or_insert_with("a", 0, || Arc::new(1));
        lru.insert("b", Arc::new(2), 100);
        // "a" was replaced: the size measured on the old value is not filed.
        lru.insert("a", Arc::new(3), 100);
        lru.resize("a", 10_000, |v| Arc::ptr_eq(v, &first));
        assert_eq!(lru.stats().bytes, 2 * (100 + E));
        let now = lru.get("a").expect("a");
        lru.resize("a", 150, |v| Arc::ptr_eq(v, &now));
        assert_eq!(
            lru.get("b"),
            None,
            "b was evicted to make room for a's growth"
        );
        assert_eq!(lru.stats().bytes, 150 + E);
    }

    #[test]
    fn a_smaller_budget_evicts_at_once_and_removal_gives_bytes_back() {
        let lru = Lru::new(1 << 20);
        for k in ["a", "b", "c", "d"] {
            lru.insert(k, 0u8, 100);
        }
        assert_eq!(lru.remove("a"), Some(0));
        assert_eq!(lru.remove_if("b", |_| false), None);
        assert_eq!(lru.stats().bytes, 3 * (100 + E));
        lru.set_budget(100 + E);
        assert_eq!(lru.stats().entries, 1);
        assert_eq!(lru.get("d"), Some(0));
    }
}
