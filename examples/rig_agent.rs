//! A rig agent with agentmem memory, on rig's own scripted model.
//!
//! ```sh
//! cargo run --example rig_agent --features rig
//! ```
//!
//! The model is `rig_core::test_utils::MockCompletionModel` (rig-core's `test-utils`
//! feature), which answers from a script and records every request, so the example runs
//! offline and shows what agentmem put into each request. For a real model, build the
//! agent on `OpenAIConfig::from_env()?.client().chat("gpt-4o-mini")` (or any rig provider)
//! instead; nothing else changes.
//!
//! Facts, the conversation and rig's session files go to one SQLite file (in a temporary
//! directory here): a second process on the same file goes on from the same memory.

use std::sync::Arc;

use agentmemory::rig::RigMemory;
use agentmemory::stores::SqliteStore;
use rig_agent::AgentBuilder;
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::json;

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let store = Arc::new(SqliteStore::open(dir.path().join("rig-agent.db")).await?);
    let memory = RigMemory::builder(store.clone(), store.clone())
        .files(store.clone())
        .build();

    // The script: a plain reply; then a call of the `remember` tool and the reply after
    // it; then a reply in a new conversation.
    let model = MockCompletionModel::from_turns([
        MockTurn::text("Nice to meet you, Alice! Lyon has great food."),
        MockTurn::tool_call("call_1", "remember", json!({"fact": "is vegetarian"})),
        MockTurn::text("Noted: no meat. How about a lentil salad tonight?"),
        MockTurn::text("A vegetarian bouchon in Lyon, then."),
    ]);
    let (remember, recall, forget) = memory.tools();
    let agent = AgentBuilder::new(model.clone())
        .preamble(
            "You are a friendly assistant. Use the remember tool for lasting facts about the user.",
        )
        .tool(remember)
        .tool(recall)
        .tool(forget)
        .build();

    // One request at a time: bind the user, prompt, read what the memory did.
    let alice = memory.user("alice")?;
    for (conversation, message) in [
        ("alice-demo", "Hi! I'm Alice and I live in Lyon."),
        ("alice-demo", "I'm vegetarian, by the way. Dinner ideas?"),
        ("alice-next-day", "Where should I eat tonight?"),
    ] {
        let (run, hook) = alice.prepare(&agent, conversation, message).await?;
        let reply = run.max_turns(4).run().await?;
        let report = hook.report();
        println!("[{conversation}] user:      {message}");
        println!("[{conversation}] assistant: {}", reply.output());
        println!(
            "[{conversation}] memory:    {} fact(s) injected, {} change(s) from extraction\n",
            report.injected.len(),
            report.fact_changes.len()
        );
    }

    // What the model saw last: the facts of the first conversation, in a new one.
    let requests = model.requests();
    let last = requests.last().ok_or("the model was never called")?;
    let system = last.system_instructions().unwrap_or_default();
    println!("system prompt of the last request:\n{system}\n");
    if !(system.contains("<user_memory>") && system.contains("vegetarian")) {
        return Err("the remembered fact did not reach the last request".into());
    }

    // The conversation as rig saved it, read back through rig's own loader.
    let saved = rig_memory::load_async(&alice.session_store(), "alice-demo").await?;
    println!("alice-demo holds {} messages", saved.messages().len());
    for fact in agentmemory::UserMemoryStore::list(store.as_ref(), "alice").await? {
        println!("fact: {}", fact.text);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run().await
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs_on_rigs_scripted_model() {
        super::run().await.unwrap();
    }
}
