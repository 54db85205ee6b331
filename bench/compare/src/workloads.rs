//! The workloads, agentmem's side. Each returns metrics (times in microseconds) that
//! `peers.py` reports under the same names for the same work.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agentmemory_core::conversation::{ConversationEvent, ConversationStore};
use agentmemory_core::embed::{LocalEmbedder, AGENTMEM_EMBED_MODEL};
use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::store_support::dense_kernel;
use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
use agentmemory_core::{Message, ShortTermMemory};
use agentmemory_stores::SqliteStore;
use serde_json::{json, Map, Value};

use crate::data::{lines, vectors, vectors_flat, DIM};
use crate::Error;

/// Token budget of the conversation window (chars/4 + 4 per message, on both sides).
const WINDOW_TOKENS: usize = 4_000;
const K: usize = 10;

/// Median and 95th percentile in microseconds (nearest rank on the sorted samples).
fn percentiles(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.95))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Resident memory of this process, in bytes.
fn resident() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Times `op` over `n` calls, stopping early after `budget`; returns (p50, p95).
fn timed(n: usize, budget: Duration, mut op: impl FnMut(usize)) -> (f64, f64, usize) {
    let start = Instant::now();
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        op(i);
        samples.push(micros(t.elapsed()));
        if start.elapsed() > budget && samples.len() >= 5 {
            break;
        }
    }
    let count = samples.len();
    let (p50, p95) = percentiles(samples);
    (p50, p95, count)
}

pub fn run(workload: &str, dir: &Path) -> Result<Map<String, Value>, Error> {
    // As many runtime workers as rayon threads (RAYON_NUM_THREADS, set by compare.py with
    // the peers' thread variables): a one-thread row runs on one thread.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(rayon::current_num_threads())
        .enable_all()
        .build()?;
    let metrics = match workload {
        "window_1k" => window(dir, 1_000),
        "window_10k" => window(dir, 10_000),
        "window_100k" => window(dir, 100_000),
        "sparse" | "sparse_threads" => rt.block_on(sparse(dir)),
        "dense_single" | "dense_threads" => rt.block_on(dense(dir)),
        "facts" => rt.block_on(facts(dir)),
        "sqlite" => rt.block_on(sqlite(dir)),
        "embed_single" | "embed_threads" => rt.block_on(embed(dir)),
        other => Err(format!("unknown workload {other}").into()),
    }?;
    match metrics {
        Value::Object(m) => Ok(m),
        _ => Err("metrics must be an object".into()),
    }
}

/// Per turn: a user and an assistant message enter a history of `history` messages, then
/// the window that fits the token budget is read.
fn window(dir: &Path, history: usize) -> Result<Value, Error> {
    let texts = lines(dir, "messages.txt")?;
    let mut memory = ShortTermMemory::new(WINDOW_TOKENS);
    for (i, t) in texts.iter().take(history).enumerate() {
        memory.add(if i % 2 == 0 {
            Message::user(t.as_str())
        } else {
            Message::assistant(t.as_str())
        });
    }
    let (p50, p95, turns) = timed(500, Duration::from_secs(3), |i| {
        memory.add_user(texts[i % texts.len()].as_str());
        memory.add_assistant(texts[(i + 1) % texts.len()].as_str());
        black_box(memory.messages().len());
    });
    Ok(
        json!({ "turn_p50_us": p50, "turn_p95_us": p95, "turns": turns, "window_messages": memory.messages().len() }),
    )
}

/// Documents upserted per call while building the sparse store, as tantivy's side adds
/// them to its writer one at a time: the inputs of one call (documents, their ids, the
/// ids handed back) are freed and their memory reused by the next, so the growth of
/// resident memory over the build is the store's own (ids, records, keyword index), as
/// with [`DENSE_UPSERT_BATCH`].
const SPARSE_UPSERT_BATCH: usize = 1_000;

async fn sparse(dir: &Path) -> Result<Value, Error> {
    let docs = lines(dir, "docs.txt")?;
    let queries = lines(dir, "queries.txt")?;
    let before = resident();
    let start = Instant::now();
    let store = InMemoryVectorStore::new();
    let n = docs.len();
    let mut docs = docs.into_iter().enumerate().peekable();
    while docs.peek().is_some() {
        let batch = docs
            .by_ref()
            .take(SPARSE_UPSERT_BATCH)
            .map(|(i, d)| Document::new(d).with_id(i.to_string()))
            .collect();
        store.upsert_batch("docs", batch).await?;
    }
    let build = start.elapsed();
    let bytes = resident().saturating_sub(before) as f64 / n as f64;
    let mut samples = Vec::new();
    for q in &queries {
        let t = Instant::now();
        black_box(
            store
                .search("docs", &SearchQuery::new(q.as_str(), K))
                .await?,
        );
        samples.push(micros(t.elapsed()));
    }
    let (p50, p95) = percentiles(samples);
    Ok(json!({
        "search_p50_us": p50, "search_p95_us": p95, "build_us": micros(build),
        "bytes_per_doc": bytes, "threads": rayon::current_num_threads(),
    }))
}

/// Documents upserted per call while building the dense store: the inputs of one call
/// are freed and their memory reused by the next, so the growth of resident memory over
/// the build is the store's own (`f32` rows, the one-byte copy, ids and records).
const DENSE_UPSERT_BATCH: usize = 1_000;

/// Single queries (p50, p95) and one batch of every query; the thread count is set by the
/// caller (`RAYON_NUM_THREADS`, 1 for `dense_single`). Reports the resident memory the
/// store added per vector and the top-10 ids of every query of the batch.
async fn dense(dir: &Path) -> Result<Value, Error> {
    let flat = vectors_flat(dir, "vectors.f32")?;
    let queries: Vec<SearchQuery> = vectors(dir, "dense_queries.f32")?
        .into_iter()
        .map(|v| SearchQuery::new("", K).with_embedding(v))
        .collect();
    let n = flat.len() / DIM;
    let store = InMemoryVectorStore::new();
    let before = resident();
    let start = Instant::now();
    for (b, batch) in flat.chunks(DIM * DENSE_UPSERT_BATCH).enumerate() {
        let docs = batch
            .as_chunks::<DIM>()
            .0
            .iter()
            .enumerate()
            .map(|(j, v)| {
                Document::new("")
                    .with_id((b * DENSE_UPSERT_BATCH + j).to_string())
                    .with_embedding(v.to_vec())
            })
            .collect();
        store.upsert_batch("v", docs).await?;
    }
    let build = start.elapsed();
    let bytes_per_vector = resident().saturating_sub(before) as f64 / n as f64;
    let mut samples = Vec::new();
    for q in queries.iter().take(100) {
        let t = Instant::now();
        black_box(store.search("v", q).await?);
        samples.push(micros(t.elapsed()));
    }
    let (p50, p95) = percentiles(samples);
    let t = Instant::now();
    let answers = store.search_batch("v", &queries).await?;
    let batch = micros(t.elapsed()) / queries.len() as f64;
    // Top-10 of every query: compare.py checks them against numpy's exact scan.
    let top: Vec<Vec<u64>> = answers
        .iter()
        .map(|hits| hits.iter().filter_map(|h| h.id.parse().ok()).collect())
        .collect();
    Ok(json!({
        "single_p50_us": p50, "single_p95_us": p95, "batch_per_query_us": batch,
        "build_us": micros(build), "bytes_per_vector": bytes_per_vector,
        "f32_bytes_per_vector": DIM * 4, "threads": rayon::current_num_threads(),
        "kernel": dense_kernel(), "batch_size": queries.len(), "top10": top,
    }))
}

/// Per turn: one fact is upserted for the user, then the user's facts are searched.
async fn facts(dir: &Path) -> Result<Value, Error> {
    let facts = lines(dir, "facts.txt")?;
    let store = InMemoryUserMemoryStore::new();
    for f in &facts[..1_000] {
        store
            .upsert("u", FactCandidate::new(f.as_str(), 0.9))
            .await?;
    }
    let mut samples = Vec::new();
    for (i, f) in facts[1_000..].iter().enumerate() {
        let query = &facts[(i * 7) % 1_000];
        let t = Instant::now();
        store
            .upsert("u", FactCandidate::new(f.as_str(), 0.9))
            .await?;
        black_box(store.search("u", query, 5).await?);
        samples.push(micros(t.elapsed()));
    }
    let (p50, p95) = percentiles(samples);
    Ok(json!({ "turn_p50_us": p50, "turn_p95_us": p95 }))
}

/// 1,000 turns appended (one transaction each: a user and an assistant message) to a
/// SQLite file, then the whole conversation loaded.
async fn sqlite(dir: &Path) -> Result<Value, Error> {
    let texts = lines(dir, "messages.txt")?;
    let tmp = std::env::temp_dir().join(format!("agentmem-compare-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let store = SqliteStore::open(&tmp).await?;
    let mut samples = Vec::new();
    for i in 0..1_000 {
        let events = vec![
            ConversationEvent::Message {
                message: Message::user(texts[2 * i].as_str()),
            },
            ConversationEvent::Message {
                message: Message::assistant(texts[2 * i + 1].as_str()),
            },
        ];
        let t = Instant::now();
        store.append("c", events).await?;
        samples.push(micros(t.elapsed()));
    }
    let (p50, p95) = percentiles(samples);
    let t = Instant::now();
    let loaded = store.load("c").await?;
    let load = micros(t.elapsed());
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", tmp.display()));
    }
    Ok(
        json!({ "append_p50_us": p50, "append_p95_us": p95, "load_us": load, "events": loaded.len() }),
    )
}

/// Passes over the queries after the warm-up one.
const EMBED_PASSES: usize = 10;

/// One short query at a time through `LocalEmbedder` (the model in `AGENTMEM_EMBED_MODEL`,
/// on as many threads as `RAYON_NUM_THREADS`): p50 and p95 of the async
/// [`Embedder::embed`] call a store makes, and of the same work on the calling thread
/// (`embed_blocking`), over [`EMBED_PASSES`] passes of interleaved calls after one
/// untimed warm-up pass; every query's vector goes to `compare.py`, which checks it
/// against ONNX Runtime's.
async fn embed(dir: &Path) -> Result<Value, Error> {
    let queries = lines(dir, "embed_queries.txt")?;
    let model = std::env::var(AGENTMEM_EMBED_MODEL)
        .ok()
        .filter(|d| !d.is_empty())
        .ok_or("the embed workloads need AGENTMEM_EMBED_MODEL (the model directory)")?;
    let threads = rayon::current_num_threads();
    let embedder = LocalEmbedder::builder(&model).threads(threads).build()?;
    let mut vectors = Vec::with_capacity(queries.len());
    for q in &queries {
        vectors.push(embedder.embed(std::slice::from_ref(q)).await?.remove(0));
    }
    let (mut on_runtime, mut blocking) = (Vec::new(), Vec::new());
    for _ in 0..EMBED_PASSES {
        for q in &queries {
            let t = Instant::now();
            black_box(embedder.embed(std::slice::from_ref(q)).await?);
            on_runtime.push(micros(t.elapsed()));
            let t = Instant::now();
            black_box(embedder.embed_blocking(std::slice::from_ref(q))?);
            blocking.push(micros(t.elapsed()));
        }
    }
    let samples = on_runtime.len();
    let (p50, p95) = percentiles(on_runtime);
    let (blocking_p50, blocking_p95) = percentiles(blocking);
    Ok(json!({
        "query_p50_us": p50, "query_p95_us": p95,
        "blocking_p50_us": blocking_p50, "blocking_p95_us": blocking_p95,
        "samples": samples, "threads": threads, "vectors": vectors,
    }))
}
