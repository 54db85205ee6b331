//! A message in a language the rules do not read (issue 38 item 5): the turn (and an
//! ingest) says so, and nothing is dropped: the message is logged, kept as an episode
//! and recalled by a later question in its language.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory_core::episodes::{self, EpisodeQuery};
use agentmemory_core::facts::{InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::ingest::ingest;
use agentmemory_core::model::OfflineModel;
use agentmemory_core::session::Agent;
use agentmemory_core::{
    Container, ConversationEvent, ConversationStore, InMemoryConversationStore, Message, Remember,
    RememberSpec, Role, Session,
};

struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> =
        Some(RememberSpec::new().store("user_memory").top_k(5).recall(3));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

fn container() -> Container {
    let container = Container::new();
    container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    container
}

const FRENCH: &str = "Je suis allergique aux arachides, même une petite trace me rend malade.";

#[tokio::test]
async fn a_turn_in_french_says_facts_are_read_from_english_only_and_keeps_the_message() {
    let container = container();
    let mut session = Session::builder(Assistant, &container)
        .user("amelie")
        .build()
        .await
        .unwrap();

    let reply = session.send(FRENCH).await.unwrap();
    let unread = reply.report.unread_language.clone().expect("a notice");
    assert_eq!(unread.language, "French");
    assert_eq!(unread.code, "fra");
    assert_eq!(unread.extracted_from, ["English"]);
    assert_eq!(
        unread.to_string(),
        "a message in French was kept as an earlier message; facts are extracted from English only"
    );
    assert!(!reply.report.has_errors(), "{:?}", reply.report);

    // English, and a message too short to tell, say nothing.
    let reply = session
        .send("I moved to Lisbon last spring with my partner.")
        .await
        .unwrap();
    assert_eq!(reply.report.unread_language, None);
    assert!(reply
        .report
        .fact_changes
        .iter()
        .any(|c| c.kind() != "ignored"));
    let reply = session.send("Merci !").await.unwrap();
    assert_eq!(reply.report.unread_language, None);

    // Nothing was dropped: logged, kept as an episode, recalled in French.
    let log = container.resolve::<dyn ConversationStore>(None).unwrap();
    let events = log.load(session.conversation_id()).await.unwrap();
    assert!(events.iter().any(|e| matches!(
        &e.event,
        ConversationEvent::Message { message } if message.role == Role::User && message.text() == FRENCH
    )));
    let episodes = episodes::resolve(&container).unwrap();
    let found = episodes
        .search(
            "amelie",
            &EpisodeQuery::new("Quelles allergies aux arachides ai-je ?", 3),
        )
        .await
        .unwrap();
    // (The offline model's reply quotes it, and is an episode too.)
    assert!(found.iter().any(|e| e.episode.text == FRENCH), "{found:?}");
    // And no fact came from it.
    let facts = container
        .resolve::<dyn UserMemoryStore>(Some("user_memory"))
        .unwrap()
        .list("amelie")
        .await
        .unwrap();
    assert!(
        facts.iter().all(|f| !f.text.contains("arachide")),
        "{facts:?}"
    );
}

#[tokio::test]
async fn an_ingest_counts_the_messages_of_each_unread_language() {
    let container = container();
    let history = vec![
        Message::new(Role::User, FRENCH),
        Message::new(Role::Assistant, "D'accord, je m'en souviendrai."),
        Message::new(
            Role::User,
            "Ich wohne seit drei Jahren mit meiner Freundin in Hamburg.",
        ),
        Message::new(
            Role::User,
            "I work as a nurse at the city hospital these days.",
        ),
        Message::new(
            Role::User,
            "Mon frère travaille comme infirmier dans un hôpital de Marseille.",
        ),
    ];
    let report = ingest(&container, "amelie", Some("c1"), history)
        .await
        .unwrap();
    let seen: Vec<(&str, usize)> = report
        .unread_languages
        .iter()
        .map(|u| (u.language.as_str(), u.messages))
        .collect();
    assert_eq!(seen, [("French", 2), ("German", 1)]);
    assert_eq!(
        report.unread_languages[0].to_string(),
        "2 messages in French were kept as earlier messages; facts are extracted from English only"
    );
    assert_eq!(report.episodes, 5, "every message is kept");
}
