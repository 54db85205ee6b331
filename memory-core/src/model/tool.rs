//! [`ToolDefinition`]: a tool a model may call, as the request describes it.

use serde::{Deserialize, Serialize};

/// A tool offered to the model: its name, what it does, and the JSON Schema of its
/// arguments. The model answers with [`ToolCall`](crate::ToolCall)s naming it; the
/// caller runs the tool and sends the result back as a
/// [`Message::tool_result`](crate::Message::tool_result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments (an `object` schema).
    #[serde(default = "empty_object_schema")]
    pub parameters: serde_json::Value,
}

fn empty_object_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {}})
}

impl ToolDefinition {
    /// A tool named `name` taking arguments described by the JSON Schema `parameters`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}
