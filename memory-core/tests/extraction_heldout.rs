//! Precision and recall of the offline `RuleExtractor` on `tests/data/extraction_heldout.jsonl`,
//! a set frozen before the rules were tuned for it (never edit that file; a hook checks).
//!
//! `cargo test -p agentmemory-core --test extraction_heldout -- --nocapture` prints the
//! figures and every mistake.

mod quality;

use agentmemory_core::extract::RuleExtractor;

#[test]
fn the_heldout_set_is_big_enough() {
    let set = quality::load("extraction_heldout.jsonl");
    assert!(set.len() >= 80, "{} examples", set.len());
}

#[test]
fn precision_and_recall_on_the_heldout_set() {
    let set = quality::load("extraction_heldout.jsonl");
    let extractor = RuleExtractor::new();
    let score = quality::score(&set, |t| extractor.extract_text(t));
    score.report("held-out");
    assert!(score.expected > 0);
}
