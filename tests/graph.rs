//! The knowledge graph on SQLite: two independent handles on one file writing at the same
//! time lose nothing, history is kept, search finds words, substrings (and meaning with
//! the embedder), and the user's entity is the user's facts.
#![cfg(feature = "sqlite")]

use std::sync::Arc;

use agentmemory::graph::{
    Entity, GraphChange, GraphError, KnowledgeGraph, ObservationAddition, ObservationDeletion,
    Relation,
};
use agentmemory::stores::StoreUrl;
use agentmemory::{FactCandidate, UserMemoryStore};

async fn open(url: &StoreUrl, user: Option<&str>) -> (agentmemory::Container, KnowledgeGraph) {
    let container = url.open().await.expect("open the store");
    let graph = KnowledgeGraph::from_container(&container, "default", user).expect("stores");
    (container, graph)
}

fn sqlite(dir: &tempfile::TempDir) -> StoreUrl {
    format!("sqlite://{}", dir.path().join("graph.db").display())
        .parse()
        .expect("a store URL")
}

fn add(entity: &str, text: &str) -> Vec<ObservationAddition> {
    vec![ObservationAddition {
        entity_name: entity.into(),
        contents: vec![text.into()],
    }]
}

/// Two handles on `url` (independent connections, as two processes have) write at the
/// same time to the graph `name`; a third, fresh one reads everything both acknowledged.
async fn two_handles_lose_nothing(url: &StoreUrl, name: &str) {
    let open_named = |url: StoreUrl| {
        let name = name.to_owned();
        async move {
            let container = url.open().await.expect("open the store");
            let graph = KnowledgeGraph::from_container(&container, &name, None).expect("stores");
            (container, graph)
        }
    };
    let (_a_stores, a) = open_named(url.clone()).await;
    let (_b_stores, b) = open_named(url.clone()).await;
    a.create_entities(vec![Entity::new("Shared", "thing", Vec::<String>::new())])
        .await
        .unwrap();
    let (a, b) = (Arc::new(a), Arc::new(b));
    const WRITES: usize = 50;
    let writer = |graph: Arc<KnowledgeGraph>, tag: &'static str| {
        tokio::spawn(async move {
            for i in 0..WRITES {
                let added = graph
                    .add_observations(add("Shared", &format!("{tag} {i}")))
                    .await
                    .unwrap();
                // what this handle reports is what its own change did
                assert_eq!(added[0].added_observations, [format!("{tag} {i}")]);
                let created = graph
                    .create_entities(vec![Entity::new(
                        format!("{tag}-{i}"),
                        "n",
                        Vec::<String>::new(),
                    )])
                    .await
                    .unwrap();
                assert_eq!(created.len(), 1);
            }
        })
    };
    let (x, y) = (writer(a.clone(), "a"), writer(b.clone(), "b"));
    x.await.unwrap();
    y.await.unwrap();

    let (c_stores, fresh) = open_named(url.clone()).await;
    for graph in [&*a, &*b, &fresh] {
        let read = graph.read_graph().await.unwrap();
        assert_eq!(read.entities.len(), 1 + 2 * WRITES);
        let shared = read.entities.iter().find(|e| e.name == "Shared").unwrap();
        assert_eq!(shared.observations.len(), 2 * WRITES);
        for tag in ["a", "b"] {
            // each writer's observations in the order it wrote them
            let mine: Vec<&String> = shared
                .observations
                .iter()
                .filter(|o| o.starts_with(tag))
                .collect();
            let want: Vec<String> = (0..WRITES).map(|i| format!("{tag} {i}")).collect();
            assert_eq!(mine, want.iter().collect::<Vec<_>>());
        }
    }
    // both handles created "Late" at once: exactly one of them did it
    let (p, q) = tokio::join!(
        a.create_entities(vec![Entity::new("Late", "x", ["from a"])]),
        b.create_entities(vec![Entity::new("Late", "x", ["from b"])]),
    );
    assert_eq!(p.unwrap().len() + q.unwrap().len(), 1);
    // a shared service keeps what tests write: leave nothing behind
    let log = c_stores
        .resolve::<dyn agentmemory::ConversationStore>(None)
        .unwrap();
    log.delete(fresh.log_id()).await.unwrap();
    let vectors = c_stores
        .resolve::<dyn agentmemory::VectorStore>(None)
        .unwrap();
    vectors.clear(fresh.log_id()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_on_one_sqlite_file_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    two_handles_lose_nothing(&sqlite(&dir), "default").await;
}

/// The URL in `var`, or `None` after a message (a failure with `CI=true`).
#[cfg(any(feature = "redis", feature = "postgres"))]
fn service_url(var: &str) -> Option<StoreUrl> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url.parse().expect("a store URL")),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{var} is not set (required with CI=true)"
            );
            eprintln!("skipping: {var} is not set");
            None
        }
    }
}

/// A graph name no other run uses, on a service that outlives the test.
#[cfg(any(feature = "redis", feature = "postgres"))]
fn unique_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("test-{}-{nanos}", std::process::id())
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_on_one_redis_lose_nothing() {
    if let Some(url) = service_url("AGENTMEM_REDIS_URL") {
        two_handles_lose_nothing(&url, &unique_name()).await;
    }
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_on_one_postgres_lose_nothing() {
    if let Some(url) = service_url("AGENTMEM_POSTGRES_URL") {
        two_handles_lose_nothing(&url, &unique_name()).await;
    }
}

#[tokio::test]
async fn every_change_is_kept_in_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let (_stores, graph) = open(&sqlite(&dir), None).await;
    graph
        .create_entities(vec![Entity::new("Alice", "person", ["likes tea"])])
        .await
        .unwrap();
    graph
        .delete_observations(vec![ObservationDeletion {
            entity_name: "Alice".into(),
            observations: vec!["likes tea".into()],
        }])
        .await
        .unwrap();
    graph.delete_entities(vec!["Alice".into()]).await.unwrap();
    let history = graph.history().await.unwrap();
    assert_eq!(history.len(), 3);
    assert!(matches!(
        &history[0].change,
        GraphChange::CreateEntities { entities } if entities[0].observations == ["likes tea"]
    ));
    assert!(matches!(
        history[1].change,
        GraphChange::DeleteObservations { .. }
    ));
    assert!(matches!(
        history[2].change,
        GraphChange::DeleteEntities { .. }
    ));
    assert!(history.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(graph.read_graph().await.unwrap().entities.is_empty());
}

#[tokio::test]
async fn search_finds_substrings_and_words_and_ranks_substrings_first() {
    let dir = tempfile::tempdir().unwrap();
    let (_stores, graph) = open(&sqlite(&dir), None).await;
    graph
        .create_entities(vec![
            Entity::new("Alice", "person", ["is writing a compiler for Rust"]),
            Entity::new("Bob", "person", ["compiled the quarterly report"]),
            Entity::new("Acme", "organization", Vec::<String>::new()),
        ])
        .await
        .unwrap();
    graph
        .create_relations(vec![Relation::new("Alice", "Acme", "works_at")])
        .await
        .unwrap();
    // a substring of a word, as the reference finds it
    let found = graph.search_nodes("organiz").await.unwrap();
    let names: Vec<&str> = found.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["Acme"]);
    assert_eq!(
        found.relations,
        [Relation::new("Alice", "Acme", "works_at")]
    );
    // words, in any order and form: no substring of any observation
    let found = graph.search_nodes("compilers rust").await.unwrap();
    assert_eq!(
        found.entities.first().map(|e| e.name.as_str()),
        Some("Alice")
    );
    // the exact substring ranks before a word match
    let found = graph.search_nodes("compiler").await.unwrap();
    assert_eq!(found.entities[0].name, "Alice");
    assert!(graph
        .search_nodes("zebra")
        .await
        .unwrap()
        .entities
        .is_empty());
    // the empty query matches everything, as in the reference
    assert_eq!(graph.search_nodes("").await.unwrap().entities.len(), 3);
}

#[tokio::test]
async fn the_index_is_repaired_from_the_log_when_it_lags() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite(&dir);
    let (stores, graph) = open(&url, None).await;
    graph
        .create_entities(vec![Entity::new("Alice", "person", ["plays the cello"])])
        .await
        .unwrap();
    // the index is lost (a crash between the two writes, a store restored from the log)
    let vectors = stores
        .resolve::<dyn agentmemory::VectorStore>(None)
        .unwrap();
    vectors.clear(graph.log_id()).await.unwrap();
    drop(graph);
    let (_stores, reopened) = open(&url, None).await;
    let found = reopened.search_nodes("cellos").await.unwrap();
    assert_eq!(found.entities.len(), 1, "{found:?}");
}

#[tokio::test]
async fn the_users_entity_is_the_users_facts() {
    let dir = tempfile::tempdir().unwrap();
    let (stores, graph) = open(&sqlite(&dir), Some("alice")).await;
    let facts = stores.resolve::<dyn UserMemoryStore>(None).unwrap();

    // a fact learned in chat shows on the user's entity, which reads show
    facts
        .upsert("alice", FactCandidate::new("loves museums", 0.8))
        .await
        .unwrap();
    let opened = graph.open_nodes(&["alice".into()]).await.unwrap();
    assert_eq!(
        opened.entities,
        [Entity::new("alice", "person", ["loves museums"])]
    );

    // what reads show can be written to: the entity is created on first write
    let added = graph
        .add_observations(add("alice", "is vegetarian"))
        .await
        .unwrap();
    assert_eq!(added[0].added_observations, ["is vegetarian"]);
    let texts: Vec<String> = facts
        .list("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.text)
        .collect();
    assert!(texts.contains(&"is vegetarian".to_owned()), "{texts:?}");
    let opened = graph.open_nodes(&["alice".into()]).await.unwrap();
    assert_eq!(
        opened.entities[0].observations,
        ["is vegetarian", "loves museums"]
    );
    // search finds the user by a fact
    let found = graph.search_nodes("museums").await.unwrap();
    assert_eq!(found.entities[0].name, "alice");

    // deleting a fact-only observation forgets the fact and counts it
    let report = graph
        .delete_observations(vec![ObservationDeletion {
            entity_name: "alice".into(),
            observations: vec!["loves museums".into(), "is vegetarian".into()],
        }])
        .await
        .unwrap();
    assert_eq!(report.deleted_count, 2);
    assert!(report.missing_entities.is_empty());
    assert!(facts.list("alice").await.unwrap().is_empty());

    // other entities are not the user
    graph
        .create_entities(vec![Entity::new("Bob", "person", ["likes jazz"])])
        .await
        .unwrap();
    assert!(facts.list("alice").await.unwrap().is_empty());
    assert!(facts.list("Bob").await.unwrap().is_empty());
    // a relation naming a missing entity is refused with the reference's message
    let err = graph
        .create_relations(vec![Relation::new("Bob", "Carol", "knows")])
        .await
        .unwrap_err();
    assert!(matches!(err, GraphError::EntityNotFound(ref n) if n == "Carol"));
    assert_eq!(err.to_string(), "Entity with name Carol not found");
}

/// With the embedder, a query that shares no word with an observation finds it by
/// meaning, and an unrelated entity stays out.
#[cfg(feature = "local-embed")]
#[tokio::test]
async fn with_the_embedder_search_finds_by_meaning() {
    if std::env::var_os("AGENTMEM_EMBED_MODEL").is_none_or(|v| v.is_empty()) {
        let what = "AGENTMEM_EMBED_MODEL is not set (scripts/fetch-model)";
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} (required with CI=true)"
        );
        eprintln!("skipping: {what}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_stores, graph) = open(&sqlite(&dir), None).await;
    graph
        .create_entities(vec![
            Entity::new("Alice", "person", ["plays the cello in an orchestra"]),
            Entity::new("Bob", "person", ["repairs old motorcycles"]),
        ])
        .await
        .unwrap();
    let found = graph.search_nodes("classical music").await.unwrap();
    let names: Vec<&str> = found.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["Alice"]);
    let found = graph.search_nodes("fixing motorbikes").await.unwrap();
    let names: Vec<&str> = found.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["Bob"]);
}

/// A change in the graph's log that does not read back as one (a log edited by hand, or
/// written by another program) is an error naming the log and its place, never skipped;
/// a change of a newer format is refused as one.
#[tokio::test]
async fn a_change_that_does_not_read_back_is_an_error_not_a_gap() {
    use agentmemory::{ConversationEvent, ConversationStore, InMemoryConversationStore};
    let log = Arc::new(InMemoryConversationStore::new());
    let graph = KnowledgeGraph::new(log.clone(), "hand-edited");
    graph
        .create_entities(vec![Entity::new("Ada", "person", ["writes code"])])
        .await
        .unwrap();
    log.append(
        graph.log_id(),
        vec![ConversationEvent::GraphChanged {
            version: agentmemory::graph::GRAPH_CHANGE_VERSION,
            change: serde_json::json!({"op": "rename_everything"}),
        }],
    )
    .await
    .unwrap();
    let fresh = KnowledgeGraph::new(log.clone(), "hand-edited");
    let err = fresh.read_graph().await.unwrap_err();
    assert!(
        matches!(&err, GraphError::Store(agentmemory::MemoryError::Corrupt { what, .. }) if what.contains("graph change 2")),
        "{err:?}"
    );
    assert!(fresh.history().await.is_err());

    let newer = KnowledgeGraph::new(log.clone(), "newer");
    log.append(
        newer.log_id(),
        vec![ConversationEvent::GraphChanged {
            version: agentmemory::graph::GRAPH_CHANGE_VERSION + 1,
            change: serde_json::json!({"op": "teleport"}),
        }],
    )
    .await
    .unwrap();
    assert!(matches!(
        newer.read_graph().await.unwrap_err(),
        GraphError::FutureChange { .. }
    ));
}
