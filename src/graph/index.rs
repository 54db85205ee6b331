//! The graph's search index: one document per entity (its name and type) and one per
//! observation, in a [`VectorStore`] namespace, so a search ranks by words and meaning
//! (hybrid, with the store's embedder when one is configured).
//!
//! The index is derived from the log and may lag it (a crash between the two writes, a
//! graph written before the index existed): [`SearchIndex::sync`] repairs it, and a
//! search only ever returns what the log holds. Documents have ids derived from their
//! content, so writing one twice, or from two processes, is harmless.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use agentmemory_core::error::Result;
use agentmemory_core::vector::{Document, SearchQuery, VectorStore};

use super::model::Entity;
use super::state::GraphState;

const ENTITY: &str = "entity";
const KIND: &str = "kind";

/// The score from which a document that shares no word with the query still matches, by
/// meaning alone. A document sharing no word scores `0.6 × cosine`
/// ([`Fusion::DEFAULT`](agentmemory_core::store_support::Fusion::DEFAULT)), so this asks for a cosine of
/// about 0.44 under all-MiniLM-L6-v2, where sentences on one topic usually score 0.4–0.7
/// and unrelated ones under 0.2. Chosen by that reading of the model, not tuned on a set.
pub const MEANING_THRESHOLD: f32 = 0.2625;

/// How many documents a search asks the store for.
const SEARCH_DEPTH: usize = 100;

/// A graph's documents in a vector store.
#[derive(Clone)]
pub(crate) struct SearchIndex {
    store: Arc<dyn VectorStore>,
    namespace: String,
}

/// The id of the document of entity `name`.
fn entity_id(name: &str) -> String {
    format!(
        "e{:032x}",
        agentmemory_core::episodes::fnv1a_128(&[b"entity\0", name.as_bytes()])
    )
}

/// The id of the document of observation `text` of entity `name`.
fn observation_id(name: &str, text: &str) -> String {
    // the name's length first, so ("ab", "c") and ("a", "bc") differ
    let len = (name.len() as u64).to_le_bytes();
    format!(
        "o{:032x}",
        agentmemory_core::episodes::fnv1a_128(&[&len, name.as_bytes(), text.as_bytes()])
    )
}

fn entity_document(entity: &Entity) -> Document {
    Document::new(format!("{} {}", entity.name, entity.entity_type))
        .with_id(entity_id(&entity.name))
        .with_metadata(ENTITY, entity.name.as_str())
        .with_metadata(KIND, "entity")
}

fn observation_document(name: &str, text: &str) -> Document {
    Document::new(text)
        .with_id(observation_id(name, text))
        .with_metadata(ENTITY, name)
        .with_metadata(KIND, "observation")
}

/// Every document of `entity`.
fn documents(entity: &Entity) -> impl Iterator<Item = Document> + '_ {
    std::iter::once(entity_document(entity)).chain(
        entity
            .observations
            .iter()
            .map(|o| observation_document(&entity.name, o)),
    )
}

impl SearchIndex {
    pub(crate) fn new(store: Arc<dyn VectorStore>, namespace: String) -> Self {
        Self { store, namespace }
    }

    /// Indexes entities (with their observations).
    pub(crate) async fn add_entities(&self, entities: &[Entity]) -> Result<()> {
        let docs: Vec<Document> = entities.iter().flat_map(documents).collect();
        self.upsert(docs).await
    }

    /// Indexes observations of entity `name`.
    pub(crate) async fn add_observations(&self, name: &str, texts: &[String]) -> Result<()> {
        let docs = texts
            .iter()
            .map(|t| observation_document(name, t))
            .collect();
        self.upsert(docs).await
    }

    /// Drops the documents of entities.
    pub(crate) async fn remove_entities(&self, entities: &[Entity]) -> Result<()> {
        let ids: Vec<String> = entities
            .iter()
            .flat_map(documents)
            .filter_map(|d| d.id)
            .collect();
        self.delete(&ids).await
    }

    /// Drops the documents of observations, given as `(entity, text)`.
    pub(crate) async fn remove_observations(&self, removed: &[(String, String)]) -> Result<()> {
        let ids: Vec<String> = removed
            .iter()
            .map(|(name, text)| observation_id(name, text))
            .collect();
        self.delete(&ids).await
    }

    /// Makes the index hold exactly the documents of `state`: indexes what is missing and
    /// drops what the graph no longer holds. How many documents it wrote and dropped.
    pub(crate) async fn sync(&self, state: &GraphState) -> Result<(usize, usize)> {
        let held: HashSet<String> = self.store.ids(&self.namespace).await?.into_iter().collect();
        let mut wanted = HashSet::new();
        let mut missing = Vec::new();
        for doc in state.entities().flat_map(documents) {
            let Some(id) = doc.id.clone() else { continue };
            if !held.contains(&id) {
                missing.push(doc);
            }
            wanted.insert(id);
        }
        let extra: Vec<String> = held.difference(&wanted).cloned().collect();
        let written = missing.len();
        self.upsert(missing).await?;
        self.delete(&extra).await?;
        Ok((written, extra.len()))
    }

    /// The entities whose documents match `query`, with their best score. A document
    /// matches when it shares a word with the query (after the text analysis every store
    /// uses) or, by meaning alone, when its score reaches [`MEANING_THRESHOLD`].
    pub(crate) async fn search(&self, query: &str) -> Result<HashMap<String, f32>> {
        let hits = self
            .store
            .search(&self.namespace, &SearchQuery::new(query, SEARCH_DEPTH))
            .await?;
        let words: HashSet<String> = agentmemory_core::store_support::terms(query)
            .into_iter()
            .collect();
        let mut found: HashMap<String, f32> = HashMap::new();
        for hit in hits {
            let Some(name) = hit.metadata.get(ENTITY).and_then(|v| v.as_str()) else {
                continue;
            };
            let shares_a_word = shares_a_word(&words, &hit.content);
            if shares_a_word || hit.score >= MEANING_THRESHOLD {
                let best = found.entry(name.to_owned()).or_insert(hit.score);
                *best = best.max(hit.score);
            }
        }
        Ok(found)
    }

    async fn upsert(&self, docs: Vec<Document>) -> Result<()> {
        if !docs.is_empty() {
            self.store.upsert_batch(&self.namespace, docs).await?;
        }
        Ok(())
    }

    async fn delete(&self, ids: &[String]) -> Result<()> {
        if !ids.is_empty() {
            self.store.delete(&self.namespace, ids).await?;
        }
        Ok(())
    }
}

/// Whether `text` has one of the analysed `words`.
pub(crate) fn shares_a_word(words: &HashSet<String>, text: &str) -> bool {
    let mut found = false;
    agentmemory_core::store_support::for_each_term(text, |t| found |= words.contains(t));
    found
}
