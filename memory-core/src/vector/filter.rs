//! Metadata filters for vector search.

use serde::{Deserialize, Serialize};

use crate::message::Metadata;

/// A condition on one metadata key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// The value equals this one.
    Eq(serde_json::Value),
    /// The value is one of these.
    In(Vec<serde_json::Value>),
    /// The value is absent or differs from this one.
    Not(serde_json::Value),
}

impl Condition {
    /// Whether `value` (absent = `None`) satisfies the condition.
    pub fn matches(&self, value: Option<&serde_json::Value>) -> bool {
        match self {
            Condition::Eq(v) => value == Some(v),
            Condition::In(vs) => value.is_some_and(|x| vs.contains(x)),
            Condition::Not(v) => value != Some(v),
        }
    }
}

/// Every condition must hold.
///
/// ```
/// use agentmemory_core::vector::Filter;
/// use serde_json::json;
///
/// let f = Filter::new().eq("lang", "en").is_in("tag", [json!("a"), json!("b")]).not("draft", true);
/// let mut meta = agentmemory_core::Metadata::new();
/// meta.insert("lang".into(), json!("en"));
/// meta.insert("tag".into(), json!("b"));
/// assert!(f.matches(&meta));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filter {
    /// `(key, condition)` pairs, all of which must hold.
    pub conditions: Vec<(String, Condition)>,
}

impl Filter {
    /// A filter that matches everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requires `key == value`.
    pub fn eq(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.conditions
            .push((key.into(), Condition::Eq(value.into())));
        self
    }

    /// Requires `key` to be one of `values`.
    pub fn is_in(
        mut self,
        key: impl Into<String>,
        values: impl IntoIterator<Item = serde_json::Value>,
    ) -> Self {
        self.conditions
            .push((key.into(), Condition::In(values.into_iter().collect())));
        self
    }

    /// Requires `key` to be absent or different from `value`.
    pub fn not(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.conditions
            .push((key.into(), Condition::Not(value.into())));
        self
    }

    /// Whether `metadata` satisfies every condition.
    pub fn matches(&self, metadata: &Metadata) -> bool {
        self.conditions
            .iter()
            .all(|(k, c)| c.matches(metadata.get(k)))
    }
}
