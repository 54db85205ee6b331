//! Health words the tables do not list: what a clinician named ("the dermatologist called
//! it cold urticaria", "cardiology diagnosed me with POTS", "the consultant says it's
//! Ménière's"), and words shaped like a condition or a medicine ("tendonitis",
//! "g6pd deficiency", "doxycycline", "amiodarone").
//!
//! The vocabulary is data (English, small and general): who diagnoses
//! ([`CLINICIANS`]), how they say it ([`NAMING`]), the endings conditions and medicines
//! are made with ([`CONDITION_ENDINGS`], [`CONDITION_HEADS`], [`MEDICINE_ENDINGS`]).

use super::health::{denied, find_word, health, owner_at, person_order, users_at};
use super::lexicon::listed;
use super::symptoms::is_trigger;
use crate::facts::{FactCandidate, Polarity};

/// Who names a condition.
const CLINICIANS: &[&str] = &[
    "doctor",
    "doctors",
    "dr",
    "gp",
    "consultant",
    "specialist",
    "dermatologist",
    "cardiologist",
    "cardiology",
    "neurologist",
    "neurology",
    "allergist",
    "haematologist",
    "hematologist",
    "rheumatologist",
    "gastroenterologist",
    "gastro",
    "endocrinologist",
    "psychiatrist",
    "psychologist",
    "physio",
    "physiotherapist",
    "nurse",
    "surgeon",
    "dentist",
    "optician",
    "optometrist",
    "ent",
    "hospital",
    "clinic",
    "dietitian",
    "dietician",
    "midwife",
    "paediatrician",
    "oncologist",
    "urologist",
    "gynaecologist",
    "pharmacist",
    "tests",
    "test",
    "bloods",
    "scan",
    "biopsy",
];

/// How a clinician names what the user has: the words between them and the name.
const NAMING: &[&str] = &[
    "says it's",
    "said it's",
    "says it is",
    "said it was",
    "reckons it's",
    "thinks it's",
    "thinks it is",
    "confirmed it's",
    "confirmed it was",
    "called it",
    "calls it",
    "suspects",
    "suspect",
    "says i've got",
    "said i've got",
    "says i have",
    "said i have",
    "reckons i have",
    "reckons i've got",
    "thinks i have",
    "thinks i've got",
    "diagnosed me with",
    "diagnosed it as",
    "blames",
    "blamed",
    "they call it",
    "showed",
    "confirmed",
    "said",
    "says",
];

/// Names that say nothing is wrong, or are no name at all.
const NOT_NAMES: &[&str] = &[
    "it's",
    "its",
    "i'm",
    "im",
    "i've",
    "i'd",
    "if",
    "they",
    "we're",
    "he's",
    "she's",
    "to",
    "you",
    "i",
    "we",
    "he",
    "she",
    "there",
    "no",
    "nothing",
    "fine",
    "normal",
    "ok",
    "okay",
    "all",
    "clear",
    "stress",
    "just",
    "it",
    "that",
    "this",
    "me",
    "probably",
    "nothing serious",
    "age",
    "my",
];

/// Words that lead a name and are not part of it.
const LEADERS: &[&str] = &[
    "a",
    "an",
    "the",
    "some",
    "probably",
    "likely",
    "just",
    "actually",
    "basically",
    "mild",
    "early",
    "possible",
    "possibly",
    "definitely",
];

/// Endings of a word that names a condition ("tendonitis", "endometriosis", "anaemia",
/// "neuropathy", "fibromyalgia", "psoriasis").
const CONDITION_ENDINGS: &[&str] = &[
    "itis", "osis", "iasis", "ectasis", "aemia", "emia", "pathy", "algia", "oedema", "edema",
];

/// Words with those endings that are no condition.
const NOT_CONDITIONS: &[&str] = &[
    "diagnosis",
    "prognosis",
    "hypnosis",
    "osmosis",
    "symbiosis",
    "metamorphosis",
    "apotheosis",
    "empathy",
    "sympathy",
    "apathy",
    "antipathy",
    "telepathy",
    "nostalgia",
    "academia",
    "bohemia",
];

/// Words before a condition that do not name its kind: "my", "bad", "a flare of".
const NOT_KINDS: &[&str] = &[
    "my",
    "a",
    "an",
    "the",
    "have",
    "has",
    "had",
    "got",
    "with",
    "of",
    "bad",
    "mild",
    "severe",
    "some",
    "i",
    "and",
    "is",
    "was",
    "from",
    "for",
    "to",
    "me",
    "its",
    "this",
    "that",
    "his",
    "her",
    "their",
    "your",
    "our",
    "awful",
    "terrible",
    "horrible",
    "nasty",
    "flaring",
    "still",
    "diagnosed",
    "called",
    "it",
    "like",
    "or",
    "but",
    "so",
    "because",
    "back",
    "up",
];

/// The last word of a name of a condition ("g6pd deficiency", "irritable bowel
/// syndrome", "Addison's disease").
const CONDITION_HEADS: &[&str] = &["disease", "syndrome", "disorder", "deficiency", "urticaria"];

/// Endings of a medicine's name ("doxycycline", "amiodarone", "spironolactone",
/// "clopidogrel", "lisinopril", "omeprazole").
const MEDICINE_ENDINGS: &[&str] = &[
    "cycline",
    "mycin",
    "cillin",
    "floxacin",
    "prazole",
    "conazole",
    "statin",
    "sartan",
    "pril",
    "olol",
    "dipine",
    "grel",
    "xaban",
    "parin",
    "oxetine",
    "triptan",
    "tidine",
    "lukast",
    "meterol",
    "moterol",
    "buterol",
    "olone",
    "lactone",
    "darone",
    "azepam",
    "zolam",
    "formin",
    "gliptin",
    "gliflozin",
    "glutide",
    "semide",
    "thiazide",
    "tinib",
    "umab",
    "imab",
    "codone",
    "triptyline",
    "tadine",
    "setron",
    "thyroxine",
    "sporin",
    "olimus",
    "apine",
];

/// The words of a lowercased sentence shaped like a medicine's name: "doxycycline",
/// "amiodarone" (read as medicines by [`health_facts`](super::health::health_facts)).
pub(super) fn medicine_shaped(lower: &str) -> Vec<&str> {
    words_at(lower)
        .map(|(_, w)| w)
        .filter(|w| w.len() >= 7 && MEDICINE_ENDINGS.iter().any(|e| w.ends_with(e)))
        .collect()
}

/// Whether `word` is shaped like a condition's name ("haemochromatosis").
pub(super) fn condition_shaped(word: &str) -> bool {
    word.len() >= 7
        && CONDITION_ENDINGS.iter().any(|e| word.ends_with(e))
        && !listed(NOT_CONDITIONS, word)
}

/// The health facts of a user's lowercased sentence that only a clinician's naming or
/// the shape of a word tells.
pub(super) fn diagnoses(lower: &str) -> Vec<FactCandidate> {
    let mut out = Vec::new();
    named_by_a_clinician(lower, &mut out);
    for (at, word) in words_at(lower) {
        if word.len() < 7 || denied(lower, at) || !users_at(lower, at) {
            continue;
        }
        if CONDITION_ENDINGS.iter().any(|e| word.ends_with(e)) && !listed(NOT_CONDITIONS, word) {
            // "plantar fasciitis", "ulcerative colitis": the word before names its kind.
            let kind = lower[..at]
                .split_whitespace()
                .next_back()
                .filter(|w| w.chars().all(char::is_alphabetic) && !listed(NOT_KINDS, w));
            match kind {
                Some(kind) => out.push(condition(&format!("{kind} {word}"))),
                None => out.push(condition(word)),
            }
        }
    }
    for head in CONDITION_HEADS {
        let Some(at) = find_word(lower, head) else {
            continue;
        };
        if denied(lower, at) || !users_at(lower, at) {
            continue;
        }
        // The words that name it: up to three before the head, back to a word that
        // cannot be part of a name.
        let before: Vec<&str> = lower[..at]
            .split_whitespace()
            .rev()
            .take_while(|w| {
                !listed(LEADERS, w)
                    && !matches!(
                        *w,
                        "i" | "i've"
                            | "ive"
                            | "have"
                            | "has"
                            | "got"
                            | "with"
                            | "of"
                            | "my"
                            | "it's"
                            | "its"
                            | "is"
                            | "was"
                            | "called"
                            | "me"
                            | "and"
                    )
                    && w.chars()
                        .all(|c| c.is_alphanumeric() || c == '\'' || c == '-')
            })
            .take(3)
            .collect();
        if before.is_empty() {
            continue;
        }
        let name: Vec<&str> = before.into_iter().rev().chain([*head]).collect();
        out.push(condition(&name.join(" ")));
    }
    out
}

/// "the consultant says it's ménière's", "cardiology diagnosed me with pots".
fn named_by_a_clinician(lower: &str, out: &mut Vec<FactCandidate>) {
    for naming in NAMING {
        let Some(at) = find_word(lower, naming) else {
            continue;
        };
        let before: Vec<&str> = lower[..at].split_whitespace().collect();
        let by_clinician = before[before.len().saturating_sub(3)..]
            .iter()
            .any(|w| listed(CLINICIANS, w.trim_end_matches("'s")));
        let about_me = naming.starts_with("diagnosed me");
        // Said of a patient the sentence does not name, it is the user.
        let users = owner_at(lower, at).unwrap_or_else(|| person_order(lower) != Some(false));
        if !(by_clinician || about_me) || !users {
            continue;
        }
        let rest = &lower[at + naming.len()..];
        let clause = rest
            .split([',', ';', '(', ')', '.', '!', '?', ':'])
            .next()
            .unwrap_or_default();
        let clause = [
            " so ",
            " of ",
            " and ",
            " but ",
            " which ",
            " because ",
            " after ",
            " when ",
            " in ",
            " at ",
            " last ",
            " this ",
            " for ",
            " since ",
            " from ",
            " about ",
            " back ",
        ]
        .iter()
        .fold(clause, |c, stop| c.split(stop).next().unwrap_or_default());
        let words: Vec<&str> = clause
            .split_whitespace()
            .skip_while(|w| listed(LEADERS, w))
            .take(4)
            .collect();
        let name = words.join(" ");
        if name.is_empty() || words.iter().any(|w| listed(NOT_NAMES, w)) {
            continue;
        }
        // Said beside a sign ("my lips puffed up ... the prick test says it's poppy seeds"),
        // what was named is what the user reacts to.
        if is_trigger(&name) || super::symptoms::has_allergic_sign(lower) {
            out.push(health(
                &format!("is allergic to {name}"),
                "allergy",
                &name,
                Polarity::Negative,
            ));
        } else if let Some(what) = name
            .strip_suffix(" sensitivity")
            .or_else(|| name.strip_suffix(" intolerance"))
            .or_else(|| super::symptoms::has_sign(lower).then_some(name.as_str()))
        {
            out.push(health(
                &format!("is intolerant to {what}"),
                "intolerance",
                what,
                Polarity::Negative,
            ));
        } else {
            out.push(condition(&name));
        }
    }
}

fn condition(name: &str) -> FactCandidate {
    health(
        &format!("has {name}"),
        "condition",
        name,
        Polarity::Positive,
    )
}

/// The words of `lower` (letters, digits, apostrophes) with where each starts.
fn words_at(lower: &str) -> impl Iterator<Item = (usize, &str)> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - lower.as_ptr() as usize, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<String> {
        diagnoses(&text.to_lowercase())
            .into_iter()
            .map(|c| c.text)
            .collect()
    }

    #[test]
    fn what_a_clinician_named_is_a_condition() {
        assert_eq!(
            read("the rheumatologist reckons it's palindromic rheumatism, so that explains the knees"),
            ["has palindromic rheumatism"]
        );
        assert_eq!(
            read("neurology diagnosed me with fnd in march"),
            ["has fnd"]
        );
        assert_eq!(
            read("the allergist says it's latex, of all things"),
            ["is allergic to latex"]
        );
        assert!(read("the gp said it's nothing serious").is_empty());
    }

    #[test]
    fn words_shaped_like_a_condition() {
        assert_eq!(
            read("my tendonitis is playing up again"),
            ["has tendonitis"]
        );
        assert_eq!(
            medicine_shaped("i'm on azithromycin for a week"),
            ["azithromycin"]
        );
        assert!(medicine_shaped("my cholesterol came back high in april").is_empty());
        assert_eq!(
            read("turns out i have addison's disease"),
            ["has addison's disease"]
        );
        assert!(read("my sister's colitis is worse").is_empty());
        assert!(read("i want a diagnosis before april").is_empty());
        assert!(read("i have a lot of sympathy for him").is_empty());
    }
}
