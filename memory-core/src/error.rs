//! One error type for the whole of agentmem.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Shorthand for `Result<T, MemoryError>`.
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// A boxed error from a backend (SQLite, Redis, HTTP, ...), kept as the `source` of a [`MemoryError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in agentmem, with enough context to act on it:
/// which store, which operation, which key or token.
///
/// An error's message never repeats its [`source`](std::error::Error::source) (the
/// backend's, the parser's or the HTTP client's error): print [`chain`](Self::chain) (or
/// walk the sources, as `anyhow` and `eyre` do) for the whole story.
///
/// ```
/// use agentmemory_core::MemoryError;
///
/// let err = MemoryError::invalid("importance", "must be within 0.0..=1.0, got 1.5");
/// assert_eq!(err.to_string(), "invalid importance: must be within 0.0..=1.0, got 1.5");
///
/// let io = std::io::Error::other("disk full");
/// let err = MemoryError::store("sqlite", "append events", io);
/// assert_eq!(err.to_string(), "sqlite store failed to append events");
/// assert_eq!(err.chain().to_string(), "sqlite store failed to append events: disk full");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// An argument was outside what the operation accepts.
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// The argument or field at fault.
        what: &'static str,
        /// Why it was refused.
        reason: String,
    },

    /// Serialized data (a snapshot, an export, a stored record) could not be read.
    #[error("corrupt {what}")]
    Corrupt {
        /// What was being read, e.g. `"short-term memory snapshot"` or a file path.
        what: String,
        /// The underlying parse error.
        #[source]
        source: BoxError,
    },

    /// Serialized data carries a format version this build does not know.
    #[error("unsupported {what} version {found} (this build reads up to version {supported})")]
    UnsupportedVersion {
        /// What was being read.
        what: &'static str,
        /// The version found in the data.
        found: u32,
        /// The newest version this build understands.
        supported: u32,
    },

    /// A record that was asked for does not exist.
    #[error("{kind} `{id}` not found")]
    NotFound {
        /// The kind of record (`"fact"`, `"conversation"`, ...).
        kind: &'static str,
        /// Its id.
        id: String,
    },

    /// The dependency-injection container has no provider under this token.
    #[error("no {type_name} is registered under the token `{token}` (registered: {})", list_or_none(.available))]
    UnknownToken {
        /// The provider type that was asked for.
        type_name: &'static str,
        /// The token that was asked for.
        token: String,
        /// The tokens registered for that type.
        available: Vec<String>,
    },

    /// No token was given and the container holds no provider of this type.
    #[error("no {type_name} is registered in the container")]
    NoProvider {
        /// The provider type that was asked for.
        type_name: &'static str,
    },

    /// No token was given and several providers of this type exist without a default.
    #[error("several {type_name} providers are registered ({}) and none is the default; name one with a token", .tokens.join(", "))]
    AmbiguousProvider {
        /// The provider type that was asked for.
        type_name: &'static str,
        /// Their tokens.
        tokens: Vec<String>,
    },

    /// An embedding had a different dimension from the ones already stored.
    #[error("embedding dimension mismatch: expected {expected}, got {found}")]
    DimensionMismatch {
        /// The dimension of the collection.
        expected: usize,
        /// The dimension given.
        found: usize,
    },

    /// A payload exceeded a configured limit.
    #[error("{what} is too large: {size} bytes (limit {limit})")]
    PayloadTooLarge {
        /// What was too large.
        what: &'static str,
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },

    /// A store failed to carry out an operation.
    #[error("{store} store failed to {operation}")]
    Store {
        /// The backend (`"sqlite"`, `"redis"`, ...), with its location when known.
        store: String,
        /// The operation (`"append events"`, `"search facts"`, ...).
        operation: String,
        /// The backend's error.
        #[source]
        source: BoxError,
    },

    /// A chat or embedding model failed; [`kind`](ModelErrorKind) says whether trying
    /// again may help ([`MemoryError::is_retryable`]). Built with [`MemoryError::model`].
    ///
    /// The message never repeats the [`source`](std::error::Error::source) (the HTTP
    /// client's or the runtime's error): walk the chain to print both.
    #[error("model `{model}` failed{}: {message}", kind_suffix(*.kind))]
    #[non_exhaustive]
    Model {
        /// The model name (or a local model's directory).
        model: String,
        /// What kind of failure it was.
        kind: ModelErrorKind,
        /// What went wrong.
        message: String,
        /// How long the provider asked to wait before trying again, when it said.
        retry_after: Option<Duration>,
        /// The underlying error (HTTP client, JSON parser, runtime), when there is one.
        #[source]
        source: Option<BoxError>,
    },

    /// A local model's files are missing, incomplete or unreadable.
    #[error("cannot load the model in `{}`: {reason}", .path.display())]
    ModelFiles {
        /// The model directory, or the file in it at fault.
        path: PathBuf,
        /// What is wrong, and how to fix it when known.
        reason: String,
    },

    /// A store (or this build of agentmem) cannot do what was asked, for example keep a
    /// kind of record durably, or open a backend whose cargo feature is not compiled in.
    /// Reported before anything is written, so nothing is silently kept in memory instead.
    #[error("`{store}` cannot {what}: {reason}")]
    Unsupported {
        /// The store, usually its URL.
        store: String,
        /// What it cannot do (`"persist vector documents"`, `"be opened by this build"`).
        what: String,
        /// Why, and what to use instead.
        reason: String,
    },

    /// A parameter of a store URL (`?schema=`, `?pool_size=`, ...) is unknown to that kind
    /// of store, or its value is not one it accepts. Reported before any connection is made.
    ///
    /// ```
    /// use agentmemory_core::MemoryError;
    ///
    /// let err = MemoryError::url_parameter("postgres://db/app?shcema=x", "shcema", "unknown parameter");
    /// assert!(matches!(&err, MemoryError::UrlParameter { parameter, .. } if parameter == "shcema"));
    /// assert_eq!(err.to_string(), "store URL `postgres://db/app?shcema=x`: parameter `shcema`: unknown parameter");
    /// ```
    #[error("store URL `{url}`: parameter `{parameter}`: {reason}")]
    UrlParameter {
        /// The URL, its password shown as `***`.
        url: String,
        /// The parameter at fault.
        parameter: String,
        /// Why it was refused, and what is accepted.
        reason: String,
    },

    /// An environment variable agentmem reads (`AGENTMEM_WINDOW_TOKENS`, ...) holds a value
    /// it cannot use.
    #[error("environment variable {variable}=`{value}`: {reason}")]
    Environment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        reason: String,
    },

    /// A fact extractor produced output that could not be used.
    #[error("fact extraction failed: {0}")]
    Extraction(String),

    /// The tool rounds of a reply do not pair up, so a model API would reject every later
    /// request that carries them. Refused before anything is logged or remembered.
    #[error("invalid tool round at message {index} of the reply: {problem}")]
    InvalidToolRound {
        /// Position of the message at fault in the reply: its steps in order, then the
        /// final message.
        index: usize,
        /// What is wrong.
        problem: ToolRoundProblem,
    },

    /// A session built without a chat model
    /// ([`SessionBuilder::external_model`](crate::session::SessionBuilder::external_model))
    /// was asked to call one ([`Session::send`](crate::Session::send) and its variants).
    #[error(
        "the session of agent `{agent}` was built without a chat model (external_model); \
         call prepare, then your own model, then commit"
    )]
    NoModel {
        /// The agent's name.
        agent: String,
    },
}

/// What kind of failure a model had ([`MemoryError::Model`]): whether trying again may
/// help, the credentials need fixing, or the request itself.
///
/// ```
/// use agentmemory_core::error::{MemoryError, ModelErrorKind};
///
/// let err = MemoryError::model("gpt-4o-mini", ModelErrorKind::RateLimited, "HTTP 429");
/// assert!(err.is_retryable());
/// assert_eq!(err.to_string(), "model `gpt-4o-mini` failed (rate limited): HTTP 429");
/// assert!(!ModelErrorKind::Auth.is_retryable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The provider refused for now: too many requests or tokens (HTTP 429). Retryable.
    RateLimited,
    /// The credentials were refused (HTTP 401, 403). Not retryable.
    Auth,
    /// No answer within the configured timeout. Retryable.
    Timeout,
    /// The provider could not be reached or failed on its side (connection refused,
    /// HTTP 5xx). Retryable.
    Unavailable,
    /// The provider refused the request itself (HTTP 4xx other than the above: a bad
    /// parameter, an unknown model, a context too long). Not retryable.
    BadRequest,
    /// The provider answered with something that is not a usable reply (not JSON, no
    /// choices, a stream that ended without its final message). Not retryable.
    BadResponse,
    /// Anything else: a client that could not be set up, a local inference failure.
    /// Not retryable.
    Other,
}

impl ModelErrorKind {
    /// Whether the same request may succeed if sent again later.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ModelErrorKind::RateLimited | ModelErrorKind::Timeout | ModelErrorKind::Unavailable
        )
    }

    /// The kind for an HTTP error status from a model provider.
    ///
    /// ```
    /// use agentmemory_core::error::ModelErrorKind;
    ///
    /// assert_eq!(ModelErrorKind::from_http_status(429), ModelErrorKind::RateLimited);
    /// assert_eq!(ModelErrorKind::from_http_status(401), ModelErrorKind::Auth);
    /// assert_eq!(ModelErrorKind::from_http_status(503), ModelErrorKind::Unavailable);
    /// assert_eq!(ModelErrorKind::from_http_status(400), ModelErrorKind::BadRequest);
    /// ```
    pub fn from_http_status(status: u16) -> Self {
        match status {
            429 => ModelErrorKind::RateLimited,
            401 | 403 => ModelErrorKind::Auth,
            408 => ModelErrorKind::Timeout,
            500..=599 => ModelErrorKind::Unavailable,
            400..=499 => ModelErrorKind::BadRequest,
            _ => ModelErrorKind::BadResponse,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ModelErrorKind::RateLimited => "rate limited",
            ModelErrorKind::Auth => "authentication refused",
            ModelErrorKind::Timeout => "timed out",
            ModelErrorKind::Unavailable => "unavailable",
            ModelErrorKind::BadRequest => "request refused",
            ModelErrorKind::BadResponse => "bad response",
            ModelErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// ` (rate limited)` after "failed" for every kind but [`ModelErrorKind::Other`].
fn kind_suffix(kind: ModelErrorKind) -> KindSuffix {
    KindSuffix(kind)
}

struct KindSuffix(ModelErrorKind);

impl fmt::Display for KindSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ModelErrorKind::Other => Ok(()),
            kind => write!(f, " ({kind})"),
        }
    }
}

/// What is wrong with a reply's tool rounds ([`MemoryError::InvalidToolRound`]).
///
/// A reply's steps are rounds of an assistant message with tool calls followed by one
/// tool result per call, each naming its call's id; the final message calls no tool.
///
/// ```
/// use agentmemory_core::error::ToolRoundProblem;
///
/// let problem = ToolRoundProblem::UnknownCallId { call_id: "c9".into() };
/// assert_eq!(problem.to_string(), "a tool result answers `c9`, which no pending tool call has");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolRoundProblem {
    /// An assistant tool call has no result before the next assistant message (or the end).
    #[error("tool call `{call_id}` has no result")]
    UnansweredCall {
        /// The call's id.
        call_id: String,
    },
    /// A tool result names a call id that no assistant message of its round made.
    #[error("a tool result answers `{call_id}`, which no pending tool call has")]
    UnknownCallId {
        /// The id the result names.
        call_id: String,
    },
    /// A second tool result for the same call.
    #[error("a second tool result for call `{call_id}`")]
    DuplicateResult {
        /// The call's id.
        call_id: String,
    },
    /// Two tool calls of the reply share an id, so their results cannot be told apart.
    #[error("tool call id `{call_id}` is used twice")]
    DuplicateCallId {
        /// The repeated id.
        call_id: String,
    },
    /// A tool call or a tool result without an id.
    #[error("a tool call or tool result without an id")]
    MissingCallId,
    /// A user or system message among the steps (only assistant messages and tool
    /// results may come before the final message).
    #[error("a {role} message among the tool rounds")]
    UnexpectedRole {
        /// Its role.
        role: crate::message::Role,
    },
}

impl MemoryError {
    /// An [`MemoryError::InvalidArgument`].
    pub fn invalid(what: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            what,
            reason: reason.into(),
        }
    }

    /// A [`MemoryError::Corrupt`] wrapping a parse error.
    pub fn corrupt(what: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Corrupt {
            what: what.into(),
            source: source.into(),
        }
    }

    /// A [`MemoryError::Store`] wrapping a backend error.
    pub fn store(
        store: impl Into<String>,
        operation: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Self::Store {
            store: store.into(),
            operation: operation.into(),
            source: source.into(),
        }
    }

    /// A [`MemoryError::Unsupported`].
    pub fn unsupported(
        store: impl Into<String>,
        what: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self::Unsupported {
            store: store.into(),
            what: what.into(),
            reason: reason.into(),
        }
    }

    /// A [`MemoryError::Model`] of this kind, without an underlying error.
    pub fn model(
        model: impl Into<String>,
        kind: ModelErrorKind,
        message: impl Into<String>,
    ) -> Self {
        Self::Model {
            model: model.into(),
            kind,
            message: message.into(),
            retry_after: None,
            source: None,
        }
    }

    /// A [`MemoryError::Model`] caused by `source` (kept as the error's source, not
    /// repeated in its message).
    pub fn model_caused_by(
        model: impl Into<String>,
        kind: ModelErrorKind,
        message: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Self::Model {
            model: model.into(),
            kind,
            message: message.into(),
            retry_after: None,
            source: Some(source.into()),
        }
    }

    /// The kind of a [`MemoryError::Model`]; `None` for every other error.
    pub fn model_kind(&self) -> Option<ModelErrorKind> {
        match self {
            Self::Model { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// Whether the operation may succeed if tried again later: a model that was rate
    /// limited, timed out or unavailable ([`ModelErrorKind::is_retryable`]). Every other
    /// error is not: the request, the data or the configuration needs a change first.
    pub fn is_retryable(&self) -> bool {
        self.model_kind().is_some_and(ModelErrorKind::is_retryable)
    }

    /// This error and its sources, outermost first, joined by `: `: the whole story on
    /// one line, for logs and messages to people.
    pub fn chain(&self) -> Chain<'_> {
        Chain(self)
    }

    /// A [`MemoryError::UrlParameter`].
    pub fn url_parameter(
        url: impl Into<String>,
        parameter: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self::UrlParameter {
            url: url.into(),
            parameter: parameter.into(),
            reason: reason.into(),
        }
    }

    /// A [`MemoryError::NotFound`].
    pub fn not_found(kind: &'static str, id: impl Into<String>) -> Self {
        Self::NotFound {
            kind,
            id: id.into(),
        }
    }
}

/// An error and its sources on one line ([`MemoryError::chain`]).
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a>(&'a MemoryError);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = std::error::Error::source(self.0);
        while let Some(error) = next {
            write!(f, ": {error}")?;
            next = error.source();
        }
        Ok(())
    }
}

fn list_or_none(tokens: &[String]) -> ListOrNone<'_> {
    ListOrNone(tokens)
}

struct ListOrNone<'a>(&'a [String]);

impl fmt::Display for ListOrNone<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&self.0.join(", "))
        }
    }
}

impl From<agentmemory_index::IndexError> for MemoryError {
    fn from(e: agentmemory_index::IndexError) -> Self {
        use agentmemory_index::IndexError;
        match e {
            IndexError::InvalidArgument { what, reason } => Self::InvalidArgument { what, reason },
            IndexError::DimensionMismatch { expected, found } => {
                Self::DimensionMismatch { expected, found }
            }
        }
    }
}

impl From<agentmemory_embed::EmbedError> for MemoryError {
    fn from(e: agentmemory_embed::EmbedError) -> Self {
        use agentmemory_embed::EmbedError;
        match e {
            EmbedError::ModelFiles { path, reason } => Self::ModelFiles { path, reason },
            EmbedError::InvalidArgument { what, reason } => Self::InvalidArgument { what, reason },
            EmbedError::Environment {
                variable,
                value,
                reason,
            } => Self::Environment {
                variable,
                value,
                reason,
            },
            EmbedError::Model {
                model,
                message,
                source,
            } => Self::Model {
                model,
                kind: ModelErrorKind::Other,
                message,
                retry_after: None,
                source,
            },
            other => Self::model("local embedder", ModelErrorKind::Other, other.to_string()),
        }
    }
}
