//! Notes: a first-person statement about the user that no attribute rule reads ("I ride
//! a motorbike to work", "I keep bees in my garden") is kept as a low-confidence `note`,
//! in the third person, so it is not lost and stays searchable.

use super::clause::Word;
use super::families::Predicate;
use super::lexicon::{listed, ADVERBS, EMPTY_VALUES};
use super::morph;
use super::pattern::Found;
use super::tables::NOT_NOTE_VERBS;

/// The confidence of a note: the floor the extractor gives any fact.
const NOTE_CONFIDENCE: f32 = 0.5;

/// Whether `verb` is a plain present-tense activity verb a note or routine can hang on
/// (not a thought, wish, feeling, auxiliary, past form, gerund or adverb).
pub(crate) fn is_activity_verb(verb: &str) -> bool {
    verb.len() > 1
        && verb.chars().all(|c| c.is_ascii_alphabetic())
        && !listed(NOT_NOTE_VERBS, verb)
        && !listed(ADVERBS, verb)
        && !morph::is_past(verb)
        && !verb.ends_with("ing")
        && !verb.ends_with("ly")
}

/// The words as a third-person statement: "ride a motorbike to my job" → "rides a
/// motorbike to their job". The verb is conjugated by [`morph::third_person`].
pub(crate) fn third_person(words: &[Word]) -> String {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let t = if i == 0 {
            match w.lower() {
                "am" => "is".to_owned(),
                verb => morph::third_person(verb),
            }
        } else {
            possessive_to_third(w)
        };
        out.push(t);
    }
    let text = out.join(" ");
    text.trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_owned()
}

/// A word of the user's, as said of them: "my" → "their", "me" → "them".
pub(crate) fn possessive_to_third(w: &Word) -> String {
    match w.lower() {
        "my" | "our" => "their".to_owned(),
        "me" | "us" => "them".to_owned(),
        "myself" | "ourselves" => "themselves".to_owned(),
        "mine" | "ours" => "theirs".to_owned(),
        "i" | "we" => "they".to_owned(),
        _ => w.text.to_string(),
    }
}

/// A note for a first-person predicate no rule understood, when it is a plain statement
/// of what the user does: present tense, an activity verb, at least an object, not
/// negated, not about the assistant.
pub(crate) fn note(p: &Predicate) -> Vec<Found> {
    let Some(verb) = p.words.first() else {
        return Vec::new();
    };
    let about_assistant = p
        .words
        .iter()
        .any(|w| matches!(w.lower(), "you" | "your" | "yours" | "u" | "ur"));
    // "I support Arsenal", "I do yoga": two words are enough when the second has content.
    let short_ok = p.words.len() == 2
        && p.words.get(1).is_some_and(|w| {
            w.lower.len() > 2
                && w.lower.chars().all(char::is_alphabetic)
                && !listed(ADVERBS, w.lower())
                && !listed(EMPTY_VALUES, w.lower())
                && !w.lower.ends_with("ly")
                && !matches!(
                    w.lower(),
                    "too"
                        | "so"
                        | "yes"
                        | "no"
                        | "not"
                        | "well"
                        | "there"
                        | "here"
                        | "home"
                        | "lol"
                        | "haha"
                        | "okay"
                )
        });
    if p.negated
        || p.ceased
        || (p.words.len() < 3 && !short_ok)
        || p.words.len() > 16
        || about_assistant
        || !is_activity_verb(&verb.lower)
    {
        return Vec::new();
    }
    let text = third_person(&p.words);
    vec![Found {
        attribute: "note",
        value: text.clone(),
        text,
        polarity: crate::facts::Polarity::Positive,
        confidence: NOTE_CONFIDENCE,
        ..Found::default()
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_person_forms() {
        let w: Vec<Word> = "ride a motorbike to my job"
            .split(' ')
            .map(Word::new)
            .collect();
        assert_eq!(third_person(&w), "rides a motorbike to their job");
        let w: Vec<Word> = "hold a bake sale".split(' ').map(Word::new).collect();
        assert_eq!(third_person(&w), "holds a bake sale");
        assert!(!is_activity_verb("held"));
        assert!(!is_activity_verb("even"));
        assert!(!is_activity_verb("went"));
    }
}
