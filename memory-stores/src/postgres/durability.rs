//! How durable a PostgreSQL store's commits are: the session's `synchronous_commit`.

use std::fmt;
use std::str::FromStr;

/// When a commit of this store is acknowledged: PostgreSQL's `synchronous_commit`,
/// set for every session the store opens (URL parameter `synchronous_commit=...`, or
/// [`PostgresOptions::synchronous_commit`](super::PostgresOptions::synchronous_commit)).
/// Unset, the server's own setting applies (`on` unless its administrator changed it).
///
/// - [`On`](Self::On): a commit returns once its WAL is flushed to disk (and, with
///   synchronous replicas, once they have it): nothing acknowledged is ever lost.
/// - [`Off`](Self::Off): a commit returns before its WAL is flushed; the server flushes
///   within three times its `wal_writer_delay` (200 ms by default, so at most about
///   0.6 s). A crash of the server (not of the application) can lose the commits of that
///   last moment, whole transactions, never a part of one, and never corrupts the
///   database. PostgreSQL's equivalent of SQLite's `synchronous=NORMAL` in WAL mode,
///   which is what [`SqliteStore`](crate::SqliteStore) runs with: the setting to compare
///   the two stores like for like, and to write fast where the last moment's memories
///   may be lost.
/// - [`Local`](Self::Local), [`RemoteWrite`](Self::RemoteWrite),
///   [`RemoteApply`](Self::RemoteApply): PostgreSQL's levels for synchronous
///   replication (see its documentation); without synchronous replicas they act as `on`.
///
/// ```
/// use agentmemory_stores::SynchronousCommit;
///
/// let level: SynchronousCommit = "off".parse().unwrap();
/// assert_eq!(level, SynchronousCommit::Off);
/// assert_eq!(level.to_string(), "off");
/// assert!("sometimes".parse::<SynchronousCommit>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SynchronousCommit {
    /// Acknowledged once flushed to disk (PostgreSQL's default).
    On,
    /// Acknowledged before the flush; a server crash may lose the last moment's commits.
    Off,
    /// Flushed locally, not waiting for synchronous replicas.
    Local,
    /// Waits for synchronous replicas to have written (not flushed) the commit.
    RemoteWrite,
    /// Waits for synchronous replicas to have applied the commit.
    RemoteApply,
}

impl SynchronousCommit {
    /// Every level, in the order of [`names`](Self::name) in messages.
    pub const ALL: [Self; 5] = [
        Self::On,
        Self::Off,
        Self::Local,
        Self::RemoteWrite,
        Self::RemoteApply,
    ];

    /// The value PostgreSQL knows it by (`on`, `off`, `local`, `remote_write`,
    /// `remote_apply`).
    pub fn name(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Local => "local",
            Self::RemoteWrite => "remote_write",
            Self::RemoteApply => "remote_apply",
        }
    }

    /// Adds `-c synchronous_commit=...` to the startup `options` of `config` (after any
    /// the URL gave), so every connection of the pool starts with it, at no extra round
    /// trip.
    pub(super) fn apply(self, config: &mut tokio_postgres::Config) {
        let setting = format!("-c synchronous_commit={}", self.name());
        let options = match config.get_options() {
            Some(given) if !given.trim().is_empty() => format!("{given} {setting}"),
            _ => setting,
        };
        config.options(&options);
    }
}

impl fmt::Display for SynchronousCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `synchronous_commit` value PostgreSQL does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a synchronous_commit level (on, off, local, remote_write, remote_apply)")]
pub struct UnknownSynchronousCommit(pub String);

impl FromStr for SynchronousCommit {
    type Err = UnknownSynchronousCommit;

    /// The level named as PostgreSQL names it, case-insensitively; PostgreSQL's
    /// boolean spellings of `on`/`off` (`true`, `yes`, `1`, `false`, `no`, `0`) too.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim().to_ascii_lowercase();
        match name.as_str() {
            "on" | "true" | "yes" | "1" => Ok(Self::On),
            "off" | "false" | "no" | "0" => Ok(Self::Off),
            _ => Self::ALL
                .into_iter()
                .find(|level| level.name() == name)
                .ok_or_else(|| UnknownSynchronousCommit(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn every_level_reads_back_from_its_name() {
        for level in SynchronousCommit::ALL {
            assert_eq!(level.name().parse::<SynchronousCommit>(), Ok(level));
            assert_eq!(
                level.name().to_uppercase().parse::<SynchronousCommit>(),
                Ok(level)
            );
        }
        assert_eq!("false".parse(), Ok(SynchronousCommit::Off));
        assert_eq!("1".parse(), Ok(SynchronousCommit::On));
        for bad in ["", "of", "remote", "2", "none"] {
            let err = bad.parse::<SynchronousCommit>().expect_err(bad);
            assert_eq!(err.0, bad);
            assert!(err.to_string().contains("remote_apply"), "{err}");
        }
    }

    #[test]
    fn the_level_joins_the_startup_options() {
        let mut config = tokio_postgres::Config::from_str("postgres://me@db/app").unwrap();
        SynchronousCommit::Off.apply(&mut config);
        assert_eq!(config.get_options(), Some("-c synchronous_commit=off"));

        let mut config =
            tokio_postgres::Config::from_str("postgres://me@db/app?options=-c%20search_path%3Dx")
                .unwrap();
        SynchronousCommit::Local.apply(&mut config);
        assert_eq!(
            config.get_options(),
            Some("-c search_path=x -c synchronous_commit=local")
        );
    }
}
