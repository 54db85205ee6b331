//! A conversation kept inside a small token budget, with its summary slot.
//!
//! Run with `cargo run --example quickstart`.

use agentmemory::prelude::*;
use agentmemory::ExtractiveSummarizer;

fn main() {
    // A deliberately small budget so trimming shows after a few turns.
    let mut memory = ShortTermMemory::new(120);
    memory.add_system("You are a travel assistant.");

    let turns = [
        (
            "I'm planning a trip to Japan in April.",
            "April is cherry-blossom season. Which cities?",
        ),
        (
            "Tokyo and Kyoto, about ten days.",
            "Six days in Tokyo and four in Kyoto works well.",
        ),
        (
            "My budget is around 3000 euros.",
            "That covers mid-range hotels and a rail pass.",
        ),
        (
            "Should I buy the rail pass before I go?",
            "Yes, buy it online before you leave.",
        ),
    ];
    for (user, assistant) in turns {
        memory.add_user(user);
        memory.add_assistant(assistant);
    }

    println!(
        "held: {} messages, {} tokens; budget {}",
        memory.len(),
        memory.token_count(),
        memory.max_tokens()
    );
    println!(
        "\nthe window the model would see ({} tokens):",
        memory.window_tokens()
    );
    print_window(&memory);

    // Fold what no longer fits into the summary instead of losing it: reserve 40 tokens
    // for the summary, keep the recent messages that fit the rest, summarise the others.
    let keep = memory.recent_that_fit(memory.max_tokens() - 40);
    let old = memory.messages_to_summarize(keep);
    let summary = ExtractiveSummarizer::new().summarize_text(memory.summary(), &old, 40);
    memory.set_summary(summary);
    memory.trim_to_recent(keep);

    println!(
        "\nafter folding {} older messages into the summary:",
        old.len()
    );
    let summary = memory.summary().unwrap_or("(none)");
    println!(
        "  [summary  ] {}",
        summary.replace('\n', "\n              ")
    );
    print_window(&memory);
    println!(
        "\nheld: {} messages + summary, {} tokens",
        memory.len(),
        memory.token_count()
    );
}

fn print_window(memory: &ShortTermMemory) {
    for message in memory.messages() {
        println!("  [{:<9}] {}", message.role.as_str(), message.text());
    }
}
