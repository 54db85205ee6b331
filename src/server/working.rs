//! Working memory of sessions: one JSON document per (namespace, user, session) in the
//! configured [`KvStore`], so that every server instance on one Redis or PostgreSQL
//! serves the same sessions.
//!
//! With [`index_messages`](WorkingMemoryStore::index_messages) on (the server's
//! `index_all_messages_in_long_term_memory`, on by default), every message put into a
//! session is also an episode of the session's user, and a session that expired or went
//! missing is rebuilt from them (see the `message_index` module).
//!
//! A `PUT` answers once the session is stored; the episodes of its new messages and the
//! memories extracted from them are written behind it, on its user's background line
//! (the `background` module), batched with the user's other waiting `PUT`s.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::Utc;
use parking_lot::Mutex;

use agentmemory_core::episodes::EpisodeStore;
use agentmemory_core::kv::{KvStore, MemoryEntry, MemoryScope};
use agentmemory_core::summarize::Summarizer;

use super::background::{Extractor, Job};
use super::error::ApiError;
use super::ids;
use super::long_term::LongTermMemory;
use super::message_index::{IndexWork, MessageIndex};
use super::settings::DEFAULT_WINDOW_SIZE;
use super::strategy::Strategy;
use super::window;
use super::wire::{SessionList, WorkingMemoryBody, WorkingMemoryResponse};

/// Sessions remembered as warned about a missing `created_at`, at most (then forgotten).
const MAX_WARNED_SESSIONS: usize = 10_000;

/// Which session a request names.
#[derive(Debug, Clone, Default)]
pub struct SessionScope<'a> {
    /// The namespace, if any.
    pub namespace: Option<&'a str>,
    /// The user, if any.
    pub user_id: Option<&'a str>,
    /// The model whose window applies.
    pub model_name: Option<&'a str>,
    /// The window in tokens (wins over the model's).
    pub context_window_max: Option<u64>,
    /// Expiry in seconds from the query (`?ttl_seconds=`): wins over the body's.
    pub ttl_seconds: Option<u64>,
}

impl SessionScope<'_> {
    fn check(&self) -> Result<(), ApiError> {
        ids::check_opt("namespace", self.namespace)?;
        ids::check_opt("user_id", self.user_id)
    }

    fn window(&self) -> Option<u64> {
        window::requested_window(self.model_name, self.context_window_max)
    }
}

/// Sessions over a key/value store, with summarisation and promotion of structured
/// memories to long-term memory.
#[derive(Clone)]
pub struct WorkingMemoryStore {
    kv: Arc<dyn KvStore>,
    summarizer: Arc<dyn Summarizer>,
    long_term: LongTermMemory,
    index: Option<MessageIndex>,
    /// Extraction, when on.
    extractor: Option<Extractor>,
    /// Runs the work behind each `PUT` (indexing, extraction): the extractor when
    /// extraction is on (see [`extract_with`](Self::extract_with)).
    background: Extractor,
    has_model: bool,
    window_size: Option<usize>,
    warned: Arc<Mutex<HashSet<String>>>,
}

impl WorkingMemoryStore {
    /// Sessions in `kv`, summarised by `summarizer`, promoting into `long_term`.
    pub fn new(
        kv: Arc<dyn KvStore>,
        summarizer: Arc<dyn Summarizer>,
        long_term: LongTermMemory,
    ) -> Self {
        Self {
            kv,
            summarizer,
            background: Extractor::new(long_term.clone(), None),
            long_term,
            index: None,
            extractor: None,
            has_model: false,
            window_size: None,
            warned: Arc::new(Mutex::new(HashSet::new())),
        }
    }

    /// Promotes into `long_term` instead.
    pub fn long_term_memory(mut self, long_term: LongTermMemory) -> Self {
        self.long_term = long_term;
        self
    }

    /// Summarises with `summarizer` instead.
    pub fn summarizer(mut self, summarizer: Arc<dyn Summarizer>) -> Self {
        self.summarizer = summarizer;
        self
    }

    /// Extracts new messages in the background through each session's strategy
    /// (`Some`; the extractor then also runs the indexing of messages), or not at all
    /// (`None`, the default of [`new`](Self::new)).
    pub fn extract_with(mut self, extractor: Option<Extractor>) -> Self {
        if let Some(extractor) = &extractor {
            self.background = extractor.clone();
        }
        self.extractor = extractor;
        self
    }

    /// Runs the background work of `PUT`s (indexing, and extraction when on) on
    /// `background`: its queue limit, wait and concurrency apply. Set it before
    /// [`extract_with`](Self::extract_with), which names the extractor that runs it.
    pub fn background(mut self, background: Extractor) -> Self {
        self.background = background;
        self
    }

    /// Whether a generation model is configured (the `custom` strategy needs one).
    pub fn has_model(mut self, on: bool) -> Self {
        self.has_model = on;
        self
    }

    /// The message-count window applied to every session (`Some`, the reference
    /// server's `WINDOW_SIZE`), or only to sessions with no token window, at
    /// [`DEFAULT_WINDOW_SIZE`] (`None`).
    pub fn window_size(mut self, window_size: Option<usize>) -> Self {
        self.window_size = window_size;
        self
    }

    /// Completes when all background work scheduled so far (indexing, extraction) is done.
    pub async fn settle(&self) {
        self.background.settle().await;
    }

    /// Completes when the background work of `user_id`'s `PUT`s answered so far is done,
    /// or after `at_most`; whether it is done.
    pub async fn caught_up(&self, user_id: Option<&str>, at_most: std::time::Duration) -> bool {
        self.background.caught_up(user_id, at_most).await
    }

    /// Folds the session into its windows: the token window the scope names, and the
    /// message-count window (always when set, else when there is no token window).
    async fn fit(
        &self,
        memory: &mut WorkingMemoryBody,
        window: Option<u64>,
    ) -> Result<(), ApiError> {
        if let Some(window) = window {
            window::summarize_if_needed(memory, window, self.summarizer.as_ref()).await?;
        }
        let count = match (self.window_size, window) {
            (Some(n), _) => Some(n),
            (None, None) => Some(DEFAULT_WINDOW_SIZE),
            (None, Some(_)) => None,
        };
        if let Some(count) = count {
            window::summarize_by_count(memory, count, self.summarizer.as_ref()).await?;
        }
        Ok(())
    }

    /// Logs, once per session, that messages came without `created_at`.
    fn warn_missing_times(&self, session_id: &str, memory: &WorkingMemoryBody) {
        let missing = memory
            .messages
            .iter()
            .filter(|m| m.created_at_missing)
            .count();
        if missing == 0 {
            return;
        }
        let key = format!(
            "{}\u{1f}{}",
            memory.namespace.as_deref().unwrap_or(""),
            ids::session_key(memory.user_id.as_deref(), session_id)
        );
        let mut warned = self.warned.lock();
        if warned.contains(&key) {
            return;
        }
        if warned.len() >= MAX_WARNED_SESSIONS {
            warned.clear();
        }
        warned.insert(key);
        drop(warned);
        tracing::warn!(
            session = session_id,
            messages = missing,
            "messages without created_at: the server set it to the time they arrived; \
             send created_at with every message (it will become required)"
        );
    }

    /// Indexes every message put into a session as an episode in `episodes` and rebuilds
    /// expired or missing sessions from them (`Some`), or neither (`None`, the default of
    /// [`new`](Self::new)).
    pub fn index_messages(mut self, episodes: Option<Arc<dyn EpisodeStore>>) -> Self {
        self.index = episodes.map(|e| MessageIndex::new(e, Arc::clone(&self.kv)));
        self
    }

    /// Whether messages are indexed as episodes.
    pub fn indexes_messages(&self) -> bool {
        self.index.is_some()
    }

    /// The session, or `None` when it does not exist (or expired) and, with indexing on,
    /// its messages were never indexed: an expired or missing session whose messages were
    /// indexed is rebuilt from them (and summarised to the window the scope names).
    pub async fn get(
        &self,
        session_id: &str,
        scope: &SessionScope<'_>,
    ) -> Result<Option<WorkingMemoryResponse>, ApiError> {
        ids::check("session_id", session_id)?;
        scope.check()?;
        if let Some(memory) = self
            .load(session_id, scope.namespace, scope.user_id)
            .await?
        {
            return Ok(Some(respond(memory, scope.window(), Some(false))));
        }
        let Some(index) = &self.index else {
            return Ok(None);
        };
        // the episodes of the user's last PUTs may still be on their way
        self.caught_up(scope.user_id, super::service::READ_YOUR_WRITES_WAIT)
            .await;
        let Some(messages) = index
            .rebuild(session_id, scope.namespace, scope.user_id)
            .await?
        else {
            return Ok(None);
        };
        let mut memory = WorkingMemoryBody {
            messages,
            memories: Vec::new(),
            data: None,
            context: None,
            user_id: scope.user_id.map(str::to_owned),
            tokens: 0,
            session_id: Some(session_id.to_owned()),
            namespace: scope.namespace.map(str::to_owned),
            long_term_memory_strategy: super::wire::default_strategy(),
            ttl_seconds: None,
            last_accessed: Utc::now(),
        };
        let window = scope.window();
        self.fit(&mut memory, window).await?;
        memory.tokens = window::token_count(&memory);
        Ok(Some(respond(memory, window, Some(false))))
    }

    /// The stored session, if any.
    async fn load(
        &self,
        session_id: &str,
        namespace: Option<&str>,
        user_id: Option<&str>,
    ) -> Result<Option<WorkingMemoryBody>, ApiError> {
        let Some(entry) = self
            .kv
            .get(
                &ids::sessions_namespace(namespace),
                &ids::session_key(user_id, session_id),
            )
            .await?
        else {
            return Ok(None);
        };
        serde_json::from_value(entry.content)
            .map(Some)
            .map_err(|e| {
                ApiError::Store(agentmemory_core::MemoryError::invalid(
                    "stored working memory",
                    e.to_string(),
                ))
            })
    }

    /// Replaces the session with `memory`: summarises it when over the window, promotes
    /// its unpersisted structured memories to long-term memory, stores it.
    pub async fn put(
        &self,
        session_id: &str,
        mut memory: WorkingMemoryBody,
        scope: &SessionScope<'_>,
    ) -> Result<WorkingMemoryResponse, ApiError> {
        ids::check("session_id", session_id)?;
        scope.check()?;
        // the query's user and namespace win over the body's
        if let Some(user) = scope.user_id {
            memory.user_id = Some(user.to_owned());
        }
        if let Some(ns) = scope.namespace {
            memory.namespace = Some(ns.to_owned());
        }
        ids::check_opt("user_id", memory.user_id.as_deref())?;
        ids::check_opt("namespace", memory.namespace.as_deref())?;
        for message in &memory.messages {
            ids::check("message id", &message.id)?;
        }
        for record in &memory.memories {
            LongTermMemory::validate(record)?;
        }
        let strategy = Strategy::parse(&memory.long_term_memory_strategy, self.has_model)?;
        if let Some(ttl) = scope.ttl_seconds {
            memory.ttl_seconds = Some(ttl);
        }
        memory.session_id = Some(session_id.to_owned());
        memory.last_accessed = Utc::now();
        self.warn_missing_times(session_id, &memory);

        let long_term = self.long_term.is_enabled();
        let index = self.index.as_ref().filter(|_| long_term);
        let extractor = self.extractor.as_ref().filter(|_| long_term);
        let to_extract = extractor.is_some() && memory.messages.iter().any(|m| !m.extracted());
        let to_index = index.is_some() && memory.messages.iter().any(|m| m.persisted_at.is_none());
        let runner = &self.background;
        // the queue's place is taken before anything of this request is written (the
        // session with its messages marked extracted and indexed, promoted memories): a
        // request dropped while it waits, or refused because the queue stayed full, has
        // written nothing
        let place = if to_extract || to_index {
            Some(runner.reserve().await?)
        } else {
            None
        };
        let previous = if to_extract || to_index {
            self.load(
                session_id,
                memory.namespace.as_deref(),
                memory.user_id.as_deref(),
            )
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(%error, session = session_id, "the stored session is unreadable; it is replaced");
                None
            })
        } else {
            None
        };
        let indexing = match index.filter(|_| to_index) {
            Some(index) => index
                .plan(session_id, &mut memory, previous.as_ref())
                .map(|work| (index.clone(), work)),
            None => None,
        };
        let job = background_job(
            session_id,
            &mut memory,
            previous.as_ref(),
            strategy,
            to_extract,
            indexing,
        );

        let window = scope.window();
        self.fit(&mut memory, window).await?;
        if long_term {
            self.promote(&mut memory).await?;
        }
        memory.tokens = window::token_count(&memory);

        let mut entry = MemoryEntry::new(
            MemoryScope::Conversation,
            ids::session_key(memory.user_id.as_deref(), session_id),
            serde_json::to_value(&memory).map_err(|e| {
                ApiError::Store(agentmemory_core::MemoryError::invalid(
                    "working memory",
                    e.to_string(),
                ))
            })?,
        );
        if let Some(ttl) = memory.ttl_seconds.filter(|t| *t > 0) {
            let ttl = chrono::Duration::seconds(ttl.min(i64::MAX as u64 / 1000) as i64);
            entry.expires_at = Utc::now().checked_add_signed(ttl);
        }
        self.kv
            .put(&ids::sessions_namespace(memory.namespace.as_deref()), entry)
            .await?;
        if let (Some(job), Some(place)) = (job, place) {
            runner.schedule(place, job);
        }
        Ok(respond(memory, window, None))
    }

    /// Writes unpersisted structured memories to long-term memory and stamps them.
    async fn promote(&self, memory: &mut WorkingMemoryBody) -> Result<(), ApiError> {
        let pending: Vec<_> = memory
            .memories
            .iter_mut()
            .filter(|m| m.persisted_at.is_none())
            .map(|m| {
                if m.user_id.is_none() {
                    m.user_id = memory.user_id.clone();
                }
                if m.namespace.is_none() {
                    m.namespace = memory.namespace.clone();
                }
                if m.session_id.is_none() {
                    m.session_id = memory.session_id.clone();
                }
                m.clone()
            })
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        self.long_term.create(pending).await?;
        let now = Utc::now();
        for m in memory
            .memories
            .iter_mut()
            .filter(|m| m.persisted_at.is_none())
        {
            m.persisted_at = Some(now);
        }
        Ok(())
    }

    /// Deletes the session; whether it existed. With indexing on, the deleted session is
    /// not rebuilt afterwards (its episodes stay, as long-term memory).
    pub async fn delete(
        &self,
        session_id: &str,
        scope: &SessionScope<'_>,
    ) -> Result<bool, ApiError> {
        ids::check("session_id", session_id)?;
        scope.check()?;
        if let Some(index) = &self.index {
            // The user's earlier PUTs are indexed behind their answers: let them land
            // first, or one of them would record the session again after it is forgotten
            // and a read would rebuild it.
            self.caught_up(scope.user_id, super::service::READ_YOUR_WRITES_WAIT)
                .await;
            index
                .forget_session(session_id, scope.namespace, scope.user_id)
                .await?;
        }
        Ok(self
            .kv
            .delete(
                &ids::sessions_namespace(scope.namespace),
                &ids::session_key(scope.user_id, session_id),
            )
            .await?)
    }

    /// Session ids of `namespace` (of `user_id` when given), sorted, one page.
    pub async fn list(
        &self,
        namespace: Option<&str>,
        user_id: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<SessionList, ApiError> {
        ids::check_opt("namespace", namespace)?;
        ids::check_opt("user_id", user_id)?;
        let entries = self.kv.list(&ids::sessions_namespace(namespace)).await?;
        let mut sessions: Vec<String> = entries
            .iter()
            .filter_map(|e| ids::split_session_key(&e.key))
            .filter(|(user, _)| user_id.is_none_or(|u| u == *user))
            .map(|(_, session)| session.to_owned())
            .collect();
        sessions.sort();
        sessions.dedup();
        let total = sessions.len();
        let sessions = sessions.into_iter().skip(offset).take(limit).collect();
        Ok(SessionList { sessions, total })
    }
}

/// The background job of a `PUT`: the episodes of its new messages (`indexing`) and,
/// when `extract`, the messages neither the client nor the stored session (`previous`)
/// marks extracted, which are marked now. `None` when there is nothing to do.
fn background_job(
    session_id: &str,
    memory: &mut WorkingMemoryBody,
    previous: Option<&WorkingMemoryBody>,
    strategy: Strategy,
    extract: bool,
    indexing: Option<(MessageIndex, IndexWork)>,
) -> Option<Job> {
    let mut fresh = Vec::new();
    if extract {
        let done: HashSet<&str> = previous
            .into_iter()
            .flat_map(|p| &p.messages)
            .filter(|m| m.extracted())
            .map(|m| m.id.as_str())
            .collect();
        for message in &mut memory.messages {
            if message.extracted() {
                continue;
            }
            if !done.contains(message.id.as_str()) {
                fresh.push(message.clone());
            }
            message.discrete_memory_extracted = "t".to_owned();
        }
    }
    if fresh.is_empty() && indexing.is_none() {
        return None;
    }
    Some(Job {
        session_id: session_id.to_owned(),
        namespace: memory.namespace.clone(),
        user_id: memory.user_id.clone(),
        strategy,
        all: if fresh.is_empty() {
            Vec::new()
        } else {
            memory.messages.clone()
        },
        fresh,
        context: memory.context.clone(),
        index: indexing,
    })
}

fn respond(
    memory: WorkingMemoryBody,
    window: Option<u64>,
    new_session: Option<bool>,
) -> WorkingMemoryResponse {
    let (total, until) = match window {
        Some(w) => {
            let (t, u) = window::percentages(memory.tokens, w);
            (Some(t), Some(u))
        }
        None => (None, None),
    };
    WorkingMemoryResponse {
        memory,
        context_percentage_total_used: total,
        context_percentage_until_summarization: until,
        new_session,
    }
}
