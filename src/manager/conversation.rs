//! The conversation side of a [`MemoryManager`]: turns in, history out.

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::conversation::ConversationEvent;
use agentmemory_core::error::{MemoryError, Result};
use agentmemory_core::kv::{MemoryEntry, MemoryScope};
use agentmemory_core::message::Message;

use super::MemoryManager;

/// What [`MemoryManager::add_turn`] did besides logging the turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AddedTurn {
    /// How many older messages were folded into the summary (0: none).
    pub summarized: usize,
    /// Tokens of the history (messages and summary) after the turn.
    pub history_tokens: usize,
}

impl MemoryManager {
    /// A new conversation id (a ULID). Nothing is written until its first turn.
    pub fn new_conversation(&self) -> String {
        ulid::Ulid::new().to_string()
    }

    /// Appends a user message and the assistant's reply to the conversation's log (see
    /// [`add_messages`](Self::add_messages)).
    pub async fn add_turn(
        &self,
        conversation_id: &str,
        user: impl Into<String>,
        assistant: impl Into<String>,
    ) -> Result<AddedTurn> {
        self.add_messages(
            conversation_id,
            vec![
                Message::user(user.into()),
                Message::assistant(assistant.into()),
            ],
        )
        .await
    }

    /// Appends `messages` (tool calls and results included) to the conversation's log.
    /// When the history then takes more than the summarisation threshold
    /// ([`MemoryConfig::summarize_trigger`](super::MemoryConfig::summarize_trigger)), the
    /// oldest messages are folded into the running summary, down to `summarize_to` percent
    /// of it, and the summary is logged, as a [`Session`](agentmemory_core::Session) does: a session
    /// resuming the conversation, or another manager, reads the same history.
    ///
    /// A message over [`MemoryConfig::max_message_bytes`](super::MemoryConfig::max_message_bytes)
    /// (1 MiB by default) fails the call with [`MemoryError::PayloadTooLarge`] before
    /// anything is written.
    pub async fn add_messages(
        &self,
        conversation_id: &str,
        messages: Vec<Message>,
    ) -> Result<AddedTurn> {
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        for message in &messages {
            message.check_size(self.config.max_message_bytes)?;
        }
        let events = messages
            .into_iter()
            .map(|message| ConversationEvent::Message { message })
            .collect();
        let from = self.snapshot_seq(conversation_id).await?;
        self.log.append(conversation_id, events).await?;
        let mut memory = self.conversation_from(conversation_id, from).await?;
        let summarized = self.summarize_if_over(conversation_id, &mut memory).await?;
        let snapshot = match summarized {
            // A fold is rare (the history went over its threshold): the state after it
            // is logged once, and reads start there instead of at the first message.
            0 => from,
            _ => self.log_snapshot(conversation_id, &memory).await?,
        };
        self.kv
            .put(
                &self.registry,
                MemoryEntry::new(
                    MemoryScope::Conversation,
                    conversation_id,
                    snapshot.map_or(true.into(), Into::into),
                ),
            )
            .await?;
        Ok(AddedTurn {
            summarized,
            history_tokens: memory.message_tokens() + memory.summary_tokens(),
        })
    }

    /// The conversation as its log rebuilds it: every message kept verbatim and the
    /// running summary, within the window budget (empty when the conversation is unknown).
    ///
    /// Reads the log from the state this manager last logged after a fold
    /// ([`ConversationEvent::Snapshot`]), so the cost of a read is bounded by the messages
    /// since the last fold, not by the length of the conversation.
    pub async fn conversation(&self, conversation_id: &str) -> Result<ShortTermMemory> {
        let from = self.snapshot_seq(conversation_id).await?;
        self.conversation_from(conversation_id, from).await
    }

    /// The conversation rebuilt from the log's event `from` on (the whole log when `None`).
    async fn conversation_from(
        &self,
        conversation_id: &str,
        from: Option<u64>,
    ) -> Result<ShortTermMemory> {
        let after = from.map_or(0, |seq| seq.saturating_sub(1));
        let mut events = self.log.load_since(conversation_id, after).await?;
        let starts_at_snapshot = events
            .first()
            .is_some_and(|e| matches!(e.event, ConversationEvent::Snapshot { .. }));
        if after > 0 && !starts_at_snapshot {
            // The log was replaced or compacted by someone else: read it all.
            events = self.log.load(conversation_id).await?;
        }
        let mut memory =
            ShortTermMemory::with_counter(self.config.window_tokens, self.counter.clone());
        agentmemory_core::conversation::replay(&events, &mut memory);
        Ok(memory)
    }

    /// The seq of the state this manager last logged for the conversation, if any.
    async fn snapshot_seq(&self, conversation_id: &str) -> Result<Option<u64>> {
        Ok(self
            .kv
            .get(&self.registry, conversation_id)
            .await?
            .and_then(|entry| entry.content.as_u64())
            .filter(|seq| *seq > 0))
    }

    /// Logs the conversation's state after a fold; its seq.
    async fn log_snapshot(
        &self,
        conversation_id: &str,
        memory: &ShortTermMemory,
    ) -> Result<Option<u64>> {
        let seq = self
            .log
            .append(
                conversation_id,
                vec![ConversationEvent::Snapshot {
                    snapshot: memory.snapshot(),
                }],
            )
            .await?;
        Ok(Some(seq))
    }

    /// The messages for the next model call, oldest first: the most recent that fit the
    /// window budget beside the summary (system messages always kept). Pair it with
    /// [`summary`](Self::summary) for what no longer fits.
    pub async fn history(&self, conversation_id: &str) -> Result<Vec<Message>> {
        let memory = self.conversation(conversation_id).await?;
        Ok(memory.messages().into_iter().cloned().collect())
    }

    /// The running summary of the conversation's older messages, if any were folded.
    pub async fn summary(&self, conversation_id: &str) -> Result<Option<String>> {
        Ok(self
            .conversation(conversation_id)
            .await?
            .summary()
            .map(str::to_owned))
    }

    /// Deletes one conversation's log; whether it existed.
    pub async fn clear_conversation(&self, conversation_id: &str) -> Result<bool> {
        let existed = self.log.delete(conversation_id).await?;
        self.kv.delete(&self.registry, conversation_id).await?;
        Ok(existed)
    }

    /// Folds the oldest messages into the summary when the history is over the threshold;
    /// how many were folded.
    async fn summarize_if_over(
        &self,
        conversation_id: &str,
        memory: &mut ShortTermMemory,
    ) -> Result<usize> {
        let trigger = self.config.summarize_trigger();
        if memory.message_tokens() + memory.summary_tokens() <= trigger {
            return Ok(0);
        }
        agentmemory_core::buffer::fold_into_summary(
            memory,
            self.summarizer.as_ref(),
            self.log.as_ref(),
            conversation_id,
            trigger,
            self.config.summary_tokens,
            self.config.summarize_to,
        )
        .await
    }
}
