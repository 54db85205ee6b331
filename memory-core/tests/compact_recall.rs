//! The memory block a `Session` turn injects is compact: a long earlier message is shown
//! as the sentence that matched (with "…" for the rest), content-free turns take no
//! episode slot, and a fact is not shown beside the message it came from.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory_core::episodes::{Episode, EpisodeStore, InMemoryEpisodeStore};
use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::model::OfflineModel;
use agentmemory_core::session::Agent;
use agentmemory_core::{
    Container, InMemoryConversationStore, Message, Remember, RememberSpec, Session,
};

struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> =
        Some(RememberSpec::new().store("user_memory").top_k(5).recall(2));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

/// Over the 400 characters a message is shown whole up to (`render::excerpt::WHOLE_CHARS`): excerpted.
const LONG: &str = "Work has been hectic all week, with the quarterly reports due on Friday and two \
    people off sick. On the bright side, my sister Hannah finally picked a venue for her wedding, a \
    barn near Ilkley. We are going to look at dresses together next month if I can get the time off. \
    Also the cat knocked a plant off the windowsill again. The boiler has been making a strange \
    noise since Tuesday and the landlord still has not called back.";

#[tokio::test]
async fn a_turn_injects_the_matching_sentence_without_filler_or_repeats() {
    let container = Container::new();
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let episodes = Arc::new(InMemoryEpisodeStore::new());
    container.register_user_memory("user_memory", facts.clone());
    container.register_episodes("episodes", episodes.clone());
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));

    let long = Message::user(LONG);
    let bike = Message::user("I sold my old bike to a neighbour, the wedding fund needed it");
    let mut fact = FactCandidate::new("sold the bike for the wedding", 0.9);
    fact.source.message_id = Some(bike.id.to_string());
    facts.upsert("ana", fact).await.unwrap();
    let said = [
        long,
        Message::assistant("Thank you for telling me! How did it go?"),
        Message::assistant("Sounds good, how is it going?"),
        bike,
    ];
    episodes
        .add(
            "ana",
            said.iter()
                .map(|m| Episode::from_message("ana", "earlier", m))
                .collect(),
        )
        .await
        .unwrap();

    let mut session = Session::builder(Assistant, &container)
        .user("ana")
        .max_tokens(4_000)
        .build()
        .await
        .unwrap();
    let turn = session
        .prepare(Message::user("how is the wedding planning going?"))
        .await
        .unwrap();
    let block = turn.memory_block().expect("a memory block");
    assert!(
        block.contains(
            "… On the bright side, my sister Hannah finally picked a venue for her wedding, a barn near Ilkley. …"
        ),
        "{block}"
    );
    assert!(
        !block.contains("quarterly reports") && !block.contains("windowsill"),
        "{block}"
    );
    assert!(
        !block.contains("Thank you") && !block.contains("Sounds good"),
        "{block}"
    );
    assert!(block.contains("I sold my old bike"), "{block}");
    assert!(!block.contains("sold the bike for the wedding"), "{block}");
    let recalled: Vec<&str> = turn
        .recalled()
        .iter()
        .map(|e| e.episode.text.as_str())
        .collect();
    assert_eq!(recalled.len(), 2, "{recalled:?}");
    assert!(turn.injected().is_empty(), "{:?}", turn.injected());
}
