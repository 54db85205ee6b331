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

/// How many health facts a request for advice recalls when it touches no domain of the
/// [concept map](crate::concept_map).
const ADVICE_HEALTH_FACTS: usize = 2;

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
    if k == 0 {
        return Ok(Vec::new());
    }
    let mut found: Vec<ScoredFact> = Vec::new();
    let k = match crate::concept_map::Concerns::of(text) {
        Some(concerns) => {
            let keep = |s: &ScoredFact| {
                s.relevance > 0.0 && (is_health_fact(&s.fact) || concerns.held_by(&s.fact.text))
            };
            // By words: the message itself is searched by meaning already, and a turn
            // embeds once.
            let query = super::FactQuery::new(concerns.query(), k * 3).by_words_only();
            found = store
                .search_query(user, &query)
                .await?
                .into_iter()
                .filter(|s| keep(s))
                .take(k)
                .collect();
            k
        }
        // A request for advice or a plan the map has no domain for ("my mates got
        // tickets to a rave, should I go?"): a few health facts, since a good answer
        // keeps them in mind whatever the topic.
        None if crate::concept_map::asks_advice(text) => k.min(ADVICE_HEALTH_FACTS),
        None => return Ok(Vec::new()),
    };
    if found.len() < k {
        // Then any health fact, by the words every one is phrased with: "takes
        // warfarin" matters to a kickboxing class though the map names no medicine.
        let words: Vec<&str> = crate::extract::health_words().collect();
        let query = super::FactQuery::new(words.join(" "), k * 3).by_words_only();
        for s in store.search_query(user, &query).await? {
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
        // A question of fact asks no advice: nothing. (A request for a recommendation,
        // "what's a good jazz album?", recalls up to two: see `asks_advice`.)
        let none = health_facts_for(&store, "u", "Who recorded Kind of Blue?", 3)
            .await
            .unwrap();
        assert!(none.is_empty());
    }

    #[tokio::test]
    async fn a_request_for_advice_in_no_domain_recalls_a_few_health_facts() {
        // Written for this test (2026-12-07): no domain of the map names a quiz night.
        let store = told("i have epilepsy, well controlled these days", "likes jazz").await;
        let asked = |text: &'static str| {
            let store = &store;
            async move {
                health_facts_for(store, "u", text, 5)
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|s| s.fact.text)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(
            asked("a quiz night with flashing disco lights, should I go?").await,
            ["has epilepsy"]
        );
        assert!(asked("Tell me about the history of disco.")
            .await
            .is_empty());
    }
}
