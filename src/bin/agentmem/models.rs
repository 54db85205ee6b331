//! The one place that chooses the chat model and the fact extractor.
//!
//! Offline by default: the [`OfflineModel`] and the [`RuleExtractor`]. Built with the
//! `openai` feature and with `OPENAI_BASE_URL` set, both go through the configured
//! OpenAI-compatible server (`OPENAI_API_KEY`, `AGENTMEM_MODEL`): replies from its chat
//! model, facts from an [`LlmExtractor`](agentmemory::extract::LlmExtractor) on it.

use std::sync::Arc;

use agentmemory::model::{ChatModel, OfflineModel};
use agentmemory::{FactExtractor, MemoryError, RuleExtractor};

/// The name the chat agent asks its model by.
pub const CHAT_MODEL: &str = "agentmem-cli";

/// The configured remote model, when there is one.
#[cfg(feature = "openai")]
fn remote() -> Result<Option<Arc<dyn ChatModel>>, MemoryError> {
    match std::env::var("OPENAI_BASE_URL") {
        Ok(url) if !url.trim().is_empty() => Ok(Some(Arc::new(
            agentmemory::model::openai::OpenAiChatModel::from_env()?,
        ))),
        _ => Ok(None),
    }
}

#[cfg(not(feature = "openai"))]
fn remote() -> Result<Option<Arc<dyn ChatModel>>, MemoryError> {
    Ok(None)
}

/// The chat model `agentmem chat` talks to.
pub fn chat_model() -> Result<Arc<dyn ChatModel>, MemoryError> {
    Ok(remote()?.unwrap_or_else(|| Arc::new(OfflineModel::new())))
}

/// The fact extractor of `extract`, `facts add` and `chat`.
pub fn extractor() -> Result<Arc<dyn FactExtractor>, MemoryError> {
    Ok(match remote()? {
        Some(model) => Arc::new(agentmemory::extract::LlmExtractor::new(model)),
        None => Arc::new(RuleExtractor::new()),
    })
}
