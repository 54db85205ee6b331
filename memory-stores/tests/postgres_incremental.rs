//! `PostgresStore` searches after a write read what they rank, never the namespace again
//! (it caches no index: the server's GIN and HNSW indexes follow every write in its own
//! transaction); `get_many` is one query and `ids_in_range` one range scan, answering as
//! the trait's defaults do. Against `AGENTMEM_POSTGRES_URL` (`.ci/services.sh`): in CI
//! (`CI=true`) a missing server fails these tests, elsewhere they are skipped with a
//! message.
#![cfg(feature = "postgres")]

mod common;

use std::time::{Duration, Instant};

use agentmemory_core::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
use agentmemory_stores::{PostgresOptions, PostgresStore};
use common::corpus::{doc, fill_with, word};
use common::defaults::{check_same_as_defaults, AWKWARD_IDS};
use common::*;

const URL_ENV: &str = "AGENTMEM_POSTGRES_URL";

/// A store in a schema of its own (dropped by [`drop_schema`]).
async fn store(url: &str, use_pgvector: bool) -> PostgresStore {
    let schema = format!("incr_{}", ulid::Ulid::new().to_string().to_lowercase());
    PostgresStore::connect_with(
        url,
        PostgresOptions {
            schema,
            use_pgvector,
            ..PostgresOptions::default()
        },
    )
    .await
    .expect("connect")
}

/// Drops the store's schema.
async fn drop_schema(url: &str, store: &PostgresStore) {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("DROP SCHEMA \"{}\" CASCADE", store.schema()))
        .await
        .expect("drop schema");
}

/// A unit-ish embedding of `dim` for `i` (deterministic, spread out).
fn embedding(i: usize, dim: usize) -> Vec<f32> {
    (0..dim)
        .map(|j| (((i * 31 + j * 17) % 97) as f32 / 97.0) - 0.5)
        .collect()
}

/// Document rows read by one search of `query`.
async fn reads_of(store: &PostgresStore, ns: &str, query: &SearchQuery) -> u64 {
    let before = store.documents_read();
    store.search(ns, query).await.expect("search");
    store.documents_read() - before
}

/// The `(id, score bits)` of every hit of a few queries.
async fn rankings(store: &impl VectorStore, ns: &str) -> Vec<Vec<(String, u32)>> {
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

/// After 1,000 documents, a write and a search read the rows the search ranks: one more
/// than the same search before the write when the new document shares its word, a
/// single row for a word only the new document has; rankings stay those of the
/// in-memory store holding the same documents, through overwrites and deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_after_a_write_reads_what_it_ranks() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    const N: usize = 1_000;
    let store = store(&url, false).await;
    let reference = InMemoryVectorStore::new();
    let ns = fresh("incremental");
    let docs: Vec<Document> = (0..N).map(doc).collect();
    fill_with(&store, &ns, docs.clone()).await;
    fill_with(&reference, &ns, docs).await;

    let kitchen = SearchQuery::new("kitchen", 5);
    let before = reads_of(&store, &ns, &kitchen).await;
    assert!(
        before < N as u64 / 2,
        "only the documents with the word: {before}"
    );
    let written = Document::new("a spreadsheet for the kitchen budget").with_id("new");
    store.upsert(&ns, written.clone()).await.expect("write");
    reference.upsert(&ns, written).await.expect("reference");
    assert_eq!(reads_of(&store, &ns, &kitchen).await, before + 1);
    let rare = SearchQuery::new("spreadsheet", 3);
    assert_eq!(
        reads_of(&store, &ns, &rare).await,
        1,
        "the new document only"
    );
    let hits = store.search(&ns, &rare).await.expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("new"));

    // An overwrite, a delete and a batch of two.
    let overwrite = Document::new("turn 17: now about music").with_id(doc(17).id.unwrap());
    let gone = [doc(3).id.unwrap(), "missing".to_owned()];
    let batch = vec![doc(N + 1), doc(N + 2)];
    for target in [&store as &dyn VectorStore, &reference] {
        target
            .upsert(&ns, overwrite.clone())
            .await
            .expect("overwrite");
        target.delete(&ns, &gone).await.expect("delete");
        target
            .upsert_batch(&ns, batch.clone())
            .await
            .expect("batch");
    }
    let rare = SearchQuery::new(word(N + 1), 3);
    assert!(reads_of(&store, &ns, &rare).await <= 2);
    let expected = rankings(&reference, &ns).await;
    assert!(!expected[0].is_empty());
    assert_eq!(rankings(&store, &ns).await, expected);

    drop_schema(&url, &store).await;
}

/// A speaker's name on most lines weighs nothing beside a rarer word
/// (`tfidf::Ubiquity`): its rows are not read for it, and the ranking is the in-memory
/// index's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speakers_name_on_most_lines_is_not_read_for() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let store = store(&url, false).await;
    let reference = InMemoryVectorStore::new();
    let ns = fresh("speakers");
    let docs: Vec<Document> = (0..200)
        .map(|i| {
            let text = match i {
                17 => "Ben: wait, you bought a guitar?".to_owned(),
                i if i % 2 == 0 => format!("Maya: {} {}", word(i), word(i + 1_000)),
                i => format!("Ben: {}", word(i)),
            };
            Document::new(text).with_id(format!("d{i:03}"))
        })
        .collect();
    fill_with(&store, &ns, docs.clone()).await;
    fill_with(&reference, &ns, docs).await;
    let query = SearchQuery::new("which guitar did Maya buy", 5);
    assert_eq!(
        reads_of(&store, &ns, &query).await,
        1,
        "the guitar line only"
    );
    let ids = |hits: Vec<agentmemory_core::SearchHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.id).collect()
    };
    let got = ids(store.search(&ns, &query).await.expect("search"));
    assert_eq!(got, ["d017"]);
    assert_eq!(
        got,
        ids(reference.search(&ns, &query).await.expect("search"))
    );
    // The name alone is searched by.
    let alone = SearchQuery::new("Maya", 3);
    assert_eq!(store.search(&ns, &alone).await.expect("search").len(), 3);
    drop_schema(&url, &store).await;
}

/// Dense search through pgvector's HNSW index after a write reads the `k` rows it ranks
/// (at 1,000 embeddings and more the index answers), and finds what was written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dense_search_after_a_write_reads_k_rows() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    const N: usize = 1_000;
    let dim = 8;
    let store = store(&url, true).await;
    assert!(store.uses_pgvector(), "the CI server ships pgvector");
    let ns = fresh("dense");
    let docs = (0..N)
        .map(|i| doc(i).with_embedding(embedding(i, dim)))
        .collect();
    fill_with(&store, &ns, docs).await;
    let mut target = vec![0.0; dim];
    target[0] = 1.0;
    store
        .upsert(
            &ns,
            Document::new("the axis itself")
                .with_id("axis")
                .with_embedding(target.clone()),
        )
        .await
        .expect("write");
    let query = SearchQuery::new("", 1).with_embedding(target);
    let reads = reads_of(&store, &ns, &query).await;
    assert!(reads <= 2, "{reads} rows read");
    let hits = store.search(&ns, &query).await.expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("axis"));
    drop_schema(&url, &store).await;
}

/// `get_many` and `ids_in_range` answer as the trait's defaults (one `get` per id,
/// bisecting `ids`), ids in byte order whatever the database's collation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_many_and_ids_in_range_answer_as_the_defaults() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let store = store(&url, true).await;
    let ns = fresh("range");
    let mut docs: Vec<Document> = (0..1_000)
        .map(|i| {
            let d = doc(i).with_metadata("i", i);
            if i % 2 == 0 {
                d.with_embedding(embedding(i, 4))
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
    fill_with(&store, &ns, docs).await;
    check_same_as_defaults(&store, &ns).await;
    assert_eq!(
        store
            .ids_in_range(&ns, "ep-000010", "ep-000013")
            .await
            .expect("range"),
        ["ep-000010", "ep-000011", "ep-000012"]
    );
    assert!(store
        .ids_in_range("no-such-namespace", "", "\u{10ffff}")
        .await
        .expect("range")
        .is_empty());
    drop_schema(&url, &store).await;
}

/// `get_many` of any number of ids is one round trip once its statement is prepared
/// (current-thread runtime: see `common::turns`).
#[tokio::test]
async fn get_many_is_one_round_trip() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let proxy = turns::TurnCounter::start(turns::upstream(&url)).await;
    let store = store(&proxy.url(&url), false).await;
    let ns = fresh("round-trip");
    fill_with(&store, &ns, (0..200).map(doc).collect()).await;
    let ids: Vec<String> = (0..200).step_by(2).map(|i| format!("ep-{i:06}")).collect();
    assert_eq!(store.get_many(&ns, &ids).await.expect("warm").len(), 100);
    proxy.take();
    let got = store.get_many(&ns, &ids).await.expect("get_many");
    assert_eq!(proxy.take(), 1);
    assert_eq!(got.len(), 100);
    store
        .ids_in_range(&ns, "ep-000010", "ep-000020")
        .await
        .expect("warm");
    proxy.take();
    let range = store
        .ids_in_range(&ns, "ep-000010", "ep-000020")
        .await
        .expect("range");
    assert_eq!(proxy.take(), 1);
    assert_eq!(range.len(), 10);
    drop_schema(&url, &store).await;
}

/// Per-search time after one write, at `n` documents: the mean of `rounds` rounds of
/// (upsert one document, search), counting the search only; and the rows read per search.
async fn search_after_write(
    store: &PostgresStore,
    ns: &str,
    n: usize,
    rounds: usize,
    query: &SearchQuery,
) -> (Duration, u64) {
    store.search(ns, query).await.expect("warm up");
    let mut total = Duration::ZERO;
    let mut read = 0;
    for r in 0..rounds {
        let mut written = doc(n + r);
        if query.embedding.is_some() {
            written = written.with_embedding(embedding(n + r, 16));
        }
        store.upsert(ns, written).await.expect("write");
        let before = store.documents_read();
        let start = Instant::now();
        let hits = store.search(ns, query).await.expect("search");
        total += start.elapsed();
        read += store.documents_read() - before;
        assert!(!hits.is_empty());
    }
    (total / rounds as u32, read / rounds as u64)
}

/// Prints the per-search time after one write at 1,000 and 10,000 documents (run with
/// `--ignored --nocapture`; release builds give the figures worth quoting).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn measure_search_after_one_write() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let store = store(&url, true).await;
    for n in [1_000, 10_000] {
        let ns = fresh("measure");
        let docs = (0..n)
            .map(|i| doc(i).with_embedding(embedding(i, 16)))
            .collect();
        fill_with(&store, &ns, docs).await;
        let words = SearchQuery::new("kitchen garden budget", 10);
        let (common, common_read) = search_after_write(&store, &ns, n, 20, &words).await;
        let rare = SearchQuery::new(format!("{} {}", word(7), word(n / 2)), 10);
        let (rare_t, rare_read) = search_after_write(&store, &ns, n + 20, 20, &rare).await;
        let dense = SearchQuery::new("", 10).with_embedding(embedding(5, 16));
        let (dense_t, dense_read) = search_after_write(&store, &ns, n + 40, 20, &dense).await;
        println!(
            "postgres: at {n} documents, search after one write: common words {common:?} \
             ({common_read} rows read), rare words {rare_t:?} ({rare_read} rows), \
             dense k=10 {dense_t:?} ({dense_read} rows)"
        );
    }
    drop_schema(&url, &store).await;
}
