//! A real `agentmem serve` / `agentmem mcp` driven by the published Python clients
//! (`agent-memory-client`, `mcp`), and two server instances sharing one Redis / PostgreSQL.
//!
//! The Python clients live in the virtual environment `.ci/server.sh` creates
//! (`AGENTMEM_SERVER_VENV`, default `~/.cache/agentmem-server-venv`). With `CI=true` a
//! missing venv or service fails; otherwise those tests skip with a message.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "clients-token";

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn skip_or_fail(what: &str) {
    if in_ci() {
        panic!("{what} (required with CI=true)");
    }
    eprintln!("skipping: {what}");
}

fn venv_python() -> Option<PathBuf> {
    let dir = std::env::var("AGENTMEM_SERVER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/agentmem-server-venv")
        });
    let python = dir.join("bin/python");
    python.exists().then_some(python)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server settings read from the environment: cleared for every server started
/// here, so that only what a test sets applies.
const SETTINGS_ENV: [&str; 7] = [
    "WINDOW_SIZE",
    "LONG_TERM_MEMORY",
    "ENABLE_DISCRETE_MEMORY_EXTRACTION",
    "GENERATION_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "AGENTMEM_MODEL",
];

fn start(store: &str) -> Server {
    start_with(store, &[])
}

fn start_with(store: &str, env: &[(&str, &str)]) -> Server {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmem"));
    for var in SETTINGS_ENV {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let child = command
        .args([
            "--store",
            store,
            "serve",
            "--addr",
            &addr,
            "--auth-token",
            TOKEN,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentmem serve starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok((200, _)) = http(&addr, "GET", "/v1/health", "") {
            return Server { child, addr };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // dropping the server kills and waits for the child
    drop(Server {
        child,
        addr: addr.clone(),
    });
    panic!("agentmem serve on {addr} did not become healthy");
}

/// A minimal HTTP/1.1 request (one connection per request).
fn http(addr: &str, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

fn run_python(python: &PathBuf, args: &[&str]) {
    let script_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/server");
    let output = Command::new(python)
        .args(args.iter().enumerate().map(|(i, a)| {
            if i == 0 {
                format!("{script_dir}/{a}")
            } else {
                (*a).to_owned()
            }
        }))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("scenario: ok"), "{stdout}");
}

/// The mock generation model: memories for `custom` prompts, a 400 for anything else
/// (so extraction and summaries fall back to the offline parts).
struct CustomOnly;

impl wiremock::Respond for CustomOnly {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        if !body.contains("CUSTOM-MARKER") {
            return wiremock::ResponseTemplate::new(400).set_body_string("not a custom prompt");
        }
        let memories = serde_json::json!({"memories": [
            {"type": "episodic", "text": "User signed a lease in Porto", "topics": ["home"]}
        ]});
        wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": memories.to_string()}, "finish_reason": "stop"}]
        }))
    }
}

#[test]
fn python_client_strategies() {
    let Some(python) = venv_python() else {
        return skip_or_fail("no Python venv with agent-memory-client; run .ci/server.sh or set AGENTMEM_SERVER_VENV");
    };
    let dir = tempfile::tempdir().unwrap();
    // offline: the rule extractor, the extractive summariser, `custom` refused
    let store = format!("sqlite://{}", dir.path().join("offline.db").display());
    let server = start(&store);
    let base = format!("http://{}", server.addr);
    run_python(
        &python,
        &["strategies_client.py", &base, TOKEN, "ns-offline"],
    );
    drop(server);

    // with a generation model (a local mock of an OpenAI-compatible server)
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mock = runtime.block_on(async {
        let mock = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .and(wiremock::matchers::path("/v1/chat/completions"))
            .respond_with(CustomOnly)
            .mount(&mock)
            .await;
        mock
    });
    let store = format!("sqlite://{}", dir.path().join("model.db").display());
    let base_url = format!("{}/v1", mock.uri());
    let server = start_with(
        &store,
        &[
            ("GENERATION_MODEL", "mock-model"),
            ("OPENAI_BASE_URL", &base_url),
            ("OPENAI_API_KEY", "sk-mock"),
        ],
    );
    let base = format!("http://{}", server.addr);
    run_python(
        &python,
        &[
            "strategies_client.py",
            &base,
            TOKEN,
            "ns-model",
            "with-model",
        ],
    );
    drop(server);
    drop(mock);
}

#[test]
fn python_clients_rest_and_mcp() {
    let Some(python) = venv_python() else {
        return skip_or_fail("no Python venv with agent-memory-client and mcp; run .ci/server.sh or set AGENTMEM_SERVER_VENV");
    };
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("server.db").display());
    let server = start(&store);
    let base = format!("http://{}", server.addr);
    run_python(&python, &["rest_client.py", &base, TOKEN, "ns-rest"]);
    run_python(
        &python,
        &["mcp_client.py", "http", &format!("{base}/mcp"), TOKEN],
    );
    let stdio_store = format!("sqlite://{}", dir.path().join("mcp.db").display());
    run_python(
        &python,
        &[
            "mcp_client.py",
            "stdio",
            env!("CARGO_BIN_EXE_agentmem"),
            &stdio_store,
        ],
    );
}

/// Two instances on one shared store; writers alternate between them; one is killed
/// mid-load. Every write either instance acknowledged must be readable from the survivor.
fn two_instances_lose_nothing(store: &str) {
    let a = start(store);
    let b = start(store);
    let namespace = format!("it-{}", std::process::id());
    let acknowledged = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (addrs, ack, stop, ns) = (
                [a.addr.clone(), b.addr.clone()],
                acknowledged.clone(),
                stop.clone(),
                namespace.clone(),
            );
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let session = format!("w{w}-{i}");
                    let content = format!("message {i} of writer {w}");
                    let body = format!(
                        r#"{{"session_id":"{session}","messages":[{{"role":"user","content":"{content}","created_at":"2026-01-01T00:00:00Z"}}]}}"#
                    );
                    let addr = &addrs[i % 2];
                    let path = format!("/v1/working-memory/{session}?namespace={ns}");
                    if let Ok((200, _)) = http(addr, "PUT", &path, &body) {
                        ack.lock().unwrap().push((session, content));
                    }
                    i += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let mut a = a;
    a.child.kill().unwrap(); // SIGKILL mid-load
    let _ = a.child.wait();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap();
    assert!(
        acknowledged.len() > 20,
        "too little load: {}",
        acknowledged.len()
    );
    for (session, content) in acknowledged.iter() {
        let (status, body) = http(
            &b.addr,
            "GET",
            &format!("/v1/working-memory/{session}?namespace={namespace}"),
            "",
        )
        .unwrap();
        assert_eq!(status, 200, "{session} acknowledged but lost: {body}");
        assert!(body.contains(content.as_str()), "{session}: {body}");
    }
    // the survivor lists them all (and perhaps writes that landed while their
    // acknowledgement died with the killed instance)
    let (status, body) = http(
        &b.addr,
        "GET",
        &format!("/v1/working-memory/?namespace={namespace}&limit=1"),
        "",
    )
    .unwrap();
    assert_eq!(status, 200);
    let total: usize = body
        .split("\"total\":")
        .nth(1)
        .and_then(|t| t.trim_end_matches(['}', '\n']).parse().ok())
        .unwrap_or_else(|| panic!("no total in {body}"));
    assert!(
        total >= acknowledged.len(),
        "{total} < {}: {body}",
        acknowledged.len()
    );
}

#[test]
fn two_instances_on_one_redis() {
    match std::env::var("AGENTMEM_REDIS_URL") {
        Ok(url) if !url.is_empty() => two_instances_lose_nothing(&url),
        _ => skip_or_fail("AGENTMEM_REDIS_URL is not set"),
    }
}

#[test]
fn two_instances_on_one_postgres() {
    match std::env::var("AGENTMEM_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => two_instances_lose_nothing(&url),
        _ => skip_or_fail("AGENTMEM_POSTGRES_URL is not set"),
    }
}
