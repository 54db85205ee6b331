//! SqliteStore: the conformance suites, corruption, migrations and multi-writer safety.
#![cfg(feature = "sqlite")]

use std::sync::Arc;

use agentmemory_core::testkit;
use agentmemory_core::{ConversationEvent, ConversationStore, MemoryError, Message};
use agentmemory_stores::SqliteStore;

mod common;

async fn file_store(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(dir.path().join("memory.db"))
        .await
        .expect("open sqlite file")
}

#[tokio::test]
async fn kv_conformance_in_memory_and_file() {
    testkit::kv::run_all(&SqliteStore::open_in_memory().await.expect("open")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    testkit::kv::run_all(&file_store(&dir).await).await;
}

#[tokio::test]
async fn conversation_conformance_in_memory() {
    let store = SqliteStore::open_in_memory().await.expect("open");
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_clear(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conversation_conformance_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = file_store(&dir).await;
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(store)).await;
}

#[tokio::test]
async fn missing_parent_directories_are_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a").join("b").join("memory.db");
    let store = SqliteStore::open(&path)
        .await
        .expect("open in new directories");
    store
        .append(
            "c",
            vec![ConversationEvent::Message {
                message: Message::user("hi"),
            }],
        )
        .await
        .expect("append");
    drop(store);
    assert!(path.is_file());
    let reopened = SqliteStore::open(&path).await.expect("reopen");
    assert_eq!(reopened.load("c").await.expect("load").len(), 1);

    // A parent that is a file cannot be a directory: a typed store error, not a panic.
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").expect("write");
    let err = SqliteStore::open(blocker.join("memory.db"))
        .await
        .unwrap_err();
    assert!(matches!(err, MemoryError::Store { .. }), "{err}");
}

#[tokio::test]
async fn data_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = testkit::conversation::sample_events();
    {
        let store = file_store(&dir).await;
        store.append("c", events.clone()).await.expect("append");
    }
    let store = file_store(&dir).await;
    let loaded: Vec<_> = store
        .load("c")
        .await
        .expect("load")
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(loaded, events);
}

#[tokio::test]
async fn seqs_continue_after_compacting_everything() {
    let store = SqliteStore::open_in_memory().await.expect("open");
    let m = || ConversationEvent::Message {
        message: Message::user("x"),
    };
    store
        .append("c", vec![m(), m(), m()])
        .await
        .expect("append");
    assert_eq!(store.compact("c", 100).await.expect("compact"), 3);
    assert_eq!(store.append("c", vec![m()]).await.expect("append"), 4);
}

#[tokio::test]
async fn garbage_file_is_refused_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("garbage.db");
    let bytes: Vec<u8> = (0..8192u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&path, &bytes).expect("write garbage");
    let err = SqliteStore::open(&path)
        .await
        .expect_err("garbage must be refused");
    assert!(
        matches!(err, MemoryError::Corrupt { .. }),
        "expected Corrupt, got {err:?}"
    );
    let shown = err.chain().to_string();
    eprintln!("garbage file error: {shown}");
    assert!(
        shown.contains(&path.display().to_string()),
        "error must name the file: {shown}"
    );
    assert_eq!(
        std::fs::read(&path).expect("read back"),
        bytes,
        "file untouched"
    );
}

#[tokio::test]
async fn migrations_are_idempotent_and_newer_schemas_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("m.db");
    {
        let store = SqliteStore::open(&path).await.expect("first open");
        let m = ConversationEvent::Message {
            message: Message::user("kept"),
        };
        store.append("c", vec![m]).await.expect("append");
    }
    {
        let store = SqliteStore::open(&path).await.expect("second open");
        assert_eq!(store.load("c").await.expect("load").len(), 1);
    }
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    let version: u32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version");
    assert_eq!(version, SqliteStore::SCHEMA_VERSION);
    conn.pragma_update(None, "user_version", SqliteStore::SCHEMA_VERSION + 1)
        .expect("bump version");
    drop(conn);
    match SqliteStore::open(&path).await {
        Err(MemoryError::UnsupportedVersion {
            found, supported, ..
        }) => {
            assert_eq!(found, SqliteStore::SCHEMA_VERSION + 1);
            assert_eq!(supported, SqliteStore::SCHEMA_VERSION);
        }
        other => panic!("a newer schema must be refused, got {other:?}"),
    }
}

/// Two stores opened independently on one file (separate connections, separate
/// threads and runtimes) append at once: nothing lost, seqs contiguous.
#[test]
fn two_independent_stores_share_one_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("shared.db");
    const PER_WRITER: usize = 300;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                rt.block_on(async move {
                    let store = SqliteStore::open(&path).await.expect("open");
                    for i in 0..PER_WRITER {
                        let message = Message::user(format!("{w}-{i}"))
                            .with_metadata("w", serde_json::json!(w))
                            .with_metadata("i", serde_json::json!(i));
                        store
                            .append("shared", vec![ConversationEvent::Message { message }])
                            .await
                            .expect("append");
                    }
                })
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer thread");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let events = rt.block_on(async {
        let store = SqliteStore::open(&path).await.expect("open");
        store.load("shared").await.expect("load")
    });
    assert_eq!(events.len(), 2 * PER_WRITER);
    let mut next = [0u64; 2];
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seqs contiguous");
        let ConversationEvent::Message { message } = &e.event else {
            panic!("unexpected event");
        };
        let w = message.metadata["w"].as_u64().expect("w") as usize;
        assert_eq!(
            message.metadata["i"].as_u64(),
            Some(next[w]),
            "writer order"
        );
        next[w] += 1;
    }
}

/// A cached fact ranking sees adds, reinforcements, supersessions and deletes made
/// through another handle on the same file (another process, as far as SQLite knows).
#[tokio::test]
async fn cached_fact_ranking_sees_writes_from_another_handle() {
    let dir = tempfile::tempdir().expect("tempdir");
    common::check_cached_ranking_sees_another_writer(
        &file_store(&dir).await,
        &file_store(&dir).await,
        "ana",
    )
    .await;
}

/// An upsert through a kept index sees writes made through another handle.
#[tokio::test]
async fn cached_reconciliation_sees_writes_from_another_handle() {
    let dir = tempfile::tempdir().expect("tempdir");
    common::check_cached_reconciliation_sees_another_writer(
        &file_store(&dir).await,
        &file_store(&dir).await,
        "ana",
    )
    .await;
}

/// Two handles on one file, each writing through its own cache of ranked facts, always
/// rank exactly the facts the file holds.
#[tokio::test]
async fn interleaved_writers_see_each_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    common::check_interleaved_writers_see_each_other(
        &file_store(&dir).await,
        &file_store(&dir).await,
        "ana",
    )
    .await;
}
