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

use super::holdout::{episodes_set, read_in};
use super::{frozen2, Set, CHUNK};

/// The long-conversation sets, every query in the held-out part.
pub fn sets() -> Vec<Set> {
    let conversations = read_in("long_conversations", "conversations.jsonl");
    let questions = read_in("long_conversations", "questions.jsonl");
    let data = (conversations.as_str(), questions.as_str());
    vec![
        episodes_set("lc-episodes", data, false, 1, 5),
        episodes_set("lc-chunks", data, true, CHUNK, 1),
        frozen2::values_from("lc-values", &conversations, &questions),
    ]
}
