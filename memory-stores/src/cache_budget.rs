//! How many bytes a store's caches may hold.

/// The byte budgets of a store's two caches, each a least-recently-used map bounded by
/// the estimated heap bytes of its entries: evicting an entry only makes its next use
/// read it from the backend again.
///
/// - `facts`: the indexed facts of recently used users (SQLite, PostgreSQL, Redis and the
///   file store keep each user's current facts ranked in memory between searches).
///   Default [`DEFAULT_FACTS`](Self::DEFAULT_FACTS), 32 MiB.
/// - `indexes`: the search indexes of recently used document namespaces (the SQLite
///   mirrors, Redis's and the file store's caught-up indexes; episodes are one namespace
///   per user). Default [`DEFAULT_INDEXES`](Self::DEFAULT_INDEXES), 128 MiB: a namespace
///   of 50 short episodes is about 19 KB by the estimate, so some 7,000 such users stay
///   cached, or one namespace of about 250,000 short documents.
///
/// Estimates count capacities, not the allocator's overhead or fragmentation: measured on
/// SQLite with 10,000 users (`tests/rss_10k_users.rs`), a process's resident memory
/// levels off under twice the budgets' sum plus 50 MiB (SQLite's page caches, the
/// runtime): 322 MiB with the defaults, 209 MiB with 16 + 64 MiB, where before these
/// budgets it grew by about 37 MiB per 1,000 users without end (488 MiB at 10,000). The entry used last is kept even when it alone is larger than its
/// budget. PostgreSQL searches documents in the database and keeps no index per
/// namespace.
///
/// Each store reads [`from_env`](Self::from_env) when opened (the environment variables
/// [`FACTS_ENV`](Self::FACTS_ENV) and [`INDEXES_ENV`](Self::INDEXES_ENV), in bytes or
/// with a `KiB`/`MiB`/`GiB` suffix); `with_cache_budget` on each store sets it in code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBudget {
    /// Bytes of indexed facts, all users together.
    pub facts: usize,
    /// Bytes of document search indexes, all namespaces together.
    pub indexes: usize,
}

impl Default for CacheBudget {
    fn default() -> Self {
        Self {
            facts: Self::DEFAULT_FACTS,
            indexes: Self::DEFAULT_INDEXES,
        }
    }
}

impl CacheBudget {
    /// The default budget of indexed facts: 32 MiB.
    pub const DEFAULT_FACTS: usize = 32 << 20;
    /// The default budget of document search indexes: 128 MiB.
    pub const DEFAULT_INDEXES: usize = 128 << 20;
    /// The environment variable overriding [`facts`](Self::facts).
    pub const FACTS_ENV: &'static str = "AGENTMEM_FACT_CACHE_BYTES";
    /// The environment variable overriding [`indexes`](Self::indexes).
    pub const INDEXES_ENV: &'static str = "AGENTMEM_INDEX_CACHE_BYTES";

    /// A budget of `facts` bytes of indexed facts and `indexes` bytes of search indexes.
    pub fn new(facts: usize, indexes: usize) -> Self {
        Self { facts, indexes }
    }

    /// The defaults, each overridden by its environment variable when set; a value that
    /// does not parse is ignored with a warning.
    pub fn from_env() -> Self {
        let read = |name: &str, default: usize| match std::env::var(name) {
            Ok(v) if !v.trim().is_empty() => parse_bytes(&v).unwrap_or_else(|| {
                tracing::warn!(variable = name, value = %v,
                    "not a size in bytes (e.g. 67108864, 64MiB); the default is used");
                default
            }),
            _ => default,
        };
        Self {
            facts: read(Self::FACTS_ENV, Self::DEFAULT_FACTS),
            indexes: read(Self::INDEXES_ENV, Self::DEFAULT_INDEXES),
        }
    }
}

/// `123`, `64KiB`, `64MiB`, `1GiB` (also `k`, `M`, `G`, `KB`, ...: binary units all).
fn parse_bytes(s: &str) -> Option<usize> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(digits);
    let n: usize = n.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("1024"), Some(1024));
        assert_eq!(parse_bytes("64MiB"), Some(64 << 20));
        assert_eq!(parse_bytes(" 2 g "), Some(2 << 30));
        assert_eq!(parse_bytes("8kb"), Some(8 << 10));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("12 parsecs"), None);
    }
}
