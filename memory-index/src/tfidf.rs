//! The TF-IDF cosine every sparse document search ranks by, as functions of the analysed
//! terms and the corpus statistics. The in-memory index (the kernel's `InMemoryVectorStore`, and the
//! SQLite, file and Redis stores through it) keeps these statistics in its postings; a
//! store that keeps them elsewhere (PostgreSQL keeps each document's terms and each
//! term's document frequency in tables) scores with [`cosine`] and ranks alike, to the bit.
//!
//! - a term's weight in a document or query: `(1 + ln tf) × idf`, with
//!   `idf = ln(1 + N / df)` (`N` documents in the namespace, `df` of them holding the term);
//! - the score: the cosine of the two weight vectors, in `0.0..=1.0`.
//!
//! ```
//! use agentmemory_index::tfidf::{cosine, document_terms, query_terms};
//!
//! let doc = document_terms("She lives in Lisbon and loves living there");
//! assert_eq!(doc.iter().find(|(t, _)| t == "live").map(|(_, w)| *w), Some(1.0 + 2f32.ln()));
//! let q = query_terms("Where does she live?");
//! // Two documents, "live" in one of them.
//! let df = |t: &str| usize::from(t == "live" || t == "lisbon" || t == "love");
//! assert!(cosine(&q, &doc, 2, df) > 0.0);
//! assert_eq!(cosine(&query_terms("Paris"), &doc, 2, df), 0.0);
//! ```

use crate::text;

/// `(term, 1 + ln tf)` for each distinct term of `text` (analysed by [`terms`](crate::text::terms)),
/// sorted by term: what a document contributes to the index.
pub fn document_terms(text: &str) -> Vec<(String, f32)> {
    document_counts(text)
        .into_iter()
        .map(|(t, count)| (t, 1.0 + (count as f32).ln()))
        .collect()
}

/// `(term, tf)` for each distinct term of `text`, sorted by term: [`document_terms`]
/// before weighting (the index stores counts and weighs them when it reads them).
pub fn document_counts(text: &str) -> Vec<(String, u32)> {
    let mut tokens = text::terms(text);
    tokens.sort_unstable();
    let mut out: Vec<(String, u32)> = Vec::with_capacity(tokens.len());
    for t in tokens {
        match out.last_mut() {
            Some((prev, count)) if *prev == t => *count += 1,
            _ => out.push((t, 1)),
        }
    }
    out
}

/// `1 / |d|` for a document whose terms weigh `tf_weight × idf` as `weights` yields them,
/// `0` when the norm is zero. Squares are summed in `f64`, so the result (rounded to
/// `f32`) does not depend on the order the terms come in: the index reads a document's
/// terms by term id, this module by term text.
pub fn inv_norm(weights: impl Iterator<Item = (f32, f32)>) -> f32 {
    let sum: f64 = weights
        .map(|(tf_weight, idf)| {
            let w = tf_weight * idf;
            f64::from(w * w)
        })
        .sum();
    let sum = sum as f32;
    if sum > 0.0 {
        1.0 / sum.sqrt()
    } else {
        0.0
    }
}

/// `(term, count)` for each distinct term of a query, in the order of first appearance
/// (the order the index sums a query's terms in).
pub fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut out: Vec<(String, f32)> = Vec::new();
    text::for_each_term(query, |t| match out.iter_mut().find(|(k, _)| k == t) {
        Some((_, count)) => *count += 1.0,
        None => out.push((t.to_owned(), 1.0)),
    });
    out
}

/// `ln(1 + n / df)`; `0` for a term no document holds.
pub fn idf(n: usize, df: usize) -> f32 {
    if df == 0 {
        0.0
    } else {
        (1.0 + n as f64 / df as f64).ln() as f32
    }
}

/// The cosine of `query` ([`query_terms`]) and `doc` ([`document_terms`]) in a corpus of
/// `n` documents where `df(term)` hold the term: `0.0` when they share no term the
/// corpus knows. Computed in the order and precision the in-memory index computes it,
/// so both give the same score.
pub fn cosine(
    query: &[(String, f32)],
    doc: &[(String, f32)],
    n: usize,
    df: impl Fn(&str) -> usize,
) -> f32 {
    let q: Vec<(&str, f32, f32)> = query
        .iter()
        .filter_map(|(t, count)| {
            let held = df(t);
            (held > 0).then(|| {
                let idf = idf(n, held);
                (t.as_str(), (1.0 + count.ln()) * idf, idf)
            })
        })
        .collect();
    let q_norm_sq: f32 = q.iter().map(|(_, w, _)| w * w).sum();
    if q.is_empty() || q_norm_sq <= 0.0 {
        return 0.0;
    }
    let inv_q = 1.0 / q_norm_sq.sqrt();
    let mut dot = 0.0f32;
    for &(t, w, idf) in &q {
        if let Ok(i) = doc.binary_search_by(|(d, _)| d.as_str().cmp(t)) {
            dot += doc[i].1 * (w * idf);
        }
    }
    if dot <= 0.0 {
        return 0.0;
    }
    let inv_d = inv_norm(doc.iter().map(|(t, tf_weight)| (*tf_weight, idf(n, df(t)))));
    if inv_d <= 0.0 {
        return 0.0;
    }
    (dot * inv_d * inv_q).clamp(0.0, 1.0)
}

/// How much of `query`'s own term weight ([`query_terms`], each term weighted
/// `(1 + ln count) × idf` as in [`cosine`]) `doc` ([`document_terms`]) holds, in a corpus of
/// `n` documents where `df(term)` hold the term: `1.0` when the document has every query
/// term, `0.0` when it has none.
///
/// A query term no document holds weighs as a term one document holds (the rarest a
/// known term can be): no document covers it, so a question worded unlike every document
/// ("which pet keeps scratching the sofa?" against "my cat ruins the couch") is covered
/// partly at best, even by a document holding its one known word.
///
/// Unlike the cosine, coverage ignores everything else the document says: a long passage
/// that holds the query's one rare word covers it fully, a short statement sharing one
/// common word of a six-word question covers a little of it.
///
/// ```
/// use agentmemory_index::tfidf::{coverage, document_terms, query_terms};
///
/// let corpus: Vec<_> = [
///     "I moved to Nairobi last spring with my sister",
///     "my sister lives in Lagos",
///     "my sister got a puppy",
///     "the weather was lovely",
/// ]
/// .map(document_terms)
/// .to_vec();
/// let df = |t: &str| corpus.iter().filter(|d| d.iter().any(|(k, _)| k == t)).count();
/// let doc = &corpus[0];
/// // The rare word alone: fully covered.
/// assert_eq!(coverage(&query_terms("Nairobi"), doc, 4, df), 1.0);
/// // Every term of the question is in the message.
/// assert_eq!(coverage(&query_terms("my sister in Nairobi"), doc, 4, df), 1.0);
/// // The common word is there, the rare one is not: under half the weight.
/// let part = coverage(&query_terms("my sister in Lagos"), doc, 4, df);
/// assert!(part > 0.0 && part < 0.5);
/// // A document without any query term.
/// assert_eq!(coverage(&query_terms("Lagos"), doc, 4, df), 0.0);
/// // A query word no document holds is weighed, and missed, as the rarest word.
/// let unknown = coverage(&query_terms("my sister in Paris"), doc, 4, df);
/// assert!(unknown > 0.0 && unknown < 0.5);
/// ```
pub fn coverage(
    query: &[(String, f32)],
    doc: &[(String, f32)],
    n: usize,
    df: impl Fn(&str) -> usize,
) -> f32 {
    let mut total = 0.0f32;
    let mut held = 0.0f32;
    for (t, count) in query {
        let w = (1.0 + count.ln()) * idf(n, df(t).max(1));
        total += w;
        if doc.binary_search_by(|(d, _)| d.as_str().cmp(t)).is_ok() {
            held += w;
        }
    }
    if total > 0.0 {
        (held / total).clamp(0.0, 1.0)
    } else {
        0.0
    }
}
