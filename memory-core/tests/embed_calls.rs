//! How often a `Session` with semantic recall calls its embedder: once per question turn
//! (the query), never again for facts already stored, however many there are, and not at
//! all for a text it embedded a moment ago (`embed_stores` puts the stores behind one
//! `RecentEmbeddings`).
//!
//! A counting embedder records every text it is asked to embed; the session runs over an
//! in-memory fact store holding 1,000 facts, made semantic with `embed_stores`.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::model::OfflineModel;
use agentmemory_core::session::Agent;
use agentmemory_core::vector::embed_stores;
use agentmemory_core::{
    Container, Embedder, InMemoryConversationStore, Remember, RememberSpec, Result, Session,
};
use async_trait::async_trait;
use parking_lot::Mutex;

/// Embeds each text as a pseudo-random direction drawn from a hash of it (so no two
/// stored facts look like paraphrases of each other), and records every call.
#[derive(Default)]
struct Counting {
    calls: Mutex<Vec<Vec<String>>>,
    /// How long each call takes: a real embedder answers after milliseconds, on another
    /// thread, so searches started together are all waiting on it at once.
    delay: Option<std::time::Duration>,
}

const DIMENSIONS: usize = 64;

impl Counting {
    fn calls(&self) -> Vec<Vec<String>> {
        self.calls.lock().clone()
    }

    fn vector(text: &str) -> Vec<f32> {
        let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        (0..DIMENSIONS)
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect()
    }
}

#[async_trait]
impl Embedder for Counting {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.calls.lock().push(texts.to_vec());
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }

    fn dimensions(&self) -> Option<usize> {
        Some(DIMENSIONS)
    }
}

struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> = Some(RememberSpec::new().store("user_memory").top_k(5));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

const FACTS: usize = 1_000;

/// A container whose fact store holds `FACTS` facts for "alice", embedded by `embedder`.
async fn container(embedder: Arc<Counting>) -> Container {
    let container = Container::new();
    container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    embed_stores(&container, embedder.clone()).unwrap();
    let store = container
        .resolve::<dyn UserMemoryStore>(Some("user_memory"))
        .unwrap();
    for i in 0..FACTS {
        let value = format!("topic number {i}");
        let candidate =
            FactCandidate::new(format!("likes {value}"), 0.8).with_attribute("likes", value);
        store.upsert("alice", candidate).await.unwrap();
    }
    assert_eq!(store.list("alice").await.unwrap().len(), FACTS);
    container
}

async fn session(container: &Container) -> Session<Assistant> {
    Session::builder(Assistant, container)
        .user("alice")
        .max_tokens(4_000)
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_question_turn_embeds_the_question_once_and_no_stored_fact() {
    let embedder = Arc::new(Counting::default());
    let container = container(embedder.clone()).await;
    let seeded = embedder.calls().len();
    assert_eq!(
        seeded, FACTS,
        "each stored fact is embedded once, when written"
    );

    let mut session = session(&container).await;
    let questions = [
        "What topics do I like?",
        "Could you recommend something for tomorrow evening?",
        "Which topic number is my favourite?",
        "What topics do I like?",
    ];
    for (turn, question) in questions.iter().enumerate() {
        let before = embedder.calls().len();
        let reply = session.send(*question).await.unwrap();
        assert!(
            reply
                .report
                .fact_changes
                .iter()
                .all(|c| c.kind() == "ignored"),
            "{question:?} stored something: {:?}",
            reply.report.fact_changes
        );
        let calls = embedder.calls();
        let this_turn = &calls[before..];
        if questions[..turn].contains(question) {
            assert!(
                this_turn.is_empty(),
                "turn {turn} ({question:?}) was asked before: nothing to embed, got {this_turn:?}"
            );
        } else {
            assert_eq!(
                this_turn,
                [vec![question.to_string()]],
                "turn {turn} ({question:?}) must embed just the question, once"
            );
        }
    }
    assert_eq!(embedder.calls().len(), seeded + questions.len() - 1);
}

#[tokio::test]
async fn a_statement_turn_embeds_only_new_text_never_stored_facts() {
    let embedder = Arc::new(Counting::default());
    let container = container(embedder.clone()).await;
    let stored: Vec<String> = embedder.calls().into_iter().flatten().collect();
    let seeded = stored.len();

    let mut session = session(&container).await;
    for (n, statement) in ["I live in Porto", "I love jazz", "I love jazz"]
        .into_iter()
        .enumerate()
    {
        let before = embedder.calls().len();
        let reply = session.send(statement).await.unwrap();
        assert!(
            reply
                .report
                .fact_changes
                .iter()
                .any(|c| c.kind() != "ignored"),
            "{statement:?} stored nothing"
        );
        let calls = embedder.calls();
        let texts: Vec<&String> = calls[before..].iter().flatten().collect();
        if n == 2 {
            // Said a moment ago: the message and its fact are remembered embeddings.
            assert!(texts.is_empty(), "{statement:?} embedded {texts:?}");
            continue;
        }
        // The search for the statement, and at most the fact it produced.
        assert!(
            (1..=2).contains(&texts.len()),
            "{statement:?} embedded {texts:?}"
        );
        assert_eq!(texts[0], statement, "the message is embedded first, once");
        for text in &texts {
            assert!(
                !stored.contains(text),
                "{statement:?} re-embedded a stored fact: {text:?}"
            );
        }
    }
    // However many facts are stored, a statement costs at most two embeddings: the
    // message (for the search) and the candidate fact (to store it or to match it
    // against a paraphrase already held).
    assert!(embedder.calls().len() <= seeded + 2 * 3);
}

/// Facts and episodes are searched at the same time: with an embedder that takes a while
/// (as a real one does), both searches ask for the question's vector before either has
/// it. The model still runs once for the question: the second asker waits for the first.
#[tokio::test]
async fn a_turn_embeds_its_text_once_although_facts_and_episodes_ask_at_once() {
    let embedder = Arc::new(Counting {
        delay: Some(std::time::Duration::from_millis(20)),
        ..Counting::default()
    });
    let container = Container::new();
    container.register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()));
    // Episodes kept in a vector store, so they are embedded and searched by meaning too.
    container.register_vectors(
        "episodes",
        Arc::new(agentmemory_core::InMemoryVectorStore::new()),
    );
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    embed_stores(&container, embedder.clone()).unwrap();
    let mut session = session(&container).await;
    for text in [
        "I moved to York last week and I cycle to work now.",
        "Which city do I live in these days?",
    ] {
        let before = embedder.calls().len();
        session.send(text).await.unwrap();
        let asked: usize = embedder.calls()[before..]
            .iter()
            .flatten()
            .filter(|t| t.as_str() == text)
            .count();
        assert_eq!(
            asked,
            1,
            "{text:?} went to the model {asked} times: {:?}",
            &embedder.calls()[before..]
        );
    }
}
