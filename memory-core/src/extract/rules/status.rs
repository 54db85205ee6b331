//! Who the user is beyond a name: relationship status, nationality, what the people
//! close to them do, and their favourites.

use super::lexicon::listed;
use crate::facts::Polarity;

use super::clause::Word;
use super::families::Predicate;
use super::lexicon::{PETS, RELATIONS};
use super::pattern::{match_prefix, Found, Rule};
use super::tables::{NATIONALITIES, STATUSES};
use super::value::{clean, Kind};

/// `relationship`: "I'm married", "I'm single", "I'm in a relationship".
pub(crate) fn relationship(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let w = &p.words;
    // "I've started seeing someone", "I'm dating someone new": no longer single.
    if match_prefix(w, "am|have started|begun? seeing|dating someone|somebody").is_some() {
        let rule = Rule::pos("", "relationship", 0.75, "is {}", Kind::Thing);
        return vec![rule.found("seeing someone".to_owned())];
    }
    let Some(n) = match_prefix(w, "am|are") else {
        return Vec::new();
    };
    let rule = Rule::pos("", "relationship", 0.85, "is {}", Kind::Thing);
    if match_prefix(&w[n..], "in a relationship").is_some() {
        return vec![rule.found("in a relationship".to_owned())];
    }
    match w.get(n) {
        // "I'm married to Sam" is a family fact (read elsewhere); "I'm married" is a status.
        Some(x)
            if listed(STATUSES, x.lower())
                && w[n + 1..].iter().all(|y| {
                    matches!(
                        y.lower(),
                        "rn" | "now" | "atm" | "haha" | "btw" | "tbh" | "currently" | "again"
                    )
                }) =>
        {
            vec![rule.found(x.lower.to_string())]
        }
        // "single and loving it", "single since March", "single for a year now".
        Some(x)
            if listed(STATUSES, x.lower())
                && w.get(n + 1)
                    .is_some_and(|y| matches!(y.lower(), "and" | "since" | "for")) =>
        {
            vec![rule.found(x.lower.to_string())]
        }
        Some(x) if listed(STATUSES, x.lower()) && x.lower == "married" => {
            vec![rule.found(x.lower.to_string())]
        }
        _ => Vec::new(),
    }
}

/// `origin` from a nationality: "I'm Danish", "I am half Italian".
pub(crate) fn nationality(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let w = &p.words;
    let Some(n) = match_prefix(w, "am half?") else {
        return Vec::new();
    };
    let Some(x) = w.get(n) else {
        return Vec::new();
    };
    if !listed(NATIONALITIES, x.lower()) {
        return Vec::new();
    }
    // "I'm Italian" but not "I'm Italian food obsessed": the word ends the clause or a
    // connective follows.
    let ends = w.get(n + 1).is_none_or(|y| {
        !matches!(
            y.lower(),
            "food"
                | "cuisine"
                | "guy"
                | "girl"
                | "man"
                | "woman"
                | "restaurant"
                | "style"
                | "movies"
                | "films"
                | "music"
                | "wine"
                | "person"
                | "people"
                | "dish"
                | "cooking"
                | "enough"
                | "at"
                | "in"
                | "on"
                | "to"
                | "about"
                | "with"
                | "for"
                | "speaking"
        )
    });
    if !ends {
        return Vec::new();
    }
    let mut value = x.lower.to_string();
    if let Some(first) = value.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    let rule = Rule::pos("", "origin", 0.8, "is {}", Kind::Thing);
    vec![rule.found(value)]
}

/// "my husband is a chef", "my partner Alex is a vet": a fact about the person close to
/// the user (attribute `family`, value "husband chef"), never the user's own job.
pub(crate) fn relation_is(words: &[Word]) -> Vec<Found> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    if !listed(RELATIONS, first.lower()) || listed(PETS, first.lower()) {
        return Vec::new();
    }
    // Skip an apposed name: "partner Alex is".
    let mut i = 1;
    if words.get(i).is_some_and(|w| w.is_capitalised()) {
        i += 1;
    }
    let Some(n) = match_prefix(&words[i..], "is a|an")
        .or_else(|| match_prefix(&words[i..], "works as a|an?"))
    else {
        return Vec::new();
    };
    let rest = &words[i + n..];
    if rest
        .first()
        .is_none_or(|w| matches!(w.lower(), "bit" | "little" | "lot" | "big" | "huge"))
    {
        return Vec::new();
    }
    let Some(what) = clean(rest, Kind::Job) else {
        return Vec::new();
    };
    let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    vec![Found {
        attribute: "family",
        value: format!("{} {what}", first.lower),
        text: format!("has a {} who is {article} {what}", first.lower),
        polarity: Polarity::Positive,
        confidence: 0.75,
        ..Found::default()
    }]
}

/// Favourite categories that hold one value at a time, and the attribute they map to.
/// Anything else ("favourite thing to do", "favourite hobby") is a plain `likes`.
const FAVOURITES: &[(&[&str], &str)] = &[
    (&["food", "dish", "meal"], "favourite food"),
    (&["cuisine"], "favourite cuisine"),
    (&["colour", "color"], "favourite colour"),
    (&["band", "group"], "favourite band"),
    (&["singer", "artist", "musician"], "favourite artist"),
    (&["movie", "film"], "favourite movie"),
    (&["book", "novel"], "favourite book"),
    (&["author", "writer"], "favourite author"),
    (&["song", "track"], "favourite song"),
    (&["sport"], "favourite sport"),
    (&["team", "club"], "favourite team"),
    (&["season"], "favourite season"),
    (&["drink", "beverage"], "favourite drink"),
    (&["animal"], "favourite animal"),
    (&["show", "series"], "favourite show"),
    (&["game"], "favourite game"),
    (&["city", "place"], "favourite place"),
    (&["country"], "favourite country"),
    (&["fruit"], "favourite fruit"),
    (&["holiday"], "favourite holiday"),
    (&["restaurant"], "favourite restaurant"),
    (&["flower"], "favourite flower"),
    (&["number"], "favourite number"),
    (&["dessert"], "favourite dessert"),
];

/// The attribute for a favourite of `category` (the words after "favourite").
fn favourite_attribute(category: &[Word]) -> &'static str {
    let head = category.first().map(|w| w.lower()).unwrap_or("");
    FAVOURITES
        .iter()
        .find(|(words, _)| words.contains(&head))
        .map(|(_, attribute)| *attribute)
        .unwrap_or("likes")
}

fn favourite_found(attribute: &'static str, value: String) -> Found {
    let text = if attribute == "likes" {
        format!("likes {value}")
    } else {
        format!("{attribute} is {value}")
    };
    Found {
        attribute,
        value,
        text,
        polarity: Polarity::Positive,
        confidence: 0.85,
        ..Found::default()
    }
}

/// "my favourite food is sushi" (`words` follow "my").
pub(crate) fn favourite(words: &[Word]) -> Vec<Found> {
    let Some(n) = match_prefix(words, "all? time? favourite|favorite|fave|fav") else {
        return Vec::new();
    };
    let Some(is) = words.iter().skip(n).position(|w| w.lower == "is") else {
        return Vec::new();
    };
    let attribute = favourite_attribute(&words[n..n + is]);
    clean(&words[n + is + 1..], Kind::Thing)
        .map(|v| vec![favourite_found(attribute, super::value::fold_activity(&v))])
        .unwrap_or_default()
}

/// "Hiking is my favourite thing to do", "sushi is my favourite food".
pub(crate) fn favourite_inverted(words: &[Word]) -> Vec<Found> {
    let Some(at) = words
        .windows(2)
        .position(|w| matches!(w[0].lower(), "is" | "are") && w[1].lower == "my")
    else {
        return Vec::new();
    };
    if at == 0 || at > 5 {
        return Vec::new();
    }
    let after = &words[at + 2..];
    let Some(n) = match_prefix(after, "all? time? favourite|favorite|fave|fav") else {
        return Vec::new();
    };
    let attribute = favourite_attribute(&after[n..]);
    clean(&words[..at], Kind::Thing)
        .filter(|v| {
            !matches!(
                v.to_lowercase().as_str(),
                "this" | "that" | "it" | "he" | "she" | "they" | "what" | "which" | "who"
            )
        })
        .map(|v| vec![favourite_found(attribute, super::value::fold_activity(&v))])
        .unwrap_or_default()
}
