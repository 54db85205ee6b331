//! One text analysis for every index: text → terms, the same way at index time and at
//! query time, in every backend.
//!
//! The pipeline, for each word of the text:
//!
//! 1. **Segmentation** by the Unicode word boundaries of UAX #29 (`unicode-segmentation`):
//!    `"user's"` and `"3.14"` stay whole, punctuation and spaces separate words.
//! 2. **Folding**: compatibility decomposition (NFKD), combining marks dropped, lowercase;
//!    `"Crème"` → `"creme"`, `"ＡＢＣ"` → `"abc"`, `"Straße"` → `"strasse"`, `’` → `'`.
//! 3. **Stop words** (a short English list, negations kept) are dropped.
//! 4. **Stemming** of ASCII words with the English Snowball stemmer (`rust-stemmers`):
//!    `"lives"` and `"living"` → `"live"`, `"museums"` → `"museum"`.
//!
//! Runs of CJK characters (Han, Kana, Hangul) have no spaces between words, so they are
//! indexed as overlapping character **bigrams** (a run of one character as that
//! character): `"我住在北京"` → `我住 住在 在北 北京`, and the query `"北京"` → `北京`
//! finds it. **Emoji** are terms of their own, variation selectors and skin tones
//! dropped, so `"👍🏽"` matches `"👍"`.
//!
//! ```
//! use agentmemory_index::text::terms;
//!
//! assert_eq!(terms("The user LIKES museums, since 2024!"), ["user", "like", "museum", "sinc", "2024"]);
//! assert_eq!(terms("Where do I live?"), terms("lives")); // both "live"
//! assert_eq!(terms("Crème brûlée"), ["creme", "brule"]);
//! assert_eq!(terms("我住在北京"), ["我住", "住在", "在北", "北京"]);
//! assert_eq!(terms("loves 🍕!"), ["love", "🍕"]);
//! assert!(terms("it is the").is_empty());
//! ```

use std::collections::HashMap;
use std::hash::BuildHasher;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

mod ascii;
mod script;
pub mod sentence;
mod stem;
mod stop;

use script::{is_cjk, is_emoji_modifier, is_pictographic};
use stop::is_stop_word;

/// Calls `f` with each term of `text`, in order (repeats included).
///
/// Allocates only a few scratch buffers per call, not per term (a stem that differs from
/// its word is the exception). Use this on hot paths; [`terms`] collects the same terms.
///
/// ```
/// let mut seen = Vec::new();
/// agentmemory_index::text::for_each_term("Cats and dogs", |t| seen.push(t.to_owned()));
/// assert_eq!(seen, ["cat", "dog"]);
/// ```
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    if text.is_ascii() {
        ascii::for_each_word(text, |w| emit_word(w, &mut word, &mut f));
        return;
    }
    let mut run = String::new();
    for segment in text.split_word_bounds() {
        let mut chars = segment.chars();
        let Some(first) = chars.next() else { continue };
        if is_cjk(first) {
            run.push_str(segment);
            continue;
        }
        flush_cjk(&mut run, &mut f);
        if segment.chars().any(char::is_alphanumeric) {
            emit_word(segment, &mut word, &mut f);
        } else if segment.chars().any(is_pictographic) {
            word.clear();
            word.extend(segment.chars().filter(|&c| !is_emoji_modifier(c)));
            if !word.is_empty() {
                f(&word);
            }
        }
    }
    flush_cjk(&mut run, &mut f);
}

/// What [`for_each_term_id`] remembers of a word that yields no term (a stop word).
pub const NO_TERM: u32 = u32::MAX;

/// The term ids of ASCII words already analysed, for [`for_each_term_id`].
#[derive(Debug, Default)]
pub struct WordTerms<S> {
    /// Words of at most 16 bytes, packed into an integer zero-padded (an ASCII word
    /// has no NUL byte): hashed and compared without reading a key elsewhere in memory.
    short: HashMap<u128, u32, S>,
    long: HashMap<Box<str>, u32, S>,
}

fn packed(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    let mut key = [0u8; 16];
    key.get_mut(..bytes.len())?.copy_from_slice(bytes);
    Some(u128::from_le_bytes(key))
}

impl<S: BuildHasher> WordTerms<S> {
    fn get(&self, word: &str) -> Option<u32> {
        match packed(word) {
            Some(key) => self.short.get(&key).copied(),
            None => self.long.get(word).copied(),
        }
    }

    fn insert(&mut self, word: &str, term: u32) {
        match packed(word) {
            Some(key) => self.short.insert(key, term),
            None => self.long.insert(word.into(), term),
        };
    }
}

/// Calls `f` with an id of each term of `text`, in order: what [`for_each_term`] yields,
/// each term turned into an id by `id` (which must not return [`NO_TERM`]).
///
/// For analysing many texts: a word of ASCII text always yields the same term (or none),
/// so `words` remembers, per word as written, the id of its term, and a word met again is
/// one lookup instead of folding, a stop-word check and stemming.
pub fn for_each_term_id<S: BuildHasher>(
    text: &str,
    words: &mut WordTerms<S>,
    mut id: impl FnMut(&str) -> u32,
    mut f: impl FnMut(u32),
) {
    if !text.is_ascii() {
        for_each_term(text, |t| f(id(t)));
        return;
    }
    let mut scratch = String::new();
    ascii::for_each_word(text, |w| {
        let term = match words.get(w) {
            Some(term) => term,
            None => {
                let mut term = NO_TERM;
                emit_word(w, &mut scratch, &mut |t: &str| term = id(t));
                words.insert(w, term);
                term
            }
        };
        if term != NO_TERM {
            f(term);
        }
    });
}

/// Folds `segment` into `scratch`, drops it if it is a stop word, stems it and emits it.
fn emit_word(segment: &str, scratch: &mut String, f: &mut impl FnMut(&str)) {
    fold_into(segment, scratch);
    if scratch.is_empty() || is_stop_word(scratch) {
        return;
    }
    if scratch.len() > 2 && scratch.is_ascii() && scratch.bytes().any(|b| b.is_ascii_alphabetic()) {
        stem::with_stem(scratch, |s| f(s));
    } else {
        f(scratch);
    }
}

/// The terms of `text`, in order (repeats included).  
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// The terms of `text` joined by single spaces, for engines that index pre-analysed text
/// with a whitespace tokenizer. Terms never contain whitespace.
///
/// ```
/// assert_eq!(agentmemory_index::text::index_text("Lives in Zürich 🚲"), "live zurich 🚲");
/// ```
pub fn index_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for_each_term(text, |t| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    });
    out
}

/// Writes the folded form of `word` into `out`: NFKD, combining marks dropped, lowercase,
/// typographic apostrophes made plain, `ß` → `ss`.
fn fold_into(word: &str, out: &mut String) {
    out.clear();
    if word.is_ascii() {
        out.extend(word.bytes().map(|b| b.to_ascii_lowercase() as char));
        return;
    }
    for c in word.nfkd() {
        match c {
            _ if is_combining_mark(c) => {}
            '\u{2019}' | '\u{2018}' | '\u{02BC}' => out.push('\''),
            'ß' => out.push_str("ss"),
            _ => out.extend(c.to_lowercase()),
        }
    }
}

/// Emits the pending CJK run as overlapping bigrams (one character alone as itself).
fn flush_cjk(run: &mut String, f: &mut impl FnMut(&str)) {
    if run.is_empty() {
        return;
    }
    let mut last: Option<usize> = None;
    let mut before_last: Option<usize> = None;
    for (start, _) in run.char_indices() {
        if let Some(from) = before_last {
            f(&run[from..start]);
        }
        before_last = last;
        last = Some(start);
    }
    match before_last {
        Some(from) => f(&run[from..]),
        None => f(run),
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morphology_meets_in_one_stem() {
        assert_eq!(terms("where do I live"), terms("lives"));
        assert_eq!(terms("museum"), terms("likes museums")[1..]);
        assert_eq!(terms("running"), terms("runs"));
        assert_eq!(terms("cats"), terms("cat"));
        assert_eq!(terms("glass"), ["glass"]);
    }

    #[test]
    fn case_accents_and_width_fold() {
        assert_eq!(terms("CAFÉ"), terms("cafe"));
        assert_eq!(terms("Zoë Ångström"), ["zoe", "angstrom"]);
        assert_eq!(terms("ＡＢＣ"), ["abc"]);
        assert_eq!(terms("Straße"), terms("strasse"));
        assert_eq!(terms("ﬁsh"), terms("fish"));
    }

    #[test]
    fn apostrophes_and_possessives() {
        assert_eq!(terms("the user’s dog"), terms("the user's dog"));
        assert_eq!(terms("user's"), ["user"]);
        assert_eq!(terms("I don't eat fish"), ["don't", "eat", "fish"]);
        assert!(terms("I'm").is_empty());
    }

    #[test]
    fn negations_and_numbers_kept() {
        assert_eq!(
            terms("does not eat fish 42x"),
            ["not", "eat", "fish", "42x"]
        );
        assert_eq!(terms("pi is 3.14"), ["pi", "3.14"]);
    }

    #[test]
    fn cjk_bigrams_find_words_inside_runs() {
        let doc = terms("我住在北京");
        assert!(doc.contains(&"北京".to_owned()));
        assert_eq!(terms("北京"), ["北京"]);
        assert_eq!(terms("猫"), ["猫"]);
        // Runs stop at spaces and punctuation, and mix with Latin words.
        assert_eq!(terms("东京 大阪"), ["东京", "大阪"]);
        assert_eq!(terms("I love 寿司, really"), ["love", "寿司", "realli"]);
        // Kana and Hangul.
        assert!(terms("コーヒーが好き").contains(&"ヒー".to_owned()));
        assert!(terms("서울에 살아요").contains(&"서울".to_owned()));
    }

    #[test]
    fn emoji_are_terms_without_modifiers() {
        assert_eq!(terms("🍕🍣"), ["🍕", "🍣"]);
        assert_eq!(terms("👍🏽"), terms("👍"));
        assert_eq!(terms("❤️"), terms("❤"));
        assert_eq!(terms("great 🎉!"), ["great", "🎉"]);
        // ZWJ sequences stay one term.
        assert_eq!(terms("👩‍💻").len(), 1);
    }

    #[test]
    fn empty_and_punctuation_only() {
        assert!(terms("").is_empty());
        assert!(terms("  ,,; -- !!").is_empty());
    }

    #[test]
    fn remembered_words_yield_the_terms_of_for_each_term() {
        let texts = [
            "The user LIKES museums, since 2024!",
            "likes LIKES Likes museums the The",
            "Crème brûlée 我住在北京 loves 🍕!",
            "running runs ran, user's don't x_y 3.14 1,000",
            "Incomprehensibilities incomprehensibilities internationalization's",
            "",
            "it is the",
        ];
        let mut words = WordTerms::<std::hash::RandomState>::default();
        let mut vocab: Vec<String> = Vec::new();
        // Twice over, so the second pass reads every ASCII word from `words`.
        for text in texts.iter().chain(&texts) {
            let mut got = Vec::new();
            let id = |t: &str| match vocab.iter().position(|v| v == t) {
                Some(i) => i as u32,
                None => {
                    vocab.push(t.to_owned());
                    (vocab.len() - 1) as u32
                }
            };
            for_each_term_id(text, &mut words, id, |t| got.push(t));
            let got: Vec<&str> = got.iter().map(|&i| vocab[i as usize].as_str()).collect();
            assert_eq!(got, terms(text), "{text}");
        }
    }

    #[test]
    fn index_text_round_trips_to_the_same_terms() {
        for s in ["Lives in Zürich", "我住在北京 🍕", "user’s CAFÉ, 3.14"] {
            let joined = index_text(s);
            let split: Vec<&str> = joined.split(' ').filter(|t| !t.is_empty()).collect();
            assert_eq!(split, terms(s));
        }
    }
}
