//! Facts that no longer hold, recalled for a question about the past: "did I have a dog
//! in 2024?", "where did I live before?", "what did I use to drink?".
//!
//! A block never shows a closed fact as current; a question that names a past period, or
//! asks about what used to be, gets the closed versions relevant to it, each rendered
//! with the interval it held ([`MemoryFact::valid_to`] set).

use chrono::{DateTime, Utc};

use super::{FactPolicy, FactQuery, MemoryFact, ScoredFact, UserMemoryStore};
use crate::error::Result;

/// Words that ask about what used to hold, whatever else the question says.
const PAST_CUES: &[&str] = &[
    "used",
    "previously",
    "formerly",
    "ago",
    "ex",
    "anymore",
    "past",
];

/// Words that ask about what used to hold only beside a verb in the past ("where did I
/// live before York?", "what was my old job?"; not "remind me before Monday").
const PAST_CUES_WITH_A_PAST_VERB: &[&str] = &["before", "old", "earlier", "back", "once", "last"];

/// Verbs in the past that a question about what used to hold is asked with.
const PAST_VERBS: &[&str] = &["did", "was", "were", "had", "used"];

/// Words a question opens with.
const QUESTION_OPENERS: &[&str] = &[
    "what", "where", "when", "who", "whom", "whose", "which", "how", "why", "did", "do", "does",
    "was", "were", "had", "have", "has", "is", "are", "am", "can", "could", "would", "should",
    "will",
];

/// Whether `text` is a question: it holds a question mark, or its first word opens one.
fn is_question(text: &str) -> bool {
    text.contains('?')
        || text
            .split(|c: char| !c.is_alphanumeric())
            .find(|w| !w.is_empty())
            .is_some_and(|w| QUESTION_OPENERS.contains(&w.to_lowercase().as_str()))
}

/// Whether `text` asks about the past: a question that names a period that ended before
/// `at`, or holds a word of `PAST_CUES` (or of `PAST_CUES_WITH_A_PAST_VERB` beside one of
/// `PAST_VERBS`). A statement never does ("I was at the shop"),
/// so the turns that tell something never read the fact history (the versions of every
/// fact of the user, whose reading grows with it).
pub fn asks_about_the_past(text: &str, at: DateTime<Utc>) -> Option<Option<DateTime<Utc>>> {
    if !is_question(text) {
        return None;
    }
    let named = crate::time::resolve(text, at)
        .into_iter()
        .map(|m| m.span)
        .filter(|s| s.end <= at)
        .map(|s| s.end - chrono::Duration::seconds(1))
        .max();
    if named.is_some() {
        return Some(named);
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let cued = has(PAST_CUES) || (has(PAST_CUES_WITH_A_PAST_VERB) && has(PAST_VERBS));
    cued.then_some(None)
}

/// The closed facts of `user` relevant to `text` asked at `at`, best first, at most `k`:
/// those that held at the end of the past period `text` names, else any closed version,
/// each with [`valid_to`](MemoryFact::valid_to) set to when it stopped holding. Empty
/// when `text` is not about the past.
pub async fn past_facts(
    store: &dyn UserMemoryStore,
    user: &str,
    text: &str,
    at: DateTime<Utc>,
    k: usize,
) -> Result<Vec<ScoredFact>> {
    let Some(period_end) = asks_about_the_past(text, at) else {
        return Ok(Vec::new());
    };
    if k == 0 {
        return Ok(Vec::new());
    }
    let closed: Vec<MemoryFact> = match period_end {
        Some(end) => store
            .facts_as_of(user, end)
            .await?
            .into_iter()
            .filter(|f| f.valid_to.is_some())
            .collect(),
        None => store
            .versions(user)
            .await?
            .into_iter()
            .filter(|f| !f.is_current() && f.polarity == super::Polarity::Positive)
            .map(|mut f| {
                f.valid_to.get_or_insert(f.valid_from());
                f
            })
            .collect(),
    };
    // Ranked as current facts would be (the index keeps current ones only): the link to
    // the successor is kept aside and restored.
    let mut links = std::collections::HashMap::new();
    let unlinked: Vec<MemoryFact> = closed
        .into_iter()
        .map(|mut f| {
            links.insert(f.id.clone(), (f.superseded_by.take(), f.valid_to));
            f
        })
        .collect();
    let policy = FactPolicy {
        min_confidence: 0.0,
        ..FactPolicy::default()
    };
    let ranked = super::semantic::rank_facts(unlinked, &FactQuery::new(text, k), policy, at);
    Ok(ranked
        .into_iter()
        .filter(|s| s.relevance > 0.0)
        .map(|mut s| {
            if let Some((next, end)) = links.remove(&s.fact.id) {
                s.fact.superseded_by = next;
                s.fact.valid_to = end;
            }
            s
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::facts::{FactCandidate, InMemoryUserMemoryStore};

    #[tokio::test]
    async fn a_question_about_the_past_recalls_the_closed_fact_with_its_interval() {
        let store = InMemoryUserMemoryStore::new();
        let t = |y, m| Utc.with_ymd_and_hms(y, m, 5, 9, 0, 0).unwrap();
        let had = FactCandidate::new("has a greyhound named Biscuit", 0.9)
            .with_attribute("pet", "greyhound Biscuit")
            .said_at(t(2023, 3));
        store.upsert("u", had).await.unwrap();
        let died = FactCandidate::new("has a greyhound named Biscuit", 0.9)
            .with_attribute("pet", "greyhound Biscuit")
            .with_polarity(crate::facts::Polarity::Negative)
            .said_at(t(2025, 11));
        store.upsert("u", died).await.unwrap();
        let now = t(2026, 2);
        let found = past_facts(&store, "u", "did I have a greyhound in 2024?", now, 3)
            .await
            .unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].fact.valid_to, Some(t(2025, 11)));
        // Not a question about the past: nothing.
        let none = past_facts(&store, "u", "any tips for a greyhound?", now, 3)
            .await
            .unwrap();
        assert!(none.is_empty());
        // A statement is no question, whatever its tense.
        let told = past_facts(&store, "u", "I had a greyhound once, he was lovely", now, 3)
            .await
            .unwrap();
        assert!(told.is_empty());
        assert!(asks_about_the_past("where did I live before York", now).is_some());
        assert!(asks_about_the_past("what was my old job?", now).is_some());
        assert!(
            asks_about_the_past("where do I work now, and where did I used to?", now).is_some()
        );
        // A request about what is ahead is no question about the past.
        assert!(asks_about_the_past("can you remind me to call Sam before Monday?", now).is_none());
        assert!(asks_about_the_past("is the old bridge open this weekend?", now).is_none());
    }
}
