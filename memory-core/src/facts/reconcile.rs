//! Reconciliation: deciding what a new candidate means for the facts already held.
//!
//! Shared by every [`UserMemoryStore`](super::UserMemoryStore) backend so they all agree.
//! Pure functions of the current facts and the candidate: [`resolve`] turns a correction
//! ("actually it's ramen") into the fact it corrects, then [`reconcile`] (or
//! [`reconcile_with`], which also takes a similarity) decides.

use super::{FactCandidate, MemoryFact, Polarity};

/// What to do with a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciliation {
    /// Store it as a new fact.
    Add,
    /// It repeats the fact with this id: reinforce that one.
    Reinforce(String),
    /// It contradicts the fact with this id: store it and mark that one superseded.
    Supersede(String),
    /// It contradicts the fact with this id, but with too little confidence to replace a
    /// well-established fact: keep that one current and report the candidate as a
    /// pending contradiction ([`FactChange::Contested`](super::FactChange::Contested)).
    Contest(String),
    /// Store nothing, for this reason.
    Ignore(String),
}

/// What reconciliation compares a held fact by: its [`value_key`] and its [`normalize`]d
/// text. Computing them allocates, so a store that keeps its facts in memory computes
/// them once per fact (when the fact is written) and hands them to
/// [`reconcile_by_meaning_keyed`](crate::store_support::reconcile_by_meaning_keyed), which then costs a
/// few comparisons per held fact instead of a few allocations.
///
/// ```
/// use chrono::Utc;
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::FactKey;
///
/// let fact = MemoryFact::from_candidate("u", FactCandidate::new("Likes the Museums!", 0.8).with_attribute("likes", "the Museums"), Utc::now());
/// let key = FactKey::of(&fact);
/// assert_eq!(key.value(), Some("museum"));
/// assert_eq!(key.text(), "likes the museums");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FactKey {
    value: Option<String>,
    text: String,
}

impl FactKey {
    /// The keys of `fact`.
    pub fn of(fact: &MemoryFact) -> Self {
        Self {
            value: fact.value.as_deref().map(value_key),
            text: normalize(&fact.text),
        }
    }

    /// The fact's value as [`value_key`] folds it.
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The fact's text as [`normalize`] folds it.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The keys of the held facts: given (one per fact, in order), or computed when asked.
#[derive(Clone, Copy)]
pub(super) struct Keys<'a>(pub(super) Option<&'a [FactKey]>);

impl Keys<'_> {
    fn value<'f>(&'f self, i: usize, fact: &'f MemoryFact) -> Option<std::borrow::Cow<'f, str>> {
        match self.0.and_then(|k| k.get(i)) {
            Some(k) => k.value.as_deref().map(std::borrow::Cow::Borrowed),
            None => fact.value.as_deref().map(|v| value_key(v).into()),
        }
    }

    fn text<'f>(&'f self, i: usize, fact: &'f MemoryFact) -> std::borrow::Cow<'f, str> {
        match self.0.and_then(|k| k.get(i)) {
            Some(k) => std::borrow::Cow::Borrowed(&k.text),
            None => normalize(&fact.text).into(),
        }
    }
}

/// The attribute a correction candidate carries ("actually it's ramen") until
/// [`resolve`] applies it to the fact it corrects.
pub const CORRECTION_ATTRIBUTE: &str = "correction";

/// Why a "no longer" statement about a value the user does not hold changes nothing.
pub(super) const NOT_HELD: &str = "states that a value the user does not hold no longer holds";

/// Attributes a user has one value of at a time; a new value replaces the old one.
const SINGLE_VALUED: &[&str] = &[
    "name",
    "location",
    "job",
    "employer",
    "age",
    "birthday",
    "relationship",
    "timezone",
    "email",
    "phone",
    "habit",
    "smoking",
    "drinking",
    "caffeine",
    "team supported",
];

/// Whether `attribute` holds one value at a time (`location`, `favourite food`) rather
/// than many (`likes`, `language`, `pet`).
///
/// ```
/// use agentmemory_core::store_support::is_single_valued;
/// assert!(is_single_valued("employer"));
/// assert!(is_single_valued("favourite food"));
/// assert!(!is_single_valued("likes"));
/// ```
pub fn is_single_valued(attribute: &str) -> bool {
    SINGLE_VALUED.contains(&attribute) || attribute.starts_with("favourite ")
}

/// The confidence a candidate needs to replace a current value of `attribute`.
///
/// A name is only replaced on explicit evidence ("my name is", "call me"); other
/// identity facts need a clear statement; preferences change easily.
pub fn supersede_threshold(attribute: &str) -> f32 {
    match attribute {
        "name" => 0.8,
        "age" | "birthday" => 0.75,
        "location" | "origin" | "employer" | "job" | "relationship" => 0.7,
        _ => 0.6,
    }
}

/// A fact stated more than once, or with high confidence, is well established: a weak
/// contradiction of it is pending, not a replacement.
pub(super) fn well_established(fact: &MemoryFact) -> bool {
    fact.reinforcement_count >= 1 || fact.confidence >= 0.9
}

/// Preference attributes are one family: "likes X" and "dislikes X" contradict.
pub(super) fn family(attribute: &str) -> &str {
    match attribute {
        "likes" | "loves" | "prefers" | "dislikes" | "hates" | "enjoys" => "likes",
        other => other,
    }
}

/// Lowercase, alphanumeric words joined by single spaces; `"Italian  food!"` → `"italian food"`.
pub fn normalize(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The key two values are compared by: normalised, a leading article dropped, "going
/// hiking" folded to "hiking", each word in a naive singular ("museums" = "museum").
///
/// ```
/// use agentmemory_core::store_support::value_key;
/// assert_eq!(value_key("going hiking"), value_key("Hiking"));
/// assert_eq!(value_key("the museums"), value_key("museum"));
/// ```
pub fn value_key(value: &str) -> String {
    let norm = normalize(value);
    let mut words: Vec<&str> = norm.split(' ').filter(|w| !w.is_empty()).collect();
    while words.len() > 1 && matches!(words[0], "a" | "an" | "the" | "some") {
        words.remove(0);
    }
    if words.len() > 1 && matches!(words[0], "going" | "go" | "to") && words[1].ends_with("ing") {
        words.remove(0);
    }
    words
        .iter()
        .map(|w| singular(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn singular(word: &str) -> &str {
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        &word[..word.len() - 1]
    } else {
        word
    }
}

/// Diet values that cannot hold together: eating fish ends a vegan or vegetarian diet,
/// becoming vegan ends eating meat. Each row: a diet and the foods it excludes.
const DIET_CONFLICTS: &[(&str, &[&str])] = &[
    (
        "vegan",
        &[
            "meat",
            "fish",
            "chicken",
            "beef",
            "pork",
            "lamb",
            "seafood",
            "bacon",
            "egg",
            "dairy",
            "cheese",
            "turkey",
            "salmon",
            "tuna",
            "shrimp",
            "steak",
            "burger",
            "milk",
            "vegetarian",
            "pescatarian",
        ],
    ),
    (
        "vegetarian",
        &[
            "meat",
            "fish",
            "chicken",
            "beef",
            "pork",
            "lamb",
            "seafood",
            "bacon",
            "turkey",
            "salmon",
            "tuna",
            "shrimp",
            "steak",
            "burger",
            "vegan",
            "pescatarian",
        ],
    ),
    (
        "pescatarian",
        &[
            "meat",
            "chicken",
            "beef",
            "pork",
            "lamb",
            "bacon",
            "turkey",
            "steak",
            "burger",
            "vegan",
            "vegetarian",
        ],
    ),
];

/// Whether two positive diet facts contradict each other.
fn diets_conflict(a: &str, b: &str) -> bool {
    // Other names of one diet: "plant-based" is vegan, "pescetarian" pescatarian.
    let canonical = |d: &str| -> String {
        match d {
            "plant-based" | "plant based" | "fully vegan" => "vegan".to_owned(),
            "pescetarian" | "pescitarian" => "pescatarian".to_owned(),
            "veggie" => "vegetarian".to_owned(),
            other => other.to_owned(),
        }
    };
    let (a, b) = (canonical(a), canonical(b));
    let (a, b) = (a.as_str(), b.as_str());
    DIET_CONFLICTS.iter().any(|(diet, excluded)| {
        (a == *diet && excluded.contains(&b)) || (b == *diet && excluded.contains(&a))
    })
}

/// Turns a correction candidate ("actually it's ramen", attribute
/// [`CORRECTION_ATTRIBUTE`]) into the fact it corrects: the attribute and polarity of
/// the user's most recently stated fact, with the new value. Any other candidate comes
/// back unchanged, and so does a correction when there is nothing to correct (which
/// [`reconcile`] then ignores).
///
/// ```
/// use chrono::Utc;
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::resolve;
///
/// let sushi = FactCandidate::new("favourite food is sushi", 0.85).with_attribute("favourite food", "sushi");
/// let held = vec![MemoryFact::from_candidate("u", sushi, Utc::now())];
/// let said = FactCandidate::new("ramen", 0.9).with_attribute("correction", "ramen");
/// let fixed = resolve(&held, said);
/// assert_eq!(fixed.attribute.as_deref(), Some("favourite food"));
/// assert_eq!(fixed.text, "favourite food is ramen");
/// ```
pub fn resolve(current: &[MemoryFact], candidate: FactCandidate) -> FactCandidate {
    if candidate.attribute.as_deref() != Some(CORRECTION_ATTRIBUTE) {
        return candidate;
    }
    let target = last_stated(current);
    let (Some(target), Some(value)) = (target, candidate.value.clone()) else {
        return candidate;
    };
    let old_value = target.value.as_deref().unwrap_or_default();
    let text = replace_value(&target.text, old_value, &value).unwrap_or_else(|| {
        format!(
            "{} is {value}",
            target.attribute.as_deref().unwrap_or_default()
        )
    });
    FactCandidate {
        text,
        subject: target.subject.clone(),
        attribute: target.attribute.clone(),
        value: Some(value.clone()),
        polarity: target.polarity,
        confidence: candidate.confidence,
        source: candidate.source,
        // The correction's own embedding: it names the new value, which is what search needs.
        embedding: candidate.embedding,
        observed_at: candidate.observed_at,
        topics: target.topics.clone(),
        entities: if target.entities.is_empty() {
            Vec::new()
        } else {
            vec![value]
        },
        transition: None,
        valid_from: candidate.valid_from,
    }
}

/// What stores call: [`resolve`]s a correction, then [`reconcile`]s, and hands back the
/// candidate to store. A resolved correction always replaces the fact it corrects (even
/// of an attribute that holds many values: "I love sushi" … "I meant ramen"), unless it
/// repeats it.
///
/// ```
/// use chrono::Utc;
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::{decide, Reconciliation};
///
/// let sushi = FactCandidate::new("likes sushi", 0.85).with_attribute("likes", "sushi");
/// let held = vec![MemoryFact::from_candidate("u", sushi, Utc::now())];
/// let said = FactCandidate::new("ramen", 0.9).with_attribute("correction", "ramen");
/// let (decision, fixed) = decide(&held, said);
/// assert_eq!(decision, Reconciliation::Supersede(held[0].id.clone()));
/// assert_eq!(fixed.text, "likes ramen");
/// ```
pub fn decide(current: &[MemoryFact], candidate: FactCandidate) -> (Reconciliation, FactCandidate) {
    decide_keyed(current, Keys(None), candidate)
}

/// [`decide`] with the held facts' keys, given or computed when needed.
pub(super) fn decide_keyed(
    current: &[MemoryFact],
    keys: Keys<'_>,
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    let was_correction = candidate.attribute.as_deref() == Some(CORRECTION_ATTRIBUTE);
    let resolved = resolve(current, candidate);
    let corrected = was_correction && resolved.attribute.as_deref() != Some(CORRECTION_ATTRIBUTE);
    let decision = reconcile_keyed(current, keys, &resolved, None);
    if corrected && matches!(decision, Reconciliation::Add | Reconciliation::Contest(_)) {
        if let Some(target) = last_stated(current) {
            return (Reconciliation::Supersede(target.id.clone()), resolved);
        }
    }
    let (decision, resolved) = super::transition::apply(current, decision, resolved);
    super::quality::guard(decision, resolved)
}

/// The user's most recently stated current fact with a value (notes aside).
fn last_stated(current: &[MemoryFact]) -> Option<&MemoryFact> {
    current
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_current() && f.value.is_some())
        .filter(|(_, f)| f.attribute.as_deref().is_some_and(|a| a != "note"))
        .max_by_key(|(i, f)| (f.last_reinforced_at, f.created_at, *i))
        .map(|(_, f)| f)
}

/// `text` with its (case-insensitive) `old` value replaced by `new`.
fn replace_value(text: &str, old: &str, new: &str) -> Option<String> {
    if old.is_empty() {
        return None;
    }
    let at = text.to_lowercase().find(&old.to_lowercase())?;
    // Lowercasing can change byte lengths outside ASCII; only replace when it did not.
    if text.len() != text.to_lowercase().len() {
        return None;
    }
    Some(format!("{}{new}{}", &text[..at], &text[at + old.len()..]))
}

/// Decides what `candidate` means given the user's `current` facts.
///
/// - the same statement again (same attribute family, value and polarity, values
///   compared by [`value_key`], or the same normalised text) → [`Reconciliation::Reinforce`];
/// - the same attribute family and value with the opposite polarity ("no longer lives in
///   Lyon" after "lives in Lyon"), a different value of a single-valued attribute, or a
///   diet it rules out ("eats fish" after "is vegan") → [`Reconciliation::Supersede`],
///   unless the candidate's confidence is under [`supersede_threshold`] and the fact is
///   well established (stated twice, or confidence ≥ 0.9) → [`Reconciliation::Contest`];
/// - a "no longer" statement about a value the user does not hold now ("no longer lives
///   in Lyon" while living in Paris) → [`Reconciliation::Ignore`];
/// - empty text, a confidence outside `0.0..=1.0`, or an unresolved correction →
///   [`Reconciliation::Ignore`];
/// - anything else → [`Reconciliation::Add`].
///
/// ```
/// use chrono::Utc;
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::{reconcile, Reconciliation};
///
/// let paris = MemoryFact::from_candidate("u", FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris"), Utc::now());
/// let berlin = FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin");
/// assert_eq!(reconcile(std::slice::from_ref(&paris), &berlin), Reconciliation::Supersede(paris.id));
/// ```
pub fn reconcile(current: &[MemoryFact], candidate: &FactCandidate) -> Reconciliation {
    reconcile_with(current, candidate, None)
}

/// How similar a held fact is to the candidate, `0.0..=1.0` (e.g. the cosine of their
/// embeddings). Given to [`reconcile_with`].
pub type Similarity<'a> = &'a dyn Fn(&MemoryFact, &FactCandidate) -> Option<f32>;

/// Similarity at or above which a candidate with the same attribute family and polarity
/// as a held fact is a paraphrase of it (reinforces it).
pub const PARAPHRASE_SIMILARITY: f32 = 0.9;

/// [`reconcile`], with an optional similarity: a candidate whose attribute family and
/// polarity match a current fact and whose similarity to it reaches
/// [`PARAPHRASE_SIMILARITY`] reinforces that fact instead of being added.
pub fn reconcile_with(
    current: &[MemoryFact],
    candidate: &FactCandidate,
    similarity: Option<Similarity<'_>>,
) -> Reconciliation {
    reconcile_keyed(current, Keys(None), candidate, similarity)
}

fn reconcile_keyed(
    current: &[MemoryFact],
    keys: Keys<'_>,
    candidate: &FactCandidate,
    similarity: Option<Similarity<'_>>,
) -> Reconciliation {
    let text = normalize(&candidate.text);
    if text.is_empty() {
        return Reconciliation::Ignore("empty fact text".into());
    }
    if !(candidate.confidence.is_finite() && (0.0..=1.0).contains(&candidate.confidence)) {
        return Reconciliation::Ignore(format!(
            "confidence {} is outside 0.0..=1.0",
            candidate.confidence
        ));
    }
    if candidate.attribute.as_deref() == Some(CORRECTION_ATTRIBUTE) {
        return Reconciliation::Ignore("a correction with no earlier fact to correct".into());
    }
    let cand_value = candidate.value.as_deref().map(value_key);
    let mut supersede: Option<&MemoryFact> = None;
    let mut holds_other_value = false;
    // Facts about someone else never answer for this subject, nor it for them.
    let live = current
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_current() && f.subject == candidate.subject);
    for (i, fact) in live {
        match (&candidate.attribute, &fact.attribute) {
            (Some(ca), Some(fa)) if family(ca) == family(fa) => {
                let fact_value = keys.value(i, fact);
                let same_value =
                    cand_value.is_some() && cand_value.as_deref() == fact_value.as_deref();
                let single = is_single_valued(ca) && ca == fa;
                if same_value {
                    if fact.polarity == candidate.polarity && ca == fa {
                        return Reconciliation::Reinforce(fact.id.clone());
                    }
                    supersede.get_or_insert(fact);
                } else if single {
                    match (candidate.polarity, fact.polarity) {
                        // "no longer lives in Lyon" while living in Paris: nothing to end.
                        (Polarity::Negative, Polarity::Positive) => holds_other_value = true,
                        _ => {
                            supersede.get_or_insert(fact);
                        }
                    }
                } else if ca == "diet"
                    && fa == "diet"
                    && candidate.polarity == Polarity::Positive
                    && fact.polarity == Polarity::Positive
                    && diets_conflict(
                        cand_value.as_deref().unwrap_or_default(),
                        fact_value.as_deref().unwrap_or_default(),
                    )
                {
                    supersede.get_or_insert(fact);
                } else if let Some(similar) = similarity {
                    let paraphrase = fact.polarity == candidate.polarity
                        && ca == fa
                        && similar(fact, candidate).is_some_and(|s| s >= PARAPHRASE_SIMILARITY);
                    if paraphrase {
                        return Reconciliation::Reinforce(fact.id.clone());
                    }
                }
            }
            _ => {
                if fact.polarity == candidate.polarity && keys.text(i, fact) == text {
                    return Reconciliation::Reinforce(fact.id.clone());
                }
            }
        }
    }
    match supersede {
        Some(fact) => {
            let attribute = candidate.attribute.as_deref().unwrap_or_default();
            let weak = candidate.confidence < supersede_threshold(attribute);
            if weak && well_established(fact) {
                Reconciliation::Contest(fact.id.clone())
            } else {
                Reconciliation::Supersede(fact.id.clone())
            }
        }
        None if holds_other_value => Reconciliation::Ignore(NOT_HELD.into()),
        None => Reconciliation::Add,
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;

    fn held(attribute: &str, value: &str, polarity: Polarity, confidence: f32) -> MemoryFact {
        let c = FactCandidate::new(format!("{attribute} {value}"), confidence)
            .with_attribute(attribute, value)
            .with_polarity(polarity);
        MemoryFact::from_candidate("u", c, Utc::now())
    }

    fn said(attribute: &str, value: &str, polarity: Polarity, confidence: f32) -> FactCandidate {
        FactCandidate::new(format!("{attribute} {value} said"), confidence)
            .with_attribute(attribute, value)
            .with_polarity(polarity)
    }

    #[test]
    fn a_negated_fact_supersedes_the_positive_one() {
        let lyon = held("location", "Lyon", Polarity::Positive, 0.9);
        let gone = said("location", "Lyon", Polarity::Negative, 0.9);
        assert_eq!(
            reconcile(std::slice::from_ref(&lyon), &gone),
            Reconciliation::Supersede(lyon.id)
        );
    }

    #[test]
    fn ending_a_value_not_held_changes_nothing() {
        let paris = held("location", "Paris", Polarity::Positive, 0.9);
        let gone = said("location", "Lyon", Polarity::Negative, 0.9);
        assert!(matches!(
            reconcile(&[paris], &gone),
            Reconciliation::Ignore(_)
        ));
    }

    #[test]
    fn a_weak_contradiction_of_an_established_name_is_pending() {
        let maria = held("name", "Maria", Polarity::Positive, 0.95);
        let weak = said("name", "Mara", Polarity::Positive, 0.7);
        assert_eq!(
            reconcile(std::slice::from_ref(&maria), &weak),
            Reconciliation::Contest(maria.id.clone())
        );
        let strong = said("name", "Mara", Polarity::Positive, 0.95);
        assert_eq!(
            reconcile(std::slice::from_ref(&maria), &strong),
            Reconciliation::Supersede(maria.id)
        );
    }

    #[test]
    fn a_weak_contradiction_of_a_weak_fact_supersedes() {
        let weak_old = held("name", "Tom", Polarity::Positive, 0.7);
        let weak_new = said("name", "Tim", Polarity::Positive, 0.7);
        assert_eq!(
            reconcile(std::slice::from_ref(&weak_old), &weak_new),
            Reconciliation::Supersede(weak_old.id)
        );
    }

    #[test]
    fn eating_fish_ends_a_vegan_diet_but_diets_otherwise_add() {
        let vegan = held("diet", "vegan", Polarity::Positive, 0.9);
        let fish = said("diet", "fish", Polarity::Positive, 0.8);
        assert_eq!(
            reconcile(std::slice::from_ref(&vegan), &fish),
            Reconciliation::Supersede(vegan.id)
        );
        let gluten = held("diet", "gluten", Polarity::Negative, 0.9);
        let vegan_again = said("diet", "vegan", Polarity::Positive, 0.9);
        assert_eq!(reconcile(&[gluten], &vegan_again), Reconciliation::Add);
    }

    #[test]
    fn favourites_hold_one_value_and_likes_many() {
        let sushi = held("favourite food", "sushi", Polarity::Positive, 0.85);
        let ramen = said("favourite food", "ramen", Polarity::Positive, 0.85);
        assert_eq!(
            reconcile(std::slice::from_ref(&sushi), &ramen),
            Reconciliation::Supersede(sushi.id)
        );
        let jazz = held("likes", "jazz", Polarity::Positive, 0.85);
        let rock = said("likes", "rock", Polarity::Positive, 0.85);
        assert_eq!(reconcile(&[jazz], &rock), Reconciliation::Add);
    }

    #[test]
    fn paraphrased_values_reinforce() {
        let hiking = held("likes", "hiking", Polarity::Positive, 0.85);
        let again = said("likes", "going hiking", Polarity::Positive, 0.8);
        assert_eq!(
            reconcile(std::slice::from_ref(&hiking), &again),
            Reconciliation::Reinforce(hiking.id)
        );
    }

    #[test]
    fn a_similarity_can_merge_paraphrases() {
        let hiking = held("likes", "hiking", Polarity::Positive, 0.85);
        let trails = said("likes", "walking in the hills", Polarity::Positive, 0.8);
        assert_eq!(
            reconcile(std::slice::from_ref(&hiking), &trails),
            Reconciliation::Add
        );
        let similar = |_: &MemoryFact, _: &FactCandidate| Some(0.93);
        assert_eq!(
            reconcile_with(std::slice::from_ref(&hiking), &trails, Some(&similar)),
            Reconciliation::Reinforce(hiking.id)
        );
    }

    #[test]
    fn corrections_resolve_to_the_last_fact() {
        let lyon = held("location", "Lyon", Polarity::Positive, 0.9);
        let fix = said(CORRECTION_ATTRIBUTE, "Lille", Polarity::Positive, 0.9);
        let resolved = resolve(std::slice::from_ref(&lyon), fix.clone());
        assert_eq!(resolved.attribute.as_deref(), Some("location"));
        assert_eq!(resolved.text, "location Lille");
        assert_eq!(
            reconcile(std::slice::from_ref(&lyon), &resolved),
            Reconciliation::Supersede(lyon.id)
        );
        assert!(matches!(reconcile(&[], &fix), Reconciliation::Ignore(_)));
    }
}
