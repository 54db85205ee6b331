//! An OpenAI-compatible provider (feature `openai`): chat completions and embeddings
//! over HTTP, for OpenAI itself and for servers that speak its API (Ollama, vLLM,
//! llama.cpp's server, LiteLLM, ...).
//!
//! Configure it from the environment ([`OpenAiConfig::from_env`]: `OPENAI_BASE_URL`,
//! `OPENAI_API_KEY`, `AGENTMEM_MODEL`, `OPENAI_ORGANIZATION`) or in code. Requests that
//! fail with HTTP 429 or 5xx, or cannot connect, are retried with exponential backoff
//! and jitter, honouring `Retry-After`; other errors, and timeouts, fail at once as
//! [`MemoryError::Model`](crate::MemoryError::Model), typed by
//! [`ModelErrorKind`](crate::error::ModelErrorKind) (rate limited, authentication,
//! timeout, unavailable, request refused, bad response) so callers can tell what
//! [`is_retryable`](crate::MemoryError::is_retryable).

mod chat;
mod config;
mod embeddings;
mod transport;
mod wire;

pub use chat::OpenAiChatModel;
pub use config::{
    OpenAiConfig, API_KEY_ENV, BASE_URL_ENV, DEFAULT_BASE_URL, DEFAULT_MODEL, MODEL_ENV,
    ORGANIZATION_ENV,
};
pub use embeddings::OpenAiEmbedder;
