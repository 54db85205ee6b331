//! The expiry purge of `agentmem serve`: expired entries are deleted on a schedule, not
//! only hidden from reads, so a store does not grow with entries nobody reads again.

use std::sync::Arc;
use std::time::Duration;

use agentmemory::KvStore;
use tokio::task::JoinHandle;

/// Runs [`KvStore::cleanup_expired`] every `every`, first after one interval, until the
/// returned task is aborted. A failed run is logged and retried at the next tick.
pub fn spawn(kv: Arc<dyn KvStore>, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        // A slow store delays the next run rather than causing a burst of them.
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match kv.cleanup_expired().await {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "purged expired entries"),
                Err(error) => tracing::warn!(%error, "purging expired entries failed"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentmemory::{InMemoryKvStore, MemoryEntry, MemoryScope};

    /// A store holding one entry that expired already, and one that lives.
    async fn store_with_an_expired_entry() -> Arc<InMemoryKvStore> {
        let kv = Arc::new(InMemoryKvStore::new());
        let mut expired = MemoryEntry::new(MemoryScope::Working, "old", "gone".into());
        expired.expires_at = Some(chrono::Utc::now() - chrono::Duration::seconds(1));
        kv.put("ns", expired).await.unwrap();
        let live = MemoryEntry::new(MemoryScope::Working, "new", "kept".into());
        kv.put("ns", live).await.unwrap();
        kv
    }

    #[tokio::test]
    async fn expired_entries_are_deleted_without_a_request() {
        let kv = store_with_an_expired_entry().await;
        let purger = spawn(kv.clone(), Duration::from_millis(20));
        tokio::time::sleep(Duration::from_millis(200)).await;
        purger.abort();
        // The purge removed the expired entry: nothing is left for cleanup to find.
        assert_eq!(kv.cleanup_expired().await.unwrap(), 0);
        assert_eq!(kv.list("ns").await.unwrap().len(), 1);

        // The control: without the purge, the expired entry stays stored.
        let untouched = store_with_an_expired_entry().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(untouched.cleanup_expired().await.unwrap(), 1);
    }
}
