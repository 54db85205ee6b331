//! FileStore: the conformance suites and corrupt-file handling.
#![cfg(feature = "file")]

use std::sync::Arc;

use agentmemory_core::testkit;
use agentmemory_core::{
    ConversationEvent, ConversationStore, KvStore, MemoryEntry, MemoryError, MemoryScope, Message,
};
use agentmemory_stores::FileStore;

#[tokio::test]
async fn kv_conformance() {
    let dir = tempfile::tempdir().expect("tempdir");
    testkit::kv::run_all(&FileStore::open(dir.path()).await.expect("open")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conversation_conformance() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_clear(&store).await;
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(store)).await;
}

#[tokio::test]
async fn files_stay_inside_the_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("store");
    let store = FileStore::open(&root).await.expect("open");
    let m = ConversationEvent::Message {
        message: Message::user("x"),
    };
    for id in ["../escape", "/abs/path", "..", "a/../../b"] {
        store.append(id, vec![m.clone()]).await.expect("append");
        store
            .put(id, MemoryEntry::new(MemoryScope::Working, "k", 1.into()))
            .await
            .expect("put");
    }
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read tempdir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(outside, vec![std::ffi::OsString::from("store")]);
    let mut ids = store.list_conversations().await.expect("list");
    ids.sort();
    assert_eq!(ids, ["..", "../escape", "/abs/path", "a/../../b"]);
}

#[tokio::test]
async fn corrupt_files_are_reported_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    let m = ConversationEvent::Message {
        message: Message::user("x"),
    };
    store.append("conv", vec![m.clone()]).await.expect("append");
    store
        .put("ns", MemoryEntry::new(MemoryScope::Working, "k", 1.into()))
        .await
        .expect("put");
    let conv_path = dir.path().join("conversations/conv.json");
    let kv_path = dir.path().join("kv/ns.json");
    let garbage = b"{\"format\":\"agentmem.conversation\",\"version\":1,\"events\":[{\"se".to_vec();
    std::fs::write(&conv_path, &garbage).expect("corrupt");
    std::fs::write(&kv_path, b"\x00\x01not json").expect("corrupt");

    let expect_corrupt = |err: MemoryError, path: &std::path::Path| {
        assert!(matches!(err, MemoryError::Corrupt { .. }), "got {err:?}");
        assert!(
            err.chain()
                .to_string()
                .contains(&path.display().to_string()),
            "error must name the file: {err}"
        );
    };
    expect_corrupt(store.load("conv").await.expect_err("load"), &conv_path);
    expect_corrupt(
        store.append("conv", vec![m]).await.expect_err("append"),
        &conv_path,
    );
    expect_corrupt(
        store.compact("conv", 5).await.expect_err("compact"),
        &conv_path,
    );
    expect_corrupt(store.get("ns", "k").await.expect_err("get"), &kv_path);
    expect_corrupt(
        store
            .put("ns", MemoryEntry::new(MemoryScope::Working, "k2", 2.into()))
            .await
            .expect_err("put"),
        &kv_path,
    );
    expect_corrupt(store.clear("ns").await.expect_err("clear"), &kv_path);
    assert!(store.cleanup_expired().await.is_err());
    assert_eq!(std::fs::read(&conv_path).expect("read"), garbage);
    assert_eq!(std::fs::read(&kv_path).expect("read"), b"\x00\x01not json");
}

#[tokio::test]
async fn newer_file_versions_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    std::fs::write(
        dir.path().join("conversations/future.json"),
        br#"{"format":"agentmem.conversation","version":9,"id":"future","last_seq":0,"events":[]}"#,
    )
    .expect("write");
    match store.load("future").await {
        Err(MemoryError::UnsupportedVersion { found: 9, .. }) => {}
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
}

#[tokio::test]
async fn data_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = testkit::conversation::sample_events();
    FileStore::open(dir.path())
        .await
        .expect("open")
        .append("c", events.clone())
        .await
        .expect("append");
    let store = FileStore::open(dir.path()).await.expect("reopen");
    let loaded: Vec<_> = store
        .load("c")
        .await
        .expect("load")
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(loaded, events);
}
