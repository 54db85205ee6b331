//! One object for conversation memory and working memory: a [`MemoryManager`].
//!
//! A pipeline classifies an invoice: the coordinator keeps the conversation, a
//! sub-agent forked from it shares the conversation and keeps its own scratch notes,
//! and a session of the coordinator sees its working memory in every prompt.
//!
//! The stores come from `AGENTMEM_STORE_URL` (in memory when unset), the budgets from
//! `AGENTMEM_WINDOW_TOKENS`, `AGENTMEM_SUMMARIZE_THRESHOLD`, ... (see the README's
//! configuration table). `cargo run --example memory_manager`.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::prelude::*;
use agentmemory::working::SetOptions;

#[remember]
struct Coordinator;

impl Agent for Coordinator {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You coordinate the processing of documents.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), MemoryError> {
    run().await
}

async fn run() -> Result<(), MemoryError> {
    let memory = MemoryManager::from_env().await?;
    println!("budgets: {:?}", memory.config());

    // Conversation memory: turns in, history (within the window) out.
    let conversation = memory.new_conversation();
    memory
        .add_turn(
            &conversation,
            "Here is the invoice from Acme for March.",
            "Received. I will classify it.",
        )
        .await?;

    // Working memory: scratch notes of this task.
    memory.set("doc_type", "invoice").await?;
    memory
        .set_with("vendor", "Acme Corp", SetOptions::default().importance(0.9))
        .await?;
    println!("{}", memory.working_context().await?);

    // A sub-agent: same conversation, its own notes.
    let classifier = memory.fork("classifier");
    classifier.set("label", "utilities").await?;
    classifier
        .add_turn(&conversation, "Which category?", "Utilities.")
        .await?;
    assert_eq!(memory.get("label").await?, None);
    assert_eq!(memory.history(&conversation).await?.len(), 4);

    // A session whose prompts carry the coordinator's working memory.
    memory
        .container()
        .register_model("offline", Arc::new(OfflineModel::new()));
    let mut session = memory.session(Coordinator).user("ops").build().await?;
    let reply = session.send("What do we know about this document?").await?;
    let block = reply
        .report
        .working_memory
        .expect("working memory in the prompt");
    assert!(block.contains("vendor: Acme Corp"));
    println!("the model saw:\n{block}");

    // Clearing: one conversation, the notes, or everything this manager wrote.
    classifier.clear_working().await?;
    assert!(memory.clear_conversation(&conversation).await?);
    let cleared = memory.clear_all().await?;
    println!("cleared {cleared} more conversation(s)");
    assert!(memory.working_context().await?.is_empty());
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs() {
        super::run().await.unwrap();
    }
}
