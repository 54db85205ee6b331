//! A store whose caches are far smaller than what it serves keeps them within their
//! budget, evicts the least recently used, and answers every search as a store with
//! room for everything does.

use agentmemory_core::vector::{Document, SearchQuery, VectorStore};
use agentmemory_core::{FactCandidate, UserMemoryStore};

use super::SqliteStore;
use crate::CacheBudget;

const USERS: usize = 40;

async fn open(dir: &tempfile::TempDir, budget: CacheBudget) -> SqliteStore {
    SqliteStore::open(dir.path().join("m.db"))
        .await
        .expect("open")
        .with_cache_budget(budget)
}

fn ns(u: usize) -> String {
    format!("episodes:user{u}")
}

/// Facts and episodes of `USERS` users, each with words of its own.
async fn fill(store: &SqliteStore) {
    for u in 0..USERS {
        let user = format!("user{u}");
        for f in 0..5 {
            let c = FactCandidate::new(format!("likes color{u}x{f}"), 0.9)
                .with_attribute("likes", format!("color{u}x{f}"));
            UserMemoryStore::upsert(store, &user, c)
                .await
                .expect("upsert fact");
        }
        let docs = (0..10)
            .map(|d| {
                Document::new(format!("episode {d} of user{u}: walked past marker{u}"))
                    .with_id(format!("e{d}"))
            })
            .collect();
        store.upsert_batch(&ns(u), docs).await.expect("upsert docs");
    }
}

/// What a search of user `u`'s facts and episodes gives, as comparable text: the facts
/// as `text score` with the score to 3 places, the best first and the rest sorted (equal
/// scores come in any order, and a cached index may differ from a fresh one in the last
/// bit of a score).
async fn answers(store: &SqliteStore, u: usize) -> (Vec<String>, Vec<String>) {
    let user = format!("user{u}");
    let facts = UserMemoryStore::search(store, &user, &format!("color{u}x3"), 10)
        .await
        .expect("search facts");
    let mut facts: Vec<String> = facts
        .into_iter()
        .map(|s| format!("{} {:.3}", s.fact.text, s.score))
        .collect();
    facts[1..].sort();
    let mut docs: Vec<String> = VectorStore::search(
        store,
        &ns(u),
        &SearchQuery::new(format!("marker{u} episode"), 20),
    )
    .await
    .expect("search docs")
    .into_iter()
    .map(|h| format!("{} {}", h.id, h.content))
    .collect();
    docs.sort();
    (facts, docs)
}

fn within(stats: crate::lru::LruStats) -> bool {
    stats.bytes <= stats.budget || stats.entries == 1
}

#[tokio::test]
async fn a_tiny_budget_evicts_by_bytes_and_answers_as_a_roomy_one() {
    let (small_dir, roomy_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let small = open(&small_dir, CacheBudget::new(16 << 10, 48 << 10)).await;
    let roomy = open(&roomy_dir, CacheBudget::default()).await;
    fill(&small).await;
    fill(&roomy).await;
    // Twice over, the second pass after everyone's entries were evicted by later users.
    for pass in 0..2 {
        for u in 0..USERS {
            let (facts, docs) = answers(&small, u).await;
            let expected = answers(&roomy, u).await;
            assert_eq!(
                (&facts, &docs),
                (&expected.0, &expected.1),
                "user {u}, pass {pass}"
            );
            assert!(
                facts[0].starts_with(&format!("likes color{u}x3 ")),
                "{facts:?}"
            );
            assert_eq!(docs.len(), 10);
            assert!(
                within(small.inner.fact_cache.stats()),
                "{:?}",
                small.inner.fact_cache.stats()
            );
            assert!(
                within(small.mirrors().stats()),
                "{:?}",
                small.mirrors().stats()
            );
        }
    }
    let (facts, mirrors) = (small.inner.fact_cache.stats(), small.mirrors().stats());
    assert!(facts.entries < USERS && facts.evictions > 0, "{facts:?}");
    assert!(
        mirrors.entries < USERS && mirrors.evictions > 0,
        "{mirrors:?}"
    );
    assert!(
        mirrors.bytes > 0,
        "mirrors are measured once loaded: {mirrors:?}"
    );
    // The roomy store kept everyone.
    assert_eq!(roomy.inner.fact_cache.stats().evictions, 0);
    assert_eq!(roomy.mirrors().stats().entries, USERS);

    // A write to a user whose entries were evicted long ago is seen by the next search.
    let c = FactCandidate::new("likes color0x3 and tea", 0.95).with_attribute("likes", "tea");
    UserMemoryStore::upsert(&small, "user0", c.clone())
        .await
        .expect("upsert");
    UserMemoryStore::upsert(&roomy, "user0", c)
        .await
        .expect("upsert");
    for store in [&small, &roomy] {
        store
            .upsert_batch(&ns(0), vec![Document::new("marker0 again").with_id("late")])
            .await
            .expect("upsert");
    }
    assert_eq!(answers(&small, 0).await, answers(&roomy, 0).await);
    assert_eq!(answers(&small, 0).await.1.len(), 11);
}

#[tokio::test]
async fn the_most_recently_used_users_survive() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir, CacheBudget::default()).await;
    fill(&store).await;
    for u in 0..USERS {
        answers(&store, u).await;
    }
    // Room for about a quarter of the users' indexes; users 0..10 used last.
    let per_user = store.mirrors().stats().bytes / USERS;
    for u in 0..10 {
        answers(&store, u).await;
    }
    store.inner.mirrors.set_budget(per_user * 10 + per_user / 2);
    let stats = store.mirrors().stats();
    assert_eq!(stats.entries, 10, "{stats:?}");
    for u in 0..10 {
        assert!(
            store.mirrors().loaded(&ns(u)).is_some(),
            "user {u} was used last"
        );
    }
    assert!(store.mirrors().loaded(&ns(10)).is_none());
}
