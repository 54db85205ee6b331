//! Episodes: what was said, by whom, in which conversation, and when.
//!
//! Facts are what the rules could turn into attributes; episodes are everything else a
//! conversation leaves behind. Every message a user's conversations log is also an
//! [`Episode`] of that user — its text, role, conversation, the time it was said, and
//! the dates its words name ("yesterday" said on 3 May is 2 May) — searchable with the
//! same hybrid retrieval as documents, across all of the user's conversations.
//!
//! An [`EpisodeStore`] holds them. [`VectorEpisodeStore`] builds one on any
//! [`VectorStore`](crate::VectorStore), so every backend that stores documents stores
//! episodes with the same text analysis, embedder and search; [`InMemoryEpisodeStore`]
//! is that over an [`InMemoryVectorStore`](crate::InMemoryVectorStore).
//!
//! ```
//! # tokio_test::block_on(async {
//! use agentmemory_core::episodes::{Episode, EpisodeQuery, EpisodeStore, InMemoryEpisodeStore};
//! use agentmemory_core::{Message, Role};
//! use chrono::{TimeZone, Utc};
//!
//! let store = InMemoryEpisodeStore::new();
//! let said = Utc.with_ymd_and_hms(2026, 5, 3, 18, 0, 0).unwrap();
//! let message = Message::user("I went to a pottery class yesterday").at(said);
//! store.add("alice", vec![Episode::from_message("alice", "c1", &message)]).await?;
//!
//! let now = Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap();
//! let found = store.search("alice", &EpisodeQuery::new("pottery", 3).at(now)).await?;
//! assert_eq!(found[0].episode.role, Role::User);
//! assert_eq!(found[0].episode.when[0].start.date_naive().to_string(), "2026-05-02");
//! # Ok::<_, agentmemory_core::MemoryError>(())
//! # }).unwrap();
//! ```

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::di::Container;
use crate::error::Result;
use crate::message::{Message, Role};

mod id;
mod memory;
mod rank;
mod vector;

pub use id::{episode_id, fnv1a_128, stable_ulid};
pub use memory::InMemoryEpisodeStore;
pub use vector::VectorEpisodeStore;

/// The episode store of `container`: the registered [`EpisodeStore`]; else episodes kept
/// in the registered [`VectorStore`](crate::VectorStore) (when exactly one, or a default,
/// is registered); else an [`InMemoryEpisodeStore`]. A store made here is registered in
/// the container under `"episodes"`, so every session of the container shares it.
pub fn resolve(container: &Container) -> Result<Arc<dyn EpisodeStore>> {
    if let Some(store) = container.resolve_optional::<dyn EpisodeStore>(None)? {
        return Ok(store);
    }
    let store: Arc<dyn EpisodeStore> =
        match container.resolve_optional::<dyn crate::VectorStore>(None) {
            Ok(Some(vectors)) => Arc::new(VectorEpisodeStore::new(vectors)),
            _ => Arc::new(InMemoryEpisodeStore::new()),
        };
    container.register_episodes("episodes", Arc::clone(&store));
    Ok(store)
}

/// A date or period the text of an episode names, resolved against the time it was said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct When {
    /// The words that named it ("yesterday", "last May").
    pub phrase: String,
    /// Start of the period (inclusive).
    pub start: DateTime<Utc>,
    /// End of the period (exclusive).
    pub end: DateTime<Utc>,
    /// A short label of the period ("2026-05-02", "May 2026").
    pub label: String,
}

impl When {
    /// Every time expression of `text`, resolved against `said`.
    pub fn find(text: &str, said: DateTime<Utc>) -> Vec<When> {
        crate::time::resolve(text, said)
            .into_iter()
            .map(|m| When {
                label: m.span.label(),
                phrase: m.text,
                start: m.span.start,
                end: m.span.end,
            })
            .collect()
    }
}

/// One message of a user's conversations, as remembered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Episode {
    /// Sortable id: the time it was said, then the message's own randomness (see
    /// [`episode_id`]); ids in byte order are episodes in time order.
    pub id: String,
    /// Whose conversation it is.
    pub user_id: String,
    /// The conversation it belongs to.
    pub conversation_id: String,
    /// The id of the logged message.
    pub message_id: String,
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub text: String,
    /// When it was said.
    pub observed_at: DateTime<Utc>,
    /// The dates its words name, resolved against `observed_at`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<When>,
    /// The message it answers (the other side's message just before it), searched with
    /// it but not rendered: "A huge trout!" is found by "what did my son catch?" when it
    /// answered "What did he catch?".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl Episode {
    /// The episode of `message`, said in `conversation_id` of `user_id` at the message's
    /// `created_at`.
    pub fn from_message(user_id: &str, conversation_id: &str, message: &Message) -> Self {
        let text = message.text();
        let observed_at = message.created_at;
        Self {
            id: episode_id(observed_at, message.id),
            user_id: user_id.to_owned(),
            conversation_id: conversation_id.to_owned(),
            message_id: message.id.to_string(),
            role: message.role,
            when: When::find(&text, observed_at),
            text,
            observed_at,
            context: None,
        }
    }

    /// Sets the message this one answers (see [`context`](Self::context)); at most
    /// [`MAX_CONTEXT_CHARS`] characters of it are kept.
    pub fn answering(mut self, previous: &str) -> Self {
        let previous = previous.trim();
        if !previous.is_empty() {
            let cut = previous
                .char_indices()
                .nth(MAX_CONTEXT_CHARS)
                .map_or(previous.len(), |(i, _)| i);
            self.context = Some(previous[..cut].to_owned());
        }
        self
    }
}

/// At most this many characters of the message an episode answers are kept with it.
pub const MAX_CONTEXT_CHARS: usize = 300;

/// Why an episode was recalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RecallReason {
    /// Its words or meaning match the query.
    Match,
    /// It falls in the period the query names.
    Time,
    /// Both.
    MatchAndTime,
    /// It follows a match in its conversation (the reply, the rest of a story).
    FollowUp,
    /// A match answers it: the match's own words share nothing with the query, the
    /// message it answers does.
    Answered,
}

/// An episode found by a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScoredEpisode {
    /// The episode.
    pub episode: Episode,
    /// How well its words and meaning match the query (`0.0` = not at all).
    pub relevance: f32,
    /// The rank score: relevance, raised when the episode falls in the asked period.
    pub score: f32,
    /// Why it was found.
    pub reason: RecallReason,
}

/// What to search for among a user's episodes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EpisodeQuery {
    /// The query text; its time expressions name the period searched.
    pub text: String,
    /// At most this many episodes.
    pub k: usize,
    /// The moment of the question, against which "last week" is resolved (default: now).
    pub at: Option<DateTime<Utc>>,
    /// Message ids never to return (those already in the model's window).
    pub exclude: Vec<String>,
    /// Only episodes of this conversation.
    pub conversation: Option<String>,
    /// A precomputed query embedding.
    pub embedding: Option<Vec<f32>>,
    /// Only episodes said at or before this moment (an as-of read: the memory as it was).
    pub said_until: Option<DateTime<Utc>>,
}

impl EpisodeQuery {
    /// The best `k` episodes for `text`.
    pub fn new(text: impl Into<String>, k: usize) -> Self {
        Self {
            text: text.into(),
            k,
            at: None,
            exclude: Vec::new(),
            conversation: None,
            embedding: None,
            said_until: None,
        }
    }

    /// Resolves the query's time expressions against `at`.
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.at = Some(at);
        self
    }

    /// Leaves out the messages with these ids.
    pub fn excluding(mut self, ids: impl IntoIterator<Item = String>) -> Self {
        self.exclude.extend(ids);
        self
    }

    /// Only episodes said at or before `until`: what could have been recalled then.
    pub fn said_until(mut self, until: DateTime<Utc>) -> Self {
        self.said_until = Some(until);
        self
    }

    /// Only episodes of `conversation_id`.
    pub fn in_conversation(mut self, conversation_id: impl Into<String>) -> Self {
        self.conversation = Some(conversation_id.into());
        self
    }
}

/// How many episodes a user keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Retention {
    /// Keep at most this many per user, dropping the oldest (`None`: all).
    pub max_per_user: Option<usize>,
    /// Drop episodes said longer ago than this (`None`: never).
    pub max_age: Option<std::time::Duration>,
}

impl Retention {
    /// Keep everything (the default).
    pub fn all() -> Self {
        Self::default()
    }

    /// Keep at most `n` episodes per user.
    pub fn last(n: usize) -> Self {
        Self {
            max_per_user: Some(n),
            max_age: None,
        }
    }

    /// Also drop episodes older than `age`.
    pub fn max_age(mut self, age: std::time::Duration) -> Self {
        self.max_age = Some(age);
        self
    }
}

/// A user's episodes, searchable across all of their conversations.
///
/// The contract (stated by `testkit::episodes`): users never see each other's episodes;
/// adding an episode whose id is stored is a no-op; [`list`](Self::list) is in time
/// order; [`search`](Self::search) ranks by words and meaning (hybrid where the backend
/// embeds) and by time when the query names a period, and never returns an episode of
/// relevance zero outside the named period; retention drops the oldest first;
/// [`forget`](Self::forget) deletes every episode of the user.
#[async_trait]
pub trait EpisodeStore: Send + Sync {
    /// Stores `episodes` of `user_id` (ids already stored are skipped).
    async fn add(&self, user_id: &str, episodes: Vec<Episode>) -> Result<()>;
    /// The best episodes for `query`, best first.
    async fn search(&self, user_id: &str, query: &EpisodeQuery) -> Result<Vec<ScoredEpisode>>;
    /// The user's episodes said in `[from, to)` (either bound open when `None`), oldest
    /// first, at most `limit`.
    async fn list(
        &self,
        user_id: &str,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Episode>>;
    /// How many episodes the user has.
    async fn len(&self, user_id: &str) -> Result<usize>;
    /// Applies `retention` to the user's episodes at `now`; how many were dropped.
    async fn retain(
        &self,
        user_id: &str,
        retention: Retention,
        now: DateTime<Utc>,
    ) -> Result<usize>;
    /// Deletes every episode of the user; how many there were.
    async fn forget(&self, user_id: &str) -> Result<usize>;
}
