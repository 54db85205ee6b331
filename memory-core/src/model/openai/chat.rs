//! [`OpenAiChatModel`]: `ChatModel` over `POST {base}/chat/completions`.

use async_trait::async_trait;

use super::transport::Transport;
use super::wire::{ChatBody, ChatResponse};
use super::OpenAiConfig;
use crate::error::{MemoryError, ModelErrorKind, Result};
use crate::model::{ChatModel, ChatRequest, Completion};

/// A chat model served by any OpenAI-compatible API.
///
/// The system prompt is sent as the first `system` message, then the window: roles map
/// one to one, assistant tool calls become OpenAI `tool_calls` (arguments as a JSON
/// string), tool results are `role: "tool"` messages with their `tool_call_id`, and user
/// content blocks become content parts (`text`, `image_url`). The reported usage is
/// copied into [`Completion::usage`].
///
/// ```no_run
/// # async fn demo() -> agentmemory_core::Result<()> {
/// use std::sync::Arc;
/// use agentmemory_core::model::openai::{OpenAiChatModel, OpenAiConfig};
/// use agentmemory_core::Container;
///
/// let model = OpenAiChatModel::new(OpenAiConfig::from_env())?;
/// let container = Container::new();
/// container.register_model("gpt-4o-mini", Arc::new(model));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAiChatModel {
    transport: Transport,
}

impl std::fmt::Debug for OpenAiChatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChatModel")
            .field("config", self.transport.config())
            .finish()
    }
}

impl OpenAiChatModel {
    /// A chat model for `config`; fails on a base URL that is not `http(s)://`, a zero
    /// timeout, or a key or organisation that cannot go in a header.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        Ok(Self {
            transport: Transport::new(config)?,
        })
    }

    /// A chat model configured from the environment (see [`OpenAiConfig::from_env`]).
    pub fn from_env() -> Result<Self> {
        Self::new(OpenAiConfig::from_env())
    }

    /// Its configuration.
    pub fn config(&self) -> &OpenAiConfig {
        self.transport.config()
    }
}

#[async_trait]
impl ChatModel for OpenAiChatModel {
    async fn complete(&self, request: ChatRequest) -> Result<Completion> {
        let model = match self.config().model.as_str() {
            "" => request.model.clone(),
            configured => configured.to_owned(),
        };
        let body = ChatBody::new(model.clone(), request);
        let response: ChatResponse = self
            .transport
            .post("chat/completions", &model, &body)
            .await?;
        let usage = response.usage.map(Into::into);
        let choice = response.choices.into_iter().next().ok_or_else(|| {
            MemoryError::model(
                model.clone(),
                ModelErrorKind::BadResponse,
                "the answer has no choices",
            )
        })?;
        Ok(Completion {
            message: choice.message.into_message(),
            usage,
        })
    }
}
