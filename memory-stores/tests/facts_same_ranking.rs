//! Every backend ranks the same facts the same way for the same query (one text analysis,
//! one scoring function), hence the same top 3: in-memory, SQLite, and PostgreSQL / Redis when their servers are
//! configured (`AGENTMEM_POSTGRES_URL`, `AGENTMEM_REDIS_URL`), searched by words and by
//! words + meaning (a deterministic test embedder).

#![cfg(feature = "sqlite")]

mod common;

use std::sync::Arc;

use agentmemory_core::facts::{EmbeddingUserMemoryStore, FactCandidate, InMemoryUserMemoryStore};
use agentmemory_core::testkit::facts::HashEmbedder;
use agentmemory_core::UserMemoryStore;
use agentmemory_stores::SqliteStore;

const FACTS: &[&str] = &[
    "is lactose intolerant",
    "lives in Lyon",
    "rides a motorbike to work",
    "works for Siemens as an engineer",
    "loves hiking in the Alps",
    "has a cat called Luna",
    "likes museums and modern art",
    "我住在北京",
    "喜欢喝咖啡",
    "loves 🍕 on Fridays",
    "is learning Japanese",
    "plays the guitar in a band",
    "prefers tea over coffee",
    "café crème every morning",
];

const QUERIES: &[&str] = &[
    "Where do I live?",
    "What do I do at work?",
    "museum",
    "Should I order the cheese platter?",
    "北京",
    "🍕",
    "coffee or tea?",
    "CAFE creme",
    "do I have any pets",
];

async fn stores() -> Vec<(&'static str, Arc<dyn UserMemoryStore>)> {
    #[cfg_attr(not(any(feature = "postgres", feature = "redis")), allow(unused_mut))]
    let mut out: Vec<(&'static str, Arc<dyn UserMemoryStore>)> = vec![
        ("in-memory", Arc::new(InMemoryUserMemoryStore::new())),
        (
            "sqlite",
            Arc::new(SqliteStore::open_in_memory().await.expect("sqlite")),
        ),
    ];
    #[cfg(feature = "postgres")]
    if let Some(url) = common::server_url("AGENTMEM_POSTGRES_URL") {
        let store = agentmemory_stores::PostgresStore::connect(&url)
            .await
            .expect("postgres");
        out.push(("postgres", Arc::new(store)));
    }
    #[cfg(feature = "redis")]
    if let Some(url) = common::server_url("AGENTMEM_REDIS_URL") {
        let store = agentmemory_stores::RedisStore::connect(&url)
            .await
            .expect("redis");
        out.push(("redis", Arc::new(store)));
    }
    out
}

/// Groups of fact texts with one score each, best first.
type Ranking = Vec<(Vec<String>, f32)>;

/// The whole ranking, as groups of facts with equal scores (the order inside a group is
/// the stores' own id order, which differs: ids are random ULIDs).
async fn ranking(store: &dyn UserMemoryStore, user: &str, query: &str) -> Ranking {
    let hits = store
        .search(user, query, FACTS.len())
        .await
        .expect("search");
    let mut groups: Vec<(Vec<String>, f32)> = Vec::new();
    for h in hits {
        match groups.last_mut() {
            Some((texts, score)) if (*score - h.score).abs() < 1e-6 => texts.push(h.fact.text),
            _ => groups.push((vec![h.fact.text], h.score)),
        }
    }
    for (texts, _) in &mut groups {
        texts.sort();
    }
    groups
}

async fn same_ranking(with_meaning: bool) {
    let user = common::fresh("same-ranking");
    let mut results: Vec<(&str, Vec<Ranking>)> = Vec::new();
    for (name, store) in stores().await {
        let store: Arc<dyn UserMemoryStore> = if with_meaning {
            Arc::new(EmbeddingUserMemoryStore::new(store, Arc::new(HashEmbedder)))
        } else {
            store
        };
        for text in FACTS {
            store
                .upsert(&user, FactCandidate::new(*text, 0.9))
                .await
                .expect("upsert");
        }
        let mut per_query = Vec::new();
        for q in QUERIES {
            per_query.push(ranking(store.as_ref(), &user, q).await);
        }
        store.forget_user(&user).await.expect("forget");
        results.push((name, per_query));
    }
    let (reference_name, reference) = &results[0];
    let decided = reference
        .iter()
        .filter(|groups| groups[0].0.len() == 1)
        .count();
    assert!(
        decided >= 6,
        "most queries have a single best fact: {reference:?}"
    );
    for (name, got) in &results[1..] {
        for ((q, want), got) in QUERIES.iter().zip(reference).zip(got) {
            let want_texts: Vec<&Vec<String>> = want.iter().map(|(t, _)| t).collect();
            let got_texts: Vec<&Vec<String>> = got.iter().map(|(t, _)| t).collect();
            assert_eq!(
                got_texts, want_texts,
                "{name} vs {reference_name}, query {q:?}"
            );
            for ((_, a), (_, b)) in want.iter().zip(got) {
                assert!((a - b).abs() < 1e-4, "{name}: score {b} vs {a} for {q:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_backend_ranks_alike_by_words() {
    same_ranking(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_backend_ranks_alike_by_words_and_meaning() {
    same_ranking(true).await;
}
