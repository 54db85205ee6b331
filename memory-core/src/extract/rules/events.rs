//! Events: what the user did, in the past tense ("I went to a support group yesterday",
//! "I adopted a dog", "we bought a house", "I held a bake sale"). Each is an `event`
//! fact in the third person, short, with its time words left out (the time module
//! resolves them from the message); events never supersede each other.

use super::clause::Word;
use super::families::Predicate;
use super::lexicon::{listed, PETS};
use super::morph;
use super::notes::possessive_to_third;
use super::pattern::Found;
use super::when;

/// Past verbs that report a thought, a feeling or speech, not something done.
const NOT_EVENT_VERBS: &[&str] = &[
    "thought",
    "said",
    "told",
    "asked",
    "heard",
    "felt",
    "wondered",
    "meant",
    "wanted",
    "needed",
    "hoped",
    "forgot",
    "remembered",
    "guessed",
    "realized",
    "realised",
    "noticed",
    "knew",
    "liked",
    "loved",
    "hated",
    "enjoyed",
    "preferred",
    "wished",
    "tried",
    "decided",
    "used",
    "supposed",
    "figured",
    "assumed",
    "expected",
    "believed",
    "understood",
    "agreed",
    "was",
    "were",
    "had",
    "mentioned",
    "promised",
    "seemed",
    "got",
    "did",
    "made",
    "guess",
    "imagined",
    "replied",
    "answered",
    "explained",
    "laughed",
    "cried",
    "missed",
    "loved",
    "appreciated",
    "read",
    "saw",
    "looked",
    "watched",
    "listened",
    "learned",
    "learnt",
];

/// Past verbs that count even before a bare object ("I did well", "I got a puppy", "I
/// made a cake", "I saw a movie") — provided the object carries content.
const LIGHT_EVENT_VERBS: &[&str] = &["did", "got", "made", "read", "watched", "learned"];

/// Words an event's object never starts with: pronouns, intensifiers, clause openers.
const NOT_OBJECT_STARTS: &[&str] = &[
    "so",
    "very",
    "really",
    "too",
    "quite",
    "pretty",
    "kinda",
    "like",
    "if",
    "that",
    "what",
    "how",
    "why",
    "when",
    "where",
    "there",
    "it",
    "this",
    "you",
    "him",
    "her",
    "them",
    "me",
    "up",
    "out",
    "back",
    "on",
    "off",
    "around",
    "by",
    "over",
    "sick",
    "tired",
    "bored",
    "lucky",
    "better",
    "worse",
    "used",
    "i",
    "he",
    "she",
    "we",
    "they",
    "us",
    "one",
    "those",
    "these",
    "which",
    "who",
    "something",
    "anything",
    "nothing",
    "everything",
    "everyone",
];

/// The most words an event keeps.
const MAX_WORDS: usize = 10;

/// Where an event's object ends.
const STOPS: &[&str] = &[
    "because", "so", "which", "but", "when", "while", "since", "although", "though", "and", "then",
    "after", "before", "until", "as", "lol", "haha",
];

/// The event a past-tense predicate states, if any: `we` marks a shared event (a little
/// less sure to be the user's own).
pub(crate) fn event(p: &Predicate, we: bool) -> Vec<Found> {
    if p.negated || p.ceased {
        return Vec::new();
    }
    let Some(verb) = p.words.first() else {
        return Vec::new();
    };
    let v = verb.lower();
    if !morph::is_past(v) || (listed(NOT_EVENT_VERBS, v) && !listed(LIGHT_EVENT_VERBS, v)) {
        return Vec::new();
    }
    let object = when::without_time(&p.words[1..]);
    let end = object
        .iter()
        .position(|w| listed(STOPS, w.lower()))
        .unwrap_or(object.len());
    let object = &object[..end];
    let Some(first) = object.first() else {
        return Vec::new();
    };
    if listed(NOT_OBJECT_STARTS, first.lower()) {
        // "went up to her", "got so tired": a bare particle or a state, not an event.
        let particle_then_place = matches!(first.lower(), "up" | "out" | "back" | "on" | "off")
            && object.len() > 2
            && !listed(LIGHT_EVENT_VERBS, v);
        if !particle_then_place {
            return Vec::new();
        }
    }
    if object.len() + 1 > MAX_WORDS || !object.iter().any(is_content) {
        return Vec::new();
    }
    let words: Vec<String> = std::iter::once(verb.text().to_lowercase())
        .chain(object.iter().map(possessive_to_third))
        .collect();
    let text = words.join(" ");
    let text = text
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_owned();
    let mut out = vec![Found {
        attribute: "event",
        value: text.clone(),
        text,
        polarity: crate::facts::Polarity::Positive,
        confidence: if we { 0.55 } else { 0.6 },
        ..Found::default()
    }];
    out.extend(adopted_pet(v, object));
    out
}

/// A word with content: not a pronoun, article, preposition or particle.
fn is_content(w: &Word) -> bool {
    const FUNCTION: &[&str] = &[
        "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "to", "at", "in",
        "on", "of", "for", "with", "from", "into", "up", "out", "back", "off", "some", "any",
        "all", "there", "here", "it", "that", "this", "them", "him", "me", "us", "you", "so",
        "very", "really", "just", "well", "too", "again", "home",
    ];
    let lower = w.lower();
    lower.chars().any(char::is_alphanumeric) && !listed(FUNCTION, lower)
}

/// "adopted a dog", "got a puppy", "rescued two cats": the pet the user now has.
fn adopted_pet(verb: &str, object: &[Word]) -> Option<Found> {
    if !matches!(verb, "adopted" | "got" | "rescued" | "bought") {
        return None;
    }
    let (count, rest) = object.split_first()?;
    if !matches!(count.lower(), "a" | "an" | "one") {
        return None;
    }
    let at = rest.iter().take(3).position(|w| listed(PETS, w.lower()))?;
    if rest
        .get(at + 1)
        .is_some_and(|w| w.lower != "named" && w.lower != "called")
    {
        return None;
    }
    // "a new puppy", "a cute kitten": the kind, not how the user feels about it.
    let kind = rest[..=at]
        .iter()
        .map(|w| w.lower())
        .filter(|w| {
            !matches!(
                *w,
                "new" | "little" | "cute" | "adorable" | "sweet" | "tiny" | "second" | "another"
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let named = rest.get(at + 2).filter(|w| w.is_capitalised());
    let (value, text) = match named {
        Some(name) => (
            format!("{kind} {}", name.text()),
            format!("has a {kind} named {}", name.text()),
        ),
        None => (kind.clone(), format!("has a {kind}")),
    };
    Some(Found {
        attribute: "pet",
        value,
        text,
        polarity: crate::facts::Polarity::Positive,
        confidence: 0.75,
        ..Found::default()
    })
}
