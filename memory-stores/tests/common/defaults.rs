//! The trait's provided `get_many` and `ids_in_range` over any store, and a check that a
//! store's own answers are the same: what the incremental-index tests compare against.

use agentmemory_core::vector::{Document, SearchHit, SearchQuery};
use agentmemory_core::{Result, VectorStore};
use async_trait::async_trait;

/// `store` with only the required methods passed on, so `get_many` and `ids_in_range`
/// are the trait's defaults (one `get` per id, bisecting `ids`).
pub struct Defaults<'a, S: VectorStore>(pub &'a S);

#[async_trait]
impl<S: VectorStore> VectorStore for Defaults<'_, S> {
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        self.0.upsert_batch(namespace, documents).await
    }
    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.0.search(namespace, query).await
    }
    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        self.0.get(namespace, id).await
    }
    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        self.0.delete(namespace, ids).await
    }
    async fn clear(&self, namespace: &str) -> Result<()> {
        self.0.clear(namespace).await
    }
    async fn len(&self, namespace: &str) -> Result<usize> {
        self.0.len(namespace).await
    }
    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        self.0.ids(namespace).await
    }
}

/// Ids whose byte order differs from most collations' order: case, accents, punctuation,
/// a prefix of another, digits.
pub const AWKWARD_IDS: [&str; 10] = ["a", "B", "a-b", "a_b", "ab", "Z", "z", "é", "ép", "01HZ"];

/// `store`'s `get_many` and `ids_in_range` over namespace `ns` answer as the defaults do:
/// ids given in a scrambled order, duplicates-free, with missing ones; ranges inside, at
/// and past the ends, empty and reversed.
pub async fn check_same_as_defaults<S: VectorStore>(store: &S, ns: &str) {
    let defaults = Defaults(store);
    let mut all = store.ids(ns).await.expect("ids");
    assert!(!all.is_empty(), "the namespace holds documents");
    all.reverse();
    let mut wanted: Vec<String> = all.iter().step_by(3).cloned().collect();
    wanted.insert(1, "missing".to_owned());
    wanted.push("also-missing".to_owned());
    assert_eq!(
        store.get_many(ns, &wanted).await.expect("get_many"),
        defaults
            .get_many(ns, &wanted)
            .await
            .expect("default get_many")
    );
    assert_eq!(
        store.get_many(ns, &[]).await.expect("get_many of nothing"),
        []
    );
    all.reverse();
    let mut bounds: Vec<String> = vec![String::new(), "\u{10ffff}".to_owned(), "m".to_owned()];
    bounds.extend(all.iter().step_by(97).cloned());
    bounds.extend(AWKWARD_IDS.iter().map(|s| (*s).to_owned()));
    bounds.push(format!("{}0", all[all.len() / 2]));
    for from in &bounds {
        for to in &bounds {
            assert_eq!(
                store
                    .ids_in_range(ns, from, to)
                    .await
                    .expect("ids_in_range"),
                defaults
                    .ids_in_range(ns, from, to)
                    .await
                    .expect("default ids_in_range"),
                "[{from:?}, {to:?})"
            );
        }
    }
}
