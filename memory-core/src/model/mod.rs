//! Chat models: what a [`Session`](crate::Session) calls to produce a reply.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::message::Message;

mod stream;
mod tool;

pub use stream::{ChatStream, StreamEvent};
pub use tool::ToolDefinition;

/// Everything a chat model is given for one completion.
///
/// Built with [`ChatRequest::new`] and the `with_*` methods (the struct grows, so it
/// cannot be built literally outside this crate):
///
/// ```
/// use agentmemory_core::model::{ChatRequest, ToolDefinition};
/// use agentmemory_core::Message;
///
/// let request = ChatRequest::new("gpt-4o-mini", "Be brief.", vec![Message::user("hi").into()])
///     .with_temperature(0.2)
///     .with_tools(vec![ToolDefinition::new("clock", "The current time", serde_json::json!({"type": "object"}))]);
/// assert_eq!(request.tools.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// The tools the model may call (empty: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
}

impl ChatRequest {
    /// A request for `model` with a system prompt and a window; no tools, provider
    /// defaults for sampling.
    pub fn new(
        model: impl Into<String>,
        system: impl Into<String>,
        messages: Vec<Arc<Message>>,
    ) -> Self {
        Self {
            model: model.into(),
            system: system.into(),
            messages,
            temperature: None,
            max_tokens: None,
            tools: Vec::new(),
        }
    }

    /// Sets the sampling temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the completion length limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the tools the model may call.
    pub fn with_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.tools = tools;
        self
    }
}

/// Token usage a provider reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens in the request.
    pub prompt_tokens: u32,
    /// Tokens in the reply.
    pub completion_tokens: u32,
}

impl Usage {
    /// The tokens of a request and of its reply.
    pub fn new(prompt_tokens: u32, completion_tokens: u32) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
        }
    }
}

impl Completion {
    /// A completion without usage figures.
    pub fn new(message: Message) -> Self {
        Self {
            message,
            usage: None,
        }
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Completion {
    /// The assistant message (text and/or tool calls).
    pub message: Message,
    /// Usage, when the provider reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A chat-completion model.
///
/// Only [`complete`](Self::complete) is required. [`stream`](Self::stream) yields the
/// reply as it is produced; its default runs `complete` and yields the whole text as
/// one delta, so every model can be streamed.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Produces the assistant's next message.
    async fn complete(&self, request: ChatRequest) -> Result<Completion>;

    /// Produces the assistant's next message as a stream of [`StreamEvent`]s: text
    /// deltas, then exactly one [`StreamEvent::Done`] with the complete message.
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream> {
        let completion = self.complete(request).await?;
        Ok(stream::from_completion(completion))
    }

    /// Whether this is a language model that can do language work such as fact
    /// extraction (`true` by default). The [`OfflineModel`] answers `false`: a session
    /// whose agent runs on it extracts facts with the rule extractor, not with the model.
    /// Wrappers forward their inner model's answer.
    fn is_language_model(&self) -> bool {
        true
    }
}

mod offline;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub mod openai;
mod recording;

pub use offline::OfflineModel;
pub use recording::RecordingModel;
