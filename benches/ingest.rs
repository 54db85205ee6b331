//! REST ingest through the AMS-compatible `POST /v1/long-term-memory/` route of a
//! server listening on a local port, without an embedder: `AGENTMEM_INGEST_N` memories
//! (default 100,000) of one user, 100 per request, one request after another, each kind
//! (`semantic`: facts, reconciled; `message`, the route's default: documents) into a
//! store of its own. Prints the wall time of each 10% and of the whole.
//!
//! The store is a SQLite file in a temporary directory unless `AGENTMEM_INGEST_STORE_URL`
//! names another (`redis://…`, `postgresql://…`; use a database, schema or prefix of
//! your own: every kind writes to it).
//!
//! ```text
//! cargo bench --features server,sqlite --bench ingest
//! AGENTMEM_INGEST_N=10000 cargo bench --features server,sqlite --bench ingest
//! ```

use std::time::Instant;

use agentmemory::server::{app, Auth, MemoryService, ServerConfig};
use agentmemory::stores::StoreUrl;
use serde_json::{json, Value};

const PER_REQUEST: usize = 100;

const TOPICS: &[&str] = &[
    "jazz",
    "hiking",
    "museums",
    "sushi",
    "chess",
    "cycling",
    "opera",
    "gardening",
    "poetry",
    "climbing",
    "tennis",
    "baking",
    "photography",
    "sailing",
    "astronomy",
    "pottery",
];

fn memory(kind: &str, user: &str, i: usize) -> Value {
    let topic = TOPICS[i % TOPICS.len()];
    json!({
        "id": format!("{kind}-{i:07}"),
        "text": format!("The user talked about {topic} on day {i} and wants to remember note {}", i * 7),
        "user_id": user,
        "memory_type": kind,
    })
}

async fn ingest(url: &StoreUrl, kind: &str, n: usize) {
    let container = url.open().await.expect("open the store");
    let service = MemoryService::from_container(&container).expect("service");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let router = app(service, &ServerConfig::new(Auth::disabled()));
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let client = reqwest::Client::new();
    let endpoint = format!("http://{addr}/v1/long-term-memory/");
    let user = format!("ingest-{}-{kind}", std::process::id());
    let started = Instant::now();
    let mut last = started;
    let step = (n / 10).max(PER_REQUEST);
    for first in (0..n).step_by(PER_REQUEST) {
        let memories: Vec<Value> = (first..(first + PER_REQUEST).min(n))
            .map(|i| memory(kind, &user, i))
            .collect();
        let response = client
            .post(&endpoint)
            .json(&json!({ "memories": memories }))
            .send()
            .await
            .expect("request");
        assert!(
            response.status().is_success(),
            "{}: {}",
            response.status(),
            response.text().await.unwrap_or_default()
        );
        let done = first + memories.len();
        if done.is_multiple_of(step) || done == n {
            let now = Instant::now();
            println!(
                "{kind}: {done:>7} memories in {:>7.1} s (last {} in {:.1} s)",
                (now - started).as_secs_f64(),
                step.min(done),
                (now - last).as_secs_f64()
            );
            last = now;
        }
    }
    println!(
        "{kind}: {n} memories ingested in {:.1} s ({:.0} per second)",
        started.elapsed().as_secs_f64(),
        n as f64 / started.elapsed().as_secs_f64()
    );
    server.abort();
}

fn main() {
    let n: usize = std::env::var("AGENTMEM_INGEST_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    // `cargo bench` passes `--bench`; a filter names the kinds to run.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    for kind in ["semantic", "message"] {
        if !filter.is_empty() && !filter.iter().any(|f| kind.contains(f.as_str())) {
            continue;
        }
        let url: StoreUrl = match std::env::var("AGENTMEM_INGEST_STORE_URL") {
            Ok(url) if !url.is_empty() => url.parse().expect("store url"),
            _ => StoreUrl::Sqlite(dir.path().join(format!("{kind}.db"))),
        };
        rt.block_on(ingest(&url, kind, n));
    }
}
