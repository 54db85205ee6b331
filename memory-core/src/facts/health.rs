//! Health and safety facts reach every turn that needs them: a message about food,
//! drink, medicine, travel or exercise recalls the user's allergies, conditions,
//! medications and diets even when it shares no word with them ("Fancy a pizza?" and
//! "I'm coeliac").
//!
//! The [concept map](crate::concept_map) says which domains a message touches and the
//! words the disclosures that matter there are phrased with; the fact search is asked for
//! those words, and a fact found is kept when it is a health fact or holds one of them
//! (a fear of flying for a trip).

use super::{MemoryFact, ScoredFact, UserMemoryStore};
use crate::error::Result;

/// The relevance a health fact recalled through the concept map is given: enough to
/// pass the block's floor, below a fact that shares the message's words.
pub const HEALTH_RELEVANCE: f32 = 0.35;

/// The domains `text` touches (`"food"`, `"drink"`, `"travel"`, `"exercise"`,
/// `"medicine"`, …): [`concept_map::domains`](crate::concept_map::domains).
///
/// ```
/// use agentmemory_core::facts::health_domains;
/// assert_eq!(health_domains("Can I have a regular pizza base?"), ["food"]);
/// assert!(health_domains("What's the capital of Peru?").is_empty());
/// ```
pub fn health_domains(text: &str) -> Vec<&'static str> {
    crate::concept_map::domains(text)
}

/// Whether `fact` is about the user's health: tagged so by the rules, or an allergy,
/// intolerance, condition, medication or diet.
pub fn is_health_fact(fact: &MemoryFact) -> bool {
    fact.subject.is_none()
        && (fact.topics.iter().any(|t| t == "health")
            || matches!(
                fact.attribute.as_deref(),
                Some("allergy" | "intolerance" | "condition" | "medication" | "diet" | "health")
            ))
}

/// The user's health facts, for a message that touches a domain where they matter
/// (empty otherwise), at most `k`, each with at least [`HEALTH_RELEVANCE`].
pub async fn health_facts_for(
    store: &dyn UserMemoryStore,
    user: &str,
    text: &str,
    k: usize,
) -> Result<Vec<ScoredFact>> {
    let Some(concerns) = crate::concept_map::Concerns::of(text).filter(|_| k > 0) else {
        return Ok(Vec::new());
    };
    let keep = |s: &ScoredFact| {
        s.relevance > 0.0 && (is_health_fact(&s.fact) || concerns.held_by(&s.fact.text))
    };
    let mut found: Vec<ScoredFact> = store
        .search(user, &concerns.query(), k * 3)
        .await?
        .into_iter()
        .filter(|s| keep(s))
        .take(k)
        .collect();
    if found.len() < k {
        // Then any health fact, by the words every one is phrased with: "takes
        // warfarin" matters to a kickboxing class though the map names no medicine.
        let words: Vec<&str> = crate::extract::health_words().collect();
        for s in store.search(user, &words.join(" "), k * 3).await? {
            if found.len() == k {
                break;
            }
            if is_health_fact(&s.fact) && !found.iter().any(|f| f.fact.id == s.fact.id) {
                found.push(s);
            }
        }
    }
    Ok(found
        .into_iter()
        .map(|mut s| {
            s.relevance = s.relevance.max(HEALTH_RELEVANCE);
            s
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{FactExtractor, RuleExtractor, Turn};
    use crate::facts::InMemoryUserMemoryStore;
    use crate::message::Message;

    /// A store holding what the rules read in `said` and one unrelated fact, `other`.
    async fn told(said: &str, other: &str) -> InMemoryUserMemoryStore {
        let store = InMemoryUserMemoryStore::new();
        let said = Message::user(said);
        let turn = Turn {
            user: &said,
            assistant: None,
        };
        for c in RuleExtractor::new().extract(turn).await.unwrap() {
            store.upsert("u", c).await.unwrap();
        }
        let other = crate::facts::FactCandidate::new(other, 0.9);
        store.upsert("u", other).await.unwrap();
        store
    }

    #[tokio::test]
    async fn a_health_fact_no_concern_word_names_is_recalled_for_its_domain() {
        // Written for this test (2026-12-07): the exercise domain names no medicine.
        let store = told(
            "they've put me on methotrexate for my joints, weekly jabs",
            "takes the train to work",
        )
        .await;
        let found = health_facts_for(
            &store,
            "u",
            "thinking of signing up for a half marathon, good idea?",
            3,
        )
        .await
        .unwrap();
        let texts: Vec<&str> = found.iter().map(|s| s.fact.text.as_str()).collect();
        assert_eq!(texts, ["takes methotrexate"]);
        let none = health_facts_for(&store, "u", "what's the capital of Peru?", 3)
            .await
            .unwrap();
        assert!(none.is_empty());
    }

    #[tokio::test]
    async fn a_food_question_recalls_a_health_fact_that_shares_no_word_with_it() {
        let store = told(
            "I was diagnosed with coeliac disease last spring, it's been a lot to adjust to",
            "likes jazz",
        )
        .await;
        let found = health_facts_for(&store, "u", "Is a regular pizza base ok for me?", 3)
            .await
            .unwrap();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].fact.text.contains("coeliac"));
        let none = health_facts_for(&store, "u", "What's a good jazz album?", 3)
            .await
            .unwrap();
        assert!(none.is_empty());
    }
}
