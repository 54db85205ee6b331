//! Key names, their hash tags, and the one-time move from the untagged layout.
//!
//! Redis Cluster runs a multi-key command, `MULTI`/`EXEC` block or script only when every
//! key it touches hashes to one slot. Every key therefore carries a hash tag (`{...}`)
//! naming the unit that commands touch together, and only that part decides the slot:
//!
//! | unit | tag | keys (`P` = prefix) |
//! | --- | --- | --- |
//! | a conversation | `{conv:HEX}` | `P{conv:HEX}:seq`, `:events`, `:message_ids` |
//! | a KV namespace | `{kv:HEX}` | `P{kv:HEX}:index`, `P{kv:HEX}:e:HEXKEY` |
//! | a user's facts | `{facts:HEX}` | `P{facts:HEX}:facts`, `:version` |
//! | a vector namespace | `{docs:HEX}` | `P{docs:HEX}:docs`, `:version`, `:dim` |
//! | store-wide | `{index}` | `P{index}:conversations`, `P{index}:kvns`, `P{index}:layout` |
//!
//! The store-wide sets list conversations and KV namespaces; they live in a slot of their
//! own, so they are written by separate commands, ordered so that a crash leaves at worst
//! an entry naming something that no longer exists (which readers skip), never a
//! conversation missing from the list.
//!
//! Stores written before the tags (layout 1: `P conv:HEX:seq`, `P kv:NS:KEY`, ...) are
//! moved on connect: when `P{index}:layout` is not `2`, every key under the prefix with
//! a layout-1 name is renamed (`RENAMENX`) to its layout-2 name, then the layout key is
//! set. Through the cluster client (`redis+cluster://`) every primary is scanned, and
//! since the two names are in different slots each key is copied instead (`DUMP`, then
//! `RESTORE` with its time to live, never replacing) and its old name deleted; a copy cut
//! short before the delete is finished by the next connect. A layout-1 key whose layout-2 name also exists is a typed
//! [`MemoryError::Corrupt`] naming both (nothing is overwritten); a newer layout is
//! [`MemoryError::UnsupportedVersion`]. Processes of an older agentmem must be stopped
//! before the first connect of this one: keys they write afterwards are not moved.
//! A prefix must not contain `{` or `}` (it would change which part of a key is the tag).

use agentmemory_core::{MemoryError, Result};

use super::conn::Conn;
use super::{RedisStore, STORE};

/// The key layout this build writes and reads.
pub(crate) const LAYOUT: u32 = 2;

/// Checks that `prefix` leaves the hash tags of the keys alone.
pub(crate) fn check_prefix(prefix: &str) -> Result<()> {
    if prefix.contains(['{', '}']) {
        return Err(MemoryError::invalid(
            "redis key prefix",
            format!("`{prefix}` contains `{{` or `}}`, which would change the keys' hash tags"),
        ));
    }
    Ok(())
}

/// `prefix` with the glob characters of `SCAN MATCH` escaped.
pub(super) fn glob_escaped(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 2);
    for c in prefix.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn is_hex(s: &str) -> bool {
    s.len().is_multiple_of(2)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The layout-2 name (without the prefix) of a layout-1 key name (without the prefix),
/// or `None` when `rest` is no layout-1 name.
pub(crate) fn renamed(rest: &str) -> Option<String> {
    let parts: Vec<&str> = rest.split(':').collect();
    let tagged =
        |unit: &str, hex: &str, name: &str| is_hex(hex).then(|| format!("{{{unit}:{hex}}}:{name}"));
    match parts.as_slice() {
        ["conversations"] => Some("{index}:conversations".to_owned()),
        ["kvns"] => Some("{index}:kvns".to_owned()),
        ["conv", h, name @ ("seq" | "events" | "message_ids")] => tagged("conv", h, name),
        ["kv", ns, key] if is_hex(key) => tagged("kv", ns, &format!("e:{key}")),
        ["kvidx", ns] => tagged("kv", ns, "index"),
        ["facts", u] => tagged("facts", u, "facts"),
        ["factsver", u] => tagged("facts", u, "version"),
        ["docs", ns] => tagged("docs", ns, "docs"),
        ["docsver", ns] => tagged("docs", ns, "version"),
        ["docsdim", ns] => tagged("docs", ns, "dim"),
        _ => None,
    }
}

impl RedisStore {
    /// `prefix{unit:hex}:name`: a key of the unit `unit` of id `hex` (already encoded).
    pub(crate) fn tagged(&self, unit: &str, hex: &str, name: &str) -> String {
        format!("{}{{{unit}:{hex}}}:{name}", self.prefix)
    }

    /// A store-wide key (all of them share the `{index}` slot).
    pub(crate) fn global(&self, name: &str) -> String {
        format!("{}{{index}}:{name}", self.prefix)
    }

    /// Moves a layout-1 store to layout 2 (see the module docs); a no-op once done.
    pub(crate) async fn migrate_layout(&self) -> Result<()> {
        let op = MIGRATE;
        let layout_key = self.global("layout");
        let mut conn = self.conn();
        let found: Option<String> = self
            .run(
                op,
                redis::cmd("GET").arg(&layout_key).query_async(&mut conn),
            )
            .await?;
        if let Some(found) = found {
            let version: u32 = found.parse().map_err(|e| {
                MemoryError::corrupt(format!("redis key `{layout_key}`"), format!("{e}"))
            })?;
            if version > LAYOUT {
                return Err(MemoryError::UnsupportedVersion {
                    what: "redis key layout",
                    found: version,
                    supported: LAYOUT,
                });
            }
            if version == LAYOUT {
                return Ok(());
            }
        }
        // A single server is scanned through the connection; a cluster node by node,
        // since each primary holds only its own slots' keys.
        let nodes = self.run(op, conn.primaries()).await?;
        let mut moved = 0usize;
        if nodes.is_empty() {
            moved += self.move_scanned(&mut conn, None).await?;
        }
        for node in &nodes {
            moved += self.move_scanned(&mut conn, Some(node)).await?;
        }
        if moved > 0 {
            tracing::info!(store = STORE, moved, prefix = %self.prefix, "moved keys to the hash-tagged layout");
        }
        self.run::<(), _>(
            op,
            redis::cmd("SET")
                .arg(&layout_key)
                .arg(LAYOUT)
                .query_async(&mut conn),
        )
        .await
    }
}

const MIGRATE: &str = "move keys to the hash-tagged layout";

impl RedisStore {
    /// Moves every layout-1 key `SCAN` finds under the prefix (on `node` of a cluster, or
    /// on the single server); how many it moved.
    async fn move_scanned(&self, conn: &mut Conn, node: Option<&(String, u16)>) -> Result<usize> {
        let pattern = format!("{}*", glob_escaped(&self.prefix));
        let mut cursor: u64 = 0;
        let mut moved = 0usize;
        loop {
            let (next, keys) = self
                .run(MIGRATE, conn.scan_page(node, cursor, &pattern))
                .await?;
            for old in keys {
                let Some(rest) = old.strip_prefix(&self.prefix) else {
                    continue;
                };
                if rest.starts_with('{') {
                    continue;
                }
                let Some(new) = renamed(rest).map(|n| format!("{}{n}", self.prefix)) else {
                    tracing::warn!(store = STORE, key = %old, "key under the prefix is not agentmem's; left alone");
                    continue;
                };
                if self.move_key(conn, &old, &new).await? {
                    moved += 1;
                }
            }
            cursor = next;
            if cursor == 0 {
                return Ok(moved);
            }
        }
    }

    /// Gives `old` the name `new` unless `new` exists (a typed error naming both);
    /// `false` when `old` is already gone (another process moved it).
    ///
    /// On a single server one `RENAMENX`. On a cluster the two names are in different
    /// slots, where `RENAMENX` is refused: the key is copied (`DUMP`, `RESTORE` with its
    /// time to live, never replacing) and then deleted. A copy interrupted before its
    /// delete leaves both names with the same value; the next connect deletes the old one.
    async fn move_key(&self, conn: &mut Conn, old: &str, new: &str) -> Result<bool> {
        let conflict = || {
            MemoryError::corrupt(
                format!("redis key `{old}`"),
                format!(
                    "it must move to `{new}`, which exists too; \
                     merge or delete one of them by hand"
                ),
            )
        };
        if !conn.is_cluster() {
            let result: redis::RedisResult<i64> = tokio::time::timeout(
                self.timeout,
                redis::cmd("RENAMENX").arg(old).arg(new).query_async(conn),
            )
            .await
            .map_err(|_| MemoryError::store(STORE, MIGRATE, "timed out"))?;
            return match result {
                Ok(1) => Ok(true),
                Ok(_) => Err(conflict()),
                // Another process moved it between our SCAN and RENAMENX.
                Err(e) if e.to_string().contains("no such key") => Ok(false),
                Err(e) => Err(MemoryError::store(STORE, MIGRATE, e)),
            };
        }
        let dump = |key: &str| {
            let mut cmd = redis::cmd("DUMP");
            cmd.arg(key);
            cmd
        };
        let value: Option<Vec<u8>> = self.run(MIGRATE, dump(old).query_async(conn)).await?;
        let Some(value) = value else { return Ok(false) };
        let ttl: i64 = self
            .run(MIGRATE, redis::cmd("PTTL").arg(old).query_async(conn))
            .await?;
        let restored: redis::RedisResult<()> = tokio::time::timeout(
            self.timeout,
            redis::cmd("RESTORE")
                .arg(new)
                .arg(ttl.max(0))
                .arg(&value)
                .query_async(conn),
        )
        .await
        .map_err(|_| MemoryError::store(STORE, MIGRATE, "timed out"))?;
        if let Err(e) = restored {
            if !e.to_string().contains("BUSYKEY") {
                return Err(MemoryError::store(STORE, MIGRATE, e));
            }
            let there: Option<Vec<u8>> = self.run(MIGRATE, dump(new).query_async(conn)).await?;
            if there.as_deref() != Some(value.as_slice()) {
                return Err(conflict());
            }
        }
        self.run::<(), _>(MIGRATE, redis::cmd("DEL").arg(old).query_async(conn))
            .await?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot-deciding part of a key, as Redis Cluster computes it.
    fn hash_tag(key: &str) -> &str {
        if let Some(open) = key.find('{') {
            if let Some(len) = key[open + 1..].find('}') {
                if len > 0 {
                    return &key[open + 1..open + 1 + len];
                }
            }
        }
        key
    }

    #[test]
    fn layout_one_names_map_to_tagged_names() {
        assert_eq!(
            renamed("conversations").as_deref(),
            Some("{index}:conversations")
        );
        assert_eq!(renamed("kvns").as_deref(), Some("{index}:kvns"));
        assert_eq!(renamed("conv:6162:seq").as_deref(), Some("{conv:6162}:seq"));
        assert_eq!(
            renamed("conv:6162:message_ids").as_deref(),
            Some("{conv:6162}:message_ids")
        );
        assert_eq!(renamed("kv:6e:6b").as_deref(), Some("{kv:6e}:e:6b"));
        assert_eq!(renamed("kv::").as_deref(), Some("{kv:}:e:"), "empty ids");
        assert_eq!(renamed("kvidx:6e").as_deref(), Some("{kv:6e}:index"));
        assert_eq!(renamed("facts:75").as_deref(), Some("{facts:75}:facts"));
        assert_eq!(
            renamed("factsver:75").as_deref(),
            Some("{facts:75}:version")
        );
        assert_eq!(renamed("docs:6e").as_deref(), Some("{docs:6e}:docs"));
        assert_eq!(renamed("docsver:6e").as_deref(), Some("{docs:6e}:version"));
        assert_eq!(renamed("docsdim:6e").as_deref(), Some("{docs:6e}:dim"));
        for other in [
            "conv:zz:seq",
            "conv:61:other",
            "kv:6e",
            "facts:7",
            "x",
            "docs:6e:1",
        ] {
            assert_eq!(renamed(other), None, "{other}");
        }
    }

    #[test]
    fn keys_one_operation_touches_share_a_tag() {
        let groups = [
            vec!["{conv:61}:seq", "{conv:61}:events", "{conv:61}:message_ids"],
            vec!["{kv:61}:index", "{kv:61}:e:6b", "{kv:61}:e:"],
            vec!["{facts:61}:facts", "{facts:61}:version"],
            vec!["{docs:61}:docs", "{docs:61}:version", "{docs:61}:dim"],
        ];
        for prefix in ["agentmem:", "", "a*b:"] {
            for group in &groups {
                let keys: Vec<String> = group.iter().map(|k| format!("{prefix}{k}")).collect();
                let tags: Vec<&str> = keys.iter().map(|k| hash_tag(k)).collect();
                assert!(tags.windows(2).all(|w| w[0] == w[1]), "{tags:?}");
            }
        }
        assert!(check_prefix("agentmem:").is_ok());
        assert!(check_prefix("a{b}:").is_err());
        assert!(check_prefix("a}").is_err());
        assert_eq!(glob_escaped("a*b?[c]\\:"), "a\\*b\\?\\[c\\]\\\\:");
    }
}
