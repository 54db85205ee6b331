//! Reconciliation: deciding what a new candidate means for the facts already held.
//!
//! Shared by every [`UserMemoryStore`](super::UserMemoryStore) backend so they all agree.

use super::{FactCandidate, MemoryFact};

/// What to do with a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciliation {
    /// Store it as a new fact.
    Add,
    /// It repeats the fact with this id: reinforce that one.
    Reinforce(String),
    /// It contradicts the fact with this id: store it and mark that one superseded.
    Supersede(String),
    /// Store nothing, for this reason.
    Ignore(String),
}

/// Attributes a user has one value of at a time; a new value replaces the old one.
const SINGLE_VALUED: &[&str] = &[
    "name",
    "location",
    "origin",
    "job",
    "employer",
    "age",
    "birthday",
    "relationship",
    "timezone",
    "email",
    "phone",
];

/// Whether `attribute` holds one value at a time (`location`) rather than many (`likes`).
pub fn is_single_valued(attribute: &str) -> bool {
    SINGLE_VALUED.contains(&attribute)
}

/// Preference attributes are one family: "likes X" and "dislikes X" contradict.
fn family(attribute: &str) -> &str {
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

/// Decides what `candidate` means given the user's `current` facts.
///
/// - the same statement again (same attribute family, value and polarity, or the same
///   normalised text) → [`Reconciliation::Reinforce`];
/// - the same attribute family and value with the opposite polarity, or a different
///   value of a single-valued attribute → [`Reconciliation::Supersede`];
/// - empty text or a confidence outside `0.0..=1.0` → [`Reconciliation::Ignore`];
/// - anything else → [`Reconciliation::Add`].
///
/// ```
/// use chrono::Utc;
/// use agentmemory_core::facts::{reconcile, FactCandidate, MemoryFact, Reconciliation};
///
/// let paris = MemoryFact::from_candidate("u", FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris"), Utc::now());
/// let berlin = FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin");
/// assert_eq!(reconcile(&[paris.clone()], &berlin), Reconciliation::Supersede(paris.id));
/// ```
pub fn reconcile(current: &[MemoryFact], candidate: &FactCandidate) -> Reconciliation {
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
    let cand_value = candidate.value.as_deref().map(normalize);
    let mut supersede = None;
    for fact in current.iter().filter(|f| f.is_current()) {
        match (&candidate.attribute, &fact.attribute) {
            (Some(ca), Some(fa)) if family(ca) == family(fa) => {
                let same_value =
                    cand_value.is_some() && cand_value == fact.value.as_deref().map(normalize);
                if same_value {
                    if fact.polarity == candidate.polarity && ca == fa {
                        return Reconciliation::Reinforce(fact.id.clone());
                    }
                    supersede.get_or_insert_with(|| fact.id.clone());
                } else if is_single_valued(ca) && ca == fa {
                    supersede.get_or_insert_with(|| fact.id.clone());
                }
            }
            _ => {
                if normalize(&fact.text) == text && fact.polarity == candidate.polarity {
                    return Reconciliation::Reinforce(fact.id.clone());
                }
            }
        }
    }
    match supersede {
        Some(id) => Reconciliation::Supersede(id),
        None => Reconciliation::Add,
    }
}
