//! Extraction and reconciliation of a turn, and logging what changed.

use agentmemory_core::extract::Turn;
use agentmemory_core::facts::{apply_turn, FactChange};
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
    // Marked with the message, its time and the time it names, like every other entry point.
    let changes = apply_turn(
        shared.extractor.as_ref(),
        shared.facts.as_ref(),
        user_id,
        conversation,
        Turn { user, assistant },
    )
    .await
    .into_result()?;
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
    agentmemory_core::facts::log_changes(shared.log.as_ref(), conversation, changes).await?;
    Ok(())
}
