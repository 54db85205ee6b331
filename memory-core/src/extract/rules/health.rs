//! Health and safety disclosures, in any sentence shape: allergies and intolerances
//! ("allergic to X", "an X allergy", "X gives me hives"), conditions ("diagnosed with
//! coeliac disease", "I'm asthmatic"), medications ("I'm on warfarin", "came off the
//! sertraline") and reactions told by their symptoms ([`symptoms`](super::symptoms)).
//!
//! Everything it knows is in the tables below (English, small and general).

use super::lexicon::listed;
use crate::facts::{FactCandidate, Polarity, Transition};

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
    "pku",
    "phenylketonuria",
    "cochlear implant",
    "hearing aid",
    "hearing aids",
    "insulin pump",
    "prosthetic",
    // Lay names and conditions said in passing (2026-12-07, session 16).
    "fibro",
    "sarcoid",
    "vitiligo",
    "rosacea",
    "alopecia",
    "pacemaker",
    "stoma",
    "colostomy",
    "ileostomy",
];

/// The words health facts are phrased with: the conditions and medications the tables
/// know and the verbs of allergies, intolerances and medicines. A search for them finds
/// the user's health facts whatever the message says.
pub(crate) fn health_words() -> impl Iterator<Item = &'static str> {
    ["allergic", "intolerant", "takes", "diagnosed"]
        .into_iter()
        .chain(CONDITIONS.iter().copied())
        .chain(MEDICATIONS.iter().copied())
        .chain(super::health_notes::MEDICAL_CUES.iter().copied())
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
    "antabuse",
    "disulfiram",
    "naltrexone",
    "methadone",
    "buprenorphine",
    "acamprosate",
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
    "puffy",
    "blotchy",
    "welts",
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
    "an",
    "a",
    "no",
    "my",
    "the",
    "severe",
    "mild",
    "bad",
    "serious",
    "slight",
    "real",
    "big",
    "biggest",
    "main",
    "worst",
    "only",
    "one",
    "of",
    "kind",
    "sort",
    "some",
    "food",
    "this",
    "that",
    "an",
    "nasty",
    "new",
    "true",
    "actual",
    "proper",
    "genuine",
    "full-blown",
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
pub(super) fn health_class(c: &mut FactCandidate) {
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
        if lower.ends_with('?') {
            continue;
        }
        let read_before = out.len();
        // Whose the health word at a position is: its clause's, else the sentence's.
        let mine = |at: usize| users_at(lower, at);
        let about_someone_else = person_order(lower) == Some(false);
        for cue in ALLERGIC {
            if let Some(i) = lower.find(cue).filter(|i| !denied(lower, *i) && mine(*i)) {
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
        for suffix in [" allergy", " intolerance", " intolerant", " sensitivity"] {
            if let Some(i) = lower
                .find(suffix)
                .filter(|i| !denied(lower, *i) && mine(*i))
            {
                // "an allergy to cats" names it after: the cues above read that.
                if lower[i + suffix.len()..].trim_start().starts_with("to ") {
                    continue;
                }
                let before: Vec<&str> = lower[..i].split_whitespace().collect();
                // "sesame is my big allergy": what comes before "is my".
                let named_first = before
                    .iter()
                    .rposition(|w| *w == "is" || *w == "are")
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
        if !about_someone_else {
            // "prawns give me hives": the reaction names the user.
            out.extend(reactions(lower));
        }
        out.extend(super::symptoms::reactions_by_symptom(lower));
        out.extend(tolerated(lower));
        out.extend(super::diagnoses::diagnoses(lower));
        out.extend(diets(lower));
        if find_word(lower, "cholesterol").is_some_and(|i| !denied(lower, i) && mine(i))
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
            if let Some(i) = find_word(lower, condition).filter(|i| !denied(lower, *i) && mine(*i))
            {
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
        let shaped = super::diagnoses::medicine_shaped(lower);
        let shaped = shaped.iter().filter(|w| !MEDICATIONS.contains(w));
        for medication in MEDICATIONS.iter().chain(shaped) {
            if find_word(lower, medication).is_some_and(|i| came_off(lower, i) && mine(i)) {
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
            if let Some(i) = find_word(lower, medication).filter(|i| !denied(lower, *i) && mine(*i))
            {
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
        out.extend(removed_organ(lower));
        if out.len() == read_before {
            out.extend(super::health_notes::health_note(sentence.trim(), lower));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(c.text.clone()));
    // "allergic to nuts" beside "allergic to pine nuts": the fuller name stands.
    let values: Vec<(Option<String>, String)> = out
        .iter()
        .map(|c| (c.attribute.clone(), c.value.clone().unwrap_or_default()))
        .collect();
    out.retain(|c| {
        let v = c.value.as_deref().unwrap_or_default();
        !values
            .iter()
            .any(|(a, w)| *a == c.attribute && w.len() > v.len() && !v.is_empty() && has_word(w, v))
    });
    out
}

/// The health readings of sentences the rules otherwise leave alone, held to what the
/// tables know: a question that tells a reaction ("is it normal that my mouth goes itchy
/// every time I eat kiwi?") and a sentence with a joke in it that names a condition,
/// medicine or known trigger ("the joys of being type 1 diabetic lol"). "I'm allergic
/// to Mondays lol" names none, and stays a joke.
pub(super) fn loose_health_facts(asked: &str, joked: &str) -> Vec<FactCandidate> {
    let mut out: Vec<FactCandidate> = Vec::new();
    for sentence in asked.split_inclusive(['.', '!', '?', ';', '\n']) {
        let lower = sentence.to_lowercase();
        let lower = lower.trim();
        out.extend(super::symptoms::reactions_by_symptom(lower));
        // "is it normal that my asthma is worse in winter?": a condition of "my" own.
        for condition in CONDITIONS {
            if let Some(i) = find_word(lower, condition) {
                if lower[..i].ends_with("my ") {
                    out.push(health(
                        &format!("has {condition}"),
                        "condition",
                        condition,
                        Polarity::Positive,
                    ));
                }
            }
        }
    }
    let known = |v: &str| {
        CONDITIONS.iter().chain(MEDICATIONS).any(|w| v.contains(w))
            || super::symptoms::is_trigger(v)
            || v.split_whitespace().any(super::diagnoses::condition_shaped)
            || !super::diagnoses::medicine_shaped(v).is_empty()
    };
    out.extend(
        health_facts(joked)
            .into_iter()
            .filter(|c| c.value.as_deref().is_some_and(known)),
    );
    out
}

/// Words before a diet that say the user keeps it: "since going vegan", "three months
/// into keto", "I keep kosher".
const DIET_CUES: &[&str] = &[
    "going", "gone", "went", "turned", "become", "became", "becoming", "been", "being", "keep",
    "keeps", "keeping", "kept", "into", "doing", "started", "strict", "strictly", "fully", "eat",
    "eating", "i'm", "im", "am", "stay", "staying", "stayed", "now", "on",
];

/// Diets a clinician puts one on, besides those one *is* ([`DIETS`](super::lexicon::DIETS)).
const PRESCRIBED_DIETS: &[&str] = &[
    "atkins",
    "whole30",
    "slimming world",
    "weight watchers",
    "mediterranean diet",
    "intermittent fasting",
    "low-fodmap",
    "fodmap",
    "low-salt",
    "low-sodium",
    "low-carb",
    "low-fat",
    "low-sugar",
    "low-protein",
    "low-potassium",
    "low potassium",
    "low salt",
    "low sodium",
    "low carb",
    "low fat",
    "low sugar",
    "low protein",
    "low residue",
    "low fibre",
    "low fiber",
    "gluten-free",
    "dairy-free",
    "sugar-free",
];

/// Words that make a diet a plan or a wish, not what the user keeps: "thinking of going
/// vegan".
const DIET_WISHES: &[&str] = &[
    "thinking",
    "considering",
    "might",
    "maybe",
    "could",
    "should",
    "want",
    "wanna",
    "tempted",
    "planning",
    "plan",
    "try",
    "trying",
    "if",
    "would",
];

/// The diets the user keeps, said in passing: a diet word after one of [`DIET_CUES`].
fn diets(lower: &str) -> Vec<FactCandidate> {
    let mut out = Vec::new();
    for diet in super::lexicon::DIETS.iter().chain(PRESCRIBED_DIETS) {
        let Some(i) = find_word(lower, diet) else {
            continue;
        };
        if denied(lower, i) || !users_at(lower, i) {
            continue;
        }
        let before = words_before(
            lower,
            i,
            &["a", "full", "completely", "mostly", "basically"],
        );
        let near = &before[before.len().saturating_sub(4)..];
        if before.last().is_some_and(|w| listed(DIET_CUES, w))
            && !near.iter().any(|w| listed(DIET_WISHES, w))
        {
            out.push(health(
                &format!("is {diet}"),
                "diet",
                diet,
                Polarity::Positive,
            ));
        }
    }
    // "I'm on the carnivore diet", "doing a strict low residue diet": a diet by its name.
    if let Some(d) = find_word(lower, "diet").filter(|d| !denied(lower, *d) && users_at(lower, *d))
    {
        let before = words_before(lower, d, &[]);
        let named: Vec<&str> = before
            .iter()
            .rev()
            .take_while(|w| {
                !listed(DIET_CUES, w) && !matches!(**w, "a" | "the" | "strict" | "new" | "my")
            })
            .take(2)
            .copied()
            .collect();
        let cue_at = before.len() - named.len();
        let cued = before[..cue_at]
            .iter()
            .rev()
            .find(|w| !matches!(**w, "a" | "the" | "strict" | "new" | "my"))
            .is_some_and(|w| listed(DIET_CUES, w) || matches!(*w, "following" | "follow"));
        let name: Vec<&str> = named.into_iter().rev().collect();
        let name = name.join(" ");
        if cued
            && !name.is_empty()
            && !out
                .iter()
                .any(|c: &FactCandidate| c.value.as_deref() == Some(name.as_str()))
        {
            out.push(health(
                &format!("is on a {name} diet"),
                "diet",
                &name,
                Polarity::Positive,
            ));
        }
    }
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
pub(super) fn denied(lower: &str, at: usize) -> bool {
    let start = lower[..at]
        .rfind([',', ';', '(', ')'])
        .map_or(0, |i| i + 1)
        .max(lower[..at].rfind(" but ").map_or(0, |i| i + 5))
        .max(lower[..at].rfind(" so ").map_or(0, |i| i + 4));
    // "allergic to anything?", but not "phenelzine because nothing else worked".
    let after = lower[at..]
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .take(5)
        .take_while(|w| {
            !matches!(
                *w,
                "because" | "bc" | "cos" | "since" | "as" | "but" | "so" | "and"
            )
        });
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
    let off_verb = |w: Option<&str>| {
        matches!(
            w,
            Some(
                "came"
                    | "come"
                    | "coming"
                    | "weaned"
                    | "got"
                    | "getting"
                    | "taken"
                    | "took"
                    | "tapered"
                    | "tapering"
            )
        )
    };
    // "came off the sertraline", "the gp took me off the omeprazole".
    let off = last(1) == Some("off")
        && (off_verb(last(2)) || (last(2) == Some("me") && off_verb(last(3))));
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
    // "now that ramipril has replaced the old tablets", "amlodipine instead".
    let after: Vec<&str> = words_of(&lower[at..]).skip(1).take(3).collect();
    if after.first() == Some(&"instead")
        || after
            .iter()
            .take_while(|w| matches!(**w, "has" | "have" | "had" | "now" | "just" | "replaced"))
            .any(|w| *w == "replaced")
    {
        return true;
    }
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

pub(super) fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        before.is_none_or(|b| !b.is_alphanumeric()) && after.is_none_or(|a| !a.is_alphanumeric())
    })
}

/// Who a sentence may be about instead of the user: "my son is allergic to eggs".
const PEOPLE: &[&str] = &[
    "son",
    "daughter",
    "wife",
    "husband",
    "mum",
    "mom",
    "dad",
    "friend",
    "partner",
    "brother",
    "sister",
    "family",
    "parents",
    "nan",
    "nana",
    "gran",
    "grandma",
    "grandad",
    "granddad",
    "grandpa",
    "aunt",
    "auntie",
    "uncle",
    "cousin",
    "niece",
    "nephew",
    "mate",
    "mates",
    "colleague",
    "boss",
    "neighbour",
    "neighbor",
    "in-laws",
    "stepdad",
    "stepmum",
    "flatmate",
];

/// "I can't tolerate inulin", "don't tolerate lactose well": an intolerance.
fn tolerated(lower: &str) -> Vec<FactCandidate> {
    let mut out = Vec::new();
    for cue in [
        "can't tolerate ",
        "cannot tolerate ",
        "cant tolerate ",
        "don't tolerate ",
    ] {
        if let Some(i) = lower.find(cue).filter(|i| users_at(lower, *i)) {
            let what = phrase(&lower[i + cue.len()..]);
            let what = what.trim_end_matches(" well").trim();
            if !what.is_empty() && what.split(' ').count() <= 3 {
                out.push(health(
                    &format!("is intolerant to {what}"),
                    "intolerance",
                    what,
                    Polarity::Negative,
                ));
            }
        }
    }
    out
}

/// Organs people live without once removed: "had my spleen out".
const ORGANS: &[&str] = &[
    "spleen",
    "gallbladder",
    "appendix",
    "thyroid",
    "tonsils",
    "kidney",
    "womb",
    "uterus",
    "ovaries",
    "ovary",
    "prostate",
    "colon",
    "bowel",
    "lung",
    "breast",
    "pancreas",
];

/// "had my spleen out after a bike crash", "since they whipped my gallbladder out": an
/// organ removed, a condition a good answer keeps in mind.
fn removed_organ(lower: &str) -> Vec<FactCandidate> {
    let mut out = Vec::new();
    for organ in ORGANS {
        let Some(at) = find_word(lower, &format!("my {organ}")) else {
            continue;
        };
        let after: Vec<&str> = words_of(&lower[at..]).skip(2).take(2).collect();
        let before: Vec<&str> = words_of(&lower[..at]).collect();
        let out_after =
            matches!(after.first().copied(), Some("out" | "removed")) || after == ["taken", "out"];
        let by_verb = before.last().is_some_and(|v| {
            matches!(*v, "had" | "got" | "whipped" | "took" | "removed" | "taken")
        });
        if out_after && by_verb && !denied(lower, at) {
            out.push(health(
                &format!("had their {organ} removed"),
                "condition",
                &format!("{organ} removed"),
                Polarity::Positive,
            ));
        }
    }
    out
}

/// Verbs after "they" that make it the clinicians: "gallstones, they say".
const IMPERSONAL_VERBS: &[&str] = &[
    "say",
    "said",
    "says",
    "call",
    "called",
    "reckon",
    "reckoned",
    "think",
    "thought",
    "found",
    "told",
    "put",
    "gave",
    "started",
    "switched",
    "diagnosed",
    "whipped",
    "took",
    "removed",
    "fitted",
    "did",
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
pub(super) fn first_person(lower: &str) -> bool {
    person_order(lower) == Some(true)
}

/// Whether the health word at `at` in `lower` is the user's: the clause it is in (between
/// commas, "so", "but", "because") speaks of the user before anyone else, or names no
/// one and the sentence does. "they did a free check, so apparently I have high blood
/// pressure" is the user's; "I'm fine, my son has asthma" is not.
pub(super) fn users_at(lower: &str, at: usize) -> bool {
    owner_at(lower, at).unwrap_or_else(|| first_person(lower) || said_without_i(lower, at))
}

/// Whether `lower` names no one and drops its "I", as chat does: "on apixaban since the
/// clot", "got a pacemaker fitted in march", or opens with the health word itself
/// ("tamoxifen for five years after the lumpectomy").
fn said_without_i(lower: &str, at: usize) -> bool {
    const OPENERS: &[&str] = &[
        "got",
        "had",
        "have",
        "been",
        "on",
        "taking",
        "started",
        "diagnosed",
        "still",
        "just",
        "finally",
        "living",
        "managing",
        "dealing",
        "stuck",
    ];
    person_order(lower).is_none()
        && (words_of(lower).next().is_some_and(|w| listed(OPENERS, w))
            || lower[..at].trim().is_empty())
}

/// Whose the word at `at` in `lower` is, by its clause alone: the nearest person named
/// before it there, else the first after it; `None` when the clause names no one.
pub(super) fn owner_at(lower: &str, at: usize) -> Option<bool> {
    let (start, end) = clause_around(lower, at, false);
    // The nearest person named before it in its clause ("my sister says I'm allergic
    // to lychee" is the user's), else the first after it, else the sentence's.
    person_words(&lower[start..at])
        .last()
        .copied()
        .or_else(|| person_order(&lower[at..end]))
}

/// Where a clause ends: punctuation and the joining words "so", "but", "because".
const CLAUSE_MARKS: &[&str] = &[
    ",",
    ";",
    "(",
    ")",
    ":",
    " so ",
    " but ",
    " because ",
    " bc ",
    " cos ",
];

/// The bounds of the clause of `lower` around `at`: from just after the last clause mark
/// ([`CLAUSE_MARKS`], and " and " when `at_and`) before it to the first after it.
pub(super) fn clause_around(lower: &str, at: usize, at_and: bool) -> (usize, usize) {
    let marks = CLAUSE_MARKS.iter().chain(at_and.then_some(&" and "));
    let start = marks
        .clone()
        .filter_map(|m| lower[..at].rfind(m).map(|i| i + m.len()))
        .max()
        .unwrap_or(0);
    let end = marks
        .filter_map(|m| lower[at..].find(m).map(|i| at + i))
        .min()
        .unwrap_or(lower.len());
    (start, end)
}

/// Who `lower` speaks of first: `Some(true)` the user ("I", "me", "my knee"),
/// `Some(false)` someone else ("she", "my son"), `None` no one.
pub(super) fn person_order(lower: &str) -> Option<bool> {
    person_words(lower).first().copied()
}

/// The persons `lower` speaks of, in order: `true` for the user, `false` for someone else.
fn person_words(lower: &str) -> Vec<bool> {
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    // "my gout flared up" is the user's; "my son is allergic" is not; "my mum's
    // diabetes" is the mum's.
    words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let mine = matches!(*w, "i" | "i'm" | "i've" | "im" | "ive" | "me" | "i'd")
                || (*w == "my"
                    && words
                        .get(i + 1)
                        .map(|n| n.trim_end_matches("'s"))
                        .is_some_and(|n| !listed(PEOPLE, n) && !listed(FAMILIARS, n)));
            // "they say", "they call it": the clinicians, not someone the health is of.
            let impersonal = *w == "they"
                && words
                    .get(i + 1)
                    .is_some_and(|n| listed(IMPERSONAL_VERBS, n));
            let other = (matches!(*w, "he" | "she" | "they" | "his" | "her") && !impersonal)
                || listed(PEOPLE, w.trim_end_matches("'s"));
            (mine || other).then_some(mine)
        })
        .collect()
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
    // "allergic to horses is rubbish when …": a verb or joining word ends what is named.
    let clause = [
        " is ",
        " are ",
        " was ",
        " when ",
        " if ",
        " because ",
        " but ",
        " since ",
    ]
    .iter()
    .fold(clause, |c, stop| c.split(stop).next().unwrap_or_default());
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

pub(super) fn health(
    text: &str,
    attribute: &str,
    value: &str,
    polarity: Polarity,
) -> FactCandidate {
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
            ["is allergic to peanuts"]
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
        let replaced = health_facts("the swelling went once losartan had replaced my old pills");
        assert_eq!(replaced.len(), 1);
        assert_eq!(
            replaced[0].transition,
            Some(Transition::Replaces { from: None })
        );
        assert_eq!(
            texts("i'm on the raw food diet these days"),
            ["is on a raw food diet"]
        );
        assert_eq!(
            texts("i can't tolerate sorbitol"),
            ["is intolerant to sorbitol"]
        );
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
}
