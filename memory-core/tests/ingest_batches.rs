//! A long history is written to the episode store in batches, so no one write outlasts a
//! remote store's time limit for one operation (a 10,000-message ingest was refused by
//! PostgreSQL as one write), and every message still becomes an episode.

use std::sync::Arc;

use agentmemory_core::episodes::{
    Episode, EpisodeQuery, EpisodeStore, InMemoryEpisodeStore, Retention, ScoredEpisode,
};
use agentmemory_core::ingest::ingest;
use agentmemory_core::{Container, InMemoryConversationStore, Message, Result};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::Mutex;

/// An in-memory episode store that records the size of every write.
#[derive(Default)]
struct Batches {
    inner: InMemoryEpisodeStore,
    sizes: Mutex<Vec<usize>>,
}

#[async_trait]
impl EpisodeStore for Batches {
    async fn add(&self, user_id: &str, episodes: Vec<Episode>) -> Result<()> {
        self.sizes.lock().push(episodes.len());
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

#[tokio::test]
async fn a_long_history_is_kept_in_batches_and_whole() {
    let container = Container::new();
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    let episodes = Arc::new(Batches::default());
    container.register_episodes("episodes", episodes.clone());
    let history: Vec<Message> = (0..1_201)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("note number {i} about the garden"))
            } else {
                Message::assistant(format!("reply number {i}"))
            }
        })
        .collect();
    let report = ingest(&container, "ines", Some("long"), history.clone())
        .await
        .unwrap();
    assert_eq!(report.episodes, 1_201);
    let sizes = episodes.sizes.lock().clone();
    assert!(sizes.len() >= 3, "one write of {sizes:?}");
    assert!(sizes.iter().all(|&n| n <= 500), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<usize>(), 1_201);
    assert_eq!(episodes.len("ines").await.unwrap(), 1_201);
    // The same history again adds nothing (episode ids are stable per message).
    ingest(&container, "ines", Some("long"), history)
        .await
        .unwrap();
    assert_eq!(episodes.len("ines").await.unwrap(), 1_201);
}
