//! `ConversationStore`: the append-only event log of each conversation.
//!
//! A [`Session`](crate::Session) appends every user message, reply, tool result, summary
//! update and fact change before it acknowledges the turn; replaying the log rebuilds the
//! short-term memory exactly as it was.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::buffer::ShortTermSnapshot;
use crate::error::{MemoryError, Result};
use crate::facts::FactChange;
use crate::message::Message;

mod event_de;
mod export;
pub(crate) mod known;
mod replay;
mod summary;

use known::without_known_messages;

pub use export::{export, import, ConversationExport, EXPORT_VERSION};
pub use replay::{apply, replay, Owner};
pub use summary::ConversationSummary;

/// Something that happened in a conversation.
///
/// In JSON, an object tagged by `type`: `{"type": "message", "message": {...}}`.
/// (Deserialisation is written by hand in `event_de.rs`, to skip the buffering the
/// derived code does for tagged enums.)
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConversationEvent {
    /// The conversation was opened for a user by an agent.
    Started {
        /// The user.
        user_id: String,
        /// The agent's name.
        agent: String,
    },
    /// A message entered the short-term memory.
    Message {
        /// The message.
        message: Message,
    },
    /// Older messages were folded into the summary; the buffer kept the `keep_recent`
    /// most recent non-system messages.
    SummaryUpdated {
        /// The new running summary.
        summary: String,
        /// How many recent non-system messages stayed verbatim.
        keep_recent: usize,
    },
    /// Facts about the user changed as a result of the turn.
    FactsChanged {
        /// What changed.
        changes: Vec<FactChange>,
    },
    /// The whole short-term state at this point; replay may start here.
    Snapshot {
        /// The state.
        snapshot: ShortTermSnapshot,
    },
    /// The user message `message_id` was never answered (its turn was abandoned and
    /// another message came): it left the short-term memory, so the window never holds
    /// two user messages in a row. Its own `Message` event stays in the log.
    Unanswered {
        /// The id of the user message.
        message_id: ulid::Ulid,
    },
    /// The facts of these user messages were extracted and reconciled (whatever they
    /// changed): applying them again is a no-op, and a message logged without one was
    /// not applied yet (an interrupted ingest), so the next run completes it.
    FactsApplied {
        /// The ids of the messages.
        message_ids: Vec<ulid::Ulid>,
    },
    /// A change to a knowledge graph (the facade's `agentmemory::graph`): the graph's log
    /// is a log of these, kept apart from every conversation (replaying a conversation
    /// ignores them). The change is kept as the graph wrote it; the graph reads it back.
    GraphChanged {
        /// The version of the change's format (the graph's `GRAPH_CHANGE_VERSION` when
        /// written).
        version: u32,
        /// What changed, as the graph's JSON (`{"op": "create_entities", ...}`).
        change: serde_json::Value,
    },
}

/// What [`ConversationStore::append_if`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendIf {
    /// The log was at the expected seq: the events were appended (those not already
    /// logged); the seq of the last event now.
    Appended {
        /// The log's last seq after the append.
        last_seq: u64,
    },
    /// The log had moved on (or was not there): nothing was written.
    Conflict {
        /// The log's last seq, which the caller has to read up to before trying again.
        last_seq: u64,
    },
}

impl AppendIf {
    /// The log's last seq, whatever happened.
    pub fn last_seq(self) -> u64 {
        match self {
            AppendIf::Appended { last_seq } | AppendIf::Conflict { last_seq } => last_seq,
        }
    }
}

/// An event as stored: its position in the log and when it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Position in the conversation's log, starting at 1, strictly increasing.
    pub seq: u64,
    /// When the store accepted it.
    pub at: DateTime<Utc>,
    /// The event.
    pub event: ConversationEvent,
}

/// An append-only log of [`ConversationEvent`]s per conversation id.
///
/// Appends of one call are atomic and contiguous: a reader sees all of them or none,
/// and no other writer's events interleave with them.
///
/// Appending messages is idempotent by message id: a [`ConversationEvent::Message`]
/// whose message id the log already holds (or that appears earlier in the same batch)
/// is skipped, so a turn retried after a failure never logs its user message twice.
/// Other events are always appended. [`message_ids`](crate::store_support::message_ids) gives the ids a batch carries.
#[async_trait]
pub trait ConversationStore: Send + Sync {
    /// Appends `events` to the log of `conversation_id`; returns the seq of the last one
    /// (or the current last seq when `events` is empty).
    async fn append(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64>;
    /// Appends `events` only when the log's last seq is `expected_last_seq` (0 for a log
    /// that does not exist yet), the check and the write one atomic step: a
    /// compare-and-append. Two writers that read the same log and both append on top of
    /// it cannot both succeed; the second gets [`AppendIf::Conflict`] with the last seq it
    /// would have to read up to, and nothing of its batch is written. Messages the log
    /// already holds are skipped as [`append`](Self::append) skips them.
    ///
    /// The default refuses with [`MemoryError::Unsupported`]: a check and an append in two
    /// steps would let two writers both pass the check. Every store of this workspace
    /// implements it.
    ///
    /// ```
    /// use agentmemory_core::conversation::{AppendIf, ConversationEvent, ConversationStore, InMemoryConversationStore};
    /// use agentmemory_core::Message;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> agentmemory_core::Result<()> {
    /// let log = InMemoryConversationStore::new();
    /// let say = |t: &str| vec![ConversationEvent::Message { message: Message::user(t) }];
    /// assert_eq!(log.append_if("c", 0, say("first")).await?, AppendIf::Appended { last_seq: 1 });
    /// // Another writer read the log when it was empty too: refused, nothing written.
    /// assert_eq!(log.append_if("c", 0, say("also first")).await?, AppendIf::Conflict { last_seq: 1 });
    /// assert_eq!(log.load("c").await?.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    async fn append_if(
        &self,
        conversation_id: &str,
        expected_last_seq: u64,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        let _ = (conversation_id, expected_last_seq, events);
        Err(MemoryError::unsupported(
            std::any::type_name::<Self>(),
            "append to a conversation only at an expected length",
            "implement ConversationStore::append_if with the check and the write in one step",
        ))
    }
    /// Every event of the conversation with `seq > after`, in order.
    async fn load_since(&self, conversation_id: &str, after: u64) -> Result<Vec<StoredEvent>>;
    /// Every event of the conversation, in order (empty when unknown).
    async fn load(&self, conversation_id: &str) -> Result<Vec<StoredEvent>> {
        self.load_since(conversation_id, 0).await
    }
    /// The ids of all stored conversations, sorted.
    async fn list_conversations(&self) -> Result<Vec<String>>;
    /// A [`ConversationSummary`] of every stored conversation, sorted by id: what a
    /// listing shows, without replaying the logs.
    ///
    /// The default loads each log in turn; backends that can count in the store (SQLite)
    /// override it, so listing 1,000 long conversations does not read every event.
    async fn conversation_summaries(&self) -> Result<Vec<ConversationSummary>> {
        let mut out = Vec::new();
        for id in self.list_conversations().await? {
            let events = self.load(&id).await?;
            if !events.is_empty() {
                out.push(ConversationSummary::of(&id, &events));
            }
        }
        Ok(out)
    }
    /// Deletes a conversation's log; whether it existed.
    async fn delete(&self, conversation_id: &str) -> Result<bool>;
    /// Drops the events with `seq < before_seq` (used after a snapshot event); how many.
    async fn compact(&self, conversation_id: &str, before_seq: u64) -> Result<usize>;
    /// Replaces the log of `conversation_id` with `events`, atomically: readers see the
    /// old log or the new one, never a mix or an empty log in between. Afterwards the log
    /// holds exactly `events` (a message repeated inside them is kept once), numbered from
    /// seq 1, and the message ids of the replaced events are forgotten. Saving no events
    /// deletes the conversation. Returns the seq of the last event (0 when none).
    ///
    /// No default: deleting then appending would let a reader see the conversation
    /// missing, and a crash between the two would lose it.
    async fn save(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64>;
    /// Deletes every conversation this store holds; how many there were (the `clear()` of
    /// other conversation stores, named apart from `VectorStore::clear` and other
    /// `clear`s, since one backend type implements several store traits).
    ///
    /// The default deletes each listed conversation in turn, so a conversation created
    /// while it runs may survive; backends override it with one operation.
    async fn clear_conversations(&self) -> Result<usize> {
        let mut deleted = 0;
        for id in self.list_conversations().await? {
            if self.delete(&id).await? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }
}

/// The default [`ConversationStore`]: logs in memory.
#[derive(Debug, Default)]
pub struct InMemoryConversationStore {
    logs: RwLock<BTreeMap<String, Log>>,
}

/// One conversation's events, the last seq ever given out (which outlives the events
/// when compaction drops them all), and the ids of every message ever logged.
#[derive(Debug, Default)]
struct Log {
    last_seq: u64,
    events: Vec<StoredEvent>,
    message_ids: std::collections::HashSet<ulid::Ulid>,
}

impl InMemoryConversationStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// `append`, or `append_if` when `expected` is set: checked and written under one lock.
    fn append_checked(
        &self,
        conversation_id: &str,
        expected: Option<u64>,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        let mut logs = self.logs.write();
        let current = logs.get(conversation_id).map_or(0, |log| log.last_seq);
        if expected.is_some_and(|e| e != current) {
            return Ok(AppendIf::Conflict { last_seq: current });
        }
        // Looked up by `&str` first: the key is copied only for a new conversation.
        let log = if logs.contains_key(conversation_id) {
            logs.get_mut(conversation_id)
        } else {
            Some(logs.entry(conversation_id.to_owned()).or_default())
        }
        .ok_or_else(|| MemoryError::not_found("conversation", conversation_id))?;
        let at = Utc::now();
        let events = without_known_messages(events, |id| log.message_ids.contains(id));
        for event in events {
            if let ConversationEvent::Message { message } = &event {
                log.message_ids.insert(message.id);
            }
            log.last_seq += 1;
            log.events.push(StoredEvent {
                seq: log.last_seq,
                at,
                event,
            });
        }
        Ok(AppendIf::Appended {
            last_seq: log.last_seq,
        })
    }
}

#[async_trait]
impl ConversationStore for InMemoryConversationStore {
    async fn append(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        self.append_checked(conversation_id, None, events)
            .map(AppendIf::last_seq)
    }

    async fn append_if(
        &self,
        conversation_id: &str,
        expected_last_seq: u64,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        self.append_checked(conversation_id, Some(expected_last_seq), events)
    }

    async fn load_since(&self, conversation_id: &str, after: u64) -> Result<Vec<StoredEvent>> {
        Ok(self
            .logs
            .read()
            .get(conversation_id)
            .map(|log| {
                // Seqs are sorted: skip the older events by binary search.
                let start = log.events.partition_point(|e| e.seq <= after);
                log.events[start..].to_vec()
            })
            .unwrap_or_default())
    }

    async fn list_conversations(&self) -> Result<Vec<String>> {
        Ok(self.logs.read().keys().cloned().collect())
    }

    async fn delete(&self, conversation_id: &str) -> Result<bool> {
        Ok(self.logs.write().remove(conversation_id).is_some())
    }

    async fn save(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        let mut log = Log::default();
        let at = Utc::now();
        for event in without_known_messages(events, |_| false) {
            if let ConversationEvent::Message { message } = &event {
                log.message_ids.insert(message.id);
            }
            log.last_seq += 1;
            log.events.push(StoredEvent {
                seq: log.last_seq,
                at,
                event,
            });
        }
        let last = log.last_seq;
        let mut logs = self.logs.write();
        if log.events.is_empty() {
            logs.remove(conversation_id);
        } else {
            logs.insert(conversation_id.to_owned(), log);
        }
        Ok(last)
    }

    async fn clear_conversations(&self) -> Result<usize> {
        let mut logs = self.logs.write();
        let n = logs.len();
        logs.clear();
        Ok(n)
    }

    async fn compact(&self, conversation_id: &str, before_seq: u64) -> Result<usize> {
        let mut logs = self.logs.write();
        let Some(log) = logs.get_mut(conversation_id) else {
            return Ok(0);
        };
        let dropped = log.events.partition_point(|e| e.seq < before_seq);
        log.events.drain(..dropped);
        Ok(dropped)
    }
}
