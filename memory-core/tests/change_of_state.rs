//! Changes of state and corrections, end to end: each sequence of user messages in
//! `tests/data/change_of_state.jsonl` goes through the `RuleExtractor` and an
//! `InMemoryUserMemoryStore`; after each message the user's current facts (notes, events
//! and facts about other people aside) must be exactly the expected ones. At least 90% of sequences must be right throughout.
//!
//! `cargo test -p agentmemory-core --test change_of_state -- --nocapture` prints every
//! sequence that goes wrong.

use std::collections::BTreeSet;

use agentmemory_core::extract::RuleExtractor;
use agentmemory_core::facts::{InMemoryUserMemoryStore, MemoryFact, Polarity, UserMemoryStore};
use agentmemory_core::store_support::value_key;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Sequence {
    steps: Vec<String>,
    /// After each step: `attribute=value`, `attribute=-value` for a negative fact.
    expect: Vec<Vec<String>>,
}

fn load() -> Vec<Sequence> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/change_of_state.jsonl"
    );
    let data = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)))
        .collect()
}

fn key(attribute: &str, value: &str, polarity: Polarity) -> String {
    let sign = if polarity == Polarity::Negative {
        "-"
    } else {
        ""
    };
    format!("{attribute}={sign}{}", value_key(value))
}

fn expected(labels: &[String]) -> BTreeSet<String> {
    labels
        .iter()
        .map(|l| {
            let (a, v) = l.split_once('=').expect("attribute=value");
            match v.strip_prefix('-') {
                Some(v) => key(a, v, Polarity::Negative),
                None => key(a, v, Polarity::Positive),
            }
        })
        .collect()
}

fn held(facts: &[MemoryFact]) -> BTreeSet<String> {
    facts
        .iter()
        .filter(|f| !matches!(f.attribute.as_deref(), Some("note" | "event")))
        .filter(|f| f.subject.is_none())
        .map(|f| {
            key(
                f.attribute.as_deref().unwrap_or_default(),
                f.value.as_deref().unwrap_or_default(),
                f.polarity,
            )
        })
        .collect()
}

#[tokio::test]
async fn changes_of_state_end_with_the_expected_current_facts() {
    let sequences = load();
    assert!(sequences.len() >= 40, "{} sequences", sequences.len());
    let extractor = RuleExtractor::new();
    let mut right = 0;
    for (n, seq) in sequences.iter().enumerate() {
        assert_eq!(seq.steps.len(), seq.expect.len(), "sequence {n}");
        let store = InMemoryUserMemoryStore::new();
        let user = format!("u{n}");
        let mut ok = true;
        for (step, want) in seq.steps.iter().zip(&seq.expect) {
            for candidate in extractor.extract_text(step) {
                store.upsert(&user, candidate).await.expect("upsert");
            }
            let got = held(&store.list(&user).await.expect("list"));
            let want = expected(want);
            if got != want {
                eprintln!("sequence {n} after {step:?}: got {got:?}, want {want:?}");
                ok = false;
                break;
            }
        }
        right += usize::from(ok);
    }
    let share = right as f64 / sequences.len() as f64;
    eprintln!(
        "change of state: {right}/{} sequences right ({share:.3})",
        sequences.len()
    );
    assert!(share >= 0.9, "{share:.3}");
}
