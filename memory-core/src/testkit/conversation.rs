//! Conformance tests for the [`ConversationStore`] trait.
//!
//! Every check works in fresh, randomly named conversations, so the suite can run again
//! and again against one long-lived store.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use chrono::Utc;
use serde_json::json;

use crate::buffer::{ShortTermSnapshot, SNAPSHOT_VERSION};
use crate::conversation::{AppendIf, ConversationEvent, ConversationStore, StoredEvent};
use crate::facts::{FactCandidate, FactChange, MemoryFact};
use crate::message::{ContentBlock, Message, ToolCall};

/// A fresh conversation id, unique to this run.
fn fresh(tag: &str) -> String {
    format!("testkit:conv:{tag}:{}", ulid::Ulid::new())
}

fn msg(text: &str) -> ConversationEvent {
    ConversationEvent::Message {
        message: Message::user(text),
    }
}

fn text_of(e: &StoredEvent) -> String {
    match &e.event {
        ConversationEvent::Message { message } => message.text(),
        other => panic!("expected a message event, got {other:?}"),
    }
}

/// One event of every variant, with rich content.
pub fn sample_events() -> Vec<ConversationEvent> {
    let now = Utc::now();
    let tool_ask = Message::assistant_with_tools(
        vec![
            ContentBlock::Text {
                text: "checking the weather".into(),
            },
            ContentBlock::Image {
                url: "https://example.com/map.png".into(),
                media_type: Some("image/png".into()),
            },
            ContentBlock::Json {
                value: json!({"units": "metric", "days": [1, 2]}),
            },
        ],
        vec![
            ToolCall::new("call-1", "weather", json!({"city": "Oslo"})),
            ToolCall::new("call-2", "clock", json!(null)),
        ],
    )
    .with_metadata("model", json!("m-1"));
    let fact = MemoryFact::from_candidate(
        "user-1",
        FactCandidate::new("lives in Oslo", 0.8).with_attribute("location", "Oslo"),
        now,
    );
    let mut newer = MemoryFact::from_candidate(
        "user-1",
        FactCandidate::new("lives in Bergen", 0.9).with_attribute("location", "Bergen"),
        now,
    );
    newer.reinforcement_count = 2;
    let mut old = fact.clone();
    old.superseded_by = Some(newer.id.clone());
    vec![
        ConversationEvent::Started {
            user_id: "user-1".into(),
            agent: "tester".into(),
        },
        ConversationEvent::Message {
            message: Message::system("you are terse"),
        },
        ConversationEvent::Message { message: tool_ask },
        ConversationEvent::Message {
            message: Message::tool_result("call-1", "-3°C, snow ❄ \"quoted\" \n newline"),
        },
        ConversationEvent::SummaryUpdated {
            summary: "the user asked about Oslo".into(),
            keep_recent: 4,
        },
        ConversationEvent::FactsChanged {
            changes: vec![
                FactChange::Added { fact: fact.clone() },
                FactChange::Reinforced { fact: fact.clone() },
                FactChange::Superseded { old, new: newer },
                FactChange::Ignored {
                    candidate: FactCandidate::new("", 0.5),
                    reason: "empty fact text".into(),
                },
            ],
        },
        ConversationEvent::Snapshot {
            snapshot: ShortTermSnapshot {
                version: SNAPSHOT_VERSION,
                messages: vec![Message::user("hi"), Message::assistant("hello")],
                summary: Some("earlier: greetings".into()),
            },
        },
        ConversationEvent::Unanswered {
            message_id: ulid::Ulid::new(),
        },
    ]
}

/// Runs every conversation check.
pub async fn run_all(store: &dyn ConversationStore) {
    check_append_seqs(store).await;
    check_roundtrip_all_variants(store).await;
    check_load_since(store).await;
    check_isolation(store).await;
    check_list_conversations(store).await;
    check_summaries(store).await;
    check_delete(store).await;
    check_compact(store).await;
    check_concurrent_appenders(store).await;
    check_readers_see_whole_batches(store).await;
    check_message_appends_are_idempotent(store).await;
    check_save_replaces(store).await;
    check_append_if(store).await;
    check_append_if_under_contention(store).await;
}

/// `save` replaces a log: exactly the saved events, seqs from 1, a message repeated in
/// the batch kept once, the replaced messages' ids forgotten (appending one again logs
/// it), other conversations untouched; saving nothing deletes the conversation.
pub async fn check_save_replaces(store: &dyn ConversationStore) {
    let id = fresh("save");
    let other = fresh("save-other");
    let old = Message::user("old");
    store
        .append(
            &id,
            vec![
                ConversationEvent::Message {
                    message: old.clone(),
                },
                msg("older"),
                msg("oldest"),
            ],
        )
        .await
        .expect("append");
    store
        .append(&other, vec![msg("keep")])
        .await
        .expect("append");

    let new = Message::assistant("new");
    let last = store
        .save(
            &id,
            vec![
                msg("first"),
                ConversationEvent::Message {
                    message: new.clone(),
                },
                ConversationEvent::Message {
                    message: new.clone(),
                },
            ],
        )
        .await
        .expect("save");
    assert_eq!(last, 2, "the repeated message is kept once");
    let events = store.load(&id).await.expect("load");
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(
        events.iter().map(text_of).collect::<Vec<_>>(),
        vec!["first", "new"]
    );
    // Appends continue after the saved log; the replaced message is new to it.
    let after = store
        .append(&id, vec![ConversationEvent::Message { message: old }])
        .await
        .expect("append after save");
    assert_eq!(after, 3);
    assert_eq!(
        store
            .append(&id, vec![ConversationEvent::Message { message: new }])
            .await
            .expect("append a saved message again"),
        3,
        "a saved message is known to the log"
    );
    assert_eq!(store.load(&other).await.expect("load other").len(), 1);

    // Saving into an unknown conversation creates it.
    let created = fresh("save-new");
    assert_eq!(
        store
            .save(&created, vec![msg("a")])
            .await
            .expect("save new"),
        1
    );
    assert!(store
        .list_conversations()
        .await
        .expect("list")
        .contains(&created));

    // Saving nothing deletes.
    assert_eq!(store.save(&id, Vec::new()).await.expect("save empty"), 0);
    assert!(store.load(&id).await.expect("load").is_empty());
    assert!(!store
        .list_conversations()
        .await
        .expect("list")
        .contains(&id));
    assert!(
        store.save("", vec![msg("x")]).await.is_err(),
        "empty id refused"
    );
}

/// `clear_conversations` deletes every conversation and says how many there were; the store works
/// afterwards. It empties the whole store, so it is not part of [`run_all`]: run it on a
/// store of its own (a temporary file, a fresh schema or key prefix).
pub async fn check_clear(store: &dyn ConversationStore) {
    let before = store.list_conversations().await.expect("list").len();
    let a = fresh("clear-a");
    let b = fresh("clear-b");
    store.append(&a, vec![msg("one")]).await.expect("append");
    store
        .append(&b, vec![msg("two"), msg("three")])
        .await
        .expect("append");
    assert_eq!(
        store.clear_conversations().await.expect("clear"),
        before + 2
    );
    assert!(store.list_conversations().await.expect("list").is_empty());
    assert!(store.load(&a).await.expect("load").is_empty());
    assert!(store.load(&b).await.expect("load").is_empty());
    assert_eq!(store.clear_conversations().await.expect("clear again"), 0);
    assert_eq!(
        store.append(&a, vec![msg("again")]).await.expect("append"),
        1
    );
    assert_eq!(store.load(&a).await.expect("load").len(), 1);
    // Leaves the store empty.
    assert_eq!(store.clear_conversations().await.expect("clear last"), 1);
}

/// Appending a message whose id the log already holds is a no-op (a retried turn logs
/// its user message once); duplicates inside one batch are dropped too; other events are
/// always appended; a deleted conversation forgets its ids.
pub async fn check_message_appends_are_idempotent(store: &dyn ConversationStore) {
    let id = fresh("idempotent");
    let user = Message::user("log me once");
    let reply = Message::assistant("logged");
    assert_eq!(
        store
            .append(
                &id,
                vec![ConversationEvent::Message {
                    message: user.clone()
                }]
            )
            .await
            .unwrap(),
        1
    );
    // The retry: the same message again, then the reply, and the reply twice in one batch.
    let last = store
        .append(
            &id,
            vec![
                ConversationEvent::Message {
                    message: user.clone(),
                },
                ConversationEvent::Message {
                    message: reply.clone(),
                },
                ConversationEvent::Message {
                    message: reply.clone(),
                },
            ],
        )
        .await
        .unwrap();
    assert_eq!(last, 2, "only the reply is new");
    // A batch of nothing but known messages appends nothing and returns the last seq.
    assert_eq!(
        store
            .append(
                &id,
                vec![ConversationEvent::Message {
                    message: user.clone()
                }]
            )
            .await
            .unwrap(),
        2
    );
    // Non-message events are not deduplicated.
    let summary = ConversationEvent::SummaryUpdated {
        summary: "s".into(),
        keep_recent: 1,
    };
    store.append(&id, vec![summary.clone()]).await.unwrap();
    assert_eq!(store.append(&id, vec![summary]).await.unwrap(), 4);
    let events = store.load(&id).await.unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
    assert_eq!(text_of(&events[0]), "log me once");
    assert_eq!(text_of(&events[1]), "logged");
    // Ids are per conversation: another conversation may log the same message.
    let other = fresh("idempotent-other");
    assert_eq!(
        store
            .append(
                &other,
                vec![ConversationEvent::Message {
                    message: user.clone()
                }]
            )
            .await
            .unwrap(),
        1
    );
    // After a delete, the conversation starts afresh and the message may be logged again.
    assert!(store.delete(&id).await.unwrap());
    assert_eq!(
        store
            .append(&id, vec![ConversationEvent::Message { message: user }])
            .await
            .unwrap(),
        1
    );
    store.delete(&id).await.unwrap();
    store.delete(&other).await.unwrap();
}

/// Seqs start at 1 and increase by one per event; `append` returns the last one.
pub async fn check_append_seqs(store: &dyn ConversationStore) {
    let id = fresh("seqs");
    assert_eq!(
        store.append(&id, vec![]).await.expect("empty append"),
        0,
        "an empty append to a new conversation returns 0"
    );
    assert_eq!(store.append(&id, vec![msg("a")]).await.expect("append"), 1);
    assert_eq!(
        store
            .append(&id, vec![msg("b"), msg("c"), msg("d")])
            .await
            .expect("append"),
        4
    );
    assert_eq!(store.append(&id, vec![]).await.expect("empty append"), 4);
    assert_eq!(store.append(&id, vec![msg("e")]).await.expect("append"), 5);
    let events = store.load(&id).await.expect("load");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    let texts: Vec<String> = events.iter().map(text_of).collect();
    assert_eq!(texts, ["a", "b", "c", "d", "e"]);
    assert!(store
        .load(&fresh("unknown"))
        .await
        .expect("load")
        .is_empty());
}

/// Every event variant comes back exactly as appended.
pub async fn check_roundtrip_all_variants(store: &dyn ConversationStore) {
    let id = fresh("roundtrip");
    let events = sample_events();
    let before = Utc::now() - chrono::Duration::seconds(5);
    let last = store.append(&id, events.clone()).await.expect("append");
    assert_eq!(last, events.len() as u64);
    let loaded = store.load(&id).await.expect("load");
    assert_eq!(loaded.len(), events.len());
    for (i, (got, want)) in loaded.iter().zip(&events).enumerate() {
        assert_eq!(got.seq, i as u64 + 1);
        assert_eq!(&got.event, want, "event {i} did not round-trip");
        assert!(got.at >= before, "stored time is plausible");
    }
}

/// `load_since(after)` returns exactly the events with `seq > after`.
pub async fn check_load_since(store: &dyn ConversationStore) {
    let id = fresh("since");
    let events: Vec<_> = (1..=10).map(|i| msg(&format!("m{i}"))).collect();
    store.append(&id, events).await.expect("append");
    for after in [0u64, 1, 5, 9, 10, 11, 1000] {
        let got = store.load_since(&id, after).await.expect("load_since");
        let seqs: Vec<u64> = got.iter().map(|e| e.seq).collect();
        let want: Vec<u64> = (after + 1..=10).collect();
        assert_eq!(seqs, want, "load_since({after})");
        for e in &got {
            assert_eq!(text_of(e), format!("m{}", e.seq));
        }
    }
}

/// Conversations never see each other's events, whatever their ids contain.
pub async fn check_isolation(store: &dyn ConversationStore) {
    let base = fresh("iso");
    let ids = [
        base.clone(),
        format!("{base}*"),
        format!("{base}%"),
        format!("{base}/../x"),
        format!("{base}'; DELETE FROM events; --"),
        format!("{base}_"),
    ];
    for (i, id) in ids.iter().enumerate() {
        let n = i + 1;
        let events = (0..n).map(|j| msg(&format!("{i}-{j}"))).collect();
        assert_eq!(store.append(id, events).await.expect("append"), n as u64);
    }
    for (i, id) in ids.iter().enumerate() {
        let got = store.load(id).await.expect("load");
        let texts: Vec<String> = got.iter().map(text_of).collect();
        let want: Vec<String> = (0..i + 1).map(|j| format!("{i}-{j}")).collect();
        assert_eq!(texts, want, "conversation {id:?} saw another's events");
    }
    assert!(store.delete(&ids[0]).await.expect("delete"));
    assert_eq!(store.load(&ids[1]).await.expect("load").len(), 2);
    assert_eq!(store.load(&ids[5]).await.expect("load").len(), 6);
}

/// `list_conversations` contains every conversation appended to, sorted.
pub async fn check_list_conversations(store: &dyn ConversationStore) {
    let a = fresh("list-a");
    let b = fresh("list-b");
    store.append(&b, vec![msg("x")]).await.expect("append");
    store.append(&a, vec![msg("y")]).await.expect("append");
    let all = store.list_conversations().await.expect("list");
    assert!(
        all.contains(&a) && all.contains(&b),
        "missing ids in {all:?}"
    );
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted, "list_conversations must be sorted");
}

/// `conversation_summaries` counts what `load` returns: the last owner, the events, the
/// messages, the time of the last event.
pub async fn check_summaries(store: &dyn ConversationStore) {
    let id = fresh("summaries");
    let started = |user: &str| ConversationEvent::Started {
        user_id: user.into(),
        agent: "agent".into(),
    };
    store
        .append(&id, vec![started("first"), msg("one"), msg("two")])
        .await
        .expect("append");
    store
        .append(
            &id,
            vec![
                ConversationEvent::SummaryUpdated {
                    summary: "said one".into(),
                    keep_recent: 1,
                },
                started("second"),
                msg("three"),
            ],
        )
        .await
        .expect("append");
    let summaries = store.conversation_summaries().await.expect("summaries");
    let ids: Vec<&str> = summaries.iter().map(|s| s.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "summaries must be sorted by id");
    let ours = summaries
        .iter()
        .find(|s| s.id == id)
        .expect("the conversation is summarised");
    let events = store.load(&id).await.expect("load");
    assert_eq!(
        *ours,
        crate::conversation::ConversationSummary::of(&id, &events)
    );
    assert_eq!((ours.events, ours.messages), (6, 3));
    assert_eq!(
        ours.owner.as_ref().map(|o| o.user_id.as_str()),
        Some("second")
    );
}

/// `delete` removes a whole log and says whether it existed.
pub async fn check_delete(store: &dyn ConversationStore) {
    let id = fresh("delete");
    store
        .append(&id, vec![msg("a"), msg("b")])
        .await
        .expect("append");
    assert!(store.delete(&id).await.expect("delete"), "existed");
    assert!(store.load(&id).await.expect("load").is_empty());
    assert!(!store.delete(&id).await.expect("delete again"));
    assert!(!store
        .list_conversations()
        .await
        .expect("list")
        .contains(&id));
    assert!(!store.delete(&fresh("never")).await.expect("delete unknown"));
}

/// `compact(before)` drops only events with `seq < before`; later appends keep counting.
pub async fn check_compact(store: &dyn ConversationStore) {
    let id = fresh("compact");
    let events: Vec<_> = (1..=6).map(|i| msg(&format!("m{i}"))).collect();
    store.append(&id, events).await.expect("append");
    assert_eq!(store.compact(&id, 4).await.expect("compact"), 3);
    let seqs: Vec<u64> = store
        .load(&id)
        .await
        .expect("load")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [4, 5, 6]);
    assert_eq!(store.compact(&id, 4).await.expect("compact again"), 0);
    assert_eq!(store.compact(&id, 1).await.expect("compact none"), 0);
    assert_eq!(
        store.append(&id, vec![msg("m7")]).await.expect("append"),
        7,
        "seqs continue after compaction"
    );
    let got = store.load_since(&id, 5).await.expect("load_since");
    let texts: Vec<String> = got.iter().map(text_of).collect();
    assert_eq!(texts, ["m6", "m7"]);
    assert_eq!(store.compact(&fresh("none"), 10).await.expect("compact"), 0);

    // Compacting every event must not reset the numbering: a reader that has seen up
    // to seq 7 asks for `load_since(7)` and must get what comes next.
    assert_eq!(store.compact(&id, 100).await.expect("compact all"), 4);
    assert!(store.load(&id).await.expect("load").is_empty());
    assert_eq!(
        store.append(&id, vec![msg("m8")]).await.expect("append"),
        8,
        "seqs continue after compacting every event"
    );
    let got = store.load_since(&id, 7).await.expect("load_since");
    assert_eq!(got.iter().map(text_of).collect::<Vec<_>>(), ["m8"]);
}

const WRITERS: usize = 32;
const APPENDS_PER_WRITER: usize = 6;

fn writer_event(writer: usize, n: usize) -> ConversationEvent {
    ConversationEvent::Message {
        message: Message::user(format!("w{writer}-{n}"))
            .with_metadata("writer", json!(writer))
            .with_metadata("n", json!(n)),
    }
}

/// The events writer `w` appends: single events and pairs (a pair must stay adjacent).
fn writer_batches(writer: usize) -> Vec<Vec<ConversationEvent>> {
    let mut n = 0;
    (0..APPENDS_PER_WRITER)
        .map(|i| {
            let size = if i % 2 == 0 { 1 } else { 2 };
            (0..size)
                .map(|_| {
                    n += 1;
                    writer_event(writer, n)
                })
                .collect()
        })
        .collect()
}

fn verify_concurrent_log(events: &[StoredEvent]) {
    let per_writer: usize = writer_batches(0).iter().map(Vec::len).sum();
    assert_eq!(
        events.len(),
        WRITERS * per_writer,
        "concurrent appends lost or duplicated events"
    );
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seqs must be contiguous 1..=N");
    }
    let mut next = vec![1u64; WRITERS];
    let mut prev: Option<(u64, u64)> = None;
    for e in events {
        let ConversationEvent::Message { message } = &e.event else {
            panic!("unexpected event {:?}", e.event);
        };
        let w = message.metadata["writer"].as_u64().expect("writer tag");
        let n = message.metadata["n"].as_u64().expect("n tag");
        let slot = &mut next[w as usize];
        assert_eq!(n, *slot, "writer {w}'s events out of order");
        *slot += 1;
        // The second event of a pair (n = 3, 6, 9) directly follows the first.
        if n % 3 == 0 {
            assert_eq!(prev, Some((w, n - 1)), "a batch was interleaved");
        }
        prev = Some((w, n));
    }
}

/// Polls many futures together in one task (the stores race on their own threads).
async fn join_all<'a>(mut futures: Vec<Pin<Box<dyn Future<Output = ()> + Send + 'a>>>) {
    std::future::poll_fn(move |cx| {
        futures.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if futures.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}

/// 32 concurrent writers append to one conversation: nothing is lost, seqs are
/// `1..=N`, each writer's events keep their order and batches stay contiguous.
pub async fn check_concurrent_appenders(store: &dyn ConversationStore) {
    let id = fresh("concurrent");
    let futures: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = (0..WRITERS)
        .map(|w| {
            let id = id.clone();
            Box::pin(async move {
                let mut last = 0;
                for batch in writer_batches(w) {
                    let seq = store.append(&id, batch).await.expect("concurrent append");
                    assert!(seq > last, "a writer's seqs must increase");
                    last = seq;
                }
            }) as Pin<Box<dyn Future<Output = ()> + Send + '_>>
        })
        .collect();
    join_all(futures).await;
    verify_concurrent_log(&store.load(&id).await.expect("load"));
}

/// The same as [`check_concurrent_appenders`] with one spawned tokio task per writer,
/// for stores that can be shared as `Arc<dyn ConversationStore>` (needs a multi-thread
/// runtime to run the writers in parallel).
pub async fn check_concurrent_appenders_spawned(store: Arc<dyn ConversationStore>) {
    let id = fresh("spawned");
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..WRITERS {
        let store = Arc::clone(&store);
        let id = id.clone();
        tasks.spawn(async move {
            let mut last = 0;
            for batch in writer_batches(w) {
                let seq = store.append(&id, batch).await.expect("concurrent append");
                assert!(seq > last, "a writer's seqs must increase");
                last = seq;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("writer task panicked");
    }
    verify_concurrent_log(&store.load(&id).await.expect("load"));
}

/// Readers running beside a writer see each appended batch whole or not at all, and
/// always a contiguous `1..=n` prefix.
pub async fn check_readers_see_whole_batches(store: &dyn ConversationStore) {
    const BATCH: usize = 4;
    const BATCHES: usize = 25;
    let id = fresh("readers");
    let writer = {
        let id = id.clone();
        Box::pin(async move {
            for b in 0..BATCHES {
                let batch = (0..BATCH).map(|i| msg(&format!("{b}-{i}"))).collect();
                store.append(&id, batch).await.expect("append");
            }
        }) as Pin<Box<dyn Future<Output = ()> + Send + '_>>
    };
    let mut futures = vec![writer];
    for _ in 0..8 {
        let id = id.clone();
        futures.push(Box::pin(async move {
            for _ in 0..BATCHES {
                let events = store.load(&id).await.expect("load");
                assert_eq!(events.len() % BATCH, 0, "a reader saw part of a batch");
                for (i, e) in events.iter().enumerate() {
                    assert_eq!(e.seq, i as u64 + 1, "a reader saw a gap");
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    join_all(futures).await;
    assert_eq!(store.load(&id).await.expect("load").len(), BATCH * BATCHES);
}

/// `append_if` appends only at the expected last seq and says where the log is otherwise;
/// a refused batch writes nothing (not even a new conversation), and a message already
/// logged is skipped as `append` skips it.
pub async fn check_append_if(store: &dyn ConversationStore) {
    let id = fresh("append-if");
    let first = Message::user("first");
    let at = |n: u64| AppendIf::Appended { last_seq: n };
    let refused = |n: u64| AppendIf::Conflict { last_seq: n };
    let said = |m: &Message| ConversationEvent::Message { message: m.clone() };
    assert_eq!(
        store.append_if(&id, 0, vec![said(&first)]).await.unwrap(),
        at(1)
    );
    assert_eq!(
        store
            .append_if(&id, 0, vec![msg("also first")])
            .await
            .unwrap(),
        refused(1),
        "a second writer that read the empty log is refused"
    );
    assert_eq!(store.load(&id).await.unwrap().len(), 1);
    assert_eq!(
        store
            .append_if(&id, 1, vec![msg("second"), msg("third")])
            .await
            .unwrap(),
        at(3)
    );
    assert_eq!(
        store.append_if(&id, 5, vec![msg("ahead")]).await.unwrap(),
        refused(3)
    );
    assert_eq!(
        store.append_if(&id, 2, vec![msg("behind")]).await.unwrap(),
        refused(3)
    );
    // The first message again: skipped, the log unchanged.
    assert_eq!(
        store.append_if(&id, 3, vec![said(&first)]).await.unwrap(),
        at(3)
    );
    let texts: Vec<String> = store.load(&id).await.unwrap().iter().map(text_of).collect();
    assert_eq!(texts, ["first", "second", "third"]);
    // Nothing at all written for a refused batch on a log that does not exist.
    let missing = fresh("append-if-missing");
    assert_eq!(
        store.append_if(&missing, 4, vec![msg("x")]).await.unwrap(),
        refused(0)
    );
    assert!(store.load(&missing).await.unwrap().is_empty());
    assert!(!store.list_conversations().await.unwrap().contains(&missing));
}

/// Writers that each read the log's last seq and append on top of it with `append_if`,
/// trying again after a conflict, lose nothing and duplicate nothing: the log holds every
/// writer's events once, at seqs `1..=n`.
pub async fn check_append_if_under_contention(store: &dyn ConversationStore) {
    const CONTENDERS: usize = 6;
    const EACH: usize = 4;
    let id = fresh("append-if-contention");
    let futures: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = (0..CONTENDERS)
        .map(|w| {
            let id = id.clone();
            Box::pin(async move {
                for i in 0..EACH {
                    let mut expected = 0;
                    loop {
                        let event = msg(&format!("w{w}-{i}"));
                        match store.append_if(&id, expected, vec![event]).await.unwrap() {
                            AppendIf::Appended { last_seq } => {
                                assert_eq!(last_seq, expected + 1);
                                break;
                            }
                            AppendIf::Conflict { last_seq } => {
                                assert!(last_seq != expected);
                                expected = last_seq;
                            }
                        }
                    }
                }
            }) as Pin<Box<dyn Future<Output = ()> + Send + '_>>
        })
        .collect();
    join_all(futures).await;
    let log = store.load(&id).await.unwrap();
    let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=(CONTENDERS * EACH) as u64).collect::<Vec<_>>());
    let mut texts: Vec<String> = log.iter().map(text_of).collect();
    texts.sort();
    let mut want: Vec<String> = (0..CONTENDERS)
        .flat_map(|w| (0..EACH).map(move |i| format!("w{w}-{i}")))
        .collect();
    want.sort();
    assert_eq!(texts, want);
}
