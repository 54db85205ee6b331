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

/// 200 turns of everyday, repetitive chat after key facts stated once (a child's name and
/// birthday, an allergy, a move), run through
/// a `ShortTermMemory` the way a session does (summarise what no longer fits, keep the
/// recent turns): at budgets of 200, 1,000 and 4,000 tokens the key facts are still in
/// the window or the summary, and the summary never holds the same sentence twice.
#[tokio::test]
async fn key_facts_stated_once_survive_200_turns_of_repetitive_chat() {
    use agentmemory_core::ShortTermMemory;
    let filler_user = [
        "I had a busy day at work today, lots of meetings with Bob at 3pm again.",
        "The weather was nice so I went for a walk in the park.",
        "Meeting with Bob at 3pm again, same as yesterday.",
        "I'm a bit tired today, nothing special happened.",
        "Work was busy today, lots of meetings with Bob at 3pm again.",
    ];
    let filler_assistant = [
        "That sounds like a full day. Make sure to rest.",
        "A walk in the park is a nice way to unwind.",
        "Meetings with Bob at 3pm again? Sounds like a routine.",
    ];
    for budget in [200usize, 1_000, 4_000] {
        let summarizer = ExtractiveSummarizer::new();
        let mut memory = ShortTermMemory::new(budget);
        memory.add_user("My daughter's name is Lily and she turns 7 on 3 March.");
        memory.add_assistant("Lovely, Lily turning 7!");
        memory.add_user("I'm allergic to penicillin.");
        memory.add_assistant("Noted.");
        memory.add_user("We're moving to Lisbon in June.");
        memory.add_assistant("Exciting!");
        for turn in 0..200 {
            memory.add_user(filler_user[turn % filler_user.len()]);
            memory.add_assistant(filler_assistant[turn % filler_assistant.len()]);
            if memory.is_over_budget() {
                let keep = memory.recent_within(budget / 2).max(1);
                let old = memory.messages_to_summarize(keep);
                let summary = summarizer
                    .summarize(memory.summary(), &old, budget / 4)
                    .await
                    .unwrap();
                memory.set_summary(summary);
                memory.trim_to_recent(keep);
            }
        }
        let summary = memory.summary().unwrap_or_default().to_owned();
        let window: String = memory
            .messages()
            .iter()
            .map(|m| m.text())
            .collect::<Vec<_>>()
            .join("\n");
        let everything = format!("{summary}\n{window}");
        // Even at 200 tokens (a 50-token summary) every key fact stated once survives.
        for key in ["Lily", "3 March", "penicillin", "Lisbon"] {
            assert!(
                everything.contains(key),
                "budget {budget}: {key} lost: {summary}"
            );
        }
        assert!(tokens(&summary) <= budget / 4, "budget {budget}: {summary}");
        let mut seen = std::collections::HashSet::new();
        for sentence in summary
            .lines()
            .map(|l| l.split_once(": ").map_or(l, |(_, rest)| rest))
            .flat_map(|l| l.split_inclusive(['.', '!', '?']))
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            assert!(
                seen.insert(sentence.to_lowercase()),
                "budget {budget}: {sentence:?} twice in {summary}"
            );
        }
    }
}

/// The same retention, with other key facts and a noisier everyday chat whose filler
/// carries names, numbers and times of its own (so salience alone cannot tell the key
/// facts from the routine): a son's name and birth date, a food allergy, a city, a job.
#[tokio::test]
async fn other_key_facts_survive_noisy_chat_with_names_and_numbers() {
    use agentmemory_core::ShortTermMemory;
    let filler_user = [
        "lunch with Sarah at 1pm again, the usual salad",
        "Traffic on the A1 was terrible this morning, 40 minutes late.",
        "watched two more episodes of that show tonight lol",
        "Paid the 45 euro phone bill today, boring stuff.",
        "Had coffee with Sarah at 1pm, she says hi.",
        "gym at 7 again, legs day, so tired",
        "Work was fine, another call with Tom at 4pm.",
    ];
    let filler_assistant = [
        "Sounds like a steady routine!",
        "That commute sounds frustrating.",
        "Enjoy the show!",
        "Good to have that sorted.",
    ];
    for budget in [200usize, 1_000, 4_000] {
        let summarizer = ExtractiveSummarizer::new();
        let mut memory = ShortTermMemory::new(budget);
        memory.add_user("hey, so my son Mateo was born on 12 August 2019.");
        memory.add_assistant("Nice to know!");
        memory.add_user("Also I can't eat peanuts, I'm seriously allergic.");
        memory.add_assistant("Understood, no peanuts.");
        memory.add_user("I live in Porto now and I work as a nurse.");
        memory.add_assistant("Got it.");
        for turn in 0..200 {
            memory.add_user(filler_user[turn % filler_user.len()]);
            memory.add_assistant(filler_assistant[turn % filler_assistant.len()]);
            if memory.is_over_budget() {
                let keep = memory.recent_within(budget / 2).max(1);
                let old = memory.messages_to_summarize(keep);
                let summary = summarizer
                    .summarize(memory.summary(), &old, budget / 4)
                    .await
                    .unwrap();
                memory.set_summary(summary);
                memory.trim_to_recent(keep);
            }
        }
        let summary = memory.summary().unwrap_or_default().to_owned();
        assert!(tokens(&summary) <= budget / 4, "budget {budget}: {summary}");
        for key in ["Mateo", "12 August 2019", "peanuts", "Porto", "nurse"] {
            assert!(
                summary.contains(key),
                "budget {budget}: {key} lost: {summary}"
            );
        }
    }
}

#[tokio::test]
async fn near_duplicate_sentences_are_kept_once() {
    let messages: Vec<Message> = (0..12)
        .map(|_| Message::user("Meeting with Bob at 3pm on Friday."))
        .chain([
            Message::user("Meeting with Bob at 3pm on Friday!"),
            Message::user("My son Leo starts school on 4 September."),
        ])
        .collect();
    let summary = ExtractiveSummarizer::new()
        .summarize(None, &messages, 200)
        .await
        .unwrap();
    assert_eq!(summary.matches("Meeting with Bob").count(), 1, "{summary}");
    assert!(summary.contains("Leo"), "{summary}");
}
