//! [`RuleExtractor`]: offline, deterministic fact extraction from English first-person
//! statements.
//!
//! The pipeline: split the user's message into sentences (questions and hypotheticals
//! are dropped whole), sentences into clauses, find each clause's subject (only "I",
//! "my ..." and, for where they live, "we" speak about the user), lift negation and
//! adverbs out of the predicate, then ask one function per attribute family
//! ([`families`]) in a fixed order; the first family that finds something wins.

mod clause;
mod families;
mod lexicon;
mod pattern;
mod value;

use std::collections::HashMap;

use async_trait::async_trait;

use crate::error::Result;
use crate::extract::{FactExtractor, Turn};
use crate::facts::{FactCandidate, FactSource, Polarity};

use clause::Word;
use families::Predicate;
use lexicon::{
    ADVERBS, AUXILIARIES, FILLERS, FILLER_PHRASES, NON_ASSERTIVE_OPENERS, NON_FACTUAL_HEADS,
};
use pattern::{match_prefix, Found};

/// Extracts facts about the user from what they say, with hand-written English rules.
///
/// Reads only the user's message of a turn. Recognises `name`, `location`, `origin`,
/// `job`, `employer`, `likes`, `allergy`, `diet`, `family`, `pet`, `birthday`, `age`,
/// `language` and `goal`; respects negation, ignores questions, hypotheticals, requests
/// and statements about other people. Runs in microseconds, needs no model.
///
/// ```
/// use agentmemory_core::extract::RuleExtractor;
/// use agentmemory_core::facts::Polarity;
///
/// let facts = RuleExtractor::new().extract_text("Hi, I'm Alice and I don't like jazz.");
/// assert_eq!(facts[0].attribute.as_deref(), Some("name"));
/// assert_eq!(facts[0].value.as_deref(), Some("Alice"));
/// assert_eq!(facts[1].text, "dislikes jazz");
/// assert_eq!(facts[1].polarity, Polarity::Negative);
/// assert!(RuleExtractor::new().extract_text("Do you like jazz?").is_empty());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RuleExtractor;

impl RuleExtractor {
    /// A rule extractor.
    pub fn new() -> Self {
        Self
    }

    /// The facts stated in `text`, in the order they appear, without a source.
    pub fn extract_text(&self, text: &str) -> Vec<FactCandidate> {
        let mut found: Vec<Found> = Vec::new();
        for sentence in clause::sentences(text) {
            if sentence.question {
                continue;
            }
            let clauses = clause::clauses(sentence.text);
            let opener = clauses
                .first()
                .and_then(|c| strip_fillers(c).first())
                .map(|w| w.lower.as_str());
            if opener.is_some_and(|o| NON_ASSERTIVE_OPENERS.contains(&o)) {
                continue;
            }
            for words in &clauses {
                found.extend(analyse_clause(strip_fillers(words)));
            }
        }
        dedupe(found).into_iter().map(candidate).collect()
    }
}

#[async_trait]
impl FactExtractor for RuleExtractor {
    async fn extract(&self, turn: Turn<'_>) -> Result<Vec<FactCandidate>> {
        let source = FactSource {
            session_id: None,
            message_id: Some(turn.user.id.to_string()),
        };
        Ok(self
            .extract_text(&turn.user.text())
            .into_iter()
            .map(|c| c.with_source(source.clone()))
            .collect())
    }
}

/// The clause without its leading fillers ("hi", "btw", "by the way", ...).
fn strip_fillers(mut words: &[Word]) -> &[Word] {
    loop {
        if let Some(first) = words.first() {
            if FILLERS.contains(&first.lower.as_str()) {
                words = &words[1..];
                continue;
            }
        }
        let phrase = FILLER_PHRASES
            .iter()
            .find(|p| p.len() <= words.len() && p.iter().zip(words).all(|(p, w)| *p == w.lower));
        match phrase {
            Some(p) => words = &words[p.len()..],
            None => return words,
        }
    }
}

/// Every fact one clause states about the user.
fn analyse_clause(words: &[Word]) -> Vec<Found> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    // "my husband Tom is a chef", "she met our dog Biscuit": the relation is the user's.
    let mut found = families::appositions(words);
    let rest = &words[1..];
    match first.lower.as_str() {
        "i" => {
            if let Some(p) = predicate(rest) {
                found.extend(first_person(&p));
            }
        }
        "we" => {
            if let Some(p) = predicate(rest) {
                found.extend(families::places(&p, true));
            }
        }
        "my" => found.extend(possessive(rest)),
        _ => {
            for opener in [
                "call me",
                "you can call me",
                "please call me",
                "just call me",
            ] {
                if let Some(n) = match_prefix(words, opener) {
                    found.extend(families::call_me(&words[n..]));
                    break;
                }
            }
        }
    }
    found
}

/// A family function over a first-person predicate.
type FirstPersonFamily = fn(&Predicate) -> Vec<Found>;

/// A family function over the words after "my".
type PossessiveFamily = fn(&[Word]) -> Vec<Found>;

/// "I ...": the families in priority order; the first that finds something wins.
fn first_person(p: &Predicate) -> Vec<Found> {
    let families: [FirstPersonFamily; 11] = [
        families::diet,
        families::allergy,
        families::likes,
        families::diet_avoidance,
        |p| families::places(p, false),
        families::age_birthday,
        families::language,
        families::goal,
        families::family_pet,
        families::work,
        families::i_am_name,
    ];
    families
        .iter()
        .map(|family| family(p))
        .find(|f| !f.is_empty())
        .unwrap_or_default()
}

/// "my ...": name, birthday, goal, favourite, named relations and pets. Anything else
/// ("my friend likes jazz", "my wife is vegetarian") is about someone else.
fn possessive(words: &[Word]) -> Vec<Found> {
    let families: [PossessiveFamily; 5] = [
        families::my_name,
        families::my_birthday,
        families::my_goal,
        families::favourite,
        families::my_kin_or_pet,
    ];
    let found = families
        .iter()
        .map(|family| family(words))
        .find(|f| !f.is_empty());
    if let Some(found) = found {
        return found;
    }
    match match_prefix(words, "hometown is") {
        Some(n) => {
            let p = Predicate {
                words: std::iter::once(Word::new("am"))
                    .chain(std::iter::once(Word::new("from")))
                    .chain(words[n..].iter().cloned())
                    .collect(),
                ..Predicate::default()
            };
            families::places(&p, false)
        }
        None => Vec::new(),
    }
}

/// Normalises the words after a first-person subject: adverbs dropped, negation lifted
/// into a flag, auxiliaries resolved ("have been" → "am", "have got" → "have",
/// "can't stand" → "hate"). `None` for modal, past or otherwise non-factual statements
/// ("I would like", "I used to", "I wish").
fn predicate(rest: &[Word]) -> Option<Predicate> {
    let mut head: Vec<&Word> = Vec::new();
    let mut content: Vec<Word> = Vec::new();
    let mut negated = false;
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].lower.as_str();
        let next = rest.get(i + 1).map(|x| x.lower.as_str());
        if w == "can" && next == Some("not") && rest.get(i + 2).is_some_and(|x| x.lower == "stand")
        {
            content.push(Word::new("hate"));
            i += 3;
            break;
        }
        if ADVERBS.contains(&w) {
            i += 1;
        } else if w == "not" || w == "never" {
            negated = true;
            i += 1;
        } else if w == "no" && next == Some("longer") {
            negated = true;
            i += 2;
        } else if AUXILIARIES.contains(&w) || w == "are" {
            head.push(&rest[i]);
            i += 1;
        } else {
            break;
        }
    }
    // One adverb right after the verb is dropped too: "I work remotely for".
    if i < rest.len() {
        content.push(rest[i].clone());
        i += 1;
        if rest
            .get(i)
            .is_some_and(|w| ADVERBS.contains(&w.lower.as_str()))
        {
            i += 1;
        }
    }
    content.extend(rest[i..].iter().cloned());

    let verb = content.first().map(|w| w.lower.clone()).unwrap_or_default();
    if NON_FACTUAL_HEADS.contains(&verb.as_str()) {
        return None;
    }
    let mut perfect = false;
    let mut kept: Vec<Word> = Vec::new();
    for (k, aux) in head.iter().enumerate() {
        match aux.lower.as_str() {
            "would" | "could" | "should" | "might" | "may" | "will" | "must" | "had" => {
                return None
            }
            "was" if matches!(verb.as_str(), "born" | "raised") => kept.push((*aux).clone()),
            "was" => return None,
            "do" | "does" | "did" | "can" => {}
            "have" | "has" => {
                let following = head.get(k + 1).map(|w| w.lower.as_str()).unwrap_or(&verb);
                if following == "been" {
                    continue;
                }
                perfect = following.ends_with("ed") || following == "got";
                kept.push(Word::new("have"));
            }
            "been" => kept.push(Word::new("am")),
            "am" | "are" => kept.push((*aux).clone()),
            _ => {}
        }
    }
    if verb == "got" && kept.last().is_some_and(|w| w.lower == "have") {
        content.remove(0);
        perfect = false;
    }
    kept.extend(content);
    Some(Predicate {
        words: kept,
        negated,
        perfect,
    })
}

/// One fact per (attribute, value, polarity): the most confident wins, first seen order.
fn dedupe(found: Vec<Found>) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    let mut seen: HashMap<(&'static str, String, Polarity), usize> = HashMap::new();
    for f in found {
        let key = (f.attribute, f.value.to_lowercase(), f.polarity);
        match seen.get(&key) {
            Some(&i) if out[i].confidence < f.confidence => out[i] = f,
            Some(_) => {}
            None => {
                seen.insert(key, out.len());
                out.push(f);
            }
        }
    }
    out
}

/// Attributes whose values are proper nouns worth listing as entities.
const ENTITY_ATTRIBUTES: &[&str] = &["name", "location", "origin", "employer", "language"];

fn candidate(f: Found) -> FactCandidate {
    let entities = if ENTITY_ATTRIBUTES.contains(&f.attribute) {
        vec![f.value.clone()]
    } else {
        Vec::new()
    };
    let mut c = FactCandidate::new(f.text, f.confidence.clamp(0.5, 0.95))
        .with_attribute(f.attribute, f.value)
        .with_polarity(f.polarity);
    c.topics = vec![f.attribute.to_owned()];
    c.entities = entities;
    c
}

#[cfg(test)]
mod tests;
