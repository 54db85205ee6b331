//! Runs the offline `RuleExtractor` over the chat-like labelled set in
//! `tests/data/extraction.jsonl` (at the workspace root) and holds it to precision ≥ 0.95
//! and recall ≥ 0.85, scored by exact normalised value matching (see `quality`).
//!
//! `cargo test -p agentmemory-core --test extraction_quality -- --nocapture` prints the
//! figures, the misses and the false positives.

mod quality;

use agentmemory_core::extract::RuleExtractor;
use agentmemory_core::facts::Polarity;

#[test]
fn the_labelled_set_is_big_and_varied_enough() {
    let set = quality::load("extraction.jsonl");
    assert!(set.len() >= 300, "{} examples", set.len());
    let empty = set.iter().filter(|e| e.facts.is_empty()).count();
    assert!(empty >= 60, "{empty} examples without facts");
    let negative = set
        .iter()
        .filter(|e| e.facts.iter().any(|f| f.polarity == Polarity::Negative))
        .count();
    assert!(negative >= 30, "{negative} examples with negative facts");
    let multi = set.iter().filter(|e| e.facts.len() >= 2).count();
    assert!(multi >= 60, "{multi} multi-fact examples");
    let multi_sentence = set
        .iter()
        .filter(|e| e.text.matches(['.', '!', '\n']).count() >= 1)
        .count();
    assert!(
        multi_sentence >= 100,
        "{multi_sentence} multi-sentence examples"
    );
    for attribute in [
        "name",
        "location",
        "origin",
        "job",
        "employer",
        "likes",
        "allergy",
        "diet",
        "family",
        "pet",
        "birthday",
        "age",
        "language",
        "goal",
        "plan",
        "learning",
        "routine",
        "relationship",
        "possession",
    ] {
        assert!(
            set.iter()
                .any(|e| e.facts.iter().any(|f| f.attribute == attribute)),
            "no example of {attribute}"
        );
    }
}

#[test]
fn precision_and_recall_on_the_labelled_set() {
    let set = quality::load("extraction.jsonl");
    let extractor = RuleExtractor::new();
    let score = quality::score(&set, |t| extractor.extract_text(t));
    score.report("chat set");
    assert!(
        score.precision() >= 0.95,
        "precision {:.3}",
        score.precision()
    );
    assert!(score.recall() >= 0.85, "recall {:.3}", score.recall());
}
