//! Snowball stemming (English, and the other languages of `rust-stemmers`) with a
//! per-thread cache of recent stems, one per language.
//!
//! Stemming a word costs about half a microsecond and allocates when the stem differs;
//! natural text repeats a small vocabulary, so each thread remembers the stems it computed
//! (bounded: the cache is emptied when it fills).

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// At most this many words are remembered per thread.
const CACHE_CAPACITY: usize = 8192;

type Stems = HashMap<Box<str>, Box<str>>;

thread_local! {
    static STEMS: RefCell<Stems> = RefCell::new(HashMap::new());
    /// The other languages' caches, by language (found by a short linear search: a
    /// thread meets few languages).
    static OTHER_STEMS: RefCell<Vec<(Algorithm, Stems)>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with the English stem of `word` (lowercase ASCII).
pub(super) fn with_stem<R>(word: &str, f: impl FnOnce(&str) -> R) -> R {
    STEMS.with(|cache| {
        // Re-entered from inside `f` (the cache borrowed): stem without the cache.
        let mut cache = cache.try_borrow_mut().ok();
        cached(cache.as_deref_mut(), Algorithm::English, word, f)
    })
}

/// Calls `f` with the stem of `word` (lowercase) by the stemmer of `algorithm`.
pub(super) fn with_stem_in<R>(algorithm: Algorithm, word: &str, f: impl FnOnce(&str) -> R) -> R {
    if algorithm == Algorithm::English {
        return with_stem(word, f);
    }
    OTHER_STEMS.with(|caches| {
        let Ok(mut caches) = caches.try_borrow_mut() else {
            return f(&Stemmer::create(algorithm).stem(word));
        };
        let at = match caches.iter().position(|(a, _)| *a == algorithm) {
            Some(at) => at,
            None => {
                caches.push((algorithm, HashMap::new()));
                caches.len() - 1
            }
        };
        cached(Some(&mut caches[at].1), algorithm, word, f)
    })
}

/// Calls `f` with the stem of `word`, from `cache` or computed and remembered there
/// (without a cache, re-entered from inside `f`, computed only).
fn cached<R>(
    cache: Option<&mut Stems>,
    algorithm: Algorithm,
    word: &str,
    f: impl FnOnce(&str) -> R,
) -> R {
    let Some(cache) = cache else {
        return f(&Stemmer::create(algorithm).stem(word));
    };
    if let Some(stem) = cache.get(word) {
        return f(stem);
    }
    let stem: Box<str> = Stemmer::create(algorithm).stem(word).into();
    let out = f(&stem);
    if cache.len() >= CACHE_CAPACITY {
        cache.clear();
    }
    cache.insert(word.into(), stem);
    out
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
