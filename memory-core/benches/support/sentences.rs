//! Real conversation sentences from the repository's frozen evaluation data, for measuring
//! the embedder on what users send: every message of the multi-session conversations
//! (`tests/data/episodes_eval/conversations.jsonl`, 542), then the questions asked about
//! them (`questions.jsonl`, 185), then the extraction set's user turns
//! (`tests/data/extraction.jsonl`, 335), in file order. All written by hand, none
//! generated.

use std::path::{Path, PathBuf};

/// The workspace's `tests/data` directory.
fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

/// The string field `field` of every JSON line of `file`.
fn field_of_lines(file: &Path, field: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", file.display()));
            value[field]
                .as_str()
                .unwrap_or_else(|| panic!("{}: a line without `{field}`", file.display()))
                .to_owned()
        })
        .collect()
}

/// The first `n` real sentences (at most 1,062), in a fixed order.
pub fn real_sentences(n: usize) -> Vec<String> {
    let dir = data_dir();
    let episodes = dir.join("episodes_eval");
    let mut all = field_of_lines(&episodes.join("conversations.jsonl"), "content");
    all.extend(field_of_lines(&episodes.join("questions.jsonl"), "query"));
    all.extend(field_of_lines(&dir.join("extraction.jsonl"), "text"));
    assert!(
        all.len() >= n,
        "only {} real sentences, {n} wanted",
        all.len()
    );
    all.truncate(n);
    all
}
