//! [`Backfill`]: one pass that embeds what a store holds without a vector.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::gate::{GateSetter, GateState};
use super::{DenseGate, Embedded, EmbeddingModel, Reembed, DEFAULT_BATCH};
use crate::error::{MemoryError, Result};
use crate::vector::Embedder;

/// How a [`Backfill`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackfillOptions {
    /// Texts per call to the embedder (and records per page asked of the store); a
    /// background pass takes at most 16, and pauses after each batch as long as it took.
    pub batch: usize,
    /// Drop every vector first and embed everything again, whatever model made them.
    pub all: bool,
}

impl Default for BackfillOptions {
    fn default() -> Self {
        Self {
            batch: DEFAULT_BATCH,
            all: false,
        }
    }
}

impl BackfillOptions {
    /// Embeds `batch` texts per call (at least 1).
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Re-embeds everything (`true`) or only what has no vector (`false`, the default).
    pub fn all(mut self, all: bool) -> Self {
        self.all = all;
        self
    }
}

/// Where a [`Backfill`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Reading the model the stores recorded.
    Checking,
    /// Removing another model's vectors (or every vector, for [`BackfillOptions::all`]).
    Dropping,
    /// Embedding what has no vector.
    Embedding,
    /// Finished: everything that had no vector has one, and the model is recorded.
    Done,
    /// Stopped before the end: the store was dropped, or (run in the foreground) an
    /// error ended it.
    Stopped,
}

/// What a [`Backfill`] has done so far.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BackfillProgress {
    /// Where it is.
    pub phase: Phase,
    /// The embedder's model, once known.
    pub model: Option<EmbeddingModel>,
    /// Whether a store recorded another model (its vectors were dropped).
    pub model_changed: bool,
    /// How many vectors were dropped.
    pub dropped: usize,
    /// How many records had no vector when embedding started (records written by
    /// others meanwhile may raise [`embedded`](Self::embedded) above it).
    pub total: usize,
    /// How many records were given a vector.
    pub embedded: usize,
    /// The last error met, when a step failed and is being retried (background runs).
    pub last_error: Option<String>,
}

impl BackfillProgress {
    fn new() -> Self {
        Self {
            phase: Phase::Checking,
            model: None,
            model_changed: false,
            dropped: 0,
            total: 0,
            embedded: 0,
            last_error: None,
        }
    }

    /// Whether it has finished or stopped.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Done | Phase::Stopped)
    }
}

/// What a finished [`Backfill`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BackfillReport {
    /// The model that made the vectors, now recorded by every store.
    pub model: EmbeddingModel,
    /// Whether a store had recorded another model.
    pub model_changed: bool,
    /// How many vectors were dropped (another model's, or all of them for
    /// [`BackfillOptions::all`]).
    pub dropped: usize,
    /// How many facts and documents were given a vector.
    pub embedded: usize,
}

/// Embeds what stores hold without a vector, in batches: in the background when a store
/// is opened with a model ([`spawn`](Self::spawn); `StoreUrl::open` does it), or in the
/// foreground on demand ([`run`](Self::run); `agentmem reembed`).
///
/// A pass reads each store's recorded [`EmbeddingModel`]; when it is another model (or
/// [`BackfillOptions::all`] is set) it drops the store's vectors first. It then asks for
/// what has no vector ([`Reembed::unembedded`]), one page of
/// [`batch`](BackfillOptions::batch) records at a time, embeds each page in one call and
/// stores the vectors, and finally records the model.
///
/// The handle is how a caller follows a background pass: [`progress`](Self::progress)
/// any time, [`wait`](Self::wait) for the end. In the background a failed step (store or
/// embedder) is logged with `tracing`, kept in [`BackfillProgress::last_error`] and tried
/// again after a pause (1 s, doubling up to a minute); nothing is lost, since every
/// record keeps its text and a page's vectors are written only once made. The pass ends
/// by itself, between two steps, when the stores are dropped.
///
/// ```
/// use std::sync::Arc;
/// use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
/// use agentmemory_core::reembed::{Backfill, BackfillOptions, Reembed};
/// # use agentmemory_core::{Embedder, Result};
/// # struct Letters;
/// # #[async_trait::async_trait]
/// # impl Embedder for Letters {
/// #     async fn embed(&self, t: &[String]) -> Result<Vec<Vec<f32>>> {
/// #         Ok(t.iter().map(|s| vec![s.matches('e').count() as f32 + 1.0, s.len() as f32]).collect())
/// #     }
/// # }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let store = Arc::new(InMemoryUserMemoryStore::new());
/// store.upsert("ana", FactCandidate::new("lives in Lyon", 0.9)).await?; // no model yet
/// let targets: Vec<Arc<dyn Reembed>> = vec![store.clone()];
/// let (backfill, _gate) = Backfill::spawn(targets, Arc::new(Letters), BackfillOptions::default());
/// let report = backfill.wait().await?;
/// assert_eq!(report.embedded, 1);
/// assert!(store.list("ana").await?[0].embedding.is_some());
/// # Ok::<(), agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct Backfill {
    progress: watch::Receiver<BackfillProgress>,
}

impl Backfill {
    /// Starts a pass over `targets` in a tokio task and returns at once, with the gate the
    /// embedding stores over these targets should ask ([`DenseGate`]). The task keeps
    /// only weak references to the stores: it stops when they are dropped. Outside a
    /// tokio runtime nothing runs: the handle reports [`Phase::Stopped`].
    pub fn spawn(
        targets: Vec<Arc<dyn Reembed>>,
        embedder: Arc<dyn Embedder>,
        options: BackfillOptions,
    ) -> (Self, DenseGate) {
        let (gate, setter) = DenseGate::checking();
        let (tx, rx) = watch::channel(BackfillProgress::new());
        let weak: Vec<Weak<dyn Reembed>> = targets.iter().map(Arc::downgrade).collect();
        drop(targets);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let mut pass = Pass {
                        targets: Targets::Weak(weak),
                        embedder,
                        options,
                        progress: BackfillProgress::new(),
                        report: Box::new(move |p: &BackfillProgress| {
                            tx.send_replace(p.clone());
                        }),
                        retry: true,
                        gate: Some(setter),
                        decided: false,
                    };
                    match pass.run().await {
                        Ok(_) => {}
                        Err(e) => {
                            tracing::debug!(error = %e, "embedding backfill stopped");
                            pass.progress.phase = Phase::Stopped;
                            pass.publish();
                        }
                    }
                });
            }
            Err(_) => {
                tracing::debug!("no tokio runtime: embedding backfill not started");
                let mut stopped = BackfillProgress::new();
                stopped.phase = Phase::Stopped;
                tx.send_replace(stopped);
            }
        }
        (Self { progress: rx }, gate)
    }

    /// Runs a pass over `targets` here, calling `on_progress` after each step, and
    /// returns what it did; the first error ends it (nothing is retried).
    pub async fn run(
        targets: Vec<Arc<dyn Reembed>>,
        embedder: Arc<dyn Embedder>,
        options: BackfillOptions,
        on_progress: impl FnMut(&BackfillProgress) + Send + 'static,
    ) -> Result<BackfillReport> {
        let mut pass = Pass {
            targets: Targets::Strong(targets),
            embedder,
            options,
            progress: BackfillProgress::new(),
            report: Box::new(on_progress),
            retry: false,
            gate: None,
            decided: false,
        };
        pass.run().await
    }

    /// What the pass has done so far.
    pub fn progress(&self) -> BackfillProgress {
        self.progress.borrow().clone()
    }

    /// Waits for the pass to end: its report when it finished, an error when it stopped
    /// before (the stores were dropped, or no runtime ran it).
    pub async fn wait(&self) -> Result<BackfillReport> {
        let mut rx = self.progress.clone();
        let finished = rx
            .wait_for(BackfillProgress::is_finished)
            .await
            .map(|p| p.clone());
        let last = match finished {
            Ok(p) => p,
            Err(_) => rx.borrow().clone(),
        };
        match (last.phase, last.model) {
            (Phase::Done, Some(model)) => Ok(BackfillReport {
                model,
                model_changed: last.model_changed,
                dropped: last.dropped,
                embedded: last.embedded,
            }),
            _ => Err(stopped(last.last_error)),
        }
    }
}

fn stopped(reason: Option<String>) -> MemoryError {
    let why = match reason {
        Some(reason) => format!("stopped before the end (last error: {reason})"),
        None => "stopped before the end: the stores were dropped".to_owned(),
    };
    MemoryError::store(
        "embedding backfill",
        format!("embed what has no vector ({why})"),
        why,
    )
}

/// The stores of a pass: held (foreground) or weakly referenced (background).
enum Targets {
    Strong(Vec<Arc<dyn Reembed>>),
    Weak(Vec<Weak<dyn Reembed>>),
}

impl Targets {
    fn len(&self) -> usize {
        match self {
            Targets::Strong(t) => t.len(),
            Targets::Weak(t) => t.len(),
        }
    }

    /// Target `i`, or `None` when it was dropped.
    fn get(&self, i: usize) -> Option<Arc<dyn Reembed>> {
        match self {
            Targets::Strong(t) => t.get(i).cloned(),
            Targets::Weak(t) => t.get(i).and_then(Weak::upgrade),
        }
    }
}

/// Texts per embedding call of a background pass, at most: a request that needs the
/// embedder waits for one such batch, not for a large one.
const BACKGROUND_BATCH: usize = 16;

/// The pause before the `attempt`-th retry: 1 s, doubling, at most a minute.
fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << attempt.min(6)).min(Duration::from_secs(60))
}

type Reporter = Box<dyn FnMut(&BackfillProgress) + Send>;

struct Pass {
    targets: Targets,
    embedder: Arc<dyn Embedder>,
    options: BackfillOptions,
    progress: BackfillProgress,
    report: Reporter,
    retry: bool,
    gate: Option<GateSetter>,
    /// Whether the gate was set (the stores' models were read, or a step failed first).
    decided: bool,
}

/// Why a step did not happen.
enum Stop {
    /// The store was dropped.
    Gone,
    /// It failed (foreground runs only; the background retries).
    Failed(MemoryError),
}

impl From<Stop> for MemoryError {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::Gone => stopped(None),
            Stop::Failed(e) => e,
        }
    }
}

impl Pass {
    fn publish(&mut self) {
        (self.report)(&self.progress);
    }

    fn set_gate(&self, state: GateState) {
        if let Some(gate) = &self.gate {
            gate.set(state);
        }
    }

    /// Runs `step` until it succeeds: once in the foreground, with pauses between
    /// attempts in the background. The step fails with `None` when its store is gone.
    async fn attempt<T, F, Fut>(
        &mut self,
        what: &'static str,
        mut step: F,
    ) -> std::result::Result<T, Stop>
    where
        F: FnMut(&Self) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, Option<MemoryError>>>,
    {
        let mut tries = 0;
        loop {
            match step(self).await {
                Ok(out) => {
                    if self.progress.last_error.take().is_some() {
                        self.publish();
                    }
                    return Ok(out);
                }
                Err(None) => return Err(Stop::Gone),
                Err(Some(e)) if !self.retry => return Err(Stop::Failed(e)),
                Err(Some(e)) => {
                    // Undecided and failing (the store or the model is unreachable):
                    // searches must not wait for it; they use vectors as before.
                    if !self.decided {
                        self.decided = true;
                        self.set_gate(GateState::Open);
                    }
                    let pause = backoff(tries);
                    tracing::warn!(error = %e, step = what, retry_in = ?pause,
                        "embedding backfill step failed; it is tried again");
                    self.progress.last_error = Some(format!("{what}: {e}"));
                    self.publish();
                    tokio::time::sleep(pause).await;
                    tries += 1;
                }
            }
        }
    }

    /// Runs `step` on target `i` as [`attempt`](Self::attempt) does.
    async fn on_target<T, F, Fut>(
        &mut self,
        i: usize,
        what: &'static str,
        step: F,
    ) -> std::result::Result<T, Stop>
    where
        F: Fn(Arc<dyn Reembed>) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        self.attempt(what, |this| {
            let fut = this.targets.get(i).map(&step);
            async move {
                match fut {
                    Some(fut) => fut.await.map_err(Some),
                    None => Err(None),
                }
            }
        })
        .await
    }

    async fn run(&mut self) -> Result<BackfillReport> {
        let embedder = Arc::clone(&self.embedder);
        let model = self
            .attempt("read the embedder's model", |_| {
                let embedder = Arc::clone(&embedder);
                async move { EmbeddingModel::of(&*embedder).await.map_err(Some) }
            })
            .await?;
        self.progress.model = Some(model.clone());
        self.publish();

        let n = self.targets.len();
        let mut recorded = Vec::with_capacity(n);
        for i in 0..n {
            let r = self
                .on_target(i, "read the recorded model", |t| async move {
                    t.embedding_model().await
                })
                .await?;
            recorded.push(r);
        }
        let stale: Vec<bool> = recorded
            .iter()
            .map(|r| r.as_ref().is_some_and(|r| *r != model))
            .collect();
        self.progress.model_changed = stale.iter().any(|s| *s);
        if self.progress.model_changed {
            tracing::info!(%model, previous = ?recorded,
                "the embedding model changed: the stored vectors are dropped and made again");
        }
        self.decided = true;
        if self.options.all || self.progress.model_changed {
            self.set_gate(GateState::Stale);
            self.progress.phase = Phase::Dropping;
            self.publish();
            for (i, stale) in stale.iter().enumerate() {
                if *stale || self.options.all {
                    self.drop_vectors(i).await?;
                }
            }
        }
        self.set_gate(GateState::Open);

        self.progress.phase = Phase::Embedding;
        let mut total = 0;
        for i in 0..n {
            total += self
                .on_target(i, "count what has no vector", |t| async move {
                    t.count_unembedded().await
                })
                .await?;
        }
        self.progress.total = total;
        self.publish();
        for i in 0..n {
            self.embed_target(i, &model).await?;
        }
        for (i, r) in recorded.iter().enumerate() {
            if r.as_ref() != Some(&model) {
                self.on_target(i, "record the model", |t| {
                    let model = model.clone();
                    async move { t.record_embedding_model(&model).await }
                })
                .await?;
            }
        }
        self.progress.phase = Phase::Done;
        self.publish();
        let report = BackfillReport {
            model,
            model_changed: self.progress.model_changed,
            dropped: self.progress.dropped,
            embedded: self.progress.embedded,
        };
        tracing::info!(embedded = report.embedded, dropped = report.dropped,
            model = %report.model, "embedding backfill finished");
        Ok(report)
    }

    async fn drop_vectors(&mut self, i: usize) -> std::result::Result<(), Stop> {
        let dropped = self
            .on_target(i, "drop the old vectors", |t| async move {
                t.drop_embeddings().await
            })
            .await?;
        self.progress.dropped += dropped;
        self.publish();
        Ok(())
    }

    /// Pages through target `i`'s records without a vector and embeds them.
    ///
    /// In the background (a pass that retries), a batch is at most
    /// [`BACKGROUND_BATCH`] texts and the pass pauses after each for as long as the batch
    /// took: the embedder is shared with the requests the store serves, and a store just
    /// opened on much old data must still answer them.
    async fn embed_target(&mut self, i: usize, model: &EmbeddingModel) -> Result<()> {
        let background = self.retry;
        let batch = if background {
            self.options.batch.clamp(1, BACKGROUND_BATCH)
        } else {
            self.options.batch.max(1)
        };
        let mut cursor: Option<String> = None;
        let mut redone = false;
        loop {
            let after = cursor.clone();
            let page = self
                .on_target(i, "list what has no vector", |t| {
                    let after = after.clone();
                    async move { t.unembedded(after.as_deref(), batch).await }
                })
                .await?;
            if !page.items.is_empty() {
                let started = std::time::Instant::now();
                let texts: Vec<String> = page.items.iter().map(|u| u.text.clone()).collect();
                let embedder = Arc::clone(&self.embedder);
                let vectors = self
                    .attempt("embed a batch", |_| {
                        let (embedder, texts) = (Arc::clone(&embedder), texts.clone());
                        async move { embed_checked(&*embedder, &texts, model).await.map_err(Some) }
                    })
                    .await?;
                let embedded: Vec<Embedded> = page
                    .items
                    .iter()
                    .zip(vectors)
                    .map(|(u, v)| Embedded::new(u.target.clone(), u.text.clone(), v))
                    .collect();
                let target = self.targets.get(i).ok_or(Stop::Gone)?;
                let first = target.set_embeddings(embedded.clone()).await;
                drop(target);
                let written = match first {
                    Ok(written) => written,
                    // The store holds vectors of another dimension that it did not
                    // record (written before models were recorded): the model changed.
                    Err(MemoryError::DimensionMismatch { expected, found }) if !redone => {
                        tracing::info!(expected, found,
                            "stored vectors have another dimension: they are dropped and made again");
                        redone = true;
                        self.progress.model_changed = true;
                        self.drop_vectors(i).await?;
                        cursor = None;
                        continue;
                    }
                    Err(e) if !self.retry => return Err(e),
                    Err(e) => {
                        tracing::warn!(error = %e, "storing vectors failed; it is tried again");
                        self.progress.last_error = Some(format!("store the vectors: {e}"));
                        self.publish();
                        tokio::time::sleep(backoff(0)).await;
                        self.on_target(i, "store the vectors", |t| {
                            let embedded = embedded.clone();
                            async move { t.set_embeddings(embedded).await }
                        })
                        .await?
                    }
                };
                self.progress.embedded += written;
                self.publish();
                if background {
                    // Half the embedder's time at most: requests' embeddings go between.
                    tokio::time::sleep(started.elapsed()).await;
                }
            }
            match page.next {
                Some(next) => cursor = Some(next),
                None => return Ok(()),
            }
        }
    }
}

/// `texts` embedded in one call, one vector of the model's dimension per text.
async fn embed_checked(
    embedder: &dyn Embedder,
    texts: &[String],
    model: &EmbeddingModel,
) -> Result<Vec<Vec<f32>>> {
    let vectors = embedder.embed(texts).await?;
    if vectors.len() != texts.len() {
        return Err(MemoryError::invalid(
            "embedder output",
            format!("{} vectors for {} texts", vectors.len(), texts.len()),
        ));
    }
    if let Some(v) = vectors.iter().find(|v| v.len() != model.dimension) {
        return Err(MemoryError::DimensionMismatch {
            expected: model.dimension,
            found: v.len(),
        });
    }
    Ok(vectors)
}
