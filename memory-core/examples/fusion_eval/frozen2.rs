//! The second pair of **frozen** sets of `fusion_eval` (loaded only with `--frozen2`):
//! derived mechanically from the multi-session conversations of the episodes evaluation
//! (`tests/data/episodes_eval/`) through relations `fusion_eval` had never read before
//! this file was committed (the commit says so). The messages themselves are documents
//! of the seen episodes sets; what is new is every query and every label:
//!
//! - **conv-values**: every distinct answer string and stale (`wrong`) string of
//!   `questions.jsonl` becomes a query of its own ("58 minutes", "Brightside",
//!   "knee replacement"), asked of all 542 messages in one index; its answers are the
//!   messages holding it (matched as the episodes sets match answers: case, spacing,
//!   curly quotes ignored, word boundaries at its ends). A lookup by a bare value in long
//!   multi-session conversations, where words should win. Strings no message holds are
//!   no query. MRR.
//! - **conv-replies**: every assistant message is a query for the user message it
//!   answers (the message just before it in its conversation), among the 271 user
//!   messages of all nine people in one index ("How old is he?" → "my little brother
//!   Zayn is already asking…"): what a reply in a conversation refers to. MRR.
//!
//! No fusion constant was chosen on either set: the choice is committed before their
//! first run (see `bench/results/fusion.md`).

use std::collections::BTreeMap;

use super::{contains_answer, json, normalise, Query, Set};

/// One message of `conversations.jsonl`: its conversation, role and text.
struct Message {
    conversation: String,
    role: String,
    content: String,
}

fn messages(conversations: &str) -> Vec<Message> {
    conversations
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let m = json(line);
            let field = |name: &str| m[name].as_str().expect("message field").to_owned();
            Message {
                conversation: field("conversation"),
                role: field("role"),
                content: field("content"),
            }
        })
        .collect()
}

/// **conv-values**: each distinct answer or stale string of the episodes questions asks
/// for the messages (all users pooled) that hold it. MRR.
pub fn conv_values() -> Set {
    values_from(
        "conv-values",
        include_str!("../../../tests/data/episodes_eval/conversations.jsonl"),
        include_str!("../../../tests/data/episodes_eval/questions.jsonl"),
    )
}

/// The conv-values construction over any conversations and questions in the format of
/// `tests/data/episodes_eval/`.
pub fn values_from(name: &'static str, conversations: &str, questions: &str) -> Set {
    let docs: Vec<String> = messages(conversations)
        .into_iter()
        .map(|m| m.content)
        .collect();
    let normalised: Vec<String> = docs.iter().map(|d| normalise(d)).collect();
    // Distinct strings (normalised), each with the text it was first written as.
    let mut strings: BTreeMap<String, String> = BTreeMap::new();
    for line in questions.lines().filter(|l| !l.trim().is_empty()) {
        let q = json(line);
        for field in ["answer", "wrong"] {
            for s in q[field].as_array().into_iter().flatten() {
                let text = s.as_str().expect("answer string");
                strings
                    .entry(normalise(text))
                    .or_insert_with(|| text.to_owned());
            }
        }
    }
    let queries: Vec<Query> = strings
        .into_iter()
        .filter_map(|(needle, text)| {
            let answers: Vec<usize> = (0..docs.len())
                .filter(|&i| contains_answer(&normalised[i], &needle))
                .collect();
            (!answers.is_empty()).then_some(Query {
                text,
                answers,
                exclude: Vec::new(),
            })
        })
        .collect();
    Set {
        name,
        groups: vec![(docs, Vec::new(), queries)],
        k: 0,
    }
}

/// **conv-replies**: each assistant message asks for the user message it answers, among
/// every user message of every conversation (one index). MRR.
pub fn conv_replies() -> Set {
    replies_from(
        "conv-replies",
        include_str!("../../../tests/data/episodes_eval/conversations.jsonl"),
    )
}

/// The conv-replies construction over any conversations in the format of
/// `tests/data/episodes_eval/`.
pub fn replies_from(name: &'static str, conversations: &str) -> Set {
    let all = messages(conversations);
    let mut docs: Vec<String> = Vec::new();
    let mut queries: Vec<Query> = Vec::new();
    // The document index of the last user message, and its conversation.
    let mut last_user: Option<(usize, &str)> = None;
    for m in &all {
        if m.role == "user" {
            last_user = Some((docs.len(), m.conversation.as_str()));
            docs.push(m.content.clone());
        } else if let Some((at, conversation)) = last_user {
            if conversation == m.conversation {
                queries.push(Query {
                    text: m.content.clone(),
                    answers: vec![at],
                    exclude: Vec::new(),
                });
            }
        }
    }
    Set {
        name,
        groups: vec![(docs, Vec::new(), queries)],
        k: 0,
    }
}
