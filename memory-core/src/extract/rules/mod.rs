//! [`RuleExtractor`]: offline, deterministic fact extraction from English first-person
//! statements.
//!
//! The pipeline: split the user's message into sentences (questions and hypotheticals
//! are dropped whole), sentences into clauses, find each clause's subject (only "I",
//! "my ..." and, for where they live, "we" speak about the user), lift negation and
//! adverbs out of the predicate, then ask one function per attribute family
//! ([`families`]) in a fixed order; the first family that finds something wins.

mod activities;
mod changes;
mod chat_shapes;
mod clause;
mod diagnoses;
mod disclosures;
mod endings;
mod events;
mod families;
mod habits;
mod health;
mod health_notes;
mod junk;
mod lexicon;
mod morph;
mod notes;
mod pattern;
mod people;
mod revise;
mod status;
mod successor;
mod symptoms;
mod tables;
mod value;
mod when;

use std::collections::HashMap;

use async_trait::async_trait;

use crate::error::Result;
use crate::extract::{FactExtractor, Turn};
use crate::facts::{FactCandidate, FactSource, Polarity};

use clause::Word;
use families::Predicate;
use lexicon::{
    listed, same, ADVERBS, AUXILIARIES, FILLERS, FILLER_PHRASES, NON_ASSERTIVE_OPENERS,
    NON_FACTUAL_HEADS,
};
use pattern::{match_prefix, Found};
use tables::FREQUENCY;

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

/// The words health facts are phrased with (conditions, medications, "allergic",
/// "intolerant", "takes"): what [`health_facts_for`](crate::facts::health_facts_for)
/// searches with besides a domain's concern words.
pub(crate) fn health_words() -> impl Iterator<Item = &'static str> {
    health::health_words()
}

impl RuleExtractor {
    /// A rule extractor.
    pub fn new() -> Self {
        Self
    }

    /// The facts stated in `text`, in the order they appear, without a source.
    pub fn extract_text(&self, text: &str) -> Vec<FactCandidate> {
        let text = junk::without_quotes(text);
        let text = chat_shapes::with_plain_sentences(&text);
        let mut found: Vec<Found> = Vec::new();
        // The sentences that state something: what `revise` reads for the health
        // disclosures and couple endings no rule read (never a joke, a question or an
        // instruction).
        let mut stated = String::new();
        // Questions and sentences with a joke in them: read for health alone, held to
        // what the health tables know.
        let (mut asked, mut joked) = (String::new(), String::new());
        for sentence in clause::sentences(&text) {
            let lowered = junk::Lowered::new(sentence.text);
            if junk::retracts(&lowered) {
                // "I'm vegetarian, just kidding": nothing said so far stands.
                found.clear();
                stated.clear();
                continue;
            }
            if junk::is_instruction(sentence.text, &lowered) || junk::is_set_phrase(&lowered) {
                continue;
            }
            if sentence.question {
                push_sentence(&mut asked, sentence.text);
                continue;
            }
            let mut clauses = clause::clauses(sentence.text);
            let jokes = junk::joked_clauses(&clauses);
            // A sentence with a joke in it is not read again for disclosures.
            let any_joke = jokes.iter().any(|j| *j);
            if any_joke {
                push_sentence(&mut joked, sentence.text);
            }
            if jokes.iter().all(|j| *j) {
                continue;
            }
            let mut joke = jokes.into_iter();
            clauses.retain(|_| !joke.next().unwrap_or(false));
            let opener = clauses
                .first()
                .and_then(|c| strip_fillers(c).first())
                .map(|w| w.lower());
            if opener.is_some_and(|o| listed(NON_ASSERTIVE_OPENERS, o)) {
                continue;
            }
            if !any_joke {
                push_sentence(&mut stated, sentence.text);
            }
            let mut after_opener = false;
            // What an earlier clause of the sentence said ended: "gave up running, it's
            // swimming now" reads the second clause as what took its place.
            let mut ended: Option<String> = None;
            for words in &clauses {
                // "correction: green": the opener stands alone, the next clause corrects.
                if correction_len(words) == words.len() {
                    after_opener = true;
                    continue;
                }
                let correcting = is_correction(words) || std::mem::take(&mut after_opener);
                let mut here = analyse_clause(strip_fillers(words));
                if here.is_empty() {
                    if let Some(ended) = &ended {
                        here = successor::successor(strip_fillers(words), ended);
                    }
                }
                if let Some(object) = here.iter().find_map(|f| match &f.transition {
                    Some(crate::facts::Transition::Ends { object }) => Some(object.clone()),
                    _ => None,
                }) {
                    ended = Some(object);
                }
                if correcting {
                    if here.is_empty() {
                        here = changes::correction(strip_correction(words));
                    } else {
                        // "actually, I live in Lille": a correction is sure of itself.
                        for f in &mut here {
                            f.confidence = f.confidence.max(0.9);
                        }
                    }
                }
                found.extend(here);
            }
        }
        let found = dedupe(found).into_iter().map(candidate).collect();
        let mut found = revise::revise(&stated, found);
        for h in health::loose_health_facts(&asked, &joked) {
            if !found.iter().any(|c| c.text == h.text) {
                found.push(h);
            }
        }
        found
    }
}

/// Adds `sentence` to `text`, ended so that it stays a sentence of its own.
fn push_sentence(text: &mut String, sentence: &str) {
    let sentence = sentence.trim();
    text.push_str(sentence);
    if !sentence.ends_with(['.', '!', ';', '?']) {
        text.push('.');
    }
    text.push(' ');
}

/// Openers that mark what follows as a correction of something said before.
const CORRECTION_OPENERS: &[&[&str]] = &[
    &["actually"],
    &["correction"],
    &["i", "meant"],
    &["sorry", "i", "meant"],
    &["no", "wait"],
    &["wait"],
    &["oops"],
    &["i", "mean"],
    &["sorry"],
    &["typo"],
    &["make", "that"],
];

fn correction_len(words: &[Word]) -> usize {
    CORRECTION_OPENERS
        .iter()
        .filter(|o| o.len() <= words.len() && o.iter().zip(words).all(|(p, w)| same(p, w.lower())))
        .map(|o| o.len())
        .max()
        .unwrap_or(0)
}

/// Whether the clause opens like a correction ("actually", "I meant", "correction:").
fn is_correction(words: &[Word]) -> bool {
    correction_len(words) > 0
}

/// The clause after its correction opener; "I meant" keeps its words for the
/// correction reader.
fn strip_correction<'w, 'a>(words: &'w [Word<'a>]) -> &'w [Word<'a>] {
    let n = correction_len(words);
    if words.first().is_some_and(|w| w.lower == "i") {
        return words;
    }
    let rest = &words[n..];
    strip_fillers(rest)
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

    fn languages(&self) -> Option<&[super::Language]> {
        Some(&[super::Language::ENGLISH])
    }
}

/// The clause without its leading fillers ("hi", "btw", "by the way", ...) and time
/// adverbials ("yesterday", "two weeks ago") before its subject.
fn strip_fillers<'w, 'a>(mut words: &'w [Word<'a>]) -> &'w [Word<'a>] {
    loop {
        let when = when::leading(words);
        if when > 0
            && words
                .get(when)
                .is_some_and(|w| listed(clause::SUBJECTS, w.lower()))
        {
            words = &words[when..];
            continue;
        }
        if let Some(first) = words.first() {
            if listed(FILLERS, first.lower()) {
                words = &words[1..];
                continue;
            }
        }
        let phrase = FILLER_PHRASES.iter().find(|p| {
            p.len() <= words.len() && p.iter().zip(words).all(|(p, w)| same(p, w.lower()))
        });
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
    if matches!(first.lower(), "i" | "we") {
        // "we had to have Nibbles put to sleep": no predicate reading gets past "had to".
        let put_down = endings::put_down(words);
        if !put_down.is_empty() {
            found.extend(put_down);
            return found;
        }
    }
    let rest = &words[1..];
    match first.lower() {
        "i" => {
            if let Some(p) = predicate(rest) {
                found.extend(first_person(&p));
            }
        }
        "we" => {
            if let Some(p) = predicate(rest) {
                let places = families::places(&p, true);
                if places.is_empty() {
                    // "we have a rabbit named Clover": the household's pet.
                    let pets: Vec<Found> = families::family_pet(&p)
                        .into_iter()
                        .filter(|f| f.attribute == "pet")
                        .collect();
                    if pets.is_empty() {
                        // "we sold the Honda", "we bought a house": what the user did
                        // with others.
                        let ended = endings::endings(&p);
                        let status = changes::couple_status(&p);
                        if ended.is_empty() && status.is_empty() {
                            found.extend(events::event(&p, true));
                        }
                        found.extend(ended);
                        found.extend(status);
                    }
                    found.extend(pets);
                } else {
                    found.extend(places);
                }
            }
        }
        "my" | "our" if !endings::passed_away(words).is_empty() => {
            found.extend(endings::passed_away(words));
        }
        "my" | "the" if !changes::divorce_final(words).is_empty() => {
            found.extend(changes::divorce_final(words));
        }
        "my" | "our" | "the" if !endings::thing_ended(words).is_empty() => {
            found.extend(endings::thing_ended(words));
        }
        "my" => {
            let own = possessive(rest);
            if own.is_empty() {
                // "my friend Sam moved to Oslo": a fact about the friend.
                found.extend(people::person(words));
            }
            found.extend(own);
        }
        "our" => found.extend(people::person(words)),
        _ if !endings::passed_away(words).is_empty() => {
            found.extend(endings::passed_away(words));
        }
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
            if found.is_empty() && match_prefix(words, "name is").is_some() {
                // "name's Carlos": the "my" is understood.
                found.extend(families::my_name(words));
            }
            if found.is_empty() {
                found.extend(status::favourite_inverted(words));
            }
            if found.is_empty() {
                found.extend(families::as_a_diet(words));
            }
            if found.is_empty() {
                found.extend(families::age_in_passing(words));
            }
        }
    }
    found
}

/// A family function over a first-person predicate.
type FirstPersonFamily = fn(&Predicate) -> Vec<Found>;

/// A family function over the words after "my".
type PossessiveFamily = fn(&[Word]) -> Vec<Found>;

/// "I ...": the families in priority order; the first that finds something wins. A
/// statement that something stopped holding ("I no longer live in Lyon", "I used to be
/// vegan") is read as the positive statement, then turned into its "no longer" form. A
/// plain statement no family reads becomes a low-confidence note.
fn first_person(p: &Predicate) -> Vec<Found> {
    // "I stopped being vegetarian", "I quit working at Ikea": the state that ended.
    if let Some(rewritten) = stopped_state(p) {
        return first_person(&rewritten);
    }
    if p.ceased {
        let positive = Predicate {
            negated: false,
            ceased: false,
            ..p.clone()
        };
        return attribute_families(&positive)
            .into_iter()
            .filter(|f| f.attribute != "goal")
            .map(changes::ceased)
            .collect();
    }
    let found = attribute_families(p);
    if !found.is_empty() {
        return found;
    }
    let routine = activities::routine(p);
    if !routine.is_empty() {
        return routine;
    }
    let disclosed = disclosures::disclosure(p);
    if !disclosed.is_empty() {
        return disclosed;
    }
    let note = notes::note(p);
    if !note.is_empty() {
        return note;
    }
    events::event(p, false)
}

/// "stopped being X" → "am X", ceased; "quit working at X" → "work at X", ceased.
fn stopped_state<'a>(p: &Predicate<'a>) -> Option<Predicate<'a>> {
    if p.negated || p.ceased {
        return None;
    }
    let w = &p.words;
    let n = match_prefix(w, "stopped|quit")?;
    let base = match w.get(n)?.lower() {
        "being" => "am",
        "working" => "work",
        "living" => "live",
        "liking" => "like",
        "speaking" => "speak",
        _ => return None,
    };
    let words = std::iter::once(Word::new(base))
        .chain(w[n + 1..].iter().cloned())
        .collect();
    Some(Predicate {
        words,
        ceased: true,
        ..p.clone()
    })
}

fn attribute_families(p: &Predicate) -> Vec<Found> {
    let families: [FirstPersonFamily; 22] = [
        changes::state_change,
        endings::endings,
        families::diet,
        families::allergy,
        families::likes,
        families::fan_of,
        families::diet_avoidance,
        |p| families::places(p, false),
        families::age_birthday,
        families::language,
        activities::study,
        activities::learning,
        activities::plan,
        families::goal,
        families::family_pet,
        status::relationship,
        status::nationality,
        families::work,
        activities::plays,
        activities::took_up,
        activities::possession,
        families::i_am_name,
    ];
    families
        .iter()
        .map(|family| family(p))
        .find(|f| !f.is_empty())
        .unwrap_or_default()
}

/// "my ...": name, birthday, goal, favourite, named relations and pets, what a relative
/// does. Anything else ("my friend likes jazz", "my wife is vegetarian") is about someone
/// else.
fn possessive(words: &[Word]) -> Vec<Found> {
    let families: [PossessiveFamily; 6] = [
        families::my_name,
        families::my_birthday,
        families::my_goal,
        status::favourite,
        families::my_kin_or_pet,
        status::relation_is,
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
fn predicate<'a>(rest: &[Word<'a>]) -> Option<Predicate<'a>> {
    let mut head: Vec<&Word> = Vec::new();
    let mut content: Vec<Word> = Vec::new();
    let mut negated = false;
    let mut ceased = false;
    let mut frequent = false;
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].lower();
        let next = rest.get(i + 1).map(|x| x.lower());
        if w == "can" && next == Some("not") && rest.get(i + 2).is_some_and(|x| x.lower == "stand")
        {
            content.push(Word::new("hate"));
            i += 3;
            break;
        }
        if listed(ADVERBS, w) {
            frequent |= listed(FREQUENCY, w);
            i += 1;
        } else if w == "not" || w == "never" {
            negated = true;
            i += 1;
        } else if w == "no" && next == Some("longer") {
            negated = true;
            ceased = true;
            i += 2;
        } else if listed(AUXILIARIES, w) || w == "are" {
            head.push(&rest[i]);
            i += 1;
        } else {
            break;
        }
    }
    // "I did well", "I do yoga": an affirmative "do" before no verb is the main verb.
    let main_do = !negated
        && head
            .last()
            .is_some_and(|h| matches!(h.lower(), "do" | "does" | "did"))
        && rest.get(i).is_none_or(|w| !morph::is_known_base(w.lower()));
    if main_do {
        if let Some(h) = head.pop() {
            content.push(h.clone());
        }
    }
    // One adverb right after the verb is dropped too: "I work remotely for".
    if i < rest.len() {
        content.push(rest[i].clone());
        i += 1;
        if rest.get(i).is_some_and(|w| listed(ADVERBS, w.lower())) {
            i += 1;
        }
    }
    content.extend(rest[i..].iter().cloned());

    // "I used to live in Madrid": it held, and no longer does.
    if content.len() > 2
        && content[0].lower == "used"
        && content[1].lower == "to"
        && head.is_empty()
    {
        content.drain(..2);
        ceased = true;
        if content.first().is_some_and(|w| w.lower == "be") {
            content[0] = Word::new("am");
        }
    }
    // "I don't live in Lyon anymore", "not any more".
    let anymore = rest.iter().any(|w| w.lower == "anymore")
        || rest
            .windows(2)
            .any(|w| w[0].lower == "any" && w[1].lower == "more");
    ceased |= negated && anymore;
    frequent |= rest.iter().enumerate().any(|(k, w)| {
        listed(FREQUENCY, w.lower())
            || (k > 0 && rest[k - 1].lower == "on" && is_plural_day(&w.lower))
    });
    let again = rest
        .iter()
        .any(|w| matches!(w.lower(), "again" | "now" | "nowadays"))
        || rest
            .windows(2)
            .any(|w| w[0].lower == "these" && w[1].lower == "days");

    let verb = content
        .first()
        .map(|w| w.lower.to_string())
        .unwrap_or_default();
    if listed(NON_FACTUAL_HEADS, verb.as_str()) {
        return None;
    }
    let mut perfect = false;
    let mut kept: Vec<Word> = Vec::new();
    for (k, aux) in head.iter().enumerate() {
        match aux.lower() {
            "would" | "could" | "should" | "might" | "may" | "will" | "must" | "had" => {
                return None
            }
            // "I was born in", "I was laid off", "I was promoted to": said of the user.
            "was"
                if matches!(
                    verb.as_str(),
                    "born" | "raised" | "laid" | "let" | "fired" | "sacked" | "made" | "promoted"
                ) =>
            {
                kept.push((*aux).clone())
            }
            "was" => return None,
            "do" | "does" | "did" | "can" => {}
            "have" | "has" => {
                let following = head.get(k + 1).map(|w| w.lower()).unwrap_or(&verb);
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
        ceased,
        frequent,
        again,
    })
}

/// "Sundays", "mornings", "weekends": with "on", a habit.
fn is_plural_day(word: &str) -> bool {
    matches!(
        word,
        "mondays"
            | "tuesdays"
            | "wednesdays"
            | "thursdays"
            | "fridays"
            | "saturdays"
            | "sundays"
            | "weekends"
            | "weekdays"
    )
}

/// One fact per (attribute, value, polarity): the most confident wins, first seen order.
fn dedupe(found: Vec<Found>) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    let mut seen: HashMap<(Option<String>, &'static str, String, Polarity), usize> = HashMap::new();
    for f in found {
        let key = (
            f.subject.clone(),
            f.attribute,
            f.value.to_lowercase(),
            f.polarity,
        );
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
    let entities = if listed(ENTITY_ATTRIBUTES, f.attribute) {
        vec![f.value.clone()]
    } else {
        Vec::new()
    };
    let mut c = FactCandidate::new(f.text, f.confidence.clamp(0.5, 0.95))
        .with_attribute(f.attribute, f.value)
        .with_polarity(f.polarity);
    c.topics = vec![f.attribute.to_owned()];
    c.entities = entities;
    c.subject = f.subject;
    c.transition = f.transition;
    c
}

#[cfg(test)]
mod tests;
