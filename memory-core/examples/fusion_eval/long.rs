//! The **long-conversation** sets of `fusion_eval` (`--long`): the chat logs of
//! `tests/data/long_conversations/` (eight two-person logs of 320–436 messages, speaker
//! names on most lines), built the ways of the hold-out sets:
//!
//! - **lc-episodes**: each question over its own pair's messages, hit@5;
//! - **lc-chunks**: over passages of 6 messages of every pair pooled, hit@1;
//! - **lc-values**: every answer or stale string as a query for the messages holding
//!   it, MRR.
//!
//! Frozen before it was first run; read at run time, so the runner builds without it.

use std::path::PathBuf;

use super::{episodes_from, frozen2, Set, CHUNK};

fn read(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/long_conversations")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", path.display());
        std::process::exit(2);
    })
}

/// The long-conversation sets, every query in the held-out part.
pub fn sets() -> Vec<Set> {
    let conversations = read("conversations.jsonl");
    let questions = read("questions.jsonl");
    let episodes = |name: &'static str, pooled: bool, chunk: usize, k: usize| {
        let mut set = episodes_from(&conversations, &questions, pooled, chunk, &|_| false);
        set.name = name;
        set.k = k;
        set
    };
    vec![
        episodes("lc-episodes", false, 1, 5),
        episodes("lc-chunks", true, CHUNK, 1),
        frozen2::values_from("lc-values", &conversations, &questions),
    ]
}
