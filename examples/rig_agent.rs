//! A rig agent with agentmem memory, against any OpenAI-compatible endpoint.
//!
//! ```sh
//! OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=unused MODEL=llama3.2 \
//!     cargo run --example rig_agent --features rig
//! ```
//!
//! Facts and the conversation log go to `rig-agent.db` (SQLite); a second run remembers
//! what the first one learned.

use std::sync::Arc;

use agentmemory::rig::RigMemory;
use agentmemory::stores::SqliteStore;
use rig_agent::AgentBuilder;
use rig_core::providers::openai::OpenAIConfig;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Facts and the conversation log in one SQLite file: a second run remembers.
    let store = Arc::new(SqliteStore::open("rig-agent.db").await?);
    let memory = RigMemory::builder(store.clone(), store).build();

    // OPENAI_API_KEY, and OPENAI_BASE_URL for a compatible server.
    let model_name = std::env::var("MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned());
    let model = OpenAIConfig::from_env()?.client().chat(model_name);
    let (remember, recall, forget) = memory.tools();
    let agent = AgentBuilder::new(model)
        .preamble(
            "You are a friendly assistant. Use the remember tool for lasting facts about the user.",
        )
        .memory(memory.conversation_memory())
        .tool(remember)
        .tool(recall)
        .tool(forget)
        .build();

    // One request: bind the user, prompt, read what the memory did.
    let alice = memory.user("alice")?;
    for message in [
        "Hi! I'm Alice, I live in Lyon and I'm vegetarian.",
        "Can you suggest a dinner for tonight?",
    ] {
        let (run, hook) = alice.prepare(&agent, "alice-demo", message).await?;
        let reply = run.max_turns(4).run().await?;
        let report = hook.report();
        println!("user:      {message}");
        println!("assistant: {}", reply.output());
        println!(
            "memory:    {} fact(s) injected, {} change(s)\n",
            report.injected.len(),
            report.fact_changes.len()
        );
    }
    Ok(())
}
