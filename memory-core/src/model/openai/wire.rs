//! The chat-completions wire format, and its mapping to and from agentmem's messages.

use serde::{Deserialize, Serialize};

use crate::message::{Content, ContentBlock, Message, Role, ToolCall};
use crate::model::{ChatRequest, Usage};

/// The body of `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub(super) struct ChatBody {
    pub(super) model: String,
    pub(super) messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<WireTool>,
}

/// A tool offered to the model: `{"type": "function", "function": {name, description, parameters}}`.
#[derive(Debug, Serialize)]
pub(super) struct WireTool {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolFunction,
}

#[derive(Debug, Serialize)]
struct WireToolFunction {
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    parameters: serde_json::Value,
}

/// One message on the wire.
#[derive(Debug, Serialize)]
pub(super) struct WireMessage {
    role: &'static str,
    /// `null` only for an assistant message that carries nothing but tool calls.
    content: Option<WireContent>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
}

/// A string, or content parts (user messages with images).
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireContent {
    Text(String),
    Parts(Vec<WirePart>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct WireToolCall {
    id: String,
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: WireFunction,
}

#[derive(Debug, Serialize, Deserialize)]
struct WireFunction {
    name: String,
    /// The arguments as a JSON *string*, as OpenAI sends and expects them.
    #[serde(default)]
    arguments: String,
}

fn function_type() -> String {
    "function".to_owned()
}

impl ChatBody {
    /// The body for `request`, sent as model `model`: the system prompt first, then the window.
    pub(super) fn new(model: String, request: ChatRequest) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(WireMessage {
                role: "system",
                content: Some(WireContent::Text(request.system)),
                tool_calls: Vec::new(),
                tool_call_id: None,
            });
        }
        messages.extend(
            request
                .messages
                .iter()
                .map(|m| WireMessage::from_message(m)),
        );
        Self {
            model,
            messages,
            temperature: request.temperature,
            max_tokens: request.max_tokens,
            tools: request
                .tools
                .into_iter()
                .map(|t| WireTool {
                    kind: "function",
                    function: WireToolFunction {
                        name: t.name,
                        description: t.description,
                        parameters: t.parameters,
                    },
                })
                .collect(),
        }
    }
}

impl WireMessage {
    fn from_message(message: &Message) -> Self {
        let tool_calls: Vec<WireToolCall> = message
            .tool_calls
            .iter()
            .map(|call| WireToolCall {
                id: call.id.clone(),
                kind: function_type(),
                function: WireFunction {
                    name: call.name.clone(),
                    arguments: arguments_string(&call.arguments),
                },
            })
            .collect();
        let content = match message.role {
            // Only user messages may carry images; others are sent as their text.
            Role::User => Some(user_content(&message.content)),
            Role::Assistant if !tool_calls.is_empty() && message.text().is_empty() => None,
            _ => Some(WireContent::Text(message.text())),
        };
        Self {
            role: message.role.as_str(),
            content,
            tool_calls,
            tool_call_id: message.tool_call_id.clone(),
        }
    }
}

/// `{}` for absent arguments, else the compact JSON text.
fn arguments_string(arguments: &serde_json::Value) -> String {
    match arguments {
        serde_json::Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

fn user_content(content: &Content) -> WireContent {
    match content {
        Content::Text(t) => WireContent::Text(t.clone()),
        Content::Blocks(blocks) => WireContent::Parts(
            blocks
                .iter()
                .map(|block| match block {
                    ContentBlock::Text { text } => WirePart::Text { text: text.clone() },
                    ContentBlock::Json { value } => WirePart::Text {
                        text: value.to_string(),
                    },
                    ContentBlock::Image { url, .. } => WirePart::ImageUrl {
                        image_url: ImageUrl { url: url.clone() },
                    },
                })
                .collect(),
        ),
    }
}

/// The answer of `POST /chat/completions`.
#[derive(Debug, Deserialize)]
pub(super) struct ChatResponse {
    #[serde(default)]
    pub(super) choices: Vec<Choice>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Choice {
    pub(super) message: ResponseMessage,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResponseMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        }
    }
}

impl ResponseMessage {
    /// The assistant message. Tool-call arguments that are not valid JSON are kept as a
    /// JSON string rather than dropped.
    pub(super) fn into_message(self) -> Message {
        let calls = self
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|call| {
                let raw = call.function.arguments;
                let arguments = if raw.trim().is_empty() {
                    serde_json::Value::Object(Default::default())
                } else {
                    serde_json::from_str(&raw).unwrap_or(serde_json::Value::String(raw))
                };
                ToolCall::new(call.id, call.function.name, arguments)
            })
            .collect();
        Message::assistant_with_tools(self.content.unwrap_or_default(), calls)
    }
}
