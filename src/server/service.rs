//! [`MemoryService`]: the stores of one [`Container`] behind the server, shared by the
//! REST routes and the MCP tools.

use std::sync::Arc;

use crate::memory_tool::MemoryFiles;
use agentmemory_core::episodes::{EpisodeStore, VectorEpisodeStore};
use agentmemory_core::summarize::{ExtractiveSummarizer, LlmSummarizer, Summarizer};
use agentmemory_core::{Container, ConversationStore, KvStore, UserMemoryStore, VectorStore};

use super::background::Extractor;
use super::long_term::LongTermMemory;
use super::settings::ServerSettings;
use super::working::WorkingMemoryStore;

/// How long a read of a user's long-term memory waits for the background work of the
/// user's earlier `PUT`s (then it reads what is there).
pub const READ_YOUR_WRITES_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Working and long-term memory over the stores of a container.
///
/// The [settings](ServerSettings) start at their defaults (everything on, offline);
/// [`with_settings`](Self::with_settings) applies others, e.g.
/// [`ServerSettings::from_env`] as `agentmem serve` does. New session messages are
/// extracted in the background through each session's `long_term_memory_strategy` (the
/// `strategy` module); [`settle`](Self::settle) waits for that.
///
/// Working-memory messages are indexed as episodes (and expired sessions rebuilt from
/// them) by default: `index_all_messages_in_long_term_memory` of the reference server;
/// [`index_all_messages(false)`](Self::index_all_messages) turns it off.
#[derive(Clone)]
pub struct MemoryService {
    /// Sessions.
    pub working: WorkingMemoryStore,
    /// Facts and documents.
    pub long_term: LongTermMemory,
    /// The users' earlier messages, recalled by the memory prompt.
    pub episodes: Arc<dyn EpisodeStore>,
    /// The files of Claude's memory tool (`/v1/memory-tool`, the MCP `memory` tool).
    pub memory_files: MemoryFiles,
    /// Anthropic's memory stores (`/v1/memory_stores`).
    pub(crate) memory_stores: super::anthropic::MemoryStores,
    /// The sessions and events of the Redis Agent Memory data plane (`/v1/stores/`).
    pub(crate) session_events: super::redis_agent_memory::SessionEvents,
}

impl MemoryService {
    /// The service over the default stores of `container` (as [`StoreUrl::open`] registers
    /// them) and its episode store ([`episodes::resolve`]), summarising with agentmem's
    /// offline [`ExtractiveSummarizer`].
    ///
    /// [`StoreUrl::open`]: agentmemory_stores::StoreUrl::open
    /// [`episodes::resolve`]: agentmemory_core::episodes::resolve
    pub fn from_container(container: &Container) -> agentmemory_core::Result<Self> {
        let kv = container.resolve::<dyn KvStore>(None)?;
        let facts = container.resolve::<dyn UserMemoryStore>(None)?;
        let vectors = container.resolve::<dyn VectorStore>(None)?;
        // resolved so that a container without a conversation store fails at start-up like
        // every other agentmem entry point
        let _ = container.resolve::<dyn ConversationStore>(None)?;
        let episodes = agentmemory_core::episodes::resolve(container)?;
        Ok(
            Self::new(kv, facts, vectors, Arc::new(ExtractiveSummarizer::new()))
                .with_episodes(episodes),
        )
    }

    /// The service over these stores; episodes are kept in `vectors`
    /// ([`VectorEpisodeStore`]).
    pub fn new(
        kv: Arc<dyn KvStore>,
        facts: Arc<dyn UserMemoryStore>,
        vectors: Arc<dyn VectorStore>,
        summarizer: Arc<dyn Summarizer>,
    ) -> Self {
        let episodes: Arc<dyn EpisodeStore> = Arc::new(VectorEpisodeStore::new(vectors.clone()));
        let memory_files = MemoryFiles::new(vectors.clone(), kv.clone());
        let memory_stores = super::anthropic::MemoryStores::new(kv.clone(), vectors.clone());
        let session_events = super::redis_agent_memory::SessionEvents::new(kv.clone());
        let long_term = LongTermMemory::new(facts, vectors, kv.clone());
        let working = WorkingMemoryStore::new(kv, summarizer, long_term.clone())
            .index_messages(Some(Arc::clone(&episodes)));
        Self {
            working,
            long_term,
            episodes,
            memory_files,
            memory_stores,
            session_events,
        }
        .with_settings(ServerSettings::default())
    }

    /// Applies `settings`: long-term memory on or off, background extraction, the
    /// message-count window, and the generation model, which then summarises (with the
    /// extractive summariser as fallback), extracts and runs `custom` prompts.
    ///
    /// ```
    /// # tokio_test::block_on(async {
    /// use agentmemory::server::{MemoryService, ServerSettings};
    ///
    /// let container = agentmemory::stores::StoreUrl::Memory.open().await.unwrap();
    /// let settings = ServerSettings::from_lookup(|name| {
    ///     (name == "LONG_TERM_MEMORY").then(|| "false".to_owned())
    /// })
    /// .unwrap();
    /// let service = MemoryService::from_container(&container).unwrap().with_settings(settings);
    /// assert!(!service.long_term.is_enabled());
    /// # });
    /// ```
    pub fn with_settings(mut self, settings: ServerSettings) -> Self {
        self.long_term = self.long_term.clone().enabled(settings.long_term_memory);
        let background = Extractor::new(self.long_term.clone(), settings.model.clone())
            .queue_limit(settings.extraction_queue)
            .queue_wait(settings.extraction_queue_wait)
            .lines_at_once(settings.background_concurrency)
            .concurrency(settings.extraction_concurrency);
        let extractor =
            (settings.long_term_memory && settings.extraction).then(|| background.clone());
        let mut working = self
            .working
            .clone()
            .long_term_memory(self.long_term.clone())
            .background(background)
            .extract_with(extractor)
            .window_size(settings.window_size)
            .has_model(settings.model.is_some());
        if let Some(model) = &settings.model {
            working = working.summarizer(Arc::new(
                LlmSummarizer::new(Arc::clone(&model.model)).with_model_name(model.name.clone()),
            ));
        }
        self.working = working;
        self
    }

    /// Completes when all background work scheduled so far (indexing of messages,
    /// extraction) is done.
    pub async fn settle(&self) {
        self.working.settle().await;
    }

    /// Completes when the background work of `user_id`'s `PUT`s answered so far is done,
    /// or after [`READ_YOUR_WRITES_WAIT`]: what the memory prompt and long-term search of
    /// a user wait for, so that they see what the user's earlier `PUT`s put in.
    pub async fn caught_up(&self, user_id: Option<&str>) -> bool {
        self.working.caught_up(user_id, READ_YOUR_WRITES_WAIT).await
    }

    /// Keeps and recalls episodes in `episodes` instead.
    pub fn with_episodes(mut self, episodes: Arc<dyn EpisodeStore>) -> Self {
        let on = self.working.indexes_messages();
        self.episodes = episodes;
        self.index_all_messages(on)
    }

    /// Whether every working-memory message is indexed as an episode of the session's
    /// user and expired or missing sessions are rebuilt from them (the reference server's
    /// `index_all_messages_in_long_term_memory`; on by default).
    ///
    /// ```
    /// # tokio_test::block_on(async {
    /// use agentmemory::server::MemoryService;
    ///
    /// let container = agentmemory::stores::StoreUrl::Memory.open().await.unwrap();
    /// let service = MemoryService::from_container(&container).unwrap();
    /// assert!(service.working.indexes_messages());
    /// assert!(!service.index_all_messages(false).working.indexes_messages());
    /// # });
    /// ```
    pub fn index_all_messages(mut self, on: bool) -> Self {
        self.working = self
            .working
            .index_messages(on.then(|| Arc::clone(&self.episodes)));
        self
    }
}
