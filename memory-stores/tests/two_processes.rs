//! Two OS processes (this test binary re-executed twice) append to one SQLite file at
//! the same time; nothing is lost, seqs stay contiguous, each writer keeps its order,
//! and facts written by one process are seen by the other.
#![cfg(feature = "sqlite")]

use std::process::Command;

use agentmemory_core::{
    ConversationEvent, ConversationStore, FactCandidate, Message, UserMemoryStore,
};
use agentmemory_stores::SqliteStore;

/// Selects writer mode: `<db path>|<writer name>`.
const WRITER_ENV: &str = "AGENTMEM_TWO_PROCESS_WRITER";
const CONVERSATION: &str = "shared";
const PER_WRITER: usize = 300;

/// The writer: appends `PER_WRITER` messages, one transaction each, then stores a fact.
/// Does nothing when not in writer mode.
#[test]
fn writer_child() {
    let Ok(spec) = std::env::var(WRITER_ENV) else {
        return;
    };
    let (path, name) = spec.split_once('|').expect("spec is path|name");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = SqliteStore::open(path).await.expect("open");
        for i in 0..PER_WRITER {
            let message = Message::user(format!("{name}:{i}"));
            store
                .append(CONVERSATION, vec![ConversationEvent::Message { message }])
                .await
                .expect("append");
        }
        let fact = FactCandidate::new(format!("likes {name}"), 0.9).with_attribute("likes", name);
        store.upsert("alice", fact).await.expect("upsert");
    });
}

#[tokio::test]
async fn two_processes_share_one_sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("shared.db");
    // Create the schema first so both writers race on appends, not on migrations.
    drop(SqliteStore::open(&path).await.expect("create"));

    let exe = std::env::current_exe().expect("current exe");
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            Command::new(&exe)
                .args(["--exact", "writer_child", "--nocapture", "--test-threads=1"])
                .env(WRITER_ENV, format!("{}|{name}", path.display()))
                .spawn()
                .expect("spawn writer")
        })
        .collect();
    for mut child in children {
        assert!(
            child.wait().expect("wait").success(),
            "a writer process failed"
        );
    }

    let store = SqliteStore::open(&path).await.expect("reopen");
    let events = store.load(CONVERSATION).await.expect("load");
    assert_eq!(events.len(), 2 * PER_WRITER, "events lost");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seqs not contiguous");
    }
    for name in ["a", "b"] {
        let mine: Vec<usize> = events
            .iter()
            .filter_map(|e| match &e.event {
                ConversationEvent::Message { message } => message
                    .text()
                    .strip_prefix(&format!("{name}:"))
                    .and_then(|i| i.parse().ok()),
                _ => None,
            })
            .collect();
        assert_eq!(
            mine,
            (0..PER_WRITER).collect::<Vec<_>>(),
            "writer {name} out of order"
        );
    }
    let facts = store.list("alice").await.expect("list");
    let mut texts: Vec<_> = facts.iter().map(|f| f.text.as_str()).collect();
    texts.sort();
    assert_eq!(texts, ["likes a", "likes b"]);
}
