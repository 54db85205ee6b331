//! Turns leaving the window, fed to fact extraction: rig's [`DemotionHook`].

use agentmemory_core::conversation::ConversationEvent;
use rig_core::id::ConversationId;
use rig_core::memory::{DemotionHook, MemoryError};
use rig_core::message::Message as RigMessage;
use rig_core::wasm_compat::WasmBoxedFuture;

use super::{convert, extract, RigMemory};

/// Extracts facts from the turns rig demotes out of the window and reconciles them with
/// the conversation owner's facts (add, reinforce, supersede), logging what changed.
///
/// The hook receives only a conversation id; the owner is the user the log names
/// (recorded by [`UserMemory::conversation`](super::UserMemory::conversation)). A
/// conversation the log names no owner for is refused with a policy error rather than
/// attributed to anyone. Redelivered turns reinforce facts instead of duplicating them.
#[derive(Debug, Clone)]
pub struct FactDemotion {
    memory: RigMemory,
}

impl FactDemotion {
    /// A demotion hook over `memory`'s stores and extractor.
    pub fn new(memory: RigMemory) -> Self {
        Self { memory }
    }

    async fn owner(&self, conversation: &str) -> Result<String, MemoryError> {
        let events = self
            .memory
            .shared()
            .log
            .load(conversation)
            .await
            .map_err(MemoryError::backend)?;
        events
            .iter()
            .rev()
            .find_map(|e| match &e.event {
                ConversationEvent::Started { user_id, .. } => Some(user_id.clone()),
                _ => None,
            })
            .ok_or_else(|| {
                MemoryError::Policy(format!(
                    "conversation `{conversation}` has no owner in the log: open it with UserMemory::conversation"
                ))
            })
    }
}

impl DemotionHook for FactDemotion {
    fn on_demote<'a>(
        &'a self,
        conversation_id: &'a ConversationId,
        messages: Vec<RigMessage>,
    ) -> WasmBoxedFuture<'a, Result<(), MemoryError>> {
        Box::pin(async move {
            let messages: Vec<_> = messages.iter().map(convert::to_agentmem).collect();
            let turns = extract::turns(&messages);
            if turns.is_empty() {
                return Ok(());
            }
            let conversation = conversation_id.as_str();
            let user_id = self.owner(conversation).await?;
            for (user, reply) in turns {
                extract::extract_and_reconcile(
                    self.memory.shared(),
                    &user_id,
                    Some(conversation),
                    user,
                    reply,
                )
                .await
                .map_err(MemoryError::backend)?;
            }
            Ok(())
        })
    }
}
