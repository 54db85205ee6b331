//! Each user's current facts, indexed for ranking ([`RankedFacts`]) and kept between
//! searches until the user's fact version moves. Every backend keeps such a version
//! beside the facts and raises it with every change to them, from any connection or
//! process (SQLite and PostgreSQL by triggers, Redis in the scripts that write).
//!
//! A search reads the version first and the facts after it, so what is cached is never
//! older than the version it is filed under: a write in between only costs a reload.
//!
//! A write goes through it: an upsert that finds the user's version (read under the
//! write's lock, or checked by the write itself on Redis) equal to the cached one
//! reconciles against the cached facts instead of reading them all, then
//! [`RankedFacts::apply`]s its change and files the result under the version the write
//! left. Anything else (nothing cached, another writer in between, an error) takes the
//! cache entry out and the next search reads the facts again.
//!
//! The cache is bounded by bytes ([`CacheBudget::facts`], 32 MiB by default), the least
//! recently used users evicted first (see `lru`).

use std::sync::Arc;

use agentmemory_core::store_support::RankedFacts;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use agentmemory_core::FactChange;

use crate::lru::{Lru, LruStats};
use crate::CacheBudget;

/// The indexed facts of recently searched users, with the version they were read at.
#[derive(Debug)]
pub(crate) struct FactCache {
    users: Lru<(i64, Arc<RankedFacts>)>,
}

impl Default for FactCache {
    fn default() -> Self {
        Self::new(CacheBudget::from_env().facts)
    }
}

impl FactCache {
    /// An empty cache of at most about `budget` bytes.
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            users: Lru::new(budget),
        }
    }

    /// Changes the budget (evicting what no longer fits).
    pub(crate) fn set_budget(&self, budget: usize) {
        self.users.set_budget(budget);
    }

    /// What the cache holds.
    #[allow(dead_code)]
    pub(crate) fn stats(&self) -> LruStats {
        self.users.stats()
    }

    /// The user's cached facts if they were read at `version`.
    pub(crate) fn get(&self, user_id: &str, version: i64) -> Option<Arc<RankedFacts>> {
        self.users
            .get_if(user_id, |(v, _)| *v == version)
            .map(|(_, ranked)| ranked)
    }

    /// Keeps `ranked`, read at `version`, for the user; returns it shared.
    pub(crate) fn put(&self, user_id: &str, version: i64, ranked: RankedFacts) -> Arc<RankedFacts> {
        let bytes = ranked.heap_bytes();
        let ranked = Arc::new(ranked);
        self.users
            .insert(user_id, (version, Arc::clone(&ranked)), bytes);
        ranked
    }

    /// Takes the user's cached facts out if they were read at `version` (and no search
    /// is ranking them right now), to update them in place.
    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn take(&self, user_id: &str, version: i64) -> Option<RankedFacts> {
        self.take_if(user_id, |v| v == version)
            .map(|(_, ranked)| ranked)
    }

    /// Takes the user's cached facts out, whatever version they were read at, with it.
    #[cfg_attr(not(any(feature = "redis", feature = "postgres")), allow(dead_code))]
    pub(crate) fn take_any(&self, user_id: &str) -> Option<(i64, RankedFacts)> {
        self.take_if(user_id, |_| true)
    }

    fn take_if(&self, user_id: &str, wanted: impl Fn(i64) -> bool) -> Option<(i64, RankedFacts)> {
        // Taken only when no search holds it: once out of the map nobody else can
        // share it, so the unwrap below succeeds.
        let (version, ranked) = self.users.remove_if(user_id, |(v, ranked)| {
            wanted(*v) && Arc::strong_count(ranked) == 1
        })?;
        match Arc::try_unwrap(ranked) {
            Ok(ranked) => Some((version, ranked)),
            Err(_) => None,
        }
    }

    /// Files `ranked`, read at `version`, after the write that moved the user's version
    /// to `new_version` made `changes` (an upsert's change and the facts it closed with
    /// it): updated in place, or dropped when a change does not fit it (then the next
    /// search reads the facts again). Redis advances its own cached facts in its commit
    /// script's reply, so only SQLite and PostgreSQL call this.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn advance<'a>(
        &self,
        user_id: &str,
        mut ranked: RankedFacts,
        changes: impl IntoIterator<Item = &'a FactChange>,
        new_version: i64,
    ) {
        if changes.into_iter().all(|change| ranked.apply(change)) {
            self.put(user_id, new_version, ranked);
        }
    }
}
