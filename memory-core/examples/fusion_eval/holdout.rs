//! The **hold-out** sets of `fusion_eval` (loaded only with `--holdout`): a data set
//! written by hand for this purpose by someone who had not seen the fusion code or its
//! results (`tests/data/fusion_holdout/`), read here for the first time after the fusion
//! to be judged on it was committed ([`super::HOLDOUT_CHOICE`]). The same six
//! constructions as the sets the fusion was chosen on, over new people and new pairs:
//!
//! - **ho-pairs** (`pairs.json`): statements and the question each answers, MRR (as
//!   *pairs*).
//! - **ho-episodes**, **ho-pooled**, **ho-chunks** (`conversations.jsonl`,
//!   `questions.jsonl`): the questions over each asker's own messages (hit@5), over every
//!   message pooled (hit@5), over passages of 6 messages pooled (hit@1), as the three
//!   episodes sets.
//! - **ho-values**, **ho-replies**: every answer or stale string as a query for the
//!   messages holding it, and every assistant message as a query for the user message it
//!   answers (MRR), as *conv-values* and *conv-replies*.
//!
//! The files are read at run time (not compiled in), so the runner builds without them.

use std::path::PathBuf;

use super::{episodes_from, frozen2, json, Query, Set, CHUNK};

/// The file `name` of the data set in `tests/data/{set}`; exits when it cannot be read.
pub fn read_in(set: &str, name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(set)
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", path.display());
        std::process::exit(2);
    })
}

fn read(name: &str) -> String {
    read_in("fusion_holdout", name)
}

/// An episodes set named `name` over `conversations` and `questions`: the questions over
/// each asker's own messages, or over every message `pooled`, in passages of `chunk`
/// messages, scored at hit@`k`.
pub fn episodes_set(
    name: &'static str,
    (conversations, questions): (&str, &str),
    pooled: bool,
    chunk: usize,
    k: usize,
) -> Set {
    let mut set = episodes_from(conversations, questions, pooled, chunk, &|_| false);
    set.name = name;
    set.k = k;
    set
}

/// **ho-pairs**: every statement of `pairs.json` is a document, every query's answer is
/// its own statement. MRR.
fn pairs() -> Set {
    let v = json(&read("pairs.json"));
    let mut statements = Vec::new();
    let mut queries = Vec::new();
    for pair in v["pairs"].as_array().expect("pairs") {
        queries.push(Query {
            text: pair["query"].as_str().expect("query").to_owned(),
            answers: vec![statements.len()],
            exclude: Vec::new(),
        });
        statements.push(pair["statement"].as_str().expect("statement").to_owned());
    }
    Set {
        name: "ho-pairs",
        groups: vec![(statements, Vec::new(), queries)],
        k: 0,
    }
}

/// The six hold-out sets, every query in the held-out part.
pub fn sets() -> Vec<Set> {
    let conversations = read("conversations.jsonl");
    let questions = read("questions.jsonl");
    let data = (conversations.as_str(), questions.as_str());
    let episodes = |name, pooled, chunk, k| episodes_set(name, data, pooled, chunk, k);
    vec![
        pairs(),
        episodes("ho-episodes", false, 1, 5),
        episodes("ho-pooled", true, 1, 5),
        episodes("ho-chunks", true, CHUNK, 1),
        frozen2::values_from("ho-values", &conversations, &questions),
        frozen2::replies_from("ho-replies", &conversations),
    ]
}
