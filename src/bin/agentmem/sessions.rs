//! `agentmem sessions`: list, show, export, import and delete conversations.

use agentmemory::conversation::{export, import, replay, ConversationExport};
use agentmemory::{ConversationStore, SessionConfig, ShortTermMemory, StoredEvent};
use serde::Serialize;

use crate::cli::SessionsCommand;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// Runs one `sessions` subcommand.
pub async fn run(stores: &Stores, command: SessionsCommand) -> Result<(), CliError> {
    let store = stores.conversations()?;
    let store = store.as_ref();
    match command {
        SessionsCommand::List { user, json } => list(store, user.as_deref(), json.json).await,
        SessionsCommand::Show { id, json } => show(store, &id, json.json).await,
        SessionsCommand::Export { id } => {
            let export = export(store, &id, None).await?;
            output::line(export.to_json())
        }
        SessionsCommand::Import { file, as_id } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| CliError::runtime(&format!("read {}", file.display()), e))?;
            let export = ConversationExport::from_json(&text)?;
            let id = import(store, &export, as_id.as_deref()).await?;
            output::line(format!(
                "imported conversation `{id}` ({} messages)",
                export.messages.len()
            ))
        }
        SessionsCommand::Delete { id } => {
            if store.delete(&id).await? {
                output::line(format!("deleted conversation `{id}`"))
            } else {
                Err(CliError::Runtime(format!("conversation `{id}` not found")))
            }
        }
    }
}

/// One row of `sessions list`.
#[derive(Serialize)]
struct Summary {
    id: String,
    user_id: Option<String>,
    agent: Option<String>,
    /// The messages its log holds (what was said, not what the window keeps).
    messages: usize,
    events: usize,
    /// When the last event was written (RFC 3339).
    last_activity: Option<String>,
}

/// Rebuilds a conversation's memory with the window budget a session uses.
fn rebuild(
    events: &[StoredEvent],
    max_tokens: usize,
) -> (ShortTermMemory, Option<agentmemory::conversation::Owner>) {
    let mut memory = ShortTermMemory::new(max_tokens);
    let owner = replay(events, &mut memory);
    (memory, owner)
}

async fn list(
    store: &dyn ConversationStore,
    user: Option<&str>,
    json: bool,
) -> Result<(), CliError> {
    // Counted by the store, not replayed: a long history lists as fast as a short one.
    let mut rows = Vec::new();
    for summary in store.conversation_summaries().await? {
        if user.is_some_and(|u| summary.owner.as_ref().map(|o| o.user_id.as_str()) != Some(u)) {
            continue;
        }
        rows.push(Summary {
            id: summary.id,
            user_id: summary.owner.as_ref().map(|o| o.user_id.clone()),
            agent: summary.owner.map(|o| o.agent),
            messages: summary.messages as usize,
            events: summary.events as usize,
            last_activity: summary.last_activity.map(|at| at.to_rfc3339()),
        });
    }
    if json {
        return output::json(&rows);
    }
    let dash = || "-".to_owned();
    let table: Vec<Vec<String>> = rows
        .into_iter()
        .map(|s| {
            vec![
                s.id,
                s.user_id.unwrap_or_else(dash),
                s.agent.filter(|a| !a.is_empty()).unwrap_or_else(dash),
                s.messages.to_string(),
                s.last_activity.unwrap_or_else(dash),
            ]
        })
        .collect();
    output::table(
        &["ID", "USER", "AGENT", "MESSAGES", "LAST ACTIVITY"],
        &table,
    )
}

#[derive(Serialize)]
struct Shown<'a> {
    id: &'a str,
    user_id: Option<String>,
    agent: Option<String>,
    summary: Option<&'a str>,
    max_tokens: usize,
    window_tokens: usize,
    token_count: usize,
    messages: Vec<&'a agentmemory::Message>,
}

async fn show(store: &dyn ConversationStore, id: &str, json: bool) -> Result<(), CliError> {
    let events = store.load(id).await?;
    if events.is_empty() {
        return Err(CliError::Runtime(format!("conversation `{id}` not found")));
    }
    let max_tokens = SessionConfig::default().max_tokens;
    let (memory, owner) = rebuild(&events, max_tokens);
    let shown = Shown {
        id,
        user_id: owner.as_ref().map(|o| o.user_id.clone()),
        agent: owner.map(|o| o.agent),
        summary: memory.summary(),
        max_tokens,
        window_tokens: memory.window_tokens(),
        token_count: memory.token_count(),
        messages: memory.messages(),
    };
    if json {
        return output::json(&shown);
    }
    output::line(format!("conversation {id}"))?;
    output::line(format!(
        "user:     {}",
        shown.user_id.as_deref().unwrap_or("-")
    ))?;
    output::line(format!(
        "agent:    {}",
        shown
            .agent
            .as_deref()
            .filter(|a| !a.is_empty())
            .unwrap_or("-")
    ))?;
    output::line(format!(
        "tokens:   {} in the window (summary included) of a {} budget; {} held in all",
        shown.window_tokens, shown.max_tokens, shown.token_count
    ))?;
    output::line(format!("summary:  {}", shown.summary.unwrap_or("(none)")))?;
    output::line(format!("messages: {}", shown.messages.len()))?;
    for message in &shown.messages {
        output::line(format!("  [{}] {}", message.role.as_str(), message.text()))?;
    }
    Ok(())
}
