//! Notes: a first-person statement about the user that no attribute rule reads ("I ride
//! a motorbike to work", "I keep bees in my garden") is kept as a low-confidence `note`,
//! in the third person, so it is not lost and stays searchable.

use super::clause::Word;
use super::families::Predicate;
use super::lexicon::listed;
use super::pattern::Found;
use super::tables::{NOT_NOTE_VERBS, THIRD_PERSON};

/// The confidence of a note: the floor the extractor gives any fact.
const NOTE_CONFIDENCE: f32 = 0.5;

/// Whether `verb` is a plain present-tense activity verb a note or routine can hang on
/// (not a thought, wish, feeling, auxiliary, past form or gerund).
pub(crate) fn is_activity_verb(verb: &str) -> bool {
    verb.len() > 1
        && verb.chars().all(|c| c.is_ascii_alphabetic())
        && !listed(NOT_NOTE_VERBS, verb)
        && !verb.ends_with("ed")
        && !verb.ends_with("ing")
        && !verb.ends_with("ly")
}

/// The words as a third-person statement: "ride a motorbike to my job" → "rides a
/// motorbike to their job".
pub(crate) fn third_person(words: &[Word]) -> String {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let t = if i == 0 {
            verb_s(&w.lower)
        } else {
            match w.lower() {
                "my" => "their".to_owned(),
                "me" => "them".to_owned(),
                "myself" => "themselves".to_owned(),
                "mine" => "theirs".to_owned(),
                "i" => "they".to_owned(),
                _ => w.text.to_string(),
            }
        };
        out.push(t);
    }
    let text = out.join(" ");
    text.trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_owned()
}

fn verb_s(verb: &str) -> String {
    if let Some((_, s)) = THIRD_PERSON.iter().find(|(v, _)| *v == verb) {
        return (*s).to_owned();
    }
    let consonant_y = verb.ends_with('y')
        && verb
            .chars()
            .rev()
            .nth(1)
            .is_some_and(|c| !"aeiou".contains(c));
    if consonant_y {
        format!("{}ies", &verb[..verb.len() - 1])
    } else if ["s", "sh", "ch", "x", "z", "o"]
        .iter()
        .any(|e| verb.ends_with(e))
    {
        format!("{verb}es")
    } else {
        format!("{verb}s")
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
    if p.negated
        || p.ceased
        || p.words.len() < 3
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
        assert_eq!(verb_s("carry"), "carries");
        assert_eq!(verb_s("watch"), "watches");
        assert_eq!(verb_s("play"), "plays");
        assert_eq!(verb_s("go"), "goes");
    }
}
