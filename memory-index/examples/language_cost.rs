//! What telling the language of a text costs the analysis, per text:
//!
//! ```text
//! cargo run --release -p agentmemory-index --example language_cost
//! ```
//!
//! Times [`language`] (the English-word check, then `whatlang`), [`terms`] (detection and
//! analysis) on three kinds of text: the 2,671 English texts of the evaluation sets, short
//! English fact texts (no English function word, so the detector runs), and the 100
//! French, German, Spanish, Chinese and Japanese texts of the multilingual set.

use std::hint::black_box;
use std::time::Instant;

use agentmemory_index::text::{language, terms};

fn per_text(texts: &[&str], rounds: usize, f: impl Fn(&str)) -> f64 {
    for t in texts {
        f(t); // warm the caches
    }
    let start = Instant::now();
    for _ in 0..rounds {
        for t in texts {
            f(black_box(t));
        }
    }
    start.elapsed().as_nanos() as f64 / (rounds * texts.len()) as f64
}

fn main() {
    let english: Vec<&str> = include_str!("../tests/data/english_sentences.txt")
        .lines()
        .collect();
    let facts = [
        "likes jazz",
        "lives in Porto",
        "allergic to peanuts",
        "works as a nurse",
        "cycles to work now",
        "vegetarian since 2023",
        "has two cats",
        "plays guitar in a band",
    ];
    let pairs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/multilingual/pairs.jsonl"
    ))
    .expect("tests/data/multilingual/pairs.jsonl");
    let mut other: Vec<String> = Vec::new();
    for line in pairs.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        other.push(v["statement"].as_str().expect("statement").to_owned());
        other.push(v["question"].as_str().expect("question").to_owned());
    }
    let other: Vec<&str> = other.iter().map(String::as_str).collect();
    let mean_len = |t: &[&str]| t.iter().map(|s| s.len()).sum::<usize>() / t.len();
    println!("| texts | mean bytes | language() ns/text | terms() ns/text |");
    println!("|---|---|---|---|");
    for (name, texts, rounds) in [
        ("English eval texts (2,671)", &english[..], 20),
        ("short English facts (8)", &facts[..], 20_000),
        ("fr/de/es/zh/ja set (100)", &other[..], 500),
    ] {
        let lang = per_text(texts, rounds, |t| {
            black_box(language(t));
        });
        let all = per_text(texts, rounds, |t| {
            black_box(terms(t));
        });
        println!("| {name} | {} | {lang:.0} | {all:.0} |", mean_len(texts));
    }
}
