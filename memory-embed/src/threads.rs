//! The rayon thread pools inference runs in, one per thread count, shared process-wide.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{EmbedError, Result};

/// The default thread count: every core this process may run on.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The shared pool of `threads` threads, started on first use.
///
/// Embedders with the same thread count share one pool, so building many embedders (one
/// per session, say) never multiplies threads.
pub(crate) fn pool(threads: usize) -> Result<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock();
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("agentmem-embed-{i}"))
        .build()
        .map_err(|e| {
            EmbedError::model_caused_by(
                "local embedder",
                format!("cannot start {threads} inference threads"),
                e,
            )
        })?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}
