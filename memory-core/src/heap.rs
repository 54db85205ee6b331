//! Estimates of the bytes a value holds on the heap, for caches that are bounded by size
//! (the stores' fact and index caches). Capacities are counted, not lengths; allocator
//! overhead is not, so an estimate is a lower bound of what the allocator hands out
//! (typically within 10–30% of it for the small strings of facts and documents).

use crate::facts::{MemoryFact, Transition};
use crate::message::Metadata;

/// Bytes a B-tree map's entry costs beyond its key and value (node slack and pointers,
/// averaged over half-full nodes).
pub(crate) const BTREE_ENTRY: usize = 16;

pub(crate) fn string(s: &String) -> usize {
    s.capacity()
}

pub(crate) fn opt_string(s: &Option<String>) -> usize {
    s.as_ref().map_or(0, String::capacity)
}

pub(crate) fn strings(v: &Vec<String>) -> usize {
    v.capacity() * std::mem::size_of::<String>() + v.iter().map(String::capacity).sum::<usize>()
}

/// Heap bytes of a JSON value (its strings, arrays and objects).
pub(crate) fn json(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(s) => s.capacity(),
        Value::Array(items) => {
            items.capacity() * std::mem::size_of::<Value>() + items.iter().map(json).sum::<usize>()
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                k.capacity() + std::mem::size_of::<(String, Value)>() + BTREE_ENTRY + json(v)
            })
            .sum(),
    }
}

/// Heap bytes of a document's metadata.
pub(crate) fn metadata(m: &Metadata) -> usize {
    m.iter()
        .map(|(k, v)| {
            k.capacity()
                + std::mem::size_of::<(String, serde_json::Value)>()
                + BTREE_ENTRY
                + json(v)
        })
        .sum()
}

impl MemoryFact {
    /// Bytes this fact holds on the heap (its strings, embedding and lists; capacities,
    /// allocator overhead not counted), for caches bounded by size.
    pub fn heap_bytes(&self) -> usize {
        let transition = match &self.transition {
            None => 0,
            Some(t) => transition(t),
        };
        string(&self.id)
            + string(&self.user_id)
            + string(&self.text)
            + opt_string(&self.subject)
            + opt_string(&self.attribute)
            + opt_string(&self.value)
            + strings(&self.topics)
            + strings(&self.entities)
            + opt_string(&self.superseded_by)
            + self.embedding.as_ref().map_or(0, |e| e.capacity() * 4)
            + self
                .pending_contradictions
                .iter()
                .map(|p| std::mem::size_of_val(p) + p.text.capacity() + opt_string(&p.value))
                .sum::<usize>()
            + strings(&self.stated_in)
            + self.restated_at.capacity() * std::mem::size_of::<chrono::DateTime<chrono::Utc>>()
            + transition
    }
}

fn transition(t: &Transition) -> usize {
    match t {
        Transition::Ends { object } => object.capacity(),
        Transition::Replaces { from } => opt_string(from),
    }
}
