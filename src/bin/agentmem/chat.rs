//! `agentmem chat`: a conversation with a remembering agent, one message per stdin line.

use std::borrow::Cow;
use std::io::{self, BufRead, IsTerminal, Write};

use agentmemory::di::tokens;
use agentmemory::{
    remember, Agent, FactChange, KvStore, MemoryEntry, MemoryError, MemoryScope, Session,
    TurnReport,
};

use crate::cli::ChatArgs;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// The KV namespace of the command line's own state.
const KV_NAMESPACE: &str = "cli";

/// The agent: its system prompt comes from `--agent-prompt`; memory is on.
#[remember(extract = true, inject = true, top_k = 5)]
struct CliAgent {
    prompt: String,
}

impl Agent for CliAgent {
    fn system_prompt(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.prompt)
    }

    fn model(&self) -> &str {
        crate::models::CHAT_MODEL
    }

    fn name(&self) -> &str {
        "agentmem-chat"
    }
}

fn last_key(user: &str) -> String {
    format!("last_conversation:{user}")
}

async fn last_conversation(kv: &dyn KvStore, user: &str) -> Result<Option<String>, CliError> {
    Ok(kv
        .get(KV_NAMESPACE, &last_key(user))
        .await?
        .and_then(|entry| entry.content.as_str().map(str::to_owned)))
}

/// Runs the conversation until stdin ends.
pub async fn run(stores: &Stores, args: ChatArgs) -> Result<(), CliError> {
    let container = stores.container();
    container.register_model(crate::models::CHAT_MODEL, crate::models::chat_model()?);
    container.register_extractor(tokens::EXTRACTOR, crate::models::extractor()?);
    let kv = stores.kv()?;

    let conversation = match (&args.conversation, args.new) {
        (Some(id), _) => Some(id.clone()),
        (None, true) => None,
        (None, false) => last_conversation(kv.as_ref(), &args.user).await?,
    };
    let agent = CliAgent {
        prompt: args.agent_prompt.clone(),
    };
    // The budgets of the environment (AGENTMEM_WINDOW_TOKENS, ...); --max-tokens wins.
    let budgets = agentmemory::manager::MemoryConfig::from_env()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let mut builder = Session::builder(agent, container)
        .user(&args.user)
        .config(budgets.session_config());
    if let Some(max_tokens) = args.max_tokens {
        builder = builder.max_tokens(max_tokens as usize);
    }
    if let Some(bytes) = args.max_message_bytes {
        builder = builder.max_message_bytes(bytes);
    }
    if let Some(id) = &conversation {
        builder = builder.conversation(id);
    }
    let mut session = builder.build().await?;
    let resumed = session.memory().len();
    if resumed > 0 {
        output::line(format!(
            "conversation {} (resumed, {resumed} messages)",
            session.conversation_id()
        ))?;
    } else {
        output::line(format!("conversation {} (new)", session.conversation_id()))?;
    }
    remember_conversation(kv.as_ref(), &args.user, session.conversation_id()).await?;

    let interactive = io::stdin().is_terminal();
    let stdin = io::stdin().lock();
    let mut refused = 0;
    let mut told = Vec::new();
    prompt(interactive)?;
    for line in stdin.lines() {
        let line = line.map_err(|e| CliError::runtime("read stdin", e))?;
        let text = line.trim();
        if text.is_empty() {
            prompt(interactive)?;
            continue;
        }
        let reply = match session.send(text).await {
            Ok(reply) => reply,
            // Refused before anything was logged: say so, and take the next message.
            Err(e @ MemoryError::PayloadTooLarge { .. }) => {
                refused += 1;
                eprintln!(
                    "agentmem: {e}; not sent, nothing kept (--max-message-bytes raises the limit)"
                );
                prompt(interactive)?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        output::line(format!("assistant: {}", reply.text()))?;
        print_report(&reply.report, &mut told)?;
        prompt(interactive)?;
    }
    if interactive {
        output::line("")?;
    }
    if refused > 0 {
        return Err(CliError::Runtime(format!(
            "{refused} message(s) over the size limit were refused"
        )));
    }
    Ok(())
}

async fn remember_conversation(kv: &dyn KvStore, user: &str, id: &str) -> Result<(), CliError> {
    let entry = MemoryEntry::new(
        MemoryScope::LongTerm,
        last_key(user),
        serde_json::Value::from(id),
    );
    kv.put(KV_NAMESPACE, entry).await?;
    Ok(())
}

fn prompt(interactive: bool) -> Result<(), CliError> {
    if interactive {
        let mut err = io::stderr().lock();
        write!(err, "you> ")?;
        err.flush()?;
    }
    Ok(())
}

/// Prints what memory did this turn. `told` holds the languages whose notice (facts are
/// read from English only) was printed already: each is said once a run.
fn print_report(report: &TurnReport, told: &mut Vec<String>) -> Result<(), CliError> {
    if report.injected.is_empty() {
        output::line("  memory: no facts injected")?;
    } else {
        let facts: Vec<&str> = report
            .injected
            .iter()
            .map(|f| f.fact.text.as_str())
            .collect();
        output::line(format!(
            "  memory: {} facts injected: {}",
            facts.len(),
            facts.join("; ")
        ))?;
    }
    for change in &report.fact_changes {
        let line = match change {
            FactChange::Added { fact } => format!("  + learned: {}", fact.text),
            FactChange::Reinforced { fact } => format!("  ~ reinforced: {}", fact.text),
            FactChange::Superseded { old, new } => {
                format!("  ! {} (replaces: {})", new.text, old.text)
            }
            FactChange::Contested { fact, candidate } => {
                format!("  ? pending: {} (keeps: {})", candidate.text, fact.text)
            }
            FactChange::Closed { fact } => format!("  - no longer: {}", fact.text),
            FactChange::Deleted { fact } => format!("  x forgot: {}", fact.text),
            FactChange::Ignored { candidate, reason } => {
                format!("  - ignored {}: {reason}", candidate.text)
            }
        };
        output::line(line)?;
    }
    if let Some(error) = &report.extraction_error {
        output::line(format!("  ! extraction failed: {error}"))?;
    }
    if let Some(unread) = &report.unread_language {
        if !told.contains(&unread.code) {
            told.push(unread.code.clone());
            output::line(format!(
                "  note: {} message: kept as an earlier message; facts are extracted from {} only",
                unread.language,
                unread.extracted_from.join(", ")
            ))?;
        }
    }
    if report.summarized > 0 {
        output::line(format!("  summarized {} older messages", report.summarized))?;
    }
    for (what, error) in [
        ("searching facts", &report.inject_error),
        ("summarising", &report.summary_error),
    ] {
        if let Some(error) = error {
            output::line(format!("  ! {what} failed: {error}"))?;
        }
    }
    if let Some(cut) = &report.truncated {
        output::line(format!(
            "  ! your message was cut to fit: {} of {} tokens sent (kept whole in the log)",
            cut.sent_tokens, cut.original_tokens
        ))?;
    }
    Ok(())
}
