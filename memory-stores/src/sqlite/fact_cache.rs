//! Each user's current facts, indexed for ranking and kept between searches until the
//! user's row in `fact_versions` moves (its triggers raise it on every change to the
//! user's facts, from any connection or process).

use std::collections::HashMap;
use std::sync::Arc;

use agentmemory_core::facts::RankedFacts;
use agentmemory_core::Result;
use parking_lot::Mutex;
use rusqlite::{Connection, OptionalExtension};

use super::on;

/// Users whose indexed facts are kept at most; past it the cache starts over.
const MAX_USERS: usize = 1024;

/// The indexed facts of recently searched users, with the version they were read at.
#[derive(Debug, Default)]
pub(super) struct FactCache {
    users: Mutex<HashMap<String, (i64, Arc<RankedFacts>)>>,
}

impl FactCache {
    /// The user's indexed facts as of now: the cached ones when the user's version has
    /// not moved since they were read, else `load()`ed, indexed and cached.
    pub(super) fn get(
        &self,
        conn: &Connection,
        label: &str,
        user_id: &str,
        load: impl FnOnce() -> Result<RankedFacts>,
    ) -> Result<Arc<RankedFacts>> {
        let version = version(conn, label, user_id)?;
        if let Some((v, ranked)) = self.users.lock().get(user_id) {
            if *v == version {
                return Ok(Arc::clone(ranked));
            }
        }
        // Loaded after the version was read, so what is cached is never older than the
        // version it is filed under: a write in between only costs a later reload.
        let ranked = Arc::new(load()?);
        let mut users = self.users.lock();
        if users.len() >= MAX_USERS && !users.contains_key(user_id) {
            users.clear();
        }
        users.insert(user_id.to_owned(), (version, Arc::clone(&ranked)));
        Ok(ranked)
    }
}

/// The user's fact version (0 before their first fact).
fn version(conn: &Connection, label: &str, user_id: &str) -> Result<i64> {
    conn.prepare_cached("SELECT version FROM fact_versions WHERE user_id = ?1")
        .and_then(|mut s| s.query_row([user_id], |r| r.get(0)).optional())
        .map(|v| v.unwrap_or(0))
        .map_err(on(label, "read the facts' version"))
}
