//! The people and pets around the user: "my daughter Zoe started school", "my friend Sam
//! moved to Oslo", "my husband hates jazz", "our dog Miso loves the beach". The clause is
//! read as if its subject said it of themselves (the third-person verb made first-person),
//! through the same families as the user's own statements; each fact comes out about
//! that subject (`subject` = "daughter Zoe"), its text naming them.

use super::clause::Word;
use super::lexicon::{listed, NOT_NAMES, PETS, RELATIONS};
use super::morph;
use super::pattern::Found;

/// People around the user who are not family.
const PEOPLE: &[&str] = &[
    "friend",
    "boss",
    "colleague",
    "coworker",
    "co-worker",
    "manager",
    "roommate",
    "flatmate",
    "housemate",
    "neighbour",
    "neighbor",
    "teacher",
    "doctor",
    "therapist",
    "coach",
    "mentor",
    "classmate",
    "landlord",
    "landlady",
];

/// Attributes that say nothing sensible of someone else in these rules.
const NOT_FOR_OTHERS: &[&str] = &["name", "correction"];

/// Whether `w` is a first name after a relation ("my friend Sam").
fn is_name(w: &Word) -> bool {
    w.is_capitalised()
        && w.text() != "I"
        && w.text().chars().all(|c| c.is_alphabetic() || c == '-')
        && !listed(NOT_NAMES, w.lower())
}

/// The subject a clause opens with ("my best friend Sam" → "friend Sam") and how many
/// words it takes.
fn subject(words: &[Word]) -> Option<(String, usize)> {
    if !matches!(words.first()?.lower(), "my" | "our") {
        return None;
    }
    let mut i = 1;
    if words.get(i).is_some_and(|w| {
        matches!(
            w.lower(),
            "best" | "little" | "big" | "older" | "younger" | "old"
        )
    }) {
        i += 1;
    }
    let who = words.get(i)?;
    let lower = who.lower();
    if !(listed(RELATIONS, lower) || listed(PETS, lower) || listed(PEOPLE, lower)) {
        return None;
    }
    match words.get(i + 1).filter(|w| is_name(w)) {
        Some(name) => Some((format!("{lower} {}", name.text()), i + 2)),
        None => Some((lower.to_owned(), i + 1)),
    }
}

/// The facts a "my <person> ..." clause states about that person.
pub(crate) fn person(words: &[Word]) -> Vec<Found> {
    let Some((who, n)) = subject(words) else {
        return Vec::new();
    };
    let rest = &words[n..];
    let Some(verb) = rest.first() else {
        return Vec::new();
    };
    // "lives" → "live", "is" → "am", "has" → "have"; a past form stays as it is.
    let first: Word = match morph::present_base(verb.lower()) {
        Some(base) if base == "be" => Word::new("am"),
        Some(base) => Word {
            text: std::borrow::Cow::Owned(base.clone().into_owned()),
            lower: std::borrow::Cow::Owned(base.into_owned()),
        },
        None => verb.clone(),
    };
    let said: Vec<Word> = std::iter::once(first)
        .chain(rest[1..].iter().cloned())
        .collect();
    let Some(p) = super::predicate(&said) else {
        return Vec::new();
    };
    super::first_person(&p)
        .into_iter()
        .filter(|f| !listed(NOT_FOR_OTHERS, f.attribute))
        .map(|mut f| {
            f.text = format!("{who} {}", f.text);
            f.subject = Some(who.clone());
            f
        })
        .collect()
}
