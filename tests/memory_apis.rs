//! A real `agentmem serve` driven by the official SDKs of the two memory APIs it serves
//! besides the v0 working-memory API: Anthropic's `anthropic` (2.14, `client.beta.
//! memory_stores`) and Redis's `redis-agent-memory` (0.4, the Agent Memory data plane).
//! No hand-written client stands in for either: the scenarios in `tests/server/` call
//! the SDKs, whose `base_url` / `server_url` point at the server.
//!
//! The SDKs live in the virtual environment `.ci/server.sh` creates
//! (`AGENTMEM_SERVER_VENV`, default `~/.cache/agentmem-server-venv`). With `CI=true` a
//! missing venv or SDK fails; otherwise the tests skip with a message.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ADMIN_TOKEN: &str = "admin-token";
const KEY_A: &str = "key-of-acme";
const KEY_B: &str = "key-of-globex";

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The venv's Python when it has `module`; otherwise fails in CI, skips elsewhere.
fn python_with(module: &str) -> Option<PathBuf> {
    let dir = std::env::var("AGENTMEM_SERVER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/agentmem-server-venv")
        });
    let python = dir.join("bin/python");
    let has = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if has {
        return Some(python);
    }
    let what = format!(
        "no Python venv with the `{module}` SDK at {}; run .ci/server.sh or set AGENTMEM_SERVER_VENV",
        dir.display()
    );
    if in_ci() {
        panic!("{what} (required with CI=true)");
    }
    eprintln!("skipping: {what}");
    None
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

/// `agentmem serve` on `store` with the admin token and one API key per tenant.
fn start(store: &str) -> Server {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmem"));
    for var in [
        "WINDOW_SIZE",
        "LONG_TERM_MEMORY",
        "ENABLE_DISCRETE_MEMORY_EXTRACTION",
        "GENERATION_MODEL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "AGENTMEM_MODEL",
        "AGENTMEM_API_KEYS",
    ] {
        command.env_remove(var);
    }
    let child = command
        .args([
            "--store",
            store,
            "serve",
            "--addr",
            &addr,
            "--auth-token",
            ADMIN_TOKEN,
            "--api-key",
            &format!("acme={KEY_A}"),
            "--api-key",
            &format!("globex={KEY_B}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentmem serve starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok((200, _)) = http(&addr, "GET", "/v1/health", ADMIN_TOKEN) {
            return Server { child, addr };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(Server {
        child,
        addr: addr.clone(),
    });
    panic!("agentmem serve on {addr} did not become healthy");
}

/// A bodiless HTTP/1.1 request, for the health probe and the legacy-route check.
fn http(addr: &str, method: &str, path: &str, token: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
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

fn run_scenario(python: &PathBuf, script: &str, base: &str) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/server/");
    let output = Command::new(python)
        .arg(format!("{path}{script}"))
        .args([base, KEY_A, KEY_B])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("scenario: ok"), "{stdout}");
}

#[test]
fn anthropic_sdk_drives_every_memory_stores_call() {
    let Some(python) = python_with("anthropic") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = start(&format!("sqlite://{}", dir.path().join("m.db").display()));
    run_scenario(
        &python,
        "anthropic_memory_stores_client.py",
        &format!("http://{}", server.addr),
    );
}

#[test]
fn redis_agent_memory_sdk_drives_sessions_and_long_term_memory() {
    let Some(python) = python_with("redis_agent_memory") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = start(&format!("sqlite://{}", dir.path().join("m.db").display()));
    run_scenario(
        &python,
        "redis_agent_memory_client.py",
        &format!("http://{}", server.addr),
    );
}

#[test]
fn tenant_keys_open_only_the_tenant_aware_apis() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&format!("sqlite://{}", dir.path().join("m.db").display()));
    let (status, _) = http(&server.addr, "GET", "/v1/working-memory/", KEY_A).unwrap();
    assert_eq!(
        status, 403,
        "a tenant's key must not read the legacy routes"
    );
    let (status, _) = http(&server.addr, "GET", "/v1/working-memory/", ADMIN_TOKEN).unwrap();
    assert_eq!(status, 200);
    let (status, body) = http(&server.addr, "GET", "/v1/memory_stores", "nope").unwrap();
    assert_eq!(status, 401);
    assert!(body.contains("authentication_error"), "{body}");
    let (status, body) = http(&server.addr, "GET", "/v1/memory_stores", KEY_A).unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("\"data\":[]"), "{body}");
}
