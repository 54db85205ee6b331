//! `agentmem recall`: what a turn would inject for a message.

use std::io::{self, BufRead, Write};

use agentmemory::episodes::ScoredEpisode;
use agentmemory::facts::ScoredFact;
use agentmemory::recall::{recall, RecallRequest, Recalled};
use agentmemory::{HeuristicCounter, UserMemoryStore};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cli::RecallArgs;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// One stdin query.
#[derive(Debug, Deserialize)]
struct Query {
    #[serde(default)]
    id: Value,
    query: String,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
    /// The memory as it was then (`--as-of` for this query).
    #[serde(default)]
    as_of: Option<DateTime<Utc>>,
}

/// A recalled fact as printed.
#[derive(Debug, Serialize)]
struct FactOut<'a> {
    id: &'a str,
    text: &'a str,
    said: DateTime<Utc>,
    relevance: f32,
    score: f32,
}

/// A recalled episode as printed.
#[derive(Debug, Serialize)]
struct EpisodeOut<'a> {
    id: &'a str,
    text: &'a str,
    at: DateTime<Utc>,
    conversation: &'a str,
    role: &'a str,
    score: f32,
    relevance: f32,
    reason: agentmemory::episodes::RecallReason,
    when: &'a [agentmemory::episodes::When],
}

/// One answer, as printed with `--json` and in stdin mode.
#[derive(Debug, Serialize)]
struct Answer<'a> {
    #[serde(skip_serializing_if = "Value::is_null")]
    id: &'a Value,
    query: &'a str,
    facts: Vec<FactOut<'a>>,
    episodes: Vec<EpisodeOut<'a>>,
    block: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn fact_out(f: &ScoredFact) -> FactOut<'_> {
    FactOut {
        id: &f.fact.id,
        text: &f.fact.text,
        said: f.fact.observed_at(),
        relevance: f.relevance,
        score: f.score,
    }
}

fn episode_out(e: &ScoredEpisode) -> EpisodeOut<'_> {
    EpisodeOut {
        id: &e.episode.id,
        text: &e.episode.text,
        at: e.episode.observed_at,
        conversation: &e.episode.conversation_id,
        role: e.episode.role.as_str(),
        score: e.score,
        relevance: e.relevance,
        reason: e.reason,
        when: &e.episode.when,
    }
}

fn answer<'a>(id: &'a Value, query: &'a str, found: &'a Recalled) -> Answer<'a> {
    let error = match (&found.facts_error, &found.episodes_error) {
        (None, None) => None,
        (a, b) => Some(
            a.iter()
                .chain(b.iter())
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        ),
    };
    Answer {
        id,
        query,
        facts: found.facts.iter().map(fact_out).collect(),
        episodes: found.episodes.iter().map(episode_out).collect(),
        block: found.block.as_ref().map(|b| b.text.as_str()),
        error,
    }
}

/// One MESSAGE (table or `--json`), or one JSON line per stdin query.
pub async fn run(stores: &Stores, args: RecallArgs) -> Result<(), CliError> {
    let facts = stores.facts()?;
    let episodes = agentmemory::episodes::resolve(stores.container())?;
    let counter = HeuristicCounter::default();
    let request = |text: &str, at: Option<DateTime<Utc>>, as_of: Option<DateTime<Utc>>| {
        let mut r = RecallRequest::new(args.user.user.as_str(), text)
            .limits(args.facts, args.k)
            .max_tokens(args.max_tokens)
            .min_fact_relevance(args.min_fact_relevance);
        if let Some(at) = at {
            r = r.at(at);
        }
        if let Some(as_of) = as_of.or(args.as_of) {
            r = r.as_of(as_of);
        }
        r
    };
    if args.message.is_empty() {
        let mut out = io::stdout().lock();
        for (i, line) in io::stdin().lock().lines().enumerate() {
            let number = i + 1;
            let line = line.map_err(|e| CliError::runtime(&format!("stdin line {number}"), e))?;
            if line.trim().is_empty() {
                continue;
            }
            let query: Query = serde_json::from_str(&line)
                .map_err(|e| CliError::Runtime(format!("stdin line {number}: {e}")))?;
            let found = recall(
                facts.as_ref() as &dyn UserMemoryStore,
                episodes.as_ref(),
                &request(&query.query, query.at, query.as_of),
                &counter,
            )
            .await;
            output::json_line(&mut out, &answer(&query.id, &query.query, &found))?;
        }
        out.flush()?;
        return Ok(());
    }
    let text = args.message.join(" ");
    let found = recall(
        facts.as_ref(),
        episodes.as_ref(),
        &request(&text, None, None),
        &counter,
    )
    .await;
    if args.json.json {
        return output::json(&answer(&Value::Null, &text, &found));
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    for f in &found.facts {
        rows.push(vec![
            "fact".into(),
            f.fact.observed_at().format("%Y-%m-%d").to_string(),
            "-".into(),
            output::score(f.score),
            f.fact.text.clone(),
        ]);
    }
    for e in &found.episodes {
        rows.push(vec![
            "episode".into(),
            e.episode.observed_at.format("%Y-%m-%d").to_string(),
            e.episode.role.as_str().into(),
            output::score(e.score),
            e.episode.text.clone(),
        ]);
    }
    if rows.is_empty() {
        output::line("nothing relevant is remembered")?;
    } else {
        output::table(&["KIND", "DATE", "ROLE", "SCORE", "TEXT"], &rows)?;
    }
    if let Some(block) = &found.block {
        output::line("")?;
        output::line(&block.text)?;
    }
    if let Some(e) = found.facts_error.as_ref().or(found.episodes_error.as_ref()) {
        return Err(CliError::Runtime(e.clone()));
    }
    Ok(())
}
