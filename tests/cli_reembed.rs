//! `agentmem reembed` end to end with the real model: facts and documents stored while no
//! model was on are embedded on demand and then found by meaning; a second run has
//! nothing to do; `--all` embeds everything again; a model of another name is detected
//! and its vectors replaced.
//!
//! Needs `AGENTMEM_EMBED_MODEL` naming the model directory (`.ci/embed.sh` sets it): the
//! tests fail without it under `CI=true` and are skipped with a message otherwise.
#![cfg(feature = "local-embed")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The real model directory, or `None` (with a message) outside CI.
fn model_dir() -> Option<PathBuf> {
    match std::env::var("AGENTMEM_EMBED_MODEL") {
        Ok(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "AGENTMEM_EMBED_MODEL must be set in CI (.ci/embed.sh)"
            );
            eprintln!("skipping: set AGENTMEM_EMBED_MODEL to the model directory to run");
            None
        }
    }
}

/// `agentmem ARGS` (stdin `input`), with only the variables of `env` among the model's and
/// the store's.
fn agentmem(args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmem"));
    for var in [
        "AGENTMEM_EMBED_MODEL",
        "AGENTMEM_MODEL_DIR",
        "AGENTMEM_STORE_URL",
        "RUST_LOG",
        "AGENTMEM_LOG",
    ] {
        command.env_remove(var);
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("run agentmem");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for agentmem")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// The model's files under another directory name: the same weights, another model name.
fn renamed_model(dir: &Path, into: &Path) -> PathBuf {
    let other = into.join("minilm-renamed");
    std::fs::create_dir_all(&other).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        if std::fs::hard_link(dir.join(f), other.join(f)).is_err() {
            std::fs::copy(dir.join(f), other.join(f)).unwrap();
        }
    }
    other
}

#[test]
fn reembed_embeds_what_was_stored_without_the_model() {
    let Some(dir) = model_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", tmp.path().join("memory.db").display());
    let empty_cache = tmp.path().join("no-model");
    let no_model = [("AGENTMEM_MODEL_DIR", empty_cache.to_str().unwrap())];
    let with_model = [
        ("AGENTMEM_EMBED_MODEL", dir.to_str().unwrap()),
        ("AGENTMEM_MODEL_DIR", empty_cache.to_str().unwrap()),
    ];

    // Written while no model is on: no vectors.
    for fact in ["I am allergic to peanuts", "I play the cello on weekends"] {
        ok(agentmem(
            &["--store", &store, "facts", "add", "--user", "u", fact],
            &no_model,
            "",
        ));
    }
    let docs = "{\"id\":\"boiler\",\"content\":\"The boiler was serviced in March\"}\n\
                {\"id\":\"ferry\",\"content\":\"The ferry to the islands leaves at nine\"}\n\
                {\"id\":\"invoice\",\"content\":\"Invoices are due at the end of the month\"}\n";
    ok(agentmem(
        &[
            "--store",
            &store,
            "vectors",
            "upsert",
            "--namespace",
            "notes",
        ],
        &no_model,
        docs,
    ));

    // Without the model, reembed is a usage error saying how to get it.
    let refused = agentmem(&["--store", &store, "reembed"], &no_model, "");
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("agentmem model fetch"));

    let first = ok(agentmem(
        &["--store", &store, "reembed", "--json", "--batch", "2"],
        &with_model,
        "",
    ));
    let summary = json(&first);
    assert_eq!(summary["embedded"], 5, "{summary}");
    assert_eq!(summary["dropped"], 0, "{summary}");
    assert_eq!(summary["model"], "all-minilm-l6-v2", "{summary}");
    assert_eq!(summary["dimension"], 384, "{summary}");
    // No terminal: no progress bar on stderr.
    assert!(first.stderr.is_empty(), "{}", text(&first.stderr));

    // Found by meaning: no word of the query is in the document.
    let hits = json(&ok(agentmem(
        &[
            "--store",
            &store,
            "vectors",
            "search",
            "--namespace",
            "notes",
            "--json",
            "-k",
            "1",
            "heating",
            "maintenance",
        ],
        &with_model,
        "",
    )));
    assert_eq!(hits[0]["id"], "boiler", "{hits}");
    let facts = json(&ok(agentmem(
        &[
            "--store", &store, "facts", "search", "--user", "u", "--json", "-k", "1", "nut",
            "allergy",
        ],
        &with_model,
        "",
    )));
    assert_eq!(
        facts[0]["fact"]["text"], "is allergic to peanuts",
        "{facts}"
    );
    assert!(facts[0]["relevance"].as_f64().unwrap() > 0.3, "{facts}");

    let again = ok(agentmem(&["--store", &store, "reembed"], &with_model, ""));
    let said = text(&again.stdout);
    assert!(said.starts_with("embedded 0 "), "{said}");

    let all = json(&ok(agentmem(
        &["--store", &store, "reembed", "--all", "--json"],
        &with_model,
        "",
    )));
    assert_eq!(
        (all["dropped"].clone(), all["embedded"].clone()),
        (5.into(), 5.into()),
        "{all}"
    );
    assert_eq!(all["model_changed"], false, "{all}");

    // Another model (same files under another name): detected, its vectors replaced.
    let renamed = renamed_model(&dir, tmp.path());
    let other = [
        ("AGENTMEM_EMBED_MODEL", renamed.to_str().unwrap()),
        ("AGENTMEM_MODEL_DIR", empty_cache.to_str().unwrap()),
    ];
    let changed = ok(agentmem(&["--store", &store, "reembed"], &other, ""));
    let said = text(&changed.stdout);
    assert!(
        said.starts_with("embedded 5 ") && said.contains("minilm-renamed (384 dimensions)"),
        "{said}"
    );
    assert!(
        said.contains("dropped 5 old vector(s) (made by another model)"),
        "{said}"
    );
}
