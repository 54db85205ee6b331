//! [`ConversationStore`] on Redis: a sorted set of events per conversation (score = seq,
//! member = `seq:at_us:json`), a seq counter, and an index set of conversation ids.
//! An append is one Lua script over the conversation's keys (one hash slot), so seqs are
//! contiguous and unique across processes.
//!
//! The index set is store-wide, so in another slot than any conversation: an append adds
//! the id before and after its script (in one pipeline; on a Redis
//! Cluster in three requests, since the index and the conversation are in different slots), a delete removes it before its
//! script, and listing skips ids whose seq counter does not exist. Whatever interleaving
//! or crash happens, a conversation that exists is listed.

use std::sync::LazyLock;

use agentmemory_core::conversation::AppendIf;
use agentmemory_core::{ConversationEvent, ConversationStore, MemoryError, Result, StoredEvent};
use async_trait::async_trait;
use chrono::Utc;
use redis::Script;

use super::{decode, encode, hex, RedisStore};

/// KEYS: seq counter, events, message ids. ARGV: id, at_us, then per event its message
/// id (empty for other events) and its body. A message whose id the set already holds is
/// skipped (idempotent appends). Run with `EVAL` inside a pipeline.
const APPEND: &str = r"
local keep = {}
for i = 3, #ARGV, 2 do
  local mid = ARGV[i]
  if mid == '' or redis.call('SADD', KEYS[3], mid) == 1 then
    keep[#keep + 1] = ARGV[i + 1]
  end
end
local n = #keep
if n == 0 then return tonumber(redis.call('GET', KEYS[1]) or '0') end
local last = redis.call('INCRBY', KEYS[1], n)
local first = last - n + 1
for i = 1, n do
  local seq = first + i - 1
  redis.call('ZADD', KEYS[2], seq, seq .. ':' .. ARGV[2] .. ':' .. keep[i])
end
return last
";

/// KEYS and ARGV as [`APPEND`], but ARGV[1] is the last seq expected: [`APPEND`] when the
/// counter holds it, else nothing written and `-(last seq) - 1` returned (a compare-and-
/// append in one script).
static APPEND_IF: LazyLock<String> = LazyLock::new(|| {
    format!(
        "local current = tonumber(redis.call('GET', KEYS[1]) or '0')\n\
         if current ~= tonumber(ARGV[1]) then return -current - 1 end\n{APPEND}"
    )
});

/// KEYS: seq counter, events, message ids. Returns whether the conversation existed.
/// [`APPEND`] over an emptied log: the replacement of `save`, in one script.
static SAVE: LazyLock<String> =
    LazyLock::new(|| format!("redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])\n{APPEND}"));

static DELETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local existed = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return existed
",
    )
});

impl RedisStore {
    /// Seq counter, events and message ids of a conversation (one hash slot).
    fn conv_keys(&self, id: &str) -> [String; 3] {
        let h = hex(id);
        [
            self.tagged("conv", &h, "seq"),
            self.tagged("conv", &h, "events"),
            self.tagged("conv", &h, "message_ids"),
        ]
    }

    /// The store-wide set of conversation ids.
    fn conv_index(&self) -> String {
        self.global("conversations")
    }
}

fn parse_member(member: &str, id: &str) -> Result<StoredEvent> {
    let what = || format!("event of conversation `{id}` in redis");
    let mut parts = member.splitn(3, ':');
    let (Some(seq), Some(at), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(MemoryError::corrupt(what(), "malformed event member"));
    };
    let seq: u64 = seq
        .parse()
        .map_err(|e| MemoryError::corrupt(what(), format!("bad seq: {e}")))?;
    let at: i64 = at
        .parse()
        .map_err(|e| MemoryError::corrupt(what(), format!("bad timestamp: {e}")))?;
    Ok(StoredEvent {
        seq,
        at: chrono::DateTime::from_timestamp_micros(at).unwrap_or_default(),
        event: decode(body, what)?,
    })
}

#[async_trait]
impl ConversationStore for RedisStore {
    async fn append(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        let eval = self.conversation_script(APPEND, conversation_id, None, &events)?;
        let last = self
            .listed_around("append events", "SADD", conversation_id, eval)
            .await?;
        Ok(u64::try_from(last).unwrap_or(0))
    }

    async fn append_if(
        &self,
        conversation_id: &str,
        expected_last_seq: u64,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        let eval = self.conversation_script(
            APPEND_IF.as_str(),
            conversation_id,
            Some(expected_last_seq),
            &events,
        )?;
        let last = self
            .listed_around("append events", "SADD", conversation_id, eval)
            .await?;
        Ok(match u64::try_from(last) {
            Ok(last_seq) => AppendIf::Appended { last_seq },
            Err(_) => AppendIf::Conflict {
                last_seq: u64::try_from(-(last + 1)).unwrap_or(0),
            },
        })
    }

    async fn load_since(&self, conversation_id: &str, after: u64) -> Result<Vec<StoredEvent>> {
        let [_, ev, _] = self.conv_keys(conversation_id);
        let mut conn = self.conn();
        let members: Vec<String> = self
            .run(
                "load events",
                redis::cmd("ZRANGEBYSCORE")
                    .arg(ev)
                    .arg(format!("({after}"))
                    .arg("+inf")
                    .query_async(&mut conn),
            )
            .await?;
        members
            .iter()
            .map(|m| parse_member(m, conversation_id))
            .collect()
    }

    async fn list_conversations(&self) -> Result<Vec<String>> {
        let op = "list conversations";
        let mut conn = self.conn();
        let mut ids: Vec<String> = self
            .run(
                op,
                redis::cmd("SMEMBERS")
                    .arg(self.conv_index())
                    .query_async(&mut conn),
            )
            .await?;
        if ids.is_empty() {
            return Ok(ids);
        }
        let exists: Vec<bool> = if conn.is_cluster() {
            // Each conversation has a slot of its own, on any node: one request each,
            // a bounded number in flight.
            use futures_util::stream::{self, StreamExt, TryStreamExt};
            let seqs: Vec<String> = ids
                .iter()
                .map(|id| {
                    let [seq, _, _] = self.conv_keys(id);
                    seq
                })
                .collect();
            let checks = seqs.into_iter().map(|seq| {
                let mut conn = conn.clone();
                async move {
                    redis::cmd("EXISTS")
                        .arg(seq)
                        .query_async::<bool>(&mut conn)
                        .await
                }
            });
            let all = stream::iter(checks).buffered(64).try_collect::<Vec<bool>>();
            self.run(op, all).await?
        } else {
            let mut pipe = redis::pipe();
            for id in &ids {
                let [seq, _, _] = self.conv_keys(id);
                pipe.cmd("EXISTS").arg(seq);
            }
            self.run(op, pipe.query_async(&mut conn)).await?
        };
        let mut exists = exists.into_iter();
        ids.retain(|_| exists.next().unwrap_or(false));
        ids.sort();
        Ok(ids)
    }

    async fn delete(&self, conversation_id: &str) -> Result<bool> {
        let op = "delete a conversation";
        let [seq, ev, mids] = self.conv_keys(conversation_id);
        let mut conn = self.conn();
        // Unlisted first: an append racing with this delete lists the id again.
        self.run::<(), _>(
            op,
            redis::cmd("SREM")
                .arg(self.conv_index())
                .arg(conversation_id)
                .query_async(&mut conn),
        )
        .await?;
        let mut inv = DELETE.prepare_invoke();
        inv.key(seq).key(ev).key(mids);
        let n: i64 = self.run(op, inv.invoke_async(&mut conn)).await?;
        Ok(n > 0)
    }

    async fn save(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        let eval = self.conversation_script(SAVE.as_str(), conversation_id, None, &events)?;
        // An emptied conversation is unlisted (the script deleted its keys), another is
        // listed before and after, as `append` does.
        let listing = if events.is_empty() { "SREM" } else { "SADD" };
        let last = self
            .listed_around("replace a conversation", listing, conversation_id, eval)
            .await?;
        Ok(u64::try_from(last).unwrap_or(0))
    }

    async fn compact(&self, conversation_id: &str, before_seq: u64) -> Result<usize> {
        let [_, ev, _] = self.conv_keys(conversation_id);
        let mut conn = self.conn();
        self.run(
            "compact a conversation",
            redis::cmd("ZREMRANGEBYSCORE")
                .arg(ev)
                .arg("-inf")
                .arg(format!("({before_seq}"))
                .query_async(&mut conn),
        )
        .await
    }
}

impl RedisStore {
    /// Runs `listing` (`SADD` or `SREM`) of `conversation_id` on the conversation index,
    /// then `eval`, then `listing` again, in this order (see the module docs); the
    /// script's reply. One pipeline on a single server; on a cluster, where the index and
    /// the conversation live in different slots, three requests.
    async fn listed_around(
        &self,
        op: &'static str,
        listing: &str,
        conversation_id: &str,
        eval: redis::Cmd,
    ) -> Result<i64> {
        let idx = self.conv_index();
        let mut conn = self.conn();
        if conn.is_cluster() {
            let mut list = redis::cmd(listing);
            list.arg(&idx).arg(conversation_id);
            self.run::<(), _>(op, list.query_async(&mut conn)).await?;
            let last: i64 = self.run(op, eval.query_async(&mut conn)).await?;
            self.run::<(), _>(op, list.query_async(&mut conn)).await?;
            return Ok(last);
        }
        let mut pipe = redis::pipe();
        pipe.cmd(listing)
            .arg(&idx)
            .arg(conversation_id)
            .ignore()
            .add_command(eval)
            .cmd(listing)
            .arg(&idx)
            .arg(conversation_id)
            .ignore();
        let (last,): (i64,) = self.run(op, pipe.query_async(&mut conn)).await?;
        Ok(last)
    }

    /// The `EVAL` of `script` over one conversation's keys, with `events` as pairs of
    /// message id (empty when the event carries no message) and encoded body: the
    /// arguments `append` and `save` both send.
    fn conversation_script(
        &self,
        script: &str,
        conversation_id: &str,
        expected: Option<u64>,
        events: &[ConversationEvent],
    ) -> Result<redis::Cmd> {
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        let ids = agentmemory_core::store_support::message_ids(events);
        let bodies = events
            .iter()
            .map(|e| encode(e, "conversation event"))
            .collect::<Result<Vec<_>>>()?;
        let [seq, ev, mids] = self.conv_keys(conversation_id);
        let mut eval = redis::cmd("EVAL");
        eval.arg(script).arg(3).arg(seq).arg(ev).arg(mids);
        // ARGV[1]: the id, or the last seq a compare-and-append expects.
        match expected {
            Some(e) => eval.arg(e),
            None => eval.arg(conversation_id),
        };
        eval.arg(Utc::now().timestamp_micros());
        for (id, b) in ids.iter().zip(&bodies) {
            eval.arg(id.map(|i| i.to_string()).unwrap_or_default())
                .arg(b);
        }
        Ok(eval)
    }
}
