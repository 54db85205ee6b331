//! Whether the words around a time expression speak of the past or the future.
//!
//! Only a few expressions need it: a bare "in May", "on 3 March" or "on Friday" is the most
//! recent one in the past, or the next one in the future. The tense of a position is the one
//! of the nearest marker before it in the same clause, else of the nearest marker after it.
//! Clauses end at sentence punctuation and at a comma before "and", "but", "so", "or" or
//! "while".
//! Markers are words, not a parse: "will", "'ll", "going to", "plan", "next", "tomorrow" for
//! the future; "was", "did", "ago", "yesterday", "last", irregular past forms and words
//! ending in "-ed" (a short list of adjectives and other words excepted) for the past.

use super::lexer::{breaks_sentence, Token};

/// The tense around a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tense {
    /// A past marker is nearest.
    Past,
    /// A future marker is nearest.
    Future,
    /// No marker in the sentence.
    Unknown,
}

/// The marker of every word and the sentence it belongs to.
#[derive(Debug)]
pub(super) struct Tenses {
    marks: Vec<Tense>,
    sentence: Vec<usize>,
}

impl Tenses {
    /// Reads the markers of `tokens`, the words of `text`.
    pub(super) fn new(text: &str, tokens: &[Token]) -> Self {
        let word = |i: usize| tokens.get(i).map_or("", |t| t.lower.as_str());
        let mut sentence = Vec::with_capacity(tokens.len());
        let mut current = 0;
        for (i, t) in tokens.iter().enumerate() {
            let gap = text.get(t.gap.clone()).unwrap_or_default();
            let conjunction = matches!(t.lower.as_str(), "and" | "but" | "so" | "or" | "while");
            if i > 0 && (breaks_sentence(gap) || (conjunction && gap.contains(','))) {
                current += 1;
            }
            sentence.push(current);
        }
        let marks = (0..tokens.len())
            .map(|i| {
                let before = if i == 0 { "" } else { word(i - 1) };
                marker(before, word(i), word(i + 1))
            })
            .collect();
        Self { marks, sentence }
    }

    /// The tense at word `i`: the nearest marker before it in its sentence, else the nearest
    /// after it.
    pub(super) fn at(&self, i: usize) -> Tense {
        let Some(&here) = self.sentence.get(i) else {
            return Tense::Unknown;
        };
        let same = |k: &usize| self.sentence.get(*k) == Some(&here);
        let marked = |k: usize| Some(self.marks[k]).filter(|m| *m != Tense::Unknown);
        (0..i)
            .rev()
            .take_while(same)
            .find_map(marked)
            .or_else(|| (i..self.marks.len()).take_while(same).find_map(marked))
            .unwrap_or(Tense::Unknown)
    }
}

/// The marker `word` is, given its neighbours.
fn marker(before: &str, word: &str, after: &str) -> Tense {
    let future = match word {
        "will" | "ll" | "shall" | "gonna" | "wanna" | "upcoming" | "tomorrow" | "next" | "soon"
        | "plan" | "plans" | "planning" | "planned" | "scheduled" | "intend" | "intends"
        | "intending" | "hope" | "hopes" | "hoping" | "expect" | "expects" | "expecting" => true,
        "going" => after == "to" && !matches!(before, "was" | "were"),
        "want" | "wants" | "need" | "needs" | "have" | "has" => after == "to",
        "looking" => after == "forward",
        "would" => matches!(after, "like" | "love"),
        _ => false,
    };
    // The present progressive speaks of a plan when a time is named ("I'm getting
    // married in June", "we're flying out in August", "she's starting in September").
    let progressive = word.len() > 4
        && word.ends_with("ing")
        && matches!(before, "am" | "is" | "are" | "m" | "re" | "s");
    // A participle after "get"/"be" is a state, not a past ("getting married").
    let participle = matches!(before, "get" | "gets" | "getting" | "be" | "being");
    if future || progressive {
        Tense::Future
    } else if participle {
        Tense::Unknown
    } else if is_past(word) {
        Tense::Past
    } else {
        Tense::Unknown
    }
}

/// Whether `word` marks the past.
fn is_past(word: &str) -> bool {
    const PAST: &[&str] = &[
        "was",
        "were",
        "did",
        "didn",
        "had",
        "hadn",
        "wasn",
        "weren",
        "ago",
        "yesterday",
        "last",
        "been",
        "gone",
        "done",
        "seen",
        "went",
        "got",
        "came",
        "saw",
        "made",
        "took",
        "gave",
        "bought",
        "brought",
        "met",
        "told",
        "said",
        "ran",
        "ate",
        "drank",
        "left",
        "felt",
        "found",
        "thought",
        "knew",
        "began",
        "became",
        "built",
        "caught",
        "chose",
        "drove",
        "flew",
        "forgot",
        "heard",
        "held",
        "kept",
        "lost",
        "paid",
        "sat",
        "sent",
        "slept",
        "spent",
        "spoke",
        "stood",
        "swam",
        "taught",
        "threw",
        "won",
        "wrote",
        "wore",
        "sang",
        "sold",
        "fell",
        "fought",
        "grew",
        "hid",
        "led",
        "lent",
        "meant",
        "rode",
        "rang",
        "rose",
        "shook",
        "shot",
        "stole",
        "stuck",
        "struck",
        "swore",
        "tore",
        "woke",
        "dug",
        "fed",
        "fled",
        "forgave",
        "froze",
        "hung",
        "laid",
        "lay",
        "lit",
        "overslept",
        "sank",
        "slid",
        "spun",
        "sprang",
        "stung",
        "swung",
        "understood",
        "wept",
        "wound",
        "quit",
    ];
    /// Words ending in "-ed" that are no past form, or that speak of feelings or plans
    /// ("I'm excited for May").
    const NOT_PAST: &[&str] = &[
        "need",
        "seed",
        "feed",
        "weed",
        "deed",
        "heed",
        "reed",
        "breed",
        "greed",
        "speed",
        "shed",
        "sled",
        "bled",
        "bed",
        "red",
        "fred",
        "ted",
        "ned",
        "jed",
        "proceed",
        "exceed",
        "succeed",
        "indeed",
        "hundred",
        "kindred",
        "sacred",
        "naked",
        "wicked",
        "rugged",
        "ragged",
        "crooked",
        "beloved",
        "embed",
        "excited",
        "interested",
        "tired",
        "bored",
        "scared",
        "worried",
        "pleased",
        "thrilled",
        "stressed",
        "supposed",
        "related",
        "based",
        "limited",
        "unlimited",
        "advanced",
        "detailed",
        "talented",
        "concerned",
        "confused",
        "amazed",
        "prepared",
        "nervous",
        "booked",
        "planned",
        "scheduled",
    ];
    if PAST.contains(&word) {
        return true;
    }
    word.len() >= 4
        && word.ends_with("ed")
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && !NOT_PAST.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn tense_of(text: &str, word: &str) -> Tense {
        let tokens = tokenize(text);
        let i = tokens.iter().position(|t| t.lower == word).unwrap();
        Tenses::new(text, &tokens).at(i)
    }

    #[test]
    fn nearest_marker_before_wins_then_after() {
        let text = "I went to the doctor on Monday and will go again on Friday";
        assert_eq!(tense_of(text, "monday"), Tense::Past);
        assert_eq!(tense_of(text, "friday"), Tense::Future);
        assert_eq!(tense_of("On Friday I'll call her", "friday"), Tense::Future);
        assert_eq!(tense_of("what did I do on Friday?", "friday"), Tense::Past);
        assert_eq!(
            tense_of("I was going to the gym on Friday", "friday"),
            Tense::Past
        );
        assert_eq!(tense_of("I'm excited for May", "may"), Tense::Unknown);
        assert_eq!(
            tense_of("I painted it. In May it rains", "may"),
            Tense::Unknown
        );
        assert_eq!(
            tense_of("We are going to Rome in May", "may"),
            Tense::Future
        );
        assert_eq!(
            tense_of("we moved, and on Friday we fly", "friday"),
            Tense::Unknown
        );
        assert_eq!(tense_of("On Friday, I went home", "friday"), Tense::Past);
    }
}
