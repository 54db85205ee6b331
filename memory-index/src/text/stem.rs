//! English Snowball stemming with a per-thread cache of recent stems.
//!
//! Stemming a word costs about half a microsecond and allocates when the stem differs;
//! natural text repeats a small vocabulary, so each thread remembers the stems it computed
//! (bounded: the cache is emptied when it fills).

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// At most this many words are remembered per thread.
const CACHE_CAPACITY: usize = 8192;

thread_local! {
    static STEMS: RefCell<HashMap<Box<str>, Box<str>>> = RefCell::new(HashMap::new());
}

/// Calls `f` with the English stem of `word` (lowercase ASCII).
pub(super) fn with_stem<R>(word: &str, f: impl FnOnce(&str) -> R) -> R {
    STEMS.with(|cache| {
        let Ok(mut cache) = cache.try_borrow_mut() else {
            // Re-entered from inside `f`: stem without the cache.
            return f(&Stemmer::create(Algorithm::English).stem(word));
        };
        if let Some(stem) = cache.get(word) {
            return f(stem);
        }
        let stem: Box<str> = Stemmer::create(Algorithm::English).stem(word).into();
        let out = f(&stem);
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(word.into(), stem);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_and_uncached_stems_agree() {
        for w in ["lives", "living", "museums", "running", "glass", "since"] {
            let first = with_stem(w, str::to_owned);
            let second = with_stem(w, str::to_owned);
            assert_eq!(first, second);
            assert_eq!(first, Stemmer::create(Algorithm::English).stem(w));
        }
    }

    #[test]
    fn reentrant_use_does_not_panic() {
        let outer = with_stem("cats", |s| {
            format!("{s}-{}", with_stem("dogs", str::to_owned))
        });
        assert_eq!(outer, "cat-dog");
    }
}
