//! [`VectorStore`] on Redis: a hash of document id → JSON per namespace, the namespace's
//! embedding dimension, and a version counter bumped by every write.
//!
//! Redis is the source of truth; searches run on an [`InMemoryVectorStore`] built from the
//! namespace's hash and kept while the version is unchanged, so a search costs one `GET`
//! when nothing changed, and any process sees another's writes at its next search.

use std::sync::{Arc, LazyLock};

use agentmemory_core::store_support::normalized;
use agentmemory_core::{
    Document, InMemoryVectorStore, MemoryError, Result, SearchHit, SearchQuery, VectorStore,
};
use async_trait::async_trait;
use redis::Script;

use super::{decode, encode, hex, RedisStore};

/// The namespace every cached index keeps its documents under.
const INDEX_NAMESPACE: &str = "documents";

/// KEYS: version, documents hash, dimension. ARGV: the batch's dimension (or ``), then
/// (id, JSON) pairs. Returns `ok`, or the namespace's dimension when the batch's differs.
static UPSERT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if ARGV[1] ~= '' then
  local dim = redis.call('GET', KEYS[3])
  if dim and dim ~= ARGV[1] and redis.call('HLEN', KEYS[2]) > 0 then return dim end
  redis.call('SET', KEYS[3], ARGV[1])
end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('INCR', KEYS[1])
return 'ok'
",
    )
});

/// KEYS: version, documents hash, dimension. ARGV: ids. Returns how many were removed.
static DELETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local n = 0
for i = 1, #ARGV do
  n = n + redis.call('HDEL', KEYS[2], ARGV[i])
end
if n > 0 then
  redis.call('INCR', KEYS[1])
  if redis.call('HLEN', KEYS[2]) == 0 then redis.call('DEL', KEYS[3]) end
end
return n
",
    )
});

/// A namespace's search index and the version it was built at.
#[derive(Debug)]
pub(super) struct CachedIndex {
    version: String,
    index: Arc<InMemoryVectorStore>,
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

impl RedisStore {
    /// Version, documents hash and dimension of a namespace (one hash slot).
    fn document_keys(&self, namespace: &str) -> (String, String, String) {
        let h = hex(namespace);
        (
            self.tagged("docs", &h, "version"),
            self.tagged("docs", &h, "docs"),
            self.tagged("docs", &h, "dim"),
        )
    }

    /// The search index of `namespace`, rebuilt when its version moved since it was built.
    async fn vector_index(&self, namespace: &str) -> Result<Arc<InMemoryVectorStore>> {
        let (ver, hash, _) = self.document_keys(namespace);
        let mut conn = self.conn();
        let version: Option<String> = self
            .run(
                "search documents",
                redis::cmd("GET").arg(&ver).query_async(&mut conn),
            )
            .await?;
        let version = version.unwrap_or_else(|| "0".to_owned());
        if let Some(cached) = self.indexes.lock().ok().and_then(|map| {
            map.get(namespace)
                .filter(|c| c.version == version)
                .map(|c| Arc::clone(&c.index))
        }) {
            return Ok(cached);
        }
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("GET").arg(&ver).cmd("HVALS").arg(&hash);
        let (version, bodies): (Option<String>, Vec<String>) = self
            .run("search documents", pipe.query_async(&mut conn))
            .await?;
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
        if let Ok(mut map) = self.indexes.lock() {
            map.insert(
                namespace.to_owned(),
                CachedIndex {
                    version: version.unwrap_or_else(|| "0".to_owned()),
                    index: Arc::clone(&index),
                },
            );
        }
        Ok(index)
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
        let (ver, hash, dim_key) = self.document_keys(namespace);
        let mut inv = UPSERT.prepare_invoke();
        inv.key(ver).key(hash).key(dim_key);
        inv.arg(dim.map(|d| d.to_string()).unwrap_or_default());
        let mut ids = Vec::with_capacity(documents.len());
        for doc in &documents {
            let id = doc.id.clone().unwrap_or_default();
            inv.arg(&id).arg(encode(doc, "document")?);
            ids.push(id);
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
        let (_, hash, _) = self.document_keys(namespace);
        let mut conn = self.conn();
        let text: Option<String> = self
            .run(
                "get a document",
                redis::cmd("HGET").arg(hash).arg(id).query_async(&mut conn),
            )
            .await?;
        text.map(|t| decode(&t, || format!("document `{id}` in redis")))
            .transpose()
    }

    async fn delete(&self, namespace: &str, ids: &[String]) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        let (ver, hash, dim) = self.document_keys(namespace);
        let mut inv = DELETE.prepare_invoke();
        inv.key(ver).key(hash).key(dim);
        for id in ids {
            inv.arg(id);
        }
        let mut conn = self.conn();
        self.run("delete documents", inv.invoke_async(&mut conn))
            .await
    }

    async fn clear(&self, namespace: &str) -> Result<()> {
        let (ver, hash, dim) = self.document_keys(namespace);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("DEL")
            .arg(hash)
            .arg(dim)
            .ignore()
            .cmd("INCR")
            .arg(ver)
            .ignore();
        let mut conn = self.conn();
        self.run::<(), _>("clear a namespace", pipe.query_async(&mut conn))
            .await
    }

    async fn len(&self, namespace: &str) -> Result<usize> {
        let (_, hash, _) = self.document_keys(namespace);
        let mut conn = self.conn();
        self.run(
            "count documents",
            redis::cmd("HLEN").arg(hash).query_async(&mut conn),
        )
        .await
    }

    async fn ids(&self, namespace: &str) -> Result<Vec<String>> {
        let (_, hash, _) = self.document_keys(namespace);
        let mut conn = self.conn();
        let mut ids: Vec<String> = self
            .run(
                "list document ids",
                redis::cmd("HKEYS").arg(hash).query_async(&mut conn),
            )
            .await?;
        ids.sort_unstable();
        Ok(ids)
    }
}
