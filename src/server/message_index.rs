//! `index_all_messages_in_long_term_memory`: every working-memory message becomes an
//! [`Episode`] of the session's user, and a session that expired (or went missing) is
//! rebuilt from those episodes, as the reference server promises.
//!
//! - **Whose episodes.** A session's messages are episodes of the owner
//!   [`ids::fact_owner`]`(namespace, user_id)`: the plain user id in the default namespace
//!   (so `agentmem recall --user alice` and a `Session` for `alice` see them), and
//!   `namespace␟user` otherwise. A session without a `user_id` is not skipped: its
//!   messages go to the no-user owner of its namespace (`namespace␟`), the owner of
//!   long-term memories of no user, which no user id can name.
//! - **Which conversation, which time.** The conversation id is the session id; the role
//!   and `created_at` are the message's.
//! - **Idempotent.** The episode id is derived from the client's message id: a ULID id
//!   lends its random part, any other id (`"1"`, a UUID) a 128-bit FNV-1a hash of the
//!   session and message ids; the time part is `created_at`. The episode keeps the
//!   client's message id, so a rebuilt session has the ids the client sent. A message is
//!   indexed once: it is stamped `persisted_at` when indexed, and a message whose id was
//!   already indexed in the stored session keeps that stamp (and that first time) even
//!   when the client sends it again without it.
//! - **Rebuilding.** The server keeps, per indexed session, the period its messages were
//!   said in (a small record in the key/value store, with no expiry). `GET` of a session
//!   that is not stored but has that record lists the owner's episodes of the period and
//!   returns the session's, oldest first, summarised to the window the request names. The
//!   rebuilt session is returned, not stored again. `DELETE` of a session deletes the
//!   record too (the episodes stay, as long-term memory), so a deleted session stays
//!   deleted.
//! - **Behind the write.** A `PUT` stamps its new messages `persisted_at` and stores the
//!   session; their episodes are written after it answered, on its user's background
//!   line (the `background` module), batched with the user's other pending `PUT`s: one
//!   episode write per owner and one period record per session. A failed write is tried
//!   again a few times (episode ids are derived from the messages, so nothing doubles),
//!   then logged. Until it is written, a rebuild of the session (which only happens once
//!   the stored session expired or went missing) does not see it.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use ulid::Ulid;

use agentmemory_core::episodes::{stable_ulid, Episode, EpisodeStore};
use agentmemory_core::kv::{KvStore, MemoryEntry, MemoryScope};
use agentmemory_core::Message;

use super::error::ApiError;
use super::ids;
use super::window;
use super::wire::{WireMessage, WorkingMemoryBody};

/// At most this many episodes are read to rebuild one session.
const MAX_REBUILT: usize = 100_000;

/// The period in which an indexed session's messages were said.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Indexed {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

/// The episodes of one `PUT`'s new messages, planned by [`MessageIndex::plan`] and
/// written behind the request by [`MessageIndex::write`].
#[derive(Debug, Clone)]
pub(crate) struct IndexWork {
    owner: String,
    session_id: String,
    /// The key/value namespace and key of the session's indexed period.
    registry: String,
    key: String,
    /// The messages to index (made episodes when written: reading their dates is work
    /// the request does not wait for).
    messages: Vec<WireMessage>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
}

impl IndexWork {
    /// The session whose messages these are.
    pub(crate) fn session_id(&self) -> &str {
        &self.session_id
    }
}

/// Working-memory messages as episodes, and sessions rebuilt from them.
#[derive(Clone)]
pub(crate) struct MessageIndex {
    episodes: Arc<dyn EpisodeStore>,
    kv: Arc<dyn KvStore>,
}

impl std::fmt::Debug for MessageIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageIndex").finish_non_exhaustive()
    }
}

impl MessageIndex {
    /// Episodes in `episodes`; the indexed sessions' records in `kv`.
    pub(crate) fn new(episodes: Arc<dyn EpisodeStore>, kv: Arc<dyn KvStore>) -> Self {
        Self { episodes, kv }
    }

    /// Plans the indexing of the messages of `memory` (session `session_id`) not indexed
    /// yet, and stamps them `persisted_at`: the episodes to write, which
    /// [`write`](Self::write) writes behind the request. `previous` is the stored
    /// session, if any: a message it holds already stamped is not indexed again (it keeps
    /// its stamp). `None` when every message is indexed already.
    pub(crate) fn plan(
        &self,
        session_id: &str,
        memory: &mut WorkingMemoryBody,
        previous: Option<&WorkingMemoryBody>,
    ) -> Option<IndexWork> {
        let stamped: HashMap<&str, (DateTime<Utc>, DateTime<Utc>)> = previous
            .into_iter()
            .flat_map(|p| &p.messages)
            .filter_map(|m| m.persisted_at.map(|at| (m.id.as_str(), (m.created_at, at))))
            .collect();
        let owner = ids::fact_owner(memory.namespace.as_deref(), memory.user_id.as_deref());
        let now = Utc::now();
        let mut messages = Vec::new();
        for message in memory.messages.iter_mut() {
            if message.persisted_at.is_some() {
                continue;
            }
            if let Some((_, at)) = stamped.get(message.id.as_str()) {
                message.persisted_at = Some(*at);
                continue;
            }
            messages.push(message.clone());
            message.persisted_at = Some(now);
        }
        let from = messages.iter().map(|m| m.created_at).min()?;
        let to = messages.iter().map(|m| m.created_at).max()?;
        Some(IndexWork {
            owner,
            session_id: session_id.to_owned(),
            registry: registry_namespace(memory.namespace.as_deref()),
            key: ids::session_key(memory.user_id.as_deref(), session_id),
            messages,
            from,
            to,
        })
    }

    /// Whether `self` and `other` write to the same episode store.
    pub(crate) fn same_as(&self, other: &MessageIndex) -> bool {
        Arc::ptr_eq(&self.episodes, &other.episodes) && Arc::ptr_eq(&self.kv, &other.kv)
    }

    /// Writes the episodes `works` planned, in few writes: one [`EpisodeStore::add`] per
    /// owner (the episodes of every session of the owner in `works`) and one record of
    /// the period per session. Episode ids are derived from the messages, so writing a
    /// work again (a retry) duplicates nothing.
    pub(crate) async fn write(&self, works: &[IndexWork]) -> Result<(), ApiError> {
        let mut owners: Vec<(&str, Vec<Episode>)> = Vec::new();
        let mut periods: Vec<(&str, &str, DateTime<Utc>, DateTime<Utc>)> = Vec::new();
        for work in works {
            let episodes = work
                .messages
                .iter()
                .map(|m| episode(&work.owner, &work.session_id, m));
            match owners.iter_mut().find(|(o, _)| *o == work.owner) {
                Some((_, held)) => held.extend(episodes),
                None => owners.push((&work.owner, episodes.collect())),
            }
            match periods
                .iter_mut()
                .find(|(ns, key, _, _)| *ns == work.registry && *key == work.key)
            {
                Some((_, _, from, to)) => {
                    *from = (*from).min(work.from);
                    *to = (*to).max(work.to);
                }
                None => periods.push((&work.registry, &work.key, work.from, work.to)),
            }
        }
        for (owner, episodes) in owners {
            self.episodes.add(owner, episodes).await?;
        }
        for (ns, key, from, to) in periods {
            self.widen(ns, key, from, to).await?;
        }
        Ok(())
    }

    /// Widens the recorded period of session `key` to hold `[from, to]`.
    async fn widen(
        &self,
        ns: &str,
        key: &str,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<(), ApiError> {
        let known = self.kv.get(ns, key).await?.and_then(|e| read_period(&e));
        let period = match known {
            Some(p) if p.from <= from && p.to >= to => return Ok(()),
            Some(p) => Indexed {
                from: p.from.min(from),
                to: p.to.max(to),
            },
            None => Indexed { from, to },
        };
        let content = serde_json::to_value(period).map_err(|e| {
            ApiError::Store(agentmemory_core::MemoryError::invalid(
                "indexed session",
                e.to_string(),
            ))
        })?;
        self.kv
            .put(
                ns,
                MemoryEntry::new(MemoryScope::Conversation, key, content),
            )
            .await?;
        Ok(())
    }

    /// The messages of session `session_id` of (`namespace`, `user_id`) rebuilt from its
    /// episodes, oldest first; `None` when its messages were never indexed.
    pub(crate) async fn rebuild(
        &self,
        session_id: &str,
        namespace: Option<&str>,
        user_id: Option<&str>,
    ) -> Result<Option<Vec<WireMessage>>, ApiError> {
        let ns = registry_namespace(namespace);
        let key = ids::session_key(user_id, session_id);
        let Some(period) = self.kv.get(&ns, &key).await?.and_then(|e| read_period(&e)) else {
            return Ok(None);
        };
        let owner = ids::fact_owner(namespace, user_id);
        // `list` reads [from, to): one millisecond past the last message.
        let to = period.to + Duration::milliseconds(1);
        let episodes = self
            .episodes
            .list(&owner, Some(period.from), Some(to), MAX_REBUILT)
            .await?;
        let now = Utc::now();
        let messages: Vec<WireMessage> = episodes
            .into_iter()
            .filter(|e| e.conversation_id == session_id)
            .map(|e| WireMessage {
                role: e.role.as_str().to_owned(),
                id: if e.message_id.is_empty() {
                    e.id
                } else {
                    e.message_id
                },
                content: e.text,
                created_at: e.observed_at,
                persisted_at: Some(now),
                discrete_memory_extracted: "f".to_owned(),
                created_at_missing: false,
            })
            .collect();
        Ok((!messages.is_empty()).then_some(messages))
    }

    /// Forgets that session `session_id` was indexed (its episodes stay).
    pub(crate) async fn forget_session(
        &self,
        session_id: &str,
        namespace: Option<&str>,
        user_id: Option<&str>,
    ) -> Result<(), ApiError> {
        self.kv
            .delete(
                &registry_namespace(namespace),
                &ids::session_key(user_id, session_id),
            )
            .await?;
        Ok(())
    }
}

/// The key/value namespace recording the indexed sessions of `namespace`.
fn registry_namespace(namespace: Option<&str>) -> String {
    format!(
        "agentmem.server.wm-indexed\u{1f}{}",
        namespace.unwrap_or("")
    )
}

fn read_period(entry: &MemoryEntry) -> Option<Indexed> {
    serde_json::from_value(entry.content.clone()).ok()
}

/// The episode of `message` of session `session_id`, owned by `owner`.
fn episode(owner: &str, session_id: &str, message: &WireMessage) -> Episode {
    let mut core =
        Message::new(window::role(&message.role), message.content.as_str()).at(message.created_at);
    core.id = message_ulid(session_id, &message.id, message.created_at);
    let mut episode = Episode::from_message(owner, session_id, &core);
    episode.message_id = message.id.clone();
    episode
}

/// A stable ULID for the client's message id `id` of session `session_id`, said at
/// `created_at`: the id itself when it is a ULID; otherwise `created_at` and 80 bits of
/// the 128-bit FNV-1a hash of the session and message ids (stable across processes and
/// versions, unlike `std`'s hasher).
pub(crate) fn message_ulid(session_id: &str, id: &str, created_at: DateTime<Utc>) -> Ulid {
    if let Ok(ulid) = Ulid::from_string(id) {
        return ulid;
    }
    stable_ulid(created_at, &[session_id.as_bytes(), &[0x1f], id.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentmemory_core::Role;
    use chrono::TimeZone;

    #[test]
    fn message_ids_map_to_stable_ulids() {
        let at = Utc.with_ymd_and_hms(2026, 1, 15, 10, 30, 0).unwrap();
        let ulid = Ulid::new();
        assert_eq!(message_ulid("s", &ulid.to_string(), at), ulid);
        let a = message_ulid("s", "1", at);
        assert_eq!(a, message_ulid("s", "1", at));
        assert_ne!(a, message_ulid("s", "2", at));
        assert_ne!(a, message_ulid("t", "1", at), "ids are per session");
        assert_eq!(a.timestamp_ms(), at.timestamp_millis() as u64);
    }

    #[test]
    fn an_episode_keeps_the_client_id_role_and_time() {
        let at = Utc.with_ymd_and_hms(2026, 1, 15, 10, 30, 0).unwrap();
        let message = WireMessage {
            role: "assistant".into(),
            content: "Paris is lovely in May".into(),
            id: "m-1".into(),
            created_at: at,
            persisted_at: None,
            discrete_memory_extracted: "f".into(),
            created_at_missing: false,
        };
        let e = episode("alice", "chat_1", &message);
        assert_eq!(e.message_id, "m-1");
        assert_eq!(e.conversation_id, "chat_1");
        assert_eq!(e.role, Role::Assistant);
        assert_eq!(e.observed_at, at);
        assert_eq!(e.id, episode("alice", "chat_1", &message).id);
    }
}
