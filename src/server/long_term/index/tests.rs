//! What a search over many users reads, and the indexes kept in step with the writes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use agentmemory_core::facts::{FactCandidate, FactChange, FactQuery, MemoryFact, ScoredFact};
use agentmemory_core::{
    InMemoryKvStore, InMemoryUserMemoryStore, InMemoryVectorStore, KvStore, MemoryEntry,
    UserMemoryStore, VectorStore,
};

use super::super::{LongTermMemory, OWNERS};
use super::{META, NAMESPACES};
use crate::server::ids;
use crate::server::wire::{SearchRequest, TagFilter, WireMemory};

/// What the stores were asked to read.
#[derive(Debug, Default)]
struct Reads {
    /// Key/value entries returned by `list`.
    kv_entries: AtomicUsize,
    /// Key/value `get`s.
    kv_gets: AtomicUsize,
    /// Fact searches (one per owner searched).
    fact_searches: AtomicUsize,
    /// Fact `list`s and `get`s.
    fact_reads: AtomicUsize,
}

impl Reads {
    fn take(&self) -> [usize; 4] {
        [
            self.kv_entries.swap(0, Ordering::SeqCst),
            self.kv_gets.swap(0, Ordering::SeqCst),
            self.fact_searches.swap(0, Ordering::SeqCst),
            self.fact_reads.swap(0, Ordering::SeqCst),
        ]
    }
}

struct CountingKv {
    inner: Arc<InMemoryKvStore>,
    reads: Arc<Reads>,
}

#[async_trait]
impl KvStore for CountingKv {
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> agentmemory_core::Result<()> {
        self.inner.put(namespace, entry).await
    }
    async fn get(
        &self,
        namespace: &str,
        key: &str,
    ) -> agentmemory_core::Result<Option<MemoryEntry>> {
        self.reads.kv_gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(namespace, key).await
    }
    async fn delete(&self, namespace: &str, key: &str) -> agentmemory_core::Result<bool> {
        self.inner.delete(namespace, key).await
    }
    async fn list(&self, namespace: &str) -> agentmemory_core::Result<Vec<MemoryEntry>> {
        let entries = self.inner.list(namespace).await?;
        self.reads
            .kv_entries
            .fetch_add(entries.len(), Ordering::SeqCst);
        Ok(entries)
    }
    async fn clear(&self, namespace: &str) -> agentmemory_core::Result<usize> {
        self.inner.clear(namespace).await
    }
    async fn cleanup_expired(&self) -> agentmemory_core::Result<usize> {
        self.inner.cleanup_expired().await
    }
}

struct CountingFacts {
    inner: InMemoryUserMemoryStore,
    reads: Arc<Reads>,
}

#[async_trait]
impl UserMemoryStore for CountingFacts {
    async fn upsert(
        &self,
        user_id: &str,
        candidate: FactCandidate,
    ) -> agentmemory_core::Result<FactChange> {
        self.inner.upsert(user_id, candidate).await
    }
    async fn search_query(
        &self,
        user_id: &str,
        query: &FactQuery,
    ) -> agentmemory_core::Result<Vec<ScoredFact>> {
        self.reads.fact_searches.fetch_add(1, Ordering::SeqCst);
        self.inner.search_query(user_id, query).await
    }
    async fn list(&self, user_id: &str) -> agentmemory_core::Result<Vec<MemoryFact>> {
        self.reads.fact_reads.fetch_add(1, Ordering::SeqCst);
        self.inner.list(user_id).await
    }
    async fn get(
        &self,
        user_id: &str,
        fact_id: &str,
    ) -> agentmemory_core::Result<Option<MemoryFact>> {
        self.reads.fact_reads.fetch_add(1, Ordering::SeqCst);
        self.inner.get(user_id, fact_id).await
    }
    async fn delete(&self, user_id: &str, fact_id: &str) -> agentmemory_core::Result<bool> {
        self.inner.delete(user_id, fact_id).await
    }
    async fn forget_user(&self, user_id: &str) -> agentmemory_core::Result<usize> {
        self.inner.forget_user(user_id).await
    }
    async fn history(
        &self,
        user_id: &str,
        fact_id: &str,
    ) -> agentmemory_core::Result<Vec<MemoryFact>> {
        self.inner.history(user_id, fact_id).await
    }
    async fn import_records(
        &self,
        user_id: &str,
        records: Vec<MemoryFact>,
    ) -> agentmemory_core::Result<usize> {
        self.inner.import_records(user_id, records).await
    }
}

/// Long-term memory over counting stores, and the stores themselves.
struct Fixture {
    ltm: LongTermMemory,
    reads: Arc<Reads>,
    kv: Arc<InMemoryKvStore>,
    facts: Arc<CountingFacts>,
    vectors: Arc<InMemoryVectorStore>,
}

/// Long-term memory over these stores as a process started afresh sees them, its
/// key/value reads counted.
fn open(
    kv: &Arc<InMemoryKvStore>,
    facts: &Arc<CountingFacts>,
    vectors: &Arc<InMemoryVectorStore>,
    reads: &Arc<Reads>,
) -> LongTermMemory {
    let kv = Arc::new(CountingKv {
        inner: Arc::clone(kv),
        reads: Arc::clone(reads),
    });
    LongTermMemory::new(facts.clone(), vectors.clone(), kv)
}

impl Fixture {
    fn new() -> Self {
        let reads = Arc::new(Reads::default());
        let kv = Arc::new(InMemoryKvStore::new());
        let facts = Arc::new(CountingFacts {
            inner: InMemoryUserMemoryStore::new(),
            reads: Arc::clone(&reads),
        });
        let vectors = Arc::new(InMemoryVectorStore::new());
        Self {
            ltm: open(&kv, &facts, &vectors, &reads),
            reads,
            kv,
            facts,
            vectors,
        }
    }

    fn reopened(&self) -> LongTermMemory {
        open(&self.kv, &self.facts, &self.vectors, &self.reads)
    }
}

fn record(id: &str, text: &str, user: &str, namespace: &str, kind: &str) -> WireMemory {
    serde_json::from_value(json!({
        "id": id, "text": text, "user_id": user, "namespace": namespace, "memory_type": kind,
    }))
    .unwrap()
}

/// A word only user `n` uses (letters only, so the analyser keeps it whole).
fn word(n: usize) -> String {
    let letter = |i: usize| char::from(b'a' + u8::try_from(i % 26).unwrap());
    format!("zq{}{}x", letter(n / 26), letter(n))
}

fn eq(value: &str) -> Option<TagFilter> {
    Some(TagFilter {
        eq: Some(value.to_owned()),
        ..TagFilter::default()
    })
}

fn ids_of(found: &crate::server::wire::SearchResults) -> Vec<String> {
    let mut ids: Vec<String> = found.memories.iter().map(|m| m.memory.id.clone()).collect();
    ids.sort();
    ids
}

const USERS: usize = 200;

/// 200 users in one namespace, each with a fact and a document of a word of their own.
async fn many_users() -> Fixture {
    let fixture = Fixture::new();
    for n in 0..USERS {
        let user = format!("u{n:03}");
        fixture
            .ltm
            .create(vec![
                record(
                    &format!("f{n:03}"),
                    &format!("User collects {} stamps", word(n)),
                    &user,
                    "demo",
                    "semantic",
                ),
                record(
                    &format!("e{n:03}"),
                    &format!("Visited the {} market", word(n)),
                    &user,
                    "demo",
                    "episodic",
                ),
            ])
            .await
            .unwrap();
    }
    fixture
}

#[tokio::test]
async fn a_search_over_many_users_reads_the_owners_with_hits() {
    let fixture = many_users().await;
    let ltm = &fixture.ltm;
    // the first search of a process checks that the store is indexed
    ltm.search(&SearchRequest::text(word(0), 10)).await.unwrap();
    fixture.reads.take();

    let everyone = SearchRequest::text(word(7), 10);
    let found = ltm.search(&everyone).await.unwrap();
    assert_eq!(ids_of(&found), ["e007", "f007"]);
    let [kv_entries, _, fact_searches, _] = fixture.reads.take();
    eprintln!("no filter: {fact_searches} fact searches, {kv_entries} key/value entries read");
    assert_eq!(fact_searches, 1, "only the owner with a hit is searched");
    assert!(kv_entries <= 4, "{kv_entries} key/value entries read");

    // one user named, the namespace not: still an owner-less search
    let mut one_user = SearchRequest::text(word(7), 10);
    one_user.user_id = eq("u007");
    let found = ltm.search(&one_user).await.unwrap();
    assert_eq!(ids_of(&found), ["e007", "f007"]);
    let [kv_entries, _, fact_searches, _] = fixture.reads.take();
    eprintln!("user filter: {fact_searches} fact searches, {kv_entries} key/value entries read");
    assert_eq!(fact_searches, 1);
    assert!(kv_entries <= 4, "{kv_entries} key/value entries read");

    // a word no one uses searches no one
    let found = ltm
        .search(&SearchRequest::text("unheard", 10))
        .await
        .unwrap();
    assert_eq!(found.total, 0);
    assert_eq!(fixture.reads.take()[2], 0);
}

#[tokio::test]
async fn a_listing_reads_the_listed_owners_only() {
    let fixture = many_users().await;
    let ltm = &fixture.ltm;
    ltm.search(&SearchRequest::text("", 10)).await.unwrap();
    fixture.reads.take();

    let mut mine = SearchRequest::text("", 10);
    mine.user_id = eq("u007");
    mine.namespace = eq("demo");
    let found = ltm.search(&mine).await.unwrap();
    assert_eq!(ids_of(&found), ["e007", "f007"]);
    let [kv_entries, _, _, fact_reads] = fixture.reads.take();
    eprintln!("one user's listing: {kv_entries} key/value entries, {fact_reads} fact reads");
    assert_eq!(kv_entries, 2, "the user's two memories, not the server's");
    assert_eq!(fact_reads, 1);

    // the namespace without a user: every memory in it is a hit
    let mut demo = SearchRequest::text("", 10);
    demo.namespace = eq("demo");
    let found = ltm.search(&demo).await.unwrap();
    assert_eq!(found.total, 2 * USERS);
    assert_eq!(found.next_offset, Some(10));
    // newest first, ties by id
    let listed: Vec<_> = found
        .memories
        .iter()
        .map(|m| m.memory.id.as_str())
        .collect();
    assert_eq!(
        listed,
        ["e199", "f199", "e198", "f198", "e197", "f197", "e196", "f196", "e195", "f195"]
    );
}

#[tokio::test]
async fn the_fact_index_follows_supersession_and_deletion() {
    let fixture = Fixture::new();
    let ltm = &fixture.ltm;
    let index = ids::facts_index_namespace(Some("demo"));
    ltm.create(vec![record(
        "a",
        "User lives in Paris",
        "alice",
        "demo",
        "semantic",
    )])
    .await
    .unwrap();
    let moved = ltm
        .create(vec![record(
            "c",
            "User lives in Berlin",
            "alice",
            "demo",
            "semantic",
        )])
        .await
        .unwrap();
    assert_eq!(moved[0].change, "superseded");
    assert_eq!(fixture.vectors.len(&index).await.unwrap(), 1);
    assert_eq!(
        ltm.search(&SearchRequest::text("Paris", 10))
            .await
            .unwrap()
            .total,
        0
    );
    let found = ltm
        .search(&SearchRequest::text("Berlin", 10))
        .await
        .unwrap();
    assert_eq!(ids_of(&found), ["c"]);
    assert_eq!(ltm.delete(&["c".into()]).await.unwrap(), 1);
    assert_eq!(fixture.vectors.len(&index).await.unwrap(), 0);
    assert_eq!(
        ltm.search(&SearchRequest::text("Berlin", 10))
            .await
            .unwrap()
            .total,
        0
    );
}

#[tokio::test]
async fn an_edit_moves_a_memory_to_its_new_owner_listing() {
    let fixture = Fixture::new();
    let ltm = &fixture.ltm;
    ltm.create(vec![record(
        "e1",
        "Went to the museum",
        "alice",
        "demo",
        "episodic",
    )])
    .await
    .unwrap();
    ltm.edit("e1", json!({"user_id": "bob"})).await.unwrap();
    let listing = |user: &str| {
        let mut request = SearchRequest::text("", 10);
        request.user_id = eq(user);
        request.namespace = eq("demo");
        request
    };
    assert_eq!(ltm.search(&listing("alice")).await.unwrap().total, 0);
    assert_eq!(ids_of(&ltm.search(&listing("bob")).await.unwrap()), ["e1"]);
}

#[tokio::test]
async fn a_store_written_before_the_indexes_is_indexed_once() {
    let fixture = many_users().await;
    // as an older server left it: index entries and facts, no listings, no fact index
    for n in 0..USERS {
        let owner = ids::fact_owner(Some("demo"), Some(&format!("u{n:03}")));
        fixture
            .kv
            .clear(&ids::listing_namespace(&owner))
            .await
            .unwrap();
    }
    fixture.kv.clear(NAMESPACES).await.unwrap();
    fixture
        .kv
        .clear(&ids::owners_registry(Some("demo")))
        .await
        .unwrap();
    fixture.kv.clear(META).await.unwrap();
    fixture
        .vectors
        .clear(&ids::facts_index_namespace(Some("demo")))
        .await
        .unwrap();
    assert_eq!(fixture.kv.list(OWNERS).await.unwrap().len(), USERS);

    let ltm = fixture.reopened();
    let found = ltm
        .search(&SearchRequest::text(word(42), 10))
        .await
        .unwrap();
    assert_eq!(ids_of(&found), ["e042", "f042"]);
    let mut mine = SearchRequest::text("", 10);
    mine.user_id = eq("u042");
    mine.namespace = eq("demo");
    assert_eq!(ids_of(&ltm.search(&mine).await.unwrap()), ["e042", "f042"]);
    assert!(fixture
        .kv
        .get(META, super::MIGRATED)
        .await
        .unwrap()
        .is_some());

    // a later process finds the marker and reads nothing more
    fixture.reads.take();
    let again = fixture.reopened();
    again.search(&mine).await.unwrap();
    let [kv_entries, kv_gets, _, _] = fixture.reads.take();
    assert_eq!((kv_entries, kv_gets), (2, 1));
}
