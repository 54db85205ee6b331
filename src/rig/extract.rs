//! Extraction and reconciliation of a turn, and logging what changed.

use agentmemory_core::conversation::ConversationEvent;
use agentmemory_core::extract::Turn;
use agentmemory_core::facts::{FactChange, FactSource};
use agentmemory_core::{Message, Result};

use super::Shared;

/// Extracts facts from `user` (with `assistant` as context), reconciles each with the
/// user's store, and logs what changed in `conversation` when there is one.
pub(crate) async fn extract_and_reconcile(
    shared: &Shared,
    user_id: &str,
    conversation: Option<&str>,
    user: &Message,
    assistant: Option<&Message>,
) -> Result<Vec<FactChange>> {
    let candidates = shared.extractor.extract(Turn { user, assistant }).await?;
    let mut changes = Vec::with_capacity(candidates.len());
    for mut candidate in candidates {
        candidate.source = FactSource {
            session_id: conversation.map(str::to_owned),
            message_id: Some(user.id.to_string()),
        };
        changes.push(shared.facts.upsert(user_id, candidate).await?);
    }
    log_changes(shared, conversation, &changes).await?;
    Ok(changes)
}

/// Logs the changes that changed something (ignored candidates are not logged).
pub(crate) async fn log_changes(
    shared: &Shared,
    conversation: Option<&str>,
    changes: &[FactChange],
) -> Result<()> {
    let Some(conversation) = conversation else {
        return Ok(());
    };
    let changed: Vec<FactChange> = changes
        .iter()
        .filter(|c| !matches!(c, FactChange::Ignored { .. }))
        .cloned()
        .collect();
    if !changed.is_empty() {
        shared
            .log
            .append(
                conversation,
                vec![ConversationEvent::FactsChanged { changes: changed }],
            )
            .await?;
    }
    Ok(())
}
