//! Helpers shared by the Redis and PostgreSQL tests: finding the servers (from the
//! variables `.ci/services.sh` exports), controlling them, and checks that hold for any
//! server-backed store.
#![allow(dead_code)]

#[cfg(feature = "redis")]
pub mod cluster;
pub mod corpus;
pub mod defaults;
#[cfg(any(feature = "redis", feature = "postgres"))]
pub mod turns;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::{
    ConversationEvent, ConversationStore, FactCandidate, KvStore, MemoryEntry, MemoryError,
    MemoryScope, Message, UserMemoryStore,
};

/// The URL in `var`; `None` (after a visible message) when unset outside CI.
/// In CI (`CI=true`) an unset variable fails the test.
pub fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Some(v.trim().to_owned()),
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{var} is not set: CI must start the servers with `source .ci/services.sh`");
            }
            skip_notice(&format!("skipping: set {var} to run"));
            None
        }
    }
}

/// Prints `text` on stderr even while the test harness captures output (it captures the
/// print macros only), so a skipped server test is visible in a plain `cargo test`.
fn skip_notice(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The stop and start commands in `stop_var`/`start_var`; `None` (after a message) when
/// either is unset, since then the test cannot control the server.
pub fn server_control(stop_var: &str, start_var: &str) -> Option<(String, String)> {
    match (std::env::var(stop_var), std::env::var(start_var)) {
        (Ok(stop), Ok(start)) if !stop.is_empty() && !start.is_empty() => Some((stop, start)),
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{stop_var}/{start_var} are not set: CI must `source .ci/services.sh`");
            }
            skip_notice(&format!(
                "skipping: set {stop_var} and {start_var} to run the restart test"
            ));
            None
        }
    }
}

/// Runs a shell command, failing the test when it fails.
pub fn sh(cmd: &str) {
    let status = std::process::Command::new("bash")
        .args(["-c", cmd])
        .status()
        .unwrap_or_else(|e| panic!("run `{cmd}`: {e}"));
    assert!(status.success(), "`{cmd}` failed: {status}");
}

/// A fresh id, unique per call.
pub fn fresh(tag: &str) -> String {
    format!("{tag}-{}", ulid::Ulid::new())
}

pub fn msg(text: impl Into<String>) -> ConversationEvent {
    let text: String = text.into();
    ConversationEvent::Message {
        message: Message::user(text),
    }
}

pub fn text_of(event: &ConversationEvent) -> String {
    match event {
        ConversationEvent::Message { message } => message.text(),
        other => format!("{other:?}"),
    }
}

/// The texts of `user`'s current facts in `store`, sorted.
pub async fn held_texts(store: &dyn UserMemoryStore, user: &str) -> Vec<String> {
    let mut held: Vec<String> = store
        .list(user)
        .await
        .expect("list")
        .into_iter()
        .map(|f| f.text)
        .collect();
    held.sort();
    held
}

/// Asserts `err` is a [`MemoryError::Store`] of `store`.
pub fn assert_store_error(err: &MemoryError, store: &str) {
    match err {
        MemoryError::Store { store: s, .. } => assert_eq!(s, store, "{err}"),
        other => panic!("expected a {store} store error, got {other:?}"),
    }
}

/// Ids that would break a store that put ids into keys, patterns or SQL unescaped.
pub const HOSTILE_IDS: &[&str] = &[
    "*",
    "a*",
    "a:b",
    "a",
    "a:",
    ":a",
    "%",
    "a%",
    "_",
    "'",
    "\"",
    "{a}",
    "[a]",
    "?",
    "a\\",
    "x' OR '1'='1",
    "x; DROP TABLE facts; --",
    "Robert'); DELETE FROM kv; --",
    "ü ñ 漢字",
];

/// 32 concurrent writers (10 appends each, single and batched, through spawned tasks) to
/// one conversation: no event lost, seqs 1..=N contiguous, each writer's events in order.
pub async fn thirty_two_writers(store: Arc<dyn ConversationStore>) {
    let id = fresh("writers");
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..32 {
        let store = Arc::clone(&store);
        let id = id.clone();
        tasks.spawn(async move {
            let mut i = 0;
            while i < 10 {
                if i % 3 == 0 && i + 2 < 10 {
                    let batch = (i..i + 2).map(|j| msg(format!("w{w}-{j}"))).collect();
                    store.append(&id, batch).await.expect("batched append");
                    i += 2;
                } else {
                    store
                        .append(&id, vec![msg(format!("w{w}-{i}"))])
                        .await
                        .expect("append");
                    i += 1;
                }
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("writer task");
    }
    let events = store.load(&id).await.expect("load");
    assert_eq!(events.len(), 320, "every event kept");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seqs contiguous");
    }
    let texts: Vec<String> = events.iter().map(|e| text_of(&e.event)).collect();
    let unique: HashSet<&String> = texts.iter().collect();
    assert_eq!(unique.len(), 320, "no duplicate");
    for w in 0..32 {
        let mine: Vec<usize> = texts
            .iter()
            .filter_map(|t| t.strip_prefix(&format!("w{w}-")))
            .map(|j| j.parse().expect("index"))
            .collect();
        assert_eq!(mine, (0..10).collect::<Vec<_>>(), "writer {w} in order");
    }
    store.delete(&id).await.expect("delete");
}

/// Two independently connected instances see each other's events, facts and entries.
pub async fn two_instances_share(
    a: (&dyn ConversationStore, &dyn UserMemoryStore, &dyn KvStore),
    b: (&dyn ConversationStore, &dyn UserMemoryStore, &dyn KvStore),
) {
    let conv = fresh("shared");
    let user = fresh("user");
    let ns = fresh("ns");
    a.0.append(&conv, vec![msg("from a")])
        .await
        .expect("append a");
    b.0.append(&conv, vec![msg("from b")])
        .await
        .expect("append b");
    let seen: Vec<String> =
        a.0.load(&conv)
            .await
            .expect("load")
            .iter()
            .map(|e| text_of(&e.event))
            .collect();
    assert_eq!(seen, ["from a", "from b"]);
    a.1.upsert(&user, FactCandidate::new("likes green tea", 0.8))
        .await
        .expect("upsert a");
    let change =
        b.1.upsert(&user, FactCandidate::new("likes green tea", 0.8))
            .await
            .expect("upsert b");
    assert_eq!(change.kind(), "reinforced", "b reinforces a's fact");
    let hits = a.1.search(&user, "tea", 5).await.expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].fact.reinforcement_count, 1);
    b.2.put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");
    assert!(a.2.get(&ns, "k").await.expect("get").is_some());
    a.0.delete(&conv).await.expect("cleanup");
    a.1.forget_user(&user).await.expect("cleanup");
    a.2.clear(&ns).await.expect("cleanup");
}

/// Concurrent fact writers on two instances: every distinct fact is kept, and a fact
/// stated by all of them is reinforced once per statement after the first.
pub async fn concurrent_fact_writers(a: Arc<dyn UserMemoryStore>, b: Arc<dyn UserMemoryStore>) {
    let user = fresh("fact-writers");
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..16 {
        let store = if w % 2 == 0 {
            Arc::clone(&a)
        } else {
            Arc::clone(&b)
        };
        let user = user.clone();
        tasks.spawn(async move {
            store
                .upsert(
                    &user,
                    FactCandidate::new(format!("owns instrument number {w}"), 0.7),
                )
                .await
                .expect("upsert distinct");
            store
                .upsert(&user, FactCandidate::new("likes jazz", 0.6))
                .await
                .expect("upsert shared");
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("task");
    }
    let facts = a.list(&user).await.expect("list");
    assert_eq!(
        facts.len(),
        17,
        "16 distinct facts and one shared: {facts:#?}"
    );
    let jazz = facts
        .iter()
        .find(|f| f.text == "likes jazz")
        .expect("shared fact");
    assert_eq!(jazz.reinforcement_count, 15, "no lost reinforcement");
    a.forget_user(&user).await.expect("cleanup");
}

/// Data written under one hostile id is unreachable through every other one.
pub async fn hostile_ids_isolated(
    conv: &dyn ConversationStore,
    facts: &dyn UserMemoryStore,
    kv: &dyn KvStore,
) {
    let run = ulid::Ulid::new().to_string();
    let ids: Vec<String> = HOSTILE_IDS.iter().map(|h| format!("{run}{h}")).collect();
    for id in &ids {
        conv.append(id, vec![msg(format!("conv of {id}"))])
            .await
            .expect("append");
        facts
            .upsert(id, FactCandidate::new(format!("fact of {id}"), 0.9))
            .await
            .expect("upsert");
        kv.put(
            id,
            MemoryEntry::new(MemoryScope::Working, id.as_str(), id.as_str().into()),
        )
        .await
        .expect("put");
        // A key that looks like a pattern matching every other key.
        kv.put(
            id,
            MemoryEntry::new(MemoryScope::Working, "*", "star".into()),
        )
        .await
        .expect("put star");
    }
    for id in &ids {
        let events = conv.load(id).await.expect("load");
        assert_eq!(events.len(), 1, "{id:?}");
        assert_eq!(text_of(&events[0].event), format!("conv of {id}"));
        let listed = facts.list(id).await.expect("list");
        assert_eq!(listed.len(), 1, "{id:?}");
        assert_eq!(listed[0].text, format!("fact of {id}"));
        let hits = facts.search(id, "fact", 50).await.expect("search");
        assert_eq!(hits.len(), 1, "{id:?}");
        let entries = kv.list(id).await.expect("list");
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        let mut want = vec!["*", id.as_str()];
        want.sort();
        assert_eq!(keys, want, "{id:?}");
        for other in &ids {
            if other != id {
                assert!(
                    kv.get(id, other).await.expect("get").is_none(),
                    "{id:?} sees {other:?}"
                );
                assert!(facts.get(id, &listed[0].id).await.expect("get").is_some());
                assert!(facts
                    .get(other, &listed[0].id)
                    .await
                    .expect("get")
                    .is_none());
            }
        }
    }
    // Clearing one leaves the others whole.
    let (first, rest) = ids.split_first().expect("ids");
    assert!(conv.delete(first).await.expect("delete"));
    assert_eq!(facts.forget_user(first).await.expect("forget"), 1);
    assert_eq!(kv.clear(first).await.expect("clear"), 2);
    for id in rest {
        assert_eq!(conv.load(id).await.expect("load").len(), 1, "{id:?}");
        assert_eq!(facts.list(id).await.expect("list").len(), 1, "{id:?}");
        assert_eq!(kv.list(id).await.expect("list").len(), 2, "{id:?}");
        conv.delete(id).await.expect("cleanup");
        facts.forget_user(id).await.expect("cleanup");
        kv.clear(id).await.expect("cleanup");
    }
}

/// Runs `op` until it succeeds (the server coming back), for at most `limit`.
pub async fn until_ok<T, F, Fut>(limit: Duration, mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = agentmemory_core::Result<T>>,
{
    let start = Instant::now();
    loop {
        match op().await {
            Ok(v) => return v,
            Err(e) if start.elapsed() < limit => {
                eprintln!("waiting for the server: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("server not back after {limit:?}: {e}"),
        }
    }
}

/// Child-process protocol: the parent re-executes the test binary with these variables;
/// the child checks the parent's data and adds its own.
pub const CHILD_CONV: &str = "AGENTMEM_TEST_CHILD_CONV";
pub const CHILD_USER: &str = "AGENTMEM_TEST_CHILD_USER";

/// The child's side: sees the parent's event and fact, then appends and upserts its own.
pub async fn child_side(
    conv: &dyn ConversationStore,
    facts: &dyn UserMemoryStore,
    id: &str,
    user: &str,
) {
    let events = conv.load(id).await.expect("child load");
    assert_eq!(events.len(), 1, "child sees the parent's event");
    assert_eq!(text_of(&events[0].event), "from parent");
    assert_eq!(
        facts.list(user).await.expect("child list").len(),
        1,
        "child sees the parent's fact"
    );
    conv.append(id, vec![msg("from child")])
        .await
        .expect("child append");
    facts
        .upsert(user, FactCandidate::new("plays the cello", 0.9))
        .await
        .expect("child upsert");
}

/// The parent's side: writes, runs `test_name` of this binary as a child process with the
/// ids, and checks the child's writes.
pub async fn parent_side(
    conv: &dyn ConversationStore,
    facts: &dyn UserMemoryStore,
    test_name: &str,
) {
    let id = fresh("two-processes");
    let user = fresh("two-processes-user");
    conv.append(&id, vec![msg("from parent")])
        .await
        .expect("append");
    facts
        .upsert(&user, FactCandidate::new("likes hiking", 0.9))
        .await
        .expect("upsert");
    let exe = std::env::current_exe().expect("current exe");
    // Output captured, so the child's own test summary does not mix with ours.
    let out = tokio::process::Command::new(exe)
        .args(["--exact", test_name, "--test-threads=1"])
        .env(CHILD_CONV, &id)
        .env(CHILD_USER, &user)
        .output()
        .await
        .expect("spawn the child process");
    assert!(
        out.status.success(),
        "child process failed: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let texts: Vec<String> = conv
        .load(&id)
        .await
        .expect("load")
        .iter()
        .map(|e| text_of(&e.event))
        .collect();
    assert_eq!(texts, ["from parent", "from child"]);
    let mut fact_texts: Vec<String> = facts
        .list(&user)
        .await
        .expect("list")
        .into_iter()
        .map(|f| f.text)
        .collect();
    fact_texts.sort();
    assert_eq!(fact_texts, ["likes hiking", "plays the cello"]);
    conv.delete(&id).await.expect("cleanup");
    facts.forget_user(&user).await.expect("cleanup");
}

/// Runs `op` while the server is down: it must fail within `bound` with a typed
/// `MemoryError::Store` naming `store`, never hang or panic.
pub async fn fails_fast<T: std::fmt::Debug>(
    what: &str,
    store: &str,
    bound: Duration,
    op: impl std::future::Future<Output = agentmemory_core::Result<T>>,
) {
    let t = Instant::now();
    let err = op.await.expect_err("server is down");
    eprintln!("server down: {what} failed after {:?}", t.elapsed());
    assert!(
        t.elapsed() < bound,
        "{what} failed only after {:?}",
        t.elapsed()
    );
    assert_store_error(&err, store);
}

/// The restart scenario for a server-backed store: write, stop the server (`stop`),
/// check every operation fails fast with a typed error, start it again (`start`), and
/// check that everything acknowledged before is still there and writing works again.
/// `vectors` adds the same checks for a store that also holds documents.
pub async fn survives_restart<S>(
    store: &S,
    vectors: Option<&dyn agentmemory_core::VectorStore>,
    name: &str,
    (stop, start): (&str, &str),
    bound: Duration,
) where
    S: ConversationStore + UserMemoryStore + KvStore,
{
    let conv = fresh("restart");
    let user = fresh("restart-user");
    let ns = fresh("restart-ns");
    for i in 0..20 {
        store
            .append(&conv, vec![msg(format!("before {i}"))])
            .await
            .expect("append");
    }
    UserMemoryStore::upsert(store, &user, FactCandidate::new("likes sailing", 0.9))
        .await
        .expect("upsert");
    store
        .put(&ns, MemoryEntry::new(MemoryScope::Working, "k", "v".into()))
        .await
        .expect("put");
    if let Some(vectors) = vectors {
        let doc = agentmemory_core::vector::Document::new("kept").with_id("d");
        vectors.upsert(&ns, doc).await.expect("upsert doc");
    }

    sh(stop);
    fails_fast(
        "append",
        name,
        bound,
        store.append(&conv, vec![msg("down")]),
    )
    .await;
    fails_fast("load", name, bound, store.load(&conv)).await;
    let candidate = FactCandidate::new("likes rowing", 0.9);
    fails_fast(
        "upsert",
        name,
        bound,
        UserMemoryStore::upsert(store, &user, candidate),
    )
    .await;
    fails_fast("get", name, bound, KvStore::get(store, &ns, "k")).await;
    if let Some(vectors) = vectors {
        fails_fast("len", name, bound, vectors.len(&ns)).await;
    }

    sh(start);
    let events = until_ok(Duration::from_secs(20), || store.load(&conv)).await;
    let texts: Vec<String> = events.iter().map(|e| text_of(&e.event)).collect();
    let want: Vec<String> = (0..20).map(|i| format!("before {i}")).collect();
    assert_eq!(
        texts, want,
        "every acknowledged event survived, nothing else appeared"
    );
    assert_eq!(
        store
            .append(&conv, vec![msg("after")])
            .await
            .expect("append after restart"),
        21,
        "seqs continue"
    );
    let facts = UserMemoryStore::list(store, &user).await.expect("list");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].text, "likes sailing");
    assert!(KvStore::get(store, &ns, "k").await.expect("get").is_some());
    ConversationStore::delete(store, &conv)
        .await
        .expect("cleanup");
    store.forget_user(&user).await.expect("cleanup");
    KvStore::clear(store, &ns).await.expect("cleanup");
    if let Some(vectors) = vectors {
        assert_eq!(vectors.len(&ns).await.expect("len"), 1);
        vectors.clear(&ns).await.expect("cleanup");
    }
}

/// Searches may rank a user's facts from an index kept between searches: a write through
/// `writer` (another handle, process or instance) — an add, a reinforcement, a
/// supersession, a delete, forgetting the user — is seen by the next search of `reader`.
pub async fn check_cached_ranking_sees_another_writer(
    reader: &dyn UserMemoryStore,
    writer: &dyn UserMemoryStore,
    user: &str,
) {
    let _ = writer.forget_user(user).await;
    let texts = |hits: Vec<agentmemory_core::ScoredFact>| -> Vec<(String, f32)> {
        hits.into_iter()
            .map(|h| (h.fact.text, h.fact.confidence))
            .collect()
    };
    let tea = FactCandidate::new("likes green tea", 0.6).with_attribute("likes", "green tea");
    writer.upsert(user, tea.clone()).await.expect("add");
    assert_eq!(
        texts(reader.search(user, "tea", 5).await.expect("search")).len(),
        1
    );
    // cached now; the other handle adds, reinforces, supersedes and deletes
    writer
        .upsert(
            user,
            FactCandidate::new("lives in Porto", 0.9).with_attribute("location", "Porto"),
        )
        .await
        .expect("add");
    let hits = texts(
        reader
            .search(user, "where do I live", 5)
            .await
            .expect("search"),
    );
    assert!(hits.iter().any(|(t, _)| t == "lives in Porto"), "{hits:?}");
    writer.upsert(user, tea).await.expect("reinforce");
    let hits = texts(reader.search(user, "tea", 1).await.expect("search"));
    assert!(hits[0].1 > 0.6, "reinforced confidence seen: {hits:?}");
    writer
        .upsert(
            user,
            FactCandidate::new("lives in Lyon", 0.95).with_attribute("location", "Lyon"),
        )
        .await
        .expect("supersede");
    let hits = texts(
        reader
            .search(user, "where do I live", 5)
            .await
            .expect("search"),
    );
    assert!(hits.iter().any(|(t, _)| t == "lives in Lyon"), "{hits:?}");
    assert!(!hits.iter().any(|(t, _)| t == "lives in Porto"), "{hits:?}");
    let id = reader.search(user, "tea", 1).await.expect("search")[0]
        .fact
        .id
        .clone();
    assert!(UserMemoryStore::delete(writer, user, &id)
        .await
        .expect("delete"));
    let hits = texts(reader.search(user, "tea", 5).await.expect("search"));
    assert!(!hits.iter().any(|(t, _)| t.contains("tea")), "{hits:?}");
    assert!(writer.forget_user(user).await.expect("forget") >= 2);
    assert!(reader
        .search(user, "Lyon", 5)
        .await
        .expect("search")
        .is_empty());
}

/// Reconciliation through a kept index sees what another handle (another process)
/// wrote since: `first` keeps the user's facts indexed by writing, `second` adds,
/// supersedes and deletes, and each of `first`'s upserts after that decides as over the
/// facts the store holds (a repeat of `second`'s fact reinforces it, a new value
/// supersedes `second`'s, a fact `second` deleted is added again).
pub async fn check_cached_reconciliation_sees_another_writer(
    first: &dyn UserMemoryStore,
    second: &dyn UserMemoryStore,
    user: &str,
) {
    let _ = first.forget_user(user).await;
    let likes = |v: &str| FactCandidate::new(format!("likes {v}"), 0.7).with_attribute("likes", v);
    let lives =
        |v: &str| FactCandidate::new(format!("lives in {v}"), 0.9).with_attribute("location", v);
    // `first` reads once and keeps its index from here on.
    assert_eq!(
        first.upsert(user, likes("tea")).await.expect("add").kind(),
        "added"
    );
    assert_eq!(
        first
            .upsert(user, likes("chess"))
            .await
            .expect("add")
            .kind(),
        "added"
    );
    // Another process writes.
    assert_eq!(
        second
            .upsert(user, likes("jazz"))
            .await
            .expect("add")
            .kind(),
        "added"
    );
    assert_eq!(
        second
            .upsert(user, lives("Porto"))
            .await
            .expect("add")
            .kind(),
        "added"
    );
    assert_eq!(
        first
            .upsert(user, likes("jazz"))
            .await
            .expect("repeat")
            .kind(),
        "reinforced"
    );
    assert_eq!(
        first
            .upsert(user, lives("Lyon"))
            .await
            .expect("move")
            .kind(),
        "superseded"
    );
    assert_eq!(
        second
            .upsert(user, lives("Oslo"))
            .await
            .expect("move")
            .kind(),
        "superseded"
    );
    let change = first.upsert(user, lives("Oslo")).await.expect("repeat");
    assert_eq!(change.kind(), "reinforced", "{change:?}");
    let tea = first
        .list(user)
        .await
        .expect("list")
        .into_iter()
        .find(|f| f.text == "likes tea")
        .expect("tea held");
    assert!(UserMemoryStore::delete(second, user, &tea.id)
        .await
        .expect("delete"));
    assert_eq!(
        first
            .upsert(user, likes("tea"))
            .await
            .expect("again")
            .kind(),
        "added"
    );
    assert_eq!(
        held_texts(first, user).await,
        ["likes chess", "likes jazz", "likes tea", "lives in Oslo"]
    );
    first.forget_user(user).await.expect("forget");
}

/// Two handles on one store (two processes' view: each keeps its own cache of the
/// user's ranked facts and writes through it) take turns upserting (adds, repeats,
/// supersessions, weak contradictions), deleting and searching, then write at the same
/// time. After every step each handle's search returns exactly the facts the store
/// holds (compared with `list`, which always reads the store): no write of either is
/// ever missing from the other's ranking, and no cached fact differs from the stored
/// one in any field.
pub async fn check_interleaved_writers_see_each_other(
    a: &dyn UserMemoryStore,
    b: &dyn UserMemoryStore,
    user: &str,
) {
    let _ = a.forget_user(user).await;
    let handles = [a, b];
    let pool = interleave_candidate;
    fn interleave_candidate(i: u64) -> FactCandidate {
        let things = ["jazz", "tea", "chess", "sushi", "hiking", "opera"];
        let towns = ["Porto", "Lyon", "Oslo"];
        let names = ["Maria", "Mara"];
        match i % 4 {
            0 | 1 => {
                let t = things[(i / 4) as usize % things.len()];
                FactCandidate::new(format!("likes {t}"), 0.7).with_attribute("likes", t)
            }
            2 => {
                let t = towns[(i / 4) as usize % towns.len()];
                FactCandidate::new(format!("lives in {t}"), 0.9).with_attribute("location", t)
            }
            _ => {
                let n = names[(i / 4) as usize % names.len()];
                let confidence = if (i / 8).is_multiple_of(2) { 0.95 } else { 0.5 };
                FactCandidate::new(format!("name is {n}"), confidence).with_attribute("name", n)
            }
        }
    }
    async fn same_as_stored(store: &dyn UserMemoryStore, user: &str, step: usize, who: usize) {
        let mut hits: Vec<_> = store
            .search(user, "what does she like and where does she live", 1000)
            .await
            .expect("search")
            .into_iter()
            .map(|h| h.fact)
            .collect();
        let mut listed = store.list(user).await.expect("list");
        hits.sort_by(|x, y| x.id.cmp(&y.id));
        listed.sort_by(|x, y| x.id.cmp(&y.id));
        assert_eq!(hits, listed, "step {step}: handle {who} ranks stale facts");
    }
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for step in 0..60 {
        let r = next();
        let who = (r % 2) as usize;
        let store = handles[who];
        if r.is_multiple_of(11) {
            let facts = store.list(user).await.expect("list");
            if let Some(f) = facts.get((r / 11) as usize % facts.len().max(1)) {
                assert!(UserMemoryStore::delete(store, user, &f.id)
                    .await
                    .expect("delete"));
            }
        } else {
            store.upsert(user, pool(r / 2 % 97)).await.expect("upsert");
        }
        // The writer searches right after its own write, then the other handle.
        same_as_stored(store, user, step, who).await;
        same_as_stored(handles[1 - who], user, step, 1 - who).await;
    }
    // Both write at once; each then sees both handles' writes.
    async fn burst(h: &dyn UserMemoryStore, user: &str, offset: u64) {
        for i in 0..20 {
            h.upsert(user, interleave_candidate(offset + i * 3))
                .await
                .expect("upsert");
            let _ = h.search(user, "tea", 3).await.expect("search");
        }
    }
    tokio::join!(burst(a, user, 1), burst(b, user, 2));
    same_as_stored(a, user, 1000, 0).await;
    same_as_stored(b, user, 1000, 1).await;
    assert!(a.forget_user(user).await.expect("forget") > 0);
    same_as_stored(b, user, 1001, 1).await;
}

/// How many facts the snapshot checks give a user: above the stores' threshold for
/// keeping a snapshot (1,000).
pub const SNAPSHOT_FACTS: usize = 1_200;

/// `n` facts of `user` for the snapshot checks: varied texts, a few with a location.
pub fn snapshot_facts(user: &str, n: usize) -> Vec<agentmemory_core::MemoryFact> {
    use chrono::{Duration as Age, Utc};
    let topics = [
        "jazz", "hiking", "museums", "tea", "chess", "sailing", "Kyoto",
    ];
    let now = Utc::now();
    (0..n)
        .map(|i| {
            let topic = topics[i % topics.len()];
            let candidate = if i % 100 == 7 {
                let city = format!("City{i}");
                FactCandidate::new(format!("lives in {city}"), 0.8).with_attribute("location", city)
            } else {
                FactCandidate::new(
                    format!("likes {topic}, note {i}"),
                    0.5 + (i % 40) as f32 / 100.0,
                )
            };
            let at = now - Age::minutes((n - i) as i64 * 7);
            agentmemory_core::MemoryFact::from_candidate(user, candidate, at)
        })
        .collect()
}

const SNAPSHOT_QUERIES: &[&str] = &[
    "jazz or sailing?",
    "where does she live",
    "note 7",
    "Kyoto tea",
    "nothing known",
];

/// Whether `got` (from a store) ranks as a fresh index of `facts` does: the same scores
/// position by position, within 1e-5 (the search clocks differ by milliseconds, so
/// decayed confidences do too), each hit a fact the fresh index ranks at that score (so
/// two facts within 1e-5 of each other may trade places, nothing else).
pub fn assert_ranks_as_fresh(
    got: &[agentmemory_core::ScoredFact],
    facts: &[agentmemory_core::MemoryFact],
    query: &str,
    k: usize,
) {
    use agentmemory_core::facts::{FactPolicy, FactQuery};
    use agentmemory_core::store_support::RankedFacts;
    let want = RankedFacts::new(facts.to_vec()).rank(
        &FactQuery::new(query, k + 20),
        FactPolicy::default(),
        chrono::Utc::now(),
    );
    assert_eq!(got.len(), want.len().min(k), "query {query:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g.score - w.score).abs() < 1e-5,
            "query {query:?}: {} vs {}",
            g.score,
            w.score
        );
        let same = want.iter().find(|w| w.fact.id == g.fact.id);
        let same = same.unwrap_or_else(|| panic!("query {query:?}: {} not ranked", g.fact.text));
        assert_eq!(g.fact, same.fact, "query {query:?}");
        assert!(
            (g.score - same.score).abs() < 1e-5,
            "query {query:?}: {}",
            g.fact.text
        );
    }
}

/// A user with many facts searched through `a` (which keeps a snapshot of them), then
/// changed through `a` (added, reinforced, superseded, deleted): a store opened after
/// (`open`) ranks and reconciles what the store holds, exactly as a fresh read would,
/// and so does one opened after a write through `a` while the second store had them kept.
pub async fn check_snapshot_then_writes<F, Fut>(a: &dyn UserMemoryStore, open: F, user: &str)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Arc<dyn UserMemoryStore>>,
{
    let facts = snapshot_facts(user, SNAPSHOT_FACTS);
    a.import_records(user, facts.clone()).await.expect("import");
    a.search(user, "jazz", 3)
        .await
        .expect("first search keeps a snapshot");
    let fresh = open().await;
    for q in SNAPSHOT_QUERIES {
        let hits = fresh.search(user, q, 5).await.expect("search");
        assert_ranks_as_fresh(&hits, &facts, q, 5);
    }
    // Changes after the snapshot, through the first store.
    let added = a
        .upsert(user, FactCandidate::new("collects stamps", 0.9))
        .await
        .expect("add");
    assert_eq!(added.kind(), "added");
    let again = a
        .upsert(user, FactCandidate::new(facts[3].text.clone(), 0.9))
        .await
        .expect("repeat");
    assert_eq!(again.kind(), "reinforced");
    let moved = FactCandidate::new("lives in Porto", 0.95).with_attribute("location", "Porto");
    let moved = a.upsert(user, moved).await.expect("move");
    assert_eq!(moved.kind(), "superseded");
    assert!(a.delete(user, &facts[10].id).await.expect("delete"));
    let held = a.list(user).await.expect("list");
    assert_eq!(held.len(), SNAPSHOT_FACTS);
    let reopened = open().await;
    for q in SNAPSHOT_QUERIES.iter().chain(&["stamps", "Porto"]) {
        let hits = reopened
            .search(user, q, 5)
            .await
            .expect("search after writes");
        assert_ranks_as_fresh(&hits, &held, q, 5);
    }
    // Reconciled against the opened facts: a repeat of the new fact, and a new location.
    let cold = open().await;
    let repeat = cold
        .upsert(user, FactCandidate::new("collects stamps", 0.8))
        .await
        .expect("repeat");
    assert_eq!(repeat.kind(), "reinforced");
    let lisbon = FactCandidate::new("lives in Lisbon", 0.95).with_attribute("location", "Lisbon");
    assert_eq!(
        cold.upsert(user, lisbon).await.expect("move again").kind(),
        "superseded"
    );
    let held = a.list(user).await.expect("list");
    let last = open().await;
    for q in SNAPSHOT_QUERIES
        .iter()
        .chain(&["stamps", "Lisbon", "Porto"])
    {
        let hits = last
            .search(user, q, 5)
            .await
            .expect("search after more writes");
        assert_ranks_as_fresh(&hits, &held, q, 5);
    }
    a.forget_user(user).await.expect("forget");
    assert!(open()
        .await
        .search(user, "jazz", 3)
        .await
        .expect("search")
        .is_empty());
}
