//! From rig's messages to agentmem's, for extraction.
//!
//! The agentmem projection carries the exact rig form in the `rig` metadata entry, so
//! nothing rig said (tool-call ids, provider items, reasoning) is lost to a reader.

use agentmemory_core::{Message, ToolCall};
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
    use agentmemory_core::Role;

    #[test]
    fn a_rig_message_keeps_its_form() {
        let original = RigMessage::user("I live in Lyon");
        let logged = to_agentmem(&original);
        assert_eq!(logged.role, Role::User);
        assert_eq!(logged.text(), "I live in Lyon");
        let form = logged.metadata.get(RIG_FORM).cloned().unwrap();
        assert_eq!(
            serde_json::from_value::<RigMessage>(form).unwrap(),
            original
        );
    }

    #[test]
    fn user_text_is_what_the_user_typed() {
        assert_eq!(user_text(&RigMessage::user("hi")).as_deref(), Some("hi"));
        assert_eq!(user_text(&RigMessage::assistant("hi")), None);
    }
}
