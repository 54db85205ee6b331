//! One error type for the whole of agentmem.

use std::fmt;
use std::path::PathBuf;

/// Shorthand for `Result<T, MemoryError>`.
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// A boxed error from a backend (SQLite, Redis, HTTP, ...), kept as the `source` of a [`MemoryError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in agentmem, with enough context to act on it:
/// which store, which operation, which key or token.
///
/// ```
/// use agentmemory_core::MemoryError;
///
/// let err = MemoryError::invalid("importance", "must be within 0.0..=1.0, got 1.5");
/// assert_eq!(err.to_string(), "invalid importance: must be within 0.0..=1.0, got 1.5");
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
    #[error("corrupt {what}: {source}")]
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
    #[error("{store} store failed to {operation}: {source}")]
    Store {
        /// The backend (`"sqlite"`, `"redis"`, ...), with its location when known.
        store: String,
        /// The operation (`"append events"`, `"search facts"`, ...).
        operation: String,
        /// The backend's error.
        #[source]
        source: BoxError,
    },

    /// A chat or embedding model failed.
    #[error("model `{model}` failed: {message}")]
    Model {
        /// The model name.
        model: String,
        /// What went wrong.
        message: String,
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
