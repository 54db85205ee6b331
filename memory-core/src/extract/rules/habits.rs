//! What the user smokes, drinks and takes caffeine in, as three families with one value
//! each: "I smoke about ten a day" then "three months without a cigarette now" leaves
//! only the second current, whatever words each used.
//!
//! A sentence is read when it speaks of the user (an "I", or no other person at all:
//! chat leaves the "I" out), names a substance of one family ([`SUBSTANCES`]) and says
//! either that the user stopped or avoids it ([`STOPPED`], a negation) or that they take
//! it ([`TAKING`]: a verb of taking it, an amount or how often). The fact keeps the
//! user's words, so "sober for 100 days" or "two flat whites a day" is what is recalled.

use crate::facts::{FactCandidate, Polarity};

/// A family of habits, the words that name its substance, and how its two states read.
struct Substance {
    attribute: &'static str,
    words: &'static [&'static str],
    taking: &'static str,
    stopped: &'static str,
}

/// The families, the most specific first: "I don't drink coffee" is about caffeine, not
/// alcohol.
const SUBSTANCES: &[Substance] = &[
    Substance {
        attribute: "caffeine",
        words: &[
            "coffee",
            "coffees",
            "espresso",
            "espressos",
            "latte",
            "lattes",
            "cappuccino",
            "cappuccinos",
            "americano",
            "americanos",
            "flat white",
            "flat whites",
            "caffeine",
            "decaf",
            "energy drink",
            "energy drinks",
            "red bull",
        ],
        taking: "drinks coffee",
        stopped: "avoids caffeine",
    },
    Substance {
        attribute: "smoking",
        words: &[
            "smoke",
            "smokes",
            "smoking",
            "smoked",
            "smoker",
            "cigarette",
            "cigarettes",
            "cig",
            "cigs",
            "fags",
            "vape",
            "vapes",
            "vaping",
            "vaper",
            "nicotine",
            "roll-ups",
            "cigars",
            "cigar",
        ],
        taking: "smokes",
        stopped: "does not smoke",
    },
    Substance {
        attribute: "drinking",
        words: &[
            "alcohol",
            "booze",
            "beer",
            "beers",
            "pint",
            "pints",
            "wine",
            "glass of red",
            "glass of white",
            "gin",
            "vodka",
            "whisky",
            "whiskey",
            "cider",
            "lager",
            "sober",
            "sobriety",
            "teetotal",
            "teetotaller",
            "teetotaler",
            "drinker",
            "drinking",
            "a drink",
            "cocktails",
            "prosecco",
        ],
        taking: "drinks alcohol",
        stopped: "does not drink alcohol",
    },
];

/// Words that say the user stopped or keeps off a substance.
const STOPPED: &[&str] = &[
    "quit",
    "quitting",
    "stopped",
    "gave up",
    "given up",
    "giving up",
    "cut out",
    "off the",
    "without a",
    "without any",
    "sober",
    "sobriety",
    "teetotal",
    "teetotaller",
    "teetotaler",
    "non-smoker",
    "non smoker",
    "ex-smoker",
    "non-drinker",
    "no longer",
    "don't",
    "dont",
    "do not",
    "not",
    "never",
    "haven't",
    "havent",
    "have not",
    "clean for",
    "kicked",
    "decaf",
    "switched to",
];

/// Words that say the user takes a substance: a verb of taking, an amount, how often.
const TAKING: &[&str] = &[
    "smoke",
    "smokes",
    "smoking",
    "vape",
    "vapes",
    "vaping",
    "drink",
    "drinks",
    "drinking",
    "have a",
    "have two",
    "have three",
    "have four",
    "have five",
    "having",
    "all day",
    "constantly",
    "chain",
    "every",
    "each morning",
    "each day",
    "a day",
    "a week",
    "a night",
    "per day",
    "every day",
    "every night",
    "every evening",
    "most evenings",
    "most nights",
    "most days",
    "with dinner",
    "person",
    "addict",
    "smoker",
    "drinker",
    "on about",
    "pints",
    "couple of",
    "glass of",
];

/// Words that put a sentence on someone else.
const OTHERS: &[&str] = &[
    "he", "she", "they", "his", "her", "their", "he's", "she's", "they're", "my", "our", "you",
    "your",
];

/// The habit facts `text` (the sentences that state something) gives.
pub(super) fn habits(text: &str) -> Vec<FactCandidate> {
    let mut out: Vec<FactCandidate> = Vec::new();
    for sentence in text.split_inclusive(['.', '!', ';', '\n']) {
        for clause in sentence.split([',', '.', '!', ';', '\n']) {
            let said = clause.trim();
            let lower = format!(" {} ", said.to_lowercase().replace('’', "'"));
            let Some(substance) = SUBSTANCES.iter().find(|s| has_any(&lower, s.words)) else {
                continue;
            };
            if !speaks_of_user(&lower)
                || out
                    .iter()
                    .any(|c| c.attribute.as_deref() == Some(substance.attribute))
            {
                continue;
            }
            let stopped = has_any(&lower, STOPPED);
            if !stopped && !has_any(&lower, TAKING) {
                continue;
            }
            // Keeping off it is a state of the family as much as taking it ("does not
            // smoke" replaces "smokes"), so both are positive facts of one attribute.
            let value = if stopped {
                substance.stopped
            } else {
                substance.taking
            };
            let polarity = Polarity::Positive;
            let words = in_third_person(said);
            let mut c = FactCandidate::new(format!("{value} ({words})"), 0.75)
                .with_attribute(substance.attribute, value)
                .with_polarity(polarity);
            c.topics = vec![substance.attribute.to_owned()];
            out.push(c);
        }
    }
    out
}

/// Whether a candidate's `text` names a substance of the habit family `attribute` (it
/// gives way to that family's fact read from the same statement).
pub(super) fn mentions(attribute: &str, text: &str) -> bool {
    let lower = format!(" {} ", text.to_lowercase());
    SUBSTANCES
        .iter()
        .find(|s| s.attribute == attribute)
        .is_some_and(|s| {
            has_any(&lower, s.words) || (s.attribute == "smoking" && lower.contains("smok"))
        })
}

/// Whether ` lower ` holds one of `words` as whole words.
fn has_any(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| {
        lower.match_indices(w).any(|(i, _)| {
            let before = lower[..i].chars().next_back().unwrap_or(' ');
            let after = lower[i + w.len()..].chars().next().unwrap_or(' ');
            !before.is_alphanumeric() && !after.is_alphanumeric()
        })
    })
}

/// Whether the clause is the user's: an "I", or no other person named.
fn speaks_of_user(lower: &str) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    let me = words.iter().any(|w| {
        matches!(
            *w,
            "i" | "i'm" | "im" | "i've" | "ive" | "i'd" | "me" | "myself"
        )
    });
    me || !words.iter().any(|w| OTHERS.contains(w))
}

/// The clause with the user's first-person words turned to the third ("I've been sober"
/// → "they've been sober"), as said otherwise.
fn in_third_person(said: &str) -> String {
    said.split_whitespace()
        .map(|w| match w.to_lowercase().replace('’', "'").as_str() {
            "i" => "they".to_owned(),
            "i'm" | "im" => "they're".to_owned(),
            "i've" | "ive" => "they've".to_owned(),
            "my" => "their".to_owned(),
            "me" => "them".to_owned(),
            _ => w.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<(String, String)> {
        habits(text)
            .into_iter()
            .map(|c| (c.attribute.unwrap_or_default(), c.value.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn taking_and_stopping_each_family() {
        assert_eq!(
            read("I get through a pack of cigs a day."),
            [("smoking".into(), "smokes".into())]
        );
        assert_eq!(
            read("six weeks without a cigarette now!"),
            [("smoking".into(), "does not smoke".into())]
        );
        assert_eq!(
            read("I have a couple of pints most nights."),
            [("drinking".into(), "drinks alcohol".into())]
        );
        assert_eq!(
            read("been sober since march."),
            [("drinking".into(), "does not drink alcohol".into())]
        );
        assert_eq!(
            read("I don't drink coffee at all."),
            [("caffeine".into(), "avoids caffeine".into())]
        );
        assert_eq!(
            read("I'm on three lattes a day."),
            [("caffeine".into(), "drinks coffee".into())]
        );
    }

    #[test]
    fn other_people_and_mere_mentions_give_nothing() {
        assert!(read("my dad smokes like a chimney.").is_empty());
        assert!(read("she quit drinking last year.").is_empty());
        assert!(read("I bought a bottle of wine for the party.").is_empty());
        assert!(read("The coffee shop on the corner closed.").is_empty());
    }

    #[test]
    fn the_fact_keeps_the_users_words() {
        let c = &habits("I've been sober for 40 days.")[0];
        assert_eq!(
            c.text,
            "does not drink alcohol (they've been sober for 40 days)"
        );
    }
}
