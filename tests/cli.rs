//! End-to-end tests of the `agentmem` binary: every command on a fresh SQLite file.
#![cfg(feature = "cli")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
use unicode_width::UnicodeWidthStr;

/// A fresh store in a temporary directory and a way to run the binary against it.
struct Cli {
    dir: tempfile::TempDir,
    url: String,
}

/// What one run printed and returned.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Stderr without the one-line notes the CLI may print first (for example that semantic
    /// recall is off when `AGENTMEM_EMBED_MODEL` is unset), so an error is checked from its start.
    fn error(&self) -> String {
        self.stderr
            .lines()
            .filter(|line| !line.starts_with("note: "))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l}: {e}")))
            .collect()
    }
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmem"));
    command.env_remove("AGENTMEM_STORE_URL");
    command
}

fn finish(output: Output) -> Run {
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn run_with(mut command: Command, stdin: &str) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentmem");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        // the command may stop reading early (an error): ignore a broken pipe
        let _ = input.write_all(text.as_bytes());
    });
    let output = child.wait_with_output().expect("wait agentmem");
    writer.join().expect("stdin writer");
    finish(output)
}

impl Cli {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("agentmem.db").display());
        Self { dir, url }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = binary();
        command.arg("--store").arg(&self.url).args(args);
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_in(args, "")
    }

    fn run_in(&self, args: &[&str], stdin: &str) -> Run {
        run_with(self.command(args), stdin)
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write file");
}

// ---------------------------------------------------------------- extract

#[test]
fn extract_prints_one_object_per_line_in_order() {
    let cli = Cli::new();
    let run = cli
        .run_in(
            &["extract"],
            "Hi, I'm Alice and I love hiking in the mountains\n\nI don't like jazz.\nDo you like jazz?\n",
        )
        .ok();
    let lines = run.json_lines();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0]["text"],
        "Hi, I'm Alice and I love hiking in the mountains"
    );
    let facts = lines[0]["facts"].as_array().expect("facts");
    assert!(facts
        .iter()
        .any(|f| f["attribute"] == "name" && f["value"] == "Alice"));
    let hiking = facts
        .iter()
        .find(|f| f["attribute"] == "likes")
        .expect("likes");
    assert_eq!(hiking["value"], "hiking in the mountains");
    assert_eq!(hiking["text"], "likes hiking in the mountains");
    assert_eq!(hiking["polarity"], "positive");
    assert!(hiking["confidence"].as_f64().expect("confidence") > 0.5);
    assert_eq!(lines[1], serde_json::json!({"text": "", "facts": []}));
    assert_eq!(lines[2]["facts"][0]["polarity"], "negative");
    assert_eq!(
        lines[3]["facts"],
        serde_json::json!([]),
        "a question states nothing"
    );
}

#[test]
fn extract_answers_each_line_before_the_next_arrives() {
    let mut child = binary()
        .arg("extract")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut first = String::new();
        let mut lines = BufReader::new(stdout);
        let _ = lines.read_line(&mut first);
        let _ = tx.send(first);
    });
    stdin.write_all(b"I live in Lyon\n").expect("write");
    stdin.flush().expect("flush");
    // stdin stays open: the answer must come through the pipe anyway
    let first = rx.recv_timeout(Duration::from_secs(30));
    drop(stdin);
    let status = child.wait().expect("wait");
    reader.join().expect("reader");
    let first = first.expect("no output line while stdin was still open: not streaming");
    assert!(first.contains("lives in Lyon"), "{first}");
    assert!(status.success());
}

// ---------------------------------------------------------------- facts

#[test]
fn facts_add_reports_changes_and_list_shows_history() {
    let cli = Cli::new();
    let added = cli
        .run(&[
            "facts",
            "add",
            "--user",
            "alice",
            "I live in Paris and I love museums",
        ])
        .ok();
    assert_eq!(added.stdout.matches("added").count(), 2, "{}", added.stdout);
    let moved = cli
        .run(&[
            "facts", "add", "--user", "alice", "I", "moved", "to", "Berlin",
        ])
        .ok();
    assert!(moved.stdout.contains("superseded"), "{}", moved.stdout);
    assert!(moved.stdout.contains("replaces \"lives in Paris\""));
    let again = cli
        .run(&["facts", "add", "-u", "alice", "--json", "I love museums"])
        .ok();
    assert_eq!(again.json()[0]["change"], "reinforced");
    let nothing = cli
        .run(&["facts", "add", "-u", "alice", "What time is it?"])
        .ok();
    assert!(nothing.stdout.contains("no facts found"));

    let list = cli
        .run(&["facts", "list", "--user", "alice", "--json"])
        .ok()
        .json();
    let texts: Vec<&str> = list
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|f| f["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 2);
    assert!(texts.contains(&"lives in Berlin") && texts.contains(&"likes museums"));

    let history = cli
        .run(&["facts", "list", "--user", "alice", "--history"])
        .ok();
    assert!(
        history.stdout.contains("was: lives in Paris"),
        "{}",
        history.stdout
    );
    let history = cli
        .run(&["facts", "list", "--user", "alice", "--history", "--json"])
        .ok()
        .json();
    let berlin = history
        .as_array()
        .expect("array")
        .iter()
        .find(|c| c["fact"]["text"] == "lives in Berlin")
        .expect("berlin");
    assert_eq!(berlin["history"][0]["text"], "lives in Paris");

    let other = cli
        .run(&["facts", "list", "--user", "bob", "--json"])
        .ok()
        .json();
    assert_eq!(other, serde_json::json!([]), "users are isolated");
}

#[test]
fn facts_search_ranks_and_limits() {
    let cli = Cli::new();
    cli.run(&[
        "facts",
        "add",
        "-u",
        "alice",
        "I love museums. I am allergic to peanuts. I work at Acme.",
    ])
    .ok();
    let hits = cli
        .run(&[
            "facts", "search", "-u", "alice", "-k", "1", "--json", "peanuts", "allergy",
        ])
        .ok()
        .json();
    let hits = hits.as_array().expect("array");
    assert_eq!(hits.len(), 1);
    assert!(hits[0]["fact"]["text"]
        .as_str()
        .expect("text")
        .contains("peanuts"));
    let table = cli.run(&["facts", "search", "-u", "alice", "museums"]).ok();
    assert!(table.stdout.starts_with("SCORE"));
    assert_eq!(table.stdout.lines().count(), 4, "{}", table.stdout);
}

#[test]
fn facts_forget_asks_refuses_without_terminal_and_deletes_with_yes() {
    let cli = Cli::new();
    cli.run(&[
        "facts",
        "add",
        "-u",
        "alice",
        "I live in Paris. I love tea.",
    ])
    .ok();
    let refused = cli.run(&["facts", "forget", "-u", "alice"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.error().starts_with("agentmem: refusing"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("--yes"));
    let still = cli
        .run(&["facts", "list", "-u", "alice", "--json"])
        .ok()
        .json();
    let still = still.as_array().expect("array");
    assert_eq!(still.len(), 2);

    let id = still[0]["id"].as_str().expect("id").to_owned();
    cli.run(&["facts", "forget", "-u", "alice", "--id", &id, "--yes"])
        .ok();
    let unknown = cli.run(&["facts", "forget", "-u", "alice", "--id", &id, "--yes"]);
    assert_eq!(unknown.code, 1);
    assert!(unknown.stderr.contains("not found"), "{}", unknown.stderr);
    let gone = cli.run(&["facts", "forget", "-u", "alice", "-y"]).ok();
    assert!(
        gone.stdout.contains("1 fact records deleted"),
        "{}",
        gone.stdout
    );
    let empty = cli
        .run(&["facts", "list", "-u", "alice", "--json"])
        .ok()
        .json();
    assert_eq!(empty, serde_json::json!([]));
}

#[test]
fn facts_export_import_round_trip_and_bad_documents_write_nothing() {
    let cli = Cli::new();
    cli.run(&[
        "facts",
        "add",
        "-u",
        "alice",
        "I live in Paris and I love museums",
    ])
    .ok();
    cli.run(&["facts", "add", "-u", "alice", "I moved to Berlin"])
        .ok();
    cli.run(&["facts", "add", "-u", "alice", "I love museums"])
        .ok();
    let export = cli.run(&["facts", "export", "--user", "alice"]).ok();
    let doc = export.json();
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["user_id"], "alice");
    assert_eq!(
        doc["facts"].as_array().expect("facts").len(),
        3,
        "history included"
    );

    // into another store, from stdin
    let other = Cli::new();
    other.run_in(&["facts", "import"], &export.stdout).ok();
    // and under another user, from a file
    let file = cli.path("alice.json");
    write(&file, &export.stdout);
    let imported = cli
        .run(&[
            "facts",
            "import",
            file.to_str().expect("path"),
            "--user",
            "bob",
        ])
        .ok();
    assert!(
        imported.stdout.contains("imported 3 facts (2 current)")
            && imported.stdout.contains("3 written, 0 already present"),
        "{}",
        imported.stdout
    );
    // a second import of the same document writes nothing
    let again = cli
        .run(&[
            "facts",
            "import",
            file.to_str().expect("path"),
            "--user",
            "bob",
        ])
        .ok();
    assert!(
        again.stdout.contains("0 written, 3 already present"),
        "{}",
        again.stdout
    );
    for (store, user) in [(&other, "alice"), (&cli, "bob")] {
        let facts = store
            .run(&["facts", "list", "-u", user, "--history", "--json"])
            .ok()
            .json();
        let facts = facts.as_array().expect("array");
        assert_eq!(facts.len(), 2);
        let berlin = facts
            .iter()
            .find(|c| c["fact"]["text"] == "lives in Berlin")
            .expect("berlin");
        assert_eq!(berlin["history"][0]["text"], "lives in Paris");
        let museums = facts
            .iter()
            .find(|c| c["fact"]["text"] == "likes museums")
            .expect("museums");
        assert_eq!(museums["fact"]["reinforcement_count"], 1);
    }

    let future = export
        .stdout
        .replacen("\"version\": 1", "\"version\": 2", 1);
    let refused = cli.run_in(&["facts", "import", "--user", "carol"], &future);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("unsupported facts export version 2"),
        "{}",
        refused.stderr
    );
    let truncated = &export.stdout[..export.stdout.len() / 2];
    let malformed = cli.run_in(&["facts", "import", "--user", "carol"], truncated);
    assert_eq!(malformed.code, 1);
    assert!(malformed
        .error()
        .starts_with("agentmem: corrupt facts export"));
    let carol = cli
        .run(&["facts", "list", "-u", "carol", "--json"])
        .ok()
        .json();
    assert_eq!(carol, serde_json::json!([]), "nothing written");
}

// ---------------------------------------------------------------- usage and stores

#[test]
fn missing_user_is_a_usage_error() {
    let cli = Cli::new();
    for args in [
        &["facts", "list"][..],
        &["facts", "add", "hello"][..],
        &["chat"][..],
    ] {
        let run = cli.run(args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains("--user"), "{}", run.stderr);
    }
}

#[test]
fn unknown_store_url_is_a_usage_error_naming_the_url() {
    let run = run_with(
        {
            let mut c = binary();
            c.args(["--store", "ftp://example/db", "facts", "list", "-u", "a"]);
            c
        },
        "",
    );
    assert_eq!(run.code, 2);
    assert!(run.error().starts_with("agentmem: "), "{}", run.stderr);
    assert!(run.stderr.contains("ftp://example/db"), "{}", run.stderr);

    let mut from_env = binary();
    from_env
        .env("AGENTMEM_STORE_URL", "nonsense")
        .args(["vectors", "stats", "-n", "x"]);
    let run = run_with(from_env, "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("`nonsense`"), "{}", run.stderr);

    // an empty variable means the default, sqlite://agentmem.db in the working directory
    let dir = tempfile::tempdir().expect("tempdir");
    let mut empty = binary();
    empty
        .env("AGENTMEM_STORE_URL", "")
        .current_dir(dir.path())
        .args(["vectors", "stats", "-n", "x"]);
    run_with(empty, "").ok();
    assert!(dir.path().join("agentmem.db").exists());
}

#[test]
fn a_store_that_cannot_be_opened_is_a_runtime_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    // a directory is not a database file
    let url = format!("sqlite://{}", dir.path().display());
    let mut command = binary();
    command.args(["--store", &url, "vectors", "stats", "-n", "x"]);
    let run = run_with(command, "");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("cannot open store `{url}`")),
        "{}",
        run.stderr
    );
}

#[test]
fn verbose_flags_log_to_stderr() {
    for (flags, logged) in [(&[][..], false), (&["-v"][..], true)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("m.db").display());
        let mut command = binary();
        command
            .env_remove("RUST_LOG")
            .env_remove("AGENTMEM_LOG")
            .args(["--store", &url])
            .args(flags)
            .args(["facts", "list", "-u", "ana"]);
        let run = run_with(command, "");
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stderr.contains("applied sqlite migration"),
            logged,
            "{flags:?}: {}",
            run.stderr
        );
        assert!(!run.stdout.contains("migration"), "{}", run.stdout);
    }
}

#[test]
fn every_command_has_an_example_in_its_help() {
    let commands: &[&[&str]] = &[
        &[],
        &["extract"],
        &["facts", "add"],
        &["facts", "list"],
        &["facts", "search"],
        &["facts", "forget"],
        &["facts", "export"],
        &["facts", "import"],
        &["vectors", "upsert"],
        &["vectors", "search"],
        &["vectors", "delete"],
        &["vectors", "stats"],
        &["sessions", "list"],
        &["sessions", "show"],
        &["sessions", "export"],
        &["sessions", "import"],
        &["sessions", "delete"],
        &["graph", "import"],
        &["graph", "export"],
        &["graph", "history"],
        &["chat"],
    ];
    for args in commands {
        let mut command = binary();
        command.args(*args).arg("--help");
        let run = run_with(command, "").ok();
        assert!(run.stdout.contains("Example"), "{args:?}:\n{}", run.stdout);
        assert!(run.stdout.contains("agentmem "), "{args:?}");
        assert!(
            run.stdout.contains("Exit codes"),
            "{args:?}:\n{}",
            run.stdout
        );
    }
    let mut top = binary();
    top.arg("--help");
    let help = run_with(top, "").ok().stdout;
    for line in [
        "0  success",
        "1  the operation failed",
        "2  usage error",
        "-vv",
    ] {
        assert!(help.contains(line), "{line}:\n{help}");
    }
    let mut chat = binary();
    chat.args(["chat", "--help"]);
    assert!(run_with(chat, "")
        .stdout
        .contains("(with the `openai` feature)"));
}

// ---------------------------------------------------------------- vectors

fn documents(range: std::ops::Range<usize>) -> String {
    let topics = [
        "rust memory",
        "python notebooks",
        "travel to japan",
        "baking bread",
    ];
    range
        .map(|i| {
            serde_json::json!({
                "id": format!("doc-{i}"),
                "content": format!("document {i} about {}", topics[i % topics.len()]),
                "metadata": {"n": i},
            })
            .to_string()
                + "\n"
        })
        .collect()
}

#[test]
fn vectors_upsert_search_delete_stats() {
    let cli = Cli::new();
    let file = cli.path("docs.jsonl");
    write(&file, &documents(0..2_500));
    let loaded = cli
        .run(&[
            "vectors",
            "upsert",
            "--namespace",
            "docs",
            "--file",
            file.to_str().expect("path"),
        ])
        .ok();
    assert!(
        loaded
            .stderr
            .contains("upserted 2500 documents into namespace `docs`"),
        "{}",
        loaded.stderr
    );
    let stats = cli
        .run(&["vectors", "stats", "-n", "docs", "--json"])
        .ok()
        .json();
    assert_eq!(stats["documents"], 2_500);

    // stdin, re-upserting the same ids replaces them
    cli.run_in(
        &["vectors", "upsert", "-n", "docs", "--batch-size", "7"],
        &documents(0..10),
    )
    .ok();
    let stats = cli.run(&["vectors", "stats", "-n", "docs"]).ok();
    assert!(stats.stdout.contains("2500 documents"), "{}", stats.stdout);

    let hits = cli
        .run(&[
            "vectors", "search", "-n", "docs", "-k", "3", "--json", "japan", "travel",
        ])
        .ok()
        .json();
    let hits = hits.as_array().expect("array");
    assert_eq!(hits.len(), 3);
    for hit in hits {
        assert!(hit["content"].as_str().expect("content").contains("japan"));
        assert!(hit["metadata"]["n"].is_number());
    }
    let table = cli.run(&["vectors", "search", "-n", "docs", "bread"]).ok();
    assert!(table.stdout.starts_with("SCORE"));
    assert_eq!(table.stdout.lines().count(), 11);

    let queries = "{\"id\": \"q1\", \"query\": \"baking bread\"}\n\n{\"id\": \"q2\", \"query\": \"rust memory\"}\n";
    let batch = cli
        .run_in(&["vectors", "search", "-n", "docs", "-k", "2"], queries)
        .ok();
    let lines = batch.json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "q1");
    assert_eq!(lines[1]["id"], "q2");
    let hit_id = lines[1]["hits"][0]["id"].as_str().expect("id").to_owned();
    let n: usize = hit_id.trim_start_matches("doc-").parse().expect("number");
    assert_eq!(n % 4, 0, "a rust memory document");
    assert_eq!(lines[0]["hits"].as_array().expect("hits").len(), 2);
    assert!(lines[0]["hits"][0]["score"].is_number());

    // concurrent searches answer in input order, with the same hits
    let many: String = (0..40)
        .map(|i| format!("{{\"id\": {i}, \"query\": \"document {i} about bread\"}}\n"))
        .collect();
    let one_by_one = cli
        .run_in(&["vectors", "search", "-n", "docs", "-k", "3"], &many)
        .ok();
    let four = cli
        .run_in(
            &[
                "vectors",
                "search",
                "-n",
                "docs",
                "-k",
                "3",
                "--concurrency",
                "4",
            ],
            &many,
        )
        .ok();
    assert_eq!(one_by_one.stdout, four.stdout);
    let ids: Vec<i64> = four
        .json_lines()
        .iter()
        .filter_map(|l| l["id"].as_i64())
        .collect();
    assert_eq!(ids, (0..40).collect::<Vec<i64>>());

    let deleted = cli
        .run(&[
            "vectors", "delete", "-n", "docs", "doc-0", "doc-1", "no-such",
        ])
        .ok();
    assert!(
        deleted.stdout.contains("deleted 2 of 3"),
        "{}",
        deleted.stdout
    );
    let stats = cli
        .run(&["vectors", "stats", "-n", "docs", "--json"])
        .ok()
        .json();
    assert_eq!(stats["documents"], 2_498);
}

#[test]
fn upsert_counts_distinct_ids() {
    let cli = Cli::new();
    let lines = concat!(
        r#"{"id": "a", "content": "first version"}"#,
        "\n",
        r#"{"id": "b", "content": "another"}"#,
        "\n",
        r#"{"id": "a", "content": "second version"}"#,
        "\n",
    );
    // batches of one: the repeated id is in a later batch
    let run = cli
        .run_in(
            &["vectors", "upsert", "-n", "docs", "--batch-size", "1"],
            lines,
        )
        .ok();
    assert!(
        run.stderr
            .contains("upserted 2 documents into namespace `docs` from 3 lines (1 repeated"),
        "{}",
        run.stderr
    );
    let stats = cli.run(&["vectors", "stats", "-n", "docs", "--json"]).ok();
    assert_eq!(stats.json()["documents"], 2);
}

/// The display column where `needle` starts in `line` (by terminal width).
fn column_of(line: &str, needle: &str) -> usize {
    let at = line
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in {line}"));
    line[..at].width()
}

#[test]
fn tables_align_cjk_and_emoji_and_cut_wide_values() {
    let cli = Cli::new();
    let long = format!("shared {}", "長い文章 with words ".repeat(40));
    let docs = [
        ("東京", "shared 東京の天気 weather"),
        ("🦀", "shared 🦀 crab emoji 🎉"),
        ("plain", "shared plain ascii"),
        ("long", long.as_str()),
    ]
    .iter()
    .map(|(id, content)| serde_json::json!({"id": id, "content": content}).to_string() + "\n")
    .collect::<String>();
    cli.run_in(&["vectors", "upsert", "-n", "docs"], &docs).ok();
    let mut search = cli.command(&["vectors", "search", "-n", "docs", "-k", "10", "shared"]);
    search.env("COLUMNS", "100");
    let run = run_with(search, "").ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", run.stdout);
    let content_at = column_of(lines[0], "CONTENT");
    let id_at = column_of(lines[0], "ID");
    for line in &lines[1..] {
        let content = line
            .split("  ")
            .filter(|c| !c.is_empty())
            .last()
            .unwrap_or("");
        assert_eq!(
            column_of(line, content.trim()),
            content_at,
            "{}",
            run.stdout
        );
        let id = line[..].split_whitespace().nth(1).unwrap_or("");
        assert_eq!(column_of(line, id), id_at, "{}", run.stdout);
        assert!(line.width() <= 100, "{} columns: {line}", line.width());
    }
    let cut = lines
        .iter()
        .find(|l| l.contains("長い"))
        .expect("the long document");
    assert!(cut.ends_with('…'), "{cut}");
    // JSON keeps the whole value
    let json = cli
        .run(&["vectors", "search", "-n", "docs", "--json", "shared"])
        .ok()
        .json();
    let whole = json
        .as_array()
        .and_then(|hits| hits.iter().find(|h| h["id"] == "long"))
        .expect("long hit");
    assert_eq!(whole["content"], long.as_str());
}

#[test]
fn a_malformed_line_stops_the_load_before_its_batch_is_written() {
    let cli = Cli::new();
    let mut input = documents(0..3);
    input.push_str("{\"id\": \"doc-3\", \"content\": \n");
    input.push_str(&documents(4..6));
    let run = cli.run_in(
        &["vectors", "upsert", "-n", "docs", "--batch-size", "2"],
        &input,
    );
    assert_eq!(run.code, 1);
    assert!(
        run.error().starts_with("agentmem: stdin line 4:"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("batch of lines 3-4"), "{}", run.stderr);
    let stats = cli
        .run(&["vectors", "stats", "-n", "docs", "--json"])
        .ok()
        .json();
    assert_eq!(stats["documents"], 2, "only the first, complete batch");

    let file = cli.path("bad.jsonl");
    write(
        &file,
        "{\"id\": \"a\", \"content\": \"fine\"}\n{\"id\": \"\", \"content\": \"no id\"}\n",
    );
    let run = cli.run(&[
        "vectors",
        "upsert",
        "-n",
        "other",
        "-f",
        file.to_str().expect("path"),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("bad.jsonl line 2: `id` is empty"),
        "{}",
        run.stderr
    );
    let stats = cli
        .run(&["vectors", "stats", "-n", "other", "--json"])
        .ok()
        .json();
    assert_eq!(stats["documents"], 0);

    let queries = "{\"id\": \"q1\", \"query\": \"x\"}\n{\"query\": \"no id\"}\n";
    let run = cli.run_in(&["vectors", "search", "-n", "docs"], queries);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("stdin line 2"), "{}", run.stderr);
    assert_eq!(run.json_lines().len(), 1, "the first query was answered");
}

// ---------------------------------------------------------------- chat and sessions

fn conversation_id(chat: &Run) -> String {
    let first = chat.stdout.lines().next().expect("a first line");
    first
        .strip_prefix("conversation ")
        .and_then(|rest| rest.split_whitespace().next())
        .expect("conversation id")
        .to_owned()
}

#[test]
fn chat_resumes_across_runs_and_injects_facts() {
    let cli = Cli::new();
    let first = cli
        .run_in(
            &[
                "chat",
                "--user",
                "bob",
                "--agent-prompt",
                "You are a travel agent.",
            ],
            "I'm Bob and I live in Rome\n\nI love sailing\n",
        )
        .ok();
    assert!(first.stdout.contains("(new)"), "{}", first.stdout);
    assert!(
        first.stdout.contains("+ learned: lives in Rome"),
        "{}",
        first.stdout
    );
    assert!(first.stdout.contains("+ learned: likes sailing"));
    assert!(first.stdout.contains("memory: no facts injected"));
    let id = conversation_id(&first);

    let second = cli
        .run_in(
            &["chat", "--user", "bob"],
            "Any sailing ideas near Rome for the weekend?\n",
        )
        .ok();
    assert_eq!(
        conversation_id(&second),
        id,
        "the last conversation resumes"
    );
    assert!(
        second.stdout.contains("(resumed, 4 messages)"),
        "{}",
        second.stdout
    );
    let injected = second
        .stdout
        .lines()
        .find(|l| l.contains("facts injected"))
        .expect("injected line");
    assert!(
        injected.contains("lives in Rome") && injected.contains("likes sailing"),
        "{injected}"
    );

    let fresh = cli
        .run_in(&["chat", "--user", "bob", "--new"], "hello\n")
        .ok();
    assert_ne!(conversation_id(&fresh), id);
    assert!(fresh.stdout.contains("(new)"));
    let back = cli
        .run_in(&["chat", "--user", "bob", "--conversation", &id], "")
        .ok();
    assert!(
        back.stdout.contains("(resumed, 6 messages)"),
        "{}",
        back.stdout
    );

    let stolen = cli.run_in(&["chat", "--user", "eve", "--conversation", &id], "hi\n");
    assert_eq!(stolen.code, 1);
    assert!(
        stolen.stderr.contains("belongs to another user"),
        "{}",
        stolen.stderr
    );
}

/// Issue 38 item 5: a message in a language the rules do not read is kept, and the run
/// says so once per language.
#[test]
fn chat_and_ingest_say_once_that_facts_are_read_from_english_only() {
    let cli = Cli::new();
    let chat = cli
        .run_in(
            &["chat", "--user", "amelie"],
            "Je suis allergique aux arachides, même une petite trace me rend malade.\n\
             Mon frère travaille comme infirmier dans un hôpital de Marseille.\n\
             I live in Lisbon with my partner\n",
        )
        .ok();
    let notes: Vec<&str> = chat
        .stdout
        .lines()
        .filter(|l| l.contains("note:"))
        .collect();
    assert_eq!(
        notes,
        ["  note: French message: kept as an earlier message; facts are extracted from English only"],
        "{}",
        chat.stdout
    );
    assert!(
        chat.stdout.contains("+ learned: lives in Lisbon"),
        "{}",
        chat.stdout
    );
    // Nothing dropped: both French messages are in the log.
    let id = conversation_id(&chat);
    let export = cli.run(&["sessions", "export", &id]).ok();
    assert!(export.stdout.contains("arachides") && export.stdout.contains("Marseille"));

    let lines = concat!(
        r#"{"role": "user", "content": "Ich wohne seit drei Jahren mit meiner Freundin in Hamburg."}"#,
        "\n",
        r#"{"role": "user", "content": "Ich bin allergisch gegen Nüsse und Erdnüsse."}"#,
        "\n",
        r#"{"role": "user", "content": "I love surfing"}"#,
        "\n",
    );
    let run = cli.run_in(&["ingest", "--user", "jonas"], lines).ok();
    assert_eq!(
        run.stderr.lines().filter(|l| l.contains("extracted from English only")).collect::<Vec<_>>(),
        ["agentmem: 2 German message(s): kept as earlier messages; facts are extracted from English only"],
        "{}",
        run.stderr
    );
    let report = cli
        .run_in(
            &[
                "ingest",
                "--user",
                "jonas",
                "--conversation",
                "c2",
                "--json",
            ],
            lines,
        )
        .ok()
        .json();
    assert_eq!(
        report["unread_languages"][0]["language"], "German",
        "{report}"
    );
    assert_eq!(report["unread_languages"][0]["messages"], 2, "{report}");
    assert_eq!(report["episodes"], 3, "{report}");
}

#[test]
fn sessions_list_show_export_import_delete() {
    let cli = Cli::new();
    let chat = cli
        .run_in(&["chat", "-u", "alice"], "I live in Paris\nWhat's up?\n")
        .ok();
    let id = conversation_id(&chat);
    cli.run_in(&["chat", "-u", "bob"], "hello\n").ok();

    let all = cli.run(&["sessions", "list", "--json"]).ok().json();
    assert_eq!(all.as_array().expect("array").len(), 2);
    let mine = cli
        .run(&["sessions", "list", "--user", "alice", "--json"])
        .ok()
        .json();
    let mine = mine.as_array().expect("array");
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["id"], id.as_str());
    assert_eq!(mine[0]["user_id"], "alice");
    assert_eq!(mine[0]["agent"], "agentmem-chat");
    assert_eq!(mine[0]["messages"], 4);
    let table = cli.run(&["sessions", "list"]).ok();
    assert!(table.stdout.starts_with("ID") && table.stdout.contains("alice"));

    let shown = cli.run(&["sessions", "show", &id]).ok();
    assert!(shown.stdout.contains("user:     alice"), "{}", shown.stdout);
    assert!(shown.stdout.contains("[user] I live in Paris"));
    assert!(shown.stdout.contains("messages: 4"));
    let shown = cli.run(&["sessions", "show", &id, "--json"]).ok().json();
    assert!(shown["window_tokens"].as_u64().expect("tokens") > 0);
    assert_eq!(shown["messages"].as_array().expect("messages").len(), 4);

    let export = cli.run(&["sessions", "export", &id]).ok();
    assert_eq!(export.json()["version"], 1);
    let file = cli.path("chat.json");
    write(&file, &export.stdout);
    let path = file.to_str().expect("path");
    let imported = cli.run(&["sessions", "import", path, "--as", "copy"]).ok();
    assert!(imported
        .stdout
        .contains("imported conversation `copy` (4 messages)"));
    let again = cli.run(&["sessions", "import", path, "--as", "copy"]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    let copy = cli.run(&["sessions", "show", "copy", "--json"]).ok().json();
    assert_eq!(copy["user_id"], "alice");
    assert_eq!(copy["messages"], shown["messages"]);

    let future = export
        .stdout
        .replacen("\"version\": 1", "\"version\": 7", 1);
    write(&file, &future);
    let refused = cli.run(&["sessions", "import", path, "--as", "future"]);
    assert_eq!(refused.code, 1);
    assert!(refused
        .stderr
        .contains("unsupported conversation export version 7"));

    cli.run(&["sessions", "delete", "copy"]).ok();
    let missing = cli.run(&["sessions", "delete", "copy"]);
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("conversation `copy` not found"));
    let unknown = cli.run(&["sessions", "show", "nope"]);
    assert_eq!(unknown.code, 1);
    assert!(unknown.stderr.contains("`nope` not found"));
}

/// Two exported chats imported in the wrong order, the older one twice: the facts follow
/// when things were said, and `--as-of` reads the memory as it was.
#[test]
fn ingest_in_any_order_and_as_of_reads() {
    let cli = Cli::new();
    let winter = r#"{"role":"user","content":"I live in Norwich with my sister.","created_at":"2025-01-12T10:00:00Z"}
{"role":"assistant","content":"Norwich sounds lovely.","created_at":"2025-01-12T10:00:05Z"}
"#;
    let summer = r#"{"role":"user","content":"I moved to Exeter last week, the new flat is great.","created_at":"2025-06-20T10:00:00Z"}
{"role":"assistant","content":"Congratulations on the move!","created_at":"2025-06-20T10:00:05Z"}
"#;
    for (conversation, lines) in [("summer", summer), ("winter", winter), ("winter", winter)] {
        let run = cli.run_in(
            &["ingest", "--user", "maya", "--conversation", conversation],
            lines,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
    }

    let now = cli.run(&["facts", "list", "--user", "maya", "--json"]);
    assert_eq!(now.code, 0, "{}", now.stderr);
    let current: serde_json::Value = serde_json::from_str(&now.stdout).unwrap();
    let texts: Vec<String> = current
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["text"].as_str().unwrap().to_lowercase())
        .collect();
    assert!(texts.iter().any(|t| t.contains("exeter")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("norwich")), "{texts:?}");

    let then = cli.run(&[
        "facts",
        "list",
        "--user",
        "maya",
        "--as-of",
        "2025-03-01",
        "--json",
    ]);
    assert_eq!(then.code, 0, "{}", then.stderr);
    assert!(
        then.stdout.to_lowercase().contains("norwich"),
        "{}",
        then.stdout
    );
    assert!(
        !then.stdout.to_lowercase().contains("exeter"),
        "{}",
        then.stdout
    );

    let block = |args: &[&str]| {
        let run = cli.run(args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        answer["block"].as_str().unwrap_or_default().to_lowercase()
    };
    let asked = [
        "recall", "--user", "maya", "--json", "where", "do", "I", "live?",
    ];
    let today = block(&asked);
    assert!(today.contains("exeter"), "{today}");
    assert!(
        !today.contains("lives in norwich") || today.contains("no longer true"),
        "a closed fact is never shown as current: {today}"
    );
    let mut as_of = asked.to_vec();
    as_of.splice(3..3, ["--as-of", "2025-03-01"]);
    let in_march = block(&as_of);
    assert!(in_march.contains("norwich"), "{in_march}");
    assert!(
        !in_march.contains("exeter"),
        "nothing said after the as-of date: {in_march}"
    );
}

// ---------------------------------------------------------------- issue 38: small things

/// A store and commands with no embedding model anywhere (an empty model directory), so
/// what the facts carry does not depend on the machine's cache.
fn without_model(cli: &Cli, args: &[&str], stdin: &str) -> Run {
    let mut command = cli.command(args);
    command.env("AGENTMEM_MODEL_DIR", cli.path("no-model"));
    command.env_remove("AGENTMEM_EMBED_MODEL");
    run_with(command, stdin)
}

#[test]
fn ingest_names_the_line_and_the_accepted_formats_of_a_bad_date() {
    let cli = Cli::new();
    let lines = concat!(
        r#"{"role": "user", "content": "I live in Lisbon", "created_at": "2024-05-03T18:00:00Z"}"#,
        "\n",
        r#"{"role": "assistant", "content": "Nice!", "created_at": "2024-05-03 18:01:00"}"#,
        "\n",
        r#"{"role": "user", "content": "I love surfing", "created_at": "03/05/2024"}"#,
        "\n",
    );
    let run = cli.run_in(&["ingest", "--user", "rui"], lines);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let error = run.error();
    assert!(error.contains("stdin line 3"), "{error}");
    assert!(error.contains("`03/05/2024`"), "{error}");
    for format in [
        "RFC 3339",
        "2024-05-03T18:00:00Z",
        "2024-05-03 18:00:00",
        "2024-05-03 (midnight UTC)",
    ] {
        assert!(error.contains(format), "{format} not named: {error}");
    }
    // A number is not a time either, and is named the same way.
    let run = cli.run_in(
        &["ingest", "--user", "rui"],
        "{\"role\": \"user\", \"content\": \"hi\", \"created_at\": 1714759200}\n",
    );
    assert_eq!(run.code, 1);
    assert!(
        run.error().contains("stdin line 1") && run.error().contains("RFC 3339"),
        "{}",
        run.error()
    );
    // Nothing was written.
    let sessions = cli.run(&["sessions", "list", "--json"]).ok().json();
    assert_eq!(sessions.as_array().map(Vec::len), Some(0), "{sessions}");

    // Every accepted form goes in, at its own time.
    let lines = concat!(
        r#"{"role": "user", "content": "I live in Lisbon", "created_at": "2024-05-03T18:00:00Z"}"#,
        "\n",
        r#"{"role": "assistant", "content": "Nice!", "created_at": "2024-05-03 18:01:00"}"#,
        "\n",
        r#"{"role": "user", "content": "I love surfing", "created_at": "2024-05-04"}"#,
        "\n",
    );
    let report = cli
        .run_in(
            &["ingest", "--user", "rui", "--conversation", "c1", "--json"],
            lines,
        )
        .ok()
        .json();
    assert_eq!(report["messages"], 3, "{report}");
    let export = cli.run(&["sessions", "export", "c1"]).ok();
    assert!(
        export.stdout.contains("2024-05-03T18:01:00"),
        "{}",
        export.stdout
    );
    assert!(
        export.stdout.contains("2024-05-04T00:00:00"),
        "{}",
        export.stdout
    );
}

#[test]
fn ingest_refuses_a_message_over_the_limit_naming_its_line_and_writes_nothing() {
    let cli = Cli::new();
    let big = "a".repeat(2 * 1024 * 1024);
    let lines = format!(
        "{{\"role\": \"user\", \"content\": \"I live in Lisbon\"}}\n{{\"role\": \"user\", \"content\": \"{big}\"}}\n"
    );
    let run = cli.run_in(&["ingest", "--user", "rui"], &lines);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let error = run.error();
    assert!(
        error.contains("stdin line 2")
            && error.contains("message is too large: 2097152 bytes (limit 1048576)")
            && error.contains("--max-message-bytes"),
        "{error}"
    );
    let sessions = cli.run(&["sessions", "list", "--json"]).ok().json();
    assert_eq!(sessions.as_array().map(Vec::len), Some(0), "{sessions}");
    let facts = cli
        .run(&["facts", "list", "-u", "rui", "--json"])
        .ok()
        .json();
    assert_eq!(facts.as_array().map(Vec::len), Some(0), "{facts}");

    // At the limit it passes; one byte over, it does not.
    let line = |n: usize| {
        format!(
            "{{\"role\": \"user\", \"content\": \"{}\"}}\n",
            "b".repeat(n)
        )
    };
    let over = cli.run_in(
        &["ingest", "-u", "rui", "--max-message-bytes", "1000"],
        &line(1001),
    );
    assert_eq!(over.code, 1);
    assert!(
        over.error().contains("1001 bytes (limit 1000)"),
        "{}",
        over.error()
    );
    let at = cli
        .run_in(
            &[
                "ingest",
                "-u",
                "rui",
                "--max-message-bytes",
                "1000",
                "--json",
            ],
            &line(1000),
        )
        .ok()
        .json();
    assert_eq!(at["messages"], 1, "{at}");
    let zero = cli.run_in(
        &["ingest", "-u", "rui", "--max-message-bytes", "0"],
        &line(1),
    );
    assert_eq!(zero.code, 2, "{}", zero.stderr);
}

#[test]
fn chat_refuses_a_message_over_the_limit_and_goes_on() {
    let cli = Cli::new();
    let big = "a".repeat(2 * 1024 * 1024);
    let stdin = format!("I live in Lisbon\n{big}\nI love surfing\n");
    let run = cli.run_in(&["chat", "--user", "rui"], &stdin);
    assert_eq!(
        run.code, 1,
        "the refusal shows in the exit code\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("message is too large: 2097152 bytes (limit 1048576)"),
        "{}",
        run.stderr
    );
    // The messages before and after it were answered and remembered.
    assert!(
        run.stdout.contains("+ learned: lives in Lisbon"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("+ learned: likes surfing"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.matches("assistant: ").count(),
        2,
        "{}",
        run.stdout
    );
    let id = conversation_id(&run);
    let shown = cli.run(&["sessions", "show", &id, "--json"]).ok();
    assert!(
        !shown.stdout.contains("aaaaaaaaaa"),
        "the big message was logged"
    );

    // --max-message-bytes sets another limit.
    let run = cli.run_in(
        &["chat", "-u", "rui", "--max-message-bytes", "10"],
        "hello there, you\n",
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("16 bytes (limit 10)"), "{}", run.stderr);
}

#[test]
fn facts_json_leaves_out_embeddings_unless_asked() {
    let source = Cli::new();
    without_model(
        &source,
        &[
            "facts",
            "add",
            "-u",
            "ana",
            "I live in Lisbon and I love surfing",
        ],
        "",
    )
    .ok();
    let export = without_model(&source, &["facts", "export", "-u", "ana"], "").ok();
    // Give every fact an embedding, as a store with the model keeps them.
    let mut doc = export.json();
    for fact in doc["facts"].as_array_mut().expect("facts") {
        fact["embedding"] = serde_json::json!([0.6, 0.8]);
    }
    let cli = Cli::new();
    without_model(&cli, &["facts", "import"], &doc.to_string()).ok();
    let has_embedding = |value: &Value| value.to_string().contains("\"embedding\"");

    for args in [
        &["facts", "list", "-u", "ana", "--json"][..],
        &["facts", "list", "-u", "ana", "--json", "--history"],
        &[
            "facts",
            "list",
            "-u",
            "ana",
            "--json",
            "--as-of",
            "2999-01-01",
        ],
        &["facts", "search", "-u", "ana", "--json", "surfing"],
    ] {
        let plain = without_model(&cli, args, "").ok().json();
        assert!(
            plain.as_array().is_some_and(|a| !a.is_empty()),
            "{args:?}: {plain}"
        );
        assert!(
            !has_embedding(&plain),
            "{args:?} printed embeddings: {plain}"
        );
        let mut with = args.to_vec();
        with.push("--with-embeddings");
        let full = without_model(&cli, &with, "").ok().json();
        assert!(
            has_embedding(&full),
            "{with:?} left out the embeddings: {full}"
        );
    }
}
