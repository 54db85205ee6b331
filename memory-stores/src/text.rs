//! Words and TF-IDF cosine similarity, for ranking a user's facts against a query.

use std::collections::HashMap;

/// Lowercase alphanumeric words of `text`, as the SQL engines' own tokenizers split them
/// (fact ranking uses [`agentmemory_core::text`] instead).
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Cosine similarity, in `0.0..=1.0`, of `query` to each of `docs` under TF-IDF weights
/// computed over `docs` (smoothed idf `ln(1 + (N + 1) / (df + 1))`, so no term weighs zero).
pub(crate) fn tfidf_relevance(query: &str, docs: &[String]) -> Vec<f32> {
    let query_words = agentmemory_core::text::terms(query);
    if query_words.is_empty() {
        return vec![0.0; docs.len()];
    }
    let doc_tfs: Vec<HashMap<String, f64>> = docs
        .iter()
        .map(|d| term_freqs(agentmemory_core::text::terms(d)))
        .collect();
    let mut df: HashMap<&str, f64> = HashMap::new();
    for tf in &doc_tfs {
        for term in tf.keys() {
            *df.entry(term.as_str()).or_default() += 1.0;
        }
    }
    let n = docs.len() as f64;
    let idf = |term: &str| (1.0 + (n + 1.0) / (df.get(term).copied().unwrap_or(0.0) + 1.0)).ln();
    let query_vec: HashMap<String, f64> = term_freqs(query_words)
        .into_iter()
        .map(|(t, f)| {
            let w = f * idf(&t);
            (t, w)
        })
        .collect();
    let query_norm = norm(query_vec.values());
    doc_tfs
        .iter()
        .map(|tf| {
            let weights: HashMap<&str, f64> =
                tf.iter().map(|(t, f)| (t.as_str(), f * idf(t))).collect();
            let doc_norm = norm(weights.values());
            if doc_norm == 0.0 || query_norm == 0.0 {
                return 0.0;
            }
            let dot: f64 = query_vec
                .iter()
                .filter_map(|(t, qw)| weights.get(t.as_str()).map(|dw| qw * dw))
                .sum();
            ((dot / (doc_norm * query_norm)) as f32).clamp(0.0, 1.0)
        })
        .collect()
}

fn term_freqs(words: Vec<String>) -> HashMap<String, f64> {
    let mut tf = HashMap::new();
    for w in words {
        *tf.entry(w).or_insert(0.0) += 1.0;
    }
    tf
}

fn norm<'a>(weights: impl Iterator<Item = &'a f64>) -> f64 {
    weights.map(|w| w * w).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevant_documents_score_higher_and_stay_in_range() {
        let docs = vec![
            "likes Italian food".to_owned(),
            "lives in Oslo".to_owned(),
            "allergic to peanuts".to_owned(),
        ];
        let r = tfidf_relevance("what food does she like? Italian?", &docs);
        assert!(r[0] > r[1] && r[0] > r[2], "{r:?}");
        assert!(r.iter().all(|x| (0.0..=1.0).contains(x)));
        let exact = tfidf_relevance("lives in Oslo", &docs);
        assert!((exact[1] - 1.0).abs() < 1e-5, "{exact:?}");
        assert_eq!(tfidf_relevance("?!", &docs), vec![0.0; 3]);
    }
}
