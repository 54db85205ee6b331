//! [`RecentEmbeddings`]: an embedder that remembers the last texts it embedded.

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::Embedder;
use crate::error::Result;

/// How many recent texts are remembered by default.
const DEFAULT_CAPACITY: usize = 32;

/// Wraps an [`Embedder`] and answers again, without the model, for any of the last few
/// texts it embedded.
///
/// One turn embeds the user's message several times over: kept as an episode, as the
/// episode query and as the fact query. Behind this wrapper the model runs once for it,
/// so a turn costs one embedding of the message. [`embed_stores`](super::embed_stores)
/// puts every store of a container behind one.
///
/// ```
/// # tokio_test::block_on(async {
/// use std::sync::Arc;
/// use agentmemory_core::vector::{Embedder, RecentEmbeddings};
/// # struct Len;
/// # #[async_trait::async_trait]
/// # impl Embedder for Len {
/// #     async fn embed(&self, t: &[String]) -> agentmemory_core::Result<Vec<Vec<f32>>> {
/// #         Ok(t.iter().map(|s| vec![s.len() as f32, 1.0]).collect())
/// #     }
/// # }
/// let embedder = RecentEmbeddings::new(Arc::new(Len));
/// let a = embedder.embed(&["hello".into()]).await?;
/// let b = embedder.embed(&["hello".into(), "hi".into()]).await?;
/// assert_eq!(a[0], b[0]);
/// assert_eq!(embedder.hits(), 1);
/// # Ok::<_, agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
pub struct RecentEmbeddings {
    inner: Arc<dyn Embedder>,
    capacity: usize,
    recent: Mutex<Recent>,
}

#[derive(Default)]
struct Recent {
    entries: VecDeque<(String, Vec<f32>)>,
    hits: u64,
}

impl std::fmt::Debug for RecentEmbeddings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecentEmbeddings")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl RecentEmbeddings {
    /// `inner`, remembering its last 32 texts.
    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        Self::with_capacity(inner, DEFAULT_CAPACITY)
    }

    /// `inner`, remembering its last `capacity` texts.
    pub fn with_capacity(inner: Arc<dyn Embedder>, capacity: usize) -> Self {
        Self {
            inner,
            capacity,
            recent: Mutex::new(Recent::default()),
        }
    }

    /// How many texts were answered without the model so far.
    pub fn hits(&self) -> u64 {
        self.recent.lock().hits
    }
}

#[async_trait]
impl Embedder for RecentEmbeddings {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out: Vec<Option<Vec<f32>>> = {
            let mut recent = self.recent.lock();
            let found: Vec<Option<Vec<f32>>> = texts
                .iter()
                .map(|t| {
                    recent
                        .entries
                        .iter()
                        .find(|(text, _)| text == t)
                        .map(|(_, v)| v.clone())
                })
                .collect();
            recent.hits += found.iter().filter(|v| v.is_some()).count() as u64;
            found
        };
        let missing: Vec<String> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| t.clone())
            .collect();
        if !missing.is_empty() {
            let vectors = self.inner.embed(&missing).await?;
            let mut fresh = vectors.into_iter();
            let mut recent = self.recent.lock();
            for (slot, text) in out.iter_mut().filter(|v| v.is_none()).zip(&missing) {
                let Some(v) = fresh.next() else { break };
                if self.capacity > 0 {
                    if recent.entries.len() == self.capacity {
                        recent.entries.pop_front();
                    }
                    recent.entries.push_back((text.clone(), v.clone()));
                }
                *slot = Some(v);
            }
        }
        // A short answer from the model leaves slots empty: the caller's length check
        // reports it.
        Ok(out.into_iter().flatten().collect())
    }

    fn dimensions(&self) -> Option<usize> {
        self.inner.dimensions()
    }

    fn model_name(&self) -> Option<String> {
        self.inner.model_name()
    }
}
