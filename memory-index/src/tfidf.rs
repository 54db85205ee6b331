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

/// A namespace holds at least this many documents before a term can be
/// [`ubiquitous`].
pub const UBIQUITOUS_MIN_DOCS: usize = 50;

/// A term held by more than this share of a namespace's documents is [`ubiquitous`].
pub const UBIQUITOUS_SHARE: f64 = 0.3;

/// Whether a term `df` of `n` documents hold is ubiquitous: in a namespace of at least
/// [`UBIQUITOUS_MIN_DOCS`] documents, held by more than [`UBIQUITOUS_SHARE`] of them.
/// Such a term weighs nothing in a query that has another known term that is not (see
/// [`Ubiquity`]). Those are the speakers' names of a chat log ("Maya: …" on most lines),
/// which a question names ("What did Maya buy?") and which would otherwise pull every
/// line of that speaker above the one that answers. On conversations without such labels
/// no content word comes near the share (the most frequent in the evaluation sets hold
/// 0.2), so nothing else changes. Documents still weigh the term in their norm.
///
/// ```
/// use agentmemory_index::tfidf::ubiquitous;
///
/// assert!(ubiquitous(300, 140));
/// assert!(!ubiquitous(300, 60));
/// assert!(!ubiquitous(10, 9), "too few documents to tell");
/// ```
pub fn ubiquitous(n: usize, df: usize) -> bool {
    n >= UBIQUITOUS_MIN_DOCS && df as f64 > n as f64 * UBIQUITOUS_SHARE
}

/// Which of a query's terms weigh: all of them, or all but the [`ubiquitous`] ones when
/// another known term is not ubiquitous. A query of ubiquitous words only ("Maya?") is
/// searched by them, so a search never comes back empty because its words are common.
///
/// ```
/// use agentmemory_index::tfidf::Ubiquity;
///
/// // "maya" in 150 of 300 documents, "guitar" in 3.
/// let u = Ubiquity::of(300, [150, 3]);
/// assert!(!u.weighs(150) && u.weighs(3));
/// assert!(Ubiquity::of(300, [150]).weighs(150));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Ubiquity {
    n: usize,
    drop: bool,
}

impl Ubiquity {
    /// The rule for a query whose terms `dfs` of `n` documents hold (0 for unknown terms).
    pub fn of(n: usize, dfs: impl IntoIterator<Item = usize>) -> Self {
        let drop = dfs.into_iter().any(|df| df > 0 && !ubiquitous(n, df));
        Self { n, drop }
    }

    /// Whether a query term `df` documents hold weighs.
    pub fn weighs(&self, df: usize) -> bool {
        !(self.drop && ubiquitous(self.n, df))
    }
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
    let rule = Ubiquity::of(n, query.iter().map(|(t, _)| df(t)));
    let q: Vec<(&str, f32, f32)> = query
        .iter()
        .filter_map(|(t, count)| {
            let held = df(t);
            (held > 0 && rule.weighs(held)).then(|| {
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
    let rule = Ubiquity::of(n, query.iter().map(|(t, _)| df(t)));
    for (t, count) in query {
        let holders = df(t);
        if !rule.weighs(holders) {
            continue;
        }
        let w = (1.0 + count.ln()) * idf(n, holders.max(1));
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
