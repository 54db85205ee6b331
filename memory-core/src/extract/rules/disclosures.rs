//! Self-disclosures no attribute slots: health, habits, beliefs and belongings ("I have
//! celiac disease", "I'm diabetic", "I'm afraid of heights", "I get seasick easily",
//! "I use a wheelchair"). Each becomes a searchable `note` in the third person, so
//! nothing the user says about themselves is silently dropped; pleasantries ("I have a
//! question", "I'm fine", "I get it") are not disclosures.

use super::clause::Word;
use super::families::Predicate;
use super::lexicon::{listed, EMPTY_VALUES};
use super::notes::possessive_to_third;
use super::pattern::Found;
use super::value::{clean, Kind};
use super::when;

/// States one *is* that say something lasting about the user.
const STATES: &[&str] = &[
    "diabetic",
    "pregnant",
    "deaf",
    "blind",
    "disabled",
    "epileptic",
    "asthmatic",
    "autistic",
    "dyslexic",
    "colorblind",
    "colourblind",
    "color-blind",
    "colour-blind",
    "left-handed",
    "right-handed",
    "ambidextrous",
    "introverted",
    "extroverted",
    "shy",
    "sober",
    "religious",
    "celiac",
    "coeliac",
    "anemic",
    "anaemic",
    "claustrophobic",
    "short-sighted",
    "nearsighted",
    "near-sighted",
    "long-sighted",
    "christian",
    "catholic",
    "muslim",
    "jewish",
    "hindu",
    "buddhist",
    "atheist",
    "agnostic",
    "sikh",
    "mormon",
    "gay",
    "lesbian",
    "bisexual",
    "transgender",
    "nonbinary",
    "non-binary",
    "unemployed",
    "self-employed",
    "homeschooled",
    "adopted",
];

/// What one *is a*: "an introvert", "a night owl", "a smoker".
const KINDS: &[&str] = &[
    "introvert",
    "extrovert",
    "ambivert",
    "smoker",
    "non-smoker",
    "nonsmoker",
    "diabetic",
    "insomniac",
    "twin",
    "vegetarian",
    "night owl",
    "morning person",
    "night person",
    "early bird",
    "only child",
    "cancer survivor",
    "single parent",
    "single mom",
    "single dad",
    "stay-at-home",
];

/// Fears: "afraid of", "scared of", "terrified of".
const FEARS: &[&str] = &["afraid", "scared", "terrified", "frightened"];

/// Objects of "I have" that are conversation, not belongings or conditions.
const CHAT: &[&str] = &[
    "question",
    "questions",
    "idea",
    "ideas",
    "doubt",
    "doubts",
    "feeling",
    "feelings",
    "fun",
    "time",
    "day",
    "night",
    "weekend",
    "week",
    "moment",
    "minute",
    "second",
    "chance",
    "clue",
    "problem",
    "issue",
    "point",
    "look",
    "favour",
    "favor",
    "request",
    "suggestion",
    "thought",
    "thoughts",
    "concern",
    "concerns",
    "lot",
    "bit",
    "way",
    "choice",
    "option",
    "opinion",
    "trouble",
    "reason",
    "break",
    "rest",
    "meeting",
    "appointment",
    "plans",
    "plan",
    "to",
    "no",
    "nothing",
    "something",
    "anything",
    "everything",
    "enough",
    "been",
    "got",
    "had",
    "seen",
    "heard",
    "done",
    "never",
    "always",
    "same",
    "it",
    "that",
    "this",
    "one",
    "some",
    "more",
    "work",
    "homework",
    "class",
    "lunch",
    "dinner",
    "breakfast",
    "coffee",
    "tea",
    "headache",
    "cold",
    "hangover",
    "feeling",
    "sense",
];

fn note(text: String, confidence: f32) -> Vec<Found> {
    vec![Found {
        attribute: "note",
        value: text.clone(),
        text,
        polarity: crate::facts::Polarity::Positive,
        confidence,
        ..Found::default()
    }]
}

/// The words as said of the user ("my" → "their"), time words out.
fn third(words: &[Word]) -> String {
    when::without_time(words)
        .iter()
        .map(possessive_to_third)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The object as a value: cut where a clause would go on ("so no gluten for me").
fn object<'a>(words: &[Word<'a>]) -> Option<Vec<Word<'a>>> {
    let end = words
        .iter()
        .position(|w| {
            matches!(
                w.lower(),
                "so" | "because" | "but" | "which" | "and" | "since" | "lol" | "haha" | "when"
            )
        })
        .unwrap_or(words.len());
    let words = &words[..end];
    let first = words.first()?;
    if listed(EMPTY_VALUES, first.lower()) && !matches!(first.lower(), "my") {
        return None;
    }
    clean(words, Kind::Goal)?;
    (words.len() <= 8).then(|| words.to_vec())
}

/// The note a self-disclosure states, if it is one.
pub(crate) fn disclosure(p: &Predicate) -> Vec<Found> {
    if p.negated || p.ceased {
        return Vec::new();
    }
    let w = &p.words;
    let Some(verb) = w.first().map(|x| x.lower()) else {
        return Vec::new();
    };
    let rest = &w[1..];
    match verb {
        "have" => {
            let rest = match rest.first() {
                Some(x) if x.lower == "got" => &rest[1..],
                _ => rest,
            };
            let Some(obj) = object(rest) else {
                return Vec::new();
            };
            if obj.iter().any(|x| listed(CHAT, x.lower())) {
                return Vec::new();
            }
            note(format!("has {}", third(&obj)), 0.55)
        }
        "am" => {
            let Some(first) = rest.first() else {
                return Vec::new();
            };
            let word = first.lower();
            if listed(STATES, word) && rest.len() <= 2 {
                return note(format!("is {word}"), 0.6);
            }
            if listed(FEARS, word) && rest.get(1).is_some_and(|x| x.lower == "of") {
                return match object(&rest[2..]) {
                    Some(obj) => note(format!("is {word} of {}", third(&obj)), 0.6),
                    None => Vec::new(),
                };
            }
            if matches!(word, "a" | "an") {
                let kind = rest[1..]
                    .iter()
                    .take(2)
                    .map(|x| x.lower())
                    .collect::<Vec<_>>();
                for k in [
                    kind.join(" "),
                    kind.first().copied().unwrap_or("").to_owned(),
                ] {
                    if listed(KINDS, &k) {
                        return note(format!("is {word} {k}"), 0.6);
                    }
                }
            }
            Vec::new()
        }
        "get" => {
            // "I get seasick easily", "I get migraines": not "I get it", "I get the point".
            let Some(first) = rest.first() else {
                return Vec::new();
            };
            let chat = listed(EMPTY_VALUES, first.lower())
                || matches!(
                    first.lower(),
                    "a" | "an" | "the" | "to" | "what" | "why" | "how" | "your" | "back" | "going"
                );
            match object(rest).filter(|_| !chat) {
                Some(obj) => note(format!("gets {}", third(&obj)), 0.55),
                None => Vec::new(),
            }
        }
        "use" => match object(rest) {
            Some(obj) if !obj.iter().any(|x| x.lower == "to") => {
                note(format!("uses {}", third(&obj)), 0.55)
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}
