//! Messages written by other memory libraries: plain `{role, content}` objects without ids.
//!
//! The Python memory API's `snapshot()` and the ConversationBuffer's `to_dict()` store
//! messages as bare role/content objects. Such a message is given a *stable* id here, so
//! restoring the same data twice yields the same ids: the id's time part is the message's
//! `created_at` when it has one, otherwise the Unix epoch plus the message's position in
//! milliseconds (ids then sort in list order); its random part hashes the position, the
//! role and the content (see [`stable_ulid`]).

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use crate::episodes::stable_ulid;
use crate::error::{MemoryError, Result};
use crate::message::Message;

/// Parses `value`, a JSON array of messages, giving each message without an `id` a stable
/// one. Anything that is not an array of message objects is [`MemoryError::Corrupt`].
pub(crate) fn messages_from_value(value: Value, what: &'static str) -> Result<Vec<Message>> {
    let Value::Array(items) = value else {
        return Err(MemoryError::corrupt(what, "messages are not a list"));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(position, item)| {
            let item = with_stable_id(item, position, what)?;
            serde_json::from_value(item).map_err(|e| MemoryError::corrupt(what, e))
        })
        .collect()
}

/// `item` with an `id` added when it has none.
fn with_stable_id(mut item: Value, position: usize, what: &'static str) -> Result<Value> {
    let Value::Object(fields) = &mut item else {
        return Err(MemoryError::corrupt(
            what,
            format!("message {position} is not an object"),
        ));
    };
    if fields.get("id").is_some_and(|id| !id.is_null()) {
        return Ok(item);
    }
    let at = fields
        .get("created_at")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| {
            let offset = i64::try_from(position).unwrap_or(i64::MAX);
            DateTime::UNIX_EPOCH + Duration::milliseconds(offset)
        });
    let role = fields.get("role").map(Value::to_string).unwrap_or_default();
    let content = fields
        .get("content")
        .map(Value::to_string)
        .unwrap_or_default();
    let position_bytes = (position as u64).to_be_bytes();
    let id = stable_ulid(
        at,
        &[
            &position_bytes,
            role.as_bytes(),
            &[0x1f],
            content.as_bytes(),
        ],
    );
    fields.insert("id".into(), Value::String(id.to_string()));
    Ok(item)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use serde_json::json;

    #[test]
    fn ids_are_generated_stable_and_in_list_order() {
        let list = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "hi"},
        ]);
        let first = messages_from_value(list.clone(), "test").unwrap();
        let second = messages_from_value(list, "test").unwrap();
        let ids: Vec<_> = first.iter().map(|m| m.id).collect();
        assert_eq!(ids, second.iter().map(|m| m.id).collect::<Vec<_>>());
        // The same content at another position is another message.
        assert_ne!(ids[0], ids[2]);
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids);
        assert_eq!(first[1].role, Role::Assistant);
        assert_eq!(first[1].text(), "hello");
    }

    #[test]
    fn an_existing_id_is_kept() {
        let id = "01HZY5V7Q3W5X0B6N1M2K3J4H5";
        let list = json!([{"id": id, "role": "user", "content": "hi"}]);
        let messages = messages_from_value(list, "test").unwrap();
        assert_eq!(messages[0].id.to_string(), id);
    }

    #[test]
    fn created_at_sets_the_id_time() {
        let list = json!([{"role": "user", "content": "hi", "created_at": "2024-05-01T10:00:00Z"}]);
        let messages = messages_from_value(list, "test").unwrap();
        let want = DateTime::parse_from_rfc3339("2024-05-01T10:00:00Z").unwrap();
        assert_eq!(
            messages[0].id.timestamp_ms(),
            u64::try_from(want.timestamp_millis()).unwrap()
        );
    }

    #[test]
    fn malformed_messages_are_typed_errors() {
        for bad in [
            json!({"role": "user"}),
            json!([1, 2]),
            json!([{"role": "wizard", "content": "hi"}]),
            json!([{"content": "no role"}]),
        ] {
            let err = messages_from_value(bad.clone(), "test").unwrap_err();
            assert!(matches!(err, MemoryError::Corrupt { .. }), "{bad}: {err}");
        }
    }
}
