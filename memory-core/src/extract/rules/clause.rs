//! Splitting an utterance into sentences, and sentences into clauses of normalised words.
//!
//! Contractions are expanded (`I'm` → `I am`, `don't` → `do not`) so the pattern tables
//! only ever see full forms; each word keeps its written form for values.

use super::lexicon::listed;
use std::borrow::Cow;

pub(crate) use crate::text::sentence::sentences;

/// One word: as written (used for values) and lowercased (used for matching). Both
/// borrow from the message where they can: a lowercase word costs no allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) lower: Cow<'a, str>,
}

impl<'a> Word<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text: Cow::Borrowed(text),
            lower: lowercase(Cow::Borrowed(text)),
        }
    }

    /// A word whose written form is its lowercase form (a word the rules put in).
    fn plain(text: &'static str) -> Self {
        Self {
            text: Cow::Borrowed(text),
            lower: Cow::Borrowed(text),
        }
    }

    /// The lowercase form.
    pub(crate) fn lower(&self) -> &str {
        &self.lower
    }

    /// The written form.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Whether the written form starts with an uppercase letter.
    pub(crate) fn is_capitalised(&self) -> bool {
        self.text.chars().next().is_some_and(char::is_uppercase)
    }
}

/// `text` lowercased, borrowed when it already is.
fn lowercase(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.is_ascii() {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(text.to_ascii_lowercase());
        }
        return text;
    }
    // Outside ASCII, titlecase letters ("ǅ") lowercase too: compare with the real thing.
    let lower = text.to_lowercase();
    if lower == *text {
        text
    } else {
        Cow::Owned(lower)
    }
}

/// The part `range` of `token`, borrowed from the message when `token` is.
fn part<'a>(token: &Cow<'a, str>, range: std::ops::Range<usize>) -> Cow<'a, str> {
    match token {
        Cow::Borrowed(t) => Cow::Borrowed(&t[range]),
        Cow::Owned(t) => Cow::Owned(t[range].to_owned()),
    }
}

/// Contractions that are not simply `<stem>n't`; `'s` is only expanded where it means
/// "is" (never for possessives like "son's").
const CONTRACTIONS: &[(&str, &[&str])] = &[
    ("i'm", &["i", "am"]),
    ("im", &["i", "am"]),
    ("i've", &["i", "have"]),
    ("ive", &["i", "have"]),
    ("i'd", &["i", "would"]),
    ("i'll", &["i", "will"]),
    ("can't", &["can", "not"]),
    ("cant", &["can", "not"]),
    ("cannot", &["can", "not"]),
    ("won't", &["will", "not"]),
    ("dont", &["do", "not"]),
    ("didnt", &["did", "not"]),
    ("doesnt", &["does", "not"]),
    ("name's", &["name", "is"]),
    ("birthday's", &["birthday", "is"]),
    ("it's", &["it", "is"]),
    ("that's", &["that", "is"]),
    ("what's", &["what", "is"]),
    ("he's", &["he", "is"]),
    ("she's", &["she", "is"]),
    ("there's", &["there", "is"]),
    ("here's", &["here", "is"]),
    ("who's", &["who", "is"]),
    ("where's", &["where", "is"]),
    ("how's", &["how", "is"]),
    ("let's", &["let", "us"]),
    ("we're", &["we", "are"]),
    ("we've", &["we", "have"]),
    ("they're", &["they", "are"]),
    ("you're", &["you", "are"]),
];

/// The byte length of the first `chars` characters of `token`.
fn char_prefix_len(token: &str, chars: usize) -> usize {
    token
        .char_indices()
        .nth(chars)
        .map_or(token.len(), |(i, _)| i)
}

/// Expands one token into its words; the first keeps its written case.
#[allow(clippy::ptr_arg)] // the `Cow`s say whether the words can borrow from the message
fn expand<'a>(token: &Cow<'a, str>, lower: &Cow<'a, str>, out: &mut Vec<Word<'a>>) {
    if let Some(parts) = contraction(lower) {
        for (k, p) in parts.iter().enumerate() {
            let text = if k == 0 && *p == "i" {
                Cow::Borrowed("I")
            } else if k == 0 {
                part(token, 0..char_prefix_len(token, p.len()))
            } else {
                Cow::Borrowed(*p)
            };
            out.push(Word {
                text,
                lower: Cow::Borrowed(*p),
            });
        }
        return;
    }
    if let Some(stem) = lower.strip_suffix("n't") {
        let stem_len = stem.len();
        out.push(Word {
            text: part(token, 0..char_prefix_len(token, stem.chars().count())),
            lower: part(lower, 0..stem_len),
        });
        out.push(Word::plain("not"));
        return;
    }
    out.push(Word {
        text: token.clone(),
        lower: lower.clone(),
    });
}

/// Words that always start a new clause (the word itself is dropped).
const HARD_CONJUNCTIONS: &[&str] = &[
    "but", "because", "although", "though", "whereas", "cause", "cos", "however",
];

/// Words that start a new clause when a subject (or an inherited predicate) follows.
const SOFT_CONJUNCTIONS: &[&str] = &["and", "so", "or", "plus", "also", "then"];

/// Words that open a clause of their own.
pub(crate) const SUBJECTS: &[&str] = &[
    "i", "my", "we", "our", "she", "he", "they", "his", "her", "their", "it", "you", "your",
    "this", "that", "there", "me",
];

/// After "and", these continue an "I am ..." clause: "I'm vegan and allergic to soy".
const INHERIT_I_AM: &[&str] = &[
    "allergic",
    "vegan",
    "vegetarian",
    "pescatarian",
    "fluent",
    "married",
    "single",
    "divorced",
    "engaged",
    "widowed",
    "separated",
    "based",
    "originally",
    "lactose",
    "gluten",
    "learning",
    "planning",
    "taking",
    "training",
    "studying",
];

/// After "and", these continue an "I ..." clause: "I love sushi and hate wasabi".
const INHERIT_I: &[&str] = &[
    "love",
    "like",
    "hate",
    "enjoy",
    "dislike",
    "adore",
    "prefer",
    "live",
    "work",
    "speak",
    "grew",
    "moved",
    "want",
    "have",
    "dont",
    "can't",
    "cannot",
    "started",
    "quit",
    "joined",
    "left",
    "play",
    "relocated",
    "stopped",
    "gave",
    "drive",
    "own",
    "teach",
    "eat",
    "drink",
];

/// Adverbs skipped when looking for the predicate after a conjunction: "and just started".
const LEAD_ADVERBS: &[&str] = &[
    "just",
    "also",
    "really",
    "recently",
    "currently",
    "now",
    "still",
    "actually",
    "finally",
];

/// Splits a sentence into clauses: at commas, at "but/because/...", and at "and/so/..."
/// followed by a new subject. A clause that continues an `I` clause with a bare predicate
/// ("... and allergic to soy") gets the subject back.
pub(crate) fn clauses(sentence: &str) -> Vec<Vec<Word<'_>>> {
    // Each token as written (curly apostrophes made straight), lowercased once, and
    // whether a comma (or colon, bracket, dash) follows it.
    let mut raw: Vec<(Cow<'_, str>, Cow<'_, str>, bool)> = Vec::new();
    for token in sentence.split_whitespace() {
        if token
            .chars()
            .all(|c| matches!(c, '-' | '–' | '—' | ',' | ':'))
        {
            if let Some(last) = raw.last_mut() {
                last.2 = true;
            }
            continue;
        }
        let comma_after = token.ends_with([',', ':', ')', '(']);
        let keep =
            |c: char| c.is_alphanumeric() || matches!(c, '\'' | '\u{2019}' | '\u{2018}' | '`');
        let trimmed = token.trim_matches(|c: char| !keep(c));
        let trimmed = trimmed.trim_matches(['\'', '\u{2019}', '\u{2018}', '`']);
        if trimmed.is_empty() {
            if comma_after {
                if let Some(last) = raw.last_mut() {
                    last.2 = true;
                }
            }
            continue;
        }
        let text = if trimmed.contains(['\u{2019}', '\u{2018}', '`']) {
            Cow::Owned(trimmed.replace(['\u{2019}', '\u{2018}', '`'], "'"))
        } else {
            Cow::Borrowed(trimmed)
        };
        let lower = lowercase(text.clone());
        raw.push((text, lower, comma_after));
    }

    let mut out: Vec<Vec<Word>> = Vec::new();
    let mut current: Vec<Word> = Vec::new();
    let mut i = 0;
    let mut break_before = false;
    // Whether the last clause closed was about "I" (so a bare predicate after a comma
    // continues it: "I'm 29, live in Leeds").
    let mut last_was_i = false;
    while i < raw.len() {
        let (token, lower, comma_after) = &raw[i];
        let lower_str: &str = lower;
        let next = raw[i + 1..]
            .iter()
            .map(|(_, t, _)| -> &str { t })
            .find(|t| !LEAD_ADVERBS.contains(t));
        let is_hard = listed(HARD_CONJUNCTIONS, lower_str);
        let is_soft = listed(SOFT_CONJUNCTIONS, lower_str);
        let starts_clause = |w: &str| listed(SUBJECTS, w) || starts_with_i(w);
        let inherit = next
            .filter(|_| is_hard || is_soft)
            .and_then(|n| inherited_subject(n, &current, last_was_i));
        let split_here =
            is_hard || (is_soft && (next.is_some_and(starts_clause) || inherit.is_some()));
        if split_here {
            last_was_i =
                inherit.is_some() || is_i_clause(&current) || (current.is_empty() && last_was_i);
            flush(&mut out, &mut current);
            if let Some(prefix) = inherit {
                push_subject(&mut current, prefix);
            }
            break_before = *comma_after;
            i += 1;
            continue;
        }
        if break_before {
            if !current.is_empty() {
                last_was_i = is_i_clause(&current);
            }
            flush(&mut out, &mut current);
            let bare = LEAD_ADVERBS
                .contains(&lower_str)
                .then_some(next)
                .flatten()
                .unwrap_or(lower_str);
            if let Some(prefix) = inherited_subject(bare, &[], last_was_i) {
                push_subject(&mut current, prefix);
            }
        } else if opens_sentence(&out, &current) {
            // "been living in Leeds for years", "sold the car and bought a bike": chat
            // leaves the "I" out of a sentence that starts with its verb.
            let bare = if LEAD_ADVERBS.contains(&lower_str) {
                next.unwrap_or(lower_str)
            } else {
                lower_str
            };
            if let Some(prefix) = implied_subject(bare) {
                push_subject(&mut current, prefix);
            }
        }
        expand(token, lower, &mut current);
        break_before = *comma_after;
        i += 1;
    }
    flush(&mut out, &mut current);
    out
}

/// Gives a bare predicate its inherited subject ("I", "I am").
fn push_subject(current: &mut Vec<Word<'_>>, prefix: &'static [&'static str]) {
    for w in prefix {
        current.push(Word::plain(w));
    }
    current[0].text = Cow::Borrowed("I");
}

fn starts_with_i(word: &str) -> bool {
    word.starts_with('i') && contraction(word).is_some_and(|parts| parts.first() == Some(&"i"))
}

/// The words a contraction stands for ("i'm" → "i am"); `None` for any other word.
fn contraction(lower: &str) -> Option<&'static [&'static str]> {
    CONTRACTIONS
        .iter()
        .find(|(c, _)| super::lexicon::same(c, lower))
        .map(|(_, parts)| *parts)
}

/// The subject words a bare predicate after "and" inherits, if the clause so far is an
/// `I` clause.
fn inherited_subject(
    next: &str,
    current: &[Word],
    last_was_i: bool,
) -> Option<&'static [&'static str]> {
    let first_is_i = is_i_clause(current) || (current.is_empty() && last_was_i);
    if !first_is_i {
        return None;
    }
    if listed(INHERIT_I_AM, next) {
        Some(&["i", "am"])
    } else if listed(INHERIT_I, next) {
        Some(&["i"])
    } else {
        implied_subject(next)
    }
}

/// Whether nothing but fillers came before in the sentence: where a verb can stand
/// without its subject.
fn opens_sentence(out: &[Vec<Word>], current: &[Word]) -> bool {
    let only_fillers = |c: &[Word]| {
        c.iter().all(|w| {
            listed(super::lexicon::FILLERS, w.lower()) || LEAD_ADVERBS.contains(&w.lower())
        })
    };
    out.iter().all(|c| only_fillers(c)) && only_fillers(current)
}

/// The subject a clause that starts with `verb` leaves out: "been living in York" (I
/// have), "moved to York", "got promoted" (I). Only a past form that is no base form
/// too ("quit", "cut" and "put" also give orders) and "been".
fn implied_subject(verb: &str) -> Option<&'static [&'static str]> {
    if verb == "been" || (super::morph::is_participle_only(verb) && !listed(NOT_IMPLIED, verb)) {
        return Some(&["i", "have"]);
    }
    let past = super::morph::is_past(verb) && super::morph::lemma(verb) != verb;
    (past && !listed(NOT_IMPLIED, verb)).then_some(&["i"])
}

/// Past forms that open a sentence without being the speaker's deed: "used to",
/// participles read as adjectives ("based", "tired", "bored").
const NOT_IMPLIED: &[&str] = &[
    "used", "based", "tired", "bored", "excited", "worried", "scared", "supposed", "called",
    "named", "done", "seen",
];

/// Whether the clause's first word after fillers is "I".
fn is_i_clause(clause: &[Word]) -> bool {
    clause
        .iter()
        .map(|w| w.lower())
        .find(|w| !crate::extract::rules::lexicon::FILLERS.contains(w))
        == Some("i")
}

fn flush<'a>(out: &mut Vec<Vec<Word<'a>>>, current: &mut Vec<Word<'a>>) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowers(clause: &[Word]) -> String {
        clause
            .iter()
            .map(|w| w.lower())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn clauses_split_on_new_subjects_only() {
        let c = clauses("Hi, I'm Alice and I love museums");
        let c: Vec<_> = c.iter().map(|c| lowers(c)).collect();
        assert_eq!(c, vec!["hi", "i am alice", "i love museums"]);

        let c = clauses("I enjoy painting and playing the piano");
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn bare_predicates_inherit_the_subject() {
        let c = clauses("I'm vegan and allergic to soy");
        let c: Vec<_> = c.iter().map(|c| lowers(c)).collect();
        assert_eq!(c, vec!["i am vegan", "i am allergic to soy"]);
    }

    #[test]
    fn words_borrow_unless_lowercasing_changes_them() {
        let c = clauses("i live in Zürich, ǅemal said");
        let words: Vec<&Word> = c.iter().flatten().collect();
        assert!(matches!(words[0].lower, Cow::Borrowed("i")));
        assert_eq!(words[3].lower, "zürich");
        assert_eq!(words[3].text, "Zürich");
        assert_eq!(words[4].lower, "ǆemal");
        assert!(matches!(words[1].text, Cow::Borrowed(_)));
    }

    #[test]
    fn contractions_expand_but_possessives_stay() {
        let c = clauses("I don't like it. My son's name is Leo");
        assert_eq!(lowers(&c[0]), "i do not like it my son's name is leo");
    }
}
