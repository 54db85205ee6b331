//! Between rig's messages and agentmem's.
//!
//! A rig message is logged as an agentmem [`Message`] carrying its exact rig form in the
//! `rig` metadata entry, so a load gives back what rig appended (tool-call ids, provider
//! items, reasoning) while token counting, summaries and extraction read the projection.

use agentmemory_core::{Message, Role, ToolCall};
use rig_core::message::{AssistantContent, Message as RigMessage, ToolResultContent, UserContent};

/// The metadata entry holding a message's rig form.
const RIG_FORM: &str = "rig";

/// The agentmem projection of `message`, with its rig form attached.
pub(crate) fn to_agentmem(message: &RigMessage) -> Message {
    let projected = match message {
        RigMessage::System { content } => Message::system(content.as_str()),
        RigMessage::User { content } => user_to_agentmem(content),
        RigMessage::Assistant(turn) => {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for block in &turn.content {
                match block {
                    AssistantContent::Text(t) => text.push(t.text.clone()),
                    AssistantContent::ToolCall(call) => calls.push(ToolCall::new(
                        call.id.to_string(),
                        call.function.name.as_str(),
                        serde_json::Value::Object(call.function.arguments.clone()),
                    )),
                    _ => {}
                }
            }
            Message::assistant_with_tools(text.join("\n"), calls)
        }
    };
    match serde_json::to_value(message) {
        Ok(form) => projected.with_metadata(RIG_FORM, form),
        Err(_) => projected,
    }
}

fn user_to_agentmem(content: &[UserContent]) -> Message {
    let mut text = Vec::new();
    let mut answered = None;
    for part in content {
        match part {
            UserContent::Text(t) => text.push(t.text.clone()),
            UserContent::ToolResult(result) => {
                answered.get_or_insert_with(|| result.call.to_string());
                for item in &result.content {
                    match item {
                        ToolResultContent::Text(t) => text.push(t.text.clone()),
                        ToolResultContent::Json { value } => text.push(value.to_string()),
                        ToolResultContent::Image(_) => text.push("[image]".to_owned()),
                    }
                }
            }
            UserContent::Image(_) => text.push("[image]".to_owned()),
            UserContent::Audio(_) => text.push("[audio]".to_owned()),
            UserContent::Video(_) => text.push("[video]".to_owned()),
            UserContent::Document(_) => text.push("[document]".to_owned()),
        }
    }
    match answered {
        // A tool result: the window keeps it with the call it answers.
        Some(call_id) => Message::tool_result(call_id, text.join("\n")),
        None => Message::user(text.join("\n")),
    }
}

/// The rig form of `message`: exactly what rig appended when it came from rig, else a
/// text rendering (a log written by an agentmem `Session`, for instance).
pub(crate) fn to_rig(message: &Message) -> RigMessage {
    if let Some(form) = message.metadata.get(RIG_FORM) {
        if let Ok(rig) = serde_json::from_value::<RigMessage>(form.clone()) {
            return rig;
        }
    }
    let text = message.text();
    match message.role {
        Role::System => RigMessage::system(text),
        Role::User => RigMessage::user(text),
        Role::Assistant if message.tool_calls.is_empty() => RigMessage::assistant(text),
        Role::Assistant => {
            let calls: Vec<String> = message
                .tool_calls
                .iter()
                .map(|c| format!("[called {} with {}]", c.name, c.arguments))
                .collect();
            RigMessage::assistant(format!("{text}\n{}", calls.join("\n")).trim().to_owned())
        }
        Role::Tool => RigMessage::user(format!("[tool result] {text}")),
    }
}

/// The text a user typed in `message` (tool results and media left out), if any.
pub(crate) fn user_text(message: &RigMessage) -> Option<String> {
    let RigMessage::User { content } = message else {
        return None;
    };
    let text: Vec<&str> = content
        .iter()
        .filter_map(|part| match part {
            UserContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rig_message_survives_the_log() {
        let original = RigMessage::user("I live in Lyon");
        let logged = to_agentmem(&original);
        assert_eq!(logged.role, Role::User);
        assert_eq!(logged.text(), "I live in Lyon");
        let json = serde_json::to_string(&logged).unwrap();
        let back: Message = serde_json::from_str(&json).unwrap();
        assert_eq!(to_rig(&back), original);
    }

    #[test]
    fn a_foreign_message_becomes_text() {
        let m = Message::tool_result("c1", "-3°C");
        assert_eq!(to_rig(&m), RigMessage::user("[tool result] -3°C"));
        assert_eq!(user_text(&RigMessage::user("hi")).as_deref(), Some("hi"));
        assert_eq!(user_text(&RigMessage::assistant("hi")), None);
    }
}
