//! Changes of state across attributes: "I sold my car" ends "has a car", "I got laid off
//! from Deloitte" ends "works at Deloitte", "Miso passed away" ends "has a cat named
//! Miso", "I switched to a Pixel" replaces "uses an iPhone".
//!
//! A candidate carrying a [`Transition`] is first reconciled as any other; only when that
//! finds nothing of its own attribute to reinforce or supersede does the transition look
//! further, among the current facts about the same subject:
//!
//! - [`Transition::Ends`]: the fact its object names ([`closes`]) is closed — stored again
//!   negated with the candidate's text, the old version kept as history;
//! - [`Transition::Replaces`]: the fact of the same attribute it takes the place of is
//!   superseded by the candidate.

use super::reconcile::{family, supersede_threshold, well_established, NOT_HELD};
use super::semantic::cosine;
use super::{FactCandidate, MemoryFact, Polarity, Reconciliation, Transition};

/// The cosine between a candidate's and a fact's embeddings at or above which a
/// transition that names nothing the fact says by word still takes it as its target.
/// Not calibrated on a real embedder yet: set high, so meaning only decides when it is
/// clear.
pub const CLOSE_SIMILARITY: f32 = 0.6;

/// Attributes that never end: who the user is and when they were born, and what happened.
const NEVER_ENDED: &[&str] = &["name", "age", "birthday", "origin", "event", "correction"];

/// Words for a job: "I lost my job" ends the employer (or the job title).
const JOB_WORDS: &[&str] = &["job", "work", "position", "role", "career", "post"];

/// Words for a course of study (as terms): "I graduated" ends "their studies".
const STUDY_WORDS: &[&str] = &["studi", "study", "cours", "degre"];

/// Words for the kind of thing an ending names beside its name: "the scrabble app", "my
/// gym membership", "the bassoon lessons".
const KIND_WORDS: &[&str] = &[
    "habit",
    "app",
    "apps",
    "account",
    "membership",
    "subscription",
    "lessons",
    "lesson",
    "classes",
    "class",
    "course",
    "sessions",
    "club",
    "group",
    "league",
    "games",
    "thing",
    "whole",
    "old",
    // "the samba lot", "the oboe era", "my keto phase": a group or a time of the thing.
    "lot",
    "crew",
    "era",
    "phase",
    "days",
];

/// [`KIND_WORDS`] as terms.
fn kind_terms() -> &'static std::collections::HashSet<String> {
    static TERMS: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    TERMS.get_or_init(|| {
        KIND_WORDS
            .iter()
            .flat_map(|w| crate::text::terms(w))
            .collect()
    })
}

/// Terms too light to name a thing: the verbs facts are phrased with.
const LIGHT: &[&str] = &["has", "have", "use", "get", "got", "own", "name", "call"];

fn content_terms(text: &str) -> Vec<String> {
    crate::text::terms(text)
        .into_iter()
        .filter(|t| !LIGHT.contains(&t.as_str()))
        .collect()
}

/// Whether `object` (what a statement says ended, as said: "my car", "the Honda",
/// "Deloitte") names `fact`: every content word of the fact's value is in the object
/// ("car" in "my old car"), a capitalised name in the object is in the fact ("Honda" in
/// "Honda Civic"), or most of their words are shared.
///
/// ```
/// use chrono::Utc;
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::closes;
///
/// let car = MemoryFact::from_candidate("u", FactCandidate::new("drives a car", 0.8).with_attribute("possession", "car"), Utc::now());
/// assert!(closes("my car", &car));
/// assert!(!closes("my bike", &car));
/// let civic = MemoryFact::from_candidate("u", FactCandidate::new("owns a Honda Civic", 0.8).with_attribute("possession", "Honda Civic"), Utc::now());
/// assert!(closes("the Honda", &civic));
/// ```
pub fn closes(object: &str, fact: &MemoryFact) -> bool {
    let said = content_terms(object);
    if said.is_empty() {
        return false;
    }
    let attribute = fact.attribute.as_deref().unwrap_or_default();
    // "kicked the habit" ends the user's habit, whatever it was.
    if said.iter().all(|t| t == "habit") {
        return matches!(attribute, "habit" | "smoking" | "drinking" | "caffeine");
    }
    // "deleted the scrabble app" names scrabble: the kind of thing is left out when
    // something else is named.
    let kinds = kind_terms();
    let named: Vec<String> = said
        .iter()
        .filter(|t| !kinds.contains(t.as_str()))
        .cloned()
        .collect();
    let said = if named.is_empty() { said } else { named };
    if said.iter().all(|t| JOB_WORDS.contains(&t.as_str())) {
        return matches!(attribute, "employer" | "job");
    }
    if said.iter().all(|t| STUDY_WORDS.contains(&t.as_str())) {
        return attribute == "study";
    }
    let held = content_terms(fact.value.as_deref().unwrap_or(&fact.text));
    if held.is_empty() {
        return false;
    }
    if held.iter().all(|t| said.contains(t)) {
        return true;
    }
    // "lost biscuit" names "has a cat named biscuit" (value "cat biscuit"), "sold the
    // focus" names "drives a 2011 ford focus": every word said is in the value.
    if said.iter().all(|t| held.contains(t)) {
        return true;
    }
    let with_text = content_terms(&fact.text);
    let named = object
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .flat_map(crate::text::terms)
        .any(|t| held.contains(&t) || with_text.contains(&t));
    if named {
        return true;
    }
    let shared = said.iter().filter(|t| held.contains(t)).count();
    let union = said.len() + held.len() - shared;
    // Or through a concept: "caffeine" names "drinks three espressos a day".
    shared * 2 > union || super::concepts::share_a_concept(object, &fact.text)
}

/// Applies `candidate`'s transition to `decision` when its own attribute decided nothing
/// ([`Reconciliation::Add`], or a "no longer" about a value not held).
pub(super) fn apply(
    current: &[MemoryFact],
    decision: Reconciliation,
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    let open = match &decision {
        Reconciliation::Add => true,
        Reconciliation::Ignore(reason) => reason == NOT_HELD,
        _ => false,
    };
    let Some(transition) = candidate.transition.clone().filter(|_| open) else {
        return (decision, candidate);
    };
    match transition {
        Transition::Ends { object } => match ended(current, &candidate, &object) {
            Some(target) => close(target, candidate),
            // Its message already closed something, in these words: applied again.
            None if closed_by_its_message(current, &candidate) => (
                Reconciliation::Ignore(super::plan::ALREADY_APPLIED.to_owned()),
                candidate,
            ),
            None => (decision, candidate),
        },
        Transition::Replaces { from } => {
            let target = replaced(current, &candidate, from.as_deref());
            match target.map(|t| supersede(t, &candidate)) {
                Some(decision) => (decision, candidate),
                None => (decision, candidate),
            }
        }
    }
}

/// Whether a current fact is the closing this ending made when its message was applied
/// before: negative, in its words, stated in its message.
fn closed_by_its_message(current: &[MemoryFact], candidate: &FactCandidate) -> bool {
    let Some(message) = candidate.source.message_id.as_deref() else {
        return false;
    };
    current.iter().any(|f| {
        f.is_current()
            && f.polarity == Polarity::Negative
            && f.text == candidate.text
            && f.stated_in(message)
    })
}

/// Current facts the candidate's subject holds, that may end.
fn endable<'a>(
    current: &'a [MemoryFact],
    candidate: &FactCandidate,
) -> impl Iterator<Item = &'a MemoryFact> + 'a {
    let subject = candidate.subject.clone();
    // A change ends what was said before it, never what was said after it.
    let at = candidate.observed_at;
    current.iter().filter(move |f| {
        f.is_current()
            && at.is_none_or(|at| f.observed_at() <= at)
            && f.subject == subject
            && f.polarity == Polarity::Positive
            && !NEVER_ENDED.contains(&f.attribute.as_deref().unwrap_or_default())
    })
}

/// The most recently stated of `facts`.
fn latest<'a>(facts: impl Iterator<Item = &'a MemoryFact>) -> Option<&'a MemoryFact> {
    facts.max_by_key(|f| (f.last_reinforced_at, f.created_at))
}

/// The closest of `facts` in meaning to the candidate, when close enough.
fn nearest<'a>(
    facts: impl Iterator<Item = &'a MemoryFact>,
    candidate: &FactCandidate,
) -> Option<&'a MemoryFact> {
    let c = candidate.embedding.as_deref()?;
    facts
        .filter_map(|f| Some((f, cosine(c, f.embedding.as_deref()?))))
        .filter(|(_, cos)| *cos >= CLOSE_SIMILARITY)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(f, _)| f)
}

/// The fact `object` says ended: named by word, else closest in meaning.
fn ended<'a>(
    current: &'a [MemoryFact],
    candidate: &FactCandidate,
    object: &str,
) -> Option<&'a MemoryFact> {
    latest(endable(current, candidate).filter(|f| closes(object, f)))
        .or_else(|| nearest(endable(current, candidate), candidate))
}

/// The held fact the candidate's value takes the place of.
fn replaced<'a>(
    current: &'a [MemoryFact],
    candidate: &FactCandidate,
    from: Option<&str>,
) -> Option<&'a MemoryFact> {
    // What it names as replaced, when it names something: never another fact of the
    // kind, so a statement folded in later finds the same ([`ended_later`]
    // (super::plan::ended_later) reads `from` alike).
    if let Some(from) = from {
        return latest(endable(current, candidate).filter(|f| closes(from, f)));
    }
    let attribute = candidate.attribute.as_deref()?;
    let verb = |text: &str| text.split(' ').next().unwrap_or_default().to_lowercase();
    let same_kind = |f: &&MemoryFact| {
        f.attribute
            .as_deref()
            .is_some_and(|a| family(a) == family(attribute))
            && f.value != candidate.value
            && (!matches!(attribute, "note" | "possession")
                || verb(&f.text) == verb(&candidate.text))
    };
    if let Some(f) = nearest(endable(current, candidate).filter(same_kind), candidate) {
        return Some(f);
    }
    let mut kin = endable(current, candidate).filter(same_kind);
    match (kin.next(), kin.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// Supersedes `target`, or contests it when the candidate is weak and the fact well
/// established.
fn supersede(target: &MemoryFact, candidate: &FactCandidate) -> Reconciliation {
    let attribute = target.attribute.as_deref().unwrap_or_default();
    if candidate.confidence < supersede_threshold(attribute) && well_established(target) {
        Reconciliation::Contest(target.id.clone())
    } else {
        Reconciliation::Supersede(target.id.clone())
    }
}

/// `target` closed by `candidate`: the same attribute, value and subject, negated, in the
/// candidate's words.
fn close(target: &MemoryFact, candidate: FactCandidate) -> (Reconciliation, FactCandidate) {
    let decision = supersede(target, &candidate);
    let closed = FactCandidate {
        text: candidate.text,
        subject: target.subject.clone(),
        attribute: target.attribute.clone(),
        value: target.value.clone(),
        polarity: Polarity::Negative,
        confidence: candidate.confidence,
        source: candidate.source,
        topics: target.topics.clone(),
        entities: target.entities.clone(),
        embedding: candidate.embedding,
        observed_at: candidate.observed_at,
        transition: None,
        valid_from: candidate.valid_from,
    };
    (decision, closed)
}

/// What a current fact of the user's says has ended, if it says so: the value of a
/// negative fact ("had Rolo put down", value `dog Rolo`), the object of an ending that
/// found nothing to close when it was said, or what a replacement names as replaced
/// ("traded the Civic in for a Golf").
pub(super) fn ended_thing(fact: &MemoryFact) -> Option<&str> {
    if fact.subject.is_some() || !fact.is_current() {
        return None;
    }
    if fact.polarity == Polarity::Negative {
        return fact.value.as_deref();
    }
    match &fact.transition {
        Some(Transition::Ends { object }) => Some(object),
        Some(Transition::Replaces { from: Some(from) }) => Some(from),
        _ => None,
    }
}

/// Whether `subject` (the subject of a fact about someone or something else: `dog Rolo`,
/// `Rolo`, `boyfriend Tomasz`, `car`) is the thing `thing` names (`dog Rolo`, or just
/// `Rolo`): both have content words and every word of one is in the other; or `thing` is
/// one word for a kind of thing (`partner`) and the subject is of that kind (`boyfriend
/// Tomasz`), through the [`concepts`](super::concepts).
pub(super) fn names_subject(thing: &str, subject: &str) -> bool {
    let (said, held) = (content_terms(subject), content_terms(thing));
    if said.is_empty() || held.is_empty() {
        return false;
    }
    said.iter().all(|t| held.contains(t))
        || held.iter().all(|t| said.contains(t))
        || (held.len() == 1 && super::concepts::share_a_concept(thing, subject))
}

/// The current facts about `thing`, which `ending` says ended ([`ended_thing`]), stated before it and never
/// after: "dog Rolo is 3 years old" once "we had to put Rolo down" closed the dog. They
/// end with it — a change of state closes every fact its object holds, not only the one
/// it names. Facts of the user's own are never among them.
pub(super) fn about_ended<'a>(
    current: impl Iterator<Item = &'a MemoryFact> + 'a,
    ending: &'a MemoryFact,
    thing: &'a str,
) -> impl Iterator<Item = &'a MemoryFact> + 'a {
    let at = ending.observed_at();
    current.filter(move |f| {
        f.is_current()
            && f.polarity == Polarity::Positive
            && f.id != ending.id
            && f.subject
                .as_deref()
                .is_some_and(|s| names_subject(thing, s))
            && f.observed_at() <= at
            && f.next_statement_after(at).is_none()
    })
}

/// `fact`, about a thing `ending` says ended, closed with it: valid until the ending
/// took effect, superseded by the fact that says it. A statement about the thing folded
/// in late, behind the ending, is closed the same way
/// ([`ended_later`](super::plan::ended_later)), so either order leaves the same facts.
pub(super) fn closed_with(fact: &MemoryFact, ending: &MemoryFact) -> MemoryFact {
    let mut closed = fact.clone();
    closed.valid_to = Some(ending.valid_from());
    closed.superseded_by = Some(ending.id.clone());
    closed
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;

    fn held(text: &str, attribute: &str, value: &str) -> MemoryFact {
        let c = FactCandidate::new(text, 0.8).with_attribute(attribute, value);
        MemoryFact::from_candidate("u", c, Utc::now())
    }

    fn ends(text: &str, object: &str) -> FactCandidate {
        FactCandidate::new(text, 0.8)
            .with_attribute("event", text)
            .with_transition(Transition::Ends {
                object: object.into(),
            })
    }

    #[test]
    fn an_ending_closes_the_fact_it_names_of_any_attribute() {
        let facts = vec![
            held("likes jazz", "likes", "jazz"),
            held("works at Deloitte", "employer", "Deloitte"),
            held("has a cat named Miso", "pet", "cat Miso"),
        ];
        for (said, object, closed) in [
            ("got laid off from Deloitte", "Deloitte", 1),
            ("Miso passed away", "Miso", 2),
            ("lost their job", "my job", 1),
        ] {
            let (decision, c) = apply(&facts, Reconciliation::Add, ends(said, object));
            assert_eq!(
                decision,
                Reconciliation::Supersede(facts[closed].id.clone())
            );
            assert_eq!(c.attribute, facts[closed].attribute);
            assert_eq!(c.value, facts[closed].value);
            assert_eq!(c.polarity, Polarity::Negative);
            assert_eq!(c.text, said);
        }
        let (decision, c) = apply(&facts, Reconciliation::Add, ends("sold their car", "car"));
        assert_eq!(decision, Reconciliation::Add);
        assert_eq!(c.attribute.as_deref(), Some("event"));
    }

    #[test]
    fn an_ending_never_reaches_another_subject() {
        let mut sister = held("sister lives in Bath", "location", "Bath");
        sister.subject = Some("sister".into());
        let (decision, _) = apply(
            &[sister],
            Reconciliation::Add,
            ends("moved out of Bath", "Bath"),
        );
        assert_eq!(decision, Reconciliation::Add);
    }

    #[test]
    fn an_ending_without_words_in_common_closes_by_meaning() {
        let mut civic = held("drives a Honda Civic", "possession", "Honda Civic");
        civic.embedding = Some(vec![1.0, 0.0]);
        let mut jazz = held("likes jazz", "likes", "jazz");
        jazz.embedding = Some(vec![0.0, 1.0]);
        let mut sold = ends("sold their car", "car");
        sold.embedding = Some(vec![0.9, 0.1]);
        let facts = vec![jazz, civic];
        let (decision, _) = apply(&facts, Reconciliation::Add, sold);
        assert_eq!(decision, Reconciliation::Supersede(facts[1].id.clone()));
    }

    #[test]
    fn a_replacement_supersedes_the_only_fact_of_its_kind_or_the_one_it_names() {
        let iphone = held("uses an iPhone", "note", "uses an iPhone");
        let pixel = FactCandidate::new("uses a Pixel", 0.8)
            .with_attribute("note", "uses a Pixel")
            .with_transition(Transition::Replaces { from: None });
        let (decision, c) = apply(
            std::slice::from_ref(&iphone),
            Reconciliation::Add,
            pixel.clone(),
        );
        assert_eq!(decision, Reconciliation::Supersede(iphone.id.clone()));
        assert_eq!(c.text, "uses a Pixel");
        let linux = held("uses Linux at home", "note", "uses Linux at home");
        let both = vec![iphone.clone(), linux];
        assert_eq!(
            apply(&both, Reconciliation::Add, pixel).0,
            Reconciliation::Add
        );
        let named = FactCandidate::new("uses a Pixel", 0.8)
            .with_attribute("note", "uses a Pixel")
            .with_transition(Transition::Replaces {
                from: Some("iPhone".into()),
            });
        assert_eq!(
            apply(&both, Reconciliation::Add, named).0,
            Reconciliation::Supersede(iphone.id)
        );
    }
}
