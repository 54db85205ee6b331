//! [`SessionBuilder`]: resolving a session's dependencies, once, at start-up.

use std::sync::Arc;

use crate::buffer::{ShortTermMemory, DEFAULT_MAX_TOKENS};
use crate::conversation::{ConversationStore, InMemoryConversationStore};
use crate::di::Container;
use crate::episodes::Retention;
use crate::error::{MemoryError, Result};
use crate::extract::{FactExtractor, LlmExtractor};
use crate::facts::UserMemoryStore;
use crate::message::DEFAULT_MAX_MESSAGE_BYTES;
use crate::model::ChatModel;
use crate::summarize::Summarizer;
use crate::tokens::{HeuristicCounter, TokenCounter};
use crate::working::WorkingMemory;

use super::{Agent, LongTerm, Session};

/// Where a session runs fact extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ExtractionMode {
    /// In the turn, before the reply is returned (the default): the turn report lists
    /// the fact changes.
    #[default]
    Inline,
    /// In a background task of the session, fed by a bounded queue of `queue` turns
    /// (a full queue makes the next commit wait). The turn report says extraction was
    /// deferred; [`Session::flush`](super::Session::flush) waits for it and returns the
    /// outcomes. Dropping the session lets the task finish the queued turns; turns it
    /// could not finish (the runtime shut down) are reported through `tracing` at error
    /// level.
    Background {
        /// How many turns may wait.
        queue: usize,
    },
}

/// Budgets and modes of a session.
///
/// ```
/// use agentmemory_core::session::{ExtractionMode, SessionConfig};
///
/// let config = SessionConfig::default()
///     .with_max_tokens(8_000)
///     .with_extraction(ExtractionMode::Background { queue: 16 });
/// assert_eq!(config.max_tokens, 8_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Token budget of the whole prompt: agent system prompt, memory block, summary
    /// block and window (default 40,000).
    pub max_tokens: usize,
    /// Token cap of the memory block in the system prompt (default 500).
    pub memory_block_tokens: usize,
    /// Token cap of the running summary (default 1,000; never more than a quarter of
    /// `max_tokens`).
    pub summary_tokens: usize,
    /// When the memory goes over budget, older messages are summarised until system
    /// messages + summary + recent messages take at most this percentage of
    /// `max_tokens` (default 75). The headroom means the next summarisation comes
    /// several turns later instead of on every turn.
    pub summarize_to: u8,
    /// Summarise as soon as messages and summary take more than this many tokens, even
    /// when the prompt would still fit `max_tokens` (default `None`: only when it would
    /// not). An absolute threshold beside the percentage [`summarize_to`](Self::summarize_to),
    /// which then applies to it.
    pub summarize_threshold: Option<usize>,
    /// Token cap of the working-memory block, when the session renders one
    /// ([`SessionBuilder::working_memory`]; default 500, never more than a quarter of
    /// `max_tokens`): the least important entries are left out first.
    pub working_memory_tokens: usize,
    /// Where fact extraction runs (default inline).
    pub extraction: ExtractionMode,
    /// Whether the assistant's replies are kept as episodes too, beside everything the
    /// user says (default `true`; the role is kept either way).
    pub episodes_of_replies: bool,
    /// How many episodes a user keeps (default: all). Applied when a session is built.
    pub episode_retention: Retention,
    /// The largest user message a turn takes, in bytes of content (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`], 1 MiB). A larger one is refused by
    /// [`Session::prepare`](super::Session::prepare) and [`Session::send`](super::Session::send)
    /// with [`MemoryError::PayloadTooLarge`] before it is logged, embedded or extracted.
    pub max_message_bytes: usize,
    /// Compact the conversation's log (a snapshot of the window and summary, the events
    /// before it dropped) once this many events follow its last snapshot, so building a
    /// session reads a bounded tail instead of the whole history (default
    /// [`DEFAULT_COMPACT_AFTER`]; `None`: never). Only a session that keeps episodes
    /// compacts: every message stays recallable, and listed by the episode store, after
    /// the log lets it go. A session without long-term memory keeps its whole log.
    pub compact_after: Option<usize>,
}

/// Events after the last snapshot at which a session with episodes compacts its log
/// ([`SessionConfig::compact_after`]): about 500 turns, a replay of a few milliseconds.
pub const DEFAULT_COMPACT_AFTER: usize = 1_000;

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            max_tokens: DEFAULT_MAX_TOKENS,
            memory_block_tokens: 500,
            summary_tokens: 1_000,
            summarize_to: 75,
            summarize_threshold: None,
            working_memory_tokens: 500,
            extraction: ExtractionMode::Inline,
            episodes_of_replies: true,
            episode_retention: Retention::all(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            compact_after: Some(DEFAULT_COMPACT_AFTER),
        }
    }
}

impl SessionConfig {
    /// Sets the whole prompt's token budget.
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets the memory block's token cap.
    pub fn with_memory_block_tokens(mut self, tokens: usize) -> Self {
        self.memory_block_tokens = tokens;
        self
    }

    /// Sets the summary's token cap.
    pub fn with_summary_tokens(mut self, tokens: usize) -> Self {
        self.summary_tokens = tokens;
        self
    }

    /// Sets the low-water mark of summarisation, in percent of `max_tokens`.
    pub fn with_summarize_to(mut self, percent: u8) -> Self {
        self.summarize_to = percent;
        self
    }

    /// Sets the absolute summarisation threshold, in tokens of messages and summary.
    pub fn with_summarize_threshold(mut self, tokens: usize) -> Self {
        self.summarize_threshold = Some(tokens);
        self
    }

    /// Sets the working-memory block's token cap.
    pub fn with_working_memory_tokens(mut self, tokens: usize) -> Self {
        self.working_memory_tokens = tokens;
        self
    }

    /// Sets where extraction runs.
    pub fn with_extraction(mut self, extraction: ExtractionMode) -> Self {
        self.extraction = extraction;
        self
    }

    /// Sets how many episodes a user keeps (all, the last N, a maximum age); applied when
    /// a session of the user is built.
    pub fn with_episode_retention(mut self, retention: Retention) -> Self {
        self.episode_retention = retention;
        self
    }

    /// Sets whether the assistant's replies are kept as episodes.
    pub fn with_episodes_of_replies(mut self, on: bool) -> Self {
        self.episodes_of_replies = on;
        self
    }

    /// Sets when the log is compacted (see [`compact_after`](Self::compact_after)).
    pub fn with_compact_after(mut self, events: Option<usize>) -> Self {
        self.compact_after = events;
        self
    }

    /// Sets the largest user message a turn takes, in bytes (see
    /// [`max_message_bytes`](Self::max_message_bytes)).
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

/// Builds a [`Session`]: names the user and conversation, sets budgets, then resolves
/// every provider from the container in [`build`](Self::build).
pub struct SessionBuilder<A: Agent> {
    agent: A,
    container: Container,
    user_id: Option<String>,
    conversation_id: Option<String>,
    config: SessionConfig,
    counter: Option<Arc<dyn TokenCounter>>,
    must_exist: bool,
    ephemeral: bool,
    external_model: bool,
    working: Option<WorkingMemory>,
}

impl<A: Agent> SessionBuilder<A> {
    pub(super) fn new(agent: A, container: Container) -> Self {
        Self {
            agent,
            container,
            user_id: None,
            conversation_id: None,
            config: SessionConfig::default(),
            counter: None,
            must_exist: false,
            ephemeral: false,
            external_model: false,
            working: None,
        }
    }

    /// The user the session talks to (required).
    pub fn user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }

    /// The conversation id. An id whose log already holds events resumes that
    /// conversation; none starts a new one under a fresh ULID.
    pub fn conversation(mut self, conversation_id: impl Into<String>) -> Self {
        self.conversation_id = Some(conversation_id.into());
        self
    }

    /// Resumes conversation `conversation_id`: like [`conversation`](Self::conversation),
    /// but [`build`](Self::build) fails with [`MemoryError::NotFound`] when its log is empty.
    pub fn resume(mut self, conversation_id: impl Into<String>) -> Self {
        self.conversation_id = Some(conversation_id.into());
        self.must_exist = true;
        self
    }

    /// All budgets at once.
    pub fn config(mut self, config: SessionConfig) -> Self {
        self.config = config;
        self
    }

    /// The whole prompt's token budget (system prompt, memory block, summary, window).
    pub fn max_tokens(mut self, max_tokens: usize) -> Self {
        self.config.max_tokens = max_tokens;
        self
    }

    /// When the log is compacted: after this many events since its last snapshot, in a
    /// session that keeps episodes (default 1,000; `None`: never; see
    /// [`SessionConfig::compact_after`]).
    pub fn compact_after(mut self, events: Option<usize>) -> Self {
        self.config.compact_after = events;
        self
    }

    /// The largest user message a turn takes, in bytes (default 1 MiB; see
    /// [`SessionConfig::max_message_bytes`]).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.config.max_message_bytes = bytes;
        self
    }

    /// Runs fact extraction in a background task with a queue of `queue` turns (see
    /// [`ExtractionMode::Background`]).
    pub fn background_extraction(mut self, queue: usize) -> Self {
        self.config.extraction = ExtractionMode::Background { queue };
        self
    }

    /// Keeps the conversation only in memory when the container has no
    /// [`ConversationStore`]. Without this, [`build`](Self::build) fails when no
    /// conversation store is registered, so a misconfigured application cannot lose its
    /// conversations silently.
    pub fn ephemeral(mut self) -> Self {
        self.ephemeral = true;
        self
    }

    /// The caller calls the model with its own client ([`Session::prepare`], the
    /// client, then [`Session::commit`]): no [`ChatModel`] is resolved, so none needs to
    /// be registered under the agent's model name. [`Session::send`] and
    /// [`Session::send_stream`] then fail with [`MemoryError::NoModel`].
    ///
    /// Without this, [`build`](Self::build) fails when the container has no chat model
    /// for the agent, so an application that relies on `send` learns of a missing model
    /// at start-up rather than at its first message. (A named `extraction_model` of the
    /// agent is still resolved: extraction calls it.)
    ///
    /// ```
    /// # tokio_test::block_on(async {
    /// use std::borrow::Cow;
    /// use agentmemory_core::session::{Agent, Session};
    /// use agentmemory_core::{Container, Message, MemoryError, Remember};
    ///
    /// struct Bot;
    /// impl Remember for Bot {}
    /// impl Agent for Bot {
    ///     fn system_prompt(&self) -> Cow<'_, str> { "Be brief.".into() }
    ///     fn model(&self) -> &str { "my-own-client" }
    /// }
    ///
    /// let container = Container::new(); // no model registered
    /// let mut session = Session::builder(Bot, &container)
    ///     .user("ann")
    ///     .ephemeral()
    ///     .external_model()
    ///     .build()
    ///     .await?;
    /// let turn = session.prepare(Message::user("hi")).await?;
    /// // ... send turn.request() with your own client ...
    /// session.commit(turn, Message::assistant("Hello!")).await?;
    /// assert!(matches!(session.send("again").await, Err(MemoryError::NoModel { .. })));
    /// # Ok::<_, MemoryError>(())
    /// # }).unwrap();
    /// ```
    pub fn external_model(mut self) -> Self {
        self.external_model = true;
        self
    }

    /// Renders `working` into every prompt of the session (opt-in): its entries, most
    /// important first, as one delimited, escaped block after the memory block (see
    /// [`render::working_memory`](crate::render::working_memory)), within
    /// [`SessionConfig::working_memory_tokens`]. Entries set between turns show in the
    /// next turn. A store error reading it is reported in the turn report
    /// ([`TurnReport::working_memory_error`](super::TurnReport::working_memory_error)) and
    /// the turn goes on without the block.
    pub fn working_memory(mut self, working: WorkingMemory) -> Self {
        self.working = Some(working);
        self
    }

    /// The token counter. By default the chars/4 heuristic; with the `tiktoken` feature,
    /// the exact BPE count of the agent's model family (o200k for `gpt-4o`, `gpt-4.1`,
    /// `o1`, `o3`, `o4`, `gpt-5`; cl100k otherwise).
    pub fn token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.counter = Some(counter);
        self
    }

    fn resolve_model(&self) -> Result<Arc<dyn ChatModel>> {
        let name = self.agent.model();
        match self.container.resolve::<dyn ChatModel>(Some(name)) {
            Err(MemoryError::UnknownToken { .. })
                if self.container.has_default::<dyn ChatModel>() =>
            {
                self.container.resolve::<dyn ChatModel>(None)
            }
            other => other,
        }
    }

    /// `model` is the agent's chat model when one was resolved.
    fn resolve_long_term(&self, model: Option<&Arc<dyn ChatModel>>) -> Result<Option<LongTerm>> {
        let Some(spec) = A::SPEC else {
            return Ok(None);
        };
        let store = self.container.resolve::<dyn UserMemoryStore>(spec.store)?;
        let extractor = if spec.extract {
            Some(match spec.extraction_model {
                Some(name) => {
                    // The named extraction model must exist, even before it is first used.
                    let model = self.container.resolve::<dyn ChatModel>(Some(name))?;
                    let registered = self.container.tokens::<dyn FactExtractor>();
                    if registered.iter().any(|t| t == name) {
                        self.container.resolve::<dyn FactExtractor>(Some(name))?
                    } else {
                        Arc::new(LlmExtractor::new(model).with_model_name(name))
                    }
                }
                None => match self.container.resolve_optional::<dyn FactExtractor>(None)? {
                    Some(registered) => registered,
                    None => self.agent_model_extractor(model)?,
                },
            })
        } else {
            None
        };
        let episodes = crate::episodes::resolve(&self.container)?;
        Ok(Some(LongTerm {
            spec,
            store,
            extractor,
            episodes,
        }))
    }

    /// The extractor when `extraction_model` is unset and no extractor is registered: an
    /// `LlmExtractor` over the agent's model when it is a language model, the rule
    /// extractor otherwise. After [`external_model`](Self::external_model) no model was
    /// resolved; the agent's model is then used when the container has it.
    fn agent_model_extractor(
        &self,
        model: Option<&Arc<dyn ChatModel>>,
    ) -> Result<Arc<dyn FactExtractor>> {
        let model = match model {
            Some(model) => Some(Arc::clone(model)),
            None => match self.resolve_model() {
                Ok(model) => Some(model),
                Err(MemoryError::UnknownToken { .. }) => None,
                Err(other) => return Err(other),
            },
        };
        Ok(match model {
            Some(model) if model.is_language_model() => {
                Arc::new(LlmExtractor::new(model).with_model_name(self.agent.model()))
            }
            _ => super::defaults::extractor(),
        })
    }

    /// Resolves every dependency and, when the conversation's log already has events,
    /// replays them to rebuild the short-term memory and its summary.
    ///
    /// Fails (before any message is sent) when the user id is empty, a named token or
    /// model is missing (no chat model is needed after
    /// [`external_model`](Self::external_model)), or the conversation belongs to another
    /// user.
    pub async fn build(self) -> Result<Session<A>> {
        let user_id = self
            .user_id
            .clone()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| {
                MemoryError::invalid("user id", "a session needs a non-empty user id")
            })?;
        let conversation_id = self
            .conversation_id
            .clone()
            .unwrap_or_else(|| ulid::Ulid::new().to_string());
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        if self.config.summarize_threshold == Some(0) {
            return Err(MemoryError::invalid(
                "summarize_threshold",
                "must be at least 1 token",
            ));
        }
        if !(1..=100).contains(&self.config.summarize_to) {
            return Err(MemoryError::invalid(
                "summarize_to",
                format!(
                    "must be a percentage in 1..=100, got {}",
                    self.config.summarize_to
                ),
            ));
        }
        let model = if self.external_model {
            None
        } else {
            Some(self.resolve_model()?)
        };
        let long_term = self.resolve_long_term(model.as_ref())?;
        let summarizer = self
            .container
            .resolve_optional::<dyn Summarizer>(None)?
            .unwrap_or_else(super::defaults::summarizer);
        let log = match self
            .container
            .resolve_optional::<dyn ConversationStore>(None)?
        {
            Some(log) => log,
            None if self.ephemeral => Arc::new(InMemoryConversationStore::new()),
            None => {
                return Err(MemoryError::invalid(
                    "conversation store",
                    "no ConversationStore is registered; register one \
                     (Container::register_conversations) or call .ephemeral() on the \
                     session builder to keep this conversation in memory only",
                ))
            }
        };
        let counter = self
            .counter
            .clone()
            .unwrap_or_else(|| default_counter(self.agent.model()));
        let mut memory = ShortTermMemory::with_counter(self.config.max_tokens, counter);

        let events = log.load(&conversation_id).await?;
        if self.must_exist && events.is_empty() {
            return Err(MemoryError::not_found("conversation", conversation_id));
        }
        if let Some(lt) = &long_term {
            if self.config.episode_retention != Retention::all() {
                let dropped = lt
                    .episodes
                    .retain(&user_id, self.config.episode_retention, chrono::Utc::now())
                    .await?;
                tracing::debug!(dropped, "episode retention applied");
            }
        }
        let owner = crate::conversation::replay(&events, &mut memory);
        // Where replay started: the last snapshot (0 when the log has none).
        let snapshot_seq = events
            .iter()
            .rev()
            .find(|e| {
                matches!(
                    e.event,
                    crate::conversation::ConversationEvent::Snapshot { .. }
                )
            })
            .map_or(0, |e| e.seq);
        if let Some(owner) = &owner {
            if owner.user_id != user_id {
                return Err(MemoryError::invalid(
                    "conversation id",
                    format!("conversation `{conversation_id}` belongs to another user"),
                ));
            }
        }
        let started = owner.is_some();
        // A log that ends with a user message had a turn fail after logging it: sending
        // that message again is a retry, not a new message.
        let pending = memory
            .last_turn()
            .filter(|m| m.role == crate::message::Role::User)
            .map(|m| super::Pending {
                message: Arc::new(m.clone()),
                logged: true,
                in_memory: true,
            });
        let extraction = long_term.as_ref().and_then(|lt| {
            lt.extractor
                .as_ref()
                .filter(|_| lt.spec.extract)
                .map(|extractor| super::commit::Extraction {
                    user_id: user_id.clone(),
                    conversation_id: conversation_id.clone(),
                    store: Arc::clone(&lt.store),
                    extractor: Arc::clone(extractor),
                    log: Arc::clone(&log),
                })
        });
        let background = match (self.config.extraction, &extraction) {
            (ExtractionMode::Background { queue }, Some(extraction)) => {
                Some(super::background::Worker::spawn(extraction.clone(), queue)?)
            }
            _ => None,
        };

        Ok(Session {
            agent: self.agent,
            user_id,
            conversation_id,
            model,
            summarizer,
            log,
            long_term,
            memory,
            config: self.config,
            started,
            snapshot_seq,
            pending,
            unanswered: None,
            extraction,
            background,
            summary_block: Default::default(),
            working: self.working,
        })
    }
}

/// The session's counter when none is set: exact BPE counts with the `tiktoken` feature
/// (vocabularies are loaded once per process), else the heuristic.
#[cfg(feature = "tiktoken")]
fn default_counter(model: &str) -> Arc<dyn TokenCounter> {
    use std::sync::OnceLock;

    use crate::tokens::{BpeCounter, Encoding};

    static CL100K: OnceLock<Option<BpeCounter>> = OnceLock::new();
    static O200K: OnceLock<Option<BpeCounter>> = OnceLock::new();
    let encoding = encoding_for(model);
    let cell = match encoding {
        Encoding::O200k => &O200K,
        Encoding::Cl100k => &CL100K,
    };
    match cell.get_or_init(|| BpeCounter::new(encoding).ok()) {
        Some(counter) => Arc::new(counter.clone()),
        None => {
            tracing::warn!(
                ?encoding,
                "BPE vocabulary unavailable; counting tokens by heuristic"
            );
            Arc::new(HeuristicCounter::default())
        }
    }
}

/// The session's counter when none is set: the chars/4 heuristic.
#[cfg(not(feature = "tiktoken"))]
fn default_counter(_model: &str) -> Arc<dyn TokenCounter> {
    Arc::new(HeuristicCounter::default())
}

/// o200k for the GPT-4o generation and later, cl100k for everything else.
#[cfg(feature = "tiktoken")]
pub(crate) fn encoding_for(model: &str) -> crate::tokens::Encoding {
    const O200K_PREFIXES: [&str; 6] = ["gpt-4o", "gpt-4.1", "o1", "o3", "o4", "gpt-5"];
    let model = model.trim().to_ascii_lowercase();
    if O200K_PREFIXES.iter().any(|p| model.starts_with(p)) {
        crate::tokens::Encoding::O200k
    } else {
        crate::tokens::Encoding::Cl100k
    }
}

#[cfg(all(test, feature = "tiktoken"))]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn model_names_pick_their_vocabulary() {
        for model in [
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4.1-nano",
            "o1-preview",
            "o3-mini",
            "o4-mini",
            "gpt-5",
        ] {
            assert_eq!(encoding_for(model), Encoding::O200k, "{model}");
        }
        for model in [
            "gpt-4",
            "gpt-4-turbo",
            "gpt-3.5-turbo",
            "llama3.2",
            "offline",
            "",
        ] {
            assert_eq!(encoding_for(model), Encoding::Cl100k, "{model}");
        }
    }
}
