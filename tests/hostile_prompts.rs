//! The hostile corpus (`render::hostile::CORPUS`) through the session's prompt paths: stored
//! as facts, said as earlier messages (episodes), folded into the summary and kept in the
//! working memory a session renders, every text stays data inside its block. (The server's and rig's paths have tests of their own.)

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::episodes::{Episode, EpisodeStore, InMemoryEpisodeStore};
use agentmemory::model::RecordingModel;
use agentmemory::prelude::*;
use agentmemory::Summarizer;
use agentmemory_core::render::hostile;

#[remember(store = "user_memory", top_k = 20, recall = 20)]
struct Assistant;

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a careful assistant.".into()
    }
    fn model(&self) -> &str {
        "recorder"
    }
}

/// A summariser that returns the hostile corpus as the summary.
struct HostileSummary;

#[agentmemory::async_trait]
impl Summarizer for HostileSummary {
    async fn summarize(
        &self,
        _previous: Option<&str>,
        _messages: &[Message],
        _max_tokens: usize,
    ) -> Result<String, MemoryError> {
        Ok(hostile::CORPUS.join("\n"))
    }
}

const TAGS: &[&str] = &[
    "<user_memory>",
    "</user_memory>",
    "<conversation_summary>",
    "</conversation_summary>",
    "<working_memory>",
    "</working_memory>",
];

#[tokio::test]
async fn every_hostile_text_stays_data_in_the_system_prompt() {
    let container = Container::new();
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let episodes = Arc::new(InMemoryEpisodeStore::new());
    let model = RecordingModel::new();
    container.register_user_memory("user_memory", facts.clone());
    container.register_episodes("episodes", episodes.clone());
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    container.register_model("recorder", Arc::new(model.clone()));
    container.register_summarizer("hostile", Arc::new(HostileSummary));

    // Every hostile text as a fact and as an earlier message, each sharing the word
    // "secrets" with the question so that all of them are recalled.
    for (i, text) in hostile::CORPUS.iter().enumerate() {
        let text = format!("secrets {i}: {text}");
        facts
            .upsert("mallory", FactCandidate::new(text.clone(), 0.9))
            .await
            .unwrap();
        let said = Message::user(text.clone());
        episodes
            .add(
                "mallory",
                vec![Episode::from_message("mallory", "old", &said)],
            )
            .await
            .unwrap();
    }

    // Every hostile text as a working-memory value, and as a key.
    let working = WorkingMemory::new("task");
    for (i, text) in hostile::CORPUS.iter().enumerate() {
        working.set(format!("note {i}"), *text).await.unwrap();
        working.set(*text, i).await.unwrap();
    }

    let mut session = Session::builder(Assistant, &container)
        .user("mallory")
        .config(
            SessionConfig::default()
                .with_max_tokens(6_000)
                .with_memory_block_tokens(1_500)
                .with_working_memory_tokens(1_000),
        )
        .working_memory(working)
        .build()
        .await
        .unwrap();
    let mut saw_summary = false;
    for turn in 0..12 {
        let reply = session
            .send(format!(
                "tell me the secrets again, turn {turn}, with a long tail of words {}",
                "to fill the window ".repeat(100)
            ))
            .await
            .unwrap();
        let system = model.last_request().unwrap().system;
        hostile::assert_contained(&system, TAGS, &[]);
        let block = reply.report.memory_block.expect("a memory block");
        assert!(!reply.report.injected.is_empty(), "facts were recalled");
        assert!(!reply.report.recalled.is_empty(), "episodes were recalled");
        assert!(
            block.contains("&lt;/user_memory&gt;") && block.contains("\\u{200b}"),
            "{block}"
        );
        let notes = reply.report.working_memory.expect("a working-memory block");
        assert!(system.contains(&notes), "the block is in the prompt");
        assert!(notes.contains("- note 0: likes tea\\n"), "{notes}");
        saw_summary |= system.contains("<conversation_summary>");
    }
    assert!(
        saw_summary,
        "the window was summarised, the summary rendered"
    );
}
