//! [`OpenAiEmbedder`]: `Embedder` over `POST {base}/embeddings`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::transport::Transport;
use super::OpenAiConfig;
use crate::error::{MemoryError, ModelErrorKind, Result};
use crate::vector::Embedder;

/// Embeddings from any OpenAI-compatible API (`text-embedding-3-small`,
/// `nomic-embed-text` on Ollama, ...). `config.model` names the embedding model.
///
/// [`dimensions`](Embedder::dimensions) is the configured dimension, else the one the
/// server answered with first; every later answer must match it.
///
/// ```no_run
/// # async fn demo() -> agentmemory_core::Result<()> {
/// use agentmemory_core::model::openai::{OpenAiConfig, OpenAiEmbedder};
/// use agentmemory_core::Embedder;
///
/// let config = OpenAiConfig::new("https://api.openai.com/v1", "text-embedding-3-small")
///     .with_api_key(std::env::var("OPENAI_API_KEY").unwrap_or_default());
/// let embedder = OpenAiEmbedder::new(config)?.with_dimensions(256);
/// let vectors = embedder.embed(&["hello".to_owned()]).await?;
/// assert_eq!(vectors[0].len(), 256);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAiEmbedder {
    transport: Transport,
    requested: Option<usize>,
    /// The dimension seen so far (0 = none yet).
    seen: Arc<AtomicUsize>,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("config", self.transport.config())
            .field("dimensions", &self.dimensions())
            .finish()
    }
}

#[derive(Serialize)]
struct EmbeddingBody<'a> {
    model: &'a str,
    input: &'a [String],
    encoding_format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<usize>,
}

#[derive(Deserialize)]
struct EmbeddingResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    /// An embedder for `config` (see [`OpenAiChatModel::new`](super::OpenAiChatModel::new)
    /// for what is checked). `config.model` must not be empty.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(MemoryError::invalid(
                "embedding model",
                "name the embedding model in OpenAiConfig::model",
            ));
        }
        Ok(Self {
            transport: Transport::new(config)?,
            requested: None,
            seen: Arc::default(),
        })
    }

    /// Asks the server for vectors of `dimensions` (the `dimensions` request field,
    /// supported by `text-embedding-3-*`).
    pub fn with_dimensions(mut self, dimensions: usize) -> Self {
        self.requested = Some(dimensions);
        self
    }

    /// An answer that does not fit the request.
    fn error(&self, message: String) -> MemoryError {
        MemoryError::model(
            self.transport.config().model.clone(),
            ModelErrorKind::BadResponse,
            message,
        )
    }
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let model = self.transport.config().model.as_str();
        let body = EmbeddingBody {
            model,
            input: texts,
            encoding_format: "float",
            dimensions: self.requested,
        };
        let response: EmbeddingResponse = self.transport.post("embeddings", model, &body).await?;
        if response.data.len() != texts.len() {
            return Err(self.error(format!(
                "asked for {} embeddings, got {}",
                texts.len(),
                response.data.len()
            )));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in response.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            match slots.get_mut(index) {
                Some(slot @ None) => *slot = Some(item.embedding),
                _ => {
                    return Err(self.error(format!(
                        "embedding index {index} is out of range or repeated"
                    )))
                }
            }
        }
        let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
        for v in &vectors {
            if v.is_empty() {
                return Err(self.error("the server returned an empty embedding".to_owned()));
            }
            let expected = self.dimensions().unwrap_or(v.len());
            if v.len() != expected {
                return Err(MemoryError::DimensionMismatch {
                    expected,
                    found: v.len(),
                });
            }
            // First answer fixes the dimension; a concurrent first answer of another
            // size is caught by the check above on its next call.
            let _ = self
                .seen
                .compare_exchange(0, v.len(), Ordering::AcqRel, Ordering::Acquire);
        }
        Ok(vectors)
    }

    fn dimensions(&self) -> Option<usize> {
        self.requested
            .or_else(|| Some(self.seen.load(Ordering::Acquire)).filter(|d| *d > 0))
    }

    fn model_name(&self) -> Option<String> {
        Some(self.transport.config().model.clone())
    }
}
