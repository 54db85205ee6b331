//! The conversation log and the token-budget window as rig's [`ConversationMemory`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::conversation::{apply, ConversationEvent};
use rig_core::id::ConversationId;
use rig_core::memory::{Compactor, ConversationMemory, DemotionHook, MemoryError};
use rig_core::message::Message as RigMessage;
use rig_core::wasm_compat::WasmBoxedFuture;

use super::compactor::ConversationSummary;
use super::{convert, RigMemory};

/// rig's conversation memory over agentmem's [`ConversationStore`](agentmemory_core::ConversationStore) log.
///
/// - `append` logs rig's messages (exactly, see the module docs) as message events.
/// - `load` replays the log into a token-budget [`ShortTermMemory`]; when it is over
///   budget, the oldest messages go to the compactor `C` (their summary is logged, so a
///   restart does not summarise them again) and to the demotion hook `H`, and rig gets
///   the summary followed by the recent window. A tool call and its results are never
///   split, and system messages are never dropped.
/// - `clear` deletes the conversation's log.
///
/// Replayed windows are cached per conversation and caught up with the events appended
/// since (by this process or another one sharing the store).
pub struct LogMemory<C, H> {
    memory: RigMemory,
    compactor: C,
    hook: H,
    windows: Mutex<HashMap<String, Cached>>,
}

struct Cached {
    /// The last event applied.
    seq: u64,
    memory: ShortTermMemory,
}

impl<C, H> std::fmt::Debug for LogMemory<C, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogMemory").finish_non_exhaustive()
    }
}

impl<C, H> LogMemory<C, H>
where
    C: Compactor<Artifact = ConversationSummary>,
    H: DemotionHook,
{
    /// A conversation memory over `memory`'s log with this compactor and demotion hook.
    pub fn new(memory: RigMemory, compactor: C, hook: H) -> Self {
        Self {
            memory,
            compactor,
            hook,
            windows: Mutex::new(HashMap::new()),
        }
    }

    fn take_cached(&self, id: &str) -> Option<Cached> {
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id)
    }

    fn put_cached(&self, id: &str, cached: Cached) {
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.to_owned(), cached);
    }

    /// The window of `id`, caught up with the log.
    async fn caught_up(&self, id: &str) -> Result<Cached, MemoryError> {
        let shared = self.memory.shared();
        let mut cached = self.take_cached(id).unwrap_or_else(|| Cached {
            seq: 0,
            memory: ShortTermMemory::with_counter(
                shared.config.max_tokens,
                Arc::clone(&shared.counter),
            ),
        });
        let events = shared
            .log
            .load_since(id, cached.seq)
            .await
            .map_err(MemoryError::backend)?;
        // Replay starts at the last snapshot, as `conversation::replay` does.
        let from = events
            .iter()
            .rposition(|e| matches!(e.event, ConversationEvent::Snapshot { .. }))
            .unwrap_or(0);
        for stored in &events[from..] {
            apply(&mut cached.memory, &stored.event);
        }
        if let Some(last) = events.last() {
            cached.seq = last.seq;
        }
        Ok(cached)
    }

    /// Folds what no longer fits into the summary: compactor, demotion hook, then the log.
    async fn summarize(
        &self,
        conversation_id: &ConversationId,
        memory: &mut ShortTermMemory,
    ) -> Result<(), MemoryError> {
        let config = &self.memory.shared().config;
        let max = memory.max_tokens();
        let reserve = self.memory.summary_budget();
        let target = max.saturating_mul(usize::from(config.summarize_to)) / 100;
        let room = target
            .saturating_sub(memory.system_tokens())
            .saturating_sub(reserve);
        let keep_recent = memory.recent_within(room).max(1);
        let old = memory.messages_to_summarize(keep_recent);
        if old.is_empty() {
            return Ok(());
        }
        let evicted: Vec<RigMessage> = old.iter().map(convert::to_rig).collect();
        let carry_over = memory.summary().map(ConversationSummary::new);
        let summary = self
            .compactor
            .compact(conversation_id, &evicted, carry_over.as_ref())
            .await?;
        // The hook runs before the summary is logged: if it fails, the next load
        // delivers the same messages again rather than losing them.
        self.hook
            .on_demote(conversation_id, evicted)
            .await
            .map_err(|e| match e {
                MemoryError::Backend(_) => e,
                other => MemoryError::backend(other),
            })?;
        let event = ConversationEvent::SummaryUpdated {
            summary: summary.as_str().to_owned(),
            keep_recent,
        };
        self.memory
            .shared()
            .log
            .append(conversation_id.as_str(), vec![event.clone()])
            .await
            .map_err(MemoryError::backend)?;
        // Applied here too; applying it again when the log is next read changes nothing.
        apply(memory, &event);
        Ok(())
    }
}

impl<C, H> ConversationMemory for LogMemory<C, H>
where
    C: Compactor<Artifact = ConversationSummary>,
    H: DemotionHook,
{
    fn load<'a>(
        &'a self,
        conversation_id: &'a ConversationId,
    ) -> WasmBoxedFuture<'a, Result<Vec<RigMessage>, MemoryError>> {
        Box::pin(async move {
            let id = conversation_id.as_str();
            let mut cached = self.caught_up(id).await?;
            if cached.memory.is_over_budget() {
                if let Err(e) = self.summarize(conversation_id, &mut cached.memory).await {
                    self.put_cached(id, cached);
                    return Err(e);
                }
            }
            let mut history = Vec::with_capacity(cached.memory.len() + 1);
            if let Some(summary) = cached.memory.summary().filter(|s| !s.trim().is_empty()) {
                history.push(ConversationSummary::new(summary).into());
            }
            history.extend(cached.memory.messages().into_iter().map(convert::to_rig));
            self.put_cached(id, cached);
            Ok(history)
        })
    }

    fn append<'a>(
        &'a self,
        conversation_id: &'a ConversationId,
        messages: Vec<RigMessage>,
    ) -> WasmBoxedFuture<'a, Result<(), MemoryError>> {
        Box::pin(async move {
            if messages.is_empty() {
                return Ok(());
            }
            let events = messages
                .iter()
                .map(|m| ConversationEvent::Message {
                    message: convert::to_agentmem(m),
                })
                .collect();
            self.memory
                .shared()
                .log
                .append(conversation_id.as_str(), events)
                .await
                .map_err(MemoryError::backend)?;
            Ok(())
        })
    }

    fn clear<'a>(
        &'a self,
        conversation_id: &'a ConversationId,
    ) -> WasmBoxedFuture<'a, Result<(), MemoryError>> {
        Box::pin(async move {
            self.take_cached(conversation_id.as_str());
            self.memory
                .shared()
                .log
                .delete(conversation_id.as_str())
                .await
                .map_err(MemoryError::backend)?;
            Ok(())
        })
    }
}
