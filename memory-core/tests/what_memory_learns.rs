//! Every example of issue 15 ("what memory learns and keeps") and the notes rule of
//! issue 14, end to end through the `RuleExtractor` and an `InMemoryUserMemoryStore`.

use agentmemory_core::extract::RuleExtractor;
use agentmemory_core::facts::{
    FactChange, InMemoryUserMemoryStore, MemoryFact, Polarity, UserMemoryStore,
};

/// Says each message in turn; returns the changes of the last one and the current facts.
async fn say(messages: &[&str]) -> (Vec<FactChange>, Vec<MemoryFact>) {
    let store = InMemoryUserMemoryStore::new();
    let extractor = RuleExtractor::new();
    let mut last = Vec::new();
    for m in messages {
        last.clear();
        for c in extractor.extract_text(m) {
            last.push(store.upsert("u", c).await.expect("upsert"));
        }
    }
    (last, store.list("u").await.expect("list"))
}

fn has(facts: &[MemoryFact], attribute: &str, value: &str, polarity: Polarity) -> bool {
    facts.iter().any(|f| {
        f.attribute.as_deref() == Some(attribute)
            && f.value
                .as_deref()
                .is_some_and(|v| v.eq_ignore_ascii_case(value))
            && f.polarity == polarity
    })
}

fn values(facts: &[MemoryFact], attribute: &str) -> Vec<String> {
    facts
        .iter()
        .filter(|f| f.attribute.as_deref() == Some(attribute))
        .map(|f| f.value.clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn eating_fish_again_ends_a_vegan_diet() {
    let (_, facts) = say(&["I'm a vegan", "I eat fish again these days"]).await;
    assert!(
        !has(&facts, "diet", "vegan", Polarity::Positive),
        "{facts:?}"
    );
    assert!(has(&facts, "diet", "fish", Polarity::Positive), "{facts:?}");
}

#[tokio::test]
async fn a_new_job_replaces_the_employer() {
    let (_, facts) = say(&["I work for Siemens", "I started a new job at Bosch"]).await;
    assert_eq!(values(&facts, "employer"), vec!["Bosch"]);
}

#[tokio::test]
async fn quitting_ends_the_employer_and_keeps_it_as_history() {
    let (changes, facts) = say(&["I work for Siemens", "I quit Siemens"]).await;
    assert!(!has(&facts, "employer", "Siemens", Polarity::Positive));
    assert!(has(&facts, "employer", "Siemens", Polarity::Negative));
    let FactChange::Superseded { old, new } = &changes[0] else {
        panic!("{changes:?}");
    };
    assert_eq!(old.superseded_by.as_deref(), Some(new.id.as_str()));
    assert_eq!(new.text, "no longer works at Siemens");
}

#[tokio::test]
async fn not_living_somewhere_any_more_ends_the_location() {
    let (_, facts) = say(&["I live in Lyon", "I don't live in Lyon any more"]).await;
    assert!(
        !has(&facts, "location", "Lyon", Polarity::Positive),
        "{facts:?}"
    );
}

#[tokio::test]
async fn actually_corrects_the_favourite() {
    let (_, facts) = say(&["My favourite food is sushi", "actually it's ramen"]).await;
    assert_eq!(values(&facts, "favourite food"), vec!["ramen"], "{facts:?}");
}

#[tokio::test]
async fn a_nationality_never_replaces_a_name() {
    let (_, facts) = say(&["My name is Maria", "I'm Danish"]).await;
    assert_eq!(values(&facts, "name"), vec!["Maria"]);
    assert!(has(&facts, "origin", "Danish", Polarity::Positive));
}

#[tokio::test]
async fn a_weak_name_contradiction_is_pending_not_a_replacement() {
    let (changes, facts) = say(&["My name is Maria", "I'm Marta"]).await;
    assert_eq!(values(&facts, "name"), vec!["Maria"]);
    assert!(
        matches!(&changes[..], [FactChange::Contested { fact, candidate }]
            if fact.value.as_deref() == Some("Maria") && candidate.value.as_deref() == Some("Marta")),
        "{changes:?}"
    );
    let (_, facts) = say(&["My name is Maria", "Actually my name is Marta"]).await;
    assert_eq!(values(&facts, "name"), vec!["Marta"]);
}

#[tokio::test]
async fn a_weak_name_is_recorded_on_the_name_it_contests() {
    let (_, facts) = say(&["My name is Maria", "I'm Marta"]).await;
    let pending = &facts[0].pending_contradictions;
    assert_eq!(pending.len(), 1, "the doubt is kept on the fact: {facts:?}");
    assert_eq!(pending[0].value.as_deref(), Some("Marta"));
}

#[tokio::test]
async fn a_weak_name_said_twice_supersedes_and_restating_clears_the_doubt() {
    let (changes, facts) = say(&["My name is Maria", "I'm Marta", "I'm Marta"]).await;
    assert_eq!(values(&facts, "name"), vec!["Marta"], "{changes:?}");
    assert!(
        matches!(&changes[..], [FactChange::Superseded { old, .. }] if old.value.as_deref() == Some("Maria")),
        "{changes:?}"
    );
    let (changes, facts) = say(&[
        "My name is Maria",
        "I'm Marta",
        "My name is Maria",
        "I'm Marta",
    ])
    .await;
    assert_eq!(values(&facts, "name"), vec!["Maria"], "{changes:?}");
    assert_eq!(facts[0].pending_contradictions.len(), 1, "{facts:?}");
    assert!(
        matches!(&changes[..], [FactChange::Contested { .. }]),
        "{changes:?}"
    );
}

#[tokio::test]
async fn a_nationality_said_twice_is_never_a_name_nor_a_doubt_about_it() {
    let (changes, facts) = say(&["My name is Maria", "I'm Danish", "I'm Danish"]).await;
    assert_eq!(values(&facts, "name"), vec!["Maria"], "{changes:?}");
    assert!(
        facts.iter().all(|f| f.pending_contradictions.is_empty()),
        "{facts:?}"
    );
    assert!(has(&facts, "origin", "Danish", Polarity::Positive));
}

#[tokio::test]
async fn two_dogs_named_rex_and_bella_are_two_facts() {
    let (_, facts) = say(&["I have two dogs named Rex and Bella"]).await;
    let mut pets = values(&facts, "pet");
    pets.sort();
    assert_eq!(pets, vec!["dog Bella", "dog Rex"]);
}

#[tokio::test]
async fn plans_learning_and_routines_are_kept() {
    let (_, facts) = say(&["I'm planning a trip to Peru in May"]).await;
    assert_eq!(values(&facts, "plan"), vec!["trip to Peru in May"]);
    let (_, facts) = say(&["I'm taking guitar lessons"]).await;
    assert_eq!(values(&facts, "learning"), vec!["guitar"]);
    let (_, facts) = say(&["I always swim on Sunday mornings"]).await;
    assert_eq!(values(&facts, "routine"), vec!["swim on Sunday mornings"]);
}

#[tokio::test]
async fn my_husband_is_a_chef_is_about_the_husband() {
    let (_, facts) = say(&["My husband is a chef"]).await;
    assert_eq!(values(&facts, "family"), vec!["husband chef"]);
    assert!(values(&facts, "job").is_empty(), "{facts:?}");
}

#[tokio::test]
async fn paraphrases_of_one_like_are_one_fact() {
    let (_, facts) = say(&[
        "I love hiking",
        "Hiking is my favourite thing to do",
        "I really enjoy going hiking",
    ])
    .await;
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(facts[0].reinforcement_count, 2);
}

#[tokio::test]
async fn jokes_set_phrases_instructions_and_compliments_store_nothing() {
    for text in [
        "I'm allergic to Mondays lol",
        "call me maybe",
        "I'm vegetarian, just kidding",
        "Translate: I love cheese",
        "I love the way you write",
    ] {
        let (_, facts) = say(&[text]).await;
        assert!(facts.is_empty(), "{text}: {facts:?}");
    }
}

#[tokio::test]
async fn unparsed_first_person_statements_become_searchable_notes() {
    for (text, note) in [
        ("I ride a motorbike to work", "rides a motorbike to work"),
        ("I keep bees in my garden", "keeps bees in their garden"),
    ] {
        let (_, facts) = say(&[text]).await;
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].attribute.as_deref(), Some("note"));
        assert_eq!(facts[0].text, note);
        assert!(facts[0].confidence <= 0.5);
    }
    let store = InMemoryUserMemoryStore::new();
    for c in RuleExtractor::new().extract_text("I ride a motorbike to work") {
        store.upsert("u", c).await.unwrap();
    }
    let hits = store.search("u", "motorbike commute", 3).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].relevance > 0.0);
}

#[test]
fn junk_stores_nothing() {
    let junk = [
        "hi",
        "hello there!",
        "thanks so much 🙏",
        "ok",
        "lol",
        "haha that's hilarious",
        "what's the weather like today?",
        "can you help me plan a trip?",
        "Do you like jazz?",
        "where do i live?",
        "Write a poem about autumn",
        "Translate: I love cheese",
        "Summarize this article for me please",
        "tell me a joke",
        "I love the way you write",
        "you're the best, thank you",
        "I really like your answers",
        "I'm allergic to Mondays lol",
        "call me maybe",
        "I'm vegetarian, just kidding",
        "I live on the moon jk",
        "If I lived in Paris I would visit the Louvre.",
        "Imagine I had a dog named Rex.",
        "I would like a coffee, please.",
        "I wish I could fly",
        "I think it might rain later",
        "my friend loves jazz",
        "My boss lives in Rome.",
        "She rides a horse to school",
        "They keep chickens in the yard",
        "I just got back from the shops",
        "I need help with my resume",
        "I'm so tired today",
        "I'm looking for a good laptop",
        "I have a question",
        "I guess so",
        "I see what you mean",
        "I'd love to know more about black holes",
    ];
    assert!(junk.len() >= 30);
    let x = RuleExtractor::new();
    for text in junk {
        // What is said of a friend or a boss is theirs (issue 24): never the user's.
        let facts: Vec<_> = x
            .extract_text(text)
            .into_iter()
            .filter(|c| c.subject.is_none())
            .collect();
        assert!(facts.is_empty(), "{text:?} stored {facts:?}");
    }
}
