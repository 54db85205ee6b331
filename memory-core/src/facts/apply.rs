//! A turn's statements into facts: extract, [`stamp`], reconcile, and log what changed.
//! The one loop every entry point runs (a session's turn, `ingest`, rig), so a fact
//! carries its message, its times and its place in the log however it was said.

use super::{stamp, FactChange, UserMemoryStore};
use crate::conversation::{ConversationEvent, ConversationStore};
use crate::error::{MemoryError, Result};
use crate::extract::{FactExtractor, Turn};

/// What [`apply_turn`] did: every change the store reported, and the failure that
/// stopped it, if one did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Applied {
    /// One change per candidate the store took (ignored ones included), in order.
    pub changes: Vec<FactChange>,
    /// Why it stopped early: the extractor failed (nothing was stored), or a store write
    /// failed (the candidates after it were not stored).
    pub error: Option<MemoryError>,
}

impl Applied {
    /// The changes, or the failure when there was one.
    pub fn into_result(self) -> Result<Vec<FactChange>> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.changes),
        }
    }

    /// The changes that changed something (ignored candidates left out): what a log
    /// records.
    pub fn changed(&self) -> Vec<FactChange> {
        changed(&self.changes)
    }
}

/// Extracts the statements of `turn`, marks each with the user's message (its id, its
/// time, the time it names: [`stamp`]) and reconciles it with `user_id`'s facts, in order.
/// `conversation_id` is recorded as the source session when there is one.
///
/// ```
/// # tokio_test::block_on(async {
/// use agentmemory_core::extract::{RuleExtractor, Turn};
/// use agentmemory_core::facts::{apply_turn, InMemoryUserMemoryStore, UserMemoryStore};
/// use agentmemory_core::Message;
///
/// let store = InMemoryUserMemoryStore::new();
/// let said = Message::user("I moved to York last week.");
/// let turn = Turn { user: &said, assistant: None };
/// let applied = apply_turn(&RuleExtractor::new(), &store, "ana", Some("chat-1"), turn).await;
/// assert!(applied.error.is_none());
/// let fact = &store.list("ana").await.unwrap()[0];
/// assert_eq!(fact.source.message_id.as_deref(), Some(said.id.to_string().as_str()));
/// assert!(fact.valid_from.unwrap() < said.created_at, "true since last week");
/// # });
/// ```
pub async fn apply_turn(
    extractor: &dyn FactExtractor,
    store: &dyn UserMemoryStore,
    user_id: &str,
    conversation_id: Option<&str>,
    turn: Turn<'_>,
) -> Applied {
    let mut applied = Applied::default();
    let candidates = match extractor.extract(turn).await {
        Ok(found) => found,
        Err(e) => {
            applied.error = Some(e);
            return applied;
        }
    };
    applied.changes.reserve(candidates.len());
    let user = turn.user;
    let (message_id, said) = (user.id.to_string(), user.text());
    for mut candidate in candidates {
        stamp(
            &mut candidate,
            conversation_id.unwrap_or_default(),
            &message_id,
            user.created_at,
            &said,
        );
        if conversation_id.is_none() {
            candidate.source.session_id = None;
        }
        match store.upsert(user_id, candidate).await {
            Ok(change) => applied.changes.push(change),
            Err(e) => {
                applied.error = Some(e);
                break;
            }
        }
    }
    applied
}

/// The changes of `changes` that changed something (ignored candidates left out).
pub fn changed(changes: &[FactChange]) -> Vec<FactChange> {
    changes
        .iter()
        .filter(|c| !matches!(c, FactChange::Ignored { .. }))
        .cloned()
        .collect()
}

/// Logs the changes of `changes` that changed something as one
/// [`FactsChanged`](ConversationEvent::FactsChanged) event of `conversation_id`; nothing
/// when every candidate was ignored.
pub async fn log_changes(
    log: &dyn ConversationStore,
    conversation_id: &str,
    changes: &[FactChange],
) -> Result<()> {
    let changed = changed(changes);
    if !changed.is_empty() {
        log.append(
            conversation_id,
            vec![ConversationEvent::FactsChanged { changes: changed }],
        )
        .await?;
    }
    Ok(())
}
