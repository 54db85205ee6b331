//! Conversation messages: who said what, when, and which tool calls they carry.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ulid::Ulid;

/// The largest message agentmem takes by default, in bytes of content: 1 MiB
/// (1,048,576 bytes).
///
/// A session ([`SessionConfig::max_message_bytes`](crate::session::SessionConfig::max_message_bytes)),
/// [`ingest`](crate::ingest::ingest) ([`IngestConfig`](crate::ingest::IngestConfig)) and
/// the facade's `MemoryManager::add_messages` (`MemoryConfig::max_message_bytes`) refuse a
/// larger message with [`MemoryError::PayloadTooLarge`](crate::MemoryError::PayloadTooLarge)
/// before anything is logged, embedded or extracted: analysing a message costs memory
/// many times its size, so a pasted file of tens of megabytes would otherwise take
/// gigabytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// Free-form metadata attached to messages, documents and facts.
pub type Metadata = BTreeMap<String, serde_json::Value>;

/// Who produced a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model; never trimmed from a window.
    System,
    /// The human.
    User,
    /// The model.
    Assistant,
    /// The result of a tool the assistant called.
    Tool,
}

impl Role {
    /// The lowercase name used on the wire (`"user"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One block of a multi-part message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image by URL (or `data:` URL).
    Image {
        /// Where the image is.
        url: String,
        /// Its media type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    /// Structured data.
    Json {
        /// The value.
        value: serde_json::Value,
    },
}

/// The body of a message: plain text, or a list of blocks.
///
/// In JSON, a string or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Several blocks.
    Blocks(Vec<ContentBlock>),
}

/// Reads a string as [`Content::Text`] and an array as [`Content::Blocks`] directly
/// (what `#[serde(untagged)]` would do after first copying the value into a buffer).
impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;

        impl<'de> serde::de::Visitor<'de> for ContentVisitor {
            type Value = Content;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Content, E> {
                Ok(Content::Text(s.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Content, E> {
                Ok(Content::Text(s))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Content, A::Error> {
                Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Content::Blocks)
            }
        }

        d.deserialize_any(ContentVisitor)
    }
}

impl Content {
    /// All text in the content, blocks joined by newlines; non-text blocks are skipped
    /// except JSON, which is rendered compactly.
    pub fn to_text(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(blocks) => {
                let mut out = String::new();
                for block in blocks {
                    let piece = match block {
                        ContentBlock::Text { text } => text.clone(),
                        ContentBlock::Json { value } => value.to_string(),
                        ContentBlock::Image { .. } => continue,
                    };
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&piece);
                }
                out
            }
        }
    }

    /// Number of characters of text the content carries (used by token heuristics).
    pub fn char_len(&self) -> usize {
        match self {
            Content::Text(t) => t.chars().count(),
            Content::Blocks(blocks) => blocks
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.chars().count(),
                    ContentBlock::Json { value } => value.to_string().chars().count(),
                    ContentBlock::Image { url, .. } => url.len().min(256),
                })
                .sum(),
        }
    }
}

impl Content {
    /// Size of the content in bytes: the UTF-8 bytes of its text blocks, of its JSON
    /// blocks as compact JSON, and of its image URLs. What
    /// [`Message::check_size`] compares with a limit.
    ///
    /// ```
    /// use agentmemory_core::{Content, ContentBlock};
    ///
    /// assert_eq!(Content::from("héllo").byte_len(), 6);
    /// let blocks = Content::from(vec![
    ///     ContentBlock::Text { text: "ab".into() },
    ///     ContentBlock::Json { value: serde_json::json!({"k": 1}) },
    /// ]);
    /// assert_eq!(blocks.byte_len(), 2 + r#"{"k":1}"#.len());
    /// ```
    pub fn byte_len(&self) -> usize {
        match self {
            Content::Text(t) => t.len(),
            Content::Blocks(blocks) => blocks
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.len(),
                    ContentBlock::Json { value } => json_len(value),
                    ContentBlock::Image { url, .. } => url.len(),
                })
                .sum(),
        }
    }
}

/// Bytes of `value` as compact JSON, counted without building the string.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::Text(s.to_owned())
    }
}

impl From<Vec<ContentBlock>> for Content {
    fn from(b: Vec<ContentBlock>) -> Self {
        Content::Blocks(b)
    }
}

/// A tool invocation requested by the assistant; its result comes back as a
/// [`Role::Tool`] message whose `tool_call_id` equals this `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id that links the result to this call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A tool call with JSON arguments.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// One message of a conversation.
///
/// ```
/// use agentmemory_core::{Message, Role, ToolCall};
///
/// let ask = Message::assistant_with_tools("", vec![ToolCall::new("c1", "weather", serde_json::json!({"city": "Oslo"}))]);
/// let answer = Message::tool_result("c1", "-3°C, snow");
/// assert_eq!(answer.role, Role::Tool);
/// assert_eq!(answer.tool_call_id.as_deref(), Some("c1"));
///
/// let json = serde_json::to_string(&ask).unwrap();
/// let back: Message = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, ask);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message {
    /// Unique, time-ordered id.
    pub id: Ulid,
    /// Who produced it.
    pub role: Role,
    /// What was said.
    pub content: Content,
    /// Tool calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a [`Role::Tool`] message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// When it was created.
    #[serde(default = "Utc::now", deserialize_with = "crate::rfc3339::deserialize")]
    pub created_at: DateTime<Utc>,
    /// Free metadata.
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

impl Message {
    /// A message with a fresh id, stamped now.
    pub fn new(role: Role, content: impl Into<Content>) -> Self {
        Self {
            id: Ulid::new(),
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            created_at: Utc::now(),
            metadata: Metadata::new(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<Content>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<Content>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// An assistant message that calls tools.
    pub fn assistant_with_tools(content: impl Into<Content>, calls: Vec<ToolCall>) -> Self {
        let mut m = Self::new(Role::Assistant, content);
        m.tool_calls = calls;
        m
    }

    /// The result of the tool call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<Content>) -> Self {
        let mut m = Self::new(Role::Tool, content);
        m.tool_call_id = Some(call_id.into());
        m
    }

    /// Sets when the message was said (by default, when it was made): how a past
    /// conversation is imported at its own times.
    pub fn at(mut self, created_at: DateTime<Utc>) -> Self {
        self.created_at = created_at;
        self
    }

    /// Attach a metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// The message's text (blocks joined by newlines).
    pub fn text(&self) -> String {
        self.content.to_text()
    }

    /// Refuses a message whose content ([`Content::byte_len`]) is over `limit` bytes with
    /// [`MemoryError::PayloadTooLarge`](crate::MemoryError::PayloadTooLarge); a message of
    /// exactly `limit` bytes passes. See [`DEFAULT_MAX_MESSAGE_BYTES`].
    ///
    /// ```
    /// use agentmemory_core::{Message, MemoryError};
    ///
    /// assert!(Message::user("hello").check_size(5).is_ok());
    /// let err = Message::user("hello!").check_size(5).unwrap_err();
    /// assert!(matches!(err, MemoryError::PayloadTooLarge { size: 6, limit: 5, .. }));
    /// assert_eq!(err.to_string(), "message is too large: 6 bytes (limit 5)");
    /// ```
    pub fn check_size(&self, limit: usize) -> crate::error::Result<()> {
        let size = self.content.byte_len();
        if size > limit {
            return Err(crate::error::MemoryError::PayloadTooLarge {
                what: "message",
                size,
                limit,
            });
        }
        Ok(())
    }
}
