//! The offline `ExtractiveSummarizer`: budget, selection, determinism, carried summary.

use agentmemory_core::summarize::{ExtractiveSummarizer, Summarizer};
use agentmemory_core::{HeuristicCounter, Message, TokenCounter};
use proptest::prelude::*;

fn tokens(text: &str) -> usize {
    HeuristicCounter::default().count_text(text)
}

fn conversation() -> Vec<Message> {
    vec![
        Message::user("Hello! How are you?"),
        Message::assistant("I'm doing great, thanks for asking."),
        Message::user("I'm allergic to peanuts. Also, my name is Priya."),
        Message::assistant("Good to know. Anything else?"),
        Message::user("ok cool"),
        Message::user("We decided to fly to Lisbon on Friday, 14 June."),
        Message::assistant("Sounds good!"),
    ]
}

#[tokio::test]
async fn key_sentences_win_over_chit_chat() {
    let s = ExtractiveSummarizer::new();
    let summary = s.summarize(None, &conversation(), 40).await.unwrap();
    assert!(tokens(&summary) <= 40, "{summary}");
    assert!(summary.contains("allergic to peanuts"), "{summary}");
    assert!(summary.contains("Lisbon on Friday"), "{summary}");
    assert!(!summary.contains("ok cool"), "{summary}");
    assert!(!summary.contains("Sounds good"), "{summary}");
    assert!(!summary.contains("How are you"), "{summary}");
}

#[tokio::test]
async fn lines_are_prefixed_by_role_in_original_order() {
    let s = ExtractiveSummarizer::new();
    let summary = s.summarize(None, &conversation(), 1_000).await.unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    // Everything but the pure chit-chat ("Hello!", "How are you?", "ok cool", ...).
    assert_eq!(
        lines,
        vec![
            "Assistant: I'm doing great, thanks for asking.",
            "User: I'm allergic to peanuts. Also, my name is Priya.",
            "Assistant: Good to know. Anything else?",
            "User: We decided to fly to Lisbon on Friday, 14 June.",
        ]
    );
    let allergy = summary.find("peanuts").unwrap();
    let lisbon = summary.find("Lisbon").unwrap();
    assert!(allergy < lisbon);
}

#[tokio::test]
async fn the_result_is_deterministic() {
    let s = ExtractiveSummarizer::new();
    let messages = conversation();
    let a = s
        .summarize(Some("User: I live in Oslo."), &messages, 30)
        .await
        .unwrap();
    let b = s
        .summarize(Some("User: I live in Oslo."), &messages, 30)
        .await
        .unwrap();
    assert_eq!(a, b);
}

#[tokio::test]
async fn the_previous_summary_competes_and_survives() {
    let s = ExtractiveSummarizer::new();
    let previous = s
        .summarize(
            None,
            &[Message::user("Hi. My name is Priya and I live in Oslo.")],
            30,
        )
        .await
        .unwrap();
    assert_eq!(previous, "User: My name is Priya and I live in Oslo.");
    // Several rounds of chit-chat later, the key fact is still there.
    let mut summary = previous;
    for _ in 0..5 {
        let chat = [
            Message::user("thanks!"),
            Message::assistant("You're welcome, happy to help."),
            Message::user("ok"),
        ];
        summary = s.summarize(Some(&summary), &chat, 20).await.unwrap();
        assert!(tokens(&summary) <= 20);
    }
    assert!(summary.contains("My name is Priya"), "{summary}");
}

#[tokio::test]
async fn empty_input_gives_the_previous_summary() {
    let s = ExtractiveSummarizer::new();
    assert_eq!(s.summarize(None, &[], 50).await.unwrap(), "");
    assert_eq!(
        s.summarize(Some("User: I love jazz."), &[], 50)
            .await
            .unwrap(),
        "User: I love jazz."
    );
    // Still within the limit when the previous summary alone is too long.
    let long = "User: I love jazz. I live in Oslo. My name is Priya. I work at Acme in Bergen.";
    let out = s.summarize(Some(long), &[], 10).await.unwrap();
    assert!(tokens(&out) <= 10, "{out}");
    assert!(!out.is_empty());
}

#[tokio::test]
async fn a_tiny_budget_truncates_rather_than_overflows() {
    let s = ExtractiveSummarizer::new();
    let m = [Message::user(
        "I am planning a very long trip through Norway, Sweden and Finland in July 2025.",
    )];
    let out = s.summarize(None, &m, 5).await.unwrap();
    assert!(tokens(&out) <= 5, "{out}");
    assert!(out.starts_with("User: "), "{out}");
    assert_eq!(s.summarize(None, &m, 0).await.unwrap(), "");
}

fn sentence() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z ,']{0,60}[.!?]",
        "I (love|hate|like) [a-z]{1,12}\\.",
        "We decided to meet on (Monday|Friday) at [0-9]{1,2}\\.",
        "[a-zA-Z0-9 ]{0,200}",
        "ok|thanks!|hi",
        "\\PC{0,40}",
    ]
}

fn message() -> impl Strategy<Value = Message> {
    (prop::bool::ANY, prop::collection::vec(sentence(), 0..5)).prop_map(|(user, parts)| {
        let text = parts.join(" ");
        if user {
            Message::user(text)
        } else {
            Message::assistant(text)
        }
    })
}

proptest! {
    #[test]
    fn never_exceeds_the_limit(
        previous in prop::option::of(prop::collection::vec(sentence(), 0..6).prop_map(|v| v.join("\n"))),
        messages in prop::collection::vec(message(), 0..12),
        max_tokens in 0usize..120,
    ) {
        let s = ExtractiveSummarizer::new();
        let out = s.summarize_text(previous.as_deref(), &messages, max_tokens);
        let empty_input = messages.iter().all(|m| m.text().trim().is_empty());
        let carried = previous.as_deref().map(str::trim).unwrap_or("");
        // The only output allowed over budget would be the unchanged previous summary,
        // and even that is compressed when too long.
        prop_assert!(tokens(&out) <= max_tokens, "{} tokens > {}: {:?}", tokens(&out), max_tokens, out);
        if empty_input && tokens(carried) <= max_tokens {
            prop_assert_eq!(out.as_str(), carried);
        }
        prop_assert_eq!(&out, &s.summarize_text(previous.as_deref(), &messages, max_tokens));
    }
}
