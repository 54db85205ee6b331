//! [`MemoryConfig`]: the budgets of conversation and working memory, from code or from
//! the environment.

use agentmemory_core::buffer::DEFAULT_MAX_TOKENS;
use agentmemory_core::error::{MemoryError, Result};
use agentmemory_core::session::SessionConfig;

/// `AGENTMEM_WINDOW_TOKENS`: token budget of a conversation's history (the whole prompt
/// of a session).
pub const WINDOW_TOKENS_ENV: &str = "AGENTMEM_WINDOW_TOKENS";
/// `AGENTMEM_SUMMARIZE_THRESHOLD`: tokens of history (messages and summary) above which
/// older messages are summarised.
pub const SUMMARIZE_THRESHOLD_ENV: &str = "AGENTMEM_SUMMARIZE_THRESHOLD";
/// `AGENTMEM_SUMMARIZE_TO`: percentage of the threshold a summarisation brings the
/// history down to.
pub const SUMMARIZE_TO_ENV: &str = "AGENTMEM_SUMMARIZE_TO";
/// `AGENTMEM_SUMMARY_TOKENS`: token cap of the running summary.
pub const SUMMARY_TOKENS_ENV: &str = "AGENTMEM_SUMMARY_TOKENS";
/// `AGENTMEM_MEMORY_BLOCK_TOKENS`: token cap of the memory block (facts and episodes).
pub const MEMORY_BLOCK_TOKENS_ENV: &str = "AGENTMEM_MEMORY_BLOCK_TOKENS";
/// `AGENTMEM_WORKING_MEMORY_TOKENS`: token cap of the working-memory block.
pub const WORKING_MEMORY_TOKENS_ENV: &str = "AGENTMEM_WORKING_MEMORY_TOKENS";
/// `AGENTMEM_WORKING_SCOPE`: the scope id of a manager's working memory.
pub const WORKING_SCOPE_ENV: &str = "AGENTMEM_WORKING_SCOPE";
/// `AGENTMEM_MAX_MESSAGE_BYTES`: the largest message taken, in bytes (default 1 MiB).
pub const MAX_MESSAGE_BYTES_ENV: &str = "AGENTMEM_MAX_MESSAGE_BYTES";

/// The working-memory scope of a manager when none is configured.
pub const DEFAULT_WORKING_SCOPE: &str = "default";

/// Every variable [`MemoryConfig::from_env`] reads.
pub const CONFIG_ENV_VARS: [&str; 8] = [
    WINDOW_TOKENS_ENV,
    SUMMARIZE_THRESHOLD_ENV,
    SUMMARIZE_TO_ENV,
    SUMMARY_TOKENS_ENV,
    MEMORY_BLOCK_TOKENS_ENV,
    WORKING_MEMORY_TOKENS_ENV,
    WORKING_SCOPE_ENV,
    MAX_MESSAGE_BYTES_ENV,
];

/// The budgets of a [`MemoryManager`](super::MemoryManager) and of the sessions it builds.
///
/// ```
/// use agentmemory::manager::MemoryConfig;
///
/// let config = MemoryConfig::from_lookup(|name| match name {
///     "AGENTMEM_WINDOW_TOKENS" => Some("32000".into()),
///     "AGENTMEM_SUMMARIZE_THRESHOLD" => Some("3000".into()),
///     _ => None,
/// })?;
/// assert_eq!(config.window_tokens, 32_000);
/// assert_eq!(config.summarize_threshold, Some(3_000));
/// assert_eq!(config.session_config().max_tokens, 32_000);
/// # Ok::<_, agentmemory_core::MemoryError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryConfig {
    /// Token budget of a conversation's history as a model gets it; for a session, of the
    /// whole prompt (default 40,000).
    pub window_tokens: usize,
    /// Summarise when the history (messages and summary) goes over this many tokens
    /// (default `None`: when it no longer fits `window_tokens`). Never above
    /// `window_tokens`.
    pub summarize_threshold: Option<usize>,
    /// A summarisation brings the history down to this percentage of the threshold
    /// (1..=100, default 75), so the next one comes several turns later.
    pub summarize_to: u8,
    /// Token cap of the running summary (default 1,000).
    pub summary_tokens: usize,
    /// Token cap of a session's memory block of facts and episodes (default 500).
    pub memory_block_tokens: usize,
    /// Token cap of the working-memory block in a session's prompt (default 500).
    pub working_memory_tokens: usize,
    /// The scope id of the manager's working memory (default `"default"`).
    pub working_scope: String,
    /// The largest message taken, in bytes of content (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`](agentmemory_core::message::DEFAULT_MAX_MESSAGE_BYTES), 1 MiB): a larger one is refused with
    /// [`MemoryError::PayloadTooLarge`] by [`add_messages`](super::MemoryManager::add_messages)
    /// and by the turns of the sessions built with these budgets, before anything is logged.
    pub max_message_bytes: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        let session = SessionConfig::default();
        Self {
            window_tokens: DEFAULT_MAX_TOKENS,
            summarize_threshold: None,
            summarize_to: session.summarize_to,
            summary_tokens: session.summary_tokens,
            memory_block_tokens: session.memory_block_tokens,
            working_memory_tokens: session.working_memory_tokens,
            working_scope: DEFAULT_WORKING_SCOPE.to_owned(),
            max_message_bytes: session.max_message_bytes,
        }
    }
}

impl MemoryConfig {
    /// The defaults with every variable of [`CONFIG_ENV_VARS`] that is set (and not empty)
    /// applied. A value that is not a number where one is expected, or out of range, is a
    /// [`MemoryError::Environment`] naming the variable.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup` (for tests,
    /// or a configuration source of the application's own).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = |name: &'static str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .map(|v| (name, v))
        };
        let mut config = Self::default();
        if let Some((name, v)) = get(WINDOW_TOKENS_ENV) {
            config.window_tokens = positive(name, &v)?;
        }
        if let Some((name, v)) = get(SUMMARIZE_THRESHOLD_ENV) {
            config.summarize_threshold = Some(positive(name, &v)?);
        }
        if let Some((name, v)) = get(SUMMARIZE_TO_ENV) {
            config.summarize_to = match v.trim_end_matches('%').parse::<u8>() {
                Ok(p) if (1..=100).contains(&p) => p,
                _ => return Err(env_error(name, &v, "must be a percentage in 1..=100")),
            };
        }
        if let Some((name, v)) = get(SUMMARY_TOKENS_ENV) {
            config.summary_tokens = positive(name, &v)?;
        }
        if let Some((name, v)) = get(MEMORY_BLOCK_TOKENS_ENV) {
            config.memory_block_tokens = positive(name, &v)?;
        }
        if let Some((name, v)) = get(WORKING_MEMORY_TOKENS_ENV) {
            config.working_memory_tokens = positive(name, &v)?;
        }
        if let Some((_, v)) = get(WORKING_SCOPE_ENV) {
            config.working_scope = v;
        }
        if let Some((name, v)) = get(MAX_MESSAGE_BYTES_ENV) {
            config.max_message_bytes = match v.replace('_', "").parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(env_error(
                        name,
                        &v,
                        "must be a whole number of bytes, at least 1",
                    ))
                }
            };
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks the budgets fit together: a threshold within the window, a percentage in
    /// 1..=100, a non-empty scope.
    pub fn validate(&self) -> Result<()> {
        if self.window_tokens == 0 {
            return Err(MemoryError::invalid("window_tokens", "must be at least 1"));
        }
        if let Some(threshold) = self.summarize_threshold {
            if threshold == 0 || threshold > self.window_tokens {
                return Err(MemoryError::invalid(
                    "summarize_threshold",
                    format!(
                        "must be within 1..={} (the window), got {threshold}",
                        self.window_tokens
                    ),
                ));
            }
        }
        if !(1..=100).contains(&self.summarize_to) {
            return Err(MemoryError::invalid(
                "summarize_to",
                format!("must be a percentage in 1..=100, got {}", self.summarize_to),
            ));
        }
        if self.working_scope.is_empty() {
            return Err(MemoryError::invalid("working_scope", "must not be empty"));
        }
        if self.max_message_bytes == 0 {
            return Err(MemoryError::invalid(
                "max_message_bytes",
                "must be at least 1",
            ));
        }
        Ok(())
    }

    /// Sets the history's token budget.
    pub fn with_window_tokens(mut self, tokens: usize) -> Self {
        self.window_tokens = tokens;
        self
    }

    /// Sets the absolute summarisation threshold, in tokens.
    pub fn with_summarize_threshold(mut self, tokens: usize) -> Self {
        self.summarize_threshold = Some(tokens);
        self
    }

    /// Sets the summary's token cap.
    pub fn with_summary_tokens(mut self, tokens: usize) -> Self {
        self.summary_tokens = tokens;
        self
    }

    /// Sets the percentage of the threshold a summarisation brings the history down to.
    pub fn with_summarize_to(mut self, percent: u8) -> Self {
        self.summarize_to = percent;
        self
    }

    /// Sets the memory block's token cap.
    pub fn with_memory_block_tokens(mut self, tokens: usize) -> Self {
        self.memory_block_tokens = tokens;
        self
    }

    /// Sets the working-memory block's token cap.
    pub fn with_working_memory_tokens(mut self, tokens: usize) -> Self {
        self.working_memory_tokens = tokens;
        self
    }

    /// Sets the working-memory scope.
    pub fn with_working_scope(mut self, scope: impl Into<String>) -> Self {
        self.working_scope = scope.into();
        self
    }

    /// Sets the largest message taken, in bytes (see
    /// [`max_message_bytes`](Self::max_message_bytes)).
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The tokens of history above which older messages are summarised.
    pub fn summarize_trigger(&self) -> usize {
        self.summarize_threshold
            .map_or(self.window_tokens, |t| t.min(self.window_tokens))
    }

    /// The session configuration with these budgets and message size limit (extraction
    /// and episode settings at their defaults).
    pub fn session_config(&self) -> SessionConfig {
        let mut session = SessionConfig::default()
            .with_max_tokens(self.window_tokens)
            .with_summarize_to(self.summarize_to)
            .with_summary_tokens(self.summary_tokens)
            .with_memory_block_tokens(self.memory_block_tokens)
            .with_working_memory_tokens(self.working_memory_tokens)
            .with_max_message_bytes(self.max_message_bytes);
        session.summarize_threshold = self.summarize_threshold;
        session
    }
}

fn positive(name: &'static str, value: &str) -> Result<usize> {
    match value.replace('_', "").parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(env_error(
            name,
            value,
            "must be a whole number of tokens, at least 1",
        )),
    }
}

fn env_error(variable: &'static str, value: &str, reason: &str) -> MemoryError {
    MemoryError::Environment {
        variable,
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<MemoryConfig> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        MemoryConfig::from_lookup(|name| map.get(name).cloned())
    }

    fn refused(vars: &[(&str, &str)]) -> &'static str {
        match with(vars) {
            Err(MemoryError::Environment { variable, .. }) => variable,
            other => panic!("{vars:?} gave {other:?}"),
        }
    }

    #[test]
    fn nothing_set_is_the_defaults_and_empty_is_unset() {
        assert_eq!(with(&[]).unwrap(), MemoryConfig::default());
        let blank: Vec<(&str, &str)> = CONFIG_ENV_VARS.iter().map(|v| (*v, " ")).collect();
        assert_eq!(with(&blank).unwrap(), MemoryConfig::default());
    }

    #[test]
    fn window_tokens() {
        let c = with(&[(WINDOW_TOKENS_ENV, "128_000")]).unwrap();
        assert_eq!(c.window_tokens, 128_000);
        assert_eq!(c.session_config().max_tokens, 128_000);
        assert_eq!(refused(&[(WINDOW_TOKENS_ENV, "0")]), WINDOW_TOKENS_ENV);
        assert_eq!(refused(&[(WINDOW_TOKENS_ENV, "lots")]), WINDOW_TOKENS_ENV);
    }

    #[test]
    fn summarize_threshold() {
        let c = with(&[(SUMMARIZE_THRESHOLD_ENV, "3000")]).unwrap();
        assert_eq!(c.summarize_threshold, Some(3_000));
        assert_eq!(c.summarize_trigger(), 3_000);
        assert_eq!(c.session_config().summarize_threshold, Some(3_000));
        assert_eq!(
            refused(&[(SUMMARIZE_THRESHOLD_ENV, "-5")]),
            SUMMARIZE_THRESHOLD_ENV
        );
        // above the window: a typed error naming the field
        let err = with(&[(WINDOW_TOKENS_ENV, "100"), (SUMMARIZE_THRESHOLD_ENV, "200")])
            .expect_err("over the window");
        assert!(
            matches!(
                err,
                MemoryError::InvalidArgument {
                    what: "summarize_threshold",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn summarize_to() {
        assert_eq!(with(&[(SUMMARIZE_TO_ENV, "50")]).unwrap().summarize_to, 50);
        assert_eq!(with(&[(SUMMARIZE_TO_ENV, "60%")]).unwrap().summarize_to, 60);
        assert_eq!(refused(&[(SUMMARIZE_TO_ENV, "0")]), SUMMARIZE_TO_ENV);
        assert_eq!(refused(&[(SUMMARIZE_TO_ENV, "101")]), SUMMARIZE_TO_ENV);
    }

    #[test]
    fn summary_tokens() {
        let c = with(&[(SUMMARY_TOKENS_ENV, "250")]).unwrap();
        assert_eq!(c.summary_tokens, 250);
        assert_eq!(c.session_config().summary_tokens, 250);
        assert_eq!(refused(&[(SUMMARY_TOKENS_ENV, "1.5")]), SUMMARY_TOKENS_ENV);
    }

    #[test]
    fn memory_block_tokens() {
        let c = with(&[(MEMORY_BLOCK_TOKENS_ENV, "800")]).unwrap();
        assert_eq!(c.session_config().memory_block_tokens, 800);
        assert_eq!(
            refused(&[(MEMORY_BLOCK_TOKENS_ENV, "x")]),
            MEMORY_BLOCK_TOKENS_ENV
        );
    }

    #[test]
    fn working_memory_tokens() {
        let c = with(&[(WORKING_MEMORY_TOKENS_ENV, "64")]).unwrap();
        assert_eq!(c.session_config().working_memory_tokens, 64);
        assert_eq!(
            refused(&[(WORKING_MEMORY_TOKENS_ENV, "0")]),
            WORKING_MEMORY_TOKENS_ENV
        );
    }

    #[test]
    fn max_message_bytes() {
        use agentmemory_core::message::DEFAULT_MAX_MESSAGE_BYTES;
        assert_eq!(
            with(&[]).unwrap().max_message_bytes,
            DEFAULT_MAX_MESSAGE_BYTES
        );
        let c = with(&[(MAX_MESSAGE_BYTES_ENV, "2_000_000")]).unwrap();
        assert_eq!(c.max_message_bytes, 2_000_000);
        assert_eq!(c.session_config().max_message_bytes, 2_000_000);
        assert_eq!(
            refused(&[(MAX_MESSAGE_BYTES_ENV, "0")]),
            MAX_MESSAGE_BYTES_ENV
        );
        assert_eq!(
            refused(&[(MAX_MESSAGE_BYTES_ENV, "1MB")]),
            MAX_MESSAGE_BYTES_ENV
        );
    }

    #[test]
    fn working_scope() {
        let c = with(&[(WORKING_SCOPE_ENV, " run-7 ")]).unwrap();
        assert_eq!(c.working_scope, "run-7");
    }

    #[test]
    fn the_real_environment_is_read() {
        // A variable no other test sets, read through std::env.
        let c = MemoryConfig::from_env().unwrap();
        assert_eq!(
            c.window_tokens,
            std::env::var(WINDOW_TOKENS_ENV)
                .ok()
                .and_then(|v| v.trim().replace('_', "").parse().ok())
                .unwrap_or(DEFAULT_MAX_TOKENS)
        );
    }
}
