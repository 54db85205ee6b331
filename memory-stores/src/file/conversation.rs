//! [`ConversationStore`] as one JSON file per conversation.

use std::path::PathBuf;

use agentmemory_core::conversation::AppendIf;
use agentmemory_core::{ConversationEvent, ConversationStore, Result, StoredEvent};
use async_trait::async_trait;
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::atomic::{read_doc, remove, write_doc, FORMAT_VERSION};
use super::{FileStore, CONVERSATIONS_DIR};

const FORMAT: &str = "agentmem.conversation";

/// The document in a conversation's file.
#[derive(Serialize, Deserialize)]
struct ConversationFile {
    format: String,
    version: u32,
    id: String,
    /// The seq of the last event ever appended (compaction never lowers it).
    last_seq: u64,
    events: Vec<StoredEvent>,
}

impl FileStore {
    fn conversation_path(&self, id: &str) -> Result<PathBuf> {
        self.path(CONVERSATIONS_DIR, "conversation id", id)
    }

    async fn read_conversation(&self, id: &str) -> Result<Option<ConversationFile>> {
        let path = self.conversation_path(id)?;
        self.blocking("load events", move || read_doc(&path, FORMAT))
            .await
    }
}

impl FileStore {
    /// `append`, or `append_if` when `expected` is set: checked under the file's
    /// exclusive lock.
    async fn append_checked(
        &self,
        conversation_id: &str,
        expected: Option<u64>,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        let path = self.conversation_path(conversation_id)?;
        let id = conversation_id.to_owned();
        self.exclusive(path.clone(), "append events", move || {
            let existing = read_doc::<ConversationFile>(&path, FORMAT)?;
            let current = existing.as_ref().map_or(0, |f| f.last_seq);
            if expected.is_some_and(|e| e != current) {
                return Ok(AppendIf::Conflict { last_seq: current });
            }
            let appended = |last_seq| Ok(AppendIf::Appended { last_seq });
            let mut file = match existing {
                Some(f) => f,
                None if events.is_empty() => return appended(0),
                None => ConversationFile {
                    format: FORMAT.to_owned(),
                    version: FORMAT_VERSION,
                    id,
                    last_seq: 0,
                    events: Vec::new(),
                },
            };
            if events.is_empty() {
                return appended(file.last_seq);
            }
            let known: std::collections::HashSet<_> = file
                .events
                .iter()
                .filter_map(|e| match &e.event {
                    ConversationEvent::Message { message } => Some(message.id),
                    _ => None,
                })
                .collect();
            let events = agentmemory_core::store_support::without_known_messages(events, |id| {
                known.contains(id)
            });
            if events.is_empty() {
                return appended(file.last_seq);
            }
            let at = Utc::now();
            for event in events {
                file.last_seq += 1;
                file.events.push(StoredEvent {
                    seq: file.last_seq,
                    at,
                    event,
                });
            }
            write_doc(&path, &file)?;
            appended(file.last_seq)
        })
        .await
    }
}

#[async_trait]
impl ConversationStore for FileStore {
    async fn append(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        self.append_checked(conversation_id, None, events)
            .await
            .map(AppendIf::last_seq)
    }

    async fn append_if(
        &self,
        conversation_id: &str,
        expected_last_seq: u64,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        self.append_checked(conversation_id, Some(expected_last_seq), events)
            .await
    }

    async fn load_since(&self, conversation_id: &str, after: u64) -> Result<Vec<StoredEvent>> {
        Ok(self
            .read_conversation(conversation_id)
            .await?
            .map(|f| f.events.into_iter().filter(|e| e.seq > after).collect())
            .unwrap_or_default())
    }

    async fn list_conversations(&self) -> Result<Vec<String>> {
        self.ids_in(CONVERSATIONS_DIR, "list conversations").await
    }

    async fn delete(&self, conversation_id: &str) -> Result<bool> {
        let path = self.conversation_path(conversation_id)?;
        self.exclusive(path.clone(), "delete a conversation", move || remove(&path))
            .await
    }

    async fn save(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        let path = self.conversation_path(conversation_id)?;
        let id = conversation_id.to_owned();
        self.exclusive(path.clone(), "replace a conversation", move || {
            let events = agentmemory_core::store_support::without_known_messages(events, |_| false);
            if events.is_empty() {
                remove(&path)?;
                return Ok(0);
            }
            let at = Utc::now();
            let events: Vec<StoredEvent> = events
                .into_iter()
                .zip(1..)
                .map(|(event, seq)| StoredEvent { seq, at, event })
                .collect();
            let file = ConversationFile {
                format: FORMAT.to_owned(),
                version: FORMAT_VERSION,
                id,
                last_seq: events.len() as u64,
                events,
            };
            // Written to a temporary file and renamed over the old one: readers see the
            // old log or the new one.
            write_doc(&path, &file)?;
            Ok(file.last_seq)
        })
        .await
    }

    async fn compact(&self, conversation_id: &str, before_seq: u64) -> Result<usize> {
        let path = self.conversation_path(conversation_id)?;
        self.exclusive(path.clone(), "compact a conversation", move || {
            let Some(mut file) = read_doc::<ConversationFile>(&path, FORMAT)? else {
                return Ok(0);
            };
            let before = file.events.len();
            file.events.retain(|e| e.seq >= before_seq);
            let dropped = before - file.events.len();
            if dropped > 0 {
                write_doc(&path, &file)?;
            }
            Ok(dropped)
        })
        .await
    }
}
