//! `agentmem vectors`: bulk upsert, search (one query or JSONL), delete, stats.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory::message::Metadata;
use agentmemory::{Document, SearchQuery, VectorStore};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::cli::VectorsCommand;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// Runs one `vectors` subcommand.
pub async fn run(stores: &Stores, command: VectorsCommand) -> Result<(), CliError> {
    let arc = stores.vectors()?;
    let store = arc.as_ref();
    match command {
        VectorsCommand::Upsert {
            namespace,
            file,
            batch_size,
        } => {
            upsert(
                store,
                &namespace.namespace,
                file.as_deref(),
                batch_size as usize,
            )
            .await
        }
        VectorsCommand::Search {
            namespace,
            json,
            k,
            query,
            concurrency,
        } => {
            if query.is_empty() {
                search_jsonl(
                    Arc::clone(&arc),
                    &namespace.namespace,
                    k,
                    concurrency.into(),
                )
                .await
            } else {
                search_one(store, &namespace.namespace, &query.join(" "), k, json.json).await
            }
        }
        VectorsCommand::Delete { namespace, ids } => {
            let deleted = store.delete(&namespace.namespace, &ids).await?;
            output::line(format!(
                "deleted {deleted} of {} documents from namespace `{}`",
                ids.len(),
                namespace.namespace
            ))
        }
        VectorsCommand::Stats { namespace, json } => {
            let count = store.len(&namespace.namespace).await?;
            if json.json {
                output::json(&serde_json::json!({
                    "namespace": namespace.namespace,
                    "documents": count,
                }))
            } else {
                output::line(format!(
                    "namespace `{}`: {count} documents",
                    namespace.namespace
                ))
            }
        }
    }
}

/// One JSONL input document.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocLine {
    id: String,
    content: String,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    embedding: Option<Vec<f32>>,
}

impl DocLine {
    fn parse(line: &str) -> Result<Document, String> {
        let doc: DocLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if doc.id.trim().is_empty() {
            return Err("`id` is empty".into());
        }
        if doc.content.trim().is_empty() {
            return Err("`content` is empty".into());
        }
        let mut document = Document::new(doc.content).with_id(doc.id);
        document.metadata = doc.metadata;
        document.embedding = doc.embedding;
        Ok(document)
    }
}

fn progress(total_bytes: Option<u64>) -> ProgressBar {
    let bar = match total_bytes {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg} ({eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    if io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

async fn upsert(
    store: &dyn VectorStore,
    namespace: &str,
    file: Option<&Path>,
    batch_size: usize,
) -> Result<(), CliError> {
    let (reader, total): (Box<dyn BufRead>, Option<u64>) = match file {
        Some(path) => {
            let f = File::open(path)
                .map_err(|e| CliError::runtime(&format!("open {}", path.display()), e))?;
            let len = f.metadata().ok().map(|m| m.len());
            (Box::new(BufReader::with_capacity(1 << 16, f)), len)
        }
        None => (Box::new(io::stdin().lock()), None),
    };
    let source = file.map_or_else(|| "stdin".to_owned(), |p| p.display().to_string());
    let bar = progress(total);
    let started = Instant::now();
    // lines written, and the distinct ids they carried (a repeated id replaces the document)
    let mut written = 0usize;
    let mut distinct: HashSet<String> = HashSet::new();
    let mut batch: Vec<Document> = Vec::with_capacity(batch_size);
    let mut batch_start = 1usize;
    let mut bytes = 0u64;
    for (n, line) in reader.lines().enumerate() {
        let number = n + 1;
        let line = line.map_err(|e| CliError::runtime(&format!("{source} line {number}"), e))?;
        bytes += line.len() as u64 + 1;
        if line.trim().is_empty() {
            continue;
        }
        if batch.is_empty() {
            batch_start = number;
        }
        let document = DocLine::parse(&line).map_err(|reason| {
            bar.finish_and_clear();
            CliError::Runtime(format!(
                "{source} line {number}: {reason}; stopped before writing the batch of lines {batch_start}-{number} \
                 ({written} documents of earlier batches were written to namespace `{namespace}`)"
            ))
        })?;
        batch.push(document);
        if batch.len() >= batch_size {
            written += write_batch(store, namespace, &mut batch, &mut distinct)
                .await
                .inspect_err(|_| bar.finish_and_clear())?;
            bar.set_position(bytes);
            bar.set_message(format!("{} documents", distinct.len()));
        }
    }
    written += write_batch(store, namespace, &mut batch, &mut distinct)
        .await
        .inspect_err(|_| bar.finish_and_clear())?;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let documents = distinct.len();
    let repeated = written - documents;
    let from = if repeated > 0 {
        format!(
            " from {written} lines ({repeated} repeated an earlier line's id and replaced its document)"
        )
    } else {
        String::new()
    };
    eprintln!(
        "upserted {documents} documents into namespace `{namespace}`{from} in {secs:.2}s ({:.0} lines/s)",
        written as f64 / secs.max(1e-9)
    );
    Ok(())
}

/// Writes `batch` (emptying it); how many documents it held. Their ids join `distinct`.
async fn write_batch(
    store: &dyn VectorStore,
    namespace: &str,
    batch: &mut Vec<Document>,
    distinct: &mut HashSet<String>,
) -> Result<usize, CliError> {
    if batch.is_empty() {
        return Ok(0);
    }
    let documents = std::mem::take(batch);
    let ids = store.upsert_batch(namespace, documents).await?;
    let n = ids.len();
    distinct.extend(ids);
    Ok(n)
}

#[derive(Serialize)]
struct Hit<'a> {
    id: &'a str,
    score: f32,
    content: &'a str,
    metadata: &'a Metadata,
}

async fn search_one(
    store: &dyn VectorStore,
    namespace: &str,
    query: &str,
    k: usize,
    json: bool,
) -> Result<(), CliError> {
    let hits = store.search(namespace, &SearchQuery::new(query, k)).await?;
    if json {
        let hits: Vec<Hit<'_>> = hits
            .iter()
            .map(|h| Hit {
                id: &h.id,
                score: h.score,
                content: &h.content,
                metadata: &h.metadata,
            })
            .collect();
        return output::json(&hits);
    }
    let rows: Vec<Vec<String>> = hits
        .iter()
        .map(|h| vec![output::score(h.score), h.id.clone(), h.content.clone()])
        .collect();
    output::table(&["SCORE", "ID", "CONTENT"], &rows)
}

/// One JSONL query.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryLine {
    id: serde_json::Value,
    query: String,
    #[serde(default)]
    k: Option<usize>,
}

#[derive(Serialize)]
struct QueryHit {
    id: String,
    score: f32,
}

#[derive(Serialize)]
struct QueryResult {
    id: serde_json::Value,
    hits: Vec<QueryHit>,
    /// How long the search took (not printed with the hits).
    #[serde(skip)]
    took: Duration,
}

type Pending = tokio::task::JoinHandle<agentmemory::Result<QueryResult>>;

/// Answers JSONL queries from stdin, one result line per query in input order. Up to
/// `concurrency` searches run at once (the SQLite store reads on a pool of connections);
/// results are written in order as soon as the oldest one is ready.
async fn search_jsonl(
    store: Arc<dyn VectorStore>,
    namespace: &str,
    k: usize,
    concurrency: usize,
) -> Result<(), CliError> {
    let stdin = io::stdin().lock();
    let mut out = io::stdout().lock();
    let started = Instant::now();
    let mut took: Vec<Duration> = Vec::new();
    let mut first_done: Option<Instant> = None;
    let mut pending: VecDeque<Pending> = VecDeque::with_capacity(concurrency);
    let mut failure = None;
    for (n, line) in stdin.lines().enumerate() {
        let number = n + 1;
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                failure = Some(CliError::runtime(&format!("stdin line {number}"), e));
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let query: QueryLine = match serde_json::from_str(&line) {
            Ok(query) => query,
            Err(e) => {
                failure = Some(CliError::Runtime(format!("stdin line {number}: {e}")));
                break;
            }
        };
        if pending.len() >= concurrency {
            if let Some(oldest) = pending.pop_front() {
                took.push(write_result(&mut out, oldest).await?);
                first_done.get_or_insert_with(Instant::now);
            }
        }
        let store = Arc::clone(&store);
        let namespace = namespace.to_owned();
        pending.push_back(tokio::spawn(async move {
            let search = SearchQuery::new(query.query, query.k.unwrap_or(k));
            let began = Instant::now();
            let hits = store.search(&namespace, &search).await?;
            Ok(QueryResult {
                took: began.elapsed(),
                id: query.id,
                hits: hits
                    .into_iter()
                    .map(|h| QueryHit {
                        id: h.id,
                        score: h.score,
                    })
                    .collect(),
            })
        }));
    }
    // the queries read before a bad line are still answered
    while let Some(oldest) = pending.pop_front() {
        took.push(write_result(&mut out, oldest).await?);
        first_done.get_or_insert_with(Instant::now);
    }
    if let Some(failure) = failure {
        return Err(failure);
    }
    let secs = started.elapsed().as_secs_f64();
    let answered = took.len();
    eprintln!(
        "answered {answered} queries from namespace `{namespace}` in {secs:.2}s ({:.0} queries/s){}",
        answered as f64 / secs.max(1e-9),
        latency_summary(&took, first_done)
    );
    Ok(())
}

/// `; per query p50 …, p95 …; the first …`: the first search of a process also loads
/// the store's index, so it is reported on its own.
fn latency_summary(took: &[Duration], first_done: Option<Instant>) -> String {
    let Some(first) = took.first() else {
        return String::new();
    };
    // Throughput once the index is open: the answers after the first, over the time
    // since the first was written.
    let after_first = first_done
        .map(|at| at.elapsed().as_secs_f64())
        .filter(|secs| *secs > 0.0 && took.len() > 1)
        .map(|secs| format!(", {:.0} queries/s after it", (took.len() - 1) as f64 / secs))
        .unwrap_or_default();
    let mut sorted = took.to_vec();
    sorted.sort_unstable();
    let at = |q: usize| sorted[(sorted.len() * q / 100).min(sorted.len() - 1)];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "; per query p50 {:.3} ms, p95 {:.3} ms; the first (opens the index) {:.1} ms{after_first}",
        ms(at(50)),
        ms(at(95)),
        ms(*first)
    )
}

/// Writes one result line; how long its search took.
async fn write_result(out: &mut impl io::Write, pending: Pending) -> Result<Duration, CliError> {
    let result = pending
        .await
        .map_err(|e| CliError::runtime("search task", e))??;
    output::json_line(out, &result)?;
    Ok(result.took)
}
