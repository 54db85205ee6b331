//! A write attempted without waiting for another connection's lock.
//!
//! SQLite calls a connection's busy handler when a lock it needs is held elsewhere; the
//! handler set here declines at once (and notes that it was called), so the statement
//! fails with `SQLITE_BUSY` instead of sleeping, and the caller can run the write again
//! where waiting costs nothing (the blocking pool).

use std::cell::Cell;

use agentmemory_core::Result;
use rusqlite::Connection;

use super::{sql_error, BUSY_TIMEOUT};

thread_local! {
    /// Whether [`decline`] was called on this thread since the attempt began.
    static DECLINED: Cell<bool> = const { Cell::new(false) };
}

/// The busy handler of an attempt: never wait.
fn decline(_calls_so_far: i32) -> bool {
    DECLINED.with(|d| d.set(true));
    false
}

/// Runs `f` on `conn` with a busy handler that declines to wait, then puts the busy
/// timeout back. `Ok(None)` when `f` failed because a lock was held elsewhere (a write
/// that starts with `BEGIN IMMEDIATE` has then changed nothing: run it again), else `f`'s
/// result.
pub(crate) fn without_waiting<T>(
    conn: &mut Connection,
    label: &str,
    f: impl FnOnce(&mut Connection) -> Result<T>,
) -> Result<Option<Result<T>>> {
    let op = "configure the connection";
    DECLINED.with(|d| d.set(false));
    conn.busy_handler(Some(decline))
        .map_err(|e| sql_error(label, op, e))?;
    let result = f(conn);
    let declined = DECLINED.with(|d| d.replace(false));
    // Replaces the declining handler (SQLite keeps one or the other).
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| sql_error(label, op, e))?;
    Ok(match result {
        Err(_) if declined => None,
        result => Some(result),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::TransactionBehavior;

    fn open(path: &std::path::Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.busy_timeout(BUSY_TIMEOUT).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE IF NOT EXISTS t (v INTEGER);")
            .unwrap();
        conn
    }

    fn insert(conn: &mut Connection) -> Result<usize> {
        let err = |e| sql_error("test", "insert", e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let n = tx
            .execute("INSERT INTO t (v) VALUES (1)", [])
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(n)
    }

    #[test]
    fn a_free_lock_runs_the_write_and_a_held_one_gives_it_back_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.db");
        let mut ours = open(&path);
        let other = open(&path);

        let done = without_waiting(&mut ours, "test", insert).unwrap();
        assert!(matches!(done, Some(Ok(1))));

        // Another connection holds the write lock: the attempt fails at once, unwritten.
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let started = std::time::Instant::now();
        let held = without_waiting(&mut ours, "test", insert).unwrap();
        assert!(held.is_none(), "a held lock gives the write back");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "it did not wait"
        );
        other.execute_batch("COMMIT").unwrap();

        // Errors that are not about a lock stay errors.
        let failed = without_waiting(&mut ours, "test", |conn| {
            conn.execute("INSERT INTO missing (v) VALUES (1)", [])
                .map_err(|e| sql_error("test", "insert", e))
        })
        .unwrap();
        assert!(matches!(failed, Some(Err(_))));

        // The busy timeout is back: a write now waits for a lock held briefly elsewhere.
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            other.execute_batch("COMMIT").unwrap();
        });
        assert_eq!(insert(&mut ours).unwrap(), 1);
        release.join().unwrap();
        let rows: i64 = ours
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }
}
