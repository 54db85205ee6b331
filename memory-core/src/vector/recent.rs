//! [`RecentEmbeddings`]: an embedder that remembers the last texts it embedded.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::watch;

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
/// Facts and episodes are searched at the same time, so two callers often ask for the
/// same text before either has its vector: the second waits for the first one's call
/// instead of running the model again (if that call fails or is dropped, it embeds the
/// text itself).
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
    /// Texts some call is embedding now; their receivers see a change (or the sender
    /// dropped) once it is done, and find the vector in `entries` if it succeeded.
    in_flight: HashMap<String, watch::Receiver<()>>,
}

impl Recent {
    fn cached(&self, text: &str) -> Option<Vec<f32>> {
        self.entries
            .iter()
            .find(|(t, _)| t == text)
            .map(|(_, v)| v.clone())
    }
}

/// The texts one call is embedding for everyone: removed from the in-flight set when the
/// call ends, however it ends (an error, or its future dropped), which wakes the waiters.
struct Claim<'a> {
    recent: &'a Mutex<Recent>,
    texts: Vec<String>,
    _done: watch::Sender<()>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut recent = self.recent.lock();
        for text in &self.texts {
            recent.in_flight.remove(text);
        }
    }
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

    /// Keeps `v` as the vector of `text`, forgetting the oldest beyond the capacity.
    fn remember(&self, recent: &mut Recent, text: &str, v: &[f32]) {
        if self.capacity == 0 || recent.cached(text).is_some() {
            return;
        }
        if recent.entries.len() == self.capacity {
            recent.entries.pop_front();
        }
        recent.entries.push_back((text.to_owned(), v.to_vec()));
    }

    /// How many texts were answered without the model so far.
    pub fn hits(&self) -> u64 {
        self.recent.lock().hits
    }
}

#[async_trait]
impl Embedder for RecentEmbeddings {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        // Each text is remembered, being embedded by another call (wait for it), or ours.
        let (done, _) = watch::channel(());
        let mut out: Vec<Option<Vec<f32>>> = Vec::with_capacity(texts.len());
        let mut waits: Vec<(usize, watch::Receiver<()>)> = Vec::new();
        let mut mine: Vec<String> = Vec::new();
        {
            let mut recent = self.recent.lock();
            for text in texts {
                if let Some(v) = recent.cached(text) {
                    recent.hits += 1;
                    out.push(Some(v));
                    continue;
                }
                out.push(None);
                match recent.in_flight.get(text) {
                    Some(rx) => waits.push((out.len() - 1, rx.clone())),
                    None => {
                        recent.in_flight.insert(text.clone(), done.subscribe());
                        mine.push(text.clone());
                    }
                }
            }
        }
        let claim = Claim {
            recent: &self.recent,
            texts: mine,
            _done: done,
        };
        if !claim.texts.is_empty() {
            let vectors = self.inner.embed(&claim.texts).await?;
            let mut recent = self.recent.lock();
            for (text, v) in claim.texts.iter().zip(vectors) {
                self.remember(&mut recent, text, &v);
                for (slot, t) in out.iter_mut().zip(texts) {
                    if slot.is_none() && t == text {
                        *slot = Some(v.clone());
                    }
                }
            }
        }
        drop(claim);
        // The texts another call was embedding: its result, or ours if it failed.
        let mut again: Vec<usize> = Vec::new();
        for (i, mut rx) in waits {
            if out[i].is_some() {
                // The same text twice in this call: embedded above.
                continue;
            }
            // Ends when the other call's claim is dropped (its sender with it).
            while rx.changed().await.is_ok() {}
            let mut recent = self.recent.lock();
            match recent.cached(&texts[i]) {
                Some(v) => {
                    recent.hits += 1;
                    out[i] = Some(v);
                }
                None => again.push(i),
            }
        }
        if !again.is_empty() {
            let missing: Vec<String> = again.iter().map(|&i| texts[i].clone()).collect();
            let vectors = self.inner.embed(&missing).await?;
            let mut recent = self.recent.lock();
            for (i, v) in again.into_iter().zip(vectors) {
                self.remember(&mut recent, &texts[i], &v);
                out[i] = Some(v);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MemoryError;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Counts the texts it embeds; fails while `fail` is set; takes 10 ms a call.
    #[derive(Default)]
    struct Slow {
        texts: AtomicUsize,
        fail: std::sync::atomic::AtomicBool,
    }

    #[async_trait]
    impl Embedder for Slow {
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            tokio::time::sleep(Duration::from_millis(10)).await;
            if self.fail.swap(false, Ordering::SeqCst) {
                return Err(MemoryError::invalid("text", "refused once"));
            }
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
    }

    fn texts(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[tokio::test]
    async fn callers_asking_at_once_share_one_model_call() {
        let slow = Arc::new(Slow::default());
        let recent = RecentEmbeddings::new(slow.clone());
        let a = texts(&["alpha", "beta"]);
        let b = texts(&["beta", "gamma", "beta"]);
        let (x, y) = tokio::join!(recent.embed(&a), recent.embed(&b));
        let (x, y) = (x.unwrap(), y.unwrap());
        assert_eq!(x, [vec![5.0, 1.0], vec![4.0, 1.0]]);
        assert_eq!(y, [vec![4.0, 1.0], vec![5.0, 1.0], vec![4.0, 1.0]]);
        assert_eq!(
            slow.texts.load(Ordering::SeqCst),
            3,
            "alpha, beta, gamma once each"
        );
    }

    #[tokio::test]
    async fn a_waiter_embeds_itself_when_the_call_it_waited_for_fails() {
        let slow = Arc::new(Slow::default());
        slow.fail.store(true, Ordering::SeqCst);
        let recent = RecentEmbeddings::new(slow.clone());
        let one = texts(&["delta"]);
        let (x, y) = tokio::join!(recent.embed(&one), async {
            tokio::task::yield_now().await;
            recent.embed(&one).await
        });
        assert!(x.is_err(), "the first call carries the model's error");
        assert_eq!(y.unwrap(), [vec![5.0, 1.0]]);
        assert_eq!(recent.embed(&one).await.unwrap(), [vec![5.0, 1.0]]);
        assert_eq!(slow.texts.load(Ordering::SeqCst), 1);
        assert!(recent.recent.lock().in_flight.is_empty());
    }

    #[tokio::test]
    async fn a_dropped_call_releases_its_texts() {
        let slow = Arc::new(Slow::default());
        let recent = RecentEmbeddings::new(slow.clone());
        let one = texts(&["epsilon"]);
        // Dropped while the model is still working.
        let _ = tokio::time::timeout(Duration::from_millis(2), recent.embed(&one)).await;
        assert!(recent.recent.lock().in_flight.is_empty());
        assert_eq!(recent.embed(&one).await.unwrap(), [vec![7.0, 1.0]]);
    }
}
