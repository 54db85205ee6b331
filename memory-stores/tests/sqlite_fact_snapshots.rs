//! SQLite keeps a snapshot of each large user's indexed facts and opens the user from it
//! and the writes logged since: the result ranks and reconciles exactly as a fresh read
//! of the facts; a damaged or unreachable snapshot is read around (and replaced), never
//! trusted.

mod common;

use std::path::Path;
use std::sync::Arc;

use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::UserMemoryStore;
use agentmemory_stores::SqliteStore;
use common::{assert_ranks_as_fresh, snapshot_facts, SNAPSHOT_FACTS};

async fn open(path: &Path) -> Arc<dyn UserMemoryStore> {
    Arc::new(SqliteStore::open(path).await.expect("open"))
}

fn snapshot_row(path: &Path, user: &str) -> Option<(i64, Vec<u8>)> {
    let conn = rusqlite::Connection::open(path).expect("raw open");
    conn.query_row(
        "SELECT version, body FROM fact_snapshots WHERE user_id = ?1",
        [user],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ok()
}

fn raw(path: &Path, sql: &str, user: &str) {
    let conn = rusqlite::Connection::open(path).expect("raw open");
    conn.execute(sql, [user]).expect("raw statement");
}

/// A store with `user`'s many facts, searched once (so a snapshot is kept).
async fn filled(path: &Path, user: &str) -> Vec<agentmemory_core::MemoryFact> {
    let store = open(path).await;
    let facts = snapshot_facts(user, SNAPSHOT_FACTS);
    store
        .import_records(user, facts.clone())
        .await
        .expect("import");
    store.search(user, "jazz", 3).await.expect("search");
    assert!(snapshot_row(path, user).is_some(), "a snapshot is kept");
    facts
}

#[tokio::test]
async fn reopening_after_writes_ranks_and_reconciles_as_a_fresh_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    let a = open(&path).await;
    common::check_snapshot_then_writes(&*a, || open(&path), "ana").await;
    assert!(
        snapshot_row(&path, "ana").is_none(),
        "forgotten with the user"
    );
}

/// The snapshot is what an opening store reads: one whose facts differ from the rows
/// (written here under the right version) shows through, so the checks above are not
/// passing on full reads.
#[tokio::test]
async fn the_snapshot_is_what_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    let mut facts = filled(&path, "bo").await;
    facts[5].text = "plays the theremin".into();
    let planted = RankedFacts::new(facts.clone()).snapshot("bo");
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute(
        "UPDATE fact_snapshots SET body = ?1 WHERE user_id = 'bo'",
        [&planted],
    )
    .expect("plant");
    let hits = open(&path)
        .await
        .search("bo", "theremin", 3)
        .await
        .expect("search");
    assert_eq!(hits[0].fact.text, "plays the theremin");
    assert!(hits[0].relevance > 0.0);
}

#[tokio::test]
async fn a_damaged_snapshot_is_read_around_and_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    let facts = filled(&path, "cy").await;
    let (version, mut body) = snapshot_row(&path, "cy").expect("snapshot");
    let middle = body.len() / 2;
    body[middle] ^= 0x40;
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute(
        "UPDATE fact_snapshots SET body = ?1 WHERE user_id = 'cy'",
        [&body],
    )
    .expect("damage");
    let store = open(&path).await;
    let hits = store
        .search("cy", "jazz or sailing?", 5)
        .await
        .expect("search");
    assert_ranks_as_fresh(&hits, &facts, "jazz or sailing?", 5);
    let (again, body) = snapshot_row(&path, "cy").expect("replaced");
    assert_eq!(again, version);
    assert!(
        RankedFacts::from_snapshot(&body, "cy").is_ok(),
        "a readable one replaced it"
    );
    // Bytes that are no snapshot at all.
    raw(
        &path,
        "UPDATE fact_snapshots SET body = x'00' WHERE user_id = ?1",
        "cy",
    );
    let hits = open(&path)
        .await
        .search("cy", "Kyoto tea", 5)
        .await
        .expect("search");
    assert_ranks_as_fresh(&hits, &facts, "Kyoto tea", 5);
}

/// A snapshot of an earlier format (one this build no longer reads: the analysed terms
/// of format 2, say) is read around like a damaged one, and replaced by one this build
/// reads: never mis-read as the current format.
#[tokio::test]
async fn a_snapshot_of_an_earlier_format_is_read_around_and_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    let facts = filled(&path, "dee").await;
    let (version, mut body) = snapshot_row(&path, "dee").expect("snapshot");
    // The format version follows the magic; the checksum (xxh3 of the rest) ends it.
    body.truncate(body.len() - 8);
    body[4..8].copy_from_slice(&2u32.to_le_bytes());
    let sum = xxhash_rust::xxh3::xxh3_64(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    assert!(matches!(
        RankedFacts::from_snapshot(&body, "dee"),
        Err(agentmemory_core::MemoryError::UnsupportedVersion { found: 2, .. })
    ));
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute(
        "UPDATE fact_snapshots SET body = ?1 WHERE user_id = 'dee'",
        [&body],
    )
    .expect("an earlier format");
    let store = open(&path).await;
    let hits = store
        .search("dee", "jazz or sailing?", 5)
        .await
        .expect("search");
    assert_ranks_as_fresh(&hits, &facts, "jazz or sailing?", 5);
    let (again, body) = snapshot_row(&path, "dee").expect("replaced");
    assert_eq!(again, version);
    assert_eq!(
        body[4..8],
        agentmemory_core::facts::FACT_SNAPSHOT_VERSION.to_le_bytes()
    );
    assert!(RankedFacts::from_snapshot(&body, "dee").is_ok());
}

/// Writes the log no longer holds (pruned, or made before the log existed) make the
/// snapshot unusable: every fact is read.
#[tokio::test]
async fn a_log_that_does_not_reach_back_reads_every_fact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    filled(&path, "di").await;
    let store = open(&path).await;
    let added = agentmemory_core::FactCandidate::new("plays the theremin", 0.9);
    store.upsert("di", added).await.expect("add");
    raw(&path, "DELETE FROM fact_log WHERE user_id = ?1", "di");
    let held = store.list("di").await.expect("list");
    let hits = open(&path)
        .await
        .search("di", "theremin", 3)
        .await
        .expect("search");
    assert_ranks_as_fresh(&hits, &held, "theremin", 3);
    assert_eq!(hits[0].fact.text, "plays the theremin");
}

/// A snapshot from a version the user's facts never reached (their facts forgotten and
/// written again by another build) is not used.
#[tokio::test]
async fn a_snapshot_ahead_of_the_facts_is_not_used() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    let facts = filled(&path, "ed").await;
    raw(
        &path,
        "UPDATE fact_snapshots SET version = version + 10 WHERE user_id = ?1",
        "ed",
    );
    raw(&path, "DELETE FROM facts WHERE user_id = ?1 AND id IN (SELECT id FROM facts WHERE user_id = ?1 LIMIT 1)", "ed");
    let hits = open(&path)
        .await
        .search("ed", "jazz", 5)
        .await
        .expect("search");
    assert_ranks_as_fresh(&hits, &facts[1..], "jazz", 5);
}
