//! The versioned, serialisable state of a [`ShortTermMemory`](super::ShortTermMemory).

use serde::{Deserialize, Serialize};

use crate::error::{MemoryError, Result};
use crate::message::Message;

use super::legacy::messages_from_value;

/// What errors name.
const WHAT: &str = "short-term memory snapshot";

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

impl ShortTermSnapshot {
    /// Reads a snapshot from JSON.
    ///
    /// Accepted forms:
    /// - the versioned object this build writes: `{"version": 1, "messages": [...], "summary": ...}`;
    /// - legacy: a bare list of messages, as older versions of `snapshot()` wrote, including
    ///   plain `[{"role": ..., "content": ...}]` lists without ids;
    /// - legacy: the Python memory API's snapshot dict `{"messages": [...], "summary": ...}`
    ///   without a version;
    /// - legacy: a ConversationBuffer `to_dict` checkpoint `{"max_messages": N, "messages": [...]}`
    ///   (the window size is not part of a short-term memory and is ignored).
    ///
    /// Messages without an `id` get a stable one, the same each time the same data is read
    /// (derived from the message's position, role, content and `created_at`). Anything else
    /// is [`MemoryError::Corrupt`]; a version newer than [`SNAPSHOT_VERSION`] is
    /// [`MemoryError::UnsupportedVersion`].
    ///
    /// ```
    /// use agentmemory_core::ShortTermSnapshot;
    ///
    /// let legacy = r#"[{"id":"01HZY5V7Q3W5X0B6N1M2K3J4H5","role":"user","content":"hi"}]"#;
    /// let snap = ShortTermSnapshot::from_json(legacy).unwrap();
    /// assert_eq!(snap.messages.len(), 1);
    ///
    /// let python = r#"{"messages": [{"role": "user", "content": "hi"}], "summary": "greetings"}"#;
    /// let snap = ShortTermSnapshot::from_json(python).unwrap();
    /// assert_eq!(snap.summary.as_deref(), Some("greetings"));
    /// assert_eq!(snap.messages[0].id, ShortTermSnapshot::from_json(python).unwrap().messages[0].id);
    ///
    /// assert!(ShortTermSnapshot::from_json(r#"{"version": 99, "messages": []}"#).is_err());
    /// assert!(ShortTermSnapshot::from_json("not json").is_err());
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| MemoryError::corrupt(WHAT, e))?;
        Self::from_value(value)
    }

    /// Reads a snapshot from an already parsed JSON value (the forms of [`from_json`](Self::from_json)).
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        let mut fields = match value {
            list @ serde_json::Value::Array(_) => {
                return Ok(Self {
                    version: SNAPSHOT_VERSION,
                    messages: messages_from_value(list, WHAT)?,
                    summary: None,
                });
            }
            serde_json::Value::Object(fields) => fields,
            other => {
                return Err(MemoryError::corrupt(
                    WHAT,
                    format!("expected an object or a list of messages, found {other}"),
                ))
            }
        };
        match fields.remove("version") {
            None | Some(serde_json::Value::Null) => {
                // The legacy dicts always carry their messages.
                if !fields.contains_key("messages") {
                    return Err(MemoryError::corrupt(WHAT, "neither a version nor messages"));
                }
            }
            Some(version) => {
                let version = version
                    .as_u64()
                    .ok_or_else(|| MemoryError::corrupt(WHAT, format!("version {version}")))?;
                let found = u32::try_from(version).unwrap_or(u32::MAX);
                if found == 0 || found > SNAPSHOT_VERSION {
                    return Err(MemoryError::UnsupportedVersion {
                        what: WHAT,
                        found,
                        supported: SNAPSHOT_VERSION,
                    });
                }
            }
        }
        let messages = match fields.remove("messages") {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(list) => messages_from_value(list, WHAT)?,
        };
        let summary = match fields.remove("summary") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s),
            Some(other) => {
                return Err(MemoryError::corrupt(
                    WHAT,
                    format!("summary is not a string: {other}"),
                ))
            }
        };
        Ok(Self {
            version: SNAPSHOT_VERSION,
            messages,
            summary,
        })
    }

    /// The snapshot as JSON.
    pub fn to_json(&self) -> String {
        // Messages hold only JSON-representable data, so this cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{ConversationBuffer, ShortTermMemory};
    use crate::message::Role;

    /// The ids and texts of `messages` (a missing `created_at` is the restore time, so whole
    /// messages differ between two restores).
    fn ids(messages: &[Message]) -> Vec<(ulid::Ulid, String)> {
        messages.iter().map(|m| (m.id, m.text())).collect()
    }

    /// Restores `json` into a fresh memory and returns its snapshot.
    fn restored(json: &str) -> ShortTermSnapshot {
        let mut memory = ShortTermMemory::new(10_000);
        memory.restore_json(json).unwrap();
        memory.snapshot()
    }

    #[test]
    fn legacy_python_snapshot_dict_without_version() {
        let json = r#"{"messages": [{"role": "user", "content": "I live in Berlin"},
                                    {"role": "assistant", "content": "Noted"}],
                       "summary": "The user introduced themselves."}"#;
        let snap = restored(json);
        assert_eq!(snap.messages.len(), 2);
        assert_eq!(snap.messages[0].role, Role::User);
        assert_eq!(snap.messages[1].text(), "Noted");
        assert_eq!(
            snap.summary.as_deref(),
            Some("The user introduced themselves.")
        );
        // Same input, same ids.
        assert_eq!(ids(&snap.messages), ids(&restored(json).messages));
        // A null summary is no summary.
        let none = restored(r#"{"messages": [], "summary": null}"#);
        assert_eq!((none.messages.len(), none.summary), (0, None));
    }

    #[test]
    fn legacy_plain_role_content_list() {
        let json = r#"[{"role": "system", "content": "Be brief."},
                       {"role": "user", "content": "hi"}]"#;
        let snap = restored(json);
        assert_eq!(snap.messages.len(), 2);
        assert_eq!(snap.messages[0].role, Role::System);
        assert_eq!(snap.summary, None);
        assert_eq!(ids(&snap.messages), ids(&restored(json).messages));
    }

    #[test]
    fn legacy_conversation_buffer_checkpoint() {
        let json = r#"{"max_messages": 100, "messages": [
            {"role": "user", "content": "Check the pipeline status."},
            {"role": "assistant", "content": "Pipeline is healthy."}]}"#;
        let snap = restored(json);
        assert_eq!(snap.messages.len(), 2);
        assert_eq!(snap.messages[1].text(), "Pipeline is healthy.");
        let buffer = ConversationBuffer::from_json(json).unwrap();
        assert_eq!(buffer.max_messages(), 100);
        assert_eq!(ids(&buffer.get_messages()), ids(&snap.messages));
        // What the buffer writes now reads back as a short-term snapshot too.
        let again = ShortTermSnapshot::from_json(&buffer.to_json()).unwrap();
        assert_eq!(again.messages, buffer.get_messages());
    }

    #[test]
    fn current_snapshots_round_trip() {
        let mut memory = ShortTermMemory::new(10_000);
        memory.add(crate::Message::user("hello"));
        memory.set_summary("earlier");
        let snap = memory.snapshot();
        assert_eq!(ShortTermSnapshot::from_json(&snap.to_json()).unwrap(), snap);
    }

    #[test]
    fn corrupt_snapshots_are_typed_errors() {
        for bad in [
            "not json",
            "42",
            r#"{"summary": "only a summary"}"#,
            r#"{"messages": "not a list"}"#,
            r#"{"messages": [{"role": "user"}]}"#,
            r#"{"messages": [], "summary": 3}"#,
            r#"{"version": "one", "messages": []}"#,
            r#"[{"role": "nobody", "content": "x"}]"#,
        ] {
            let err = ShortTermSnapshot::from_json(bad).unwrap_err();
            assert!(matches!(err, MemoryError::Corrupt { .. }), "{bad}: {err}");
        }
        let err = ShortTermSnapshot::from_json(r#"{"version": 2, "messages": []}"#).unwrap_err();
        assert!(matches!(
            err,
            MemoryError::UnsupportedVersion { found: 2, .. }
        ));
        for bad in [
            r#"{"messages": []}"#,
            r#"{"max_messages": 3, "messages": 1}"#,
        ] {
            let err = ConversationBuffer::from_json(bad).unwrap_err();
            assert!(matches!(err, MemoryError::Corrupt { .. }), "{bad}: {err}");
        }
    }
}
