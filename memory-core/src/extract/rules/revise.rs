//! A last pass over what the rules found in a message: changes of state said as events
//! carry what they end, a few readings the clause rules get wrong are put right, and
//! health disclosures are never lost.
//!
//! Everything it knows is in the tables below (English, small and general):
//!
//! - [`ENDING_VERBS`]: an event or note that opens with one of them ends what follows
//!   ("left the band", "has quit caffeine", "got divorced");
//! - [`PARTNER_ENDING_STATUSES`]: a relationship status that ends a partner ("single",
//!   "divorced");
//! - [`HABIT_NOUNS`]: "I'm a smoker" is a habit, not a job;
//! - [`EXCLUSIVE_VERBS`]: notes with one value at a time ("supports Hibs" then "supports
//!   Wigan");
//! - the health tables: allergies, intolerances, conditions, medications (see
//!   [`health_facts`]).

use super::lexicon::listed;
use crate::facts::{FactCandidate, Polarity, Transition};

/// Verbs (with their particles) that end what their object names.
const ENDING_VERBS: &[&str] = &[
    "quit",
    "has quit",
    "have quit",
    "stopped",
    "has stopped",
    "gave up",
    "has given up",
    "given up",
    "left",
    "has left",
    "dropped out of",
    "dropped",
    "called off",
    "cancelled",
    "finished",
    "retired from",
    "moved out of",
    "sold",
    "got rid of",
    "gave away",
    "rehomed",
    "broke up with",
    "split up with",
    "split from",
    "separated from",
    "divorced",
    "got divorced",
    "got divorced from",
    "lost",
    "put down",
    "had to put down",
];

/// Relationship statuses that end the user's partner.
const PARTNER_ENDING_STATUSES: &[&str] = &["single", "divorced", "separated", "widowed"];

/// Nouns of habits: "I'm a smoker" says a habit, not a job.
const HABIT_NOUNS: &[&str] = &[
    "smoker",
    "non-smoker",
    "non smoker",
    "heavy smoker",
    "social smoker",
    "vaper",
    "drinker",
    "heavy drinker",
    "social drinker",
    "non-drinker",
    "teetotaller",
    "teetotaler",
    "coffee drinker",
    "tea drinker",
    "night owl",
    "early riser",
];

/// Verbs whose notes hold one value at a time: a team supported.
const EXCLUSIVE_VERBS: &[(&str, &str)] = &[("supports", "team supported")];

/// Revises the candidates found in `text` (see the module docs) and adds the health
/// disclosures no rule read.
pub(super) fn revise(text: &str, mut found: Vec<FactCandidate>) -> Vec<FactCandidate> {
    for c in &mut found {
        fix_grammar(c);
        habit(c);
        exclusive_note(c);
        ending(c);
        partner_status(c);
        health_class(c);
    }
    if !found
        .iter()
        .any(|c| c.attribute.as_deref() == Some("relationship"))
    {
        found.extend(couple_endings(text));
    }
    for h in super::habits::habits(text) {
        // "smokes about 15 a day" read as a note, "is teetotal" as a diet: the habit
        // family's reading of the same words takes their place.
        let attribute = h.attribute.clone().unwrap_or_default();
        found.retain(|c| {
            c.subject.is_some()
                || !matches!(
                    c.attribute.as_deref(),
                    Some("note" | "likes" | "diet" | "habit" | "event" | "routine")
                )
                || !super::habits::mentions(&attribute, &c.text)
        });
        found.push(h);
    }
    for h in health_facts(text) {
        let names = |c: &FactCandidate| {
            let t = c.text.to_lowercase();
            h.value
                .as_deref()
                .is_some_and(|v| t.contains(&v.to_lowercase()))
        };
        // An event or note that tells it in passing ("found out they are allergic to
        // …") gives way to the health fact; a rule's own reading of it stays.
        found.retain(|c| {
            !(names(c) && matches!(c.attribute.as_deref(), Some("event") | Some("note")))
        });
        if !found.iter().any(names) {
            found.push(h);
        }
    }
    found
}

/// "they am" (a first person turned third by halves) reads "they are".
fn fix_grammar(c: &mut FactCandidate) {
    for (wrong, right) in [("they am ", "they are "), ("they was ", "they were ")] {
        if c.text.contains(wrong) {
            c.text = c.text.replace(wrong, right);
        }
        if let Some(v) = c.value.as_mut().filter(|v| v.contains(wrong)) {
            *v = v.replace(wrong, right);
        }
    }
}

fn habit(c: &mut FactCandidate) {
    let Some(value) = c.value.as_deref() else {
        return;
    };
    let v = value.to_lowercase();
    if c.attribute.as_deref() == Some("job") && HABIT_NOUNS.contains(&v.as_str()) {
        c.attribute = Some("habit".into());
        c.text = format!("is a {v}");
    }
}

fn exclusive_note(c: &mut FactCandidate) {
    if !matches!(c.attribute.as_deref(), Some("note") | Some("likes")) {
        return;
    }
    let lower = c.text.to_lowercase();
    for (verb, attribute) in EXCLUSIVE_VERBS {
        if let Some(rest) = lower.strip_prefix(verb).and_then(|r| r.strip_prefix(' ')) {
            let start = c.text.len() - rest.len();
            c.value = Some(c.text[start..].to_owned());
            c.attribute = Some((*attribute).into());
        }
    }
}

/// An event or note that opens with an ending verb ends what follows it.
fn ending(c: &mut FactCandidate) {
    if c.transition.is_some() || !matches!(c.attribute.as_deref(), Some("event") | Some("note")) {
        return;
    }
    let lower = c.text.to_lowercase();
    let verb = ENDING_VERBS
        .iter()
        .filter(|v| lower == **v || lower.starts_with(&format!("{v} ")))
        .max_by_key(|v| v.len());
    let Some(verb) = verb else { return };
    let rest = c.text[verb.len()..].trim();
    let object = rest
        .trim_start_matches("their ")
        .trim_start_matches("the ")
        .trim_start_matches("a ")
        .trim_end_matches(|ch: char| !ch.is_alphanumeric());
    let object = match object {
        // "got divorced", "stopped", "quit" alone: the verb names what ended.
        "" => verb.rsplit(' ').next().unwrap_or(verb),
        o => o,
    };
    c.transition = Some(Transition::Ends {
        object: object.to_owned(),
    });
}

fn partner_status(c: &mut FactCandidate) {
    let is_status = c.attribute.as_deref() == Some("relationship")
        && c.value
            .as_deref()
            .is_some_and(|v| PARTNER_ENDING_STATUSES.contains(&v.to_lowercase().as_str()));
    if is_status && c.transition.is_none() && c.subject.is_none() {
        c.transition = Some(Transition::Ends {
            object: "partner".into(),
        });
    }
}

/// How a couple says it ended ("we're divorced", "we split up last month"): the status
/// each says.
const COUPLE_ENDINGS: &[(&str, &str)] = &[
    ("we're divorced", "divorced"),
    ("we are divorced", "divorced"),
    ("we got divorced", "divorced"),
    ("we're getting divorced", "divorced"),
    ("we're separated", "separated"),
    ("we are separated", "separated"),
    ("we separated", "separated"),
    ("we broke up", "single"),
    ("we've broken up", "single"),
    ("we split up", "single"),
    ("we've split up", "single"),
    ("we called it quits", "single"),
];

/// A relationship status from a couple's ending, which ends the user's partner.
fn couple_endings(text: &str) -> Vec<FactCandidate> {
    let lower = text.to_lowercase().replace('\u{2019}', "'");
    COUPLE_ENDINGS
        .iter()
        .find(|(said, _)| find_word(&lower, said).is_some())
        .map(|(_, status)| {
            let mut c = FactCandidate::new(format!("is {status}"), 0.85)
                .with_attribute("relationship", *status);
            c.transition = Some(Transition::Ends {
                object: "partner".into(),
            });
            c
        })
        .into_iter()
        .collect()
}

// ------------------------------------------------------------------------ health

/// The class every health fact carries (in its topics), whatever its attribute.
pub const HEALTH: &str = "health";

/// Conditions: a disclosure naming one is a health fact.
const CONDITIONS: &[&str] = &[
    "diabetes",
    "diabetic",
    "coeliac",
    "celiac",
    "asthma",
    "asthmatic",
    "epilepsy",
    "epileptic",
    "crohn's",
    "crohns",
    "ibs",
    "colitis",
    "arthritis",
    "migraines",
    "migraine",
    "hypertension",
    "high blood pressure",
    "anaemia",
    "anemia",
    "anaemic",
    "eczema",
    "psoriasis",
    "lupus",
    "pcos",
    "endometriosis",
    "adhd",
    "autism",
    "autistic",
    "depression",
    "anxiety",
    "heart condition",
    "pacemaker",
    "kidney disease",
    "thyroid",
    "hypothyroidism",
    "gout",
    "sleep apnoea",
    "sleep apnea",
    "vertigo",
    "tinnitus",
    "pregnant",
    "prediabetic",
    "pre-diabetic",
    "prediabetes",
    "high cholesterol",
    "kidney transplant",
    "liver transplant",
    "heart transplant",
    "lung transplant",
    "atrial fibrillation",
    "copd",
    "multiple sclerosis",
    "cystic fibrosis",
    // Common chronic conditions (2026-12-07): what people mention in passing.
    "osteoporosis",
    "fibromyalgia",
    "chronic fatigue",
    "raynaud's",
    "raynauds",
    "acid reflux",
    "reflux",
    "gerd",
    "hiatus hernia",
    "diverticulitis",
    "gallstones",
    "kidney stones",
    "liver disease",
    "cirrhosis",
    "hepatitis",
    "heart failure",
    "angina",
    "arrhythmia",
    "low blood pressure",
    "haemophilia",
    "hemophilia",
    "sickle cell",
    "glaucoma",
    "parkinson's",
    "parkinsons",
    "dementia",
    "bipolar",
    "schizophrenia",
    "ocd",
    "ptsd",
    "insomnia",
    "narcolepsy",
    "hay fever",
    "hayfever",
    "sciatica",
    "scoliosis",
    "hypermobility",
    "long covid",
    "emphysema",
    "hashimoto's",
    "pancreatitis",
    "gastroparesis",
    "hypoglycaemia",
    "hypoglycemia",
];

/// The words health facts are phrased with: the conditions and medications the tables
/// know and the verbs of allergies, intolerances and medicines. A search for them finds
/// the user's health facts whatever the message says.
pub(crate) fn health_words() -> impl Iterator<Item = &'static str> {
    ["allergic", "intolerant", "takes", "diagnosed"]
        .into_iter()
        .chain(CONDITIONS.iter().copied())
        .chain(MEDICATIONS.iter().copied())
}

/// Medications and devices: "I'm on X", "I take X".
const MEDICATIONS: &[&str] = &[
    "insulin",
    "metformin",
    "warfarin",
    "statins",
    "statin",
    "blood thinners",
    "antidepressants",
    "sertraline",
    "fluoxetine",
    "levothyroxine",
    "inhaler",
    "epipen",
    "epi-pen",
    "beta blockers",
    "the pill",
    "antihistamines",
    "prednisolone",
    "lithium",
    "immunosuppressants",
    "amlodipine",
    "bisoprolol",
    "methotrexate",
    "ramipril",
    "atorvastatin",
    "omeprazole",
    "citalopram",
    "propranolol",
    // Common prescriptions and devices (2026-12-07).
    "simvastatin",
    "rosuvastatin",
    "clopidogrel",
    "apixaban",
    "rivaroxaban",
    "digoxin",
    "furosemide",
    "lisinopril",
    "losartan",
    "metoprolol",
    "atenolol",
    "gliclazide",
    "ozempic",
    "semaglutide",
    "mounjaro",
    "carbimazole",
    "hydrocortisone",
    "steroids",
    "salbutamol",
    "ventolin",
    "montelukast",
    "lansoprazole",
    "gabapentin",
    "pregabalin",
    "tramadol",
    "naproxen",
    "amitriptyline",
    "mirtazapine",
    "venlafaxine",
    "duloxetine",
    "escitalopram",
    "paroxetine",
    "phenelzine",
    "bupropion",
    "quetiapine",
    "olanzapine",
    "aripiprazole",
    "lamotrigine",
    "sodium valproate",
    "carbamazepine",
    "levetiracetam",
    "methylphenidate",
    "ritalin",
    "adderall",
    "elvanse",
    "hrt",
    "roaccutane",
    "isotretinoin",
    "hydroxychloroquine",
    "adalimumab",
    "humira",
    "azathioprine",
    "mesalazine",
    "tacrolimus",
    "allopurinol",
    "colchicine",
    "tamoxifen",
    "anticoagulants",
    "cpap",
    "dialysis",
];

/// What a food or drug does to someone allergic to it: "X gives me hives".
const ALLERGIC_REACTIONS: &[&str] = &[
    "hives",
    "a rash",
    "rashes",
    "a reaction",
    "an allergic reaction",
    "anaphylaxis",
    "anaphylactic shock",
    "swollen",
    "itchy",
];

/// What a food does to someone intolerant of it: "X makes me ill".
const INTOLERANT_REACTIONS: &[&str] = &["ill", "sick", "poorly", "bloated", "bad"];

/// What makes one ill in other ways than eating it: "that film made me sick".
const NOT_CAUSES: &[&str] = &[
    "film", "movie", "show", "song", "book", "work", "job", "news", "people", "thought", "idea",
    "commute", "traffic", "boss", "he", "she", "they", "you", "this", "ride", "boat", "flight",
    "drive", "smell", "sight",
];

/// Words before "allergy" or "intolerance" that are not what one reacts to: "my big
/// allergy", "some kind of intolerance".
const NOT_ALLERGENS: &[&str] = &[
    "an", "a", "no", "my", "the", "severe", "mild", "bad", "serious", "slight", "real", "big",
    "biggest", "main", "worst", "only", "one", "of", "kind", "sort", "some", "food", "this",
    "that", "an", "nasty", "new",
];

/// Allergy and intolerance words.
const ALLERGIC: &[&str] = &[
    "allergic to",
    "an allergy to",
    "allergy to",
    "intolerant to",
    "intolerance to",
];

/// Whether a candidate is about health: its attribute, or a health word in its text.
fn health_class(c: &mut FactCandidate) {
    let lower = c.text.to_lowercase();
    let named = matches!(c.attribute.as_deref(), Some("allergy") | Some("health"))
        || CONDITIONS
            .iter()
            .chain(MEDICATIONS)
            .any(|w| has_word(&lower, w))
        || lower.contains("allerg")
        || lower.contains("intoleran");
    if named && c.subject.is_none() && !c.topics.iter().any(|t| t == HEALTH) {
        c.topics.push(HEALTH.into());
    }
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        before.is_none_or(|b| !b.is_alphanumeric()) && after.is_none_or(|a| !a.is_alphanumeric())
    })
}

/// The health disclosures of the user's own sentences in `text`, in any sentence shape:
/// an allergy or intolerance ("allergic to X", "an X allergy", "X intolerant"), a
/// condition ("diagnosed with coeliac disease", "I have type 1 diabetes", "I'm
/// asthmatic") or a medication ("I'm on warfarin", "I take metformin", "I carry an
/// EpiPen"). Sentences about someone else ("my son is allergic to eggs") are left to
/// the rules for people.
pub(super) fn health_facts(text: &str) -> Vec<FactCandidate> {
    let mut out = Vec::new();
    for sentence in text.split_inclusive(['.', '!', '?', ';', '\n']) {
        let lower = sentence.to_lowercase();
        let lower = lower.trim();
        if !first_person(lower) || lower.ends_with('?') {
            continue;
        }
        for cue in ALLERGIC {
            if let Some(i) = lower.find(cue).filter(|i| !denied(lower, *i)) {
                let (verb, attribute) = if cue.contains("intoleran") {
                    ("is intolerant to", "intolerance")
                } else {
                    ("is allergic to", "allergy")
                };
                let what = phrase(&lower[i + cue.len()..]);
                for what in what.split(" and ").flat_map(|w| w.split(" or ")) {
                    let what = what.trim();
                    if !what.is_empty() {
                        out.push(health(
                            &format!("{verb} {what}"),
                            attribute,
                            what,
                            Polarity::Negative,
                        ));
                    }
                }
            }
        }
        for suffix in [" allergy", " intolerance", " intolerant"] {
            if let Some(i) = lower.find(suffix).filter(|i| !denied(lower, *i)) {
                // "an allergy to cats" names it after: the cues above read that.
                if lower[i + suffix.len()..].trim_start().starts_with("to ") {
                    continue;
                }
                let before: Vec<&str> = lower[..i].split_whitespace().collect();
                // "sesame is my big allergy": what comes before "is my".
                let named_first = before
                    .iter()
                    .rposition(|w| *w == "is")
                    .filter(|is| before.get(is + 1) == Some(&"my"))
                    .and_then(|is| before[..is].last().copied());
                let what = named_first
                    .or_else(|| before.last().copied())
                    .filter(|w| !listed(NOT_ALLERGENS, w));
                if let Some(what) = what {
                    let (verb, attribute) = if suffix == " allergy" {
                        ("is allergic to", "allergy")
                    } else {
                        ("is intolerant to", "intolerance")
                    };
                    out.push(health(
                        &format!("{verb} {what}"),
                        attribute,
                        what,
                        Polarity::Negative,
                    ));
                }
            }
        }
        out.extend(reactions(lower));
        if find_word(lower, "cholesterol").is_some_and(|i| !denied(lower, i))
            && find_word(lower, "high").is_some()
            && find_word(lower, "high cholesterol").is_none()
        {
            // "my cholesterol came back high".
            out.push(health(
                "has high cholesterol",
                "condition",
                "high cholesterol",
                Polarity::Positive,
            ));
        }
        for condition in CONDITIONS {
            if let Some(i) = find_word(lower, condition).filter(|i| !denied(lower, *i)) {
                // "type 1 diabetes", "coeliac disease": the words that belong to it.
                let start = lower[..i]
                    .rfind("type ")
                    .filter(|t| i - t <= 7)
                    .unwrap_or(i);
                let end = lower[i..]
                    .find(" disease")
                    .filter(|d| *d == condition.len())
                    .map_or(i + condition.len(), |d| i + d + " disease".len());
                let name = &lower[start..end];
                let text =
                    if name.ends_with("ic") || *condition == "pregnant" || name.ends_with("ed") {
                        format!("is {name}")
                    } else {
                        format!("has {name}")
                    };
                out.push(health(&text, "condition", name, Polarity::Positive));
            }
        }
        for medication in MEDICATIONS {
            if find_word(lower, medication).is_some_and(|i| came_off(lower, i)) {
                // "came off the sertraline", "stopped taking amlodipine": an ending,
                // kept as what happened so either import order closes "takes …".
                let text = format!("no longer takes {medication}");
                out.push(
                    FactCandidate::new(text.clone(), 0.85)
                        .with_attribute("event", text)
                        .with_transition(Transition::Ends {
                            object: (*medication).to_owned(),
                        }),
                );
                continue;
            }
            if let Some(i) = find_word(lower, medication).filter(|i| !denied(lower, *i)) {
                let mut c = health(
                    &format!("takes {medication}"),
                    "medication",
                    medication,
                    Polarity::Positive,
                );
                if switched_to(lower, i) {
                    // "they've moved me onto insulin": in place of the medicine before.
                    c.transition = Some(Transition::Replaces { from: None });
                }
                out.push(c);
            }
        }
    }
    out.dedup_by(|a, b| a.text == b.text);
    out
}

/// "strawberries give me hives", "amoxicillin gave me a rash", "mushrooms make me really
/// ill": what causes the reaction (the words before the verb in its clause) is an
/// allergy, or for being made ill, an intolerance.
fn reactions(lower: &str) -> Vec<FactCandidate> {
    let mut out = Vec::new();
    for clause in lower.split([',', ';', '(', ')']) {
        let words: Vec<&str> = clause
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| c.is_ascii_punctuation() && c != '\''))
            .collect();
        let Some(verb) = words
            .iter()
            .position(|w| matches!(*w, "give" | "gives" | "gave" | "make" | "makes" | "made"))
        else {
            continue;
        };
        if words.get(verb + 1) != Some(&"me") || words[..verb].iter().any(|w| is_negation(w)) {
            continue;
        }
        let after = words[verb + 2..]
            .iter()
            .skip_while(|w| matches!(**w, "really" | "so" | "very" | "quite" | "properly" | "all"))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let mut said = after.split(' ');
        let (first, next) = (said.next(), said.next());
        let attribute = if ALLERGIC_REACTIONS.iter().any(|r| after.starts_with(r)) {
            "allergy"
        } else if INTOLERANT_REACTIONS.iter().any(|r| first == Some(r))
            // "sick of it", "sick with laughing": no reaction to what was eaten.
            && !matches!(next, Some("of" | "with" | "about" | "that"))
        {
            "intolerance"
        } else {
            continue;
        };
        // The cause: the words before the verb, after a joining word ("so", "and",
        // "but", "eating"): at most three.
        let cause: Vec<&str> = words[..verb]
            .iter()
            .rev()
            .take_while(|w| {
                !matches!(
                    **w,
                    "so" | "and"
                        | "but"
                        | "because"
                        | "cos"
                        | "if"
                        | "when"
                        | "i"
                        | "it"
                        | "that"
                        | "which"
                        | "eating"
                        | "drinking"
                        | "taking"
                        | "even"
                )
            })
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .skip_while(|w| matches!(*w, "the" | "a" | "an" | "any" | "all"))
            .collect();
        if cause.is_empty()
            || cause
                .iter()
                .any(|w| listed(NOT_ALLERGENS, w) || listed(NOT_CAUSES, w))
        {
            continue;
        }
        let what = cause.join(" ");
        let verb = if attribute == "allergy" {
            "is allergic to"
        } else {
            "is intolerant to"
        };
        out.push(health(
            &format!("{verb} {what}"),
            attribute,
            &what,
            Polarity::Negative,
        ));
    }
    out
}

/// Whether the clause of `lower` that holds the health word at `at` says the user has
/// none of it: a negation before it in its clause ("I'm not allergic to anything", "no
/// allergies", "never had asthma"), or "anything"/"nothing" right after it. A negation in
/// another clause ("on warfarin, so no more contact sports") denies nothing.
fn denied(lower: &str, at: usize) -> bool {
    let start = lower[..at]
        .rfind([',', ';', '(', ')'])
        .map_or(0, |i| i + 1)
        .max(lower[..at].rfind(" but ").map_or(0, |i| i + 5))
        .max(lower[..at].rfind(" so ").map_or(0, |i| i + 4));
    let after = lower[at..]
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .take(5);
    words_of(&lower[start..at]).any(is_negation)
        || after
            .into_iter()
            .any(|w| matches!(w, "nothing" | "anything"))
}

fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
}

/// Whether the words right before `at` say a medicine was stopped: "came off (the)",
/// "weaned off", "stopped taking", "quit (my)", "no longer on", "ditched the".
fn came_off(lower: &str, at: usize) -> bool {
    let before = words_before(lower, at, &["the", "my", "taking", "on", "all"]);
    let last = |k: usize| before.len().checked_sub(k).map(|i| before[i]);
    let off = last(1) == Some("off")
        && matches!(
            last(2),
            Some("came" | "come" | "coming" | "weaned" | "got" | "getting" | "taken" | "took")
        );
    let stopped = matches!(
        last(1),
        Some("stopped" | "stop" | "quit" | "quitting" | "ditched" | "dropped")
    );
    let no_longer = last(1) == Some("longer") && last(2) == Some("no");
    off || stopped || no_longer
}

/// Whether the words right before `at` say a medicine took another's place: "moved me
/// onto", "switched me to", "changed me over to", "switched to".
fn switched_to(lower: &str, at: usize) -> bool {
    let before = words_before(lower, at, &["the", "some", "a"]);
    let window = &before[before.len().saturating_sub(4)..];
    matches!(window.last(), Some(&("onto" | "to" | "on")))
        && window.iter().any(|w| {
            matches!(
                *w,
                "moved" | "switched" | "changed" | "swapped" | "upped" | "stepped"
            )
        })
}

/// The words of `lower` before `at`, without the `skipped` words right before it ("came
/// off *the* …", "switched me to *a* …").
fn words_before<'a>(lower: &'a str, at: usize, skipped: &[&str]) -> Vec<&'a str> {
    let mut before: Vec<&str> = words_of(&lower[..at]).collect();
    while before.last().is_some_and(|w| skipped.contains(w)) {
        before.pop();
    }
    before
}

/// A word that says no: "not", "never", "don't", …
fn is_negation(word: &str) -> bool {
    matches!(
        word,
        "not"
            | "no"
            | "never"
            | "isn't"
            | "aren't"
            | "don't"
            | "doesn't"
            | "haven't"
            | "hasn't"
            | "wasn't"
            | "nothing"
            | "anything"
            | "without"
    )
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        before.is_none_or(|b| !b.is_alphanumeric()) && after.is_none_or(|a| !a.is_alphanumeric())
    })
}

/// Who a sentence may be about instead of the user: "my son is allergic to eggs".
const PEOPLE: &[&str] = &[
    "son", "daughter", "wife", "husband", "mum", "mom", "dad", "friend", "partner", "brother",
    "sister",
];

/// Others "my" may name, who only make a health word theirs right after it: "my
/// girlfriend's asthma", but "my girlfriend forgets I'm allergic to cashews" is the user's.
const FAMILIARS: &[&str] = &[
    "boyfriend",
    "girlfriend",
    "kid",
    "kids",
    "baby",
    "dog",
    "cat",
];

/// Whether a lowercased sentence speaks of the user (and not of someone else first).
fn first_person(lower: &str) -> bool {
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    // "my gout flared up" is the user's; "my son is allergic" is not.
    let mine = words.iter().enumerate().position(|(i, w)| {
        matches!(*w, "i" | "i'm" | "i've" | "im" | "ive" | "me" | "i'd")
            || (*w == "my"
                && words
                    .get(i + 1)
                    .map(|n| n.trim_end_matches("'s"))
                    .is_some_and(|n| !listed(PEOPLE, n) && !listed(FAMILIARS, n)))
    });
    // "my mum's diabetes" is the mum's.
    let other = words.iter().position(|w| {
        matches!(*w, "he" | "she" | "they" | "his" | "her")
            || listed(PEOPLE, w.trim_end_matches("'s"))
    });
    match (mine, other) {
        (Some(m), Some(o)) => m < o,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The thing named after a cue: up to the end of the clause, at most four words, without
/// a leading article.
fn phrase(rest: &str) -> String {
    let clause = rest
        .split([',', '(', ')'])
        .next()
        .unwrap_or_default()
        .split(" and i ")
        .next()
        .unwrap_or_default()
        .split(" so ")
        .next()
        .unwrap_or_default()
        .split(" which ")
        .next()
        .unwrap_or_default();
    clause
        .split_whitespace()
        .skip_while(|w| matches!(*w, "a" | "an" | "the" | "some"))
        .take(4)
        .collect::<Vec<_>>()
        .join(" ")
        // The sentence's own end ("… and penicillin.") is not part of what is named.
        .trim_end_matches(|c: char| c.is_ascii_punctuation())
        .to_owned()
}

fn health(text: &str, attribute: &str, value: &str, polarity: Polarity) -> FactCandidate {
    let mut c = FactCandidate::new(text, 0.85)
        .with_attribute(attribute, value)
        .with_polarity(polarity);
    c.topics.push(HEALTH.into());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        health_facts(text).into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn health_disclosures_in_any_sentence_shape() {
        assert_eq!(
            texts("I was diagnosed with coeliac disease a few years back which makes eating out a pain"),
            ["has coeliac disease"]
        );
        assert_eq!(
            texts("turns out I'm allergic to ibuprofen, who knew"),
            ["is allergic to ibuprofen"]
        );
        assert_eq!(
            texts("I've got a sesame allergy so I check labels"),
            ["is allergic to sesame"]
        );
        assert_eq!(
            texts("I'm on warfarin since the operation"),
            ["takes warfarin"]
        );
        assert_eq!(texts("I have type 2 diabetes"), ["has type 2 diabetes"]);
        assert!(texts("my son is allergic to eggs").is_empty());
        assert!(texts("is it safe if I'm allergic to latex?").is_empty());
    }

    #[test]
    fn reactions_and_conditions_said_in_passing_are_health_facts() {
        // Sentences written for this test (2026-12-07).
        assert_eq!(
            texts("prawns give me hives every single time"),
            ["is allergic to prawns"]
        );
        assert!(texts("codeine never made me sick, weirdly").is_empty());
        assert_eq!(
            texts("the gp put me on warfarin after the clot so no more contact sports"),
            ["takes warfarin"],
            "a negation in another clause denies nothing"
        );
        assert!(texts("i'm not allergic to anything as far as i know").is_empty());
        assert_eq!(
            texts("codeine made me really sick after the op"),
            ["is intolerant to codeine"]
        );
        assert_eq!(
            texts("peanuts are my worst allergy, I carry two pens"),
            Vec::<String>::new(),
            "'are my' is not 'is my'"
        );
        assert_eq!(
            texts("walnut is my main allergy"),
            ["is allergic to walnut"]
        );
        assert_eq!(
            texts("i've got some kind of intolerance to gluten, the gp reckons"),
            ["is intolerant to gluten"]
        );
        assert_eq!(
            texts("lentils make me so bloated, some sort of intolerance i think"),
            ["is intolerant to lentils"]
        );
        assert_eq!(
            texts("my psoriasis flared up again this week"),
            ["has psoriasis"]
        );
        assert_eq!(
            texts("my cholesterol is a bit high apparently"),
            ["has high cholesterol"]
        );
        assert_eq!(texts("the nurse says I'm prediabetic"), ["is prediabetic"]);
        assert!(texts("my daughter's psoriasis flared up").is_empty());
        assert!(texts("my mum's glaucoma is getting worse").is_empty());
        assert_eq!(
            texts("been on lamotrigine since my twenties, no issues"),
            ["takes lamotrigine"]
        );
        assert_eq!(texts("my hay fever is brutal this year"), ["has hay fever"]);
        let switched = health_facts("my gp switched me over to ramipril last week");
        assert_eq!(switched.len(), 1);
        assert_eq!(switched[0].text, "takes ramipril");
        assert_eq!(
            switched[0].transition,
            Some(Transition::Replaces { from: None })
        );
        for stopped in [
            "i came off the citalopram over christmas",
            "i stopped taking citalopram in may",
            "i finally weaned off citalopram, feel good",
            "i'm no longer on citalopram",
        ] {
            assert_eq!(texts(stopped), ["no longer takes citalopram"], "{stopped}");
        }
        assert!(texts("that film made me sick with laughing lol")
            .iter()
            .all(|t| !t.contains("film")));
    }

    #[test]
    fn endings_said_as_events_carry_what_they_end() {
        let mut c =
            FactCandidate::new("left the choir", 0.8).with_attribute("event", "left the choir");
        ending(&mut c);
        assert_eq!(
            c.transition,
            Some(Transition::Ends {
                object: "choir".into()
            })
        );
        let mut c = FactCandidate::new("got divorced", 0.8).with_attribute("event", "got divorced");
        ending(&mut c);
        assert_eq!(
            c.transition,
            Some(Transition::Ends {
                object: "divorced".into()
            })
        );
    }
}
