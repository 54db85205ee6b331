//! Reactions told by what they do to the user: "the last time I took nurofen I broke out
//! in blotches", "within ten minutes of her cats my eyes are streaming", "onion and garlic
//! do awful things to my gut".
//!
//! A sentence that names a known trigger ([`TRIGGERS`]: the common allergens, foods that
//! upset, medicines people react to, stinging insects, animals, pollen) and, near it, a
//! sign that happened to the user ([`ALLERGIC_SIGNS`]: the skin, swelling, the airways,
//! an adrenaline pen; [`GUT_SIGNS`]: the gut) tells an allergy or, for the gut alone, an
//! intolerance to that trigger. The sign must be the user's (its clause speaks of the user,
//! or of no one in a sentence that does) and not denied ("no rash this time").
//!
//! The vocabulary is data (English, small and general); nothing here names a sentence.

use super::health::{find_word, health, person_order};
use super::lexicon::listed;
use crate::facts::{FactCandidate, Polarity};

/// What people react to. Matched as whole words, also with a plural `s` or `es`.
pub(crate) const TRIGGERS: &[&str] = &[
    // The allergens food labels must name.
    "peanut",
    "nut",
    "tree nut",
    "cashew",
    "almond",
    "walnut",
    "hazelnut",
    "pecan",
    "pistachio",
    "brazil nut",
    "pine nut",
    "macadamia",
    "casein",
    "whey",
    "gelatin",
    "gelatine",
    "fennel",
    "ant",
    "fire ant",
    "mosquito",
    "jellyfish",
    "horsefly",
    "ragweed",
    "birch",
    "cobalt",
    "propolis",
    "yeast",
    "polyols",
    "sesame",
    "egg",
    "milk",
    "dairy",
    "lactose",
    "wheat",
    "gluten",
    "soy",
    "soya",
    "fish",
    "shellfish",
    "prawn",
    "shrimp",
    "crab",
    "lobster",
    "mussel",
    "oyster",
    "scallop",
    "squid",
    "mustard",
    "celery",
    "lupin",
    "sulphite",
    "sulfite",
    // Other foods and drinks that commonly upset.
    "kiwi",
    "lychee",
    "buckwheat",
    "strawberry",
    "strawberries",
    "banana",
    "avocado",
    "mango",
    "peach",
    "peaches",
    "pineapple",
    "tomato",
    "tomatoes",
    "citrus",
    "coconut",
    "corn",
    "fructose",
    "sorbitol",
    "onion",
    "garlic",
    "beans",
    "lentils",
    "chickpeas",
    "pulses",
    "chilli",
    "chili",
    "spicy food",
    "msg",
    "caffeine",
    "coffee",
    "alcohol",
    "red wine",
    "histamine",
    "tyramine",
    "salicylate",
    "aspartame",
    "nitrates",
    "nightshade",
    "cinnamon",
    "poppy seed",
    "lanolin",
    "macadamia",
    "cheese",
    "cream",
    "ice cream",
    // Medicines people react to.
    "penicillin",
    "amoxicillin",
    "antibiotics",
    "ibuprofen",
    "nurofen",
    "aspirin",
    "codeine",
    "morphine",
    "sulfa",
    "anaesthetic",
    "anesthetic",
    "contrast dye",
    // Things met outside food.
    "latex",
    "nickel",
    "plasters",
    "wasp",
    "bee",
    "hornet",
    "cats",
    "dogs",
    "horses",
    "rabbits",
    "guinea pigs",
    "feathers",
    "pollen",
    "grass",
    "dust",
    "dust mites",
    "mould",
    "mold",
    "perfume",
    "fragrance",
    "wool",
];

/// Signs of an allergic reaction, each with the words one of which must be near it
/// (within four words) when the sign alone says little ("streaming" is an allergy only
/// with "eyes").
pub(crate) const ALLERGIC_SIGNS: &[(&str, &[&str])] = &[
    ("hives", &[]),
    ("welts", &[]),
    ("rash", &[]),
    ("rashes", &[]),
    ("blotches", &[]),
    ("blotchy", &[]),
    ("swell", &[]),
    ("swells", &[]),
    ("swelled", &[]),
    ("swelling", &[]),
    ("swollen", &[]),
    ("puffed", &[]),
    ("puffy", &[]),
    ("blew", &["lips", "face", "eyes", "tongue", "throat"]),
    ("blow", &["up"]),
    ("ballooned", &[]),
    ("tingled", &[]),
    ("blister", &[]),
    ("blisters", &[]),
    ("blistered", &[]),
    ("weep", &["skin"]),
    ("weeping", &["skin"]),
    ("close", &["throat"]),
    ("closes", &["throat"]),
    ("itchy", &[]),
    ("itching", &[]),
    ("tingly", &[]),
    ("tingling", &[]),
    ("wheezing", &[]),
    ("wheezy", &[]),
    ("wheeze", &[]),
    ("streaming", &["eyes", "eye", "nose"]),
    ("watering", &["eyes", "eye"]),
    ("sneezing", &[]),
    ("tight", &["throat", "chest"]),
    ("closing", &["throat"]),
    (
        "breathe",
        &[
            "couldn't",
            "couldnt",
            "can't",
            "cant",
            "barely",
            "struggled",
            "struggling",
        ],
    ),
    ("anaphylaxis", &[]),
    ("anaphylactic", &[]),
    ("epipen", &[]),
    ("epi-pen", &[]),
    ("auto-injector", &[]),
    ("adrenaline", &["pen", "shot", "jab"]),
    ("welted", &[]),
    // Where a bad reaction ends up.
    (
        "a&e",
        &[
            "ended", "sent", "rushed", "been", "went", "trip", "landed", "twice",
        ],
    ),
    (
        "hospital",
        &["ended", "sent", "rushed", "landed", "straight"],
    ),
    ("ambulance", &["called", "needed", "ride", "in"]),
];

/// Signs of a food that upsets the gut.
pub(crate) const GUT_SIGNS: &[(&str, &[&str])] = &[
    (
        "stomach",
        &[
            "my", "wrecks", "upset", "upsets", "kills", "destroys", "hurts",
        ],
    ),
    (
        "gut",
        &["my", "wrecks", "upset", "upsets", "kills", "destroys"],
    ),
    ("tummy", &[]),
    ("bloated", &[]),
    ("bloating", &[]),
    ("cramps", &[]),
    ("loo", &[]),
    ("toilet", &[]),
    ("toilets", &[]),
    ("diarrhoea", &[]),
    ("diarrhea", &[]),
    ("runs", &["the"]),
    ("throw", &["up"]),
    ("threw", &["up"]),
    ("throwing", &["up"]),
    ("vomit", &[]),
    ("vomiting", &[]),
    ("nauseous", &[]),
    ("nausea", &[]),
    ("heartburn", &[]),
    ("indigestion", &[]),
    ("migraine", &[]),
    ("migraines", &[]),
    ("headache", &[]),
    ("headaches", &[]),
    ("head", &["pounding", "splitting", "thumping"]),
    ("palpitations", &[]),
    ("through", &["straight", "right"]),
    ("ache", &["joints", "joint", "stomach", "head"]),
    ("aches", &["joints", "joint", "stomach", "head"]),
    ("sick", &[]),
    ("ill", &[]),
];

/// Words after "sick" or "ill" that make it no reaction: "sick of", "sick day".
const NOT_AFTER_SICK: &[&str] = &[
    "of", "with", "about", "day", "days", "note", "leave", "pay", "to", "at",
];

/// The parts of a trigger named with it: "egg *yolks*", "sesame *seeds*".
const PARTS: &[&str] = &[
    "yolk", "yolks", "white", "whites", "seed", "seeds", "oil", "flour", "milk", "butter",
    "powder", "extract", "sauce",
];

/// Whether a lowercased sentence tells a sign of an allergic reaction anywhere.
pub(super) fn has_allergic_sign(lower: &str) -> bool {
    let words = words_at(lower);
    words.iter().enumerate().any(|(i, (_, w))| {
        ALLERGIC_SIGNS.iter().any(|(s, wanted)| {
            s == w
                && (wanted.is_empty()
                    || words[i.saturating_sub(4)..(i + 5).min(words.len())]
                        .iter()
                        .any(|(_, n)| wanted.contains(n)))
        })
    })
}

/// Whether a lowercased sentence tells any sign of a reaction (allergic or the gut's).
pub(super) fn has_sign(lower: &str) -> bool {
    has_allergic_sign(lower)
        || words_at(lower).iter().any(|(_, w)| {
            GUT_SIGNS
                .iter()
                .any(|(s, wanted)| s == w && wanted.is_empty())
        })
}

/// How far apart (in words) a trigger and a sign may be in a sentence.
const NEAR: usize = 20;

/// Whether `value` names a known trigger ("cashews", "sesame seeds").
pub(crate) fn is_trigger(value: &str) -> bool {
    TRIGGERS.iter().any(|t| trigger_at(value, t).is_some())
}

/// The allergies and intolerances a lowercased sentence tells by their signs: each
/// trigger it names near a sign of the user's, as "is allergic to X" or "is intolerant
/// to X".
///
/// A sentence that asks ("is it normal that my mouth goes itchy every time I eat kiwi?")
/// tells one too: the sign happened.
pub(super) fn reactions_by_symptom(lower: &str) -> Vec<FactCandidate> {
    let words = words_at(lower);
    let near = |i: usize, wanted: &[&str]| {
        wanted.is_empty()
            || words[i.saturating_sub(4)..(i + 5).min(words.len())]
                .iter()
                .any(|(_, w)| wanted.contains(w))
    };
    // The signs of the user's, by word index: (index, allergic?).
    let mut signs: Vec<(usize, bool)> = Vec::new();
    for (i, (at, w)) in words.iter().enumerate() {
        // "a rash-fest" is a rash.
        let w = &if w.contains('&') {
            w
        } else {
            w.split('-').next().unwrap_or(w)
        };
        let allergic = ALLERGIC_SIGNS.iter().find(|(s, _)| s == w);
        let gut = GUT_SIGNS.iter().find(|(s, _)| s == w);
        let Some(((_, wanted), is_allergic)) = allergic
            .map(|s| (s, true))
            .or_else(|| gut.map(|s| (s, false)))
        else {
            continue;
        };
        if !near(i, wanted) {
            continue;
        }
        if matches!(*w, "sick" | "ill")
            && words
                .get(i + 1)
                .is_some_and(|(_, n)| listed(NOT_AFTER_SICK, n))
        {
            continue;
        }
        // "couldn't breathe" is the sign itself.
        let denial = *w != "breathe" && sign_denied(&words[i.saturating_sub(4)..i]);
        if denial || !signs_users(lower, *at) {
            continue;
        }
        signs.push((i, is_allergic));
    }
    if signs.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<FactCandidate> = Vec::new();
    for trigger in TRIGGERS {
        let Some(at) = trigger_at(lower, trigger) else {
            continue;
        };
        let said = &lower[at..];
        let said = &said[..said
            .find(|c: char| !(c.is_alphanumeric() || c == ' ' || c == '-'))
            .unwrap_or(said.len())];
        // "egg yolks", "sesame seeds", "peanut oil": the part named goes with it.
        let parts = trigger.split(' ').count();
        let part = said
            .split(' ')
            .nth(parts)
            .filter(|p| listed(PARTS, p))
            .map_or(0, |_| 1);
        let named = said
            .split(' ')
            .take(parts + part)
            .collect::<Vec<_>>()
            .join(" ");
        let i = words.iter().take_while(|(w_at, _)| *w_at < at).count();
        let close: Vec<bool> = signs
            .iter()
            .filter(|(s, _)| s.abs_diff(i) <= NEAR)
            .map(|(_, a)| *a)
            .collect();
        if close.is_empty() {
            continue;
        }
        // A longer trigger already read ("tree nuts", "red wine") holds this one.
        if out
            .iter()
            .any(|c| c.value.as_deref().is_some_and(|v| v.contains(&named)))
        {
            continue;
        }
        let (verb, attribute) = if close.iter().any(|a| *a) {
            ("is allergic to", "allergy")
        } else {
            ("is intolerant to", "intolerance")
        };
        out.push(health(
            &format!("{verb} {named}"),
            attribute,
            &named,
            Polarity::Negative,
        ));
    }
    out
}

/// Whether the words right before a sign deny it: "no rash", "didn't swell", "never
/// itchy". ("anything with almonds in it makes me itchy" denies nothing.)
fn sign_denied(before: &[(usize, &str)]) -> bool {
    before.iter().any(|(_, w)| {
        matches!(*w, "no" | "not" | "never" | "without" | "none")
            || w.ends_with("n't")
            || matches!(
                *w,
                "didnt" | "dont" | "doesnt" | "wasnt" | "cant" | "havent"
            )
    })
}

/// Where `trigger` is named in `lower` as a whole word, also as a plural.
fn trigger_at(lower: &str, trigger: &str) -> Option<usize> {
    ["", "s", "es"].iter().find_map(|ending| {
        if ending.is_empty() {
            find_word(lower, trigger)
        } else {
            find_word(lower, &format!("{trigger}{ending}"))
        }
    })
}

/// The words of `lower` with where each starts; a word keeps its apostrophe and `&`.
fn words_at(lower: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in lower.char_indices() {
        let part = c.is_alphanumeric() || c == '\'' || c == '-' || c == '&';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &lower[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &lower[s..]));
    }
    out
}

/// Whether the sign at `at` happened to the user: its clause (between commas, "and",
/// "but", "so", "because") speaks of the user first, or of no one in a sentence that
/// does not speak of someone else first.
fn signs_users(lower: &str, at: usize) -> bool {
    let (start, end) = super::health::clause_around(lower, at, true);
    person_order(&lower[start..end]).unwrap_or_else(|| person_order(lower) != Some(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<String> {
        reactions_by_symptom(&text.to_lowercase())
            .into_iter()
            .map(|c| c.text)
            .collect()
    }

    #[test]
    fn a_trigger_near_a_sign_of_the_users_is_an_allergy_or_intolerance() {
        assert_eq!(
            read("every time i have anything with almonds in it my lips go puffy and itchy"),
            ["is allergic to almonds"]
        );
        assert_eq!(
            read("the tomatoes in that sauce gave me cramps all night, same as always"),
            ["is intolerant to tomatoes"]
        );
        assert_eq!(
            read("we visited the farm and within an hour of the horses my eyes were streaming"),
            ["is allergic to horses"]
        );
        assert_eq!(
            read("is it just me or does my throat feel tight every time i eat walnuts?"),
            ["is allergic to walnuts"]
        );
    }

    #[test]
    fn no_sign_of_the_users_no_reaction() {
        // The sign is someone else's.
        assert!(read("my brother ate prawns and came up in hives").is_empty());
        // Denied.
        assert!(read("had prawns last night and no rash this time").is_empty());
        // A trigger without a sign, a sign without a trigger.
        assert!(read("i bought eggs and milk on the way home").is_empty());
        assert!(read("i felt sick on the ferry").is_empty());
        // "sick of", and streaming without eyes.
        assert!(read("i'm sick of cheese sandwiches").is_empty());
        assert!(read("i was streaming the match and eating peanuts").is_empty());
    }

    #[test]
    fn triggers_are_known_as_said() {
        assert!(is_trigger("cashews"));
        assert!(is_trigger("sesame seeds"));
        assert!(!is_trigger("mondays"));
    }
}
