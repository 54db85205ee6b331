//! FileStore facts: an upsert appends to the user's log (`facts/<user>.log`) instead of
//! rewriting their facts file; what a reopened store reads (the file, then the log) is
//! what was written, through folds, stale logs, torn and damaged lines, files written
//! before logs, and another store writing on the same directory.
#![cfg(feature = "file")]

mod common;

use std::path::{Path, PathBuf};

use agentmemory_core::{FactCandidate, MemoryError, MemoryFact, UserMemoryStore};
use agentmemory_stores::FileStore;

fn likes(v: &str) -> FactCandidate {
    FactCandidate::new(format!("likes {v}"), 0.7).with_attribute("likes", v)
}

fn lives(v: &str) -> FactCandidate {
    FactCandidate::new(format!("lives in {v}"), 0.9).with_attribute("location", v)
}

fn facts_file(dir: &Path, user: &str) -> PathBuf {
    dir.join("facts").join(format!("{user}.json"))
}

fn log_file(dir: &Path, user: &str) -> PathBuf {
    dir.join("facts").join(format!("{user}.log"))
}

/// Every fact of `user` as a store freshly opened on `dir` reads them, history included
/// (text, confidence, whether current), sorted.
async fn reread(dir: &Path, user: &str) -> Vec<(String, String, bool)> {
    let opened = FileStore::open(dir).await.expect("reopen");
    let store: &dyn UserMemoryStore = &opened;
    let mut all = Vec::new();
    for fact in store.list(user).await.expect("list") {
        for version in store.history(user, &fact.id).await.expect("history") {
            all.push(version);
        }
    }
    summary(all)
}

fn summary(facts: Vec<MemoryFact>) -> Vec<(String, String, bool)> {
    let mut out: Vec<_> = facts
        .into_iter()
        .map(|f| {
            (
                f.text.clone(),
                format!("{:.3}", f.confidence),
                f.is_current(),
            )
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

async fn held(store: &dyn UserMemoryStore, user: &str) -> Vec<(String, String, bool)> {
    let mut all = Vec::new();
    for fact in store.list(user).await.expect("list") {
        all.extend(store.history(user, &fact.id).await.expect("history"));
    }
    summary(all)
}

fn inode(path: &Path) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).expect("stat"))
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).expect("stat").len()
    }
}

#[tokio::test]
async fn an_upsert_appends_one_line_and_leaves_the_facts_file_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opened = FileStore::open(dir.path()).await.expect("open");
    let store: &dyn UserMemoryStore = &opened;
    let user = "ada";
    // The first write makes the facts file.
    store.upsert(user, likes("tea")).await.expect("add");
    let file = facts_file(dir.path(), user);
    let (bytes, ino) = (std::fs::read(&file).expect("read"), inode(&file));
    assert!(!log_file(dir.path(), user).exists());

    let kinds = [
        store.upsert(user, likes("jazz")).await.expect("add").kind(),
        store
            .upsert(user, likes("tea"))
            .await
            .expect("repeat")
            .kind(),
        store
            .upsert(user, lives("Porto"))
            .await
            .expect("add")
            .kind(),
        store
            .upsert(user, lives("Lyon"))
            .await
            .expect("move")
            .kind(),
    ];
    assert_eq!(kinds, ["added", "reinforced", "added", "superseded"]);
    assert_eq!(
        std::fs::read(&file).expect("read"),
        bytes,
        "file not rewritten"
    );
    assert_eq!(inode(&file), ino, "file not replaced");
    let log = std::fs::read_to_string(log_file(dir.path(), user)).expect("log");
    assert_eq!(
        log.lines().count(),
        1 + 4,
        "a header, then one line per upsert"
    );
    assert!(log.ends_with('\n'));
    // Ignored: nothing written.
    let ignored = store
        .upsert(user, FactCandidate::new("likes chess", 1.5))
        .await
        .expect("ignored");
    assert_eq!(ignored.kind(), "ignored");
    assert_eq!(
        std::fs::read_to_string(log_file(dir.path(), user))
            .expect("log")
            .len(),
        log.len()
    );

    let expected = held(store, user).await;
    assert_eq!(
        expected
            .iter()
            .map(|(t, _, current)| (t.as_str(), *current))
            .collect::<Vec<_>>(),
        [
            ("likes jazz", true),
            ("likes tea", true),
            ("lives in Lyon", true),
            ("lives in Porto", false)
        ]
    );
    assert_eq!(reread(dir.path(), user).await, expected);
    let reopened = FileStore::open(dir.path()).await.expect("reopen");
    let hits = UserMemoryStore::search(&reopened, user, "where do I live", 1)
        .await
        .expect("search");
    assert_eq!(hits[0].fact.text, "lives in Lyon");
}

#[tokio::test]
async fn a_log_outgrowing_its_file_is_folded_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opened = FileStore::open(dir.path())
        .await
        .expect("open")
        .with_fact_log_limit(0);
    let store: &dyn UserMemoryStore = &opened;
    let user = "bo";
    let file = facts_file(dir.path(), user);
    let mut rewrites = 0;
    let mut ino = None;
    for i in 0..40 {
        store
            .upsert(
                user,
                FactCandidate::new(format!("collects stamps, album {i}"), 0.6),
            )
            .await
            .expect("add");
        store
            .upsert(user, lives(&format!("city {}", i % 3)))
            .await
            .expect("move");
        let now = inode(&file);
        if ino != Some(now) {
            rewrites += 1;
            ino = Some(now);
        }
        let log = log_file(dir.path(), user);
        let log_len = std::fs::metadata(&log).map_or(0, |m| m.len());
        let file_len = std::fs::metadata(&file).expect("file").len();
        assert!(log_len <= file_len, "folded once larger than the file");
    }
    // 80 upserts, the file rewritten only when the log outgrew it.
    assert!((2..40).contains(&rewrites), "{rewrites} rewrites");
    let expected = held(store, user).await;
    assert_eq!(expected.iter().filter(|(_, _, c)| *c).count(), 41);
    assert_eq!(reread(dir.path(), user).await, expected);
}

#[tokio::test]
async fn a_log_left_behind_by_a_rewrite_is_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opened = FileStore::open(dir.path()).await.expect("open");
    let store: &dyn UserMemoryStore = &opened;
    let user = "cy";
    for v in ["tea", "jazz", "chess"] {
        store.upsert(user, likes(v)).await.expect("add");
    }
    let log = log_file(dir.path(), user);
    let old_log = std::fs::read(&log).expect("log");
    let chess = store
        .list(user)
        .await
        .expect("list")
        .into_iter()
        .find(|f| f.text == "likes chess")
        .expect("chess");
    // A delete rewrites the file (a new generation) and removes the log; a crash in
    // between leaves the old log: it must not bring chess back.
    assert!(store.delete(user, &chess.id).await.expect("delete"));
    assert!(!log.exists());
    std::fs::write(&log, &old_log).expect("put the old log back");
    let expected = held(store, user).await;
    assert!(!expected.iter().any(|(t, _, _)| t == "likes chess"));
    assert_eq!(reread(dir.path(), user).await, expected);
    // The next upsert starts a new log over it.
    store.upsert(user, likes("go")).await.expect("add");
    let mut want: Vec<_> = expected.iter().map(|(t, _, _)| t.clone()).collect();
    want.push("likes go".into());
    want.sort();
    let got: Vec<_> = reread(dir.path(), user)
        .await
        .into_iter()
        .map(|(t, _, _)| t)
        .collect();
    assert_eq!(got, want);
    // Forgetting the user removes both files; an old log then follows no file.
    store.upsert(user, likes("chess")).await.expect("add");
    let old_log = std::fs::read(&log).expect("log");
    assert!(store.forget_user(user).await.expect("forget") >= 3);
    assert!(!facts_file(dir.path(), user).exists() && !log.exists());
    std::fs::write(&log, &old_log).expect("put the old log back");
    assert!(reread(dir.path(), user).await.is_empty());
    store.upsert(user, likes("tea")).await.expect("add");
    assert_eq!(reread(dir.path(), user).await.len(), 1);
}

#[tokio::test]
async fn a_torn_last_line_is_dropped_and_cut_off_by_the_next_upsert() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opened = FileStore::open(dir.path()).await.expect("open");
    let store: &dyn UserMemoryStore = &opened;
    let user = "di";
    for v in ["tea", "jazz", "chess"] {
        store.upsert(user, likes(v)).await.expect("add");
    }
    let expected = held(store, user).await;
    let log = log_file(dir.path(), user);
    let mut bytes = std::fs::read(&log).expect("log");
    let whole = bytes.len();
    bytes.extend_from_slice(br#"{"facts":[{"id":"01J"#);
    std::fs::write(&log, &bytes).expect("tear");
    assert_eq!(reread(dir.path(), user).await, expected);
    // The store that wrote sees the log changed, reads it again, and cuts the tail off.
    store.upsert(user, likes("go")).await.expect("add");
    let repaired = std::fs::read(&log).expect("log");
    assert_eq!(repaired[..whole], bytes[..whole]);
    assert!(repaired[whole..].starts_with(b"{\"facts\":[{"));
    assert!(!String::from_utf8_lossy(&repaired).contains("01J\n"));
    assert_eq!(reread(dir.path(), user).await.len(), expected.len() + 1);
}

#[tokio::test]
async fn a_damaged_log_line_is_a_typed_error_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opened = FileStore::open(dir.path()).await.expect("open");
    let store: &dyn UserMemoryStore = &opened;
    let user = "ed";
    for v in ["tea", "jazz", "chess"] {
        store.upsert(user, likes(v)).await.expect("add");
    }
    let log = log_file(dir.path(), user);
    let text = std::fs::read_to_string(&log).expect("log");
    let damaged = text.replacen("{\"facts\":[{", "{\"facts\":[#", 1);
    std::fs::write(&log, &damaged).expect("damage");
    let expect_corrupt = |err: MemoryError| {
        assert!(matches!(err, MemoryError::Corrupt { .. }), "got {err:?}");
        let text = err.chain().to_string();
        assert!(text.contains(&log.display().to_string()), "{text}");
        assert!(text.contains("line 2"), "{text}");
    };
    let reopened = FileStore::open(dir.path()).await.expect("reopen");
    let reopened: &dyn UserMemoryStore = &reopened;
    expect_corrupt(reopened.list(user).await.expect_err("list"));
    expect_corrupt(reopened.search(user, "tea", 3).await.expect_err("search"));
    expect_corrupt(
        reopened
            .upsert(user, likes("go"))
            .await
            .expect_err("upsert"),
    );
    // The store that wrote sees the change too.
    expect_corrupt(store.upsert(user, likes("go")).await.expect_err("upsert"));
    expect_corrupt(store.delete(user, "x").await.expect_err("delete"));
    assert_eq!(std::fs::read_to_string(&log).expect("log"), damaged);
}

#[tokio::test]
async fn a_facts_file_written_before_logs_is_read_then_rewritten() {
    let dir = tempfile::tempdir().expect("tempdir");
    let now = chrono::Utc::now();
    let old: Vec<MemoryFact> = ["likes tea", "likes jazz"]
        .iter()
        .map(|t| MemoryFact::from_candidate("fy", FactCandidate::new(*t, 0.7), now))
        .collect();
    std::fs::create_dir_all(dir.path().join("facts")).expect("mkdir");
    let v1 = serde_json::json!({
        "format": "agentmem.facts", "version": 1, "user": "fy", "facts": old,
    });
    let file = facts_file(dir.path(), "fy");
    std::fs::write(&file, serde_json::to_vec(&v1).expect("json")).expect("write");
    let opened = FileStore::open(dir.path()).await.expect("open");
    let store: &dyn UserMemoryStore = &opened;
    assert_eq!(store.list("fy").await.expect("list").len(), 2);
    assert_eq!(
        store
            .upsert("fy", FactCandidate::new("likes tea", 0.7))
            .await
            .expect("repeat")
            .kind(),
        "reinforced"
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(doc["version"], 2, "rewritten with a generation for its log");
    assert!(doc["log"].is_string());
    store.upsert("fy", likes("chess")).await.expect("add");
    assert!(log_file(dir.path(), "fy").exists());
    assert_eq!(reread(dir.path(), "fy").await.len(), 3);

    std::fs::write(
        facts_file(dir.path(), "gu"),
        br#"{"format":"agentmem.facts","version":3,"user":"gu","facts":[]}"#,
    )
    .expect("write");
    assert!(matches!(
        store.list("gu").await,
        Err(MemoryError::UnsupportedVersion { found: 3, .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_store_on_the_directory_is_seen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = FileStore::open(dir.path()).await.expect("open");
    let second = FileStore::open(dir.path()).await.expect("open again");
    common::check_cached_reconciliation_sees_another_writer(&first, &second, "reconcile").await;
    common::check_cached_ranking_sees_another_writer(&first, &second, "ranking").await;
}
