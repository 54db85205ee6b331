//! `agentmem ingest`: a past conversation, as JSONL on stdin, fed to a user's memory.

use std::io::{self, BufRead};

use agentmemory::{Message, Role};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::Deserialize;

use agentmemory::ingest::IngestConfig;

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
    /// Read by [`parse_time`]: a bad date is reported with the line and the formats
    /// accepted, which serde's own error for `DateTime` does not say.
    #[serde(default)]
    created_at: Option<serde_json::Value>,
}

/// The forms of `created_at` that `parse_time` accepts, as the error names them.
const ACCEPTED_TIMES: &str = "RFC 3339 (2024-05-03T18:00:00Z, 2024-05-03T20:00:00+02:00), \
2024-05-03T18:00:00 or 2024-05-03 18:00:00 (UTC), or 2024-05-03 (midnight UTC)";

/// `created_at`: an RFC 3339 time, a date and time without an offset (UTC), or a date
/// (midnight UTC).
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.with_timezone(&Utc));
    }
    // chrono's own reading also takes a space for the `T` and `+0200` offsets.
    if let Ok(at) = text.parse::<DateTime<chrono::FixedOffset>>() {
        return Some(at.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            return Some(at.and_utc());
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
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
        let at = match parsed.created_at {
            None | Some(serde_json::Value::Null) => now,
            Some(serde_json::Value::String(text)) => parse_time(&text).ok_or_else(|| {
                CliError::Runtime(format!(
                    "stdin line {number}: created_at `{text}` is not a time; accepted: {ACCEPTED_TIMES}"
                ))
            })?,
            Some(other) => {
                return Err(CliError::Runtime(format!(
                    "stdin line {number}: created_at {other} is not a time (a string is \
                     expected); accepted: {ACCEPTED_TIMES}"
                )))
            }
        };
        let message = Message::new(role, parsed.content).at(at);
        // Checked here too, to name the line; `ingest_with` checks again.
        message.check_size(args.max_message_bytes).map_err(|e| {
            CliError::Runtime(format!(
                "stdin line {number}: {e}; nothing was ingested (--max-message-bytes raises the limit)"
            ))
        })?;
        messages.push(message);
    }
    let config = IngestConfig::default().with_max_message_bytes(args.max_message_bytes);
    let report = agentmemory::ingest::ingest_with(
        container,
        &args.user.user,
        args.conversation.as_deref(),
        messages,
        config,
    )
    .await?;
    if args.json.json {
        return output::json(&report);
    }
    for unread in &report.unread_languages {
        // On stderr: the table on stdout stays one table.
        eprintln!(
            "agentmem: {} {} message(s): kept as earlier messages; facts are extracted from {} only",
            unread.messages,
            unread.language,
            unread.extracted_from.join(", ")
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accepted_form_parses_and_others_do_not() {
        let at = |s: &str| parse_time(s).map(|t| t.to_rfc3339());
        let six = Some("2024-05-03T18:00:00+00:00".to_owned());
        assert_eq!(at("2024-05-03T18:00:00Z"), six);
        assert_eq!(at("2024-05-03T20:00:00+02:00"), six);
        assert_eq!(at("2024-05-03 18:00:00Z"), six);
        assert_eq!(at("2024-05-03T18:00:00"), six);
        assert_eq!(at("2024-05-03 18:00:00"), six);
        assert_eq!(at("2024-05-03 18:00"), six);
        assert_eq!(
            at("2024-05-03"),
            Some("2024-05-03T00:00:00+00:00".to_owned())
        );
        for bad in [
            "yesterday",
            "03/05/2024",
            "2024-13-01",
            "2024-05-03T25:00:00Z",
            "",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
    }
}
