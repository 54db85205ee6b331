//! Health and safety facts reach every turn that needs them: a message about food,
//! drink, medicine, travel or exercise recalls the user's allergies, conditions,
//! medications and diets even when it shares no word with them ("Fancy a pizza?" and
//! "I'm coeliac").
//!
//! A small concept map (English, data): the words of each domain, and the words health
//! facts are phrased with, which the fact search is asked for when a message touches a
//! domain.

use super::{MemoryFact, ScoredFact, UserMemoryStore};
use crate::error::Result;

/// Words of the domains where health facts matter, one row per domain.
const DOMAINS: &[(&str, &[&str])] = &[
    (
        "food",
        &[
            "eat",
            "eating",
            "ate",
            "food",
            "dinner",
            "lunch",
            "breakfast",
            "brunch",
            "supper",
            "meal",
            "meals",
            "snack",
            "snacks",
            "restaurant",
            "takeaway",
            "menu",
            "dish",
            "recipe",
            "cook",
            "cooking",
            "bake",
            "baking",
            "pizza",
            "pasta",
            "bread",
            "cake",
            "cakes",
            "biscuits",
            "cookies",
            "curry",
            "sushi",
            "burger",
            "sandwich",
            "salad",
            "dessert",
            "pudding",
            "chocolate",
            "nuts",
            "cheese",
            "hummus",
            "noodles",
            "soup",
            "bbq",
            "barbecue",
            "picnic",
            "buffet",
            "kebab",
            "tacos",
            "pie",
            "stew",
        ],
    ),
    (
        "drink",
        &[
            "drink",
            "drinks",
            "coffee",
            "latte",
            "tea",
            "beer",
            "wine",
            "cocktail",
            "cocktails",
            "pub",
            "bar",
            "pint",
            "juice",
            "smoothie",
            "milkshake",
            "prosecco",
        ],
    ),
    (
        "medicine",
        &[
            "medicine",
            "medication",
            "tablet",
            "tablets",
            "pill",
            "pills",
            "painkiller",
            "painkillers",
            "ibuprofen",
            "paracetamol",
            "aspirin",
            "antibiotics",
            "doctor",
            "gp",
            "pharmacy",
            "prescription",
            "vaccine",
            "jab",
            "headache",
            "cold",
            "flu",
            "dentist",
            "surgery",
            "anaesthetic",
        ],
    ),
    (
        "travel",
        &[
            "flight",
            "flights",
            "fly",
            "flying",
            "trip",
            "holiday",
            "holidays",
            "vacation",
            "travel",
            "travelling",
            "traveling",
            "abroad",
            "hotel",
            "airport",
            "cruise",
            "camping",
            "backpacking",
            "festival",
        ],
    ),
    (
        "exercise",
        &[
            "run", "running", "jog", "gym", "workout", "marathon", "swim", "swimming", "cycling",
            "cycle", "hike", "hiking", "yoga", "training", "sport", "football", "tennis",
            "climbing", "race",
        ],
    ),
];

/// The words health facts are phrased with: what the fact search is asked for.
const HEALTH_WORDS: &str = "allergic allergy allergies intolerant intolerance coeliac celiac \
     diabetes diabetic insulin asthma asthmatic epilepsy epileptic condition medication takes \
     vegan vegetarian pescatarian halal kosher gluten lactose dairy nut peanut shellfish \
     pregnant migraines heart blood pressure crohn";

/// The relevance a health fact recalled through the concept map is given: enough to
/// pass the block's floor, below a fact that shares the message's words.
pub const HEALTH_RELEVANCE: f32 = 0.35;

/// The domains `text` touches (`"food"`, `"drink"`, `"medicine"`, `"travel"`,
/// `"exercise"`).
///
/// ```
/// use agentmemory_core::facts::health_domains;
/// assert_eq!(health_domains("Can I have a regular pizza base?"), ["food"]);
/// assert!(health_domains("What's the capital of Peru?").is_empty());
/// ```
pub fn health_domains(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    DOMAINS
        .iter()
        .filter(|(_, row)| row.iter().any(|w| words.contains(w)))
        .map(|(name, _)| *name)
        .collect()
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
    if k == 0 || health_domains(text).is_empty() {
        return Ok(Vec::new());
    }
    let found = store.search(user, HEALTH_WORDS, k * 3).await?;
    Ok(found
        .into_iter()
        .filter(|s| is_health_fact(&s.fact) && s.relevance > 0.0)
        .take(k)
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

    #[tokio::test]
    async fn a_food_question_recalls_a_health_fact_that_shares_no_word_with_it() {
        let store = InMemoryUserMemoryStore::new();
        let said = Message::user(
            "I was diagnosed with coeliac disease last spring, it's been a lot to adjust to",
        );
        for c in RuleExtractor::new()
            .extract(Turn {
                user: &said,
                assistant: None,
            })
            .await
            .unwrap()
        {
            store.upsert("u", c).await.unwrap();
        }
        store
            .upsert("u", crate::facts::FactCandidate::new("likes jazz", 0.9))
            .await
            .unwrap();
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
