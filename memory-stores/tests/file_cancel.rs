//! FileStore writes that are cancelled mid-flight (their future dropped while the
//! blocking file write runs) never let another write in before they finish: every
//! acknowledged write is on disk afterwards, seqs stay contiguous, nothing interleaves.
#![cfg(feature = "file")]

use std::collections::BTreeSet;
use std::time::Duration;

use agentmemory_core::{
    ConversationEvent, ConversationStore, KvStore, MemoryEntry, MemoryScope, Message,
};
use agentmemory_stores::FileStore;

const ROUNDS: usize = 60;

/// Each round starts a write that is aborted while it runs (after 0–1.5 ms, while the
/// blocking file write is under way) and then, at once, a write that completes.
/// `write(i)` is the write of number `i`; returns the numbers acknowledged.
async fn race<F, Fut>(write: F) -> BTreeSet<usize>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = bool> + Send + 'static,
{
    let mut acked = BTreeSet::new();
    for round in 0..ROUNDS {
        let cancelled = tokio::spawn(write(2 * round + 1));
        tokio::time::sleep(Duration::from_micros(100 * (round % 16) as u64)).await;
        cancelled.abort();
        let completed = tokio::spawn(write(2 * round));
        if let Ok(true) = completed.await {
            acked.insert(2 * round);
        }
        if let Ok(true) = cancelled.await {
            acked.insert(2 * round + 1);
        }
    }
    acked
}

/// Big enough that rewriting the file takes a while.
async fn prefill_conversation(store: &FileStore) {
    let events: Vec<ConversationEvent> = (0..3000)
        .map(|i| ConversationEvent::Message {
            message: Message::user(format!("filler {i} {}", "x".repeat(100))),
        })
        .collect();
    store.append("c", events).await.expect("prefill");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelled_appends_lose_and_interleave_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    prefill_conversation(&store).await;
    let acked = race(|i| {
        let store = store.clone();
        async move {
            let event = ConversationEvent::Message {
                message: Message::user(format!("m{i}")),
            };
            store.append("c", vec![event]).await.is_ok()
        }
    })
    .await;
    // The files on disk, read by a fresh store.
    let reopened = FileStore::open(dir.path()).await.expect("reopen");
    let events = reopened.load("c").await.expect("load");
    for (n, e) in events.iter().enumerate() {
        assert_eq!(e.seq, n as u64 + 1, "seqs not contiguous");
    }
    let stored: BTreeSet<usize> = events
        .iter()
        .filter_map(|e| match &e.event {
            ConversationEvent::Message { message } => message
                .text()
                .strip_prefix('m')
                .and_then(|i| i.parse().ok()),
            _ => None,
        })
        .collect();
    assert_eq!(
        stored.len() + 3000,
        events.len(),
        "an event was written twice"
    );
    let lost: Vec<_> = acked.difference(&stored).collect();
    assert!(lost.is_empty(), "acknowledged appends lost: {lost:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelled_puts_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    for i in 0..30 {
        let filler = MemoryEntry::new(
            MemoryScope::LongTerm,
            format!("filler{i}"),
            "x".repeat(10_000).into(),
        );
        store.put("ns", filler).await.expect("prefill");
    }
    let acked = race(|i| {
        let store = store.clone();
        async move {
            let entry = MemoryEntry::new(MemoryScope::LongTerm, format!("k{i}"), "v".into());
            store.put("ns", entry).await.is_ok()
        }
    })
    .await;
    let reopened = FileStore::open(dir.path()).await.expect("reopen");
    let stored: BTreeSet<usize> = reopened
        .list("ns")
        .await
        .expect("list")
        .iter()
        .filter_map(|e| e.key.strip_prefix('k').and_then(|i| i.parse().ok()))
        .collect();
    let lost: Vec<_> = acked.difference(&stored).collect();
    assert!(lost.is_empty(), "acknowledged puts lost: {lost:?}");
}
