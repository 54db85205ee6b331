//! Memory that survives a restart: the same URL reopened gives back facts and conversations.
#![cfg(feature = "sqlite")]

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::conversation::{export, import, ConversationExport};
use agentmemory::prelude::*;
use agentmemory::stores::StoreUrl;

#[remember]
struct Assistant;

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are an assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

async fn open(url: &StoreUrl) -> Container {
    let container = url.open().await.unwrap();
    container.register_model("offline", Arc::new(OfflineModel::new()));
    container
}

#[tokio::test]
async fn facts_and_conversations_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url: StoreUrl = format!("sqlite://{}", dir.path().join("agentmem.db").display())
        .parse()
        .unwrap();

    let (conversation_id, before) = {
        let container = open(&url).await;
        let mut s = Session::builder(Assistant, &container)
            .user("alice")
            .max_tokens(200)
            .build()
            .await
            .unwrap();
        s.send("Hi, I'm Alice and I love museums").await.unwrap();
        for i in 0..15 {
            s.send(format!(
                "message {i} with enough words to need a summary soon"
            ))
            .await
            .unwrap();
        }
        assert!(s.memory().summary().is_some());
        (s.conversation_id().to_owned(), s.memory().snapshot())
    };

    // "Restart": everything reopened from the URL.
    let container = open(&url).await;
    let mut fresh = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    let reply = fresh
        .send("Which museums should I see this weekend?")
        .await
        .unwrap();
    assert!(reply.report.memory_block.unwrap().contains("museums"));

    let resumed = Session::builder(Assistant, &container)
        .user("alice")
        .max_tokens(200)
        .resume(&conversation_id)
        .build()
        .await
        .unwrap();
    assert_eq!(resumed.memory().snapshot(), before);

    let missing = Session::builder(Assistant, &container)
        .user("alice")
        .resume("nope")
        .build()
        .await;
    assert!(matches!(missing, Err(MemoryError::NotFound { .. })));
}

#[tokio::test]
async fn a_conversation_moves_between_stores_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite: StoreUrl = format!("sqlite://{}", dir.path().join("a.db").display())
        .parse()
        .unwrap();
    let container = open(&sqlite).await;
    let mut s = Session::builder(Assistant, &container)
        .user("alice")
        .build()
        .await
        .unwrap();
    s.send("I live in Oslo").await.unwrap();
    let log = container.resolve::<dyn ConversationStore>(None).unwrap();
    let json = export(log.as_ref(), s.conversation_id(), None)
        .await
        .unwrap()
        .to_json();

    let memory = open(&"memory://".parse().unwrap()).await;
    let target = memory.resolve::<dyn ConversationStore>(None).unwrap();
    let parsed = ConversationExport::from_json(&json).unwrap();
    let id = import(target.as_ref(), &parsed, Some("moved"))
        .await
        .unwrap();
    let resumed = Session::builder(Assistant, &memory)
        .user("alice")
        .resume(id)
        .build()
        .await
        .unwrap();
    assert_eq!(resumed.memory().all_messages(), s.memory().all_messages());
}

#[tokio::test]
async fn bad_store_urls_are_clear_errors() {
    for (url, needle) in [
        ("ftp://x", "unsupported scheme `ftp`"),
        ("sqlite://", "names no database file"),
        ("agentmem.db", "not a URL"),
    ] {
        let err = url.parse::<StoreUrl>().unwrap_err().to_string();
        assert!(err.contains(needle), "{url}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    std::fs::write(
        &garbage,
        b"this is not a database, just bytes ....................",
    )
    .unwrap();
    let url: StoreUrl = format!("sqlite://{}", garbage.display()).parse().unwrap();
    let err = url.open().await.unwrap_err().chain().to_string();
    assert!(err.contains("garbage.db"), "{err}");
}
