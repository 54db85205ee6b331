//! `agentmem facts`: add, list, search, forget, export and import a user's facts.

use std::io::{self, BufRead, IsTerminal, Read, Write};

use agentmemory::facts::{export_facts, restore_facts, FactsExport};
use agentmemory::{FactChange, MemoryFact, Message, Turn, UserMemoryStore};
use serde::Serialize;

use crate::cli::FactsCommand;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// Runs one `facts` subcommand.
pub async fn run(stores: &Stores, command: FactsCommand) -> Result<(), CliError> {
    let store = stores.facts()?;
    let store = store.as_ref();
    match command {
        FactsCommand::Add { user, json, text } => {
            add(store, &user.user, &text.join(" "), json.json).await
        }
        FactsCommand::List {
            user,
            json,
            history,
            with_embeddings,
            as_of: Some(at),
        } if !history => {
            let json = Json::new(json.json, with_embeddings);
            list_as_of(store, &user.user, at, json).await
        }
        FactsCommand::List {
            user,
            json,
            history,
            with_embeddings,
            ..
        } => {
            let json = Json::new(json.json, with_embeddings);
            list(store, &user.user, history, json).await
        }
        FactsCommand::Search {
            user,
            json,
            k,
            with_embeddings,
            query,
        } => {
            let json = Json::new(json.json, with_embeddings);
            search(store, &user.user, &query.join(" "), k, json).await
        }
        FactsCommand::Forget { user, id, yes } => {
            let episodes = agentmemory::episodes::resolve(stores.container())?;
            forget(store, episodes.as_ref(), &user.user, id.as_deref(), yes).await
        }
        FactsCommand::Export { user } => {
            let export = export_facts(store, &user.user).await?;
            output::line(export.to_json())
        }
        FactsCommand::Import { file, user, json } => {
            let text = match &file {
                Some(path) => std::fs::read_to_string(path)
                    .map_err(|e| CliError::runtime(&format!("read {}", path.display()), e))?,
                None => {
                    let mut text = String::new();
                    io::stdin()
                        .read_to_string(&mut text)
                        .map_err(|e| CliError::runtime("read stdin", e))?;
                    text
                }
            };
            let export = FactsExport::from_json(&text)?;
            let target = user.unwrap_or_else(|| export.user_id.clone());
            let written = restore_facts(store, &export, Some(&target)).await?;
            if json.json {
                return output::json(&serde_json::json!({
                    "user_id": target,
                    "facts": export.facts.len(),
                    "current": export.current_count(),
                    "written": written,
                    "already_present": export.facts.len() - written,
                }));
            }
            output::line(format!(
                "imported {} facts ({} current) for user `{target}`: {written} written, {} already present",
                export.facts.len(),
                export.current_count(),
                export.facts.len() - written,
            ))
        }
    }
}

async fn add(
    store: &dyn UserMemoryStore,
    user: &str,
    text: &str,
    json: bool,
) -> Result<(), CliError> {
    let message = Message::user(text);
    let candidates = crate::models::extractor()?
        .extract(Turn::user(&message))
        .await?;
    let mut changes = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        changes.push(store.upsert(user, candidate).await?);
    }
    if json {
        return output::json(&changes);
    }
    if changes.is_empty() {
        return output::line("no facts found in the text; nothing stored");
    }
    let rows: Vec<Vec<String>> = changes.iter().map(change_row).collect();
    output::table(&["CHANGE", "FACT", "DETAIL"], &rows)
}

/// One row describing a change: kind, fact, detail.
pub fn change_row(change: &FactChange) -> Vec<String> {
    match change {
        FactChange::Added { fact } => vec!["added".into(), fact.text.clone(), fact.id.clone()],
        FactChange::Reinforced { fact } => vec![
            "reinforced".into(),
            fact.text.clone(),
            format!(
                "confidence {:.2}, stated {} times",
                fact.confidence,
                fact.reinforcement_count + 1
            ),
        ],
        FactChange::Superseded { old, new } => vec![
            "superseded".into(),
            new.text.clone(),
            format!("replaces \"{}\"", old.text),
        ],
        FactChange::Contested { fact, candidate } => vec![
            "contested".into(),
            candidate.text.clone(),
            format!("pending: \"{}\" stays current", fact.text),
        ],
        FactChange::Closed { fact } => {
            vec![
                "closed".into(),
                fact.text.clone(),
                "no longer current".into(),
            ]
        }
        FactChange::Deleted { fact } => {
            vec!["deleted".into(), fact.text.clone(), fact.id.clone()]
        }
        FactChange::Ignored { candidate, reason } => {
            vec!["ignored".into(), candidate.text.clone(), reason.clone()]
        }
    }
}

/// `--json` and `--with-embeddings` of `facts list` and `facts search`.
#[derive(Clone, Copy)]
struct Json {
    on: bool,
    embeddings: bool,
}

impl Json {
    fn new(on: bool, embeddings: bool) -> Self {
        Self { on, embeddings }
    }

    /// The fact as printed: its embedding left out unless asked for (384 floats of
    /// noise on a terminal, most of every record's bytes).
    fn fact(self, fact: &mut MemoryFact) {
        if !self.embeddings {
            fact.embedding = None;
        }
    }
}

#[derive(Serialize)]
struct WithHistory {
    fact: MemoryFact,
    history: Vec<MemoryFact>,
}

/// `facts list --as-of`: what held then, with when each stopped holding.
async fn list_as_of(
    store: &dyn UserMemoryStore,
    user: &str,
    at: chrono::DateTime<chrono::Utc>,
    json: Json,
) -> Result<(), CliError> {
    let mut facts = store.facts_as_of(user, at).await?;
    if json.on {
        facts.iter_mut().for_each(|f| json.fact(f));
        return output::json(&facts);
    }
    let day = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d").to_string();
    let rows: Vec<Vec<String>> = facts
        .iter()
        .map(|f| {
            vec![
                f.id.clone(),
                day(f.valid_from()),
                f.valid_to.map_or_else(|| "still holds".to_owned(), day),
                f.text.clone(),
            ]
        })
        .collect();
    output::table(&["ID", "FROM", "UNTIL", "FACT"], &rows)
}

async fn list(
    store: &dyn UserMemoryStore,
    user: &str,
    history: bool,
    json: Json,
) -> Result<(), CliError> {
    let mut facts = store.list(user).await?;
    if !history {
        if json.on {
            facts.iter_mut().for_each(|f| json.fact(f));
            return output::json(&facts);
        }
        let rows: Vec<Vec<String>> = facts.iter().map(fact_row).collect();
        return output::table(&["ID", "CONFIDENCE", "STATED", "FACT"], &rows);
    }
    let mut chains = Vec::with_capacity(facts.len());
    for fact in facts {
        let mut versions = store.history(user, &fact.id).await?;
        // the chain ends with the current fact itself
        versions.retain(|v| v.id != fact.id);
        chains.push(WithHistory {
            fact,
            history: versions,
        });
    }
    if json.on {
        for chain in &mut chains {
            json.fact(&mut chain.fact);
            chain.history.iter_mut().for_each(|f| json.fact(f));
        }
        return output::json(&chains);
    }
    let mut rows = Vec::new();
    for chain in &chains {
        rows.push(fact_row(&chain.fact));
        for old in chain.history.iter().rev() {
            rows.push(vec![
                format!("  {}", old.id),
                output::score(old.confidence),
                (old.reinforcement_count + 1).to_string(),
                format!("  was: {}", old.text),
            ]);
        }
    }
    output::table(&["ID", "CONFIDENCE", "STATED", "FACT"], &rows)
}

fn fact_row(fact: &MemoryFact) -> Vec<String> {
    vec![
        fact.id.clone(),
        output::score(fact.confidence),
        (fact.reinforcement_count + 1).to_string(),
        fact.text.clone(),
    ]
}

async fn search(
    store: &dyn UserMemoryStore,
    user: &str,
    query: &str,
    k: usize,
    json: Json,
) -> Result<(), CliError> {
    let mut hits = store.search(user, query, k).await?;
    if json.on {
        hits.iter_mut().for_each(|h| json.fact(&mut h.fact));
        return output::json(&hits);
    }
    let rows: Vec<Vec<String>> = hits
        .iter()
        .map(|h| {
            vec![
                output::score(h.score),
                output::score(h.relevance),
                h.fact.id.clone(),
                h.fact.text.clone(),
            ]
        })
        .collect();
    output::table(&["SCORE", "RELEVANCE", "ID", "FACT"], &rows)
}

async fn forget(
    store: &dyn UserMemoryStore,
    episodes: &dyn agentmemory::episodes::EpisodeStore,
    user: &str,
    id: Option<&str>,
    yes: bool,
) -> Result<(), CliError> {
    let what = match id {
        Some(id) => format!("fact `{id}` of user `{user}` and its history"),
        None => format!("every fact and episode of user `{user}`, history included"),
    };
    if !yes && !confirm(&what)? {
        return output::line("nothing deleted");
    }
    match id {
        Some(id) => {
            if store.delete(user, id).await? {
                output::line(format!("deleted {what}"))
            } else {
                Err(CliError::Runtime(format!(
                    "fact `{id}` of user `{user}` not found"
                )))
            }
        }
        None => {
            let removed = store.forget_user(user).await?;
            let episodes = episodes.forget(user).await?;
            output::line(format!(
                "forgot user `{user}`: {removed} fact records deleted, {episodes} episodes deleted"
            ))
        }
    }
}

/// Asks on the terminal; refuses (exit 2) when stdin is not one.
fn confirm(what: &str) -> Result<bool, CliError> {
    let stdin = io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::Usage(format!(
            "refusing to delete without confirmation ({what}): stdin is not a terminal; pass --yes"
        )));
    }
    let mut err = io::stderr().lock();
    write!(err, "Delete {what}? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}
