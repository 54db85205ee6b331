//! `PostgresStore` against a real PostgreSQL server (`AGENTMEM_POSTGRES_URL`, exported by
//! `.ci/services.sh`): the four conformance suites (with pgvector, and with the
//! client-side dense ranking fallback in a second schema), schema versioning, isolation of
//! hostile ids, concurrency, two instances and two processes sharing one server,
//! `postgres://` URLs, and typed errors from an unreachable server.
#![cfg(feature = "postgres")]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::di::tokens;
use agentmemory_core::vector::{Document, SearchQuery};
use agentmemory_core::{testkit, ConversationStore, MemoryError, VectorStore};
use agentmemory_stores::{PostgresOptions, PostgresStore, StoreUrl};
use common::*;

const URL_ENV: &str = "AGENTMEM_POSTGRES_URL";

async fn connect() -> Option<PostgresStore> {
    let url = server_url(URL_ENV)?;
    Some(
        PostgresStore::connect(&url)
            .await
            .expect("connect to postgres"),
    )
}

/// A store in its own schema, with or without pgvector.
async fn connect_schema(schema: &str, use_pgvector: bool) -> Option<PostgresStore> {
    let url = server_url(URL_ENV)?;
    Some(
        PostgresStore::connect_with(
            &url,
            PostgresOptions {
                schema: schema.to_owned(),
                use_pgvector,
                ..PostgresOptions::default()
            },
        )
        .await
        .expect("connect to postgres"),
    )
}

/// Two stores (two pools, as two instances would have): the one searching keeps an index
/// of the user's facts, and sees every change the other makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_fact_ranking_sees_another_instance() {
    let (Some(reader), Some(writer)) = (connect().await, connect().await) else {
        return;
    };
    common::check_cached_ranking_sees_another_writer(&reader, &writer, "cache-check-pg").await;
}

/// An upsert through a kept index sees what another instance wrote since.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_reconciliation_sees_another_instance() {
    let (Some(first), Some(second)) = (connect().await, connect().await) else {
        return;
    };
    common::check_cached_reconciliation_sees_another_writer(&first, &second, "reconcile-check-pg")
        .await;
}

/// An upsert of a user whose facts the store keeps is one round trip: its statements go
/// out as one pipeline (current-thread runtime: see `common::turns`).
#[tokio::test]
async fn a_kept_upsert_is_one_round_trip() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let proxy = turns::TurnCounter::start(turns::upstream(&url)).await;
    let store = PostgresStore::connect(&proxy.url(&url))
        .await
        .expect("connect through the proxy");
    turns::check_kept_upserts_take_one_round_trip(&store, &proxy, &fresh("round-trips-pg")).await;
}

/// `synchronous_commit` in the URL is what every session of the store commits with; the
/// server's own setting without it; a level PostgreSQL does not have is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synchronous_commit_is_set_for_every_session() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let with = |param: &str| {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}{param}")
    };
    let server_default = PostgresStore::connect(&url).await.expect("connect");
    let raw = tokio_postgres_setting(&url).await;
    assert_eq!(
        server_default.synchronous_commit().await.expect("show"),
        raw
    );
    let relaxed = PostgresStore::connect(&with("synchronous_commit=off&pool_min_size=2"))
        .await
        .expect("connect");
    // Both pooled connections, held at once, commit with it.
    let (a, b) = tokio::join!(relaxed.synchronous_commit(), relaxed.synchronous_commit());
    assert_eq!(
        (a.expect("show"), b.expect("show")),
        ("off".into(), "off".into())
    );
    // Writes work, and the kept path still sees the other instance's writes.
    common::check_cached_reconciliation_sees_another_writer(
        &relaxed,
        &server_default,
        &fresh("reconcile-async-pg"),
    )
    .await;
    let local = PostgresStore::connect(&with("synchronous_commit=local"))
        .await
        .expect("connect");
    assert_eq!(local.synchronous_commit().await.expect("show"), "local");
    match PostgresStore::connect(&with("synchronous_commit=sometimes")).await {
        Err(MemoryError::UrlParameter { parameter, .. }) => {
            assert_eq!(parameter, "synchronous_commit")
        }
        other => panic!("accepted or another error: {other:?}"),
    }
}

/// The server's `synchronous_commit` for a plain session.
async fn tokio_postgres_setting(url: &str) -> String {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("raw connection");
    tokio::spawn(conn);
    client
        .query_one("SHOW synchronous_commit", &[])
        .await
        .expect("show")
        .get(0)
}

/// `clear_conversations` empties the store, so it runs in a schema of its own (dropped
/// afterwards).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clearing_conversations() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let schema = format!(
        "agentmem_c_{}",
        ulid::Ulid::new().to_string().to_lowercase()
    );
    let store = connect_schema(&schema, false).await.expect("create");
    testkit::conversation::check_clear(&store).await;
    drop(store);
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conversation_conformance() {
    let Some(store) = connect().await else { return };
    testkit::conversation::run_all(&store).await;
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_conformance() {
    let Some(store) = connect().await else { return };
    testkit::kv::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn facts_conformance() {
    let Some(store) = connect().await else { return };
    testkit::facts::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn vector_conformance_with_pgvector() {
    let Some(store) = connect().await else { return };
    assert!(
        store.uses_pgvector(),
        "the CI server ships pgvector; dense search must run in the server"
    );
    testkit::vector::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn episodes_conformance() {
    let Some(store) = connect().await else { return };
    let episodes = agentmemory_core::episodes::VectorEpisodeStore::new(std::sync::Arc::new(store));
    testkit::episodes::run_all(&episodes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn vector_conformance_without_pgvector() {
    let Some(store) = connect_schema("agentmem_nopgvector", false).await else {
        return;
    };
    assert!(!store.uses_pgvector());
    testkit::vector::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn both_dense_paths_rank_alike() {
    let Some(with) = connect().await else { return };
    let without = connect_schema("agentmem", false)
        .await
        .expect("same schema");
    let ns = fresh("dense");
    let docs = (0..20).map(|i| {
        let a = i as f32 / 20.0;
        Document::new(format!("doc {i}"))
            .with_id(format!("d{i:02}"))
            .with_embedding(vec![a.cos(), a.sin(), 0.1])
    });
    with.upsert_batch(&ns, docs.collect())
        .await
        .expect("upsert");
    let q = SearchQuery::new("", 5).with_embedding(vec![1.0, 0.3, 0.1]);
    let a = VectorStore::search(&with, &ns, &q)
        .await
        .expect("pgvector search");
    let b = VectorStore::search(&without, &ns, &q)
        .await
        .expect("client search");
    let ids = |h: &[agentmemory_core::vector::SearchHit]| {
        h.iter().map(|h| h.id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ids(&a), ids(&b));
    for (x, y) in a.iter().zip(&b) {
        assert!(
            (x.score - y.score).abs() < 1e-4,
            "{} vs {}",
            x.score,
            y.score
        );
    }
    VectorStore::clear(&with, &ns).await.expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let schema = format!(
        "agentmem_v_{}",
        ulid::Ulid::new().to_string().to_lowercase()
    );
    let store = connect_schema(&schema, false).await.expect("create");
    // Pretend a newer agentmem migrated this schema.
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("raw connection");
    let task = tokio::spawn(conn);
    client
        .execute(
            &format!("INSERT INTO \"{schema}\".schema_version (version) VALUES ($1)"),
            &[&((PostgresStore::SCHEMA_VERSION + 1) as i32)],
        )
        .await
        .expect("bump version");
    drop(store);
    let err = PostgresStore::connect_with(
        &url,
        PostgresOptions {
            schema: schema.clone(),
            ..PostgresOptions::default()
        },
    )
    .await
    .expect_err("newer schema");
    assert!(
        matches!(err, MemoryError::UnsupportedVersion { found, .. } if found == PostgresStore::SCHEMA_VERSION + 1),
        "{err:?}"
    );
    client
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await
        .expect("drop");
    drop(client);
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_names_must_be_plain_identifiers() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    for bad in ["", "Agentmem", "a-b", "a\"; DROP SCHEMA public; --", "1abc"] {
        let err = PostgresStore::connect_with(
            &url,
            PostgresOptions {
                schema: bad.to_owned(),
                ..PostgresOptions::default()
            },
        )
        .await
        .expect_err("refused");
        assert!(
            matches!(err, MemoryError::InvalidArgument { .. }),
            "{bad}: {err:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_ids_are_isolated() {
    let Some(store) = connect().await else { return };
    hostile_ids_isolated(&store, &store, &store).await;
    // Documents too.
    let a = format!("{}' OR '1'='1", fresh("ns"));
    let b = format!("{}%", fresh("ns"));
    VectorStore::upsert(&store, &a, Document::new("secret of a").with_id("*"))
        .await
        .expect("upsert");
    assert_eq!(VectorStore::len(&store, &b).await.expect("len"), 0);
    assert!(VectorStore::get(&store, &b, "*")
        .await
        .expect("get")
        .is_none());
    let hits = VectorStore::search(&store, &b, &SearchQuery::new("secret", 5))
        .await
        .expect("search");
    assert!(hits.is_empty());
    VectorStore::clear(&store, &a).await.expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_concurrent_writers_keep_one_order() {
    let Some(store) = connect().await else { return };
    thirty_two_writers(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_share_one_server() {
    let Some(a) = connect().await else { return };
    let b = connect().await.expect("second instance");
    two_instances_share((&a, &a, &a), (&b, &b, &b)).await;
    concurrent_fact_writers(Arc::new(a), Arc::new(b)).await;
}

/// In child mode (set by `two_processes_share_one_server`) this is the second process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_child_process() {
    let (Ok(id), Ok(user)) = (std::env::var(CHILD_CONV), std::env::var(CHILD_USER)) else {
        return;
    };
    let store = connect().await.expect("child needs the server");
    child_side(&store, &store, &id, &user).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_one_server() {
    if std::env::var(CHILD_CONV).is_ok() {
        return;
    }
    let Some(store) = connect().await else { return };
    parent_side(&store, &store, "postgres_child_process").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_urls_open_a_container() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let alt = url.replacen("postgres://", "postgresql://", 1);
    for u in [&url, &alt] {
        let parsed: StoreUrl = u.parse().expect("parse");
        assert_eq!(parsed, StoreUrl::Postgres(u.clone()));
        let container = parsed.open().await.expect("open");
        let conv = container
            .resolve::<dyn ConversationStore>(Some(tokens::CONVERSATIONS))
            .expect("conversations");
        let vectors = container
            .resolve::<dyn VectorStore>(Some(tokens::VECTORS))
            .expect("vectors");
        let id = fresh("url");
        assert_eq!(conv.append(&id, vec![msg("hi")]).await.expect("append"), 1);
        let direct = connect().await.expect("connect");
        assert_eq!(
            direct.load(&id).await.expect("load").len(),
            1,
            "same server"
        );
        let ns = fresh("url-docs");
        vectors
            .upsert(&ns, Document::new("persisted"))
            .await
            .expect("upsert");
        assert_eq!(
            VectorStore::len(&direct, &ns).await.expect("len"),
            1,
            "vectors persist"
        );
        ConversationStore::delete(&direct, &id)
            .await
            .expect("cleanup");
        VectorStore::clear(&direct, &ns).await.expect("cleanup");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_typed_error_in_bounded_time() {
    for url in [
        "postgres://nobody@127.0.0.1:1/none",
        "postgres://nobody@10.255.255.1:5432/none",
    ] {
        let start = Instant::now();
        let err = PostgresStore::connect_with(
            url,
            PostgresOptions {
                connect_timeout: Duration::from_secs(1),
                operation_timeout: Duration::from_secs(2),
                ..PostgresOptions::default()
            },
        )
        .await
        .expect_err("nothing listens there");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{url}: took {:?}",
            start.elapsed()
        );
        assert_store_error(&err, "postgres");
    }
    assert!(PostgresStore::connect("not a url").await.is_err());
}

/// Two instances (two pools), each writing through its own cache of ranked facts, always
/// rank exactly the facts the server holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn interleaved_writers_see_each_other() {
    let (Some(a), Some(b)) = (connect().await, connect().await) else {
        return;
    };
    common::check_interleaved_writers_see_each_other(&a, &b, "interleave-pg").await;
}

/// A user with many facts: a store opened after a search and after writes (each new
/// instance reads the snapshot and the writes logged since) ranks and reconciles as a
/// fresh read of the facts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_after_writes_ranks_and_reconciles_as_a_fresh_read() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    // A schema of its own: this build's migrations stay off the shared one.
    let schema = format!("agentmem_snap_{}", std::process::id());
    let first = connect_schema(&schema, false).await.expect("create");
    let user = fresh("snapshot-pg");
    common::check_snapshot_then_writes(
        &first,
        || async {
            Arc::new(connect_schema(&schema, false).await.expect("connect"))
                as Arc<dyn agentmemory_core::UserMemoryStore>
        },
        &user,
    )
    .await;
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("raw connection");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await
        .expect("drop");
}

/// A schema at version 4 (facts counted by the version trigger, nothing logged) moves to
/// 5 on connect, keeps its facts, and logs every change from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_4_schema_migrates_and_logs_changes() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let schema = format!("agentmem_m4_{}", std::process::id());
    let store = connect_schema(&schema, false).await.expect("create");
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("raw connection");
    tokio::spawn(conn);
    let user = fresh("m4");
    use agentmemory_core::{FactCandidate, UserMemoryStore};
    UserMemoryStore::upsert(&store, &user, FactCandidate::new("likes jazz", 0.8))
        .await
        .expect("write");
    // Back to version 4: the trigger function of version 2, no snapshots, no log.
    client
        .batch_execute(&format!(
            r#"
            DELETE FROM "{schema}".schema_version WHERE version = 5;
            DROP TABLE "{schema}".fact_snapshots, "{schema}".fact_log;
            CREATE OR REPLACE FUNCTION "{schema}".bump_fact_version() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP <> 'INSERT' THEN
                    INSERT INTO "{schema}".fact_versions AS v (user_id, version) VALUES (OLD.user_id, 1)
                        ON CONFLICT (user_id) DO UPDATE SET version = v.version + 1;
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    INSERT INTO "{schema}".fact_versions AS v (user_id, version) VALUES (NEW.user_id, 1)
                        ON CONFLICT (user_id) DO UPDATE SET version = v.version + 1;
                END IF;
                RETURN NULL;
            END
            $$;
            "#
        ))
        .await
        .expect("back to version 4");
    drop(store);
    store_at_4_writes(&client, &schema, &user).await;
    let store = connect_schema(&schema, false).await.expect("migrate");
    let again = connect_schema(&schema, false)
        .await
        .expect("migrate again: a no-op");
    let hits = UserMemoryStore::search(&again, &user, "jazz", 3)
        .await
        .expect("search");
    assert_eq!(hits[0].fact.text, "likes jazz");
    UserMemoryStore::upsert(&store, &user, FactCandidate::new("plays chess", 0.8))
        .await
        .expect("write after");
    let version: i64 = client
        .query_one(
            &format!("SELECT version FROM \"{schema}\".fact_versions WHERE user_id = $1"),
            &[&user],
        )
        .await
        .expect("version")
        .get(0);
    let logged: Vec<i64> = client
        .query(
            &format!(
                "SELECT version FROM \"{schema}\".fact_log WHERE user_id = $1 ORDER BY version"
            ),
            &[&user],
        )
        .await
        .expect("log")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        logged,
        vec![version],
        "only the write after the migration is logged"
    );
    client
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await
        .expect("drop");
}

/// A write by a version-4 client: counted, not logged.
async fn store_at_4_writes(client: &tokio_postgres::Client, schema: &str, user: &str) {
    client
        .execute(
            &format!(
                "UPDATE \"{schema}\".facts SET body = jsonb_set(body, '{{confidence}}', '0.9') \
                 WHERE user_id = $1"
            ),
            &[&user],
        )
        .await
        .expect("old write");
}
