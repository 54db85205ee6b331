//! Embedding after the fact on every backend: the `Reembed` conformance suite (what has no
//! vector is found, embedded in pages and stored; a model change drops the old vectors and
//! records the new model), and a store opened through its URL with a model catching up
//! in the background. Each runs on a store of its own (a fresh file or directory, a
//! private PostgreSQL schema, a unique Redis key prefix), since a backfill passes over
//! everything a store holds.

mod common;

use std::sync::Arc;

use agentmemory_core::di::tokens;
use agentmemory_core::reembed::{Backfill, EmbeddingModel, Reembed, BACKFILL_TOKEN};
use agentmemory_core::testkit::facts::HashEmbedder;
use agentmemory_core::testkit::reembed::SmallHashEmbedder;
use agentmemory_core::vector::{Document, SearchQuery};
use agentmemory_core::{
    testkit, FactCandidate, InMemoryUserMemoryStore, InMemoryVectorStore, UserMemoryStore,
    VectorStore,
};
use agentmemory_stores::StoreUrl;

#[tokio::test]
async fn in_memory_reembed_conformance() {
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let vectors = Arc::new(InMemoryVectorStore::new());
    let targets: Vec<Arc<dyn Reembed>> = vec![facts.clone(), vectors.clone()];
    testkit::reembed::run_all(&*facts, &*vectors, targets).await;
}

/// What a URL's stores hold is found by meaning once the backfill after opening with a
/// model is done, and opening with another model re-embeds instead of mixing.
async fn check_url_backfill(url: &StoreUrl) {
    let plain = url
        .open_with_embedder(None)
        .await
        .expect("open without a model");
    let facts = plain.resolve::<dyn UserMemoryStore>(None).expect("facts");
    let vectors = plain.resolve::<dyn VectorStore>(None).expect("vectors");
    facts
        .upsert(
            "ana",
            FactCandidate::new("grows tomatoes on the balcony", 0.9),
        )
        .await
        .expect("upsert");
    vectors
        .upsert("notes", Document::new("the boiler was serviced in March"))
        .await
        .expect("upsert");
    assert!(
        plain.resolve::<Backfill>(Some(BACKFILL_TOKEN)).is_err(),
        "no model, no backfill"
    );
    drop((facts, vectors, plain));

    let opened = url
        .open_with_embedder(Some(Arc::new(HashEmbedder)))
        .await
        .expect("open with a model");
    let backfill = opened
        .resolve::<Backfill>(Some(BACKFILL_TOKEN))
        .expect("the backfill handle");
    let report = backfill.wait().await.expect("backfill");
    assert_eq!(report.embedded, 2, "{report:?}");
    assert_eq!(report.model, EmbeddingModel::new("hash-65", 65));
    let facts = opened.resolve::<dyn UserMemoryStore>(None).expect("facts");
    assert!(facts.list("ana").await.expect("list")[0]
        .embedding
        .is_some());
    let vectors = opened.resolve::<dyn VectorStore>(None).expect("vectors");
    let hits = vectors
        .search("notes", &SearchQuery::new("boiler serviced", 1))
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    drop((facts, vectors, backfill, opened));

    let other = url
        .open_with_embedder(Some(Arc::new(SmallHashEmbedder)))
        .await
        .expect("open with another model");
    let report = other
        .resolve::<Backfill>(Some(BACKFILL_TOKEN))
        .expect("handle")
        .wait()
        .await
        .expect("backfill after a model change");
    assert!(report.model_changed, "{report:?}");
    assert_eq!((report.dropped, report.embedded), (2, 2), "{report:?}");
    let facts = other.resolve::<dyn UserMemoryStore>(None).expect("facts");
    let fact = &facts.list("ana").await.expect("list")[0];
    assert_eq!(fact.embedding.as_ref().map(Vec::len), Some(17));
    let reembed = other.resolve::<dyn Reembed>(None).expect("reembed");
    assert_eq!(
        reembed.embedding_model().await.expect("model"),
        Some(EmbeddingModel::new("hash-17", 17))
    );
    let _ = tokens::USER_MEMORY;
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use agentmemory_stores::SqliteStore;

    fn temp_path(label: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("agentmem-reembed-{label}-{}.db", ulid::Ulid::new()))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_reembed_conformance() {
        let path = temp_path("suite");
        let store = Arc::new(SqliteStore::open(&path).await.expect("open"));
        let targets: Vec<Arc<dyn Reembed>> = vec![store.clone()];
        testkit::reembed::run_all(&*store, &*store, targets).await;
        drop(store);
        let _ = std::fs::remove_file(&path);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_url_backfill() {
        let path = temp_path("url");
        check_url_backfill(&StoreUrl::Sqlite(path.clone())).await;
        let _ = std::fs::remove_file(&path);
    }

    /// The pages are read through the partial indexes, not by scanning the tables.
    #[tokio::test]
    async fn sqlite_finds_what_has_no_vector_through_its_indexes() {
        let path = temp_path("plan");
        drop(SqliteStore::open(&path).await.expect("open"));
        let conn = rusqlite::Connection::open(&path).expect("open raw");
        for (sql, index) in [
            (
                "SELECT n FROM facts WHERE is_current = 1 AND json_extract(body, '$.data.embedding') IS NULL AND n > 0 ORDER BY n LIMIT 64",
                "facts_unembedded",
            ),
            (
                "SELECT n FROM documents WHERE embedding IS NULL AND n > 0 ORDER BY n LIMIT 64",
                "documents_unembedded",
            ),
        ] {
            let plan: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .expect("explain")
                .query_map([], |r| r.get::<_, String>(3))
                .expect("plan")
                .collect::<rusqlite::Result<_>>()
                .expect("rows");
            assert!(plan.iter().any(|p| p.contains(index)), "{sql}: {plan:?}");
        }
        drop(conn);
        let _ = std::fs::remove_file(&path);
    }
}

#[cfg(feature = "file")]
mod file {
    use super::*;
    use agentmemory_stores::FileStore;

    fn temp_dir(label: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("agentmem-reembed-{label}-{}", ulid::Ulid::new()))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn file_reembed_conformance() {
        let dir = temp_dir("suite");
        let store = Arc::new(FileStore::open(&dir).await.expect("open"));
        let targets: Vec<Arc<dyn Reembed>> = vec![store.clone()];
        testkit::reembed::run_all(&*store, &*store, targets).await;
        assert!(
            dir.join("store.json").exists(),
            "the model is in the header file"
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn file_url_backfill() {
        let dir = temp_dir("url");
        check_url_backfill(&StoreUrl::File(dir.clone())).await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// In a private schema of the shared server (dropped afterwards), since a backfill passes
/// over the whole store and a model change drops every vector.
#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use agentmemory_stores::{PostgresOptions, PostgresStore};

    const URL_ENV: &str = "AGENTMEM_POSTGRES_URL";

    fn private_schema(label: &str) -> String {
        format!(
            "agentmem_reembed_{label}_{}",
            ulid::Ulid::new().to_string().to_lowercase()
        )
    }

    async fn drop_schema(url: &str, schema: &str) {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("raw connection");
        let task = tokio::spawn(conn);
        client
            .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
            .await
            .expect("drop");
        drop(client);
        let _ = task.await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_reembed_conformance() {
        let Some(url) = common::server_url(URL_ENV) else {
            return;
        };
        let schema = private_schema("suite");
        let store = Arc::new(
            PostgresStore::connect_with(
                &url,
                PostgresOptions {
                    schema: schema.clone(),
                    ..PostgresOptions::default()
                },
            )
            .await
            .expect("connect"),
        );
        let targets: Vec<Arc<dyn Reembed>> = vec![store.clone()];
        testkit::reembed::run_all(&*store, &*store, targets).await;
        drop(store);
        drop_schema(&url, &schema).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_url_backfill() {
        let Some(url) = common::server_url(URL_ENV) else {
            return;
        };
        let schema = private_schema("url");
        let sep = if url.contains('?') { '&' } else { '?' };
        let store_url: StoreUrl = format!("{url}{sep}schema={schema}").parse().expect("url");
        check_url_backfill(&store_url).await;
        drop_schema(&url, &schema).await;
    }
}

/// Under a key prefix of its own (its keys deleted afterwards), since a backfill passes
/// over the whole store and a model change drops every vector.
#[cfg(feature = "redis")]
mod redis_store {
    use super::*;
    use agentmemory_stores::{RedisOptions, RedisStore};

    const URL_ENV: &str = "AGENTMEM_REDIS_URL";

    async fn delete_prefix(url: &str, prefix: &str) {
        let client = redis::Client::open(url).expect("client");
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{prefix}*"))
            .query_async(&mut conn)
            .await
            .expect("KEYS");
        for key in keys {
            let _: () = redis::cmd("DEL")
                .arg(key)
                .query_async(&mut conn)
                .await
                .expect("DEL");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_reembed_conformance() {
        let Some(url) = common::server_url(URL_ENV) else {
            return;
        };
        let prefix = format!("agentmem-reembed-{}:", ulid::Ulid::new());
        let store = Arc::new(
            RedisStore::connect_with(
                &url,
                RedisOptions {
                    prefix: prefix.clone(),
                    ..RedisOptions::default()
                },
            )
            .await
            .expect("connect"),
        );
        let targets: Vec<Arc<dyn Reembed>> = vec![store.clone()];
        testkit::reembed::run_all(&*store, &*store, targets).await;
        assert_eq!(
            store.embedding_model().await.expect("model"),
            Some(EmbeddingModel::new("hash-17", 17))
        );
        drop(store);
        delete_prefix(&url, &prefix).await;
    }
}
