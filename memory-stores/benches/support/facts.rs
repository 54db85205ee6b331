//! A user's many facts for the fact benches: distinct texts over a few dozen topics,
//! stated over the past year (so decay orders them), written with `import_records`.

use agentmemory_core::facts::{FactCandidate, MemoryFact};
use chrono::{Duration, Utc};

const TOPICS: &[&str] = &[
    "jazz",
    "hiking",
    "museums",
    "sushi",
    "chess",
    "cycling",
    "opera",
    "gardening",
    "poetry",
    "climbing",
    "tennis",
    "baking",
    "photography",
    "sailing",
    "astronomy",
    "pottery",
    "knitting",
    "surfing",
    "running",
    "painting",
    "Lisbon",
    "Kyoto",
    "Porto",
    "Oslo",
    "ramen",
    "tapas",
    "violin",
    "rowing",
    "birdwatching",
    "crosswords",
];
const FORMS: &[&str] = &[
    "likes {} (note {})",
    "went to a {} event in week {}",
    "wants to learn more about {}, idea {}",
    "talked about {} with a friend, day {}",
];

/// `n` current facts of `user`, each a different statement.
pub fn facts(user: &str, n: usize) -> Vec<MemoryFact> {
    let now = Utc::now();
    (0..n)
        .map(|i| {
            let topic = TOPICS[i % TOPICS.len()];
            let form = FORMS[(i / TOPICS.len()) % FORMS.len()];
            let text = form
                .replacen("{}", topic, 1)
                .replacen("{}", &i.to_string(), 1);
            let confidence = 0.5 + (i % 50) as f32 / 100.0;
            let at = now - Duration::minutes((i * 53 % 525_600) as i64);
            MemoryFact::from_candidate(user, FactCandidate::new(text, confidence), at)
        })
        .collect()
}

/// Questions a user might ask, varied so no single posting list dominates.
pub const QUERIES: &[&str] = &[
    "does she like jazz or sailing?",
    "any plans for the weekend?",
    "what about Kyoto",
    "recommend a concert tonight",
    "which sports do I do",
    "tell me about my hobbies and painting",
];
