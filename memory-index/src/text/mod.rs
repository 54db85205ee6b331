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
//! **Languages.** A text whose [`language`] is told reliably (`whatlang`) and has a
//! Snowball stemmer other than English's (French, German, Spanish, Italian, Portuguese,
//! Dutch, Swedish, Norwegian, Danish, Finnish, Russian, Hungarian, Romanian, Turkish,
//! Arabic, Greek, Tamil) gives each word, beside the term above, its stem in that
//! language: the word lowercased, an elided article dropped (French and Italian `l'`,
//! `qu'`…), stemmed (non-ASCII words too), then folded. `"Häuser"` → `hauser haus`,
//! `"l'école"` → `l'ecol ecol`, `"Москве"` → `москве москв`. The terms it had are all
//! kept, so a question too short for its language to be told (analysed as English) finds
//! what it found before, and one in the same language meets it on the stems too. Text
//! that is English, short (under 20 letters), mixed or unsure, and CJK text, are analysed
//! exactly as above: a cheap pass over the words (one of `the`, `and`, `what`, `you`…
//! makes a text English; an ASCII text without a function word of another language is
//! not asked about) keeps the detector (some 10 µs) off nearly all English text.
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
//! // German, told reliably: every term above, and the German stems beside them.
//! assert_eq!(terms("Ich bin allergisch gegen Nüsse und Erdnüsse."),
//!            ["ich", "bin", "allergisch", "allerg", "gegen", "geg", "nuss", "und", "erdnuss"]);
//! ```

use std::collections::HashMap;
use std::hash::BuildHasher;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

mod ascii;
mod lang;
mod script;
pub mod sentence;
mod stem;
mod stop;

pub use lang::{language, Language};
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
    for_each_term_as(text, lang::analysis_language(text), &mut f);
}

/// [`for_each_term`] with the language analysis already chosen (`None`: English).
fn for_each_term_as<F: FnMut(&str)>(text: &str, analysis: Option<lang::Analysis>, f: &mut F) {
    match analysis {
        None => walk(text, f, emit_word),
        Some(analysis) => {
            let mut other = OtherWords::new(analysis);
            walk(text, f, |segment, scratch, f| {
                other.emit(segment, scratch, f)
            });
        }
    }
}

/// Segments `text` into words, CJK runs and emoji: each word goes to `word` (with a
/// scratch buffer), CJK runs and emoji are emitted to `f` as they are in every language.
fn walk<F: FnMut(&str)>(text: &str, f: &mut F, mut word: impl FnMut(&str, &mut String, &mut F)) {
    let mut scratch = String::new();
    if text.is_ascii() {
        ascii::for_each_word(text, |w| word(w, &mut scratch, f));
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
        flush_cjk(&mut run, f);
        if segment.chars().any(char::is_alphanumeric) {
            word(segment, &mut scratch, f);
        } else if segment.chars().any(is_pictographic) {
            scratch.clear();
            scratch.extend(segment.chars().filter(|&c| !is_emoji_modifier(c)));
            if !scratch.is_empty() {
                f(&scratch);
            }
        }
    }
    flush_cjk(&mut run, f);
}

/// The words of a text in a language other than English, with that language's stemmer.
///
/// Each word yields the term English analysis makes of it, as before, and, when it
/// differs, its stem in the language (the word lowercased, an elided article dropped,
/// stemmed, then folded): the text keeps every term it had and gains its language's
/// stems. A question too short for its language to be told is analysed as English, and
/// still finds what it found before; one told in the same language meets the text on
/// the stems too. English stop words yield nothing, as in every text.
struct OtherWords {
    analysis: lang::Analysis,
    lower: String,
    stem: String,
    english: String,
}

impl OtherWords {
    fn new(analysis: lang::Analysis) -> Self {
        Self {
            analysis,
            lower: String::new(),
            stem: String::new(),
            english: String::new(),
        }
    }

    fn emit(&mut self, segment: &str, folded: &mut String, f: &mut impl FnMut(&str)) {
        fold_into(segment, folded);
        if folded.is_empty() || is_stop_word(folded) {
            return;
        }
        self.lower.clear();
        for c in segment.nfc().flat_map(char::to_lowercase) {
            match c {
                '\u{2019}' | '\u{2018}' | '\u{02BC}' => self.lower.push('\''),
                _ => self.lower.push(c),
            }
        }
        let word = self.analysis.strip_elision(&self.lower);
        if word.chars().nth(2).is_some() && word.chars().any(char::is_alphabetic) {
            let (stem, algorithm) = (&mut self.stem, self.analysis.algorithm);
            stem::with_stem_in(algorithm, word, |s| fold_into(s, stem));
        } else {
            fold_into(word, &mut self.stem);
        }
        self.english.clear();
        let english = &mut self.english;
        emit_word(segment, folded, &mut |t: &str| english.push_str(t));
        if !self.english.is_empty() {
            f(&self.english);
        }
        if !self.stem.is_empty() && self.stem != self.english && !is_stop_word(&self.stem) {
            f(&self.stem);
        }
    }
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
/// For analysing many texts: a word of ASCII text analysed as English always yields the
/// same term (or none), so `words` remembers, per word as written, the id of its term,
/// and a word met again is one lookup instead of folding, a stop-word check and stemming.
/// A text in another language is analysed word by word.
pub fn for_each_term_id<S: BuildHasher>(
    text: &str,
    words: &mut WordTerms<S>,
    mut id: impl FnMut(&str) -> u32,
    mut f: impl FnMut(u32),
) {
    let analysis = lang::analysis_language(text);
    if !text.is_ascii() || analysis.is_some() {
        for_each_term_as(text, analysis, &mut |t| f(id(t)));
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

    /// The terms of `text` analysed as a text in `lang` (an ISO 639-3 code).
    fn terms_in(lang: &str, text: &str) -> Vec<String> {
        let analysis = lang::analysis_of(whatlang::Lang::from_code(lang).expect("a code"));
        let mut out = Vec::new();
        for_each_term_as(text, analysis, &mut |t: &str| out.push(t.to_owned()));
        out
    }

    /// The terms of `a` and `b` in `lang` both hold each of `stems`.
    fn share(lang: &str, a: &str, b: &str, stems: &[&str]) {
        let (ta, tb) = (terms_in(lang, a), terms_in(lang, b));
        for w in stems {
            assert!(ta.iter().any(|t| t == w), "{w:?} not in {ta:?} ({a})");
            assert!(tb.iter().any(|t| t == w), "{w:?} not in {tb:?} ({b})");
        }
    }

    #[test]
    fn french_forms_meet_in_one_stem() {
        share(
            "fra",
            "Nous avons adopté deux chats noirs.",
            "Quel chat noir adoptions-nous ?",
            &["adopt", "chat", "noir"],
        );
        share(
            "fra",
            "Je mange des pommes.",
            "Est-ce que je mangeais une pomme ?",
            &["mang", "pomm"],
        );
        // Elided articles go, accents fold after stemming.
        let t = terms_in("fra", "Ma fille commence l'école en septembre.");
        assert!(
            t.contains(&"ecol".to_owned()) && t.contains(&"commenc".to_owned()),
            "{t:?}"
        );
        // Detected in a text long enough.
        assert!(
            terms("Quel est le travail de mon frère dans les hôpitaux ?")
                .contains(&"travail".to_owned())
        );
    }

    #[test]
    fn german_forms_meet_in_one_stem() {
        share(
            "deu",
            "Ich bin allergisch gegen Nüsse.",
            "Gegen welche Nuss bin ich allergisch?",
            &["nuss", "allerg"],
        );
        share(
            "deu",
            "Ich spiele Gitarre.",
            "Welche Gitarren spielen wir?",
            &["spiel", "gitarr"],
        );
        // Non-ASCII words are stemmed too (`Häuser` and `Gärten` were not before).
        let t = terms("Wir haben zwei Häuser und drei Gärten in München gekauft.");
        assert!(
            t.contains(&"haus".to_owned()) && t.contains(&"gart".to_owned()),
            "{t:?}"
        );
    }

    #[test]
    fn spanish_forms_meet_in_one_stem() {
        share(
            "spa",
            "Soy alérgica a los cacahuetes.",
            "¿Qué alergias tengo, al cacahuete?",
            &["cacahuet"],
        );
        share(
            "spa",
            "Estoy aprendiendo alemán.",
            "¿Por qué aprendo alemán?",
            &["aprend", "aleman"],
        );
        share(
            "spa",
            "Toco la guitarra en un grupo.",
            "¿Qué guitarras tocaba yo en los grupos?",
            &["guitarr", "grup"],
        );
    }

    #[test]
    fn russian_is_stemmed_in_its_alphabet() {
        let t = terms("Я живу в Москве уже пять лет вместе с моей женой и двумя детьми.");
        assert!(t.contains(&"москв".to_owned()), "{t:?}");
        // The folded word as it was analysed before stays a term beside the stem.
        assert!(t.contains(&"москве".to_owned()), "{t:?}");
    }

    #[test]
    fn a_text_in_another_language_keeps_its_english_terms() {
        // A question too short to tell its language is analysed as English: the terms
        // English analysis made of a longer text in that language are still there.
        let statement = "Mon frère travaille comme infirmier dans un hôpital de Marseille.";
        let english = walk_english(statement);
        let now = terms(statement);
        let kept: Vec<&String> = now.iter().filter(|t| english.contains(t)).collect();
        assert_eq!(
            kept,
            english.iter().collect::<Vec<_>>(),
            "every term, in order"
        );
        assert!(now.contains(&"travaill".to_owned()) && now.contains(&"hopital".to_owned()));
    }

    /// The English analysis of `text`, whatever its language.
    fn walk_english(text: &str) -> Vec<String> {
        terms_in("eng", text)
    }

    #[test]
    fn cjk_texts_analyse_as_before() {
        for text in [
            "我在上海住了五年了，和我的男朋友一起。",
            "兄は名古屋の病院で看護師として働いています。",
        ] {
            assert!(language(text).is_some_and(|l| !l.has_stemmer()));
            assert_eq!(terms(text), walk_english(text));
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
