//! `ConversationBuffer` under concurrency and at its edges.

use std::sync::Arc;

use agentmemory_core::buffer::ConversationBuffer;
use agentmemory_core::Message;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_tasks_append_a_thousand_each() {
    let buffer = Arc::new(ConversationBuffer::new(1_000_000));
    let mut tasks = Vec::new();
    for t in 0..64 {
        let buffer = buffer.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..1_000 {
                buffer.append(Message::user(format!("{t}:{i}")));
                if i % 100 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let messages = buffer.get_messages();
    assert_eq!(messages.len(), 64_000);
    // Each task's messages appear in its own order.
    let mut next = [0usize; 64];
    for m in &messages {
        let text = m.text();
        let (t, i) = text.split_once(':').unwrap();
        let (t, i): (usize, usize) = (t.parse().unwrap(), i.parse().unwrap());
        assert_eq!(next[t], i, "task {t} out of order");
        next[t] += 1;
    }
}

#[test]
fn evicts_oldest_and_zero_disables() {
    let buffer = ConversationBuffer::new(3);
    for i in 0..10 {
        buffer.append(Message::user(i.to_string()));
    }
    let texts: Vec<_> = buffer.get_messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["7", "8", "9"]);

    let off = ConversationBuffer::new(0);
    off.append(Message::user("x"));
    off.extend([Message::user("y")]);
    off.set_messages(vec![Message::user("z")]);
    assert!(off.is_empty());

    buffer.set_messages((0..5).map(|i| Message::user(i.to_string())).collect());
    assert_eq!(buffer.len(), 3);
    buffer.clear();
    assert!(buffer.is_empty());
    assert_eq!(ConversationBuffer::default().max_messages(), 100);
}

#[test]
fn checkpoint_round_trips_and_rejects_garbage() {
    let buffer = ConversationBuffer::new(10);
    buffer.extend([Message::user("a"), Message::assistant("b")]);
    let copy = ConversationBuffer::from_json(&buffer.to_json()).unwrap();
    assert_eq!(copy.get_messages(), buffer.get_messages());
    assert_eq!(copy.max_messages(), 10);
    assert!(ConversationBuffer::from_json("{]").is_err());
    assert!(
        ConversationBuffer::from_json(r#"{"version":5,"max_messages":1,"messages":[]}"#).is_err()
    );
}
