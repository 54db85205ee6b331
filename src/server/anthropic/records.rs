//! What the memory-stores API keeps, where, and how each record reads on the wire.
//!
//! Per tenant and store, in the server's key/value store and vector store (the tenant
//! is part of every name, so tenants never meet; `␟` is U+001F):
//!
//! | store | namespace | key | value |
//! |---|---|---|---|
//! | key/value | `agentmem.anthropic.stores␟TENANT` | store id | [`StoreRecord`] |
//! | key/value | `agentmem.anthropic.memories␟TENANT␟STORE` | memory id | [`MemoryRecord`] |
//! | key/value | `agentmem.anthropic.versions␟TENANT␟STORE` | version id | [`VersionRecord`] |
//! | vector | `agentmem.anthropic.search␟TENANT␟STORE` | memory id | the current content, searchable (hybrid when the store embeds); metadata `path` |
//!
//! Ids are a prefix (`memstore_`, `mem_`, `memver_`) and a ULID from one monotonic
//! generator, so ids made later sort later, in this process.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Separates the parts of a namespace; never in a tenant name or an id.
const SEP: char = '\u{1f}';

/// The namespace of a tenant's stores.
pub fn stores_namespace(tenant: &str) -> String {
    format!("agentmem.anthropic.stores{SEP}{tenant}")
}

/// The namespace of a store's memories.
pub fn memories_namespace(tenant: &str, store: &str) -> String {
    format!("agentmem.anthropic.memories{SEP}{tenant}{SEP}{store}")
}

/// The namespace of a store's versions.
pub fn versions_namespace(tenant: &str, store: &str) -> String {
    format!("agentmem.anthropic.versions{SEP}{tenant}{SEP}{store}")
}

/// The vector-store namespace of a store's current contents.
pub fn search_namespace(tenant: &str, store: &str) -> String {
    format!("agentmem.anthropic.search{SEP}{tenant}{SEP}{store}")
}

/// A new id: `prefix` then a ULID later than every one made before in this process.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", crate::server::monotonic::ulid())
}

/// Whether `id` could be an id made with `prefix` (so a hostile id never reaches a key).
pub fn looks_like(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .is_some_and(|rest| rest.len() == 26 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Lowercase hex SHA-256 of `content`'s UTF-8 bytes.
pub fn sha256_hex(content: &str) -> String {
    Sha256::digest(content.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A memory store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreRecord {
    /// `memstore_...`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its description ("" when none).
    #[serde(default)]
    pub description: String,
    /// The caller's key-value pairs.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When it was archived (read-only since).
    #[serde(default)]
    pub archived_at: Option<DateTime<Utc>>,
}

impl StoreRecord {
    /// The `memory_store` object.
    pub fn wire(&self) -> Value {
        json!({
            "type": "memory_store",
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "archived_at": self.archived_at,
        })
    }
}

/// A memory as it is now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// `mem_...`; kept when the path changes.
    pub id: String,
    /// Its store.
    pub memory_store_id: String,
    /// Its path, unique in the store.
    pub path: String,
    /// Its content.
    pub content: String,
    /// SHA-256 of the content.
    pub content_sha256: String,
    /// Bytes of the content.
    pub content_size_bytes: u64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// The version holding the current content.
    pub memory_version_id: String,
}

impl MemoryRecord {
    /// The `memory` object, with its content when `full`.
    pub fn wire(&self, full: bool) -> Value {
        json!({
            "type": "memory",
            "id": self.id,
            "memory_store_id": self.memory_store_id,
            "path": self.path,
            "content": full.then_some(&self.content),
            "content_sha256": self.content_sha256,
            "content_size_bytes": self.content_size_bytes,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "memory_version_id": self.memory_version_id,
        })
    }
}

/// The kind of change a version records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// The memory was created.
    Created,
    /// Its content or path changed.
    Modified,
    /// It was deleted.
    Deleted,
}

impl Operation {
    /// The wire name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "created" => Some(Operation::Created),
            "modified" => Some(Operation::Modified),
            "deleted" => Some(Operation::Deleted),
            _ => None,
        }
    }
}

/// Who made a change: an API key (`api_actor`) or a session (`session_actor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Actor {
    /// A request with an API key (or the server token).
    ApiActor {
        /// The key's id: `apikey_` then the tenant.
        api_key_id: String,
    },
    /// A request that named its session (header `x-agentmem-session-id`).
    SessionActor {
        /// The session.
        session_id: String,
    },
}

/// One immutable entry of a memory's history (only redaction changes it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VersionRecord {
    /// `memver_...`.
    pub id: String,
    /// The memory.
    pub memory_id: String,
    /// Its store.
    pub memory_store_id: String,
    /// The change.
    pub operation: Operation,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// The content as of this version (`None` once deleted or redacted).
    #[serde(default)]
    pub content: Option<String>,
    /// Its SHA-256.
    #[serde(default)]
    pub content_sha256: Option<String>,
    /// Its size.
    #[serde(default)]
    pub content_size_bytes: Option<u64>,
    /// The path at this write (`None` once redacted).
    #[serde(default)]
    pub path: Option<String>,
    /// Who wrote it.
    #[serde(default)]
    pub created_by: Option<Actor>,
    /// When it was redacted.
    #[serde(default)]
    pub redacted_at: Option<DateTime<Utc>>,
    /// Who redacted it.
    #[serde(default)]
    pub redacted_by: Option<Actor>,
}

impl VersionRecord {
    /// The `memory_version` object, with its content when `full`.
    pub fn wire(&self, full: bool) -> Value {
        json!({
            "type": "memory_version",
            "id": self.id,
            "memory_id": self.memory_id,
            "memory_store_id": self.memory_store_id,
            "operation": self.operation,
            "created_at": self.created_at,
            "content": if full { self.content.as_deref() } else { None },
            "content_sha256": self.content_sha256,
            "content_size_bytes": self.content_size_bytes,
            "path": self.path,
            "created_by": self.created_by,
            "redacted_at": self.redacted_at,
            "redacted_by": self.redacted_by,
        })
    }

    /// The session that wrote it, if a session did.
    pub fn session_id(&self) -> Option<&str> {
        match &self.created_by {
            Some(Actor::SessionActor { session_id }) => Some(session_id),
            _ => None,
        }
    }

    /// The API key that wrote it, if one did.
    pub fn api_key_id(&self) -> Option<&str> {
        match &self.created_by {
            Some(Actor::ApiActor { api_key_id }) => Some(api_key_id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_creation_and_hashes_are_hex() {
        let a = new_id("mem_");
        let b = new_id("mem_");
        assert!(a < b);
        assert!(looks_like(&a, "mem_"));
        assert!(!looks_like("mem_../x", "mem_"));
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
