//! Opening a [`MemoryManager`] from a store URL or from the environment.

use super::{MemoryConfig, MemoryManager};
use agentmemory_core::Result;

use agentmemory_stores::{StoreUrl, STORE_URL_ENV};

/// The store URL [`MemoryManager::from_env`] opens when `AGENTMEM_STORE_URL` is unset.
pub const DEFAULT_MANAGER_URL: &str = "memory://";

/// Opening a manager over the stores a URL names.
impl MemoryManager {
    /// The manager of the environment: the stores of `AGENTMEM_STORE_URL` (in memory when
    /// unset), opened as [`StoreUrl::open`] opens them (semantic recall when
    /// `AGENTMEM_EMBED_MODEL` is set and the `local-embed` feature compiled), with the
    /// budgets of [`MemoryConfig::from_env`]. A malformed URL, an unknown URL parameter, or
    /// a variable with an unusable value is an error naming it, before anything is written.
    pub async fn from_env() -> Result<Self> {
        let config = MemoryConfig::from_env()?;
        let url = StoreUrl::from_env_or(DEFAULT_MANAGER_URL)?;
        tracing::debug!(store = %url, var = STORE_URL_ENV, "memory manager from the environment");
        let container = url.open().await?;
        MemoryManager::new(&container, config)
    }

    /// A manager over the stores of `url` with `config`.
    ///
    /// ```
    /// use agentmemory::manager::{MemoryConfig, MemoryManager};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> agentmemory::Result<()> {
    /// let memory = MemoryManager::open_url("memory://", MemoryConfig::default()).await?;
    /// let id = memory.new_conversation();
    /// memory.add_turn(&id, "hi", "hello").await?;
    /// assert_eq!(memory.history(&id).await?.len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn open_url(url: &str, config: MemoryConfig) -> Result<Self> {
        config.validate()?;
        let container = url.parse::<StoreUrl>()?.open().await?;
        MemoryManager::new(&container, config)
    }
}
