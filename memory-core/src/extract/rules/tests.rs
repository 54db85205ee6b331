//! Unit tests of the rules, family by family.

use super::RuleExtractor;
use crate::facts::Polarity;

/// (attribute, value, polarity) of every fact in `text`.
fn facts(text: &str) -> Vec<(String, String, Polarity)> {
    RuleExtractor::new()
        .extract_text(text)
        .into_iter()
        .map(|c| {
            (
                c.attribute.unwrap_or_default(),
                c.value.unwrap_or_default(),
                c.polarity,
            )
        })
        .collect()
}

/// The facts of `text` about the user (none about other people).
fn own(text: &str) -> Vec<(String, String, Polarity)> {
    RuleExtractor::new()
        .extract_text(text)
        .into_iter()
        .filter(|c| c.subject.is_none())
        .map(|c| {
            (
                c.attribute.unwrap_or_default(),
                c.value.unwrap_or_default(),
                c.polarity,
            )
        })
        .collect()
}

/// (subject, text) of every fact of `text` about someone else.
fn others(text: &str) -> Vec<(String, String)> {
    RuleExtractor::new()
        .extract_text(text)
        .into_iter()
        .filter_map(|c| Some((c.subject?, c.text)))
        .collect()
}

fn one(text: &str) -> (String, String, Polarity) {
    let mut f = facts(text);
    assert_eq!(f.len(), 1, "{text:?} gave {f:?}");
    f.remove(0)
}

fn pos(attribute: &str, value: &str) -> (String, String, Polarity) {
    (attribute.into(), value.into(), Polarity::Positive)
}

fn neg(attribute: &str, value: &str) -> (String, String, Polarity) {
    (attribute.into(), value.into(), Polarity::Negative)
}

#[test]
fn names() {
    assert_eq!(one("My name is David Chen."), pos("name", "David Chen"));
    assert_eq!(one("Call me Sam"), pos("name", "Sam"));
    assert_eq!(one("I'm Alice."), pos("name", "Alice"));
    assert_eq!(one("my name's alice"), pos("name", "alice"));
    for state in [
        "I'm tired.",
        "I'm happy",
        "I'm sorry",
        "I'm fine",
        "I'm looking",
        "I'm Tired",
    ] {
        assert!(facts(state).is_empty(), "{state}");
    }
}

#[test]
fn places() {
    assert_eq!(one("I live in Berlin."), pos("location", "Berlin"));
    assert_eq!(
        one("I moved to Lisbon last year"),
        pos("location", "Lisbon")
    );
    assert_eq!(
        one("I'm currently based in Toronto"),
        pos("location", "Toronto")
    );
    assert_eq!(one("I grew up in Ohio"), pos("origin", "Ohio"));
    assert_eq!(one("I'm originally from Kenya"), pos("origin", "Kenya"));
    assert_eq!(
        one("I was born on 12 May 1990"),
        pos("birthday", "12 May 1990")
    );
}

#[test]
fn work() {
    assert_eq!(one("I'm a nurse"), pos("job", "nurse"));
    assert_eq!(one("I work as a data analyst"), pos("job", "data analyst"));
    assert_eq!(one("I work at Acme Corp."), pos("employer", "Acme Corp"));
    assert_eq!(
        facts("I'm a software engineer at Google"),
        vec![pos("job", "software engineer"), pos("employer", "Google")]
    );
    assert!(facts("I'm a bit tired").is_empty());
    assert!(facts("I'm a big fan of").is_empty());
}

#[test]
fn likes_and_dislikes() {
    assert_eq!(
        one("I love Italian food very much"),
        pos("likes", "Italian food")
    );
    assert_eq!(
        one("I'm really into rock climbing"),
        pos("likes", "rock climbing")
    );
    assert_eq!(one("I'm a huge fan of jazz"), pos("likes", "jazz"));
    assert_eq!(one("I can't stand cilantro"), neg("likes", "cilantro"));
    assert_eq!(
        one("I hate waking up early"),
        neg("likes", "waking up early")
    );
    assert_eq!(
        facts("I enjoy painting and playing the piano"),
        vec![pos("likes", "painting"), pos("likes", "playing the piano")]
    );
    let text = RuleExtractor::new().extract_text("I love museums");
    assert_eq!(text[0].text, "likes museums");
}

#[test]
fn negation_is_respected() {
    assert_eq!(
        one("I don't like horror movies"),
        neg("likes", "horror movies")
    );
    assert_eq!(
        one("I do not enjoy long meetings"),
        neg("likes", "long meetings")
    );
    assert_eq!(one("I never liked olives"), neg("likes", "olives"));
    assert_eq!(
        one("I've never liked spicy food"),
        neg("likes", "spicy food")
    );
    assert_eq!(
        one("I'm not a fan of country music"),
        neg("likes", "country music")
    );
    assert_eq!(one("I don't eat pork"), neg("diet", "pork"));
    // A change of state states the fact that ended, negated.
    assert_eq!(one("I no longer live in Paris"), neg("location", "Paris"));
    assert_eq!(
        one("I don't live in London anymore"),
        neg("location", "London")
    );
    assert_eq!(
        one("I don't work at Google anymore"),
        neg("employer", "Google")
    );
    assert_eq!(one("I used to live in Madrid"), neg("location", "Madrid"));
    for text in [
        "I'm not allergic to anything",
        "I don't speak German",
        "I don't have any pets",
        "I don't hate jazz",
        "I'm not vegetarian",
    ] {
        assert!(facts(text).is_empty(), "{text}: {:?}", facts(text));
    }
}

#[test]
fn allergy_and_diet() {
    assert_eq!(
        facts("I am allergic to shellfish and penicillin."),
        vec![neg("allergy", "shellfish"), neg("allergy", "penicillin")]
    );
    assert_eq!(
        one("I have a severe allergy to cats"),
        neg("allergy", "cats")
    );
    assert_eq!(one("I have a peanut allergy"), neg("allergy", "peanut"));
    assert_eq!(one("I'm vegetarian"), pos("diet", "vegetarian"));
    assert_eq!(one("I've been vegan for three years"), pos("diet", "vegan"));
    assert_eq!(one("I'm lactose intolerant"), neg("diet", "lactose"));
    assert_eq!(
        facts("I'm vegan and allergic to soy"),
        vec![pos("diet", "vegan"), neg("allergy", "soy")]
    );
}

#[test]
fn family_and_pets() {
    assert_eq!(one("My wife is called Sarah"), pos("family", "wife Sarah"));
    assert_eq!(one("My son's name is Leo"), pos("family", "son Leo"));
    assert_eq!(one("I have two kids"), pos("family", "two kids"));
    assert_eq!(
        one("I have a daughter named Emma"),
        pos("family", "daughter Emma")
    );
    assert_eq!(one("I have a dog named Max"), pos("pet", "dog Max"));
    assert_eq!(one("I've got two cats"), pos("pet", "two cats"));
    assert_eq!(
        facts("My husband Tom is a chef"),
        vec![pos("family", "husband Tom"), pos("family", "husband chef")]
    );
    assert!(own("Our neighbour has a dog named Rocky").is_empty());
    assert_eq!(
        others("Our neighbour has a dog named Rocky"),
        vec![(
            "neighbour".to_owned(),
            "neighbour has a dog named Rocky".to_owned()
        )]
    );
}

#[test]
fn age_birthday_language_goal() {
    assert_eq!(one("I'm 34."), pos("age", "34"));
    assert_eq!(one("I am 27 years old"), pos("age", "27"));
    assert_eq!(one("I just turned 40"), pos("age", "40"));
    assert!(facts("I'm 5 minutes late").is_empty());
    assert_eq!(
        one("My birthday is on March 3rd"),
        pos("birthday", "March 3rd")
    );
    assert_eq!(
        facts("I speak Spanish and French"),
        vec![pos("language", "Spanish"), pos("language", "French")]
    );
    assert_eq!(one("I'm fluent in Japanese"), pos("language", "Japanese"));
    assert_eq!(
        one("I want to run a marathon"),
        pos("goal", "run a marathon")
    );
    assert_eq!(
        one("My goal is to lose ten pounds"),
        pos("goal", "lose ten pounds")
    );
    assert_eq!(
        one("I'm training for a half marathon"),
        pos("goal", "a half marathon")
    );
    assert!(facts("I want to know how tides work").is_empty());
}

#[test]
fn other_people_are_not_the_user() {
    for text in [
        "My friend likes jazz.",
        "My boss lives in Rome.",
        "She loves cats.",
        "John is allergic to nuts.",
        "My daughter loves horses.",
        "My wife is vegetarian.",
        "His name is Mark.",
        "They hate spicy food.",
    ] {
        assert!(own(text).is_empty(), "{text}: {:?}", own(text));
    }
    // What is said of a named relation is theirs, and says so.
    assert_eq!(
        others("My friend likes jazz."),
        vec![("friend".to_owned(), "friend likes jazz".to_owned())]
    );
    assert_eq!(
        others("My wife is vegetarian."),
        vec![("wife".to_owned(), "wife is vegetarian".to_owned())]
    );
    assert_eq!(
        others("my daughter Zoe started school yesterday"),
        vec![(
            "daughter Zoe".to_owned(),
            "daughter Zoe started school".to_owned()
        )]
    );
    for text in [
        "She loves cats.",
        "John is allergic to nuts.",
        "They hate spicy food.",
    ] {
        assert!(facts(text).is_empty(), "{text}: {:?}", facts(text));
    }
    assert_eq!(
        own("My daughter is called Emma and she loves horses."),
        vec![pos("family", "daughter Emma")]
    );
}

#[test]
fn questions_pleasantries_and_hypotheticals_say_nothing() {
    for text in [
        "Do you like jazz?",
        "Where do I live?",
        "I love jazz, do you?",
        "thanks!",
        "hello",
        "ok",
        "If I lived in Paris I would visit the Louvre.",
        "I would like a coffee, please.",
        "I'd love to know more about black holes.",
        "Imagine I had a dog named Rex.",
        "do you like jazz",
    ] {
        assert!(facts(text).is_empty(), "{text}: {:?}", facts(text));
    }
}

#[test]
fn multi_clause_utterances() {
    assert_eq!(
        facts("Hi, I'm Alice and I love museums"),
        vec![pos("name", "Alice"), pos("likes", "museums")]
    );
    assert_eq!(
        facts("I love sushi but I hate wasabi"),
        vec![pos("likes", "sushi"), neg("likes", "wasabi")]
    );
    assert_eq!(
        facts("I'm from Spain but I live in Berlin now."),
        vec![pos("origin", "Spain"), pos("location", "Berlin")]
    );
}

#[test]
fn candidates_carry_text_confidence_and_are_deterministic() {
    let x = RuleExtractor::new();
    let a = x.extract_text("I'm allergic to peanuts. I live in Berlin.");
    assert_eq!(
        a,
        x.extract_text("I'm allergic to peanuts. I live in Berlin.")
    );
    assert_eq!(a[0].text, "is allergic to peanuts");
    assert_eq!(a[1].text, "lives in Berlin");
    for c in &a {
        assert!((0.5..=0.95).contains(&c.confidence));
    }
    assert!(a[0].confidence > x.extract_text("I'm into jazz")[0].confidence);
}

#[tokio::test]
async fn the_trait_sets_the_message_id() {
    use crate::extract::{FactExtractor, Turn};
    use crate::message::Message;
    let msg = Message::user("I live in Oslo");
    let out = RuleExtractor::new().extract(Turn::user(&msg)).await;
    let out = out.unwrap_or_default();
    assert_eq!(out.len(), 1);
    assert_eq!(
        out[0].source.message_id.as_deref(),
        Some(msg.id.to_string().as_str())
    );
}

#[test]
fn life_events_said_in_passing_are_states() {
    // Sentences written for this test (2026-12-07).
    assert_eq!(
        one("it's my 41st birthday on friday, send cake"),
        pos("age", "41")
    );
    assert_eq!(one("im 19 as of this morning"), pos("age", "19"));
    assert_eq!(
        one("the divorce finally went through last week"),
        pos("relationship", "divorced")
    );
    assert_eq!(
        one("my divorce from Tariq is official"),
        pos("relationship", "divorced")
    );
    assert_eq!(
        one("we just got engaged in Lisbon!!"),
        pos("relationship", "engaged")
    );
    assert_eq!(
        one("we're married now, still feels weird to say"),
        pos("relationship", "married")
    );
    assert_eq!(one("I'm strictly veggie these days"), pos("diet", "veggie"));
    for nothing in [
        "the divorce isn't final yet",
        "my 2nd birthday photos are hilarious",
        "if the divorce goes through I'll move",
    ] {
        assert!(
            facts(nothing)
                .iter()
                .all(|f| f.0 != "relationship" && f.0 != "age"),
            "{nothing}: {:?}",
            facts(nothing)
        );
    }
}
