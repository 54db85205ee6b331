//! [`SessionEvents`]: what the data plane keeps of a session besides its working
//! memory: the session's owner, and every event as the client sent it (actor, content
//! parts, metadata, times), which working memory has no room for.
//!
//! | namespace (key/value store) | key | value |
//! |---|---|---|
//! | `agentmem.ram.sessions␟TENANT␟STORE` | session id | [`SessionRecord`] |
//! | `agentmem.ram.events␟TENANT␟STORE␟SESSION` | event id (a ULID) | [`EventRecord`] |

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use agentmemory_core::kv::{KvStore, MemoryEntry, MemoryScope};
use agentmemory_core::MemoryError;

use super::request::StoreScope;

type Result<T> = std::result::Result<T, MemoryError>;

const SEP: char = '\u{1f}';
const LOCK_STRIPES: usize = 64;

/// A session of the data plane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The actor of its first event: the user its working memory belongs to.
    pub owner: String,
    /// When its first event came.
    pub created_at: DateTime<Utc>,
}

/// One content part of an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextPart {
    /// The text.
    pub text: String,
}

/// An event as the SDK sends and reads it (`SessionEvent`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRecord {
    /// The event's id (a ULID: events sort by arrival).
    pub event_id: String,
    /// Who spoke.
    pub actor_id: String,
    /// Its session.
    pub session_id: String,
    /// `USER`, `ASSISTANT` or `SYSTEM`.
    pub role: String,
    /// Its text parts.
    pub content: Vec<TextPart>,
    /// When the client says it happened.
    pub created_at: DateTime<Utc>,
    /// When the server received it.
    pub system_timestamp: DateTime<Utc>,
    /// The client's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Sessions and their events, for every tenant and store.
#[derive(Clone)]
pub struct SessionEvents {
    kv: Arc<dyn KvStore>,
    locks: Arc<[tokio::sync::Mutex<()>]>,
}

impl SessionEvents {
    /// Sessions kept in `kv`.
    pub fn new(kv: Arc<dyn KvStore>) -> Self {
        Self {
            kv,
            locks: (0..LOCK_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
        }
    }

    /// Holds the write lock of one session in this process.
    pub async fn lock(&self, scope: &StoreScope, session: &str) -> tokio::sync::MutexGuard<'_, ()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (scope.tenant.as_str(), &scope.store, session).hash(&mut hasher);
        self.locks[(hasher.finish() % self.locks.len() as u64) as usize]
            .lock()
            .await
    }

    fn sessions_ns(scope: &StoreScope) -> String {
        format!(
            "agentmem.ram.sessions{SEP}{}{SEP}{}",
            scope.tenant.as_str(),
            scope.store
        )
    }

    fn events_ns(scope: &StoreScope, session: &str) -> String {
        format!(
            "agentmem.ram.events{SEP}{}{SEP}{}{SEP}{session}",
            scope.tenant.as_str(),
            scope.store
        )
    }

    fn decode<T: serde::de::DeserializeOwned>(entry: MemoryEntry) -> Result<T> {
        serde_json::from_value(entry.content)
            .map_err(|e| MemoryError::corrupt(format!("data-plane record `{}`", entry.key), e))
    }

    async fn write<T: Serialize>(&self, ns: &str, key: &str, value: &T) -> Result<()> {
        let value = serde_json::to_value(value)
            .map_err(|e| MemoryError::corrupt("data-plane record", e))?;
        self.kv
            .put(ns, MemoryEntry::new(MemoryScope::Conversation, key, value))
            .await
    }

    /// The session, if it has had an event.
    pub async fn session(
        &self,
        scope: &StoreScope,
        session: &str,
    ) -> Result<Option<SessionRecord>> {
        match self.kv.get(&Self::sessions_ns(scope), session).await? {
            Some(entry) => Self::decode(entry).map(Some),
            None => Ok(None),
        }
    }

    /// Every session of the store with its record, sorted by id.
    pub async fn sessions(&self, scope: &StoreScope) -> Result<Vec<(String, SessionRecord)>> {
        let mut out = Vec::new();
        for entry in self.kv.list(&Self::sessions_ns(scope)).await? {
            let key = entry.key.clone();
            out.push((key, Self::decode(entry)?));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Records a new session.
    pub async fn put_session(
        &self,
        scope: &StoreScope,
        session: &str,
        record: &SessionRecord,
    ) -> Result<()> {
        self.write(&Self::sessions_ns(scope), session, record).await
    }

    /// Forgets a session and its events; whether it existed.
    pub async fn delete_session(&self, scope: &StoreScope, session: &str) -> Result<bool> {
        self.kv.clear(&Self::events_ns(scope, session)).await?;
        self.kv.delete(&Self::sessions_ns(scope), session).await
    }

    /// Records an event.
    pub async fn put_event(&self, scope: &StoreScope, event: &EventRecord) -> Result<()> {
        self.write(
            &Self::events_ns(scope, &event.session_id),
            &event.event_id,
            event,
        )
        .await
    }

    /// One event.
    pub async fn event(
        &self,
        scope: &StoreScope,
        session: &str,
        event: &str,
    ) -> Result<Option<EventRecord>> {
        match self.kv.get(&Self::events_ns(scope, session), event).await? {
            Some(entry) => Self::decode(entry).map(Some),
            None => Ok(None),
        }
    }

    /// Every event of a session, oldest first.
    pub async fn events(&self, scope: &StoreScope, session: &str) -> Result<Vec<EventRecord>> {
        let mut out: Vec<EventRecord> = Vec::new();
        for entry in self.kv.list(&Self::events_ns(scope, session)).await? {
            out.push(Self::decode(entry)?);
        }
        out.sort_by(|a, b| a.event_id.cmp(&b.event_id));
        Ok(out)
    }

    /// Deletes an event; whether it existed.
    pub async fn delete_event(
        &self,
        scope: &StoreScope,
        session: &str,
        event: &str,
    ) -> Result<bool> {
        self.kv
            .delete(&Self::events_ns(scope, session), event)
            .await
    }
}
