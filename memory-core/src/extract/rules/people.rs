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

/// A relation, pet or other person ("sister", "dog", "flatmate").
fn is_someone(word: &str) -> bool {
    listed(RELATIONS, word) || listed(PETS, word) || listed(PEOPLE, word)
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
    // "our guinea pig Pepper": a describing word before the animal.
    if words.get(i + 1).is_some_and(|w| listed(PETS, w.lower()))
        && words
            .get(i)
            .is_some_and(|w| !is_someone(w.lower()) || listed(PETS, w.lower()))
    {
        i += 1;
    }
    let who = words.get(i)?;
    let lower = who.lower();
    if !is_someone(lower) {
        return None;
    }
    let named = |w: &&Word| is_name(w) || super::families::is_lowercase_name(w, words.get(i + 2));
    match words.get(i + 1).filter(named) {
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
    // What a pet did today ("squeaks when the fridge opens") is no fact worth keeping.
    let pet = who.split(' ').any(|w| listed(PETS, w));
    super::first_person(&p)
        .into_iter()
        .filter(|f| !listed(NOT_FOR_OTHERS, f.attribute))
        .filter(|f| !(pet && matches!(f.attribute, "note" | "event" | "routine")))
        .map(|mut f| {
            f.text = format!("{who} {}", f.text);
            f.subject = Some(who.clone());
            f
        })
        .collect()
}
