//! Reading a [`ConversationEvent`] without buffering it first.
//!
//! An event is stored as `{"type": "message", "message": {...}}`. The derived
//! deserializer of an internally tagged enum cannot know where the tag is, so it copies
//! the whole event into an intermediate tree, finds the tag, then decodes the tree: on a
//! replay of thousands of events that copy is a fifth of the time. Every event this crate
//! writes has `type` first, so when the first key is `type` the rest of the object is
//! decoded straight into the variant's fields; an object with its tag elsewhere (edited
//! by hand, or written by another tool) takes the buffered path and reads the same.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::ConversationEvent;
use crate::buffer::ShortTermSnapshot;
use crate::facts::FactChange;
use crate::message::Message;

/// The `type` tag.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Started,
    Message,
    SummaryUpdated,
    FactsChanged,
    Snapshot,
    Unanswered,
    GraphChanged,
    FactsApplied,
}

/// The fields of each variant, read from whatever follows (or surrounds) the tag.
mod body {
    use super::*;

    #[derive(Deserialize)]
    pub(super) struct Started {
        pub user_id: String,
        pub agent: String,
    }

    #[derive(Deserialize)]
    pub(super) struct Message {
        pub message: super::Message,
    }

    #[derive(Deserialize)]
    pub(super) struct SummaryUpdated {
        pub summary: String,
        pub keep_recent: usize,
    }

    #[derive(Deserialize)]
    pub(super) struct FactsChanged {
        pub changes: Vec<FactChange>,
    }

    #[derive(Deserialize)]
    pub(super) struct Snapshot {
        pub snapshot: ShortTermSnapshot,
    }

    #[derive(Deserialize)]
    pub(super) struct Unanswered {
        pub message_id: ulid::Ulid,
    }

    #[derive(Deserialize)]
    pub(super) struct FactsApplied {
        pub message_ids: Vec<ulid::Ulid>,
    }

    #[derive(Deserialize)]
    pub(super) struct GraphChanged {
        pub version: u32,
        pub change: serde_json::Value,
    }
}

/// The variant `kind` with its fields read from `fields`.
fn variant<'de, D: Deserializer<'de>>(
    kind: Kind,
    fields: D,
) -> Result<ConversationEvent, D::Error> {
    Ok(match kind {
        Kind::Started => {
            let body::Started { user_id, agent } = Deserialize::deserialize(fields)?;
            ConversationEvent::Started { user_id, agent }
        }
        Kind::Message => {
            let body::Message { message } = Deserialize::deserialize(fields)?;
            ConversationEvent::Message { message }
        }
        Kind::SummaryUpdated => {
            let body::SummaryUpdated {
                summary,
                keep_recent,
            } = Deserialize::deserialize(fields)?;
            ConversationEvent::SummaryUpdated {
                summary,
                keep_recent,
            }
        }
        Kind::FactsChanged => {
            let body::FactsChanged { changes } = Deserialize::deserialize(fields)?;
            ConversationEvent::FactsChanged { changes }
        }
        Kind::Snapshot => {
            let body::Snapshot { snapshot } = Deserialize::deserialize(fields)?;
            ConversationEvent::Snapshot { snapshot }
        }
        Kind::Unanswered => {
            let body::Unanswered { message_id } = Deserialize::deserialize(fields)?;
            ConversationEvent::Unanswered { message_id }
        }
        Kind::GraphChanged => {
            let body::GraphChanged { version, change } = Deserialize::deserialize(fields)?;
            ConversationEvent::GraphChanged { version, change }
        }
        Kind::FactsApplied => {
            let body::FactsApplied { message_ids } = Deserialize::deserialize(fields)?;
            ConversationEvent::FactsApplied { message_ids }
        }
    })
}

impl<'de> Deserialize<'de> for ConversationEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = ConversationEvent;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a conversation event: an object with a `type` field")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let first = map.next_key::<FirstKey>()?;
        let mut object = serde_json::Map::new();
        match first {
            None => return Err(de::Error::missing_field("type")),
            Some(FirstKey::Type) => {
                let kind: Kind = map.next_value()?;
                return variant(kind, MapAccessDeserializer::new(map));
            }
            Some(FirstKey::Other(key)) => {
                object.insert(key, map.next_value()?);
            }
        }
        while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
            object.insert(key, value);
        }
        let tag = object
            .remove("type")
            .ok_or_else(|| de::Error::missing_field("type"))?;
        let kind = Kind::deserialize(tag).map_err(de::Error::custom)?;
        variant(kind, serde_json::Value::Object(object)).map_err(de::Error::custom)
    }
}

/// The first key of an event object: the tag, or any other field.
enum FirstKey {
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for FirstKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = FirstKey;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<FirstKey, E> {
                Ok(match key {
                    "type" => FirstKey::Type,
                    other => FirstKey::Other(other.to_owned()),
                })
            }
        }

        d.deserialize_identifier(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{FactCandidate, MemoryFact};
    use serde_json::json;

    fn every_variant() -> Vec<ConversationEvent> {
        let mut memory = crate::buffer::ShortTermMemory::new(100);
        memory.add_user("hello");
        memory.set_summary("User: said hello.");
        let fact = MemoryFact::from_candidate(
            "u",
            FactCandidate::new("likes tea", 0.8),
            chrono::Utc::now(),
        );
        vec![
            ConversationEvent::Started {
                user_id: "u".into(),
                agent: "a".into(),
            },
            ConversationEvent::Message {
                message: Message::user("hi"),
            },
            ConversationEvent::SummaryUpdated {
                summary: "s".into(),
                keep_recent: 3,
            },
            ConversationEvent::FactsChanged {
                changes: vec![FactChange::Added { fact }],
            },
            ConversationEvent::Snapshot {
                snapshot: memory.snapshot(),
            },
            ConversationEvent::Unanswered {
                message_id: ulid::Ulid::new(),
            },
            ConversationEvent::FactsApplied {
                message_ids: vec![ulid::Ulid::new()],
            },
            ConversationEvent::GraphChanged {
                version: 1,
                change: serde_json::json!({"op": "delete_entities", "names": ["Alice"]}),
            },
        ]
    }

    #[test]
    fn every_variant_round_trips_with_the_tag_first_or_last() {
        for event in every_variant() {
            let written = serde_json::to_string(&event).unwrap();
            assert!(written.starts_with("{\"type\":"), "{written}");
            assert_eq!(
                serde_json::from_str::<ConversationEvent>(&written).unwrap(),
                event
            );

            // The same object with the tag moved to the end.
            let mut value = serde_json::to_value(&event).unwrap();
            let tag = value.as_object_mut().unwrap().remove("type").unwrap();
            let mut moved = serde_json::to_string(&value).unwrap();
            moved.pop();
            let moved = format!("{moved},\"type\":{tag}}}");
            assert_eq!(
                serde_json::from_str::<ConversationEvent>(&moved).unwrap(),
                event
            );
        }
    }

    #[test]
    fn bad_events_are_errors() {
        for bad in [
            json!({}),
            json!({"message": {"role": "user", "content": "hi"}}),
            json!({"type": "telepathy"}),
            json!({"type": "message"}),
            json!({"type": "summary_updated", "summary": "s", "keep_recent": "three"}),
            json!(["message"]),
        ] {
            let err = serde_json::from_value::<ConversationEvent>(bad.clone());
            assert!(err.is_err(), "{bad} was accepted");
            let err = serde_json::from_str::<ConversationEvent>(&bad.to_string());
            assert!(err.is_err(), "{bad} was accepted from text");
        }
    }

    #[test]
    fn unknown_fields_are_ignored_as_before() {
        let event: ConversationEvent = serde_json::from_value(json!({
            "type": "summary_updated", "summary": "s", "keep_recent": 2, "extra": [1, 2]
        }))
        .unwrap();
        assert_eq!(
            event,
            ConversationEvent::SummaryUpdated {
                summary: "s".into(),
                keep_recent: 2
            }
        );
    }
}
