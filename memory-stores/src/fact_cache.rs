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

use std::collections::HashMap;
use std::sync::Arc;

use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::FactChange;
use parking_lot::Mutex;

/// Users whose indexed facts are kept at most; past it the cache starts over.
const MAX_USERS: usize = 1024;

/// The indexed facts of recently searched users, with the version they were read at.
#[derive(Debug, Default)]
pub(crate) struct FactCache {
    users: Mutex<HashMap<String, (i64, Arc<RankedFacts>)>>,
}

impl FactCache {
    /// The user's cached facts if they were read at `version`.
    pub(crate) fn get(&self, user_id: &str, version: i64) -> Option<Arc<RankedFacts>> {
        match self.users.lock().get(user_id) {
            Some((v, ranked)) if *v == version => Some(Arc::clone(ranked)),
            _ => None,
        }
    }

    /// Keeps `ranked`, read at `version`, for the user; returns it shared.
    pub(crate) fn put(&self, user_id: &str, version: i64, ranked: RankedFacts) -> Arc<RankedFacts> {
        let ranked = Arc::new(ranked);
        let mut users = self.users.lock();
        if users.len() >= MAX_USERS && !users.contains_key(user_id) {
            users.clear();
        }
        users.insert(user_id.to_owned(), (version, Arc::clone(&ranked)));
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
        let mut users = self.users.lock();
        let (version, ranked) = users.remove(user_id)?;
        if !wanted(version) {
            users.insert(user_id.to_owned(), (version, ranked));
            return None;
        }
        match Arc::try_unwrap(ranked) {
            Ok(ranked) => Some((version, ranked)),
            Err(shared) => {
                users.insert(user_id.to_owned(), (version, shared));
                None
            }
        }
    }

    /// Files `ranked`, read at `version`, after the write that moved the user's version
    /// to `new_version` made `change`: updated in place, or dropped when the change
    /// does not fit it (then the next search reads the facts again).
    pub(crate) fn advance(
        &self,
        user_id: &str,
        mut ranked: RankedFacts,
        change: &FactChange,
        new_version: i64,
    ) {
        if ranked.apply(change) {
            self.put(user_id, new_version, ranked);
        }
    }
}
