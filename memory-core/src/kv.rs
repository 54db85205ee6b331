//! `KvStore`: namespaced key → [`MemoryEntry`] storage with importance and expiry.
//!
//! [`WorkingMemory`](crate::WorkingMemory) is built on it; persistent backends implement it.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use ulid::Ulid;

use crate::error::{MemoryError, Result};
use crate::message::Metadata;

/// How long an entry is meant to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// Lives as long as one conversation.
    Conversation,
    /// Scratch state of one task or agent run.
    Working,
    /// Outlives conversations.
    LongTerm,
}

impl MemoryScope {
    /// The lowercase name (`"working"`, ...), used in namespaces.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::Conversation => "conversation",
            MemoryScope::Working => "working",
            MemoryScope::LongTerm => "long_term",
        }
    }
}

/// One stored value.
///
/// An entry is found by its `key` in a namespace. An entry appended without a key of its
/// own ([`MemoryEntry::keyless`], [`KvStore::append_entry`]) is keyed by its `id`, a ULID, so a
/// namespace's keyless entries list in the order they were made (to the millisecond).
///
/// Entries written before ids and metadata existed read back with `id: None` and empty
/// metadata:
///
/// ```
/// use agentmemory_core::MemoryEntry;
///
/// let old = r#"{"scope":"working","key":"k","content":1,"importance":0.5,
///               "created_at":"2024-01-01T00:00:00Z"}"#;
/// let entry: MemoryEntry = serde_json::from_str(old).unwrap();
/// assert_eq!((entry.id, entry.metadata.len()), (None, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    /// Its id, given when the entry is made (`None` for entries stored before ids existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Ulid>,
    /// Its lifetime class.
    pub scope: MemoryScope,
    /// Its key inside the namespace.
    pub key: String,
    /// The value.
    pub content: serde_json::Value,
    /// Priority weight in `0.0..=1.0`.
    pub importance: f32,
    /// When it was written.
    #[serde(deserialize_with = "crate::rfc3339::deserialize")]
    pub created_at: DateTime<Utc>,
    /// When it stops being visible, if ever.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::rfc3339::deserialize_option"
    )]
    pub expires_at: Option<DateTime<Utc>>,
    /// Free metadata (source, tags, ...).
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

impl MemoryEntry {
    /// An entry with a fresh id, importance 0.5, no expiry and no metadata.
    pub fn new(scope: MemoryScope, key: impl Into<String>, content: serde_json::Value) -> Self {
        Self {
            id: Some(Ulid::new()),
            scope,
            key: key.into(),
            content,
            importance: 0.5,
            created_at: Utc::now(),
            expires_at: None,
            metadata: Metadata::new(),
        }
    }

    /// An entry without a key of its own: its key is its id.
    ///
    /// ```
    /// use agentmemory_core::{MemoryEntry, MemoryScope};
    ///
    /// let entry = MemoryEntry::keyless(MemoryScope::LongTerm, "met Ana at the fair".into())
    ///     .with_metadata("source", "chat".into());
    /// assert_eq!(Some(entry.key.clone()), entry.id.map(|id| id.to_string()));
    /// assert!(entry.is_keyless());
    /// ```
    pub fn keyless(scope: MemoryScope, content: serde_json::Value) -> Self {
        let id = Ulid::new();
        let mut entry = Self::new(scope, id.to_string(), content);
        entry.id = Some(id);
        entry
    }

    /// The entry with `key` set to `value` in its metadata.
    pub fn with_metadata(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// Whether the entry is keyed by its id (made by [`keyless`](Self::keyless) or
    /// [`KvStore::append_entry`]).
    pub fn is_keyless(&self) -> bool {
        self.id.is_some_and(|id| id.to_string() == self.key)
    }

    /// Whether the entry has expired at `now`.
    pub fn is_expired_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at.is_some_and(|t| t <= now)
    }

    /// Whether the entry has expired.
    pub fn is_expired(&self) -> bool {
        self.is_expired_at(Utc::now())
    }

    /// Checks that importance is a finite number within `0.0..=1.0`.
    pub fn validate(&self) -> Result<()> {
        validate_importance(self.importance)
    }
}

/// Checks that `importance` is a finite number within `0.0..=1.0`.
pub(crate) fn validate_importance(importance: f32) -> Result<()> {
    if importance.is_finite() && (0.0..=1.0).contains(&importance) {
        Ok(())
    } else {
        Err(MemoryError::invalid(
            "importance",
            format!("must be within 0.0..=1.0, got {importance}"),
        ))
    }
}

/// Namespaced key/value storage. Expired entries are invisible to every read.
///
/// Namespaces are opaque strings; two namespaces never see each other's keys.
/// `list` returns entries ordered by key.
#[async_trait]
pub trait KvStore: Send + Sync {
    /// Writes (or replaces) `entry` under `namespace`.
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> Result<()>;
    /// Reads one entry; `None` when absent or expired.
    async fn get(&self, namespace: &str, key: &str) -> Result<Option<MemoryEntry>>;
    /// Removes one entry; whether a live one was there.
    async fn delete(&self, namespace: &str, key: &str) -> Result<bool>;
    /// Every live entry of `namespace`, ordered by key.
    async fn list(&self, namespace: &str) -> Result<Vec<MemoryEntry>>;
    /// Removes every entry of `namespace`; how many there were.
    async fn clear(&self, namespace: &str) -> Result<usize>;
    /// Deletes expired entries of every namespace; how many.
    async fn cleanup_expired(&self) -> Result<usize>;

    /// Writes (or replaces) every entry of `entries` under `namespace`, in order (a later
    /// entry with the key of an earlier one wins).
    ///
    /// Provided as one [`put`](Self::put) after another, which may stop part way on an
    /// error; a store that can write them in one transaction (or one round trip)
    /// overrides it, and then writes all or none.
    async fn put_many(&self, namespace: &str, entries: Vec<MemoryEntry>) -> Result<()> {
        for entry in entries {
            self.put(namespace, entry).await?;
        }
        Ok(())
    }

    /// Stores `entry` under a key of its own when it has none: an entry with an empty key
    /// is keyed by its id (given one when it has none); returns the key it was stored
    /// under. An entry with a key is [`put`](Self::put) as it is.
    async fn append_entry(&self, namespace: &str, mut entry: MemoryEntry) -> Result<String> {
        if entry.key.is_empty() {
            let id = *entry.id.get_or_insert_with(Ulid::new);
            entry.key = id.to_string();
        }
        let key = entry.key.clone();
        self.put(namespace, entry).await?;
        Ok(key)
    }
}

/// The default [`KvStore`]: a map in memory.
#[derive(Debug, Default)]
pub struct InMemoryKvStore {
    namespaces: RwLock<HashMap<String, BTreeMap<String, MemoryEntry>>>,
}

impl InMemoryKvStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl KvStore for InMemoryKvStore {
    async fn put(&self, namespace: &str, entry: MemoryEntry) -> Result<()> {
        entry.validate()?;
        self.namespaces
            .write()
            .entry(namespace.to_owned())
            .or_default()
            .insert(entry.key.clone(), entry);
        Ok(())
    }

    async fn get(&self, namespace: &str, key: &str) -> Result<Option<MemoryEntry>> {
        let now = Utc::now();
        Ok(self
            .namespaces
            .read()
            .get(namespace)
            .and_then(|ns| ns.get(key))
            .filter(|e| !e.is_expired_at(now))
            .cloned())
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        let now = Utc::now();
        let removed = self
            .namespaces
            .write()
            .get_mut(namespace)
            .and_then(|ns| ns.remove(key));
        Ok(removed.is_some_and(|e| !e.is_expired_at(now)))
    }

    async fn list(&self, namespace: &str) -> Result<Vec<MemoryEntry>> {
        let now = Utc::now();
        Ok(self
            .namespaces
            .read()
            .get(namespace)
            .map(|ns| {
                ns.values()
                    .filter(|e| !e.is_expired_at(now))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn clear(&self, namespace: &str) -> Result<usize> {
        Ok(self
            .namespaces
            .write()
            .remove(namespace)
            .map(|ns| ns.len())
            .unwrap_or(0))
    }

    async fn cleanup_expired(&self) -> Result<usize> {
        let now = Utc::now();
        let mut removed = 0;
        for ns in self.namespaces.write().values_mut() {
            let before = ns.len();
            ns.retain(|_, e| !e.is_expired_at(now));
            removed += before - ns.len();
        }
        Ok(removed)
    }
}
