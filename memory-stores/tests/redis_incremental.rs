//! `RedisStore`'s cached search index catches up with a write by reading the documents
//! the write changed, not the namespace: on the single server (`AGENTMEM_REDIS_URL`), the
//! one-node cluster (`AGENTMEM_REDIS_CLUSTER_URL`, which refuses cross-slot scripts) and
//! the three-node cluster (`AGENTMEM_REDIS_CLUSTER3_URL`).
#![cfg(feature = "redis")]

mod common;

use std::time::{Duration, Instant};

use agentmemory_core::{Document, SearchQuery, VectorStore};
use agentmemory_stores::{RedisOptions, RedisStore};
use common::corpus::{doc, fill, word};
use common::*;

/// A store under a key prefix of its own.
async fn store(url: &str, prefix: &str) -> RedisStore {
    RedisStore::connect_with(
        url,
        RedisOptions {
            prefix: prefix.to_owned(),
            ..RedisOptions::default()
        },
    )
    .await
    .expect("connect")
}

/// Per-search time after one write, at `n` documents: the mean of `rounds` rounds of
/// (upsert one document, search), counting the search only.
async fn search_after_write(
    store: &RedisStore,
    ns: &str,
    n: usize,
    rounds: usize,
    text: &str,
) -> Duration {
    let query = SearchQuery::new(text, 10);
    store.search(ns, &query).await.expect("warm up");
    let mut total = Duration::ZERO;
    for r in 0..rounds {
        store.upsert(ns, doc(n + r)).await.expect("write");
        let start = Instant::now();
        let hits = store.search(ns, &query).await.expect("search");
        total += start.elapsed();
        assert!(!hits.is_empty());
    }
    total / rounds as u32
}

/// Prints the per-search time after one write at 1,000 and 10,000 documents (run with
/// `--ignored --nocapture`; release builds give the figures worth quoting).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn measure_search_after_one_write() {
    let Some(url) = server_url("AGENTMEM_REDIS_URL") else {
        return;
    };
    let prefix = format!("agentmem-incr-{}:", ulid::Ulid::new());
    let store = store(&url, &prefix).await;
    for n in [1_000, 10_000] {
        let ns = fresh("measure");
        fill(&store, &ns, n).await;
        let read = store.documents_read();
        let per_search = search_after_write(&store, &ns, n, 20, "kitchen garden budget").await;
        let read = (store.documents_read() - read - n as u64) / 20; // less the first build
                                                                    // A query of two rare words: scores few candidates, so it shows what the update
                                                                    // of the index costs without the scorer's work on the common words' documents.
        let rare = format!("{} {}", word(7), word(n / 2));
        let rare_after_write = search_after_write(&store, &ns, n + 20, 20, &rare).await;
        let query = SearchQuery::new("kitchen garden budget", 10);
        let start = Instant::now();
        for _ in 0..20 {
            store.search(&ns, &query).await.expect("search");
        }
        let unchanged = start.elapsed() / 20;
        println!(
            "redis: at {n} documents: search after one write {per_search:?} \
             ({read} documents read per search); search with nothing written {unchanged:?}; \
             a rare-word search after one write {rare_after_write:?}"
        );
        store.clear(&ns).await.expect("cleanup");
    }
}

/// The `(id, score)` of every hit of a few queries.
async fn rankings(store: &RedisStore, ns: &str) -> Vec<Vec<(String, f32)>> {
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
        out.push(hits.into_iter().map(|h| (h.id, h.score)).collect());
    }
    out
}

/// Reads by the next search of `store` (which must be an index update, not a build).
async fn reads_of_next_search(store: &RedisStore, ns: &str) -> u64 {
    let before = store.documents_read();
    store
        .search(ns, &SearchQuery::new("kitchen", 5))
        .await
        .expect("search");
    store.documents_read() - before
}

/// After 1,000 documents and one search, a write and a search read the document written,
/// not the namespace, in the writing store and in another one (another process, in
/// effect) alike; both rank exactly as a store that builds its index afresh.
async fn one_write_reads_one_document(url: &str) {
    const N: usize = 1_000;
    let prefix = format!("agentmem-incr-{}:", ulid::Ulid::new());
    let (writer, other) = (store(url, &prefix).await, store(url, &prefix).await);
    let ns = fresh("incremental");
    fill(&writer, &ns, N).await;
    assert_eq!(
        reads_of_next_search(&writer, &ns).await,
        N as u64,
        "built once"
    );
    assert_eq!(
        reads_of_next_search(&other, &ns).await,
        N as u64,
        "built once"
    );
    assert_eq!(
        reads_of_next_search(&writer, &ns).await,
        0,
        "nothing changed"
    );

    writer
        .upsert(
            &ns,
            Document::new("a spreadsheet for the kitchen budget").with_id("new"),
        )
        .await
        .expect("write");
    assert!(reads_of_next_search(&writer, &ns).await <= 2);
    assert!(
        reads_of_next_search(&other, &ns).await <= 2,
        "another store"
    );
    let hits = other
        .search(&ns, &SearchQuery::new("spreadsheet", 3))
        .await
        .expect("search");
    assert_eq!(hits.first().map(|h| h.id.as_str()), Some("new"));

    // An overwrite, a delete and a batch of two, each seen by the other store.
    writer
        .upsert(
            &ns,
            Document::new("turn 17: now about music").with_id(doc(17).id.unwrap()),
        )
        .await
        .expect("overwrite");
    writer
        .delete(&ns, &[doc(3).id.unwrap(), "missing".to_owned()])
        .await
        .expect("delete");
    writer
        .upsert_batch(&ns, vec![doc(N + 1), doc(N + 2)])
        .await
        .expect("batch");
    assert!(
        reads_of_next_search(&other, &ns).await <= 6,
        "five ids changed"
    );
    assert!(reads_of_next_search(&writer, &ns).await <= 6);

    let fresh_store = store(url, &prefix).await;
    let expected = rankings(&fresh_store, &ns).await;
    assert!(
        fresh_store.documents_read() >= N as u64,
        "built from the hash"
    );
    assert_eq!(rankings(&writer, &ns).await, expected, "the writer");
    assert_eq!(rankings(&other, &ns).await, expected, "the other store");
    assert!(!expected[0].is_empty());
    assert!(
        expected
            .iter()
            .flatten()
            .all(|(id, _)| *id != doc(3).id.unwrap()),
        "the deleted document is gone"
    );

    // A clear is a rebuild (of nothing), and the namespace fills again from there.
    writer.clear(&ns).await.expect("clear");
    assert_eq!(rankings(&other, &ns).await.concat(), []);
    writer.upsert(&ns, doc(1)).await.expect("write");
    assert!(reads_of_next_search(&other, &ns).await <= 1);
    let hits = other
        .search(&ns, &SearchQuery::new("turn", 5))
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    writer.clear(&ns).await.expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_write_reads_one_document_on_a_server() {
    let Some(url) = server_url("AGENTMEM_REDIS_URL") else {
        return;
    };
    one_write_reads_one_document(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_write_reads_one_document_on_a_cluster_node() {
    let Some(url) = server_url("AGENTMEM_REDIS_CLUSTER_URL") else {
        return;
    };
    one_write_reads_one_document(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_write_reads_one_document_on_three_nodes() {
    let Some(url) = server_url("AGENTMEM_REDIS_CLUSTER3_URL") else {
        return;
    };
    one_write_reads_one_document(&url).await;
}

/// An index more writes behind than the change log keeps is built again from the hash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_behind_the_log_is_rebuilt() {
    let Some(url) = server_url("AGENTMEM_REDIS_URL") else {
        return;
    };
    let prefix = format!("agentmem-incr-{}:", ulid::Ulid::new());
    let (writer, reader) = (store(&url, &prefix).await, store(&url, &prefix).await);
    let ns = fresh("behind");
    fill(&writer, &ns, 100).await;
    assert_eq!(reads_of_next_search(&reader, &ns).await, 100);
    for round in 0..100 {
        let text = format!("overwritten {round}");
        writer
            .upsert(&ns, Document::new(text).with_id("same"))
            .await
            .expect("write");
    }
    assert_eq!(
        reads_of_next_search(&reader, &ns).await,
        1,
        "one id, read once"
    );
    for round in 0..=RedisStore::CHANGE_LOG_LEN {
        writer
            .upsert(&ns, Document::new(format!("again {round}")).with_id("same"))
            .await
            .expect("write");
    }
    assert_eq!(reads_of_next_search(&reader, &ns).await, 101, "rebuilt");
    let hits = reader
        .search(&ns, &SearchQuery::new("again", 3))
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    writer.clear(&ns).await.expect("cleanup");
}

/// `ids_in_range` answers from the sorted set of ids, and fills it from the hash for a
/// namespace written before the set existed; `get_many` reads the ids given, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_in_range_fills_a_missing_id_set() {
    let Some(url) = server_url("AGENTMEM_REDIS_URL") else {
        return;
    };
    let prefix = format!("agentmem-incr-{}:", ulid::Ulid::new());
    let store = store(&url, &prefix).await;
    let ns = fresh("range");
    fill(&store, &ns, 30).await;
    let hex: String = ns.bytes().map(|b| format!("{b:02x}")).collect();
    let mut conn = redis::Client::open(url.as_str())
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let () = redis::cmd("DEL")
        .arg(format!("{prefix}{{docs:{hex}}}:ids"))
        .query_async(&mut conn)
        .await
        .expect("drop the id set");
    let ids = store
        .ids_in_range(&ns, "ep-000010", "ep-000013")
        .await
        .expect("range");
    assert_eq!(ids, ["ep-000010", "ep-000011", "ep-000012"]);
    store
        .delete(&ns, &["ep-000011".to_owned()])
        .await
        .expect("delete");
    assert_eq!(
        store
            .ids_in_range(&ns, "ep-000010", "ep-000013")
            .await
            .expect("range"),
        ["ep-000010", "ep-000012"]
    );
    let wanted = ["ep-000012", "ep-000011", "ep-000001"].map(String::from);
    let docs = store.get_many(&ns, &wanted).await.expect("get many");
    let got: Vec<_> = docs.iter().map(|d| d.id.as_deref().unwrap()).collect();
    assert_eq!(got, ["ep-000012", "ep-000001"]);
    store.clear(&ns).await.expect("cleanup");
}

/// Searches racing writes (from this store and another) in one store leave its index as
/// a fresh build's once the writes are done: catch-ups of one namespace take turns and
/// never put back an older body.
async fn racing_searches_end_as_a_fresh_build(url: &str) {
    let prefix = format!("agentmem-incr-{}:", ulid::Ulid::new());
    let (reader, writer) = (store(url, &prefix).await, store(url, &prefix).await);
    let ns = fresh("racing");
    fill(&writer, &ns, 200).await;
    reader
        .search(&ns, &SearchQuery::new("kitchen", 5))
        .await
        .expect("build");
    let mut tasks = Vec::new();
    for w in 0..4 {
        let (writers, ns) = ([&reader, &writer][w % 2].clone(), ns.clone());
        tasks.push(tokio::spawn(async move {
            for round in 0..40 {
                let i = (w * 40 + round) % 60;
                let text = format!("round {round} of writer {w}: the kitchen {}", word(i));
                writers
                    .upsert(&ns, Document::new(text).with_id(doc(i).id.unwrap()))
                    .await
                    .expect("write");
                if round % 7 == 0 {
                    writers
                        .delete(&ns, &[doc(100 + i).id.unwrap()])
                        .await
                        .expect("delete");
                }
            }
        }));
    }
    for _ in 0..4 {
        let (reader, ns) = (reader.clone(), ns.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..40 {
                reader
                    .search(&ns, &SearchQuery::new("kitchen garden", 10))
                    .await
                    .expect("search");
            }
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    let expected = rankings(&store(url, &prefix).await, &ns).await;
    assert_eq!(rankings(&reader, &ns).await, expected);
    assert_eq!(rankings(&writer, &ns).await, expected);
    writer.clear(&ns).await.expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_searches_end_as_a_fresh_build_on_a_server() {
    let Some(url) = server_url("AGENTMEM_REDIS_URL") else {
        return;
    };
    racing_searches_end_as_a_fresh_build(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_searches_end_as_a_fresh_build_on_three_nodes() {
    let Some(url) = server_url("AGENTMEM_REDIS_CLUSTER3_URL") else {
        return;
    };
    racing_searches_end_as_a_fresh_build(&url).await;
}
