//! Importing real history: a past conversation fed to memory as if it happened then.
//!
//! [`ingest`] logs the messages in the conversation store, keeps them as episodes of the
//! user, and extracts facts from each user message (with the assistant's reply as
//! context), reconciled at the messages' own times — how a user migrates from another
//! memory system. Ingesting the same conversation again is a no-op for the log and the
//! episodes: message ids are derived from the conversation, the position and the text.
//!
//! ```
//! # tokio_test::block_on(async {
//! use std::sync::Arc;
//! use agentmemory_core::ingest::ingest;
//! use agentmemory_core::{Container, InMemoryConversationStore, InMemoryUserMemoryStore, Message};
//! use chrono::{TimeZone, Utc};
//!
//! let container = Container::new();
//! container.register_user_memory("facts", Arc::new(InMemoryUserMemoryStore::new()));
//! container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
//! let at = Utc.with_ymd_and_hms(2024, 4, 2, 19, 0, 0).unwrap();
//! let history = vec![
//!     Message::user("I live in Lisbon and I love surfing").at(at),
//!     Message::assistant("Lisbon has great waves!").at(at + chrono::Duration::minutes(1)),
//! ];
//! let report = ingest(&container, "rui", Some("old-chat"), history).await?;
//! assert_eq!((report.messages, report.episodes), (2, 2));
//! assert!(report.facts_changed >= 1);
//! # Ok::<_, agentmemory_core::MemoryError>(())
//! # }).unwrap();
//! ```

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;

use crate::conversation::{ConversationEvent, ConversationStore};
use crate::di::Container;
use crate::episodes::Episode;
use crate::error::{MemoryError, Result};
use crate::extract::{FactExtractor, Turn, UnreadLanguage};
use crate::facts::{FactChange, UserMemoryStore};
use crate::message::{Message, Role, DEFAULT_MAX_MESSAGE_BYTES};

/// The agent name recorded for an ingested conversation.
pub const INGEST_AGENT: &str = "ingest";

/// What an [`ingest`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IngestReport {
    /// The conversation id the messages were logged under.
    pub conversation_id: String,
    /// Messages read.
    pub messages: usize,
    /// Messages kept as episodes (user and assistant messages with text).
    pub episodes: usize,
    /// Facts added, reinforced, superseded or contested.
    pub facts_changed: usize,
    /// Candidates that changed nothing.
    pub facts_ignored: usize,
    /// User messages whose facts an earlier run had already applied: skipped, so
    /// ingesting the same history again changes nothing.
    pub already_applied: usize,
    /// User messages an earlier, interrupted run had logged but not applied: applied now.
    pub completed: usize,
    /// User messages in languages the extractor does not read (the rules read English
    /// only), per language in the order first met: logged and kept as episodes, no
    /// facts read from them.
    pub unread_languages: Vec<UnreadLanguage>,
}

/// What an [`ingest_with`] accepts.
///
/// ```
/// use agentmemory_core::ingest::IngestConfig;
///
/// let config = IngestConfig::default().with_max_message_bytes(64 * 1024);
/// assert_eq!(config.max_message_bytes, 65_536);
/// assert_eq!(IngestConfig::default().max_message_bytes, 1024 * 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IngestConfig {
    /// The largest message taken, in bytes of content (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`], 1 MiB). One larger message fails the whole ingest
    /// with [`MemoryError::PayloadTooLarge`] before anything is logged, embedded or
    /// extracted.
    pub max_message_bytes: usize,
}

impl Default for IngestConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl IngestConfig {
    /// Sets the largest message taken, in bytes.
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

/// Feeds `messages` (in the order said, each with its `created_at`) to `user_id`'s
/// memory as conversation `conversation_id` (a fresh id when `None`).
///
/// Needs a [`ConversationStore`] in `container`; facts are extracted when a
/// [`UserMemoryStore`] is registered, by the registered [`FactExtractor`] or the offline
/// rules; episodes go to [`episodes::resolve`](crate::episodes::resolve)'s store. A
/// conversation that belongs to another user is refused, and so is a message over
/// [`DEFAULT_MAX_MESSAGE_BYTES`] (1 MiB; [`ingest_with`] sets another limit), with
/// [`MemoryError::PayloadTooLarge`] before anything is written.
pub async fn ingest(
    container: &Container,
    user_id: &str,
    conversation_id: Option<&str>,
    messages: Vec<Message>,
) -> Result<IngestReport> {
    ingest_with(
        container,
        user_id,
        conversation_id,
        messages,
        IngestConfig::default(),
    )
    .await
}

/// [`ingest`] with the limits of `config`.
///
/// ```
/// # tokio_test::block_on(async {
/// use std::sync::Arc;
/// use agentmemory_core::ingest::{ingest_with, IngestConfig};
/// use agentmemory_core::{Container, InMemoryConversationStore, MemoryError, Message};
///
/// let container = Container::new();
/// container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
/// let config = IngestConfig::default().with_max_message_bytes(10);
/// let history = vec![Message::user("short"), Message::user("well over ten bytes")];
/// let err = ingest_with(&container, "rui", Some("c"), history, config).await.unwrap_err();
/// assert!(matches!(err, MemoryError::PayloadTooLarge { size: 19, limit: 10, .. }));
/// # })
/// ```
pub async fn ingest_with(
    container: &Container,
    user_id: &str,
    conversation_id: Option<&str>,
    messages: Vec<Message>,
    config: IngestConfig,
) -> Result<IngestReport> {
    if user_id.is_empty() {
        return Err(MemoryError::invalid("user id", "must not be empty"));
    }
    // Before anything is resolved, read or written: one message over the limit refuses
    // the whole history (a history cut in the middle would be worse than none).
    for message in &messages {
        message.check_size(config.max_message_bytes)?;
    }
    let conversation_id = match conversation_id {
        Some("") => return Err(MemoryError::invalid("conversation id", "must not be empty")),
        Some(id) => id.to_owned(),
        None => ulid::Ulid::new().to_string(),
    };
    let log = container.resolve::<dyn ConversationStore>(None)?;
    let facts = container.resolve_optional::<dyn UserMemoryStore>(None)?;
    let extractor: Arc<dyn FactExtractor> = container
        .resolve_optional::<dyn FactExtractor>(None)?
        .unwrap_or_else(|| Arc::new(crate::extract::RuleExtractor::new()));
    let episodes = crate::episodes::resolve(container)?;

    let existing = log.load(&conversation_id).await?;
    let owner = crate::conversation::Owner::of(&existing).map(|o| o.user_id);
    if let Some(owner) = owner.filter(|o| o != user_id) {
        return Err(MemoryError::invalid(
            "conversation id",
            format!("conversation `{conversation_id}` belongs to user `{owner}`"),
        ));
    }

    let messages: Vec<Message> = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| with_stable_id(&conversation_id, i, m))
        .collect();
    let mut report = IngestReport {
        conversation_id: conversation_id.clone(),
        messages: messages.len(),
        ..IngestReport::default()
    };

    // 1. The log (idempotent by message id).
    let mut events = Vec::with_capacity(messages.len() + 1);
    if existing.is_empty() {
        events.push(ConversationEvent::Started {
            user_id: user_id.to_owned(),
            agent: INGEST_AGENT.to_owned(),
        });
    }
    events.extend(
        messages
            .iter()
            .map(|m| ConversationEvent::Message { message: m.clone() }),
    );
    log.append(&conversation_id, events).await?;

    // 2. Episodes, in one batch.
    let mut kept: Vec<Episode> = Vec::with_capacity(messages.len());
    let mut previous: Option<&Message> = None;
    for m in messages
        .iter()
        .filter(|m| matches!(m.role, Role::User | Role::Assistant))
    {
        let mut episode = Episode::from_message(user_id, &conversation_id, m);
        // Each message is searched with the one it answers.
        if let Some(p) = previous.filter(|p| p.role != m.role) {
            episode = episode.answering(&p.text());
        }
        if !episode.text.trim().is_empty() {
            kept.push(episode);
        }
        previous = Some(m);
    }
    report.episodes = kept.len();
    // In batches: one write of 10,000 episodes outlasts a remote store's time limit for
    // one operation (PostgreSQL refused a 10,000-message ingest so). Episode ids are
    // stable per message, so a run stopped between batches is completed by the next.
    let mut kept = kept.into_iter().peekable();
    while kept.peek().is_some() {
        let batch: Vec<Episode> = kept.by_ref().take(EPISODE_BATCH).collect();
        episodes.add(user_id, batch).await?;
    }

    // 3. Facts, at the messages' own times, each turn with its reply as context; a
    // message an earlier run applied is skipped (the log says which), one it logged but
    // did not apply (it was interrupted) is applied now.
    let Some(facts) = facts else {
        return Ok(report);
    };
    let logged: HashSet<ulid::Ulid> = existing
        .iter()
        .filter_map(|e| match &e.event {
            ConversationEvent::Message { message } => Some(message.id),
            _ => None,
        })
        .collect();
    let applied: HashSet<ulid::Ulid> = existing
        .iter()
        .filter_map(|e| match &e.event {
            ConversationEvent::FactsApplied { message_ids } => Some(message_ids.iter().copied()),
            _ => None,
        })
        .flatten()
        .collect();
    let mut changed = Vec::new();
    let mut done = Vec::new();
    for (i, user) in messages.iter().enumerate() {
        if user.role != Role::User {
            continue;
        }
        if applied.contains(&user.id) {
            report.already_applied += 1;
            continue;
        }
        if logged.contains(&user.id) {
            report.completed += 1;
        }
        let reply = messages[i + 1..]
            .iter()
            .take_while(|m| m.role != Role::User)
            .find(|m| m.role == Role::Assistant);
        if let Some(unread) = crate::extract::unread_language(extractor.as_ref(), &user.text()) {
            match report
                .unread_languages
                .iter_mut()
                .find(|u| u.code == unread.code)
            {
                Some(seen) => seen.messages += 1,
                None => report.unread_languages.push(unread),
            }
        }
        let turn = Turn {
            user,
            assistant: reply,
        };
        let changes = crate::facts::apply_turn(
            extractor.as_ref(),
            facts.as_ref(),
            user_id,
            Some(&conversation_id),
            turn,
        )
        .await
        .into_result()?;
        for change in changes {
            if matches!(change, FactChange::Ignored { .. }) {
                report.facts_ignored += 1;
            } else {
                report.facts_changed += 1;
                changed.push(change);
            }
        }
        done.push(user.id);
        // What was applied is logged as it goes: a run killed later redoes little.
        if done.len() >= APPLIED_BATCH {
            record(log.as_ref(), &conversation_id, &mut changed, &mut done).await?;
        }
    }
    record(log.as_ref(), &conversation_id, &mut changed, &mut done).await?;
    Ok(report)
}

/// How many applied messages an ingest logs at a time.
const APPLIED_BATCH: usize = 64;

/// How many episodes one write of an ingest carries.
const EPISODE_BATCH: usize = 500;

/// Logs the changes made and the messages applied since the last call, in one append.
async fn record(
    log: &dyn ConversationStore,
    conversation_id: &str,
    changed: &mut Vec<FactChange>,
    done: &mut Vec<ulid::Ulid>,
) -> Result<()> {
    if done.is_empty() {
        return Ok(());
    }
    let mut events = Vec::with_capacity(2);
    if !changed.is_empty() {
        events.push(ConversationEvent::FactsChanged {
            changes: std::mem::take(changed),
        });
    }
    events.push(ConversationEvent::FactsApplied {
        message_ids: std::mem::take(done),
    });
    log.append(conversation_id, events).await.map(drop)
}

/// `message` with an id derived from the conversation, its position and its text (and
/// its time as the id's time part), so that the same history ingested twice is the same
/// messages.
fn with_stable_id(conversation_id: &str, position: usize, mut message: Message) -> Message {
    let text = message.text();
    let sep: &[u8] = &[0x1f];
    message.id = crate::episodes::stable_ulid(
        message.created_at,
        &[
            conversation_id.as_bytes(),
            sep,
            &position.to_le_bytes(),
            sep,
            message.role.as_str().as_bytes(),
            sep,
            text.as_bytes(),
        ],
    );
    message
}
