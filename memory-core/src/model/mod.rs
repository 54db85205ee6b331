//! Chat models: what a [`Session`](crate::Session) calls to produce a reply.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::message::Message;

/// Everything a chat model is given for one completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model name.
    pub model: String,
    /// The full system prompt (agent prompt + memory block + summary).
    pub system: String,
    /// The conversation window, oldest first. Shared with the session's buffer: building
    /// a request never copies message text. Build one from owned messages with
    /// `Arc::new(message)` or `message.into()`.
    pub messages: Vec<Arc<Message>>,
    /// Sampling temperature, when the caller cares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Completion length limit, when the caller cares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// Token usage a provider reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the request.
    pub prompt_tokens: u32,
    /// Tokens in the reply.
    pub completion_tokens: u32,
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The assistant message (text and/or tool calls).
    pub message: Message,
    /// Usage, when the provider reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A chat-completion model.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Produces the assistant's next message.
    async fn complete(&self, request: ChatRequest) -> Result<Completion>;
}

mod offline;
#[cfg(feature = "openai")]
pub mod openai;
mod recording;

pub use offline::OfflineModel;
pub use recording::RecordingModel;
