//! Crash safety of FileStore fact upserts: a child process (this test binary re-executed
//! in "child mode") upserts facts through the fact log, with a log limit small enough that
//! the log is folded into the facts file every few upserts, and prints each acknowledged
//! one; the parent SIGKILLs it at a random point, reopens the store and checks that every
//! acknowledged fact is there and the files read without error. 20 rounds.
#![cfg(feature = "file")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use agentmemory_core::{FactCandidate, UserMemoryStore};
use agentmemory_stores::FileStore;

/// Selects child mode: the store's directory.
const CHILD_ENV: &str = "AGENTMEM_FACTS_CRASH_CHILD";
const USER: &str = "crash-user";
const ROUNDS: usize = 20;
/// Folds the log once it passes 2 KiB (and the file): a fold every few upserts.
const LOG_LIMIT: u64 = 2048;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Collection `i`'s fact (a new fact each).
fn collects(i: usize) -> FactCandidate {
    FactCandidate::new(format!("collects item {i}"), 0.6)
}

/// The city every third upsert moves the user to (a supersession: two rows).
fn lives(i: usize) -> FactCandidate {
    FactCandidate::new(format!("lives in city {i}"), 0.9)
        .with_attribute("location", format!("city {i}"))
}

/// The child: upserts until killed, printing `ACK <i>` after each fact's upsert returned
/// and `MOVED <i>` after each move. Does nothing when not in child mode.
#[test]
fn facts_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    runtime().block_on(async {
        let store = FileStore::open(&dir)
            .await
            .expect("open")
            .with_fact_log_limit(LOG_LIMIT);
        let mut i = store
            .list(USER)
            .await
            .expect("list")
            .iter()
            .filter(|f| f.text.starts_with("collects"))
            .count();
        loop {
            store.upsert(USER, collects(i)).await.expect("upsert");
            println!("ACK {i}");
            if i % 3 == 0 {
                store.upsert(USER, lives(i)).await.expect("move");
                println!("MOVED {i}");
            }
            i += 1;
        }
    });
}

#[test]
fn fact_upserts_survive_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("current exe");
    let (mut acked, mut moved) = (0usize, None::<usize>);
    for round in 0..ROUNDS {
        let wanted = 1 + (ulid::Ulid::new().random() % 40) as usize;
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "facts_crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut record = |line: &str| {
            if let Some(i) = line.strip_prefix("ACK ") {
                acked = acked.max(i.parse::<usize>().expect("i") + 1);
                true
            } else if let Some(i) = line.strip_prefix("MOVED ") {
                moved = Some(i.parse().expect("i"));
                false
            } else {
                false
            }
        };
        let mut seen = 0;
        while seen < wanted {
            let line = match lines.next() {
                Some(l) => l.expect("read child stdout"),
                None => panic!("round {round}: child exited early"),
            };
            if record(&line) {
                seen += 1;
            }
        }
        child.kill().expect("SIGKILL the child");
        child.wait().expect("reap the child");
        // Lines already written before the kill were acknowledged too.
        for line in lines {
            match line {
                Ok(l) => {
                    record(&l);
                }
                Err(_) => break,
            }
        }

        let held = runtime().block_on(async {
            let store = FileStore::open(dir.path()).await.expect("reopen");
            store.list(USER).await
        });
        let held = held.unwrap_or_else(|e| panic!("round {round}: reload failed: {e}"));
        let mut items: Vec<usize> = held
            .iter()
            .filter_map(|f| f.text.strip_prefix("collects item "))
            .map(|i| i.parse().expect("item number"))
            .collect();
        items.sort_unstable();
        // Every acknowledged fact, each once, and at most the one in flight besides.
        assert!(
            items.len() == acked || items.len() == acked + 1,
            "round {round}: {acked} acknowledged, {} held",
            items.len()
        );
        assert_eq!(items, (0..items.len()).collect::<Vec<_>>(), "round {round}");
        let cities: Vec<usize> = held
            .iter()
            .filter_map(|f| f.text.strip_prefix("lives in city "))
            .map(|i| i.parse().expect("city number"))
            .collect();
        if let Some(m) = moved {
            assert_eq!(
                cities.len(),
                1,
                "round {round}: one current city: {cities:?}"
            );
            assert!(
                cities[0] >= m,
                "round {round}: moved to {m}, held {cities:?}"
            );
        }
        eprintln!("round {round}: {acked} acknowledged, {} held", items.len());
        acked = items.len();
    }
    assert!(acked >= ROUNDS, "every round acknowledged something");
}
