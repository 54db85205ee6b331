//! A generated corpus for the incremental-index tests: words of their own, episode-like
//! documents with a few shared and a few rare words, written in batches.

use agentmemory_core::{Document, VectorStore};

/// A word of its own for each `i`.
pub fn word(i: usize) -> String {
    let letters = b"bcdfghjklmnpqrstvwxz";
    let mut w = String::from("w");
    let mut n = i;
    loop {
        w.push(letters[n % letters.len()] as char);
        w.push(['a', 'e', 'i', 'o', 'u'][n % 5]);
        n /= letters.len();
        if n == 0 {
            break;
        }
    }
    w
}

/// Document `i`: an episode-like turn with a few shared and a few rare words.
pub fn doc(i: usize) -> Document {
    let topics = [
        "rust", "garden", "kitchen", "travel", "music", "budget", "health",
    ];
    Document::new(format!(
        "turn {i}: we talked about {} and {} with {} {}",
        topics[i % topics.len()],
        topics[(i / 7) % topics.len()],
        word(i),
        word(i / 3),
    ))
    .with_id(format!("ep-{i:06}"))
}

/// Writes `docs` to `ns` in batches of 500.
pub async fn fill_with(store: &(impl VectorStore + ?Sized), ns: &str, docs: Vec<Document>) {
    for chunk in docs.chunks(500) {
        store.upsert_batch(ns, chunk.to_vec()).await.expect("fill");
    }
}

/// Writes documents `0..n` ([`doc`]) to `ns` in batches.
pub async fn fill(store: &(impl VectorStore + ?Sized), ns: &str, n: usize) {
    fill_with(store, ns, (0..n).map(doc).collect()).await;
}
