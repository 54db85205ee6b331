//! `agentmem ingest`: a past conversation, as JSONL on stdin, fed to a user's memory.

use std::io::{self, BufRead};

use agentmemory::{Message, Role};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::cli::IngestArgs;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// One stdin line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    role: String,
    content: String,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
}

/// Reads every line, then ingests them as one conversation. A malformed line stops the
/// command before anything is written (exit 1, naming the line).
pub async fn run(stores: &Stores, args: IngestArgs) -> Result<(), CliError> {
    let container = stores.container();
    container.register_extractor(
        agentmemory::di::tokens::EXTRACTOR,
        crate::models::extractor()?,
    );
    let mut messages = Vec::new();
    let now = Utc::now();
    for (i, line) in io::stdin().lock().lines().enumerate() {
        let number = i + 1;
        let line = line.map_err(|e| CliError::runtime(&format!("stdin line {number}"), e))?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(&line)
            .map_err(|e| CliError::Runtime(format!("stdin line {number}: {e}")))?;
        let role = match parsed.role.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            other => {
                return Err(CliError::Runtime(format!(
                    "stdin line {number}: unknown role `{other}` (user, assistant or system)"
                )))
            }
        };
        let at = parsed.created_at.unwrap_or(now);
        messages.push(Message::new(role, parsed.content).at(at));
    }
    let report = agentmemory::ingest::ingest(
        container,
        &args.user.user,
        args.conversation.as_deref(),
        messages,
    )
    .await?;
    if args.json.json {
        output::json(&report)
    } else {
        output::table(
            &[
                "CONVERSATION",
                "MESSAGES",
                "EPISODES",
                "FACTS CHANGED",
                "IGNORED",
                "ALREADY APPLIED",
                "COMPLETED",
            ],
            &[vec![
                report.conversation_id.clone(),
                report.messages.to_string(),
                report.episodes.to_string(),
                report.facts_changed.to_string(),
                report.facts_ignored.to_string(),
                report.already_applied.to_string(),
                report.completed.to_string(),
            ]],
        )
    }
}
