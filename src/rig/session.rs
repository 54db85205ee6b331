//! rig's session store ([`rig_memory::AsyncStore`]) over agentmem's stores.
//!
//! rig keeps a conversation as a log of bytes (its session format, JSON lines) that a run
//! reads whole and extends with one append once it finished, naming the length it read:
//! the store appends only if the log is still that long, checking and writing in one step.
//! Each write is one message event of the agentmem conversation of the same name (a
//! *slot*: the log's generation and the byte length it extends, its bytes in the
//! message), appended with [`ConversationStore::append_if`] at the seq the writer read:
//! of two writers that read the same log, the store lets one in and the other finds the
//! log moved on and is refused with [`LogWriteError::Changed`]. The slot also names the
//! event's id, so a write retried after a lost answer is logged once.
//!
//! A replace fills a slot too, and starts the next generation (its bytes are the whole
//! log), so a replace and an append that read the same log also exclude each other.
//! Reading replays the slots in order. The conversation's other events (its `Started`
//! owner, `FactsChanged` from the memory tools) share the log and are skipped.
//!
//! **Reads are incremental.** The logs replayed are kept ([`LogCache`], bounded by bytes)
//! with the seq and time of the last event read; a read or a write loads the log from that
//! event on, checks it is still the same event (a log deleted and started again is read
//! whole) and applies what follows. A run that reads its log and appends to it reads each
//! event once, not the whole log every time.
//!
//! Named files (blobs, plugin data) go to the [`KvStore`] given to
//! [`RigMemoryBuilder::files`](super::RigMemoryBuilder::files), one namespace per user.

use std::collections::HashMap;
use std::io;

use agentmemory_core::conversation::{AppendIf, ConversationEvent, StoredEvent};
use agentmemory_core::episodes::stable_ulid;
use agentmemory_core::kv::{MemoryEntry, MemoryScope};
use agentmemory_core::{KvStore, MemoryError, Message, Role};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use rig_memory::{check_log_name, check_name, AsyncStore, LogWriteError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RigMemory;

/// The metadata entry that marks a message event as a slot of rig's session log.
const SLOT: &str = "rig.session";
/// The metadata entry holding a slot's bytes when they are not UTF-8.
const SLOT_BYTES: &str = "rig.session.bytes";
/// The agent name the log records for conversations opened through rig.
pub(crate) const AGENT: &str = "rig";

/// What a slot event does to the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    /// Adds its bytes at the end.
    Append,
    /// Replaces the log with its bytes, starting generation `generation + 1`.
    Replace,
    /// Starts an empty log (an empty append to a missing one). It fills a slot of its
    /// own, so the first real append still claims the slot at 0.
    Start,
}

/// What a slot event says besides its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Slot {
    /// The generation it extends (0 for a log never replaced).
    generation: u64,
    /// The byte length of the log it extends.
    at: u64,
    op: Op,
    /// Tells this writer's event from another's in the same slot (64 random bits; a
    /// JSON number, which `u128` is not).
    nonce: u64,
}

/// rig's session log as the slots replayed so far.
#[derive(Debug, Default, Clone)]
struct LogState {
    /// Whose conversation it is: the last `Started` event's user.
    owner: Option<String>,
    generation: u64,
    bytes: Vec<u8>,
    /// Whether any slot was written.
    exists: bool,
    /// The last event read.
    seq: u64,
    /// When the store wrote the last event read: with `seq`, what tells this log from one
    /// deleted and started again.
    last_at: Option<DateTime<Utc>>,
}

impl LogState {
    fn apply(&mut self, stored: &StoredEvent) {
        if stored.seq >= self.seq {
            self.seq = stored.seq;
            self.last_at = Some(stored.at);
        }
        match &stored.event {
            // The log's owner is its last Started event (`Owner::of`, the one rule).
            ConversationEvent::Started { user_id, .. } => {
                self.owner = Some(user_id.clone());
            }
            ConversationEvent::Message { message } => {
                let Some((slot, bytes)) = decode(message) else {
                    return;
                };
                // On a backend that keeps its promise every slot is unique; one that does
                // not fit where the log stands is not part of it.
                if slot.generation != self.generation || slot.at != self.bytes.len() as u64 {
                    return;
                }
                match slot.op {
                    Op::Append => self.bytes.extend_from_slice(&bytes),
                    Op::Replace => {
                        self.bytes = bytes;
                        self.generation += 1;
                    }
                    Op::Start => {}
                }
                self.exists = true;
            }
            _ => {}
        }
    }
}

/// The bytes of replayed logs a [`RigMemory`] keeps: 64 MiB.
const CACHE_BYTES: usize = 64 << 20;

/// rig's session logs as last replayed, least recently used dropped first once their
/// bytes pass [`CACHE_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct LogCache {
    logs: HashMap<String, (LogState, u64)>,
    bytes: usize,
    tick: u64,
}

impl LogCache {
    fn get(&mut self, name: &str) -> Option<LogState> {
        self.tick += 1;
        let tick = self.tick;
        self.logs.get_mut(name).map(|(state, used)| {
            *used = tick;
            state.clone()
        })
    }

    fn remove(&mut self, name: &str) {
        if let Some((gone, _)) = self.logs.remove(name) {
            self.bytes -= gone.bytes.len();
        }
    }

    fn put(&mut self, name: &str, state: LogState) {
        self.tick += 1;
        self.bytes += state.bytes.len();
        if let Some((old, _)) = self.logs.insert(name.to_owned(), (state, self.tick)) {
            self.bytes -= old.bytes.len();
        }
        while self.bytes > CACHE_BYTES && self.logs.len() > 1 {
            let Some(oldest) = self
                .logs
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((gone, _)) = self.logs.remove(&oldest) {
                self.bytes -= gone.bytes.len();
            }
        }
    }
}

/// The message event filling `slot` of `log` with `bytes`.
fn encode(log: &str, slot: Slot, bytes: &[u8]) -> Message {
    let (text, raw) = match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), None),
        Err(_) => (
            String::new(),
            Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
    };
    let mut message = Message::new(Role::Tool, text)
        .with_metadata(SLOT, serde_json::to_value(slot).unwrap_or(Value::Null));
    if let Some(raw) = raw {
        message = message.with_metadata(SLOT_BYTES, Value::String(raw));
    }
    message.id = slot_id(log, slot);
    message.tool_call_id = Some(SLOT.to_owned());
    message
}

/// The slot a message event fills and its bytes, if it is one.
fn decode(message: &Message) -> Option<(Slot, Vec<u8>)> {
    let slot: Slot = serde_json::from_value(message.metadata.get(SLOT)?.clone()).ok()?;
    let bytes = match message.metadata.get(SLOT_BYTES) {
        Some(Value::String(raw)) => base64::engine::general_purpose::STANDARD.decode(raw).ok()?,
        Some(_) => return None,
        None => message.text().into_bytes(),
    };
    Some((slot, bytes))
}

/// The id every writer of `slot`'s place in `log` (its generation and length; a start
/// has a place of its own) gives its event: the same in every process, so the store's
/// idempotent append lets one of them in.
fn slot_id(log: &str, slot: Slot) -> ulid::Ulid {
    let start: &[u8] = if slot.op == Op::Start { b"s" } else { b"w" };
    stable_ulid(
        DateTime::UNIX_EPOCH,
        &[
            SLOT.as_bytes(),
            start,
            &slot.generation.to_be_bytes(),
            &slot.at.to_be_bytes(),
            log.as_bytes(),
        ],
    )
}

fn io_error(error: MemoryError) -> io::Error {
    io::Error::other(error)
}

/// A log's state replayed from all of its events.
fn replayed(events: &[StoredEvent]) -> LogState {
    let mut state = LogState::default();
    for stored in events {
        state.apply(stored);
    }
    state
}

/// One user's conversations as rig's session store: give it to `AgentBuilder::memory` or
/// `AgentRunner::memory` (what [`UserMemory::prepare`](super::UserMemory::prepare) does).
///
/// Each rig log is the agentmem conversation of the same name, owned by the user who
/// started it: this store refuses another user's log with
/// [`io::ErrorKind::PermissionDenied`] (so rig fails the run), and names the user as the
/// owner of a log it starts. A write keeps rig's contract: it appends (or replaces) only
/// if the log is the length the writer read, in one step — see the module docs for how.
/// Files are kept in the [`KvStore`] given to
/// [`RigMemoryBuilder::files`](super::RigMemoryBuilder::files), under the namespace
/// `rig.files/<user>`; without one, file calls fail with [`io::ErrorKind::Unsupported`].
///
/// Cheap to clone; clones share the stores.
#[derive(Debug, Clone)]
pub struct SessionStore {
    memory: RigMemory,
    user_id: String,
}

impl SessionStore {
    pub(crate) fn new(memory: RigMemory, user_id: String) -> Self {
        Self { memory, user_id }
    }

    /// The user whose conversations this store reads and writes.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The log `name` as its events say, refusing another user's: the state kept from
    /// the last read brought up to date with what the log gained since, or the whole log
    /// replayed when none is kept or the log is no longer the one read.
    async fn state(&self, name: &str) -> io::Result<LogState> {
        check_log_name(name)?;
        let log = &self.memory.shared().log;
        let kept = self.cache().get(name);
        let mut state = match kept {
            Some(mut state) if state.seq > 0 => {
                let tail = log
                    .load_since(name, state.seq - 1)
                    .await
                    .map_err(io_error)?;
                match tail.first() {
                    Some(first) if first.seq == state.seq && Some(first.at) == state.last_at => {
                        for stored in &tail[1..] {
                            state.apply(stored);
                        }
                        state
                    }
                    _ => replayed(&log.load(name).await.map_err(io_error)?),
                }
            }
            _ => replayed(&log.load(name).await.map_err(io_error)?),
        };
        if let Some(owner) = &state.owner {
            if *owner != self.user_id {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("conversation `{name}` belongs to another user"),
                ));
            }
        }
        if state.seq > 0 {
            self.cache().put(name, state.clone());
        } else {
            // No log (any more): nothing kept for it.
            self.cache().remove(name);
            state = LogState::default();
        }
        Ok(state)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, LogCache> {
        // A panic while holding it left a cache of whole states: still usable.
        self.memory
            .shared()
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Fills the slot after `len` bytes of the log `name` with `bytes`, appended at the
    /// seq read ([`ConversationStore::append_if`]); when the log moved on only by events
    /// that are no slots (the memory tools' fact changes), it tries again at the new seq.
    async fn write_slot(
        &self,
        name: &str,
        len: u64,
        bytes: &[u8],
        op: Op,
    ) -> Result<(), LogWriteError> {
        const ATTEMPTS: usize = 8;
        for _ in 0..ATTEMPTS {
            let state = self.state(name).await?;
            if state.bytes.len() as u64 != len {
                return Err(LogWriteError::Changed);
            }
            let mut op = op;
            if op == Op::Append && bytes.is_empty() {
                if state.exists {
                    return Ok(());
                }
                op = Op::Start;
            }
            let slot = Slot {
                generation: state.generation,
                at: len,
                op,
                // The low 64 of the ULID's 80 random bits.
                nonce: ulid::Ulid::new().random() as u64,
            };
            let message = encode(name, slot, bytes);
            let id = message.id;
            let mut events = Vec::with_capacity(2);
            if state.owner.is_none() {
                events.push(ConversationEvent::Started {
                    user_id: self.user_id.clone(),
                    agent: AGENT.to_owned(),
                });
            }
            events.push(ConversationEvent::Message { message });
            let log = &self.memory.shared().log;
            match log
                .append_if(name, state.seq, events)
                .await
                .map_err(io_error)?
            {
                AppendIf::Conflict { .. } => continue,
                AppendIf::Appended { .. } => {}
            }
            // The event in the slot: this write's, or (a write retried after its answer
            // was lost) the one an earlier attempt logged.
            let since = log.load_since(name, state.seq).await.map_err(io_error)?;
            let kept = since.iter().find_map(|stored| match &stored.event {
                ConversationEvent::Message { message } if message.id == id => decode(message),
                _ => None,
            });
            return match kept {
                Some((kept, _)) if kept == slot => Ok(()),
                // Two writers that start the same empty log both did what they asked.
                Some(_) if op == Op::Start => Ok(()),
                Some(_) => Err(LogWriteError::Changed),
                None => Err(LogWriteError::Io(io::Error::other(format!(
                    "the conversation store kept no event for the write to `{name}`"
                )))),
            };
        }
        Err(LogWriteError::Changed)
    }

    fn files(&self) -> io::Result<&dyn KvStore> {
        self.memory.shared().files.as_deref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                "no file store: give one to RigMemoryBuilder::files",
            )
        })
    }

    fn namespace(&self) -> String {
        format!("rig.files/{}", self.user_id)
    }
}

impl AsyncStore for SessionStore {
    async fn read_log_async(&self, name: &str) -> io::Result<Vec<u8>> {
        let state = self.state(name).await?;
        if !state.exists {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(state.bytes)
    }

    async fn append_log_async(
        &self,
        name: &str,
        len: u64,
        bytes: &[u8],
    ) -> Result<(), LogWriteError> {
        self.write_slot(name, len, bytes, Op::Append).await
    }

    async fn replace_log_async(
        &self,
        name: &str,
        len: u64,
        bytes: &[u8],
    ) -> Result<(), LogWriteError> {
        self.write_slot(name, len, bytes, Op::Replace).await
    }

    async fn read_file_async(&self, name: &str) -> io::Result<Vec<u8>> {
        check_name(name)?;
        let entry = self
            .files()?
            .get(&self.namespace(), name)
            .await
            .map_err(io_error)?
            .ok_or(io::ErrorKind::NotFound)?;
        let Value::String(raw) = &entry.content else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("file `{name}` is not base64 text"),
            ));
        };
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    async fn write_file_async(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        check_name(name)?;
        let raw = base64::engine::general_purpose::STANDARD.encode(bytes);
        let entry = MemoryEntry::new(MemoryScope::LongTerm, name, Value::String(raw));
        self.files()?
            .put(&self.namespace(), entry)
            .await
            .map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip_text_and_bytes() {
        let slot = Slot {
            generation: 2,
            at: 10,
            op: Op::Append,
            nonce: 7,
        };
        for bytes in [&b"{\"a\":1}\n"[..], &[0xff, 0x00, 0x80][..]] {
            let message = encode("chat", slot, bytes);
            let (back, back_bytes) = decode(&message).unwrap();
            assert_eq!(back, slot);
            assert_eq!(back_bytes, bytes);
        }
        assert!(decode(&Message::user("hello")).is_none());
    }

    #[test]
    fn one_id_per_slot() {
        let slot = |generation, at, op, nonce| Slot {
            generation,
            at,
            op,
            nonce,
        };
        let id = |log, s| slot_id(log, s);
        let base = id("chat", slot(0, 5, Op::Append, 1));
        // Writers of one place share the id, whatever they write.
        assert_eq!(base, id("chat", slot(0, 5, Op::Append, 2)));
        assert_eq!(base, id("chat", slot(0, 5, Op::Replace, 3)));
        assert_ne!(base, id("chat", slot(1, 5, Op::Append, 1)));
        assert_ne!(base, id("chat", slot(0, 6, Op::Append, 1)));
        assert_ne!(base, id("other", slot(0, 5, Op::Append, 1)));
        assert_ne!(base, id("chat", slot(0, 5, Op::Start, 1)));
    }
}
