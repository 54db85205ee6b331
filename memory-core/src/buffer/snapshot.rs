//! The versioned, serialisable state of a [`ShortTermMemory`](super::ShortTermMemory).

use serde::{Deserialize, Serialize};

use crate::error::{MemoryError, Result};
use crate::message::Message;

/// The snapshot format this build writes.
pub const SNAPSHOT_VERSION: u32 = 1;

/// Everything a short-term memory holds: its messages in order and its running summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShortTermSnapshot {
    /// Format version ([`SNAPSHOT_VERSION`]).
    pub version: u32,
    /// Every message, system ones included, oldest first.
    pub messages: Vec<Message>,
    /// The running summary of messages no longer held.
    #[serde(default)]
    pub summary: Option<String>,
}

/// What `restore` accepts: the versioned object, or a bare list of messages (the older form).
#[derive(Deserialize)]
#[serde(untagged)]
enum AnySnapshot {
    Versioned {
        version: u32,
        #[serde(default)]
        messages: serde_json::Value,
        #[serde(default)]
        summary: Option<String>,
    },
    Legacy(Vec<Message>),
}

impl ShortTermSnapshot {
    /// Reads a snapshot from JSON: the versioned form or a bare message list.
    ///
    /// ```
    /// use agentmemory_core::ShortTermSnapshot;
    ///
    /// let legacy = r#"[{"id":"01HZY5V7Q3W5X0B6N1M2K3J4H5","role":"user","content":"hi"}]"#;
    /// let snap = ShortTermSnapshot::from_json(legacy).unwrap();
    /// assert_eq!(snap.messages.len(), 1);
    ///
    /// assert!(ShortTermSnapshot::from_json(r#"{"version": 99, "messages": []}"#).is_err());
    /// assert!(ShortTermSnapshot::from_json("not json").is_err());
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| MemoryError::corrupt("short-term memory snapshot", e))?;
        Self::from_value(value)
    }

    /// Reads a snapshot from an already parsed JSON value.
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        let any: AnySnapshot = serde_json::from_value(value)
            .map_err(|e| MemoryError::corrupt("short-term memory snapshot", e))?;
        match any {
            AnySnapshot::Legacy(messages) => Ok(Self {
                version: SNAPSHOT_VERSION,
                messages,
                summary: None,
            }),
            AnySnapshot::Versioned {
                version,
                messages,
                summary,
            } => {
                if version == 0 || version > SNAPSHOT_VERSION {
                    return Err(MemoryError::UnsupportedVersion {
                        what: "short-term memory snapshot",
                        found: version,
                        supported: SNAPSHOT_VERSION,
                    });
                }
                let messages: Vec<Message> = if messages.is_null() {
                    Vec::new()
                } else {
                    serde_json::from_value(messages)
                        .map_err(|e| MemoryError::corrupt("short-term memory snapshot", e))?
                };
                Ok(Self {
                    version: SNAPSHOT_VERSION,
                    messages,
                    summary,
                })
            }
        }
    }

    /// The snapshot as JSON.
    pub fn to_json(&self) -> String {
        // Messages hold only JSON-representable data, so this cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}
