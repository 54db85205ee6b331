//! The language of a text (`whatlang`: scripts, alphabets and trigrams), trusted only when
//! the detection is reliable, and what the analysis does with it: the Snowball stemmer
//! and elisions of a language other than English.

use std::fmt;

use rust_stemmers::Algorithm;
use whatlang::Lang;

/// A natural language, as [`language`] tells it.
///
/// ```
/// use agentmemory_index::text::{language, Language};
///
/// let fr = language("Mon frère travaille comme infirmier dans un hôpital de Marseille.").unwrap();
/// assert_eq!(fr.code(), "fra");
/// assert_eq!(fr.name(), "French");
/// assert!(!fr.is_english());
/// assert!(fr.has_stemmer());
/// assert_eq!(language("I stopped eating meat last year, and my sister did too.").unwrap(), Language::ENGLISH);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Language(Lang);

impl Language {
    /// English: the language of the extraction rules and of the analysis of any text whose
    /// language is not told reliably.
    pub const ENGLISH: Language = Language(Lang::Eng);

    /// The ISO 639-3 code: `"eng"`, `"fra"`, `"deu"`, `"cmn"` (Mandarin), `"jpn"`…
    pub fn code(self) -> &'static str {
        self.0.code()
    }

    /// The language's name in English: `"French"`, `"German"`, `"Mandarin"`…
    pub fn name(self) -> &'static str {
        self.0.eng_name()
    }

    /// Whether this is English.
    pub fn is_english(self) -> bool {
        self.0 == Lang::Eng
    }

    /// Whether the analysis stems words of this language with its own Snowball stemmer
    /// (English has one too: the analysis every text got before languages were told).
    pub fn has_stemmer(self) -> bool {
        algorithm(self.0).is_some()
    }
}

impl fmt::Debug for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The language `text` is written in, when it can be told reliably; `None` for text too
/// short or too mixed to tell (a few words often are: fewer than 20 letters, or two CJK
/// characters, are never told), or without letters.
///
/// A text holding a word only English uses among its function words (`the`, `and`,
/// `what`, `you`…) is English without running the detector: that keeps English text,
/// the common case, cheap and never mistaken for another language. Otherwise `whatlang`
/// decides (some 10 to 30 µs), and only an answer it calls reliable is returned; when
/// it cannot choose between close languages, the closest language with a stemmer it
/// can choose reliably (a short Russian text may be told from Ukrainian only so).
///
/// ```
/// use agentmemory_index::text::language;
///
/// assert_eq!(language("Ich wohne seit drei Jahren mit meiner Freundin in Hamburg.").unwrap().name(), "German");
/// assert_eq!(language("我在上海住了五年了，和我的男朋友一起。").unwrap().name(), "Mandarin");
/// assert_eq!(language("ok"), None);
/// assert_eq!(language("Merci !"), None);
/// assert_eq!(language("Where do I live these days?").unwrap().name(), "English");
/// ```
pub fn language(text: &str) -> Option<Language> {
    match screen(text) {
        Screen::English => return Some(Language::ENGLISH),
        Screen::Short
            if text
                .chars()
                .filter(|&c| super::script::is_cjk(c))
                .nth(2)
                .is_none() =>
        {
            return None
        }
        Screen::Short | Screen::Latin | Screen::Other => {}
    }
    match whatlang::detect(text) {
        Some(info) if info.is_reliable() => Some(Language(info.lang())),
        // Close languages (Russian and Ukrainian, Spanish and Catalan) leave each other
        // unreliable in short texts: the analysis's detector, which knows only the
        // languages with a stemmer, may still tell.
        _ => STEMMED
            .detect(text)
            .filter(|i| i.is_reliable())
            .map(|i| Language(i.lang())),
    }
}

/// The language whose stemmer and elisions analyse `text`, when that is not
/// English: `None` keeps the English analysis (English text, text whose language is not
/// told reliably, and languages without a Snowball stemmer, CJK among them).
pub(super) fn analysis_language(text: &str) -> Option<Analysis> {
    if screen(text) != Screen::Other {
        return None;
    }
    let info = STEMMED.detect(text)?;
    if !info.is_reliable() {
        return None;
    }
    analysis_of(info.lang())
}

/// How a text in `lang` is analysed (`None`: as English).
pub(super) fn analysis_of(lang: Lang) -> Option<Analysis> {
    if lang == Lang::Eng {
        return None;
    }
    algorithm(lang).map(|algorithm| Analysis {
        algorithm,
        elisions: elisions(lang),
    })
}

/// The detector the analysis asks: among the languages with a stemmer only, so a close
/// language without one (Catalan, Ukrainian, Afrikaans) does not leave its neighbour
/// (Spanish, Russian, Dutch) unreliable; such a text gets the neighbour's stems, beside
/// the terms it always had.
static STEMMED: std::sync::LazyLock<whatlang::Detector> = std::sync::LazyLock::new(|| {
    whatlang::Detector::with_allowlist(
        Lang::all()
            .iter()
            .copied()
            .filter(|&l| algorithm(l).is_some())
            .collect(),
    )
});

/// How a text in a language other than English is analysed.
#[derive(Clone, Copy)]
pub(super) struct Analysis {
    pub(super) algorithm: Algorithm,
    /// Lowercase article/pronoun forms ending in an apostrophe (`l'`, `qu'`) dropped from
    /// the front of a word, sorted.
    elisions: &'static [&'static str],
}

impl Analysis {
    /// `lower` without an elided article or pronoun in front (`l'école` → `école`).
    pub(super) fn strip_elision<'a>(&self, lower: &'a str) -> &'a str {
        match lower.split_once('\'') {
            Some((head, rest))
                if !rest.is_empty() && self.elisions.binary_search(&head).is_ok() =>
            {
                rest
            }
            _ => lower,
        }
    }
}

/// The Snowball stemmer of `lang` in `rust-stemmers`, if it has one.
fn algorithm(lang: Lang) -> Option<Algorithm> {
    Some(match lang {
        Lang::Eng => Algorithm::English,
        Lang::Fra => Algorithm::French,
        Lang::Deu => Algorithm::German,
        Lang::Spa => Algorithm::Spanish,
        Lang::Ita => Algorithm::Italian,
        Lang::Por => Algorithm::Portuguese,
        Lang::Nld => Algorithm::Dutch,
        Lang::Swe => Algorithm::Swedish,
        Lang::Nob => Algorithm::Norwegian,
        Lang::Dan => Algorithm::Danish,
        Lang::Fin => Algorithm::Finnish,
        Lang::Rus => Algorithm::Russian,
        Lang::Hun => Algorithm::Hungarian,
        Lang::Ron => Algorithm::Romanian,
        Lang::Tur => Algorithm::Turkish,
        Lang::Ara => Algorithm::Arabic,
        Lang::Ell => Algorithm::Greek,
        Lang::Tam => Algorithm::Tamil,
        _ => return None,
    })
}

/// Words (lowercase ASCII) that English uses all the time and the languages told apart
/// here do not (as words of their own): one of them makes a text English. Words another
/// language shares (`a`, `in`, `is`, `was`, `die`, `me`, `do`, `i`…) are not here.
const ENGLISH_WORDS: &[&str] = &[
    "and", "are", "been", "does", "doesn't", "don't", "have", "how", "i'm", "i've", "it's", "my",
    "that", "the", "they", "this", "what", "where", "which", "with", "would", "you", "your",
];

/// [`screen`] of ASCII text, byte by byte.
fn screen_ascii(text: &[u8]) -> Screen {
    let mut letters = 0;
    let mut other = false;
    for word in text.split(|&b| !(b.is_ascii_alphanumeric() || b == b'\'')) {
        letters += word.iter().filter(|b| b.is_ascii_alphabetic()).count();
        let mut lower = [0u8; 8];
        let Some(buf) = lower.get_mut(..word.len()) else {
            continue;
        };
        for (l, b) in buf.iter_mut().zip(word) {
            *l = b.to_ascii_lowercase();
        }
        let buf: &[u8] = buf;
        if ENGLISH_WORDS
            .binary_search_by(|e| e.as_bytes().cmp(buf))
            .is_ok()
        {
            return Screen::English;
        }
        other |= !buf.is_empty()
            && OTHER_WORDS
                .binary_search_by(|e| e.as_bytes().cmp(buf))
                .is_ok();
    }
    if letters < MIN_LETTERS {
        Screen::Short
    } else if other {
        Screen::Other
    } else {
        Screen::Latin
    }
}

/// Function words (lowercase ASCII) of the other languages told apart here, that
/// English text rarely holds: an ASCII text without one is analysed as English without
/// asking the detector (a French or Spanish text written without accents nearly always
/// has one). One is not a verdict, only a reason to ask.
const OTHER_WORDS: &[&str] = &[
    "al", "ao", "att", "au", "auf", "aux", "avec", "az", "bin", "bir", "c'est", "ce", "ces", "che",
    "com", "con", "da", "dans", "das", "del", "dem", "den", "der", "des", "det", "di", "die", "du",
    "e", "een", "egy", "ein", "eine", "einen", "el", "em", "en", "es", "est", "esta", "et", "eu",
    "gli", "habe", "het", "hogy", "ich", "ik", "ikke", "il", "ils", "io", "ist", "j'ai", "ja",
    "jag", "je", "jeg", "la", "las", "le", "les", "los", "mais", "mein", "meine", "mes", "mi",
    "mit", "moi", "mon", "muy", "nao", "nem", "nicht", "niet", "nous", "och", "og", "os", "ou",
    "para", "pas", "pero", "por", "pour", "que", "qui", "se", "sie", "sind", "sono", "sur", "um",
    "uma", "un", "una", "und", "une", "van", "ve", "von", "vous", "wir", "y", "yo", "zijn",
];

/// At least this many letters (not counting CJK characters, whose languages have no
/// stemmer) before a text is worth asking about: the detector is rarely reliable below,
/// and asking costs microseconds.
const MIN_LETTERS: usize = 20;

/// What a cheap pass over the words of a text says before the detector is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Screen {
    /// It holds one of [`ENGLISH_WORDS`].
    English,
    /// Fewer than [`MIN_LETTERS`] letters.
    Short,
    /// ASCII letters only and none of [`OTHER_WORDS`]: English to the analysis.
    Latin,
    /// Anything else: worth asking.
    Other,
}

fn screen(text: &str) -> Screen {
    if text.len() < MIN_LETTERS {
        // A letter takes a byte at least.
        return Screen::Short;
    }
    if text.is_ascii() {
        return screen_ascii(text.as_bytes());
    }
    let mut letters = 0;
    let mut other = false;
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}')) {
        if word.is_empty() {
            continue;
        }
        let mut ascii = true;
        for c in word.chars() {
            if c.is_alphabetic() && !super::script::is_cjk(c) {
                letters += 1;
                if !c.is_ascii() && c != '\u{2019}' {
                    ascii = false;
                }
            }
        }
        if !ascii {
            other = true;
            continue;
        }
        // The word lowercased, `’` as `'`, if it is short enough to be a function word.
        let mut lower = [0u8; 8];
        let mut len = 0;
        for c in word.chars().map(|c| if c == '\u{2019}' { '\'' } else { c }) {
            match lower.get_mut(len) {
                Some(b) if c.is_ascii() => *b = c.to_ascii_lowercase() as u8,
                _ => {
                    len = usize::MAX;
                    break;
                }
            }
            len += 1;
        }
        let Some(Ok(w)) = lower.get(..len).map(std::str::from_utf8) else {
            continue;
        };
        if ENGLISH_WORDS.binary_search(&w).is_ok() {
            return Screen::English;
        }
        other |= OTHER_WORDS.binary_search(&w).is_ok();
    }
    if letters < MIN_LETTERS {
        Screen::Short
    } else if other {
        Screen::Other
    } else {
        Screen::Latin
    }
}

/// The elided forms (before the apostrophe) dropped from the front of a word.
fn elisions(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Fra => &[
            "c", "d", "j", "jusqu", "l", "lorsqu", "m", "n", "puisqu", "qu", "s", "t",
        ],
        Lang::Ita => &[
            "all", "c", "d", "dall", "dell", "l", "nell", "quell", "quest", "sull", "un",
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_sorted_and_folded() {
        for lang in Lang::all() {
            let list = elisions(*lang);
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{lang:?} not sorted");
            assert!(list.iter().all(|w| w.is_ascii() && *w == w.to_lowercase()));
        }
        for list in [ENGLISH_WORDS, OTHER_WORDS] {
            assert!(list.windows(2).all(|w| w[0] < w[1]));
            assert!(list
                .iter()
                .all(|w| w.len() <= 8 && *w == w.to_ascii_lowercase()));
        }
    }

    #[test]
    fn detects_reliable_languages_only() {
        let cases = [
            (
                "Mon frère travaille comme infirmier dans un hôpital de Marseille.",
                "fra",
            ),
            ("Ich bin allergisch gegen Nüsse und Erdnüsse.", "deu"),
            (
                "Estoy aprendiendo alemán porque nos mudamos a Berlín el año que viene.",
                "spa",
            ),
            (
                "Mio fratello lavora come infermiere in un ospedale di Milano.",
                "ita",
            ),
            ("Я живу в Москве уже пять лет вместе с моей женой.", "rus"),
            ("我在上海住了五年了，和我的男朋友一起。", "cmn"),
            ("私は三年前から大阪に住んでいます。", "jpn"),
            ("我对什么食物过敏？", "cmn"),
            ("I've lived in Lyon for three years with my partner.", "eng"),
        ];
        for (text, code) in cases {
            assert_eq!(language(text).map(Language::code), Some(code), "{text}");
        }
        for short in [
            "",
            "ok",
            "42",
            "🍕",
            "Lyon",
            "Crème brûlée",
            "谢谢",
            "Wo wohne ich?",
        ] {
            assert_eq!(language(short), None, "{short}");
        }
    }

    #[test]
    fn english_function_words_make_a_text_english() {
        assert_eq!(
            language("Where is the Sagrada Família?"),
            Some(Language::ENGLISH)
        );
        assert_eq!(
            language("And what about Zürich, Genève and Basel?"),
            Some(Language::ENGLISH)
        );
        // Words that other languages share do not.
        assert_ne!(screen("Ich bin in Berlin, was machst du?"), Screen::English);
        assert_ne!(screen("Vivo a Roma e mi piace"), Screen::English);
        assert_eq!(screen("it's lovely to be back home"), Screen::English);
        assert_eq!(screen("It’s lovely to be back home, Zoë"), Screen::English);
        assert_eq!(screen("lovely to be back home after work"), Screen::Latin);
        assert_eq!(
            screen("Je joue de la guitare dans un groupe"),
            Screen::Other
        );
        assert_eq!(screen("Wo wohnst du?"), Screen::Short);
    }

    #[test]
    fn elisions_are_dropped_in_french_and_italian_only() {
        let fr = analysis_of(Lang::Fra).unwrap();
        assert_eq!(fr.strip_elision("l'école"), "école");
        assert_eq!(fr.strip_elision("qu'il"), "il");
        assert_eq!(fr.strip_elision("aujourd'hui"), "aujourd'hui");
        assert_eq!(fr.strip_elision("l'"), "l'");
        let de = analysis_of(Lang::Deu).unwrap();
        assert_eq!(de.strip_elision("l'école"), "l'école");
    }
}
