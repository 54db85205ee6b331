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
    // Before the issue-15 rules: precision 0.841 (37/44), recall 0.468 (37/79).
    assert!(
        score.precision() >= 0.92,
        "precision {:.3}",
        score.precision()
    );
    assert!(score.recall() >= 0.80, "recall {:.3}", score.recall());
}
