//! Runs the offline `RuleExtractor` over the labelled set in `tests/data/extraction.jsonl`
//! (at the workspace root) and checks its precision and recall.
//!
//! `cargo test -p memory-core --test extraction_quality -- --nocapture` prints the figures,
//! the misses and the false positives.

use agentmemory_core::extract::RuleExtractor;
use agentmemory_core::facts::Polarity;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Example {
    text: String,
    facts: Vec<Expected>,
}

#[derive(Debug, Clone, Deserialize)]
struct Expected {
    attribute: String,
    value: String,
    polarity: Polarity,
}

fn norm(s: &str) -> String {
    s.trim().to_lowercase()
}

/// Same attribute and polarity; values equal after lowercase/trim, or one contains the other.
fn matches(attribute: &str, value: &str, polarity: Polarity, e: &Expected) -> bool {
    let (p, x) = (norm(value), norm(&e.value));
    attribute == e.attribute
        && polarity == e.polarity
        && !p.is_empty()
        && (p == x || p.contains(&x) || x.contains(&p))
}

fn load() -> Vec<Example> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/extraction.jsonl"
    );
    let data = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)))
        .collect()
}

#[test]
fn the_labelled_set_is_big_and_varied_enough() {
    let set = load();
    assert!(set.len() >= 100, "{} examples", set.len());
    let empty = set.iter().filter(|e| e.facts.is_empty()).count();
    assert!(empty >= 30, "{empty} examples without facts");
    let negative = set
        .iter()
        .filter(|e| e.facts.iter().any(|f| f.polarity == Polarity::Negative))
        .count();
    assert!(negative >= 15, "{negative} examples with negative facts");
    let multi = set.iter().filter(|e| e.facts.len() >= 2).count();
    assert!(multi >= 10, "{multi} multi-fact examples");
    for attribute in [
        "name", "location", "origin", "job", "employer", "likes", "allergy", "diet", "family",
        "pet", "birthday", "age", "language", "goal",
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
    let extractor = RuleExtractor::new();
    let (mut tp, mut predicted, mut expected) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    let mut false_positives = Vec::new();
    for example in load() {
        let found = extractor.extract_text(&example.text);
        predicted += found.len();
        expected += example.facts.len();
        let mut used = vec![false; example.facts.len()];
        for c in &found {
            let attribute = c.attribute.as_deref().unwrap_or_default();
            let value = c.value.as_deref().unwrap_or_default();
            let hit = example
                .facts
                .iter()
                .enumerate()
                .position(|(i, e)| !used[i] && matches(attribute, value, c.polarity, e));
            match hit {
                Some(i) => {
                    used[i] = true;
                    tp += 1;
                }
                None => false_positives.push(format!(
                    "{:?}: {attribute}={value:?} ({:?})",
                    example.text, c.polarity
                )),
            }
        }
        for (e, used) in example.facts.iter().zip(used) {
            if !used {
                misses.push(format!(
                    "{:?}: {}={:?} ({:?})",
                    example.text, e.attribute, e.value, e.polarity
                ));
            }
        }
    }
    let precision = tp as f64 / predicted.max(1) as f64;
    let recall = tp as f64 / expected.max(1) as f64;
    eprintln!(
        "extraction: precision {precision:.3} ({tp}/{predicted}), recall {recall:.3} ({tp}/{expected})"
    );
    for m in &misses {
        eprintln!("  miss: {m}");
    }
    for f in &false_positives {
        eprintln!("  false positive: {f}");
    }
    let texts: Vec<String> = load().into_iter().map(|e| e.text).collect();
    let start = std::time::Instant::now();
    let rounds = 20;
    for _ in 0..rounds {
        for t in &texts {
            std::hint::black_box(extractor.extract_text(t));
        }
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / (rounds * texts.len()) as f64;
    eprintln!("extraction: {per:.1} µs per utterance (this build profile)");
    assert!(precision >= 0.90, "precision {precision:.3}");
    assert!(recall >= 0.75, "recall {recall:.3}");
}
