//! [`Reembed`] on Redis.
//!
//! - Users with facts and vector namespaces are found with `SCAN` over their hashes' key
//!   pattern (`P{facts:*}:facts`, `P{docs:*}:docs`; on every primary of a cluster), in id
//!   order; each hash is walked
//!   with `HSCAN`. A cursor is `f` or `d`, the user or namespace, and the `HSCAN` cursor,
//!   joined by NULs. `HSCAN` may return a field twice: a vector made twice is stored once.
//! - Vectors are stored per user or namespace by a script that applies them only if the
//!   hash's version has not moved since they were read (else they are read again), and
//!   bumps the version, so every process's fact cache and search index sees them.
//! - The model is one store-wide key, `P{index}:embedding_model`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use agentmemory_core::reembed::{
    Embedded, EmbeddingModel, EmbeddingTarget, Reembed, Unembedded, UnembeddedPage,
};
use agentmemory_core::store_support::normalized;
use agentmemory_core::{Document, MemoryError, MemoryFact, Result};
use async_trait::async_trait;
use redis::Script;

use super::layout::glob_escaped;
use super::{decode, encode, hex, RedisStore};
use crate::model_record;

/// Fields asked of each `HSCAN`.
const HSCAN_COUNT: usize = 256;
/// Times a write re-reads after the version moved.
const MAX_ATTEMPTS: usize = 16;

/// KEYS: version, hash, dimension (or any key of the slot for facts). ARGV: expected
/// version, the dimension to set (or ``), then (field, value) pairs. Returns -1 when the
/// version moved, the namespace's dimension when it differs, 0 when applied.
static APPLY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return -1 end
if ARGV[2] ~= '' then
  local dim = redis.call('GET', KEYS[3])
  if dim and dim ~= ARGV[2] then return tonumber(dim) end
  redis.call('SET', KEYS[3], ARGV[2])
end
for i = 3, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
if #ARGV > 2 then redis.call('INCR', KEYS[1]) end
return 0
",
    )
});

/// The id `hex` encodes.
fn unhex(hex: &str) -> Option<String> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// A kind of hash: a user's facts or a namespace's documents.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Facts,
    Docs,
}

impl Kind {
    fn unit(self) -> &'static str {
        match self {
            Kind::Facts => "facts",
            Kind::Docs => "docs",
        }
    }

    fn tag(self) -> char {
        match self {
            Kind::Facts => 'f',
            Kind::Docs => 'd',
        }
    }
}

/// Which hash and where in it a page starts.
struct Cursor {
    kind: Kind,
    scope: String,
    hscan: u64,
}

impl Cursor {
    fn parse(after: &str) -> Result<Self> {
        let bad = || {
            MemoryError::invalid(
                "reembed cursor",
                format!("`{after}` is not one of this store's"),
            )
        };
        let mut parts = after.splitn(3, '\u{0}');
        let kind = match parts.next() {
            Some("f") => Kind::Facts,
            Some("d") => Kind::Docs,
            _ => return Err(bad()),
        };
        let scope = parts.next().ok_or_else(bad)?.to_owned();
        let hscan = parts.next().and_then(|c| c.parse().ok()).ok_or_else(bad)?;
        Ok(Self { kind, scope, hscan })
    }

    fn render(&self) -> String {
        format!("{}\u{0}{}\u{0}{}", self.kind.tag(), self.scope, self.hscan)
    }
}

/// The record in a hash field, if it needs a vector: its target and text.
fn needs(kind: Kind, scope: &str, body: &str) -> Result<Option<Unembedded>> {
    Ok(match kind {
        Kind::Facts => {
            let f: MemoryFact = decode(body, || format!("fact of user `{scope}` in redis"))?;
            (f.is_current() && f.embedding.is_none() && !f.text.trim().is_empty()).then(|| {
                Unembedded::new(
                    EmbeddingTarget::Fact {
                        user_id: scope.to_owned(),
                        fact_id: f.id,
                    },
                    f.text,
                )
            })
        }
        Kind::Docs => {
            let d: Document = decode(body, || format!("document of `{scope}` in redis"))?;
            (d.embedding.is_none() && !d.content.trim().is_empty()).then(|| {
                Unembedded::new(
                    EmbeddingTarget::Document {
                        namespace: scope.to_owned(),
                        id: d.id.unwrap_or_default(),
                    },
                    d.content,
                )
            })
        }
    })
}

impl RedisStore {
    /// Every user (or namespace) with a hash of `kind`, in id order.
    async fn scopes(&self, kind: Kind) -> Result<Vec<String>> {
        let op = "list what may have no vector";
        let pattern = format!(
            "{}{{{}:*}}:{}",
            glob_escaped(&self.prefix),
            kind.unit(),
            kind.unit()
        );
        let head = format!("{}{{{}:", self.prefix, kind.unit());
        let tail = format!("}}:{}", kind.unit());
        let mut conn = self.conn();
        // On a cluster every primary is scanned: each holds only its own slots' keys.
        let keys = self.run(op, conn.scan_all(&pattern)).await?;
        let mut out: Vec<String> = keys
            .iter()
            .filter_map(|k| unhex(k.strip_prefix(&head)?.strip_suffix(&tail)?))
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Version, hash and dimension keys of a user's facts or a namespace's documents.
    fn keys_of(&self, kind: Kind, scope: &str) -> (String, String, String) {
        let h = hex(scope);
        (
            self.tagged(kind.unit(), &h, "version"),
            self.tagged(kind.unit(), &h, kind.unit()),
            self.tagged(kind.unit(), &h, "dim"),
        )
    }

    /// Every `(field, body)` of a hash, and its version.
    async fn read_hash(
        &self,
        kind: Kind,
        scope: &str,
        op: &'static str,
    ) -> Result<(String, Vec<(String, String)>)> {
        let (ver, hash, _) = self.keys_of(kind, scope);
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("GET").arg(ver).cmd("HGETALL").arg(hash);
        let mut conn = self.conn();
        let (version, fields): (Option<String>, Vec<(String, String)>) =
            self.run(op, pipe.query_async(&mut conn)).await?;
        Ok((version.unwrap_or_else(|| "0".to_owned()), fields))
    }

    /// Rewrites the hash of `scope` with `change` (which gets its fields and returns the
    /// new bodies and the dimension to set), retrying when another writer moved the
    /// version meanwhile; how many fields it rewrote.
    async fn rewrite<F>(
        &self,
        kind: Kind,
        scope: &str,
        op: &'static str,
        change: F,
    ) -> Result<usize>
    where
        F: Fn(Vec<(String, String)>) -> Result<(Vec<(String, String)>, Option<usize>)>,
    {
        let (ver, hash, dim) = self.keys_of(kind, scope);
        for _ in 0..MAX_ATTEMPTS {
            let (version, fields) = self.read_hash(kind, scope, op).await?;
            let (bodies, dimension) = change(fields)?;
            if bodies.is_empty() {
                return Ok(0);
            }
            let mut inv = APPLY.prepare_invoke();
            inv.key(&ver).key(&hash).key(&dim).arg(&version);
            inv.arg(dimension.map(|d| d.to_string()).unwrap_or_default());
            for (field, body) in &bodies {
                inv.arg(field).arg(body);
            }
            let mut conn = self.conn();
            let outcome: i64 = self.run(op, inv.invoke_async(&mut conn)).await?;
            match outcome {
                0 => return Ok(bodies.len()),
                -1 => continue,
                expected => {
                    return Err(MemoryError::DimensionMismatch {
                        expected: usize::try_from(expected).unwrap_or(0),
                        found: dimension.unwrap_or(0),
                    })
                }
            }
        }
        Err(MemoryError::store(
            super::STORE,
            op,
            format!("the hash kept changing over {MAX_ATTEMPTS} attempts"),
        ))
    }
}

#[async_trait]
impl Reembed for RedisStore {
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>> {
        let op = "read the embedding model";
        let mut conn = self.conn();
        let json: Option<String> = self
            .run(
                op,
                redis::cmd("GET")
                    .arg(self.global("embedding_model"))
                    .query_async(&mut conn),
            )
            .await?;
        json.map(|j| model_record::decode(&j, "redis")).transpose()
    }

    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()> {
        let op = "record the embedding model";
        let json = model_record::encode(model)?;
        let mut conn = self.conn();
        self.run::<(), _>(
            op,
            redis::cmd("SET")
                .arg(self.global("embedding_model"))
                .arg(json)
                .query_async(&mut conn),
        )
        .await
    }

    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage> {
        let op = "list what has no vector";
        let limit = limit.max(1);
        let start = after.map(Cursor::parse).transpose()?;
        let mut items = Vec::new();
        for kind in [Kind::Facts, Kind::Docs] {
            if start.as_ref().is_some_and(|c| c.kind > kind) {
                continue;
            }
            for scope in self.scopes(kind).await? {
                let mut hscan = 0u64;
                if let Some(c) = start.as_ref().filter(|c| c.kind == kind) {
                    if scope < c.scope {
                        continue;
                    }
                    if scope == c.scope {
                        if c.hscan == 0 {
                            continue; // that hash was walked to its end
                        }
                        hscan = c.hscan;
                    }
                }
                let (_, hash, _) = self.keys_of(kind, &scope);
                loop {
                    let mut conn = self.conn();
                    let (next, fields): (u64, Vec<(String, String)>) = self
                        .run(
                            op,
                            redis::cmd("HSCAN")
                                .arg(&hash)
                                .arg(hscan)
                                .arg("COUNT")
                                .arg(HSCAN_COUNT)
                                .query_async(&mut conn),
                        )
                        .await?;
                    for (_, body) in &fields {
                        if let Some(u) = needs(kind, &scope, body)? {
                            items.push(u);
                        }
                    }
                    hscan = next;
                    // A page ends after a whole HSCAN step: it may hold a little more than
                    // `limit` records, never fewer unless the store is walked to its end.
                    if items.len() >= limit {
                        let next = Cursor { kind, scope, hscan };
                        return Ok(UnembeddedPage::new(items, Some(next.render())));
                    }
                    if hscan == 0 {
                        break;
                    }
                }
            }
        }
        Ok(UnembeddedPage::new(items, None))
    }

    async fn count_unembedded(&self) -> Result<usize> {
        let op = "count what has no vector";
        let mut n = 0;
        for kind in [Kind::Facts, Kind::Docs] {
            for scope in self.scopes(kind).await? {
                let (_, fields) = self.read_hash(kind, &scope, op).await?;
                for (_, body) in &fields {
                    n += usize::from(needs(kind, &scope, body)?.is_some());
                }
            }
        }
        Ok(n)
    }

    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize> {
        let mut by_scope: BTreeMap<(Kind, String), Vec<(String, String, Vec<f32>)>> =
            BTreeMap::new();
        for e in embedded {
            let v = normalized(e.embedding, "embedding")?;
            match e.target {
                EmbeddingTarget::Fact { user_id, fact_id } => by_scope
                    .entry((Kind::Facts, user_id))
                    .or_default()
                    .push((fact_id, e.text, v)),
                EmbeddingTarget::Document { namespace, id } => by_scope
                    .entry((Kind::Docs, namespace))
                    .or_default()
                    .push((id, e.text, v)),
                _ => {}
            }
        }
        let mut written = 0;
        for ((kind, scope), vectors) in by_scope {
            written += self
                .rewrite(kind, &scope, "store vectors", |fields| {
                    let fields: BTreeMap<String, String> = fields.into_iter().collect();
                    let mut out = Vec::new();
                    let mut dimension = None;
                    for (id, text, v) in &vectors {
                        let Some(body) = fields.get(id) else { continue };
                        match kind {
                            Kind::Facts => {
                                let mut f: MemoryFact =
                                    decode(body, || format!("fact `{id}` in redis"))?;
                                if f.is_current() && f.embedding.is_none() && &f.text == text {
                                    f.embedding = Some(v.clone());
                                    out.push((id.clone(), encode(&f, "fact")?));
                                }
                            }
                            Kind::Docs => {
                                let mut d: Document =
                                    decode(body, || format!("document `{id}` in redis"))?;
                                if d.embedding.is_none() && &d.content == text {
                                    d.embedding = Some(v.clone());
                                    dimension = Some(v.len());
                                    out.push((id.clone(), encode(&d, "document")?));
                                }
                            }
                        }
                    }
                    Ok((out, dimension))
                })
                .await?;
        }
        Ok(written)
    }

    async fn drop_embeddings(&self) -> Result<usize> {
        let op = "drop the vectors";
        let mut dropped = 0;
        for kind in [Kind::Facts, Kind::Docs] {
            for scope in self.scopes(kind).await? {
                dropped += self
                    .rewrite(kind, &scope, op, |fields| {
                        let mut out = Vec::new();
                        for (id, body) in fields {
                            let stripped = match kind {
                                Kind::Facts => {
                                    let mut f: MemoryFact =
                                        decode(&body, || format!("fact `{id}` in redis"))?;
                                    f.embedding.take().map(|_| encode(&f, "fact")).transpose()?
                                }
                                Kind::Docs => {
                                    let mut d: Document =
                                        decode(&body, || format!("document `{id}` in redis"))?;
                                    d.embedding
                                        .take()
                                        .map(|_| encode(&d, "document"))
                                        .transpose()?
                                }
                            };
                            if let Some(body) = stripped {
                                out.push((id, body));
                            }
                        }
                        Ok((out, None))
                    })
                    .await?;
                if kind == Kind::Docs {
                    let (_, _, dim) = self.keys_of(kind, &scope);
                    let mut conn = self.conn();
                    self.run::<(), _>(op, redis::cmd("DEL").arg(dim).query_async(&mut conn))
                        .await?;
                }
            }
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_back_from_their_hex() {
        for id in ["ana", "", "user:1{x}*", "北京"] {
            assert_eq!(unhex(&hex(id)).as_deref(), Some(id));
        }
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }
}
