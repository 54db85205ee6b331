//! `RedisStore` against a real Redis server (`AGENTMEM_REDIS_URL`, exported by
//! `.ci/services.sh`): the conformance suites, isolation of hostile ids, concurrency,
//! two application instances and two processes sharing one server, `redis://` URLs,
//! and typed errors from an unreachable server.
#![cfg(feature = "redis")]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::di::tokens;
use agentmemory_core::{
    testkit, ConversationStore, KvStore, MemoryEntry, MemoryError, MemoryScope, UserMemoryStore,
    VectorStore,
};
use agentmemory_stores::{RedisOptions, RedisStore, StoreUrl};
use common::*;

const URL_ENV: &str = "AGENTMEM_REDIS_URL";

async fn connect() -> Option<RedisStore> {
    let url = server_url(URL_ENV)?;
    Some(RedisStore::connect(&url).await.expect("connect to redis"))
}

/// Two connections (as two instances would have): the one searching keeps an index of
/// the user's facts, and sees every change the other makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_fact_ranking_sees_another_instance() {
    let (Some(reader), Some(writer)) = (connect().await, connect().await) else {
        return;
    };
    common::check_cached_ranking_sees_another_writer(&reader, &writer, "cache-check-redis").await;
}

/// An upsert through a kept index sees what another instance wrote since.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cached_reconciliation_sees_another_instance() {
    let (Some(first), Some(second)) = (connect().await, connect().await) else {
        return;
    };
    common::check_cached_reconciliation_sees_another_writer(
        &first,
        &second,
        "reconcile-check-redis",
    )
    .await;
}

/// An upsert of a user whose facts the store keeps is one round trip: the commit script
/// checks the version and writes (current-thread runtime: see `common::turns`).
#[tokio::test]
async fn a_kept_upsert_is_one_round_trip() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let proxy = turns::TurnCounter::start(turns::upstream(&url)).await;
    let store = RedisStore::connect_with(
        &proxy.url(&url),
        RedisOptions {
            prefix: format!("agentmem-test-{}:", ulid::Ulid::new()),
            ..RedisOptions::default()
        },
    )
    .await
    .expect("connect through the proxy");
    turns::check_kept_upserts_take_one_round_trip(&store, &proxy, "round-trips-redis").await;
}

/// `clear_conversations` empties the store, so it runs under a key prefix of its own.
#[tokio::test]
async fn clearing_conversations() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let store = RedisStore::connect_with(
        &url,
        RedisOptions {
            prefix: format!("agentmem-test-{}:", ulid::Ulid::new()),
            ..RedisOptions::default()
        },
    )
    .await
    .expect("connect to redis");
    testkit::conversation::check_clear(&store).await;
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
async fn hostile_ids_are_isolated() {
    let Some(store) = connect().await else { return };
    hostile_ids_isolated(&store, &store, &store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_custom_prefix_separates_stores() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let a = RedisStore::connect(&url).await.expect("connect");
    let b = RedisStore::connect_with(
        &url,
        RedisOptions {
            prefix: format!("agentmem-test-{}:", ulid::Ulid::new()),
            ..RedisOptions::default()
        },
    )
    .await
    .expect("connect");
    let ns = fresh("prefix");
    a.put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");
    assert!(KvStore::get(&b, &ns, "k").await.expect("get").is_none());
    assert!(KvStore::list(&b, &ns).await.expect("list").is_empty());
    assert_eq!(KvStore::clear(&a, &ns).await.expect("clear"), 1);
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
async fn redis_child_process() {
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
    parent_side(&store, &store, "redis_child_process").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_urls_open_a_container() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let parsed: StoreUrl = url.parse().expect("parse");
    assert_eq!(parsed, StoreUrl::Redis(url.clone()));
    let container = parsed.open().await.expect("open");
    let conv = container
        .resolve::<dyn ConversationStore>(Some(tokens::CONVERSATIONS))
        .expect("conversations");
    let id = fresh("url");
    assert_eq!(conv.append(&id, vec![msg("hi")]).await.expect("append"), 1);
    let direct = RedisStore::connect(&url).await.expect("connect");
    assert_eq!(
        direct.load(&id).await.expect("load").len(),
        1,
        "same server"
    );
    assert!(
        container
            .resolve::<dyn VectorStore>(Some(tokens::VECTORS))
            .is_ok(),
        "an in-memory vector store is registered"
    );
    assert!(container
        .resolve::<dyn UserMemoryStore>(Some(tokens::USER_MEMORY))
        .is_ok());
    ConversationStore::delete(&direct, &id)
        .await
        .expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_typed_error_in_bounded_time() {
    // Port 1 is never a Redis server; a black-hole address would test the connect timeout.
    for url in ["redis://127.0.0.1:1/", "redis://10.255.255.1:6379/"] {
        let start = Instant::now();
        let err = RedisStore::connect_with(
            url,
            RedisOptions {
                connect_timeout: Duration::from_secs(1),
                ..RedisOptions::default()
            },
        )
        .await
        .expect_err("nothing listens there");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{url}: took {:?}",
            start.elapsed()
        );
        assert_store_error(&err, "redis");
    }
    assert!(RedisStore::connect("not a url").await.is_err());
}

/// A raw connection to the server, for writing keys as an older agentmem laid them out.
async fn raw(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("connect")
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Every key under `prefix`.
async fn keys_under(conn: &mut redis::aio::MultiplexedConnection, prefix: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(conn)
        .await
        .expect("KEYS");
    keys.sort();
    keys
}

/// A store written with the layout before hash tags (layout 1) is moved to the tagged one
/// on connect: every conversation, KV entry, fact and document is still there, no key
/// keeps its old name, and writes carry on from where the old data left off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_of_the_untagged_layout_move_on_connect() {
    use agentmemory_core::vector::{Document, SearchQuery};
    use agentmemory_core::{FactCandidate, MemoryFact};
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let p = format!("agentmem-layout1-{}:", ulid::Ulid::new());
    let mut conn = raw(&url).await;
    let (conv, ns, user, docs) = ("c:1", "ns 1", "u{1}", "d*1");
    let (hc, hn, hu, hd) = (hex(conv), hex(ns), hex(user), hex(docs));
    let event = serde_json::to_string(&msg("hello from layout 1")).expect("json");
    let entry = MemoryEntry::new(MemoryScope::Working, "k", "v1".into());
    let fact = MemoryFact::from_candidate(
        user,
        FactCandidate::new("likes jazz", 0.9),
        chrono::Utc::now(),
    );
    let doc = Document::new("old document about sailing")
        .with_id("doc-1")
        .with_embedding(vec![1.0, 0.0, 0.0]);
    let mut pipe = redis::pipe();
    pipe.cmd("SET")
        .arg(format!("{p}conv:{hc}:seq"))
        .arg(1)
        .cmd("ZADD")
        .arg(format!("{p}conv:{hc}:events"))
        .arg(1)
        .arg(format!("1:1700000000000000:{event}"))
        .cmd("SADD")
        .arg(format!("{p}conversations"))
        .arg(conv)
        .cmd("SET")
        .arg(format!("{p}kv:{hn}:{}", hex("k")))
        .arg(serde_json::to_string(&entry).expect("json"))
        .cmd("SADD")
        .arg(format!("{p}kvidx:{hn}"))
        .arg("k")
        .cmd("SADD")
        .arg(format!("{p}kvns"))
        .arg(ns)
        .cmd("HSET")
        .arg(format!("{p}facts:{hu}"))
        .arg(&fact.id)
        .arg(serde_json::to_string(&fact).expect("json"))
        .cmd("SET")
        .arg(format!("{p}factsver:{hu}"))
        .arg(1)
        .cmd("HSET")
        .arg(format!("{p}docs:{hd}"))
        .arg("doc-1")
        .arg(serde_json::to_string(&doc).expect("json"))
        .cmd("SET")
        .arg(format!("{p}docsver:{hd}"))
        .arg(1)
        .cmd("SET")
        .arg(format!("{p}docsdim:{hd}"))
        .arg(3);
    pipe.query_async::<()>(&mut conn).await.expect("layout 1");
    assert_eq!(keys_under(&mut conn, &p).await.len(), 11);

    let options = || RedisOptions {
        prefix: p.clone(),
        ..RedisOptions::default()
    };
    let store = RedisStore::connect_with(&url, options())
        .await
        .expect("connect");
    let keys = keys_under(&mut conn, &p).await;
    assert_eq!(keys.len(), 12, "11 moved, plus the layout key: {keys:?}");
    assert!(
        keys.iter().all(|k| k[p.len()..].starts_with('{')),
        "{keys:?}"
    );
    let events = store.load(conv).await.expect("load");
    assert_eq!(events.len(), 1);
    assert_eq!(text_of(&events[0].event), "hello from layout 1");
    assert!(store
        .list_conversations()
        .await
        .expect("list")
        .contains(&conv.to_owned()));
    assert_eq!(
        store.append(conv, vec![msg("next")]).await.expect("append"),
        2
    );
    let got = KvStore::get(&store, ns, "k")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(got.content, entry.content);
    assert_eq!(KvStore::list(&store, ns).await.expect("list").len(), 1);
    let facts = UserMemoryStore::list(&store, user).await.expect("facts");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].id, fact.id);
    let hits = VectorStore::search(
        &store,
        docs,
        &SearchQuery::new("", 1).with_embedding(vec![1.0, 0.0, 0.0]),
    )
    .await
    .expect("search");
    assert_eq!(hits[0].id, "doc-1");
    let err = VectorStore::upsert(
        &store,
        docs,
        Document::new("x").with_embedding(vec![1.0, 0.0]),
    )
    .await
    .expect_err("the old dimension still holds");
    assert!(
        matches!(err, MemoryError::DimensionMismatch { expected: 3, .. }),
        "{err}"
    );

    // Connecting again moves nothing and loses nothing.
    let again = RedisStore::connect_with(&url, options())
        .await
        .expect("connect again");
    assert_eq!(again.load(conv).await.expect("load").len(), 2);

    // An old key whose new name is taken: refused, naming both, nothing overwritten.
    redis::cmd("SET")
        .arg(format!("{p}kvns"))
        .arg("x")
        .query_async::<()>(&mut conn)
        .await
        .expect("set");
    redis::cmd("DEL")
        .arg(format!("{p}{{index}}:layout"))
        .query_async::<()>(&mut conn)
        .await
        .expect("del");
    let err = RedisStore::connect_with(&url, options())
        .await
        .expect_err("conflict");
    let text = err.chain().to_string();
    assert!(matches!(err, MemoryError::Corrupt { .. }), "{text}");
    assert!(
        text.contains(&format!("{p}kvns")) && text.contains(&format!("{p}{{index}}:kvns")),
        "{text}"
    );

    // A layout from a newer agentmem: refused.
    redis::cmd("SET")
        .arg(format!("{p}{{index}}:layout"))
        .arg(3)
        .query_async::<()>(&mut conn)
        .await
        .expect("set");
    let err = RedisStore::connect_with(&url, options())
        .await
        .expect_err("newer layout");
    assert!(
        matches!(err, MemoryError::UnsupportedVersion { found: 3, .. }),
        "{err}"
    );

    let keys = keys_under(&mut conn, &p).await;
    redis::cmd("DEL")
        .arg(keys)
        .query_async::<()>(&mut conn)
        .await
        .expect("cleanup");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_with_braces_is_refused() {
    let err = RedisStore::connect_with(
        "redis://127.0.0.1:1/",
        RedisOptions {
            prefix: "app{1}:".to_owned(),
            ..RedisOptions::default()
        },
    )
    .await
    .expect_err("braces would change the hash tags");
    assert!(matches!(err, MemoryError::InvalidArgument { .. }), "{err}");
}

/// Two instances, each writing through its own cache of ranked facts, always rank
/// exactly the facts the server holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn interleaved_writers_see_each_other() {
    let (Some(a), Some(b)) = (connect().await, connect().await) else {
        return;
    };
    common::check_interleaved_writers_see_each_other(&a, &b, "interleave-redis").await;
}

/// A user with many facts: a store opened after a search and after writes (each new
/// instance reads the snapshot and the writes logged since) ranks and reconciles as a
/// fresh read of the facts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_after_writes_ranks_and_reconciles_as_a_fresh_read() {
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let prefix = format!("agentmem-test-{}:", ulid::Ulid::new());
    let open = || {
        let (url, prefix) = (url.clone(), prefix.clone());
        async move {
            let options = agentmemory_stores::RedisOptions {
                prefix,
                ..agentmemory_stores::RedisOptions::default()
            };
            Arc::new(
                RedisStore::connect_with(&url, options)
                    .await
                    .expect("connect"),
            ) as Arc<dyn agentmemory_core::UserMemoryStore>
        }
    };
    let first = open().await;
    common::check_snapshot_then_writes(&*first, open, "snapshot-redis").await;
}

/// The snapshot is what an opening store reads (one whose facts differ from the hash
/// shows through), and a damaged one is read around and replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_snapshot_is_read_and_a_damaged_one_replaced() {
    use agentmemory_core::store_support::RankedFacts;
    use agentmemory_core::UserMemoryStore;
    let Some(url) = server_url(URL_ENV) else {
        return;
    };
    let prefix = format!("agentmem-test-{}:", ulid::Ulid::new());
    let open = || async {
        let options = RedisOptions {
            prefix: prefix.clone(),
            ..RedisOptions::default()
        };
        RedisStore::connect_with(&url, options)
            .await
            .expect("connect")
    };
    let user = "planted";
    let key = format!("{prefix}{{facts:{}}}:snapshot", hex(user));
    let mut facts = snapshot_facts(user, SNAPSHOT_FACTS);
    let store = open().await;
    store
        .import_records(user, facts.clone())
        .await
        .expect("import");
    UserMemoryStore::search(&store, user, "jazz", 3)
        .await
        .expect("search");
    let mut conn = redis::Client::open(url.as_str())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection");
    let kept: Vec<u8> = redis::cmd("HGET")
        .arg(&key)
        .arg("body")
        .query_async(&mut conn)
        .await
        .expect("HGET");
    assert!(
        RankedFacts::from_snapshot(&kept, user).is_ok(),
        "a snapshot is kept"
    );
    facts[5].text = "plays the theremin".into();
    let planted = RankedFacts::new(facts.clone()).snapshot(user);
    let () = redis::cmd("HSET")
        .arg(&key)
        .arg("body")
        .arg(&planted)
        .query_async(&mut conn)
        .await
        .expect("plant");
    let hits = UserMemoryStore::search(&open().await, user, "theremin", 3)
        .await
        .expect("search");
    assert_eq!(hits[0].fact.text, "plays the theremin");
    let () = redis::cmd("HSET")
        .arg(&key)
        .arg("body")
        .arg("no snapshot")
        .query_async(&mut conn)
        .await
        .expect("damage");
    let hits = UserMemoryStore::search(&open().await, user, "theremin", 3)
        .await
        .expect("search");
    assert_ne!(
        hits[0].fact.text, "plays the theremin",
        "the facts themselves are read"
    );
    let kept: Vec<u8> = redis::cmd("HGET")
        .arg(&key)
        .arg("body")
        .query_async(&mut conn)
        .await
        .expect("HGET");
    assert!(
        RankedFacts::from_snapshot(&kept, user).is_ok(),
        "replaced by a readable one"
    );
    store.forget_user(user).await.expect("forget");
    let left: bool = redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .expect("EXISTS");
    assert!(!left, "forgotten with the user");
}
