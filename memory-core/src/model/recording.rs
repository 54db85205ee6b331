//! [`RecordingModel`]: a model wrapper that keeps every request, for tests.

use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::{ChatModel, ChatRequest, Completion, OfflineModel};
use crate::error::Result;

/// Wraps a model (the [`OfflineModel`] by default) and records every request it gets,
/// so a test can assert exactly what the model saw.
///
/// ```
/// # tokio_test::block_on(async {
/// use agentmemory_core::model::{ChatModel, ChatRequest, RecordingModel};
///
/// let model = RecordingModel::new();
/// let request = ChatRequest::new("m", "s", vec![]);
/// model.complete(request).await.unwrap();
/// assert_eq!(model.requests()[0].system, "s");
/// # });
/// ```
#[derive(Clone)]
pub struct RecordingModel {
    inner: Arc<dyn ChatModel>,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
}

impl std::fmt::Debug for RecordingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingModel")
            .field("requests", &self.requests.lock().len())
            .finish_non_exhaustive()
    }
}

impl Default for RecordingModel {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordingModel {
    /// Records requests and answers with the [`OfflineModel`].
    pub fn new() -> Self {
        Self::wrapping(Arc::new(OfflineModel::new()))
    }

    /// Records requests and answers with `inner`.
    pub fn wrapping(inner: Arc<dyn ChatModel>) -> Self {
        Self {
            inner,
            requests: Arc::default(),
        }
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().clone()
    }

    /// The most recent request.
    pub fn last_request(&self) -> Option<ChatRequest> {
        self.requests.lock().last().cloned()
    }
}

#[async_trait]
impl ChatModel for RecordingModel {
    async fn complete(&self, request: ChatRequest) -> Result<Completion> {
        self.requests.lock().push(request.clone());
        self.inner.complete(request).await
    }

    fn is_language_model(&self) -> bool {
        self.inner.is_language_model()
    }
}
