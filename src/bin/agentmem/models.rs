//! The one place that chooses the chat model and the fact extractor.
//!
//! Today both are offline: the [`OfflineModel`] and the [`RuleExtractor`]. This is the
//! seam for an LLM provider (the `openai` feature): when a model is configured, these
//! functions return it and the extractor built on it, and every command follows.

use std::sync::Arc;

use agentmem::model::{ChatModel, OfflineModel};
use agentmem::{FactExtractor, RuleExtractor};

/// The name the chat agent asks its model by.
pub const CHAT_MODEL: &str = "agentmem-cli";

/// The chat model `agentmem chat` talks to.
pub fn chat_model() -> Arc<dyn ChatModel> {
    Arc::new(OfflineModel::new())
}

/// The fact extractor of `extract`, `facts add` and `chat`.
pub fn extractor() -> Arc<dyn FactExtractor> {
    Arc::new(RuleExtractor::new())
}
