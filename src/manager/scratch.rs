//! The working-memory side of a [`MemoryManager`].

use serde_json::Value;

use agentmemory_core::error::Result;
use agentmemory_core::working::SetOptions;

use super::MemoryManager;

impl MemoryManager {
    /// Sets `key` in the working memory (default importance, no expiry).
    pub async fn set(&self, key: impl Into<String>, value: impl Into<Value>) -> Result<()> {
        self.working.set(key, value).await
    }

    /// Sets `key` in the working memory with an importance and an optional time to live.
    pub async fn set_with(
        &self,
        key: impl Into<String>,
        value: impl Into<Value>,
        options: SetOptions,
    ) -> Result<()> {
        self.working.set_with(key, value, options).await
    }

    /// The value of `key` in the working memory, if set and not expired.
    pub async fn get(&self, key: &str) -> Result<Option<Value>> {
        self.working.get(key).await
    }

    /// The working memory as one delimited, escaped block for a prompt (see
    /// [`WorkingMemory::to_context_string`](agentmemory_core::WorkingMemory::to_context_string)), within
    /// the configured `working_memory_tokens`; empty when nothing is set.
    pub async fn working_context(&self) -> Result<String> {
        self.working
            .to_context_string_within(self.config.working_memory_tokens, self.counter.as_ref())
            .await
    }

    /// Removes every entry of this manager's working memory (a fork's and the parent's are
    /// apart); how many there were.
    pub async fn clear_working(&self) -> Result<usize> {
        self.working.clear().await
    }
}
