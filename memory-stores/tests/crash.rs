//! Crash safety: a child process (this test binary re-executed in "child mode") appends
//! messages and prints each acknowledged one; the parent SIGKILLs it at a random point,
//! reopens the store and checks that every acknowledged message is there, in order,
//! with nothing partial. 20 rounds per backend.
#![cfg(any(feature = "sqlite", feature = "file"))]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use agentmemory_core::{ConversationEvent, ConversationStore, Message};

/// Selects child mode: `sqlite:<file>` or `file:<dir>`.
const CHILD_ENV: &str = "AGENTMEM_CRASH_CHILD";
const CONVERSATION: &str = "crash-test";
const ROUNDS: usize = 20;

async fn open(spec: &str) -> Box<dyn ConversationStore> {
    match spec.split_once(':') {
        #[cfg(feature = "sqlite")]
        Some(("sqlite", path)) => Box::new(
            agentmemory_stores::SqliteStore::open(path)
                .await
                .expect("open sqlite"),
        ),
        #[cfg(feature = "file")]
        Some(("file", dir)) => Box::new(
            agentmemory_stores::FileStore::open(dir)
                .await
                .expect("open file store"),
        ),
        _ => panic!("unknown store spec {spec}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The child: appends forever, printing `ACK <seq> <message id>` after each append
/// returned. Does nothing when not in child mode.
#[test]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    runtime().block_on(async {
        let store = open(&spec).await;
        let mut i = store.load(CONVERSATION).await.expect("load").len();
        // Until the parent kills it.
        loop {
            let message = Message::user(format!("msg-{i}")).with_metadata("i", i.into());
            let id = message.id;
            let seq = store
                .append(CONVERSATION, vec![ConversationEvent::Message { message }])
                .await
                .expect("append");
            println!("ACK {seq} {id}");
            i += 1;
        }
    });
}

fn crash_rounds(spec: &str) {
    let exe = std::env::current_exe().expect("current exe");
    let mut acked: Vec<(u64, String)> = Vec::new();
    for round in 0..ROUNDS {
        let wanted = 1 + (ulid::Ulid::new().random() % 40) as usize;
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, spec)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut seen = 0;
        let record = |line: &str, acked: &mut Vec<(u64, String)>| {
            if let Some(rest) = line.strip_prefix("ACK ") {
                let (seq, id) = rest.split_once(' ').expect("ACK line");
                acked.push((seq.parse().expect("seq"), id.to_owned()));
                true
            } else {
                false
            }
        };
        while seen < wanted {
            let line = match lines.next() {
                Some(l) => l.expect("read child stdout"),
                None => panic!("round {round}: child exited early"),
            };
            if record(&line, &mut acked) {
                seen += 1;
            }
        }
        child.kill().expect("SIGKILL the child");
        child.wait().expect("reap the child");
        // Lines already written before the kill were acknowledged too.
        for line in lines {
            match line {
                Ok(l) => {
                    record(&l, &mut acked);
                }
                Err(_) => break, // a line cut by the kill was never acknowledged
            }
        }

        let events = runtime().block_on(async { open(spec).await.load(CONVERSATION).await });
        let events = events.unwrap_or_else(|e| panic!("round {round}: reload failed: {e}"));
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.seq, i as u64 + 1, "round {round}: seqs contiguous");
            let ConversationEvent::Message { message } = &e.event else {
                panic!("round {round}: unexpected event {:?}", e.event);
            };
            assert_eq!(message.text(), format!("msg-{i}"), "round {round}: intact");
            assert_eq!(message.metadata["i"], serde_json::json!(i));
        }
        for (seq, id) in &acked {
            let stored = events
                .get(*seq as usize - 1)
                .unwrap_or_else(|| panic!("round {round}: acknowledged seq {seq} lost"));
            let ConversationEvent::Message { message } = &stored.event else {
                panic!("round {round}: seq {seq} is not a message");
            };
            assert_eq!(
                &message.id.to_string(),
                id,
                "round {round}: seq {seq} changed"
            );
        }
        assert!(events.len() >= acked.len());
        eprintln!(
            "{spec} round {round}: {} acknowledged, {} stored",
            acked.len(),
            events.len()
        );
    }
    assert!(acked.len() >= ROUNDS, "every round acknowledged something");
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_survives_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    crash_rounds(&format!("sqlite:{}", dir.path().join("crash.db").display()));
}

#[cfg(feature = "file")]
#[test]
fn file_store_survives_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    crash_rounds(&format!("file:{}", dir.path().display()));
}
