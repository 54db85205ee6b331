//! `POST /v1/memory/prompt`: a query hydrated with the session's working memory and the
//! relevant long-term memories, as chat messages ready for a model.
//!
//! Message order: the summary of the conversation so far (system), the relevant
//! long-term memories (system), the relevant earlier messages of the user (system), the
//! session's messages, the query (user). Contents are `{"type": "text", "text": …}`
//! objects, as the reference server sends them. The summary, memories and earlier
//! messages are rendered by [`agentmemory_core::render`] under the reference server's
//! headings: escaped, so a stored text cannot open a section of its own.
//!
//! Earlier messages are recalled as a turn recalls them: the user's episodes (every
//! conversation, indexed working-memory messages included) that match the query or fall
//! in the period it names, best first, each with its date — leaving out the messages
//! already in the prompt. They come with long-term memories, so only when the request
//! has a `long_term_search` that does not leave out `message` memories; the user is the
//! session's (its no-user owner when it has none) or the one the search pins.

use agentmemory_core::episodes::{EpisodeQuery, ScoredEpisode};
use agentmemory_core::render;
use serde_json::{json, Value};

use super::error::ApiError;
use super::ids;
use super::service::MemoryService;
use super::wire::{PromptRequest, SearchRequest};
use super::working::SessionScope;

/// At most this many earlier messages are recalled (as many as a turn recalls).
const PROMPT_EPISODES: usize = 3;

/// Builds the prompt messages for `request`.
pub async fn build(service: &MemoryService, request: PromptRequest) -> Result<Value, ApiError> {
    if request.query.trim().is_empty() {
        return Err(ApiError::BadRequest("Query cannot be empty".into()));
    }
    let mut messages = Vec::new();
    let mut request = request;
    if !service.long_term.is_enabled() {
        // LONG_TERM_MEMORY=false: the prompt is working memory and the query only
        request.long_term_search = None;
    }
    if let Some(search) = &request.long_term_search {
        // what the user's earlier PUTs put in (episodes, extracted facts) is recalled
        let user = request
            .session
            .as_ref()
            .and_then(|s| s.user_id.as_deref())
            .or_else(|| search.user_id.as_ref().and_then(|f| f.eq.as_deref()));
        if let Some(user) = user {
            service.caught_up(Some(user)).await;
        }
    }
    if let Some(session) = &request.session {
        let scope = SessionScope {
            namespace: session.namespace.as_deref(),
            user_id: session.user_id.as_deref(),
            model_name: session.model_name.as_deref(),
            context_window_max: session.context_window_max,
            ttl_seconds: None,
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
                let owner =
                    ids::fact_owner(session.namespace.as_deref(), session.user_id.as_deref());
                let shown = memory.memory.messages.iter().map(|m| m.id.clone());
                let episodes =
                    recall_episodes(service, &request.query, &search, &owner, shown).await;
                push_long_term(service, &request.query, search, &mut messages).await?;
                if let Some(text) = render::reference_episodes(&episodes, Some(&session.session_id))
                {
                    messages.push(text_message("system", &text));
                }
            }
            messages.extend(rest);
            messages.push(text_message("user", &request.query));
            return Ok(json!({ "messages": messages }));
        }
    }
    if let Some(search) = request.long_term_search.clone() {
        let owner = match (
            &request.session,
            search.user_id.as_ref().and_then(|u| u.single()),
        ) {
            (Some(session), _) => Some(ids::fact_owner(
                session.namespace.as_deref(),
                session.user_id.as_deref(),
            )),
            (None, Some(user)) => Some(ids::fact_owner(
                search.namespace.as_ref().and_then(|n| n.single()),
                Some(user),
            )),
            (None, None) => None,
        };
        let episodes = match &owner {
            Some(owner) => {
                recall_episodes(service, &request.query, &search, owner, std::iter::empty()).await
            }
            None => Vec::new(),
        };
        push_long_term(service, &request.query, search, &mut messages).await?;
        let conversation = request.session.as_ref().map(|s| s.session_id.as_str());
        if let Some(text) = render::reference_episodes(&episodes, conversation) {
            messages.push(text_message("system", &text));
        }
    }
    messages.push(text_message("user", &request.query));
    Ok(json!({ "messages": messages }))
}

/// The earlier messages of `owner` to recall for `query`, leaving out `shown`; none when
/// `search` leaves out `message` memories. A failing episode store costs the section,
/// never the prompt.
async fn recall_episodes(
    service: &MemoryService,
    query: &str,
    search: &SearchRequest,
    owner: &str,
    shown: impl Iterator<Item = String>,
) -> Vec<ScoredEpisode> {
    if !search
        .memory_type
        .as_ref()
        .is_none_or(|t| t.matches(Some("message")))
    {
        return Vec::new();
    }
    let query = EpisodeQuery::new(query, PROMPT_EPISODES)
        .at(chrono::Utc::now())
        .excluding(shown);
    match service.episodes.search(owner, &query).await {
        Ok(found) => found,
        Err(error) => {
            tracing::warn!(%error, "recalling earlier messages failed; the prompt goes on without them");
            Vec::new()
        }
    }
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
