//! The parameters of server store URLs, against the real servers (`AGENTMEM_POSTGRES_URL`,
//! `AGENTMEM_REDIS_URL`): one test per parameter, each through [`StoreUrl`] (the path the
//! command line and the server open their stores by) or the store's own `connect`.
#![cfg(any(feature = "postgres", feature = "redis"))]

mod common;

use agentmemory_core::{KvStore, MemoryEntry, MemoryError, MemoryScope};
use agentmemory_stores::StoreUrl;
use common::*;

/// `url` with `params` appended to its query.
fn with_params(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// The parameter a [`MemoryError::UrlParameter`] names.
fn refused_parameter<T>(result: agentmemory_core::Result<T>) -> String {
    match result {
        Err(MemoryError::UrlParameter { parameter, .. }) => parameter,
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use std::time::{Duration, Instant};

    use agentmemory_stores::PostgresStore;

    use super::*;

    const URL_ENV: &str = "AGENTMEM_POSTGRES_URL";

    async fn raw(url: &str) -> (tokio_postgres::Client, tokio::task::JoinHandle<()>) {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("raw connection");
        (
            client,
            tokio::spawn(async move {
                let _ = conn.await;
            }),
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn schema_creates_and_uses_that_schema() {
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let schema = format!(
            "agentmem_param_{}",
            ulid::Ulid::new().to_string().to_lowercase()
        );
        let parsed: StoreUrl = with_params(&url, &format!("schema={schema}"))
            .parse()
            .expect("parse");
        let container = parsed.open().await.expect("open with ?schema=");
        let kv = container.resolve::<dyn KvStore>(None).expect("kv");
        kv.put(
            "url-params",
            MemoryEntry::new(MemoryScope::Working, "where", "here".into()),
        )
        .await
        .expect("put");

        let (client, task) = raw(&url).await;
        let row = client
            .query_one(
                &format!("SELECT count(*) FROM \"{schema}\".kv WHERE namespace = 'url-params'"),
                &[],
            )
            .await
            .expect("the table is in the named schema");
        assert_eq!(row.get::<_, i64>(0), 1);
        let in_default = client
            .query_one(
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = 'agentmem' AND table_name = 'kv'",
                &[],
            )
            .await
            .expect("catalogue");
        if in_default.get::<_, i64>(0) == 1 {
            let row = client
                .query_one(
                    "SELECT count(*) FROM agentmem.kv WHERE namespace = 'url-params'",
                    &[],
                )
                .await
                .expect("default schema");
            assert_eq!(row.get::<_, i64>(0), 0, "nothing went to schema agentmem");
        }
        client
            .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
            .await
            .expect("drop");
        drop(client);
        let _ = task.await;

        let bad = with_params(&url, "schema=Not-An-Identifier");
        assert_eq!(
            refused_parameter(PostgresStore::connect(&bad).await),
            "schema"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pool_size_bounds_the_pool() {
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let store = PostgresStore::connect(&with_params(&url, "pool_size=3"))
            .await
            .expect("connect");
        assert_eq!(store.pool_status().1, 3);
        let default = PostgresStore::connect(&url).await.expect("connect");
        assert_eq!(default.pool_status().1, 16, "the default is unchanged");
        assert_eq!(
            refused_parameter(PostgresStore::connect(&with_params(&url, "pool_size=0")).await),
            "pool_size"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pool_min_size_opens_connections_at_connect() {
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let store = PostgresStore::connect(&with_params(&url, "pool_size=5&pool_min_size=3"))
            .await
            .expect("connect");
        assert_eq!(store.pool_status(), (3, 5));
        // Without it, only the connection the migration used is open.
        let lazy = PostgresStore::connect(&with_params(&url, "pool_size=5"))
            .await
            .expect("connect");
        assert_eq!(lazy.pool_status(), (1, 5));
        assert_eq!(
            refused_parameter(
                PostgresStore::connect(&with_params(&url, "pool_size=2&pool_min_size=3")).await
            ),
            "pool_min_size"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connect_timeout_bounds_connecting() {
        // The real server must be configured for the test to count (it stays skipped
        // otherwise, like the others), though the timeout is shown against a silent one.
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let store = PostgresStore::connect(&with_params(&url, "connect_timeout=5"))
            .await
            .expect("a generous timeout connects");
        drop(store);

        // A server that accepts connections and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let silent = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        let started = Instant::now();
        let err = PostgresStore::connect(&format!(
            "postgres://nobody@127.0.0.1:{port}/none?sslmode=disable&connect_timeout=0.3"
        ))
        .await
        .expect_err("nothing answers");
        let took = started.elapsed();
        assert!(matches!(err, MemoryError::Store { .. }), "{err}");
        assert!(
            took < Duration::from_millis(2_500),
            "gave up after {took:?}, the default timeout is 3 s"
        );
        silent.abort();
        assert_eq!(
            refused_parameter(
                PostgresStore::connect(&with_params(&url, "connect_timeout=soon")).await
            ),
            "connect_timeout"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unknown_parameters_are_refused_by_name() {
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let parsed: StoreUrl = with_params(&url, "shcema=x").parse().expect("parse");
        let err = parsed.open().await.expect_err("refused");
        assert!(err.to_string().contains("`shcema`"), "{err}");
        assert_eq!(refused_parameter::<()>(Err(err)), "shcema");
        // libpq's own parameters still reach the driver
        PostgresStore::connect(&with_params(&url, "application_name=agentmem-test"))
            .await
            .expect("a driver parameter is accepted");
    }
}

#[cfg(feature = "redis")]
mod redis {
    use agentmemory_stores::RedisStore;

    use super::*;

    const URL_ENV: &str = "AGENTMEM_REDIS_URL";

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pool_size_opens_that_many_connections() {
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let store = RedisStore::connect(&with_params(&url, "pool_size=3"))
            .await
            .expect("connect");
        assert_eq!(store.pool_size(), 3);
        let ns = format!("url-params-{}", ulid::Ulid::new());
        // Commands go round the connections; each sees what the others wrote.
        for i in 0..6 {
            store
                .put(
                    &ns,
                    MemoryEntry::new(MemoryScope::Working, format!("k{i}"), i.into()),
                )
                .await
                .expect("put");
        }
        assert_eq!(store.list(&ns).await.expect("list").len(), 6);
        KvStore::clear(&store, &ns).await.expect("clear");
        let default = RedisStore::connect(&url).await.expect("connect");
        assert_eq!(default.pool_size(), 1, "the default is unchanged");
        assert_eq!(
            refused_parameter(RedisStore::connect(&with_params(&url, "pool_size=none")).await),
            "pool_size"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unknown_parameters_are_refused_by_name() {
        let Some(url) = server_url(URL_ENV) else {
            return;
        };
        let parsed: StoreUrl = with_params(&url, "poolsize=3").parse().expect("parse");
        let err = parsed.open().await.expect_err("refused");
        assert_eq!(refused_parameter::<()>(Err(err)), "poolsize");
    }
}
