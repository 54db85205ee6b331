//! [`ConversationStore`] on SQLite: one row per event, seqs assigned inside the write
//! transaction from the conversation's `last_seq`.

use agentmemory_core::conversation::{AppendIf, ConversationSummary, Owner};
use agentmemory_core::{ConversationEvent, ConversationStore, MemoryError, Result, StoredEvent};
use async_trait::async_trait;
use chrono::Utc;
use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::{body, from_micros, micros, on, SqliteStore};

fn seq_param(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

fn check_id(conversation_id: &str) -> Result<()> {
    if conversation_id.is_empty() {
        return Err(MemoryError::invalid("conversation id", "must not be empty"));
    }
    Ok(())
}

/// A message id (when the event is a message) and the encoded event.
type Body = (Option<String>, String);

/// The bodies of a batch without the messages repeated inside it.
fn dedup_batch(bodies: Vec<Body>) -> Vec<Body> {
    let mut seen = std::collections::HashSet::new();
    bodies
        .into_iter()
        .filter(|(id, _)| id.as_ref().is_none_or(|id| seen.insert(id.clone())))
        .collect()
}

/// Each event's message id (when it carries a message) and encoded body, serialised
/// before a writer is taken.
fn encoded(events: &[ConversationEvent]) -> Result<Vec<Body>> {
    let ids = agentmemory_core::store_support::message_ids(events);
    events
        .iter()
        .zip(ids)
        .map(|(e, id)| {
            Ok((
                id.map(|i| i.to_string()),
                body::encode(e, "conversation event")?,
            ))
        })
        .collect()
}

/// Inserts `bodies` as the events after `seq` of conversation `id`, all at `at_us`; the
/// last sequence number written.
///
/// With `skip_known`, a message whose id the conversation already logged is skipped (a
/// retried append never logs it twice): one probe of the `events_by_message` index per
/// message, in the same pass as the inserts. (One `INSERT … SELECT … WHERE NOT EXISTS`
/// per event measured slower: SQLite stages a select from the table it inserts into in
/// a temporary table first.)
fn insert_events(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    mut seq: i64,
    at_us: i64,
    bodies: &[Body],
    skip_known: bool,
) -> rusqlite::Result<i64> {
    let mut known = skip_known
        .then(|| {
            tx.prepare_cached(
                "SELECT 1 FROM events WHERE conversation_id = ?1 AND message_id = ?2 LIMIT 1",
            )
        })
        .transpose()?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO events (conversation_id, seq, at_us, body, message_id) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (message_id, body) in bodies {
        if let (Some(known), Some(message_id)) = (known.as_mut(), message_id) {
            if known.exists(params![id, message_id])? {
                continue;
            }
        }
        seq += 1;
        insert.execute(params![id, seq, at_us, body, message_id])?;
    }
    Ok(seq)
}

impl SqliteStore {
    /// `append`, or `append_if` when `expected` is set: checked inside the write
    /// transaction.
    async fn append_checked(
        &self,
        conversation_id: &str,
        expected: Option<u64>,
        events: Vec<ConversationEvent>,
    ) -> Result<AppendIf> {
        check_id(conversation_id)?;
        let op = "append events";
        // Serialise before taking the writer; message ids are checked inside the
        // transaction, so a retried append never logs a message twice.
        let bodies = dedup_batch(encoded(&events)?);
        let id = conversation_id.to_owned();
        // In place when the lock is free: the transaction starts with BEGIN IMMEDIATE,
        // so an attempt that found the lock held changed nothing and can run again.
        self.write_in_place(op, move |conn, label| {
            let err = on(label, op);
            // IMMEDIATE takes the write lock first, so another process's append waits
            // and then sees our last_seq.
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(&err)?;
            let last: Option<i64> = tx
                .prepare_cached("SELECT last_seq FROM conversations WHERE id = ?1")
                .and_then(|mut s| s.query_row([&id], |r| r.get(0)).optional())
                .map_err(&err)?;
            let before = last.unwrap_or(0);
            let current = u64::try_from(before).unwrap_or(0);
            if expected.is_some_and(|e| e != current) {
                return Ok(AppendIf::Conflict { last_seq: current });
            }
            let now = micros(Utc::now());
            if last.is_none() {
                tx.prepare_cached(
                    "INSERT INTO conversations (id, last_seq, created_us) VALUES (?1, 0, ?2)",
                )
                .and_then(|mut s| s.execute(params![id, now]))
                .map_err(&err)?;
            }
            // A new conversation holds no message yet: nothing to check.
            let seq =
                insert_events(&tx, &id, before, now, &bodies, last.is_some()).map_err(&err)?;
            if seq == before {
                // Every message was already logged: nothing changed (and a conversation
                // that did not exist still does not: the transaction rolls back on drop).
                return Ok(AppendIf::Appended { last_seq: current });
            }
            tx.prepare_cached("UPDATE conversations SET last_seq = ?2 WHERE id = ?1")
                .and_then(|mut s| s.execute(params![id, seq]))
                .map_err(&err)?;
            tx.commit().map_err(&err)?;
            Ok(AppendIf::Appended {
                last_seq: u64::try_from(seq).unwrap_or(0),
            })
        })
        .await
    }
}

#[async_trait]
impl ConversationStore for SqliteStore {
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
        let id = conversation_id.to_owned();
        self.read(op, move |conn, label| {
            let err = on(label, op);
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, at_us, body FROM events \
                     WHERE conversation_id = ?1 AND seq > ?2 ORDER BY seq",
                )
                .map_err(&err)?;
            let mut rows = stmt.query(params![id, seq_param(after)]).map_err(&err)?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().map_err(&err)? {
                let seq: i64 = row.get(0).map_err(&err)?;
                let at: i64 = row.get(1).map_err(&err)?;
                let text = row
                    .get_ref(2)
                    .and_then(|v| v.as_str().map_err(rusqlite::Error::from))
                    .map_err(&err)?;
                let event = body::decode(text, || format!("event {seq} of `{id}` in {label}"))?;
                out.push(StoredEvent {
                    seq: u64::try_from(seq).unwrap_or(0),
                    at: from_micros(at),
                    event,
                });
            }
            Ok(out)
        })
        .await
    }

    async fn list_conversations(&self) -> Result<Vec<String>> {
        let op = "list conversations";
        self.read(op, move |conn, label| {
            let err = on(label, op);
            let mut stmt = conn
                .prepare_cached("SELECT id FROM conversations ORDER BY id")
                .map_err(&err)?;
            let ids = stmt
                .query_map([], |r| r.get(0))
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
                .map_err(&err)?;
            Ok(ids)
        })
        .await
    }

    /// Two grouped scans of `events` (counts from the `message_id` column, owners from the
    /// few non-message events) instead of decoding every event of every log.
    async fn conversation_summaries(&self) -> Result<Vec<ConversationSummary>> {
        let op = "summarise conversations";
        self.read(op, move |conn, label| {
            let err = on(label, op);
            let mut owners: std::collections::HashMap<String, Owner> =
                std::collections::HashMap::new();
            let mut stmt = conn
                .prepare_cached(
                    "SELECT conversation_id, json_extract(body, '$.data.user_id'),                             json_extract(body, '$.data.agent'), max(seq)                      FROM events                      WHERE message_id IS NULL AND json_extract(body, '$.data.type') = 'started'                      GROUP BY conversation_id",
                )
                .map_err(&err)?;
            let mut rows = stmt.query([]).map_err(&err)?;
            while let Some(row) = rows.next().map_err(&err)? {
                let id: String = row.get(0).map_err(&err)?;
                let user_id: Option<String> = row.get(1).map_err(&err)?;
                let agent: Option<String> = row.get(2).map_err(&err)?;
                if let Some(user_id) = user_id {
                    owners.insert(
                        id,
                        Owner {
                            user_id,
                            agent: agent.unwrap_or_default(),
                        },
                    );
                }
            }
            let mut stmt = conn
                .prepare_cached(
                    "SELECT conversation_id, count(*), count(message_id), max(seq), at_us                      FROM events GROUP BY conversation_id ORDER BY conversation_id",
                )
                .map_err(&err)?;
            let mut rows = stmt.query([]).map_err(&err)?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().map_err(&err)? {
                let id: String = row.get(0).map_err(&err)?;
                let events: i64 = row.get(1).map_err(&err)?;
                let messages: i64 = row.get(2).map_err(&err)?;
                let at: i64 = row.get(4).map_err(&err)?;
                let owner = owners.remove(&id);
                out.push(ConversationSummary::new(
                    id,
                    owner,
                    u64::try_from(events).unwrap_or(0),
                    u64::try_from(messages).unwrap_or(0),
                    Some(from_micros(at)),
                ));
            }
            Ok(out)
        })
        .await
    }

    async fn delete(&self, conversation_id: &str) -> Result<bool> {
        let op = "delete a conversation";
        let id = conversation_id.to_owned();
        self.write(op, move |conn, label| {
            // Events go with it (ON DELETE CASCADE).
            let n = conn
                .prepare_cached("DELETE FROM conversations WHERE id = ?1")
                .and_then(|mut s| s.execute([&id]))
                .map_err(on(label, op))?;
            Ok(n > 0)
        })
        .await
    }

    async fn save(&self, conversation_id: &str, events: Vec<ConversationEvent>) -> Result<u64> {
        check_id(conversation_id)?;
        let op = "replace a conversation";
        let bodies = encoded(&events)?;
        let bodies = dedup_batch(bodies);
        let id = conversation_id.to_owned();
        self.write(op, move |conn, label| {
            let err = on(label, op);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(&err)?;
            // Events go with the conversation (ON DELETE CASCADE).
            tx.prepare_cached("DELETE FROM conversations WHERE id = ?1")
                .and_then(|mut s| s.execute([&id]))
                .map_err(&err)?;
            let mut seq: i64 = 0;
            if !bodies.is_empty() {
                let now = micros(Utc::now());
                tx.prepare_cached(
                    "INSERT INTO conversations (id, last_seq, created_us) VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        id,
                        i64::try_from(bodies.len()).unwrap_or(i64::MAX),
                        now
                    ])
                })
                .map_err(&err)?;
                seq = insert_events(&tx, &id, 0, now, &bodies, false).map_err(&err)?;
            }
            tx.commit().map_err(&err)?;
            Ok(u64::try_from(seq).unwrap_or(0))
        })
        .await
    }

    async fn clear_conversations(&self) -> Result<usize> {
        let op = "delete every conversation";
        self.write(op, move |conn, label| {
            // Events go with their conversations (ON DELETE CASCADE).
            let n = conn
                .prepare_cached("DELETE FROM conversations")
                .and_then(|mut s| s.execute([]))
                .map_err(on(label, op))?;
            Ok(n)
        })
        .await
    }

    async fn compact(&self, conversation_id: &str, before_seq: u64) -> Result<usize> {
        let op = "compact a conversation";
        let id = conversation_id.to_owned();
        self.write(op, move |conn, label| {
            let n = conn
                .prepare_cached("DELETE FROM events WHERE conversation_id = ?1 AND seq < ?2")
                .and_then(|mut s| s.execute(params![id, seq_param(before_seq)]))
                .map_err(on(label, op))?;
            Ok(n)
        })
        .await
    }
}
