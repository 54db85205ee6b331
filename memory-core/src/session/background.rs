//! Extraction off the hot path: one worker task per session, fed through a bounded
//! queue. The session waits for it with [`Session::flush`](super::Session::flush);
//! dropping the session lets the worker finish what is queued.

use std::sync::Arc;

use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::error::{MemoryError, Result};
use crate::facts::FactChange;
use crate::message::Message;

use super::commit::Extraction;

/// The outcome of one deferred extraction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DeferredExtraction {
    /// The id of the user message the facts were extracted from.
    pub message_id: String,
    /// What reconciliation changed (ignored candidates included).
    pub fact_changes: Vec<FactChange>,
    /// Why extraction or reconciliation failed, if it did (changes made before the
    /// failure are in `fact_changes` and in the log).
    pub error: Option<String>,
}

/// One turn to extract from.
pub(super) struct Job {
    pub(super) user: Message,
    pub(super) reply: Message,
}

enum Work {
    Extract(Box<Job>),
    Flush(oneshot::Sender<()>),
}

/// The session's handle on its worker.
pub(super) struct Worker {
    queue: mpsc::Sender<Work>,
    done: Arc<Mutex<Vec<DeferredExtraction>>>,
}

impl Worker {
    /// Spawns the worker on the current tokio runtime, with room for `capacity` queued
    /// turns.
    pub(super) fn spawn(extraction: Extraction, capacity: usize) -> Result<Self> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            MemoryError::invalid(
                "extraction mode",
                "background extraction needs a tokio runtime; build the session inside one",
            )
        })?;
        let (queue, inbox) = mpsc::channel(capacity.max(1));
        let done = Arc::new(Mutex::new(Vec::new()));
        handle.spawn(run(extraction, inbox, Arc::clone(&done)));
        Ok(Self { queue, done })
    }

    /// Queues a turn, waiting for room when the queue is full. Gives the job back when
    /// the worker is gone.
    pub(super) async fn submit(&self, job: Box<Job>) -> std::result::Result<(), Box<Job>> {
        match self.queue.reserve().await {
            Ok(permit) => {
                permit.send(Work::Extract(job));
                Ok(())
            }
            Err(_) => Err(job),
        }
    }

    /// Waits until every queued turn is extracted; returns the outcomes since the last
    /// flush.
    pub(super) async fn flush(&self) -> Result<Vec<DeferredExtraction>> {
        let (tx, rx) = oneshot::channel();
        let gone =
            || MemoryError::Extraction("the background extraction worker stopped".to_owned());
        self.queue.send(Work::Flush(tx)).await.map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?;
        Ok(std::mem::take(&mut *self.done.lock()))
    }
}

/// Reports queued turns that were never extracted (the runtime shut down first).
struct Leftovers(mpsc::Receiver<Work>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        self.0.close();
        let mut lost = Vec::new();
        while let Ok(work) = self.0.try_recv() {
            if let Work::Extract(job) = work {
                lost.push(job.user.id.to_string());
            }
        }
        if !lost.is_empty() {
            tracing::error!(
                count = lost.len(),
                messages = ?lost,
                "background extraction stopped before these turns were extracted"
            );
        }
    }
}

async fn run(
    extraction: Extraction,
    inbox: mpsc::Receiver<Work>,
    done: Arc<Mutex<Vec<DeferredExtraction>>>,
) {
    let mut inbox = Leftovers(inbox);
    // Ends when the session (the only sender) is dropped and the queue is drained.
    while let Some(work) = inbox.0.recv().await {
        match work {
            Work::Extract(job) => {
                let (fact_changes, error) = extraction.run(&job.user, &job.reply).await;
                done.lock().push(DeferredExtraction {
                    message_id: job.user.id.to_string(),
                    fact_changes,
                    error,
                });
            }
            Work::Flush(reply) => {
                let _ = reply.send(());
            }
        }
    }
}
