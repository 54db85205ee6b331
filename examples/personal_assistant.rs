//! A personal assistant that remembers its user across conversations.
//!
//! Run with `cargo run --example personal_assistant`. The first conversation tells the
//! assistant a few things; the second, a new conversation, shows the facts it recalls
//! in the memory block of its system prompt.
//!
//! Memory lives where `AGENTMEM_STORE_URL` says (`memory://`, `sqlite://PATH`, `redis://`,
//! `postgres://`), by default in `sqlite://agentmem.db`: run the example twice and the
//! first conversation of the second run already knows what the first run learned.
//!
//! With the `openai` feature and `OPENAI_BASE_URL` set, the replies come from that
//! OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp) instead of the offline
//! model: `OPENAI_API_KEY`, `AGENTMEM_MODEL` and `OPENAI_ORGANIZATION` are read too, e.g.
//! `OPENAI_BASE_URL=http://localhost:11434/v1 AGENTMEM_MODEL=llama3.2 cargo run
//! --features openai --example personal_assistant`.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::prelude::*;
use agentmemory::stores::{StoreUrl, STORE_URL_ENV};

/// The agent: a prompt, a model name, and its memory settings.
#[remember(store = "user_memory", extract = true, inject = true, top_k = 5)]
struct PersonalAssistant {
    /// The name its chat model is registered under.
    model: String,
}

impl Agent for PersonalAssistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a friendly personal assistant.".into()
    }

    fn model(&self) -> &str {
        &self.model
    }
}

/// Registers the chat model and returns its name: an OpenAI-compatible model when the
/// `openai` feature is on and `OPENAI_BASE_URL` is set, else the offline model.
fn register_model(container: &Container) -> Result<String, MemoryError> {
    #[cfg(feature = "openai")]
    if std::env::var_os(agentmemory::model::openai::BASE_URL_ENV).is_some() {
        use agentmemory::model::openai::{OpenAiChatModel, OpenAiConfig};
        let config = OpenAiConfig::from_env();
        let name = config.model.clone();
        container.register_model(name.clone(), Arc::new(OpenAiChatModel::new(config)?));
        return Ok(name);
    }
    container.register_model("offline", Arc::new(OfflineModel::new()));
    Ok("offline".to_owned())
}

#[tokio::main]
async fn main() -> Result<(), MemoryError> {
    let url = StoreUrl::from_env_or("sqlite://agentmem.db")?;
    println!("memory: {url:?} (set {STORE_URL_ENV} to change)\n");
    let container = url.open().await?;
    let model = register_model(&container)?;
    println!("model: {model}\n");

    let script: [&[&str]; 2] = [
        &[
            "Hi, I'm Alice and I love museums.",
            "I live in Paris and I work at Acme.",
            "I'm allergic to peanuts.",
        ],
        &[
            "Which museums could I see this weekend?",
            "Actually, I moved to Berlin last month.",
            "Can you suggest a restaurant near me?",
        ],
    ];

    for (n, lines) in script.iter().enumerate() {
        let agent = PersonalAssistant {
            model: model.clone(),
        };
        let mut session = Session::builder(agent, &container)
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
                    FactChange::Contested { fact, candidate } => {
                        println!("  ? pending {} (keeps {})", candidate.text, fact.text)
                    }
                    FactChange::Closed { fact } => println!("  - no longer {}", fact.text),
                    FactChange::Deleted { fact } => println!("  x forgot {}", fact.text),
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
