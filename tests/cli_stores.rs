//! The `agentmem` binary never keeps records only in memory behind a durable-looking URL:
//! `file://` keeps facts and documents across runs, a backend this build lacks is a usage
//! error (exit 2) naming the feature, blank values are usage errors, and `-v` / `RUST_LOG`
//! turn logging on.
#![cfg(feature = "cli")]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

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

    /// Stderr without the leading `note: ` lines the CLI may print.
    fn error(&self) -> String {
        self.stderr
            .lines()
            .filter(|line| !line.starts_with("note: "))
            .collect::<Vec<_>>()
            .join("\n")
    }

    // used by the `file` and `postgres` tests only
    #[cfg_attr(not(any(feature = "file", feature = "postgres")), allow(dead_code))]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmem"));
    for var in ["AGENTMEM_STORE_URL", "RUST_LOG", "AGENTMEM_LOG"] {
        command.env_remove(var);
    }
    command
}

/// Runs `agentmem ARGS` with `stdin`, in a process of its own.
fn run(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut command = binary();
    command.args(args).envs(env.iter().copied());
    run_command(command, stdin)
}

fn run_command(mut command: Command, stdin: &str) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentmem");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let output = child.wait_with_output().expect("wait agentmem");
    writer.join().expect("stdin writer");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[cfg(feature = "file")]
#[test]
fn file_store_keeps_facts_and_documents_across_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("store").display());
    let url = url.as_str();

    // first process: write a fact and two documents
    let added = run(
        &[
            "--store",
            url,
            "facts",
            "add",
            "--user",
            "ada",
            "--json",
            "I live in Lisbon",
        ],
        "",
        &[],
    )
    .ok();
    assert!(added.stdout.contains("Lisbon"), "{}", added.stdout);
    let docs = concat!(
        r#"{"id": "tea", "content": "green tea from Japan"}"#,
        "\n",
        r#"{"id": "bread", "content": "sourdough bread baking"}"#,
        "\n",
        r#"{"id": "tea", "content": "green tea from Japan, again"}"#,
        "\n",
    );
    run(
        &["--store", url, "vectors", "upsert", "--namespace", "notes"],
        docs,
        &[],
    )
    .ok();

    // later processes: both are there
    let facts = run(
        &["--store", url, "facts", "list", "--user", "ada", "--json"],
        "",
        &[],
    )
    .ok()
    .json();
    let texts: Vec<&str> = facts
        .as_array()
        .expect("an array of facts")
        .iter()
        .filter_map(|f| f["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 1, "{facts}");
    assert!(texts[0].contains("Lisbon"), "{texts:?}");

    let stats = run(
        &[
            "--store",
            url,
            "vectors",
            "stats",
            "--namespace",
            "notes",
            "--json",
        ],
        "",
        &[],
    )
    .ok()
    .json();
    assert_eq!(stats["documents"], 2, "{stats}");
    let hits = run(
        &[
            "--store",
            url,
            "vectors",
            "search",
            "--namespace",
            "notes",
            "--json",
            "sourdough",
        ],
        "",
        &[],
    )
    .ok()
    .json();
    assert_eq!(hits[0]["id"], "bread", "{hits}");
    let found = run(
        &[
            "--store", url, "facts", "search", "--user", "ada", "--json", "Lisbon",
        ],
        "",
        &[],
    )
    .ok()
    .json();
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found}");
    // on disk, one file per user and per namespace
    assert!(dir.path().join("store/facts/ada.json").exists());
    assert!(dir.path().join("store/vectors/notes.json").exists());
}

/// A URL whose backend is not compiled in is refused at start, naming the feature.
#[cfg(not(all(feature = "file", feature = "redis", feature = "postgres")))]
fn assert_refused_for_lack_of(url: &str, feature: &str) {
    let run = run(&["--store", url, "vectors", "stats", "-n", "x"], "", &[]);
    assert_eq!(run.code, 2, "{url}: {}", run.stderr);
    let error = run.error();
    assert!(error.starts_with("agentmem: "), "{error}");
    assert!(error.contains(&format!("`{feature}` feature")), "{error}");
    assert!(
        error.contains(&format!("--features cli,{feature}")),
        "{error}"
    );
}

#[cfg(not(feature = "file"))]
#[test]
fn file_store_without_the_feature_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("store").display());
    assert_refused_for_lack_of(&url, "file");
    assert!(!dir.path().join("store").exists(), "nothing was created");
}

#[cfg(not(feature = "redis"))]
#[test]
fn redis_without_the_feature_is_a_usage_error() {
    assert_refused_for_lack_of("redis://127.0.0.1:1/", "redis");
}

#[cfg(not(feature = "postgres"))]
#[test]
fn postgres_without_the_feature_is_a_usage_error_hiding_the_password() {
    assert_refused_for_lack_of("postgres://me:hunter2@127.0.0.1:1/db", "postgres");
    let run = run(
        &[
            "--store",
            "postgres://me:hunter2@127.0.0.1:1/db",
            "vectors",
            "stats",
            "-n",
            "x",
        ],
        "",
        &[],
    );
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
}

#[test]
fn blank_store_user_and_namespace_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("a.db").display());
    let cases: Vec<Vec<&str>> = vec![
        vec!["--store", "", "vectors", "stats", "-n", "x"],
        vec!["--store", "  ", "facts", "list", "-u", "a"],
        vec!["--store", &url, "facts", "list", "--user", ""],
        vec!["--store", &url, "facts", "add", "--user", " ", "hello"],
        vec!["--store", &url, "chat", "--user", ""],
        vec!["--store", &url, "sessions", "list", "--user", ""],
        vec!["--store", &url, "vectors", "stats", "--namespace", ""],
        vec!["--store", &url, "vectors", "search", "-n", "\t", "query"],
    ];
    for args in cases {
        let mut command = binary();
        command.current_dir(dir.path()).args(&args);
        let run = run_command(command, "");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("must not be empty"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(
        !dir.path().join("agentmem.db").exists(),
        "no default store was created"
    );
    assert!(!dir.path().join("a.db").exists(), "nothing was opened");
}

#[test]
fn verbose_flags_and_rust_log_turn_logging_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("a.db").display());
    let args = ["--store", url.as_str(), "vectors", "stats", "-n", "x"];
    let quiet = run(&args, "", &[]).ok();
    assert!(!quiet.stderr.contains("store opened"), "{}", quiet.stderr);

    let verbose: Vec<&str> = ["-v"].into_iter().chain(args).collect();
    let loud = run(&verbose, "", &[]).ok();
    assert!(loud.stderr.contains("store opened"), "{}", loud.stderr);
    assert!(loud.stderr.contains("INFO"), "{}", loud.stderr);

    for var in ["RUST_LOG", "AGENTMEM_LOG"] {
        let from_env = run(&args, "", &[(var, "info")]).ok();
        assert!(
            from_env.stderr.contains("store opened"),
            "{var}: {}",
            from_env.stderr
        );
    }
    // -v wins over the environment
    let both = run(&verbose, "", &[("RUST_LOG", "error")]).ok();
    assert!(both.stderr.contains("store opened"), "{}", both.stderr);
}

#[test]
fn a_missing_embedding_model_is_a_usage_error_naming_the_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("a.db").display());
    let run = run(
        &["--store", &url, "vectors", "stats", "-n", "x"],
        "",
        &[("AGENTMEM_EMBED_MODEL", "/nonexistent/model")],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.error().contains("/nonexistent/model"), "{}", run.stderr);
}

/// `?schema=` in `--store` puts the tables in that schema (the CLI and `agentmem serve`
/// no longer always use `agentmem`), and an unknown parameter is a usage error naming it.
#[cfg(feature = "postgres")]
#[test]
fn postgres_url_parameters_reach_the_store() {
    let Ok(base) = std::env::var("AGENTMEM_POSTGRES_URL") else {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "AGENTMEM_POSTGRES_URL must be set in CI"
        );
        eprintln!("skipping: set AGENTMEM_POSTGRES_URL to run");
        return;
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let suffix = format!("{}_{nanos}", std::process::id());
    let url_a = format!("{base}{sep}schema=cli_a_{suffix}&pool_size=2&pool_min_size=1");
    let url_b = format!("{base}{sep}schema=cli_b_{suffix}");
    let user = format!("ada-{suffix}");
    let _cleanup = DropSchemas {
        url: base.clone(),
        schemas: vec![format!("cli_a_{suffix}"), format!("cli_b_{suffix}")],
    };
    run(
        &[
            "--store",
            &url_a,
            "facts",
            "add",
            "--user",
            &user,
            "I live in Lisbon",
        ],
        "",
        &[],
    )
    .ok();
    let count = |url: &str| {
        run(
            &["--store", url, "facts", "list", "--user", &user, "--json"],
            "",
            &[],
        )
        .ok()
        .json()
        .as_array()
        .map(Vec::len)
    };
    assert_eq!(count(&url_a), Some(1));
    assert_eq!(count(&url_b), Some(0), "another schema holds other tables");

    let bad = format!("{base}{sep}shcema=x");
    let refused = run(&["--store", &bad, "facts", "list", "--user", "x"], "", &[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.error().contains("`shcema`"), "{}", refused.stderr);
}

/// Drops the test's schemas at the end, best effort: through `psql` when it is on the PATH
/// (the facade's tests have no PostgreSQL client of their own).
#[cfg(feature = "postgres")]
struct DropSchemas {
    url: String,
    schemas: Vec<String>,
}

#[cfg(feature = "postgres")]
impl Drop for DropSchemas {
    fn drop(&mut self) {
        for schema in &self.schemas {
            let _ = Command::new("psql")
                .args([
                    self.url.as_str(),
                    "-qc",
                    &format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}
