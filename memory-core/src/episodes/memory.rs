//! [`InMemoryEpisodeStore`]: episodes in process memory, for tests and one-process apps.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{Episode, EpisodeQuery, EpisodeStore, Retention, ScoredEpisode, VectorEpisodeStore};
use crate::error::Result;
use crate::vector::{Embedder, InMemoryVectorStore};

/// Episodes kept in memory: a [`VectorEpisodeStore`] over an [`InMemoryVectorStore`]
/// (sparse search; hybrid with [`with_embedder`](Self::with_embedder)).
#[derive(Clone)]
pub struct InMemoryEpisodeStore {
    inner: VectorEpisodeStore,
}

impl std::fmt::Debug for InMemoryEpisodeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryEpisodeStore")
            .finish_non_exhaustive()
    }
}

impl Default for InMemoryEpisodeStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryEpisodeStore {
    /// An empty store searched by words.
    pub fn new() -> Self {
        Self {
            inner: VectorEpisodeStore::new(Arc::new(InMemoryVectorStore::new())),
        }
    }

    /// An empty store searched by words and meaning (`embedder` embeds each episode once,
    /// when it is added).
    pub fn with_embedder(embedder: Arc<dyn Embedder>) -> Self {
        Self {
            inner: VectorEpisodeStore::new(Arc::new(InMemoryVectorStore::with_embedder(embedder))),
        }
    }
}

#[async_trait]
impl EpisodeStore for InMemoryEpisodeStore {
    async fn add(&self, user_id: &str, episodes: Vec<Episode>) -> Result<()> {
        self.inner.add(user_id, episodes).await
    }
    async fn search(&self, user_id: &str, query: &EpisodeQuery) -> Result<Vec<ScoredEpisode>> {
        self.inner.search(user_id, query).await
    }
    async fn list(
        &self,
        user_id: &str,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Episode>> {
        self.inner.list(user_id, from, to, limit).await
    }
    async fn len(&self, user_id: &str) -> Result<usize> {
        self.inner.len(user_id).await
    }
    async fn retain(
        &self,
        user_id: &str,
        retention: Retention,
        now: DateTime<Utc>,
    ) -> Result<usize> {
        self.inner.retain(user_id, retention, now).await
    }
    async fn forget(&self, user_id: &str) -> Result<usize> {
        self.inner.forget(user_id).await
    }
}
