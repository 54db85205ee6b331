//! [`VectorStore`] on Redis: a hash of document id → JSON per namespace, the namespace's
//! embedding dimension, a version counter bumped by every write, a change log and a
//! sorted set of the ids.
//!
//! Redis is the source of truth; searches run on an [`InMemoryVectorStore`] built from the
//! namespace's hash once and then kept up to date in place, so a search costs one script
//! call when nothing changed, and any process sees another's writes at its next search.
//!
//! Every write (upsert, delete, clear) is one script that changes the documents, bumps
//! the version and appends `VERSION\tJSON array of the ids it touched` (a clear:
//! `VERSION\tclear`) to the namespace's change log, a list trimmed to its last
//! [`LOG_LEN`] entries. Before a search, a script returns the current version and the log
//! entries after the cached index's version; the ids they name are read with one `HMGET`
//! and upserted into (or, when gone, deleted from) the cached index. The index is built
//! from the whole hash (`HVALS`) only on first use, after a clear, or when the entries
//! needed are no longer all in the log (trimmed away, or a version bumped without an
//! entry: a reembed, or an agentmem before the log).
//!
//! Catch-ups of one namespace in one process take turns (an async lock per namespace),
//! and each reads the documents after the entries it applies were written, so the index
//! never goes back to an older body; re-applying an entry is harmless.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, PoisonError};

use agentmemory_core::store_support::normalized;
use agentmemory_core::{
    Document, InMemoryVectorStore, MemoryError, Result, SearchHit, SearchQuery, VectorStore,
};
use async_trait::async_trait;
use redis::Script;

use super::{decode, encode, hex, RedisStore};

/// The namespace every cached index keeps its documents under.
const INDEX_NAMESPACE: &str = "documents";

/// How many entries a namespace's change log keeps (see [`RedisStore::CHANGE_LOG_LEN`]).
const LOG_LEN: usize = 4_096;

/// KEYS: version, documents hash, dimension, log, ids. ARGV: the batch's dimension (or
/// ``), the JSON array of the ids, the log length, then (id, JSON) pairs. Returns `ok`, or
/// the namespace's dimension when the batch's differs.
static UPSERT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if ARGV[1] ~= '' then
  local dim = redis.call('GET', KEYS[3])
  if dim and dim ~= ARGV[1] and redis.call('HLEN', KEYS[2]) > 0 then return dim end
  redis.call('SET', KEYS[3], ARGV[1])
end
for i = 4, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[5], 0, ARGV[i])
end
local v = redis.call('INCR', KEYS[1])
redis.call('RPUSH', KEYS[4], v .. '\t' .. ARGV[2])
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[3]), -1)
return 'ok'
",
    )
});

/// KEYS: version, documents hash, dimension, log, ids. ARGV: the JSON array of the ids,
/// the log length, then the ids. Returns how many were removed.
static DELETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = 0
for i = 3, #ARGV do
  n = n + redis.call('HDEL', KEYS[2], ARGV[i])
  redis.call('ZREM', KEYS[5], ARGV[i])
end
if n > 0 then
  local v = redis.call('INCR', KEYS[1])
  redis.call('RPUSH', KEYS[4], v .. '\t' .. ARGV[1])
  redis.call('LTRIM', KEYS[4], -tonumber(ARGV[2]), -1)
  if redis.call('HLEN', KEYS[2]) == 0 then redis.call('DEL', KEYS[3]) end
end
return n
",
    )
});

/// KEYS: version, documents hash, dimension, log, ids. Empties the namespace and leaves
/// one log entry, the clear.
static CLEAR: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
local v = redis.call('INCR', KEYS[1])
redis.call('RPUSH', KEYS[4], v .. '\tclear')
return v
",
    )
});

/// KEYS: version, log. ARGV: the version the caller has. Returns the current version,
/// 1 when the log no longer holds every entry since (else 0), and those entries.
static CHANGES: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local behind = cur - tonumber(ARGV[1])
if behind == 0 then return {cur, 0, {}} end
if behind < 0 or behind > redis.call('LLEN', KEYS[2]) then return {cur, 1, {}} end
return {cur, 0, redis.call('LRANGE', KEYS[2], -behind, -1)}
",
    )
});

/// KEYS: documents hash, ids. ARGV: from (inclusive), to (exclusive). The ids in that
/// range, in byte order. Fills the ids' sorted set from the hash first when their counts
/// differ (a namespace written before the set existed).
static IDS_IN_RANGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = redis.call('HLEN', KEYS[1])
if redis.call('ZCARD', KEYS[2]) ~= n then
  redis.call('DEL', KEYS[2])
  local ids = redis.call('HKEYS', KEYS[1])
  for i = 1, #ids, 500 do
    local args = {}
    for j = i, math.min(i + 499, #ids) do
      args[#args + 1] = 0
      args[#args + 1] = ids[j]
    end
    redis.call('ZADD', KEYS[2], unpack(args))
  end
end
return redis.call('ZRANGEBYLEX', KEYS[2], '[' .. ARGV[1], '(' .. ARGV[2])
",
    )
});

/// A namespace's search index, once built, and the lock its updates take turns on.
#[derive(Debug, Default)]
pub(super) struct CachedIndex {
    built: std::sync::Mutex<Option<Built>>,
    updating: tokio::sync::Mutex<()>,
    /// When its size is due to be measured again.
    remeasure: crate::lru::Remeasure,
}

/// An index and the version of the namespace it holds.
#[derive(Debug, Clone)]
struct Built {
    version: u64,
    index: Arc<InMemoryVectorStore>,
}

impl CachedIndex {
    fn current(&self) -> Option<Built> {
        self.built
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, built: Built) {
        *self.built.lock().unwrap_or_else(PoisonError::into_inner) = Some(built);
    }
}

/// What changed in a namespace since a version.
enum Changes {
    /// The namespace is at `version`; the documents with these ids changed since.
    Ids { version: u64, ids: Vec<String> },
    /// The log cannot tell (trimmed, cleared, or a version bumped without an entry).
    Rebuild,
}

/// The ids the log `entries` name, if they are exactly the entries of the versions
/// `since + 1 ..= version`, in order, with no clear among them.
fn changed_ids(since: u64, version: u64, entries: &[String]) -> Option<Vec<String>> {
    if version.checked_sub(since)? != entries.len() as u64 {
        return None;
    }
    let mut ids = BTreeSet::new();
    for (expected, entry) in (since + 1..).zip(entries) {
        let (v, list) = entry.split_once('\t')?;
        if v.parse::<u64>().ok()? != expected {
            return None;
        }
        ids.extend(serde_json::from_str::<Vec<String>>(list).ok()?);
    }
    Some(ids.into_iter().collect())
}

/// Validates `documents` and gives each an id and a normalised embedding; with the
/// batch's embedding dimension (all must agree).
fn prepare(documents: Vec<Document>) -> Result<(Vec<Document>, Option<usize>)> {
    let mut dim = None;
    let mut out = Vec::with_capacity(documents.len());
    for mut doc in documents {
        match &doc.id {
            Some(id) if id.is_empty() => {
                return Err(MemoryError::invalid("document id", "must not be empty"))
            }
            Some(_) => {}
            None => doc.id = Some(ulid::Ulid::new().to_string()),
        }
        if let Some(v) = doc.embedding.take() {
            match dim {
                None => dim = Some(v.len()),
                Some(d) if d != v.len() => {
                    return Err(MemoryError::DimensionMismatch {
                        expected: d,
                        found: v.len(),
                    })
                }
                Some(_) => {}
            }
            doc.embedding = Some(normalized(v, "document embedding")?);
        }
        out.push(doc);
    }
    Ok((out, dim))
}

/// The keys of one namespace (one hash slot).
struct Keys {
    version: String,
    docs: String,
    dim: String,
    log: String,
    ids: String,
}

impl RedisStore {
    /// How many writes a namespace's change log remembers: a cached search index more
    /// writes behind than this is built again from the whole namespace; one fewer behind
    /// reads only the documents those writes changed.
    pub const CHANGE_LOG_LEN: usize = LOG_LEN;

    /// Documents read from Redis by this store and its clones: to build or update search
    /// indexes (every body of a build, every id a catch-up asks for) and by `get` and
    /// `get_many` (those found). For tests and diagnostics: a search after one write
    /// should add a handful, not the namespace's size.
    pub fn documents_read(&self) -> u64 {
        self.documents_read.load(Ordering::Relaxed)
    }

    /// The keys of `namespace`.
    fn document_keys(&self, namespace: &str) -> Keys {
        let h = hex(namespace);
        Keys {
            version: self.tagged("docs", &h, "version"),
            docs: self.tagged("docs", &h, "docs"),
            dim: self.tagged("docs", &h, "dim"),
            log: self.tagged("docs", &h, "log"),
            ids: self.tagged("docs", &h, "ids"),
        }
    }

    /// A script invocation on every key of `namespace`.
    fn write_script<'a>(script: &'a Script, keys: &Keys) -> redis::ScriptInvocation<'a> {
        let mut inv = script.prepare_invoke();
        inv.key(&keys.version)
            .key(&keys.docs)
            .key(&keys.dim)
            .key(&keys.log)
            .key(&keys.ids);
        inv
    }

    /// Counts `n` documents read from Redis.
    fn count_read(&self, n: usize) {
        self.documents_read.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The cache entry of `namespace` (created empty).
    fn cache_entry(&self, namespace: &str) -> Arc<CachedIndex> {
        self.indexes
            .get_or_insert_with(namespace, 0, Default::default)
    }

    /// Notes `changed` documents applied to `entry`'s index (all of them when `rebuilt`)
    /// and files its size when due (see `lru::Remeasure`).
    async fn charge(
        &self,
        namespace: &str,
        entry: &Arc<CachedIndex>,
        index: &InMemoryVectorStore,
        changed: usize,
        rebuilt: bool,
    ) -> Result<()> {
        if entry.remeasure.changed(changed) || rebuilt {
            let held = index.len(INDEX_NAMESPACE).await?;
            entry.remeasure.measured(held);
            self.indexes
                .resize(namespace, index.heap_bytes(), |e| Arc::ptr_eq(e, entry));
        }
        Ok(())
    }

    /// What changed in `namespace` since `since`.
    async fn changes_since(&self, namespace: &str, since: u64) -> Result<Changes> {
        let keys = self.document_keys(namespace);
        let mut inv = CHANGES.prepare_invoke();
        inv.key(&keys.version).key(&keys.log).arg(since);
        let mut conn = self.conn();
        let (version, rebuild, entries): (u64, u8, Vec<String>) = self
            .run("search documents", inv.invoke_async(&mut conn))
            .await?;
        if rebuild != 0 {
            return Ok(Changes::Rebuild);
        }
        Ok(match changed_ids(since, version, &entries) {
            Some(ids) => Changes::Ids { version, ids },
            None => Changes::Rebuild,
        })
    }

    /// Builds the index of `namespace` from its whole hash and caches it.
    async fn rebuild(
        &self,
        namespace: &str,
        entry: &Arc<CachedIndex>,
    ) -> Result<Arc<InMemoryVectorStore>> {
        let keys = self.document_keys(namespace);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("GET")
            .arg(&keys.version)
            .cmd("HVALS")
            .arg(&keys.docs);
        let mut conn = self.conn();
        let (version, bodies): (Option<u64>, Vec<String>) = self
            .run("search documents", pipe.query_async(&mut conn))
            .await?;
        self.count_read(bodies.len());
        let documents = bodies
            .iter()
            .map(|b| {
                decode::<Document>(b, || {
                    format!("document of namespace `{namespace}` in redis")
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let index = Arc::new(InMemoryVectorStore::new());
        index.upsert_batch(INDEX_NAMESPACE, documents).await?;
        entry.set(Built {
            version: version.unwrap_or(0),
            index: Arc::clone(&index),
        });
        self.charge(namespace, entry, &index, 0, true).await?;
        Ok(index)
    }

    /// Reads the documents `ids` and puts them into `index` (those gone are removed).
    /// An error of Redis is `Err(Ok(..))`; one of the index, `Err(Err(..))`.
    async fn apply(
        &self,
        namespace: &str,
        index: &InMemoryVectorStore,
        ids: &[String],
    ) -> std::result::Result<(), std::result::Result<MemoryError, MemoryError>> {
        let keys = self.document_keys(namespace);
        let mut conn = self.conn();
        let bodies: Vec<Option<String>> = self
            .run(
                "search documents",
                redis::cmd("HMGET")
                    .arg(&keys.docs)
                    .arg(ids)
                    .query_async(&mut conn),
            )
            .await
            .map_err(Ok)?;
        self.count_read(bodies.len());
        let mut gone = Vec::new();
        let mut found = Vec::new();
        for (id, body) in ids.iter().zip(bodies) {
            match body {
                Some(b) => found.push(
                    decode::<Document>(&b, || format!("document `{id}` in redis")).map_err(Err)?,
                ),
                None => gone.push(id.clone()),
            }
        }
        // Deletes first: removing the last embedding releases the index's dimension.
        index.delete(INDEX_NAMESPACE, &gone).await.map_err(Err)?;
        index
            .upsert_batch(INDEX_NAMESPACE, found)
            .await
            .map_err(Err)?;
        Ok(())
    }

    /// The search index of `namespace`, brought up to its current version.
    async fn vector_index(&self, namespace: &str) -> Result<Arc<InMemoryVectorStore>> {
        let entry = self.cache_entry(namespace);
        // Without the lock: one round trip when nothing changed.
        let mut seen = None;
        if let Some(built) = entry.current() {
            let changes = self.changes_since(namespace, built.version).await?;
            if let Changes::Ids { version, .. } = &changes {
                if *version == built.version {
                    return Ok(built.index);
                }
            }
            seen = Some((built.version, changes));
        }
        let _turn = entry.updating.lock().await;
        let Some(built) = entry.current() else {
            return self.rebuild(namespace, &entry).await;
        };
        let changes = match seen {
            Some((since, changes)) if since == built.version => changes,
            _ => self.changes_since(namespace, built.version).await?,
        };
        let (version, ids) = match changes {
            Changes::Rebuild => return self.rebuild(namespace, &entry).await,
            Changes::Ids { version, ids } => (version, ids),
        };
        if !ids.is_empty() {
            match self.apply(namespace, &built.index, &ids).await {
                Ok(()) => {}
                Err(Ok(redis_error)) => return Err(redis_error),
                Err(Err(_)) => return self.rebuild(namespace, &entry).await,
            }
        }
        entry.set(Built {
            version,
            index: Arc::clone(&built.index),
        });
        self.charge(namespace, &entry, &built.index, ids.len(), false)
            .await?;
        Ok(built.index)
    }
}

#[async_trait]
impl VectorStore for RedisStore {
    /// All or nothing: one script writes the whole batch after checking its dimension.
    async fn upsert_batch(&self, namespace: &str, documents: Vec<Document>) -> Result<Vec<String>> {
        let (documents, dim) = prepare(documents)?;
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.document_keys(namespace);
        let ids: Vec<String> = documents
            .iter()
            .map(|d| d.id.clone().unwrap_or_default())
            .collect();
        let mut inv = Self::write_script(&UPSERT, &keys);
        inv.arg(dim.map(|d| d.to_string()).unwrap_or_default())
            .arg(encode(&ids, "document ids")?)
            .arg(LOG_LEN);
        for (id, doc) in ids.iter().zip(&documents) {
            inv.arg(id).arg(encode(doc, "document")?);
        }
        let mut conn = self.conn();
        let answer: String = self
            .run("upsert documents", inv.invoke_async(&mut conn))
            .await?;
        if answer != "ok" {
            return Err(MemoryError::DimensionMismatch {
                expected: answer.parse().unwrap_or_default(),
                found: dim.unwrap_or_default(),
            });
        }
        Ok(ids)
    }

    async fn search(&self, namespace: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        if query.k == 0 {
            return Ok(Vec::new());
        }
        let index = self.vector_index(namespace).await?;
        index.search(INDEX_NAMESPACE, query).await
    }

    async fn get(&self, namespace: &str, id: &str) -> Result<Option<Document>> {
        let keys = self.document_keys(namespace);
        let mut conn = self.conn();
        let text: Option<String> = self
            .run(
                "get a document",
                redis::cmd("HGET")
                    .arg(&keys.docs)
                    .arg(id)
                    .query_async(&mut conn),
            )
            .await?;
        self.count_read(usize::from(text.is_some()));
        text.map(|t| decode(&t, || format!("document `{id}` in redis")))
            .transpose()
    }

    /// One `HMGET`.
    async fn get_many(&self, namespace: &str, ids: &[String]) -> Result<Vec<Document>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.document_keys(namespace);
        let mut conn = self.conn();
        let bodies: Vec<Option<String>> = self
            .run(
                "get documents",
                redis::cmd("HMGET")
                    .arg(&keys.docs)
                    .arg(ids)
                    .query_async(&mut conn),
            )
            .await?;
        self.count_read(bodies.iter().flatten().count());
        ids.iter()
            .zip(bodies)
            .filter_map(|(id, body)| {
                body.map(|b| decode(&b, || format!("document `{id}` in redis")))
            })
            .collect()
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        let keys = self.document_keys(namespace);
        let mut inv = Self::write_script(&DELETE, &keys);
        inv.arg(encode(&ids, "document ids")?).arg(LOG_LEN);
        for id in ids {
            inv.arg(id);
        }
        let mut conn = self.conn();
        self.run("delete documents", inv.invoke_async(&mut conn))
            .await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        let keys = self.document_keys(namespace);
        let inv = Self::write_script(&CLEAR, &keys);
        let mut conn = self.conn();
        self.run::<u64, _>("clear a namespace", inv.invoke_async(&mut conn))
            .await
            .map(drop)
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        let keys = self.document_keys(namespace);
        let mut conn = self.conn();
        self.run(
            "count documents",
            redis::cmd("HLEN").arg(&keys.docs).query_async(&mut conn),
        )
        .await
    }

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        let keys = self.document_keys(namespace);
        let mut conn = self.conn();
        let mut ids: Vec<String> = self
            .run(
                "list document ids",
                redis::cmd("HKEYS").arg(&keys.docs).query_async(&mut conn),
            )
            .await?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// A `ZRANGEBYLEX` of the namespace's sorted set of ids.
    async fn ids_in_range(&self, namespace: &str, from: &str, to: &str) -> Result<Vec<String>> {
        if from >= to {
            return Ok(Vec::new());
        }
        let keys = self.document_keys(namespace);
        let mut inv = IDS_IN_RANGE.prepare_invoke();
        inv.key(&keys.docs).key(&keys.ids).arg(from).arg(to);
        let mut conn = self.conn();
        self.run("list a range of document ids", inv.invoke_async(&mut conn))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::changed_ids;

    fn entries(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_log_gives_the_ids_of_consecutive_entries_only() {
        let log = entries(&["4\t[\"b\",\"a\"]", "5\t[\"a\",\"c\\td\"]"]);
        assert_eq!(
            changed_ids(3, 5, &log),
            Some(vec!["a".to_owned(), "b".to_owned(), "c\td".to_owned()])
        );
        assert_eq!(changed_ids(5, 5, &[]), Some(Vec::new()));
        // a version without an entry, a clear, a version going back: rebuild
        assert_eq!(changed_ids(2, 5, &log), None);
        assert_eq!(changed_ids(3, 5, &entries(&["4\t[]", "6\t[]"])), None);
        assert_eq!(changed_ids(3, 5, &entries(&["4\t[]", "5\tclear"])), None);
        assert_eq!(changed_ids(6, 5, &[]), None);
    }
}
