//! Junk never replaces what is known: a candidate whose value is a fragment, a pronoun
//! or nothing but function words ("s okay", "I said", "it", "the") is never allowed to
//! supersede or contest a held fact, however confident its extractor was.

use super::{FactCandidate, Reconciliation};

/// Pieces of contractions and pronouns that never open a real value.
const FRAGMENTS: &[&str] = &["s", "t", "d", "ll", "m", "re", "ve", "nt"];

/// Subject pronouns: a value that starts with one is the rest of a clause ("I said").
const SUBJECT_PRONOUNS: &[&str] = &["i", "you", "he", "she", "we", "they", "it", "u"];

/// Whether `candidate`'s value is too poor to stand for a fact: a fragment of a word
/// anywhere ("s okay"), a clause opened by a subject pronoun ("I said"), or no word that
/// carries content ("it", "the", "of that").
///
/// ```
/// use agentmemory_core::facts::FactCandidate;
/// use agentmemory_core::store_support::is_low_quality;
///
/// let fact = |v: &str| FactCandidate::new(format!("wants to {v}"), 0.8).with_attribute("goal", v);
/// assert!(is_low_quality(&fact("s okay")));
/// assert!(is_low_quality(&fact("I said")));
/// assert!(is_low_quality(&fact("it")));
/// assert!(!is_low_quality(&fact("run a marathon")));
/// assert!(!is_low_quality(&FactCandidate::new("is 30 years old", 0.9).with_attribute("age", "30")));
/// ```
pub fn is_low_quality(candidate: &FactCandidate) -> bool {
    let Some(value) = candidate.value.as_deref() else {
        return false;
    };
    let lower = value.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let Some(first) = words.first() else {
        return true;
    };
    if SUBJECT_PRONOUNS.contains(first) || words.iter().any(|w| FRAGMENTS.contains(w)) {
        return true;
    }
    crate::text::terms(value).is_empty()
}

/// The final say on a decision: a low-quality candidate neither supersedes nor contests
/// (so it can never escalate into a supersession either); it is ignored instead.
pub(super) fn guard(
    decision: Reconciliation,
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    match decision {
        Reconciliation::Supersede(_) | Reconciliation::Contest(_) if is_low_quality(&candidate) => {
            let reason = format!(
                "the value {:?} is too poor to replace a held fact",
                candidate.value.as_deref().unwrap_or_default()
            );
            (Reconciliation::Ignore(reason), candidate)
        }
        other => (other, candidate),
    }
}
