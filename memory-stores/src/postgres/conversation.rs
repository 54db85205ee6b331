//! [`ConversationStore`] on PostgreSQL: one row per event. An append is one transaction
//! that bumps the conversation's `last_seq` with `UPDATE ... RETURNING` (the row lock
//! serialises concurrent appenders, in any process) and inserts the batch with `unnest`.

use agentmemory_core::conversation::{AppendIf, ConversationSummary, Owner};
use agentmemory_core::{ConversationEvent, ConversationStore, MemoryError, Result, StoredEvent};
use async_trait::async_trait;
use chrono::Utc;

use super::{decode, encode, from_micros, micros, on, PostgresStore};

fn seq_param(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

impl PostgresStore {
    /// `append`, or `append_if` when `expected` is set: checked under the conversation's
    /// row lock, in the transaction that writes.
    async fn append_checked(
        &self,
        conversation_id: &str,
        expected: Option<u64>,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        let op = "append events";
        let ids = agentmemory_core::store_support::message_ids(&events);
        let mut bodies = events
            .iter()
            .map(|e| encode(e, "conversation event"))
            .collect::<Result<Vec<_>>>()?;
        // Messages repeated inside the batch go first; those already logged are checked
        // under the conversation's row lock below.
        let mut seen = std::collections::HashSet::new();
        let mut message_ids: Vec<Option<String>> = Vec::with_capacity(ids.len());
        let mut keep = Vec::with_capacity(bodies.len());
        for (id, body) in ids.into_iter().zip(bodies.drain(..)) {
            if id.is_none_or(|i| seen.insert(i)) {
                message_ids.push(id.map(|i| i.to_string()));
                keep.push(body);
            }
        }
        let mut bodies = keep;
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            if bodies.is_empty() {
                let row = client
                    .query_opt(
                        &format!(
                            "SELECT last_seq FROM {} WHERE id = $1",
                            self.table("conversations")
                        ),
                        &[&conversation_id],
                    )
                    .await
                    .map_err(on(op))?;
                let last: i64 = row
                    .map(|r| r.try_get(0))
                    .transpose()
                    .map_err(on(op))?
                    .unwrap_or(0);
                let last_seq = u64::try_from(last).unwrap_or(0);
                return Ok(match expected {
                    Some(e) if e != last_seq => AppendIf::Conflict { last_seq },
                    _ => AppendIf::Appended { last_seq },
                });
            }
            let now = micros(Utc::now());
            let tx = client.transaction().await.map_err(on(op))?;
            let asked: Vec<&str> = message_ids.iter().flatten().map(String::as_str).collect();
            // Take the row lock first, so two appenders of one message cannot both find
            // it missing, and a compare-and-append compares with what it writes after.
            let locked = if !asked.is_empty() || expected.is_some() {
                let lock = tx
                    .prepare_cached(&format!(
                        "INSERT INTO {} AS c (id, last_seq, created_us) VALUES ($1, 0, $2) \
                         ON CONFLICT (id) DO UPDATE SET last_seq = c.last_seq RETURNING last_seq",
                        self.table("conversations")
                    ))
                    .await
                    .map_err(on(op))?;
                let current: i64 = tx
                    .query_one(&lock, &[&conversation_id, &now])
                    .await
                    .map_err(on(op))?
                    .try_get(0)
                    .map_err(on(op))?;
                u64::try_from(current).unwrap_or(0)
            } else {
                0
            };
            if expected.is_some_and(|e| e != locked) {
                // Dropped: the transaction rolls back (a row it created goes with it).
                return Ok(AppendIf::Conflict { last_seq: locked });
            }
            if !asked.is_empty() {
                let known = tx
                    .prepare_cached(&format!(
                        "SELECT body->'message'->>'id' FROM {} WHERE conversation_id = $1 \
                         AND body->>'type' = 'message' AND body->'message'->>'id' = ANY($2::text[])",
                        self.table("events")
                    ))
                    .await
                    .map_err(on(op))?;
                let known: std::collections::HashSet<String> = tx
                    .query(&known, &[&conversation_id, &asked])
                    .await
                    .map_err(on(op))?
                    .iter()
                    .map(|r| r.try_get::<_, String>(0))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(on(op))?;
                bodies = bodies
                    .into_iter()
                    .zip(&message_ids)
                    .filter(|(_, id)| id.as_ref().is_none_or(|i| !known.contains(i)))
                    .map(|(b, _)| b)
                    .collect();
                if bodies.is_empty() {
                    tx.commit().await.map_err(on(op))?;
                    return Ok(AppendIf::Appended { last_seq: locked });
                }
            }
            let n = i64::try_from(bodies.len()).unwrap_or(i64::MAX);
            let upsert = tx
                .prepare_cached(&format!(
                    "INSERT INTO {} AS c (id, last_seq, created_us) VALUES ($1, $2, $3) \
                     ON CONFLICT (id) DO UPDATE SET last_seq = c.last_seq + $2 RETURNING last_seq",
                    self.table("conversations")
                ))
                .await
                .map_err(on(op))?;
            let last: i64 = tx
                .query_one(&upsert, &[&conversation_id, &n, &now])
                .await
                .map_err(on(op))?
                .try_get(0)
                .map_err(on(op))?;
            let first = last - n + 1;
            let insert = tx
                .prepare_cached(&format!(
                    "INSERT INTO {} (conversation_id, seq, at_us, body) \
                     SELECT $1::text, $2::bigint + t.i - 1, $3::bigint, t.body::jsonb \
                     FROM unnest($4::text[]) WITH ORDINALITY AS t(body, i)",
                    self.table("events")
                ))
                .await
                .map_err(on(op))?;
            tx.execute(&insert, &[&conversation_id, &first, &now, &bodies])
                .await
                .map_err(on(op))?;
            tx.commit().await.map_err(on(op))?;
            Ok(AppendIf::Appended {
                last_seq: u64::try_from(last).unwrap_or(0),
            })
        })
        .await
    }
}

#[async_trait]
impl ConversationStore for PostgresStore {
    async fn append(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        self.append_checked(conversation_id, None, events)
            .await
            .map(AppendIf::last_seq)
    }

    async fn append_if(
        &self,
        conversation_id: &str,
        expected_last_seq: u64,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        self.append_checked(conversation_id, Some(expected_last_seq), events)
            .await
    }

    async fn load_since(&self, conversation_id: &str, after: u64) -> Result<Vec<StoredEvent>> {
        let op = "load events";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT seq, at_us, body::text FROM {} \
                     WHERE conversation_id = $1 AND seq > $2 ORDER BY seq",
                    self.table("events")
                ))
                .await
                .map_err(on(op))?;
            let rows = client
                .query(&stmt, &[&conversation_id, &seq_param(after)])
                .await
                .map_err(on(op))?;
            rows.iter()
                .map(|row| {
                    let seq: i64 = row.try_get(0).map_err(on(op))?;
                    let at: i64 = row.try_get(1).map_err(on(op))?;
                    let text: &str = row.try_get(2).map_err(on(op))?;
                    Ok(StoredEvent {
                        seq: u64::try_from(seq).unwrap_or(0),
                        at: from_micros(at),
                        event: decode(text, || {
                            format!("event {seq} of `{conversation_id}` in postgres")
                        })?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn list_conversations(&self) -> Result<Vec<String>> {
        let op = "list conversations";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let rows = client
                .query(
                    &format!("SELECT id FROM {} ORDER BY id", self.table("conversations")),
                    &[],
                )
                .await
                .map_err(on(op))?;
            rows.iter()
                .map(|r| r.try_get::<_, String>(0).map_err(on(op)))
                .collect()
        })
        .await
    }

    /// One query counted by the server (the events' type read in place from `jsonb`),
    /// instead of sending every event of every log to the client to decode.
    async fn conversation_summaries(&self) -> Result<Vec<ConversationSummary>> {
        let op = "summarise conversations";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let events = self.table("events");
            let sql = format!(
                "WITH counts AS ( \
                     SELECT conversation_id, count(*) AS events, \
                            count(*) FILTER (WHERE body->>'type' = 'message') AS messages, \
                            max(seq) AS last \
                     FROM {events} GROUP BY conversation_id), \
                 owners AS ( \
                     SELECT DISTINCT ON (conversation_id) conversation_id, \
                            body->>'user_id' AS user_id, body->>'agent' AS agent \
                     FROM {events} WHERE body->>'type' = 'started' \
                     ORDER BY conversation_id, seq DESC) \
                 SELECT c.conversation_id, c.events, c.messages, e.at_us, o.user_id, o.agent \
                 FROM counts c \
                 JOIN {events} e ON e.conversation_id = c.conversation_id AND e.seq = c.last \
                 LEFT JOIN owners o ON o.conversation_id = c.conversation_id \
                 ORDER BY c.conversation_id COLLATE \"C\""
            );
            let rows = client.query(&sql, &[]).await.map_err(on(op))?;
            rows.iter()
                .map(|r| {
                    let id: String = r.try_get(0).map_err(on(op))?;
                    let events: i64 = r.try_get(1).map_err(on(op))?;
                    let messages: i64 = r.try_get(2).map_err(on(op))?;
                    let at: i64 = r.try_get(3).map_err(on(op))?;
                    let user_id: Option<String> = r.try_get(4).map_err(on(op))?;
                    let agent: Option<String> = r.try_get(5).map_err(on(op))?;
                    let owner = user_id.map(|user_id| Owner {
                        user_id,
                        agent: agent.unwrap_or_default(),
                    });
                    Ok(ConversationSummary::new(
                        id,
                        owner,
                        u64::try_from(events).unwrap_or(0),
                        u64::try_from(messages).unwrap_or(0),
                        Some(from_micros(at)),
                    ))
                })
                .collect()
        })
        .await
    }

    async fn delete(&self, conversation_id: &str) -> Result<bool> {
        let op = "delete a conversation";
        self.bounded(op, async {
            let client = self.client(op).await?;
            // Events go with it (ON DELETE CASCADE).
            let n = client
                .execute(
                    &format!("DELETE FROM {} WHERE id = $1", self.table("conversations")),
                    &[&conversation_id],
                )
                .await
                .map_err(on(op))?;
            Ok(n > 0)
        })
        .await
    }

    async fn save(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        if conversation_id.is_empty() {
            return Err(MemoryError::invalid("conversation id", "must not be empty"));
        }
        let op = "replace a conversation";
        let events = agentmemory_core::store_support::without_known_messages(events, |_| false);
        let bodies = events
            .iter()
            .map(|e| encode(e, "conversation event"))
            .collect::<Result<Vec<_>>>()?;
        self.bounded(op, async {
            let mut client = self.client(op).await?;
            let tx = client.transaction().await.map_err(on(op))?;
            // Events go with the conversation (ON DELETE CASCADE); the new log is written
            // in the same transaction, so readers see the old log or the new one.
            tx.execute(
                &format!("DELETE FROM {} WHERE id = $1", self.table("conversations")),
                &[&conversation_id],
            )
            .await
            .map_err(on(op))?;
            let n = i64::try_from(bodies.len()).unwrap_or(i64::MAX);
            if n > 0 {
                let now = micros(Utc::now());
                tx.execute(
                    &format!(
                        "INSERT INTO {} (id, last_seq, created_us) VALUES ($1, $2, $3)",
                        self.table("conversations")
                    ),
                    &[&conversation_id, &n, &now],
                )
                .await
                .map_err(on(op))?;
                tx.execute(
                    &format!(
                        "INSERT INTO {} (conversation_id, seq, at_us, body) \
                         SELECT $1::text, t.i, $2::bigint, t.body::jsonb \
                         FROM unnest($3::text[]) WITH ORDINALITY AS t(body, i)",
                        self.table("events")
                    ),
                    &[&conversation_id, &now, &bodies],
                )
                .await
                .map_err(on(op))?;
            }
            tx.commit().await.map_err(on(op))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
        .await
    }

    async fn clear_conversations(&self) -> Result<usize> {
        let op = "delete every conversation";
        self.bounded(op, async {
            let client = self.client(op).await?;
            // Events go with their conversations (ON DELETE CASCADE).
            let n = client
                .execute(&format!("DELETE FROM {}", self.table("conversations")), &[])
                .await
                .map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
        .await
    }

    async fn compact(&self, conversation_id: &str, before_seq: u64) -> Result<usize> {
        let op = "compact a conversation";
        self.bounded(op, async {
            let client = self.client(op).await?;
            let n = client
                .execute(
                    &format!(
                        "DELETE FROM {} WHERE conversation_id = $1 AND seq < $2",
                        self.table("events")
                    ),
                    &[&conversation_id, &seq_param(before_seq)],
                )
                .await
                .map_err(on(op))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        })
        .await
    }
}
