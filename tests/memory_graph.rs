//! `agentmem mcp --memory-graph` and `agentmem graph`: the reference MCP `memory` server's
//! tools driven by the official MCP Python SDK, two server processes writing one SQLite
//! file, `graph import` / `export` byte for byte, and the user's entity showing facts
//! learned outside the graph.
//!
//! The Python SDK lives in the virtual environment `.ci/server.sh` creates
//! (`AGENTMEM_SERVER_VENV`, default `~/.cache/agentmem-server-venv`). With `CI=true` a
//! missing venv fails; otherwise the Python tests skip with a message.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
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

fn python_or_skip() -> Option<PathBuf> {
    let python = venv_python();
    if python.is_none() {
        let what =
            "no Python venv with the mcp package; run .ci/server.sh or set AGENTMEM_SERVER_VENV";
        assert!(!in_ci(), "{what} (required with CI=true)");
        eprintln!("skipping: {what}");
    }
    python
}

struct Store {
    dir: tempfile::TempDir,
    url: String,
}

impl Store {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("memory.db").display());
        Self { dir, url }
    }

    fn agentmem(&self, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentmem"))
            .env_remove("AGENTMEM_STORE_URL")
            .arg("--store")
            .arg(&self.url)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentmem");
        let mut input = child.stdin.take().expect("stdin");
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).expect("write stdin");
        }
        drop(input);
        child.wait_with_output().expect("agentmem runs")
    }

    /// Runs `agentmem`, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.agentmem(args, None);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8 stdout")
    }
}

fn run_python(python: &PathBuf, args: &[&str]) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/server/mcp_graph_client.py"
    );
    let output = Command::new(python)
        .arg(script)
        .args(args)
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

#[test]
fn the_mcp_python_sdk_runs_the_reference_session_of_all_nine_tools() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let store = Store::new();
    run_python(
        &python,
        &["session", env!("CARGO_BIN_EXE_agentmem"), &store.url],
    );
    // the observation on the user's entity became the user's fact
    let facts = store.ok(&["facts", "list", "--user", "default_user", "--json"]);
    assert!(facts.contains("is vegetarian"), "{facts}");
    // and every change is in the history
    let history = store.ok(&["graph", "history"]);
    let changes: Vec<serde_json::Value> = history
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // one change per write call the session made (13); the refused ones wrote nothing
    assert_eq!(changes.len(), 13, "{history}");
    assert!(!history.contains("Nobody"), "{history}");
    assert!(
        changes
            .iter()
            .filter(|c| c["change"]["op"] == "add_observations")
            .all(|c| !c.to_string().contains("Ghost")),
        "{history}"
    );
    assert_eq!(changes[0]["change"]["op"], "create_entities");
    assert!(changes
        .iter()
        .any(|c| c["change"]["op"] == "delete_entities"));
}

/// `agentmem serve --memory-graph`, killed when dropped.
struct Serve(std::process::Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether `GET /v1/health` on `addr` answers 200.
fn healthy(addr: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let request = format!("GET /v1/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
}

#[test]
fn serve_memory_graph_puts_the_same_tools_at_mcp() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let store = Store::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let server = Serve(
        Command::new(env!("CARGO_BIN_EXE_agentmem"))
            .env_remove("AGENTMEM_STORE_URL")
            .args(["--store", &store.url, "serve", "--addr", &addr])
            .args(["--auth-token", "graph-token", "--memory-graph"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("agentmem serve starts"),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !healthy(&addr) {
        assert!(
            std::time::Instant::now() < deadline,
            "agentmem serve on {addr} did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    run_python(
        &python,
        &["http", &format!("http://{addr}/mcp"), "graph-token"],
    );
    drop(server);
    let facts = store.ok(&["facts", "list", "--user", "default_user", "--json"]);
    assert!(facts.contains("is vegetarian"), "{facts}");
}

#[test]
fn two_server_processes_writing_one_sqlite_file_lose_nothing() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let store = Store::new();
    run_python(
        &python,
        &["concurrent", env!("CARGO_BIN_EXE_agentmem"), &store.url],
    );
}

/// A file as the reference server writes it: entities then relations, compact JSON with
/// the reference's key order, `\n` after every line; escapes and non-ASCII included.
const REFERENCE_FILE: &str = concat!(
    r#"{"type":"entity","name":"default_user","entityType":"person","observations":["is vegetarian","lives in Zürich"]}"#,
    "\n",
    r#"{"type":"entity","name":"Acme \"Labs\"","entityType":"organization","observations":["makes C:\\tools","tab\there","line\nbreak","control \u0001 char","emoji 🚲"]}"#,
    "\n",
    r#"{"type":"entity","name":"東京","entityType":"city","observations":[]}"#,
    "\n",
    r#"{"type":"relation","from":"default_user","to":"Acme \"Labs\"","relationType":"works_at"}"#,
    "\n",
    r#"{"type":"relation","from":"Acme \"Labs\"","to":"東京","relationType":"located_in"}"#,
    "\n",
);

#[test]
fn a_reference_file_round_trips_byte_for_byte_through_import_and_export() {
    let store = Store::new();
    let file = store.dir.path().join("memory.jsonl");
    std::fs::write(&file, REFERENCE_FILE).unwrap();
    let said = store.ok(&["graph", "import", file.to_str().unwrap()]);
    assert!(
        said.contains("imported 3 of 3 entities and 2 of 2 relations"),
        "{said}"
    );
    assert_eq!(store.ok(&["graph", "export"]), REFERENCE_FILE);
    // importing again adds nothing and changes nothing
    let said = store.ok(&["graph", "import", file.to_str().unwrap()]);
    assert!(
        said.contains("imported 0 of 3 entities and 0 of 2 relations"),
        "{said}"
    );
    assert_eq!(store.ok(&["graph", "export"]), REFERENCE_FILE);
    // the user's observations were stored as the user's facts
    let facts = store.ok(&["facts", "list", "--user", "default_user", "--json"]);
    assert!(facts.contains("lives in Zürich"), "{facts}");
}

#[test]
fn keys_in_another_order_export_in_the_reference_order() {
    let store = Store::new();
    let shuffled = concat!(
        r#"{"observations":["o"],"name":"n","type":"entity","entityType":"t"}"#,
        "\n\n",
        r#"{"relationType":"r","to":"n","from":"n","type":"relation"}"#,
        "\n"
    );
    let output = store.agentmem(&["graph", "import", "-"], Some(shuffled));
    assert!(output.status.success(), "{output:?}");
    let exported = store.ok(&["graph", "export"]);
    assert_eq!(
        exported,
        concat!(
            r#"{"type":"entity","name":"n","entityType":"t","observations":["o"]}"#,
            "\n",
            r#"{"type":"relation","from":"n","to":"n","relationType":"r"}"#,
            "\n"
        )
    );
    // the same values, key order aside
    for (a, b) in shuffled
        .lines()
        .filter(|l| !l.is_empty())
        .zip(exported.lines())
    {
        let a: serde_json::Value = serde_json::from_str(a).unwrap();
        let b: serde_json::Value = serde_json::from_str(b).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn a_malformed_file_is_refused_naming_the_line_and_writes_nothing() {
    let store = Store::new();
    let bad = concat!(
        r#"{"type":"entity","name":"n","entityType":"t","observations":[]}"#,
        "\n",
        r#"{"type":"entity","name":"m"}"#,
        "\n"
    );
    let output = store.agentmem(&["graph", "import", "-"], Some(bad));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 2"), "{stderr}");
    assert_eq!(store.ok(&["graph", "export"]), "\n");
}

#[test]
fn a_fact_learned_outside_the_graph_shows_on_the_users_entity() {
    let store = Store::new();
    store.ok(&[
        "facts",
        "add",
        "--user",
        "default_user",
        "I am allergic to peanuts",
    ]);
    let facts: serde_json::Value =
        serde_json::from_str(&store.ok(&["facts", "list", "--user", "default_user", "--json"]))
            .expect("JSON facts");
    let text = facts
        .as_array()
        .and_then(|a| a.first())
        .and_then(|f| f["text"].as_str())
        .expect("one fact")
        .to_owned();
    let exported = store.ok(&["graph", "export"]);
    let user: serde_json::Value = serde_json::from_str(exported.lines().next().unwrap()).unwrap();
    assert_eq!(user["name"], "default_user");
    assert_eq!(user["entityType"], "person");
    assert_eq!(user["observations"], serde_json::json!([text]));
    // another graph user sees none of it
    assert_eq!(store.ok(&["graph", "export", "--user", "bob"]), "\n");
}

#[test]
fn observations_are_searchable_by_meaning_at_once_and_the_graph_is_a_resource() {
    let model = std::env::var("AGENTMEM_EMBED_MODEL").unwrap_or_default();
    if model.is_empty() {
        let what = "AGENTMEM_EMBED_MODEL is not set (.ci/embed.sh sets it): search by meaning needs the model";
        assert!(!in_ci(), "{what} (required with CI=true)");
        eprintln!("skipping: {what}");
        return;
    }
    let Some(python) = python_or_skip() else {
        return;
    };
    let store = Store::new();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/server/mcp_graph_live_client.py"
    );
    let output = Command::new(python)
        .arg(script)
        .args([env!("CARGO_BIN_EXE_agentmem"), &store.url])
        .env_remove("AGENTMEM_STORE_URL")
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("scenario: ok"), "{stdout}");
}

/// `agentmem mcp` (with and without `--memory-graph`) answers a line that is not JSON
/// with a JSON-RPC parse error (code -32700, id null) and serves the next line.
#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_next_line_is_served() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::mpsc;
    use std::time::Duration;

    for graph in [false, true] {
        let store = Store::new();
        let mut args = vec!["--store", store.url.as_str(), "mcp"];
        if graph {
            args.push("--memory-graph");
        } else {
            args.extend(["--user", "ana"]);
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentmem"))
            .env_remove("AGENTMEM_STORE_URL")
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn agentmem mcp");
        let mut input = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let next = || -> serde_json::Value {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("graph={graph}: no answer: {e}"));
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
        };
        let mut send = |line: &str| {
            input.write_all(line.as_bytes()).unwrap();
            input.write_all(b"\n").unwrap();
            input.flush().unwrap();
        };
        let assert_parse_error = |answer: &serde_json::Value| {
            assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
            assert_eq!(answer["error"]["code"], -32700, "{answer}");
            assert!(answer["id"].is_null(), "{answer}");
            assert!(answer.get("result").is_none(), "{answer}");
        };

        send("hello, are you there?");
        assert_parse_error(&next());
        send(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#,
        );
        let init = next();
        assert_eq!(init["id"], 1, "{init}");
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#);
        assert_parse_error(&next());
        send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
        let tools = next();
        assert_eq!(tools["id"], 3, "{tools}");
        let names = tools["result"]["tools"].as_array().expect("tools").len();
        assert!(names > 0, "{tools}");

        drop(send);
        drop(input);
        let status = child.wait().expect("agentmem mcp exits");
        assert!(status.success(), "graph={graph}: {status}");
    }
}
