//! `SqliteStore::conversation_summaries` counts in the database: what `agentmem sessions
//! list` shows of each conversation, equal to what replaying every log gives, without
//! decoding the events.
//!
//! `cargo test --release -p agentmemory-stores --features sqlite --test sqlite_summaries
//! -- --ignored --nocapture measure` times a listing of 1,000 conversations of 1,000
//! messages each, by replaying every log (what the CLI did) and by the summaries.
#![cfg(feature = "sqlite")]

use std::time::Instant;

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::conversation::{replay, ConversationSummary};
use agentmemory_core::{ConversationEvent, ConversationStore, Message};
use agentmemory_stores::SqliteStore;

/// Fills `store` with `conversations` logs of `messages` messages (a `Started` event
/// first, a summary update every 100 messages).
async fn fill(store: &SqliteStore, conversations: usize, messages: usize) {
    for c in 0..conversations {
        let id = format!("conv-{c:05}");
        let mut events = vec![ConversationEvent::Started {
            user_id: format!("user-{}", c % 37),
            agent: "agent".into(),
        }];
        for m in 0..messages {
            let message = if m % 2 == 0 {
                Message::user(format!("message {m} of conversation {c} about the garden"))
            } else {
                Message::assistant(format!("reply {m}: the tomatoes need water"))
            };
            events.push(ConversationEvent::Message { message });
            if m % 100 == 99 {
                events.push(ConversationEvent::SummaryUpdated {
                    summary: format!("up to message {m}"),
                    keep_recent: 10,
                });
            }
        }
        store.append(&id, events).await.expect("append");
    }
}

#[tokio::test]
async fn summaries_count_what_the_logs_hold() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("s.db")).await.unwrap();
    fill(&store, 12, 150).await;
    store
        .append(
            "conv-00003",
            vec![ConversationEvent::Started {
                user_id: "someone-else".into(),
                agent: "other".into(),
            }],
        )
        .await
        .unwrap();
    let summaries = store.conversation_summaries().await.unwrap();
    assert_eq!(summaries.len(), 12);
    for summary in &summaries {
        let events = store.load(&summary.id).await.unwrap();
        assert_eq!(*summary, ConversationSummary::of(&summary.id, &events));
    }
    assert_eq!(summaries[3].owner.as_ref().unwrap().user_id, "someone-else");
    assert_eq!(summaries[0].messages, 150);
}

#[tokio::test]
#[ignore = "a measurement: fills 1,000 conversations of 1,000 messages"]
async fn measure() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("s.db")).await.unwrap();
    let started = Instant::now();
    fill(&store, 1_000, 1_000).await;
    println!("filled 1,000 x 1,000 in {:.1?}", started.elapsed());

    let started = Instant::now();
    let mut replayed = 0usize;
    for id in store.list_conversations().await.unwrap() {
        let events = store.load(&id).await.unwrap();
        let mut memory = ShortTermMemory::new(usize::MAX);
        replay(&events, &mut memory);
        replayed += events.len();
    }
    let by_replay = started.elapsed();

    let started = Instant::now();
    let summaries = store.conversation_summaries().await.unwrap();
    let by_summaries = started.elapsed();
    assert_eq!(summaries.len(), 1_000);
    println!(
        "list by replaying every log ({replayed} events): {by_replay:.2?}; \
         by conversation_summaries: {by_summaries:.2?}"
    );
}
