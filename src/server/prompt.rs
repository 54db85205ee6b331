//! `POST /v1/memory/prompt`: a query hydrated with the session's working memory and the
//! relevant long-term memories, as chat messages ready for a model.
//!
//! Message order: the summary of the conversation so far (system), the relevant
//! long-term memories (system), the session's messages, the query (user). Contents are
//! `{"type": "text", "text": …}` objects, as the reference server sends them. The
//! summary and memories are rendered by [`agentmemory_core::render`] under the reference
//! server's headings: escaped, so a stored text cannot open a section of its own.

use agentmemory_core::render;
use serde_json::{json, Value};

use super::error::ApiError;
use super::service::MemoryService;
use super::wire::{PromptRequest, SearchRequest};
use super::working::SessionScope;

/// Builds the prompt messages for `request`.
pub async fn build(service: &MemoryService, request: PromptRequest) -> Result<Value, ApiError> {
    if request.query.trim().is_empty() {
        return Err(ApiError::BadRequest("Query cannot be empty".into()));
    }
    let mut messages = Vec::new();
    if let Some(session) = &request.session {
        let scope = SessionScope {
            namespace: session.namespace.as_deref(),
            user_id: session.user_id.as_deref(),
            model_name: session.model_name.as_deref(),
            context_window_max: session.context_window_max,
        };
        if let Some(memory) = service.working.get(&session.session_id, &scope).await? {
            if let Some(context) = memory.memory.context.as_deref().filter(|c| !c.is_empty()) {
                messages.push(text_message("system", &render::reference_summary(context)));
            }
            let mut rest = Vec::with_capacity(memory.memory.messages.len());
            for m in &memory.memory.messages {
                rest.push(text_message(&m.role, &m.content));
            }
            if let Some(search) = request.long_term_search.clone() {
                push_long_term(service, &request.query, search, &mut messages).await?;
            }
            messages.extend(rest);
            messages.push(text_message("user", &request.query));
            return Ok(json!({ "messages": messages }));
        }
    }
    if let Some(search) = request.long_term_search.clone() {
        push_long_term(service, &request.query, search, &mut messages).await?;
    }
    messages.push(text_message("user", &request.query));
    Ok(json!({ "messages": messages }))
}

async fn push_long_term(
    service: &MemoryService,
    query: &str,
    mut search: SearchRequest,
    messages: &mut Vec<Value>,
) -> Result<(), ApiError> {
    if search.text.trim().is_empty() {
        search.text = query.to_owned();
    }
    let found = service.long_term.search(&search).await?;
    if found.memories.is_empty() {
        return Ok(());
    }
    if let Some(text) =
        render::reference_memories(found.memories.iter().map(|h| h.memory.text.as_str()))
    {
        messages.push(text_message("system", &text));
    }
    Ok(())
}

fn text_message(role: &str, text: &str) -> Value {
    json!({"role": role, "content": {"type": "text", "text": text}})
}
