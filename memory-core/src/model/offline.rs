//! [`OfflineModel`]: a chat model that needs no network.

use async_trait::async_trait;

use super::{ChatModel, ChatRequest, Completion};
use crate::error::Result;
use crate::message::{Message, Role};
use crate::render::MEMORY_BLOCK_OPEN;

/// A deterministic stand-in for a real model, so examples and tests run anywhere.
///
/// It does not understand language. It answers by restating the last user message and
/// listing the remembered facts it was given in the memory block of the system prompt,
/// which makes what agentmem injected visible:
///
/// ```
/// # tokio_test::block_on(async {
/// use agentmemory_core::model::{ChatModel, ChatRequest, OfflineModel};
/// use agentmemory_core::Message;
///
/// let request = ChatRequest::new("offline", "Be nice.", vec![Message::user("Any plans?").into()]);
/// let reply = OfflineModel::new().complete(request).await.unwrap();
/// assert_eq!(reply.message.text(), "You said: \"Any plans?\". I know nothing about you yet.");
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineModel;

impl OfflineModel {
    /// The offline model.
    pub fn new() -> Self {
        Self
    }
}

/// The fact lines (`- ...`) of the memory block of a system prompt, unescaped, without
/// their dates and confidences.
fn remembered_facts(system: &str) -> Vec<String> {
    let Some(start) = system.find(MEMORY_BLOCK_OPEN) else {
        return Vec::new();
    };
    system[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("</"))
        .skip_while(|l| *l != "Facts:")
        .skip(1)
        .map_while(|l| l.strip_prefix("- "))
        .map(|l| l.rsplit_once(" (said ").map_or(l, |(text, _)| text))
        .map(|l| {
            l.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .collect()
}

#[async_trait]
impl ChatModel for OfflineModel {
    /// The offline model only restates what it is told.
    fn is_language_model(&self) -> bool {
        false
    }

    async fn complete(&self, request: ChatRequest) -> Result<Completion> {
        let said = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.text())
            .unwrap_or_default();
        let facts = remembered_facts(&request.system);
        let known = if facts.is_empty() {
            "I know nothing about you yet.".to_owned()
        } else {
            format!("What I remember about you: {}.", facts.join("; "))
        };
        Ok(Completion {
            message: Message::assistant(format!("You said: \"{said}\". {known}")),
            usage: None,
        })
    }
}
