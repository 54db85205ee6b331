//! Each user's current facts, indexed for ranking ([`RankedFacts`]) and kept between
//! searches until the user's fact version moves. Every backend keeps such a version
//! beside the facts and raises it with every change to them, from any connection or
//! process (SQLite and PostgreSQL by triggers, Redis in the scripts that write).
//!
//! A search reads the version first and the facts after it, so what is cached is never
//! older than the version it is filed under: a write in between only costs a reload.

use std::collections::HashMap;
use std::sync::Arc;

use agentmemory_core::facts::RankedFacts;
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
}
