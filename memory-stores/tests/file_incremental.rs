//! `FileStore`'s kept search index follows the store's own writes in place: a search
//! after a write reads nothing from the namespace's file, and ranks exactly as an index
//! built afresh from the file; a file changed by another store (another process, in
//! effect) is still noticed and read again. `get_many` reads the file once and
//! `ids_in_range` answers from the kept index, both as the trait's defaults do.
#![cfg(feature = "file")]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::{Document, MemoryError, SearchQuery, VectorStore};
use agentmemory_stores::FileStore;
use common::corpus::{doc, fill, word};
use common::defaults::{check_same_as_defaults, AWKWARD_IDS};

/// The `(id, score bits)` of every hit of a few queries.
async fn rankings(store: &FileStore, ns: &str) -> Vec<Vec<(String, u32)>> {
    let mut out = Vec::new();
    for text in [
        "kitchen garden budget",
        "rust music",
        "turn 17",
        "spreadsheet for the kitchen",
        &word(5),
    ] {
        let hits = store
            .search(ns, &SearchQuery::new(text, 20))
            .await
            .expect("search");
        out.push(
            hits.into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect(),
        );
    }
    out
}

/// Documents read from the file by the next search of `store`.
async fn reads_of_next_search(store: &FileStore, ns: &str) -> u64 {
    let before = store.documents_read();
    store
        .search(ns, &SearchQuery::new("kitchen", 5))
        .await
        .expect("search");
    store.documents_read() - before
}

/// After 1,000 documents and one search, a write and a search read no document from the
/// file; overwrites, deletes and batches neither; every ranking is a fresh build's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_after_a_write_reads_nothing_from_the_file() {
    const N: usize = 1_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    let ns = "incremental";
    fill(&store, ns, N).await;
    assert_eq!(
        reads_of_next_search(&store, ns).await,
        N as u64,
        "built once"
    );
    assert_eq!(reads_of_next_search(&store, ns).await, 0, "nothing changed");

    store
        .upsert(
            ns,
            Document::new("a spreadsheet for the kitchen budget").with_id("new"),
        )
        .await
        .expect("write");
    assert!(reads_of_next_search(&store, ns).await <= 2);
    let hits = store
        .search(ns, &SearchQuery::new("spreadsheet", 3))
        .await
        .expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("new"));

    // An overwrite, a delete (of one stored id and one missing) and a batch of two.
    store
        .upsert(
            ns,
            Document::new("turn 17: now about music").with_id(doc(17).id.unwrap()),
        )
        .await
        .expect("overwrite");
    store
        .delete(ns, &[doc(3).id.unwrap(), "missing".to_owned()])
        .await
        .expect("delete");
    store
        .upsert_batch(ns, vec![doc(N + 1), doc(N + 2)])
        .await
        .expect("batch");
    assert!(reads_of_next_search(&store, ns).await <= 2);

    let fresh = FileStore::open(dir.path()).await.expect("open again");
    let expected = rankings(&fresh, ns).await;
    assert!(fresh.documents_read() >= N as u64, "built from the file");
    assert!(!expected[0].is_empty());
    assert_eq!(rankings(&store, ns).await, expected);
    assert!(
        expected
            .iter()
            .flatten()
            .all(|(id, _)| *id != doc(3).id.unwrap()),
        "the deleted document is gone"
    );

    // A clear empties the namespace; the first write after it is found by a build.
    store.clear(ns).await.expect("clear");
    assert_eq!(rankings(&store, ns).await.concat(), []);
    store.upsert(ns, doc(1)).await.expect("write");
    assert!(reads_of_next_search(&store, ns).await <= 1);
    let hits = store
        .search(ns, &SearchQuery::new("turn", 5))
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
}

/// A write refused before the file is touched keeps the index; a write by another store
/// on the directory (another process) changes the file, which the next search reads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_this_stores_writes_are_followed_in_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    let ns = "followed";
    let embedded = |i: usize, dim: usize| doc(i).with_embedding(vec![1.0; dim]);
    store
        .upsert_batch(ns, (0..50).map(|i| embedded(i, 3)).collect())
        .await
        .expect("fill");
    assert_eq!(reads_of_next_search(&store, ns).await, 50);
    let refused = store.upsert(ns, embedded(60, 4)).await;
    assert!(
        matches!(refused, Err(MemoryError::DimensionMismatch { .. })),
        "{refused:?}"
    );
    assert_eq!(reads_of_next_search(&store, ns).await, 0, "index kept");

    let other = FileStore::open(dir.path()).await.expect("open again");
    other
        .upsert(
            ns,
            Document::new("a kitchen written elsewhere").with_id("elsewhere"),
        )
        .await
        .expect("write");
    assert_eq!(reads_of_next_search(&store, ns).await, 51, "read again");
    let hits = store
        .search(ns, &SearchQuery::new("elsewhere", 3))
        .await
        .expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("elsewhere"));
}

/// `get_many` and `ids_in_range` answer as the trait's defaults (one `get` per id,
/// bisecting `ids`), with the index kept (after a search) and without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_many_and_ids_in_range_answer_as_the_defaults() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    let ns = "range";
    let mut docs: Vec<Document> = (0..1_000)
        .map(|i| {
            let d = doc(i).with_metadata("i", i);
            if i % 2 == 0 {
                d.with_embedding(vec![0.5, -0.25, (i % 7) as f32 + 0.1])
            } else {
                d
            }
        })
        .collect();
    docs.extend(
        AWKWARD_IDS
            .iter()
            .map(|id| Document::new(format!("id {id}")).with_id(*id)),
    );
    store.upsert_batch(ns, docs).await.expect("fill");
    // Without a kept index (nothing searched yet): from the file.
    check_same_as_defaults(&store, ns).await;
    store
        .search(ns, &SearchQuery::new("kitchen", 3))
        .await
        .expect("search");
    store
        .delete(ns, &[doc(11).id.unwrap()])
        .await
        .expect("delete");
    // With the index kept and updated by the delete.
    check_same_as_defaults(&store, ns).await;
    assert_eq!(
        store
            .ids_in_range(ns, "ep-000010", "ep-000013")
            .await
            .expect("range"),
        ["ep-000010", "ep-000012"]
    );
    let before = store.documents_read();
    store
        .ids_in_range(ns, "ep-000000", "ep-000500")
        .await
        .expect("range");
    assert_eq!(
        store.documents_read(),
        before,
        "answered from the kept index"
    );
    assert!(store
        .ids_in_range("no-such-namespace", "", "\u{10ffff}")
        .await
        .expect("range")
        .is_empty());
    assert!(store
        .get_many("no-such-namespace", &["a".to_owned()])
        .await
        .expect("get_many")
        .is_empty());
}

/// Searches racing writes of one store leave its index as a fresh build's once the
/// writes are done.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_searches_end_as_a_fresh_build() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(FileStore::open(dir.path()).await.expect("open"));
    let ns = "racing";
    fill(store.as_ref(), ns, 200).await;
    store
        .search(ns, &SearchQuery::new("kitchen", 5))
        .await
        .expect("build");
    let mut tasks = Vec::new();
    for w in 0..4 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            for round in 0..30 {
                let i = (w * 30 + round) % 60;
                let text = format!("round {round} of writer {w}: the kitchen {}", word(i));
                store
                    .upsert(ns, Document::new(text).with_id(doc(i).id.unwrap()))
                    .await
                    .expect("write");
                if round % 7 == 0 {
                    store
                        .delete(ns, &[doc(100 + i).id.unwrap()])
                        .await
                        .expect("delete");
                }
            }
        }));
    }
    for _ in 0..4 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            for _ in 0..30 {
                store
                    .search(ns, &SearchQuery::new("kitchen garden", 10))
                    .await
                    .expect("search");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    let expected = rankings(&FileStore::open(dir.path()).await.expect("open"), ns).await;
    assert_eq!(rankings(&store, ns).await, expected);
}

/// Per-search time after one write, at `n` documents: the mean of `rounds` rounds of
/// (upsert one document, search), the write and the search timed apart; and documents
/// read per search.
async fn search_after_write(
    store: &FileStore,
    ns: &str,
    n: usize,
    rounds: usize,
    text: &str,
) -> (Duration, Duration, u64) {
    let query = SearchQuery::new(text, 10);
    store.search(ns, &query).await.expect("warm up");
    let (mut searching, mut writing, mut read) = (Duration::ZERO, Duration::ZERO, 0);
    for r in 0..rounds {
        let start = Instant::now();
        store.upsert(ns, doc(n + r)).await.expect("write");
        writing += start.elapsed();
        let before = store.documents_read();
        let start = Instant::now();
        let hits = store.search(ns, &query).await.expect("search");
        searching += start.elapsed();
        read += store.documents_read() - before;
        assert!(!hits.is_empty());
    }
    let rounds32 = u32::try_from(rounds).expect("rounds");
    (
        searching / rounds32,
        writing / rounds32,
        read / rounds as u64,
    )
}

/// Prints the per-search time after one write at 1,000 and 10,000 documents (run with
/// `--ignored --nocapture`; release builds give the figures worth quoting).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn measure_search_after_one_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::open(dir.path()).await.expect("open");
    for n in [1_000, 10_000] {
        let ns = format!("measure-{n}");
        fill(&store, &ns, n).await;
        let (search, write, read) =
            search_after_write(&store, &ns, n, 20, "kitchen garden budget").await;
        let rare = format!("{} {}", word(7), word(n / 2));
        let (rare_search, _, _) = search_after_write(&store, &ns, n + 20, 20, &rare).await;
        println!(
            "file: at {n} documents: search after one write {search:?} ({read} documents \
             read per search), a rare-word search after one write {rare_search:?}; \
             the write itself {write:?}"
        );
    }
}
