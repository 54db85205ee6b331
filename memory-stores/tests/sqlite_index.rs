//! SQLite's in-memory document index stays the table's mirror: writes by another handle
//! or another OS process are seen by the next search (inserts, updates, deletes, clears),
//! and documents acknowledged before a SIGKILL are found after reopening.
#![cfg(feature = "sqlite")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use agentmemory_core::vector::{Document, SearchQuery, VectorStore};
use agentmemory_stores::SqliteStore;

/// Selects child mode: `<mode>|<db path>`.
const CHILD_ENV: &str = "AGENTMEM_SQLITE_INDEX_CHILD";
const NS: &str = "shared";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn ids(store: &SqliteStore, query: &str) -> Vec<String> {
    let mut ids: Vec<String> = store
        .search(NS, &SearchQuery::new(query, 10_000))
        .await
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect();
    ids.sort();
    ids
}

/// The child: `write` upserts 50 documents then exits; `forever` upserts and prints
/// `ACK <id>` after each acknowledged upsert until killed. Does nothing otherwise.
#[test]
fn index_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (mode, path) = spec.split_once('|').expect("spec is mode|path");
    runtime().block_on(async {
        let store = SqliteStore::open(path).await.expect("open");
        // Load this process's mirror first, so its own writes go through it.
        store
            .search(NS, &SearchQuery::new("anything", 1))
            .await
            .expect("search");
        let mut i = 0usize;
        loop {
            let id = format!("child-{i}");
            let doc = Document::new(format!("written by the child token{i} zebra")).with_id(&id);
            store.upsert(NS, doc).await.expect("upsert");
            if mode == "forever" {
                println!("ACK {id}");
            } else if i + 1 == 50 {
                break;
            }
            i += 1;
        }
    });
}

#[tokio::test]
async fn two_handles_see_each_others_inserts_updates_deletes_and_clears() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("index.db");
    let a = SqliteStore::open(&path).await.expect("open a");
    let b = SqliteStore::open(&path).await.expect("open b");

    a.upsert(NS, Document::new("apples in the orchard").with_id("d1"))
        .await
        .expect("upsert");
    assert_eq!(ids(&a, "apple").await, ["d1"]);
    // b loads its mirror now; later writes by a must reach it by catch-up.
    assert_eq!(ids(&b, "apple").await, ["d1"]);

    a.upsert(NS, Document::new("pears in the orchard").with_id("d1"))
        .await
        .expect("update");
    a.upsert(NS, Document::new("an apple a day").with_id("d2"))
        .await
        .expect("upsert");
    assert_eq!(ids(&b, "apple").await, ["d2"], "update and insert by a");
    assert_eq!(ids(&b, "pear").await, ["d1"]);

    b.delete(NS, &["d2".to_owned()]).await.expect("delete");
    assert!(ids(&a, "apple").await.is_empty(), "delete by b");
    assert_eq!(ids(&b, "orchard").await, ["d1"]);

    a.clear(NS).await.expect("clear");
    assert!(ids(&b, "orchard").await.is_empty(), "clear by a");
    b.upsert(NS, Document::new("orchard again").with_id("d3"))
        .await
        .expect("upsert after clear");
    assert_eq!(ids(&a, "orchard").await, ["d3"]);

    // A third handle opened late loads everything from the table.
    let c = SqliteStore::open(&path).await.expect("open c");
    assert_eq!(ids(&c, "orchard").await, ["d3"]);
}

#[tokio::test]
async fn another_process_writes_are_found_by_a_loaded_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("procs.db");
    let store = SqliteStore::open(&path).await.expect("open");
    store
        .upsert(NS, Document::new("zebra of the parent").with_id("parent"))
        .await
        .expect("upsert");
    assert_eq!(ids(&store, "zebra").await, ["parent"]);

    let status = Command::new(std::env::current_exe().expect("exe"))
        .args(["--exact", "index_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("write|{}", path.display()))
        .status()
        .expect("run child");
    assert!(status.success(), "child failed");

    assert_eq!(
        ids(&store, "zebra").await.len(),
        51,
        "child's writes unseen"
    );
    assert_eq!(ids(&store, "token17").await, ["child-17"]);
}

#[test]
fn acknowledged_documents_survive_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("crash.db");
    let rt = runtime();
    rt.block_on(async { drop(SqliteStore::open(&path).await.expect("create")) });
    for round in 0..5 {
        let mut child = Command::new(std::env::current_exe().expect("exe"))
            .args(["--exact", "index_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, format!("forever|{}", path.display()))
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut acked = Vec::new();
        let target = 20 + round * 13;
        while acked.len() < target {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(id) = line.strip_prefix("ACK ") {
                        acked.push(id.to_owned());
                    }
                }
                _ => break,
            }
        }
        child.kill().expect("SIGKILL the child");
        for line in lines.map_while(Result::ok) {
            if let Some(id) = line.strip_prefix("ACK ") {
                acked.push(id.to_owned());
            }
        }
        let _ = child.wait();
        assert!(acked.len() >= target, "child acknowledged too little");
        rt.block_on(async {
            let store = SqliteStore::open(&path).await.expect("reopen");
            let found = ids(&store, "zebra").await;
            for id in &acked {
                assert!(found.contains(id), "round {round}: acknowledged {id} lost");
            }
            let n: usize = id_number(acked.last().expect("acked"));
            assert_eq!(
                ids(&store, &format!("token{n}")).await,
                [format!("child-{n}")]
            );
        });
    }
}

fn id_number(id: &str) -> usize {
    id.trim_start_matches("child-")
        .parse()
        .expect("numbered id")
}
