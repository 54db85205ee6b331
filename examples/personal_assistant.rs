//! A personal assistant that remembers its user across conversations.
//!
//! Run with `cargo run --example personal_assistant`. The first conversation tells the
//! assistant a few things; the second, a new conversation, shows the facts it recalls
//! in the memory block of its system prompt.
//!
//! Memory lives where `AGENTMEM_STORE_URL` says (`memory://`, `sqlite://PATH`,
//! `file://DIR`), by default in `sqlite://agentmem.db`: run the example twice and the
//! first conversation of the second run already knows what the first run learned.

use std::borrow::Cow;
use std::sync::Arc;

use agentmem::prelude::*;
use agentmem::stores::{StoreUrl, STORE_URL_ENV};

/// The agent: a prompt, a model name, and its memory settings.
#[remember(store = "user_memory", extract = true, inject = true, top_k = 5)]
struct PersonalAssistant;

impl Agent for PersonalAssistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a friendly personal assistant.".into()
    }

    fn model(&self) -> &str {
        "offline"
    }
}

#[tokio::main]
async fn main() -> Result<(), MemoryError> {
    let url = StoreUrl::from_env_or("sqlite://agentmem.db")?;
    println!("memory: {url:?} (set {STORE_URL_ENV} to change)\n");
    let container = url.open().await?;
    container.register_model("offline", Arc::new(OfflineModel::new()));

    let script: [&[&str]; 2] = [
        &[
            "Hi, I'm Alice and I love museums.",
            "I live in Paris and I work at Acme.",
            "I'm allergic to peanuts.",
        ],
        &[
            "Any plans for this weekend?",
            "Actually, I moved to Berlin last month.",
            "Can you suggest a restaurant near me?",
        ],
    ];

    for (n, lines) in script.iter().enumerate() {
        let mut session = Session::builder(PersonalAssistant, &container)
            .user("alice")
            .build()
            .await?;
        println!("=== conversation {} ({})", n + 1, session.conversation_id());
        for line in lines.iter() {
            let reply = session.send(*line).await?;
            println!("\nuser:      {line}");
            match &reply.report.memory_block {
                Some(block) => println!("memory block given to the model:\n{block}"),
                None => println!("memory block: (nothing remembered yet)"),
            }
            println!("assistant: {}", reply.text());
            for change in &reply.report.fact_changes {
                match change {
                    FactChange::Added { fact } => println!("  + learned: {}", fact.text),
                    FactChange::Reinforced { fact } => println!("  ~ reinforced: {}", fact.text),
                    FactChange::Superseded { old, new } => {
                        println!("  ! {} replaces {}", new.text, old.text)
                    }
                    FactChange::Ignored { candidate, reason } => {
                        println!("  - ignored {}: {reason}", candidate.text)
                    }
                }
            }
        }
        println!();
    }
    Ok(())
}
