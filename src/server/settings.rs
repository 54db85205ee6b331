//! [`ServerSettings`]: the reference server's configuration, read from the environment.
//!
//! | variable | default | effect |
//! |---|---|---|
//! | `WINDOW_SIZE` | 20 for sessions with no token window | a message-count window: past it, the oldest messages are folded into the session's `context` until half of it is left. Set, it applies to every session (besides the token window of `model_name` / `context_window_max`); unset, only to sessions whose model is unknown |
//! | `LONG_TERM_MEMORY` | `true` | `false` turns long-term memory off: no promotion, extraction or message indexing, and the long-term routes answer 400 |
//! | `ENABLE_DISCRETE_MEMORY_EXTRACTION` | `true` | `false` turns background extraction from session messages off (every strategy); structured `memories` are still promoted |
//! | `GENERATION_MODEL` | none (offline) | the model that extracts, summarises and runs `custom` prompts, at the OpenAI-compatible server of `OPENAI_BASE_URL` (OpenAI's own when unset) with `OPENAI_API_KEY` |
//! | `OPENAI_BASE_URL` | — | set alone, it configures a model too (`AGENTMEM_MODEL`, else `gpt-4o-mini`) |
//! | `BACKGROUND_CONCURRENCY` | 32 (8 on PostgreSQL in `agentmem serve`) | how many users' background batches (episode and fact writes) run at once; their model calls are limited by `EXTRACTION_CONCURRENCY` besides |
//! | `EXTRACTION_CONCURRENCY` | 4 | how many extraction jobs (model calls) run at once across users; each user's jobs still run one at a time, in order, so one user's slow model call or backlog does not hold another's back |
//! | `EXTRACTION_QUEUE_LIMIT` | 1024 | how many `PUT`s' background work (extraction, indexing of messages) may wait at once; past it, a `PUT` that has work to schedule waits for a place before it is stored (backpressure instead of a queue that grows without bound) |
//! | `EXTRACTION_QUEUE_WAIT_MS` | 10000 | how long such a `PUT` waits for a place; then it is refused with 503 and `Retry-After`, having stored nothing |
//!
//! Without a configured model the server runs offline: agentmem's rule extractor and
//! extractive summariser, and the `custom` strategy is refused (400).

use std::sync::Arc;

use agentmemory_core::model::openai::{OpenAiChatModel, OpenAiConfig, BASE_URL_ENV, MODEL_ENV};
use agentmemory_core::model::ChatModel;

/// The message-count window of sessions whose model is unknown, when `WINDOW_SIZE` is unset.
pub const DEFAULT_WINDOW_SIZE: usize = 20;

/// Environment variable: the message-count window.
pub const WINDOW_SIZE_ENV: &str = "WINDOW_SIZE";
/// Environment variable: long-term memory on or off.
pub const LONG_TERM_MEMORY_ENV: &str = "LONG_TERM_MEMORY";
/// Environment variable: background extraction on or off.
pub const DISCRETE_EXTRACTION_ENV: &str = "ENABLE_DISCRETE_MEMORY_EXTRACTION";
/// Environment variable: the generation model.
pub const GENERATION_MODEL_ENV: &str = "GENERATION_MODEL";
/// Environment variable: how many extraction jobs may wait at once.
pub const EXTRACTION_QUEUE_ENV: &str = "EXTRACTION_QUEUE_LIMIT";
/// How many extraction jobs may wait at once when `EXTRACTION_QUEUE_LIMIT` is unset.
pub const DEFAULT_EXTRACTION_QUEUE: usize = 1024;
/// Environment variable: how long (ms) a `PUT` waits for a place in a full queue.
pub const EXTRACTION_QUEUE_WAIT_ENV: &str = "EXTRACTION_QUEUE_WAIT_MS";
/// How long a `PUT` waits for a place in a full queue when `EXTRACTION_QUEUE_WAIT_MS` is
/// unset: long enough to ride out a burst, short enough that a stalled model turns writes
/// away instead of holding them.
pub const DEFAULT_EXTRACTION_QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Environment variable: how many users' background batches may run at once.
pub const BACKGROUND_CONCURRENCY_ENV: &str = "BACKGROUND_CONCURRENCY";
/// How many users' background batches run at once when `BACKGROUND_CONCURRENCY` is unset:
/// enough for the store writes of many users to overlap (they mostly wait for the store),
/// few enough not to exhaust a connection pool.
pub const DEFAULT_BACKGROUND_CONCURRENCY: usize = 32;
/// How many users' background batches `agentmem serve` runs at once on PostgreSQL when
/// `BACKGROUND_CONCURRENCY` is unset: each holds a pooled connection while it writes, and
/// the pool holds 16 by default (`pool_size`), which the requests need too.
pub const POSTGRES_BACKGROUND_CONCURRENCY: usize = 8;
/// Environment variable: how many extraction jobs may run at once.
pub const EXTRACTION_CONCURRENCY_ENV: &str = "EXTRACTION_CONCURRENCY";
/// How many extraction jobs run at once when `EXTRACTION_CONCURRENCY` is unset: a few
/// model calls side by side, whatever the machine, because a job mostly waits for the
/// model (its cost is the model endpoint's, not this server's CPUs) and a hosted model's
/// rate limit is easier to stay under with a small fixed number.
pub const DEFAULT_EXTRACTION_CONCURRENCY: usize = 4;

/// A variable that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {name}={value:?}: {reason}")]
pub struct SettingsError {
    /// The variable.
    pub name: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The generation model: a chat model and the name requests carry.
#[derive(Clone)]
pub struct GenerationModel {
    /// The model.
    pub model: Arc<dyn ChatModel>,
    /// The name put in each request.
    pub name: String,
}

impl std::fmt::Debug for GenerationModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenerationModel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// How the server extracts, summarises and windows sessions.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// The message-count window, when set explicitly (`WINDOW_SIZE`); sessions with no
    /// token window use [`DEFAULT_WINDOW_SIZE`] otherwise.
    pub window_size: Option<usize>,
    /// Whether long-term memory is on (`LONG_TERM_MEMORY`).
    pub long_term_memory: bool,
    /// Whether messages are extracted in the background (`ENABLE_DISCRETE_MEMORY_EXTRACTION`).
    pub extraction: bool,
    /// The configured model, if any (`GENERATION_MODEL`, `OPENAI_BASE_URL`).
    pub model: Option<GenerationModel>,
    /// How many sessions' extractions may be scheduled and not yet done
    /// (`EXTRACTION_QUEUE_LIMIT`, at least 1). A `PUT` with messages to extract waits for
    /// a place before its session is stored, so a model slower than the traffic slows
    /// the writes down instead of growing memory without bound.
    pub extraction_queue: usize,
    /// How long a `PUT` waits for a place in a full queue before it is refused with 503
    /// (`EXTRACTION_QUEUE_WAIT_MS`; [`DEFAULT_EXTRACTION_QUEUE_WAIT`] by default).
    pub extraction_queue_wait: std::time::Duration,
    /// How many users' background batches run at once (`BACKGROUND_CONCURRENCY`, at least
    /// 1; [`DEFAULT_BACKGROUND_CONCURRENCY`] by default).
    pub background_concurrency: usize,
    /// How many extraction jobs run at once across users (`EXTRACTION_CONCURRENCY`, at
    /// least 1; [`DEFAULT_EXTRACTION_CONCURRENCY`] by default). Each user's jobs run one
    /// at a time, in the order of the `PUT`s.
    pub extraction_concurrency: usize,
}

impl Default for ServerSettings {
    /// Everything on, offline, the default window.
    fn default() -> Self {
        Self {
            window_size: None,
            long_term_memory: true,
            extraction: true,
            model: None,
            extraction_queue: DEFAULT_EXTRACTION_QUEUE,
            extraction_queue_wait: DEFAULT_EXTRACTION_QUEUE_WAIT,
            background_concurrency: DEFAULT_BACKGROUND_CONCURRENCY,
            extraction_concurrency: DEFAULT_EXTRACTION_CONCURRENCY,
        }
    }
}

impl ServerSettings {
    /// Reads `WINDOW_SIZE`, `LONG_TERM_MEMORY`, `ENABLE_DISCRETE_MEMORY_EXTRACTION`,
    /// `EXTRACTION_QUEUE_LIMIT`, `EXTRACTION_QUEUE_WAIT_MS`, `BACKGROUND_CONCURRENCY`,
    /// `EXTRACTION_CONCURRENCY`, `GENERATION_MODEL`, `OPENAI_BASE_URL` and `OPENAI_API_KEY`
    /// from the process environment.
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`. Empty
    /// values count as unset.
    ///
    /// ```
    /// use agentmemory::server::ServerSettings;
    ///
    /// let settings = ServerSettings::from_lookup(|name| match name {
    ///     "WINDOW_SIZE" => Some("50".into()),
    ///     "LONG_TERM_MEMORY" => Some("false".into()),
    ///     _ => None,
    /// })
    /// .unwrap();
    /// assert_eq!(settings.window_size, Some(50));
    /// assert!(!settings.long_term_memory && settings.extraction && settings.model.is_none());
    /// assert!(ServerSettings::from_lookup(|_| Some("lots".into())).is_err());
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let var = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let window_size = match var(WINDOW_SIZE_ENV) {
            None => None,
            Some(value) => match value.parse::<usize>() {
                Ok(n) if n >= 2 => Some(n),
                _ => {
                    return Err(SettingsError {
                        name: WINDOW_SIZE_ENV,
                        value,
                        reason: "must be a whole number of messages, at least 2".into(),
                    })
                }
            },
        };
        let flag = |name: &'static str| match var(name) {
            None => Ok(true),
            Some(value) => parse_bool(&value).ok_or(SettingsError {
                name,
                value,
                reason: "must be true or false (1/0, yes/no, on/off)".into(),
            }),
        };
        let long_term_memory = flag(LONG_TERM_MEMORY_ENV)?;
        let extraction = flag(DISCRETE_EXTRACTION_ENV)?;
        let extraction_queue = match var(EXTRACTION_QUEUE_ENV) {
            None => DEFAULT_EXTRACTION_QUEUE,
            Some(value) => match value.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(SettingsError {
                        name: EXTRACTION_QUEUE_ENV,
                        value,
                        reason: "must be a whole number of jobs, at least 1".into(),
                    })
                }
            },
        };
        let extraction_queue_wait = match var(EXTRACTION_QUEUE_WAIT_ENV) {
            None => DEFAULT_EXTRACTION_QUEUE_WAIT,
            Some(value) => match value.parse::<u64>() {
                Ok(ms) => std::time::Duration::from_millis(ms),
                _ => {
                    return Err(SettingsError {
                        name: EXTRACTION_QUEUE_WAIT_ENV,
                        value,
                        reason: "must be a whole number of milliseconds".into(),
                    })
                }
            },
        };
        let background_concurrency = match var(BACKGROUND_CONCURRENCY_ENV) {
            None => DEFAULT_BACKGROUND_CONCURRENCY,
            Some(value) => match value.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(SettingsError {
                        name: BACKGROUND_CONCURRENCY_ENV,
                        value,
                        reason: "must be a whole number of batches, at least 1".into(),
                    })
                }
            },
        };
        let extraction_concurrency = match var(EXTRACTION_CONCURRENCY_ENV) {
            None => DEFAULT_EXTRACTION_CONCURRENCY,
            Some(value) => match value.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(SettingsError {
                        name: EXTRACTION_CONCURRENCY_ENV,
                        value,
                        reason: "must be a whole number of jobs, at least 1".into(),
                    })
                }
            },
        };
        let generation = var(GENERATION_MODEL_ENV);
        let model = if generation.is_some() || var(BASE_URL_ENV).is_some() {
            let mut config = OpenAiConfig::from_lookup(&lookup);
            let name = generation
                .or_else(|| var(MODEL_ENV))
                .unwrap_or_else(|| config.model.clone());
            config.model = name.clone();
            let base_url = config.base_url.clone();
            let model = OpenAiChatModel::new(config).map_err(|e| SettingsError {
                name: BASE_URL_ENV,
                value: base_url,
                reason: e.to_string(),
            })?;
            Some(GenerationModel {
                model: Arc::new(model),
                name,
            })
        } else {
            None
        };
        Ok(Self {
            window_size,
            long_term_memory,
            extraction,
            model,
            extraction_queue,
            extraction_queue_wait,
            background_concurrency,
            extraction_concurrency,
        })
    }

    /// These settings with `model` as the generation model (`name` in its requests).
    pub fn with_model(mut self, model: Arc<dyn ChatModel>, name: impl Into<String>) -> Self {
        self.model = Some(GenerationModel {
            model,
            name: name.into(),
        });
        self
    }
}

fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "t" | "y" => Some(true),
        "0" | "false" | "no" | "off" | "f" | "n" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<ServerSettings, SettingsError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ServerSettings::from_lookup(move |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn nothing_set_is_everything_on_and_offline() {
        let s = read(&[]).unwrap();
        assert_eq!(s.window_size, None);
        assert!(s.long_term_memory && s.extraction && s.model.is_none());
        assert_eq!(s.extraction_queue, DEFAULT_EXTRACTION_QUEUE);
        assert_eq!(s.extraction_queue_wait, DEFAULT_EXTRACTION_QUEUE_WAIT);
        assert_eq!(s.extraction_concurrency, DEFAULT_EXTRACTION_CONCURRENCY);
    }

    #[test]
    fn each_variable_is_read_and_bad_values_name_the_variable() {
        assert_eq!(read(&[("WINDOW_SIZE", "8")]).unwrap().window_size, Some(8));
        let err = read(&[("WINDOW_SIZE", "1")]).unwrap_err();
        assert_eq!(err.name, "WINDOW_SIZE");
        assert!(
            !read(&[("LONG_TERM_MEMORY", "off")])
                .unwrap()
                .long_term_memory
        );
        assert!(
            !read(&[("ENABLE_DISCRETE_MEMORY_EXTRACTION", "0")])
                .unwrap()
                .extraction
        );
        let err = read(&[("ENABLE_DISCRETE_MEMORY_EXTRACTION", "maybe")]).unwrap_err();
        assert!(
            err.to_string()
                .contains("ENABLE_DISCRETE_MEMORY_EXTRACTION"),
            "{err}"
        );
        let s = read(&[
            ("GENERATION_MODEL", "qwen2.5"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ])
        .unwrap();
        assert_eq!(s.model.unwrap().name, "qwen2.5");
        let s = read(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]).unwrap();
        assert_eq!(s.model.unwrap().name, "gpt-4o-mini");
        let err = read(&[("GENERATION_MODEL", "m"), ("OPENAI_BASE_URL", "ftp://x")]).unwrap_err();
        assert_eq!(err.name, "OPENAI_BASE_URL");
        assert_eq!(
            read(&[("EXTRACTION_QUEUE_LIMIT", "3")])
                .unwrap()
                .extraction_queue,
            3
        );
        for bad in ["0", "-1", "many"] {
            let err = read(&[("EXTRACTION_QUEUE_LIMIT", bad)]).unwrap_err();
            assert_eq!(err.name, "EXTRACTION_QUEUE_LIMIT", "{bad}");
            let err = read(&[("EXTRACTION_CONCURRENCY", bad)]).unwrap_err();
            assert_eq!(err.name, "EXTRACTION_CONCURRENCY", "{bad}");
        }
        assert_eq!(
            read(&[("EXTRACTION_QUEUE_WAIT_MS", "250")])
                .unwrap()
                .extraction_queue_wait,
            std::time::Duration::from_millis(250)
        );
        assert_eq!(
            read(&[("BACKGROUND_CONCURRENCY", "8")])
                .unwrap()
                .background_concurrency,
            8
        );
        let err = read(&[("BACKGROUND_CONCURRENCY", "0")]).unwrap_err();
        assert_eq!(err.name, "BACKGROUND_CONCURRENCY");
        let err = read(&[("EXTRACTION_QUEUE_WAIT_MS", "soon")]).unwrap_err();
        assert_eq!(err.name, "EXTRACTION_QUEUE_WAIT_MS");
        assert_eq!(
            read(&[("EXTRACTION_CONCURRENCY", "16")])
                .unwrap()
                .extraction_concurrency,
            16
        );
    }
}
