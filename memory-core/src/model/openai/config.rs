//! [`OpenAiConfig`]: where an OpenAI-compatible server is and how to talk to it.

use std::fmt;
use std::time::Duration;

use crate::error::{MemoryError, Result};

/// Environment variable holding the API's base URL.
pub const BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// Environment variable holding the API key.
pub const API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Environment variable holding the organisation id.
pub const ORGANIZATION_ENV: &str = "OPENAI_ORGANIZATION";
/// Environment variable holding the model name.
pub const MODEL_ENV: &str = "AGENTMEM_MODEL";

/// The base URL used when none is given: OpenAI's own API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used when `AGENTMEM_MODEL` is not set.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// How to reach an OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp, ...).
///
/// The API key is never printed: `Debug` shows `Some("<redacted>")` in its place.
///
/// ```
/// use std::time::Duration;
/// use agentmemory_core::model::openai::OpenAiConfig;
///
/// let config = OpenAiConfig::new("http://localhost:11434/v1", "llama3.2")
///     .with_api_key("sk-secret")
///     .with_timeout(Duration::from_secs(30));
/// assert_eq!(config.base_url, "http://localhost:11434/v1");
/// assert!(!format!("{config:?}").contains("sk-secret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`;
    /// `/chat/completions` and `/embeddings` are appended to it.
    pub base_url: String,
    /// Sent as `Authorization: Bearer <key>` when set (local servers often need none).
    pub api_key: Option<String>,
    /// The model id sent to the server. When empty, the chat model sends the
    /// `ChatRequest.model` it is given instead.
    pub model: String,
    /// Limit on one HTTP attempt, from connecting to reading the whole body.
    pub timeout: Duration,
    /// Sent as `OpenAI-Organization` when set.
    pub organization: Option<String>,
    /// How many times a request is retried after a 429, a 5xx or a connection error.
    pub max_retries: u32,
    /// The first retry's delay when the server sends no `Retry-After`; doubled for each
    /// further retry (plus up to 50% random jitter), capped at 30 s.
    pub initial_backoff: Duration,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("organization", &self.organization)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .finish()
    }
}

impl OpenAiConfig {
    /// A configuration for `model` at `base_url`, with no key, a 60 s timeout and
    /// 3 retries starting at 500 ms.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: Duration::from_secs(60),
            organization: None,
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
        }
    }

    /// Reads `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]), `OPENAI_API_KEY`,
    /// `AGENTMEM_MODEL` (default [`DEFAULT_MODEL`]) and `OPENAI_ORGANIZATION`.
    /// Empty variables count as unset.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`.
    ///
    /// ```
    /// use agentmemory_core::model::openai::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_lookup(|name| match name {
    ///     "OPENAI_BASE_URL" => Some("http://127.0.0.1:8080/v1".to_owned()),
    ///     "AGENTMEM_MODEL" => Some("qwen2.5".to_owned()),
    ///     _ => None,
    /// });
    /// assert_eq!(config.model, "qwen2.5");
    /// assert_eq!(config.api_key, None);
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let mut config = Self::new(
            var(BASE_URL_ENV).unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            var(MODEL_ENV).unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
        );
        config.api_key = var(API_KEY_ENV);
        config.organization = var(ORGANIZATION_ENV);
        config
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets the organisation id.
    pub fn with_organization(mut self, organization: impl Into<String>) -> Self {
        self.organization = Some(organization.into());
        self
    }

    /// Sets the per-attempt timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many times a failed request is retried.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first retry's delay.
    pub fn with_initial_backoff(mut self, delay: Duration) -> Self {
        self.initial_backoff = delay;
        self
    }

    /// Checks the configuration: an `http(s)://` base URL and a non-zero timeout.
    pub(super) fn validate(&self) -> Result<()> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(MemoryError::invalid(
                "OpenAI base URL",
                format!("must start with http:// or https://, got `{url}`"),
            ));
        }
        if self.timeout.is_zero() {
            return Err(MemoryError::invalid("OpenAI timeout", "must be above zero"));
        }
        Ok(())
    }

    /// `base_url` joined with `path` (one slash between them).
    pub(super) fn endpoint(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim().trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}
