//! Scoring an extractor against a labelled JSONL file with exact normalised value matching.
//!
//! A prediction is right when its attribute and polarity equal a label's and its value,
//! normalised (lowercase, punctuation to spaces, a leading article or "my" dropped),
//! equals the label's value or one of its listed alternatives. No substring matching.
//! A favourite ("favourite band" = Radiohead) also answers a `likes` label of the same value.
//! Predictions with attribute `note` (low-confidence catch-all statements) or `event`
//! (what the user did, not an attribute), and facts about someone else (with a
//! `subject`: "my boss lives in Rome" is the boss's) are left out of precision and recall;
//! they are held to account by the junk tests and `events_people_changes.rs` instead.

#![allow(dead_code)]

use agentmemory_core::facts::{FactCandidate, Polarity};
use serde::Deserialize;

/// One labelled message.
#[derive(Debug, Clone, Deserialize)]
pub struct Example {
    pub text: String,
    pub facts: Vec<Expected>,
}

/// One labelled fact.
#[derive(Debug, Clone, Deserialize)]
pub struct Expected {
    pub attribute: String,
    pub value: String,
    pub polarity: Polarity,
    /// Other spellings a careful reader would accept as the same value.
    #[serde(default)]
    pub alt: Vec<String>,
}

/// The value as compared: lowercase words, leading article / "my" dropped.
pub fn norm(s: &str) -> String {
    let lower = s.to_lowercase();
    let mut words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    while words.len() > 1 && matches!(words[0], "a" | "an" | "the" | "my") {
        words.remove(0);
    }
    words.join(" ")
}

/// The attribute as scored: a favourite ("favourite band") is also a like, so it
/// answers a `likes` label.
fn same_attribute(predicted: &str, label: &str) -> bool {
    predicted == label || (label == "likes" && predicted.starts_with("favourite "))
}

fn matches(c: &FactCandidate, e: &Expected) -> bool {
    let value = norm(c.value.as_deref().unwrap_or_default());
    same_attribute(c.attribute.as_deref().unwrap_or_default(), &e.attribute)
        && c.polarity == e.polarity
        && !value.is_empty()
        && (value == norm(&e.value) || e.alt.iter().any(|a| norm(a) == value))
}

/// Loads `tests/data/<name>` at the workspace root.
pub fn load(name: &str) -> Vec<Example> {
    let path = format!("{}/../tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{name} line {}: {e}", i + 1))
        })
        .collect()
}

/// Precision/recall counts and the mistakes behind them.
#[derive(Debug, Default)]
pub struct Score {
    pub true_positives: usize,
    pub predicted: usize,
    pub expected: usize,
    pub misses: Vec<String>,
    pub false_positives: Vec<String>,
}

impl Score {
    pub fn precision(&self) -> f64 {
        self.true_positives as f64 / self.predicted.max(1) as f64
    }

    pub fn recall(&self) -> f64 {
        self.true_positives as f64 / self.expected.max(1) as f64
    }

    /// Prints the figures and every mistake (visible with `--nocapture`).
    pub fn report(&self, label: &str) {
        eprintln!(
            "{label}: precision {:.3} ({}/{}), recall {:.3} ({}/{})",
            self.precision(),
            self.true_positives,
            self.predicted,
            self.recall(),
            self.true_positives,
            self.expected
        );
        for m in &self.misses {
            eprintln!("  miss: {m}");
        }
        for f in &self.false_positives {
            eprintln!("  false positive: {f}");
        }
    }
}

/// Scores `extract` over `examples`.
pub fn score(examples: &[Example], extract: impl Fn(&str) -> Vec<FactCandidate>) -> Score {
    let mut s = Score::default();
    for example in examples {
        let found: Vec<FactCandidate> = extract(&example.text)
            .into_iter()
            .filter(|c| !matches!(c.attribute.as_deref(), Some("note" | "event")))
            .filter(|c| c.subject.is_none())
            .collect();
        s.predicted += found.len();
        s.expected += example.facts.len();
        let mut used = vec![false; example.facts.len()];
        for c in &found {
            let hit = (0..example.facts.len()).find(|&i| !used[i] && matches(c, &example.facts[i]));
            match hit {
                Some(i) => {
                    used[i] = true;
                    s.true_positives += 1;
                }
                None => s.false_positives.push(format!(
                    "{:?}: {}={:?} ({:?})",
                    example.text,
                    c.attribute.as_deref().unwrap_or_default(),
                    c.value.as_deref().unwrap_or_default(),
                    c.polarity
                )),
            }
        }
        for (e, used) in example.facts.iter().zip(used) {
            if !used {
                s.misses.push(format!(
                    "{:?}: {}={:?} ({:?})",
                    example.text, e.attribute, e.value, e.polarity
                ));
            }
        }
    }
    s
}
