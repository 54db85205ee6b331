//! [`ConversationBuffer`]: the last N messages, shared safely between tasks.

use std::collections::VecDeque;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::error::{MemoryError, Result};
use crate::message::Message;

use super::legacy::messages_from_value;

/// The default number of messages kept.
pub const DEFAULT_MAX_MESSAGES: usize = 100;

/// A rolling buffer of the last `max_messages` messages; the oldest are evicted first.
/// `max_messages = 0` turns buffering off (appends are discarded).
///
/// Every method takes `&self` behind one short internal lock, so an
/// `Arc<ConversationBuffer>` can be shared by many tasks or threads.
///
/// ```
/// use std::sync::Arc;
/// use agentmemory_core::{buffer::ConversationBuffer, Message};
///
/// let buffer = Arc::new(ConversationBuffer::new(2));
/// buffer.append(Message::user("one"));
/// buffer.extend([Message::assistant("two"), Message::user("three")]);
/// let texts: Vec<_> = buffer.get_messages().iter().map(|m| m.text()).collect();
/// assert_eq!(texts, ["two", "three"]);
///
/// let json = buffer.to_json();
/// let copy = ConversationBuffer::from_json(&json).unwrap();
/// assert_eq!(copy.len(), 2);
/// ```
#[derive(Debug)]
pub struct ConversationBuffer {
    max_messages: usize,
    messages: Mutex<VecDeque<Message>>,
}

/// The checkpoint written by [`ConversationBuffer::to_json`].
#[derive(Serialize)]
struct Checkpoint<'a> {
    version: u32,
    max_messages: usize,
    messages: &'a [Message],
}

/// A checkpoint as read: the version is absent from the legacy `to_dict` form, and its
/// messages may lack ids.
#[derive(Deserialize)]
struct StoredCheckpoint {
    #[serde(default)]
    version: Option<u32>,
    max_messages: usize,
    messages: serde_json::Value,
}

/// What errors name.
const WHAT: &str = "conversation buffer checkpoint";

const CHECKPOINT_VERSION: u32 = 1;

impl Default for ConversationBuffer {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_MESSAGES)
    }
}

impl ConversationBuffer {
    /// A buffer keeping the last `max_messages` messages.
    pub fn new(max_messages: usize) -> Self {
        Self {
            max_messages,
            messages: Mutex::new(VecDeque::with_capacity(max_messages.min(1024))),
        }
    }

    /// The capacity.
    pub fn max_messages(&self) -> usize {
        self.max_messages
    }

    fn evict(&self, messages: &mut VecDeque<Message>) {
        let excess = messages.len().saturating_sub(self.max_messages);
        messages.drain(..excess);
    }

    /// Appends one message, evicting the oldest beyond capacity.
    pub fn append(&self, message: Message) {
        if self.max_messages == 0 {
            return;
        }
        let mut messages = self.messages.lock();
        messages.push_back(message);
        self.evict(&mut messages);
    }

    /// Appends several messages at once (atomically with respect to other callers).
    pub fn extend(&self, new: impl IntoIterator<Item = Message>) {
        if self.max_messages == 0 {
            return;
        }
        let mut messages = self.messages.lock();
        messages.extend(new);
        self.evict(&mut messages);
    }

    /// A copy of the messages, oldest first.
    pub fn get_messages(&self) -> Vec<Message> {
        self.messages.lock().iter().cloned().collect()
    }

    /// Replaces the content (keeping only the last `max_messages`).
    pub fn set_messages(&self, new: Vec<Message>) {
        let mut messages = self.messages.lock();
        messages.clear();
        if self.max_messages > 0 {
            messages.extend(new);
            self.evict(&mut messages);
        }
    }

    /// Removes every message.
    pub fn clear(&self) {
        self.messages.lock().clear();
    }

    /// Number of messages held.
    pub fn len(&self) -> usize {
        self.messages.lock().len()
    }

    /// Whether no message is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A versioned JSON checkpoint of the buffer.
    pub fn to_json(&self) -> String {
        let messages = self.get_messages();
        let checkpoint = Checkpoint {
            version: CHECKPOINT_VERSION,
            max_messages: self.max_messages,
            messages: &messages,
        };
        serde_json::to_string(&checkpoint).unwrap_or_else(|_| String::from("{}"))
    }

    /// Rebuilds a buffer from [`to_json`](Self::to_json) output, or from the legacy
    /// ConversationBuffer `to_dict` checkpoint `{"max_messages": N, "messages": [...]}`
    /// (no version; plain `{role, content}` messages get stable ids, see
    /// [`ShortTermSnapshot::from_json`](super::ShortTermSnapshot::from_json)).
    ///
    /// ```
    /// use agentmemory_core::buffer::ConversationBuffer;
    ///
    /// let legacy = r#"{"max_messages": 2, "messages": [
    ///     {"role": "user", "content": "Hello!"}, {"role": "assistant", "content": "Hi there!"}]}"#;
    /// let buffer = ConversationBuffer::from_json(legacy).unwrap();
    /// assert_eq!((buffer.max_messages(), buffer.len()), (2, 2));
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let checkpoint: StoredCheckpoint =
            serde_json::from_str(json).map_err(|e| MemoryError::corrupt(WHAT, e))?;
        let version = checkpoint.version.unwrap_or(CHECKPOINT_VERSION);
        if version == 0 || version > CHECKPOINT_VERSION {
            return Err(MemoryError::UnsupportedVersion {
                what: WHAT,
                found: version,
                supported: CHECKPOINT_VERSION,
            });
        }
        let buffer = Self::new(checkpoint.max_messages);
        buffer.set_messages(messages_from_value(checkpoint.messages, WHAT)?);
        Ok(buffer)
    }
}

impl Clone for ConversationBuffer {
    fn clone(&self) -> Self {
        Self {
            max_messages: self.max_messages,
            messages: Mutex::new(self.messages.lock().clone()),
        }
    }
}
