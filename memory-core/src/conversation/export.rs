//! Moving a conversation between stores (or ids) as versioned JSON.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::buffer::{ShortTermMemory, ShortTermSnapshot, SNAPSHOT_VERSION};
use crate::error::{MemoryError, Result};
use crate::message::Message;
use crate::tokens::{HeuristicCounter, TokenCounter};

use super::{replay, ConversationEvent, ConversationStore};

/// The export format this build writes.
pub const EXPORT_VERSION: u32 = 1;

/// A conversation as exported: what its short-term memory holds, its summary and its
/// token totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationExport {
    /// Format version ([`EXPORT_VERSION`]).
    pub version: u32,
    /// The id it had in the source store.
    pub conversation_id: String,
    /// Its user, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Its agent, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// When it was exported.
    pub exported_at: DateTime<Utc>,
    /// The messages held, oldest first.
    pub messages: Vec<Message>,
    /// The running summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Tokens of messages and summary, by the counter used at export.
    pub token_count: usize,
}

impl ConversationExport {
    /// The export as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Reads an export, refusing malformed JSON and versions newer than this build's.
    pub fn from_json(json: &str) -> Result<Self> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| MemoryError::corrupt("conversation export", e))?;
        let version = value
            .get("version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| {
                MemoryError::corrupt("conversation export", "missing numeric `version`")
            })?;
        if version == 0 || version > u64::from(EXPORT_VERSION) {
            return Err(MemoryError::UnsupportedVersion {
                what: "conversation export",
                found: u32::try_from(version).unwrap_or(u32::MAX),
                supported: EXPORT_VERSION,
            });
        }
        serde_json::from_value(value).map_err(|e| MemoryError::corrupt("conversation export", e))
    }
}

/// Exports conversation `conversation_id` of `store`, counting tokens with `counter`
/// (the heuristic when `None`). Unknown ids are [`MemoryError::NotFound`].
pub async fn export(
    store: &dyn ConversationStore,
    conversation_id: &str,
    counter: Option<Arc<dyn TokenCounter>>,
) -> Result<ConversationExport> {
    let events = store.load(conversation_id).await?;
    if events.is_empty() {
        return Err(MemoryError::not_found("conversation", conversation_id));
    }
    let counter = counter.unwrap_or_else(|| Arc::new(HeuristicCounter::default()));
    let mut memory = ShortTermMemory::with_counter(usize::MAX, counter);
    let owner = replay(&events, &mut memory);
    let snapshot = memory.snapshot();
    Ok(ConversationExport {
        version: EXPORT_VERSION,
        conversation_id: conversation_id.to_owned(),
        user_id: owner.as_ref().map(|o| o.user_id.clone()),
        agent: owner.map(|o| o.agent),
        exported_at: Utc::now(),
        messages: snapshot.messages,
        summary: snapshot.summary,
        token_count: memory.token_count(),
    })
}

/// Imports `export` into `store` under `as_id` (or its original id), in one append so
/// that a failure leaves nothing half-written. Refuses an id that already has events.
/// Returns the id written.
pub async fn import(
    store: &dyn ConversationStore,
    export: &ConversationExport,
    as_id: Option<&str>,
) -> Result<String> {
    if export.version == 0 || export.version > EXPORT_VERSION {
        return Err(MemoryError::UnsupportedVersion {
            what: "conversation export",
            found: export.version,
            supported: EXPORT_VERSION,
        });
    }
    let id = as_id.unwrap_or(&export.conversation_id);
    if id.is_empty() {
        return Err(MemoryError::invalid("conversation id", "must not be empty"));
    }
    if !store.load(id).await?.is_empty() {
        return Err(MemoryError::invalid(
            "conversation id",
            format!("conversation `{id}` already exists; import under a new id"),
        ));
    }
    let mut events = Vec::with_capacity(2);
    if let Some(user_id) = &export.user_id {
        events.push(ConversationEvent::Started {
            user_id: user_id.clone(),
            agent: export.agent.clone().unwrap_or_default(),
        });
    }
    events.push(ConversationEvent::Snapshot {
        snapshot: ShortTermSnapshot {
            version: SNAPSHOT_VERSION,
            messages: export.messages.clone(),
            summary: export.summary.clone(),
        },
    });
    store.append(id, events).await?;
    Ok(id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::InMemoryConversationStore;

    #[tokio::test]
    async fn export_import_round_trip_across_stores_and_ids() {
        let a = InMemoryConversationStore::new();
        a.append(
            "c",
            vec![
                ConversationEvent::Started {
                    user_id: "u".into(),
                    agent: "bot".into(),
                },
                ConversationEvent::Message {
                    message: Message::user("hello"),
                },
                ConversationEvent::Message {
                    message: Message::assistant("hi"),
                },
                ConversationEvent::SummaryUpdated {
                    summary: "greeted".into(),
                    keep_recent: 1,
                },
            ],
        )
        .await
        .unwrap();
        let exported = export(&a, "c", None).await.unwrap();
        assert_eq!(exported.messages.len(), 1);
        assert_eq!(exported.summary.as_deref(), Some("greeted"));
        assert!(exported.token_count > 0);

        let json = exported.to_json();
        let parsed = ConversationExport::from_json(&json).unwrap();
        let b = InMemoryConversationStore::new();
        assert_eq!(import(&b, &parsed, None).await.unwrap(), "c");
        assert_eq!(import(&b, &parsed, Some("c2")).await.unwrap(), "c2");
        assert!(
            import(&b, &parsed, Some("c2")).await.is_err(),
            "existing id refused"
        );
        let again = export(&b, "c2", None).await.unwrap();
        assert_eq!(again.messages, exported.messages);
        assert_eq!(again.summary, exported.summary);
        assert_eq!(again.token_count, exported.token_count);
        assert_eq!(again.user_id.as_deref(), Some("u"));
    }

    #[tokio::test]
    async fn malformed_or_future_exports_write_nothing() {
        let store = InMemoryConversationStore::new();
        assert!(matches!(
            ConversationExport::from_json("{"),
            Err(MemoryError::Corrupt { .. })
        ));
        assert!(matches!(
            ConversationExport::from_json(r#"{"version": 2, "messages": []}"#),
            Err(MemoryError::UnsupportedVersion { found: 2, .. })
        ));
        assert!(ConversationExport::from_json(r#"{"version": 1, "messages": "x"}"#).is_err());
        let mut future = export_of_one().await;
        future.version = 9;
        assert!(import(&store, &future, Some("x")).await.is_err());
        assert!(store.list_conversations().await.unwrap().is_empty());
        assert!(matches!(
            export(&store, "nope", None).await,
            Err(MemoryError::NotFound { .. })
        ));
    }

    async fn export_of_one() -> ConversationExport {
        let s = InMemoryConversationStore::new();
        s.append(
            "c",
            vec![ConversationEvent::Message {
                message: Message::user("x"),
            }],
        )
        .await
        .unwrap();
        export(&s, "c", None).await.unwrap()
    }
}
