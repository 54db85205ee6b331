//! Turning an embedder on for stores that were opened without one.

use std::sync::Arc;

use async_trait::async_trait;

use super::{Document, Embedder, SearchHit, SearchQuery, VectorStore};
use crate::di::Container;
use crate::error::{MemoryError, Result};
use crate::facts::{EmbeddingUserMemoryStore, UserMemoryStore};
use crate::reembed::DenseGate;

/// A [`VectorStore`] that embeds what it is given: documents upserted without an
/// embedding, and the text of queries without one, then delegates to the wrapped store,
/// whose search is then hybrid (see [`fuse`](fn@super::fuse)).
pub struct EmbeddingVectorStore {
    inner: Arc<dyn VectorStore>,
    embedder: Arc<dyn Embedder>,
    gate: DenseGate,
}

impl std::fmt::Debug for EmbeddingVectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingVectorStore")
            .finish_non_exhaustive()
    }
}

impl EmbeddingVectorStore {
    /// `inner`, with documents and queries embedded by `embedder`.
    pub fn new(inner: Arc<dyn VectorStore>, embedder: Arc<dyn Embedder>) -> Self {
        Self {
            inner,
            embedder,
            gate: DenseGate::open(),
        }
    }

    /// This store, embedding only while `gate` allows vectors: while it does not (the
    /// inner store still holds another model's vectors), documents are stored without a
    /// vector (a [`Backfill`](crate::reembed::Backfill) embeds them later) and searches
    /// are by words only.
    pub fn with_gate(mut self, gate: DenseGate) -> Self {
        self.gate = gate;
        self
    }

    async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let n = texts.len();
        let vectors = self.embedder.embed(&texts).await?;
        if vectors.len() != n {
            return Err(MemoryError::invalid(
                "embedder output",
                format!("{} vectors for {n} texts", vectors.len()),
            ));
        }
        Ok(vectors)
    }
}

#[async_trait]
impl VectorStore for EmbeddingVectorStore {
    async fn upsert_batch(
        &self,
        namespace: &str,
        mut documents: Vec<Document>,
    ) -> Result<Vec<String>> {
        if !self.gate.allows_vectors().await {
            return self.inner.upsert_batch(namespace, documents).await;
        }
        let missing: Vec<usize> = (0..documents.len())
            .filter(|&i| documents[i].embedding.is_none())
            .collect();
        let texts = missing
            .iter()
            .map(|&i| documents[i].content.clone())
            .collect();
        for (i, v) in missing.into_iter().zip(self.embed(texts).await?) {
            documents[i].embedding = Some(v);
        }
        self.inner.upsert_batch(namespace, documents).await
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if query.embedding.is_some()
            || query.text.trim().is_empty()
            || query.k == 0
            || !self.gate.allows_vectors().await
        {
            return self.inner.search(namespace, query).await;
        }
        let mut query = query.clone();
        query.embedding = self.embed(vec![query.text.clone()]).await?.pop();
        self.inner.search(namespace, &query).await
    }

    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        self.inner.get(namespace, id).await
    }

    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        self.inner.get_many(namespace, ids).await
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        self.inner.delete(namespace, ids).await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        self.inner.clear(namespace).await
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        self.inner.len(namespace).await
    }

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        self.inner.ids(namespace).await
    }

    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        self.inner.ids_in_range(namespace, from, to).await
    }
}

/// Turns semantic recall on for every user-memory and vector store registered in
/// `container`: each is replaced, under its token, by itself wrapped in
/// [`EmbeddingUserMemoryStore`] / [`EmbeddingVectorStore`] with `embedder`. Facts and
/// documents are then embedded when written and searches are hybrid.
///
pub fn embed_stores(container: &Container, embedder: Arc<dyn Embedder>) -> Result<()> {
    wrap_stores(container, embedder, &DenseGate::open())
}

/// [`embed_stores`], each wrapper asking `gate` before it uses vectors.
pub(crate) fn wrap_stores(
    container: &Container,
    embedder: Arc<dyn Embedder>,
    gate: &DenseGate,
) -> Result<()> {
    // One turn embeds its message for the fact query, the episode and the episode query:
    // the stores share one memory of recent texts, so the model runs once for it.
    let embedder: Arc<dyn Embedder> = Arc::new(super::RecentEmbeddings::new(embedder));
    for token in container.tokens::<dyn UserMemoryStore>() {
        let store = container.resolve::<dyn UserMemoryStore>(Some(&token))?;
        let wrapped: Arc<dyn UserMemoryStore> = Arc::new(
            EmbeddingUserMemoryStore::new(store, Arc::clone(&embedder)).with_gate(gate.clone()),
        );
        container.register::<dyn UserMemoryStore>(token, wrapped);
    }
    for token in container.tokens::<dyn VectorStore>() {
        let store = container.resolve::<dyn VectorStore>(Some(&token))?;
        let wrapped: Arc<dyn VectorStore> = Arc::new(
            EmbeddingVectorStore::new(store, Arc::clone(&embedder)).with_gate(gate.clone()),
        );
        container.register::<dyn VectorStore>(token, wrapped);
    }
    Ok(())
}
