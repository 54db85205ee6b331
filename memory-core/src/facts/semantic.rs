//! Fact search and reconciliation by meaning, shared by every [`UserMemoryStore`] backend.
//!
//! - A fact's relevance to a query fuses the sparse cosine (TF-IDF over the user's current
//!   facts, through [`crate::text`]) with the cosine of the fact's embedding to the query's
//!   ([`Fusion::DEFAULT`]); without a query embedding it is the sparse cosine alone.
//! - A candidate whose embedding is a near paraphrase of a current fact with the same
//!   attribute and polarity reinforces that fact instead of adding a near-duplicate
//!   ([`reconcile_by_meaning`]).
//!
//! Embeddings are made once, when a fact is written ([`EmbeddingUserMemoryStore`] or the
//! caller fills [`FactCandidate::embedding`]); a search needs one query embedding.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::reconcile::{decide_keyed, Keys};
use super::{
    FactCandidate, FactChange, FactKey, FactPolicy, MemoryFact, Reconciliation, ScoredFact,
    UserMemoryStore,
};
use crate::error::{MemoryError, Result};
use crate::reembed::DenseGate;
use crate::vector::{normalized, Embedder, Fusion};

/// The cosine above which a candidate with the same attribute and polarity as a current
/// fact is taken as a paraphrase of it (chosen on paraphrase and distinct-value pairs
/// embedded with all-MiniLM-L6-v2; see `memory-core/tests/retrieval_eval.rs`).
pub const PARAPHRASE_THRESHOLD: f32 = 0.8;

/// A search of one user's facts.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct FactQuery {
    /// The query text (the user's message).
    pub text: String,
    /// Its embedding, made by the same model as the facts'; `None` searches by words only.
    pub embedding: Option<Vec<f32>>,
    /// At most this many facts.
    pub top_k: usize,
    /// Search by words alone: a store that embeds queries ([`EmbeddingUserMemoryStore`])
    /// leaves this one as it is. For a query made of listed words rather than said, such
    /// as the health words recall asks for beside the message.
    pub words_only: bool,
}

impl FactQuery {
    /// A words-only query for the best `top_k` facts.
    pub fn new(text: impl Into<String>, top_k: usize) -> Self {
        Self {
            text: text.into(),
            embedding: None,
            top_k,
            words_only: false,
        }
    }

    /// The same query, searched by words alone ([`words_only`](Self::words_only)).
    ///
    /// ```
    /// use agentmemory_core::facts::FactQuery;
    /// assert!(FactQuery::new("allergic intolerant", 3).by_words_only().words_only);
    /// ```
    pub fn by_words_only(mut self) -> Self {
        self.words_only = true;
        self
    }

    /// Adds the query's embedding, making the search hybrid.
    pub fn with_embedding(mut self, embedding: Vec<f32>) -> Self {
        self.embedding = Some(embedding);
        self
    }
}

/// Cosine of two vectors; 0 when their dimensions differ or either is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na <= 0.0 || nb <= 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// A fact's relevance from its sparse cosine and, when both sides have embeddings, the
/// cosine of the embeddings: [`Fusion::combine`] under [`Fusion::DEFAULT`] (its weight
/// applied to the cosine itself), in `0.0..=1.0`, for a fact scored alone: no other
/// facts to weigh the query's words by, so no coverage. A fact ranked among others
/// goes through [`fact_relevance_among`].
pub fn fact_relevance(sparse: f32, query: Option<&[f32]>, fact: Option<&[f32]>) -> f32 {
    match query {
        Some(q) => {
            let dense = fact.map_or(0.0, |f| cosine(q, f));
            Fusion::DEFAULT.combine(sparse, dense).unwrap_or(sparse)
        }
        None => sparse.clamp(0.0, 1.0),
    }
}

/// [`fact_relevance`] for a fact ranked among others, given `best_sparse`, the query's best
/// sparse cosine over the facts ranked, and `coverage`, how much of the query's term
/// weight the fact holds ([`tfidf::coverage`](crate::store_support::tfidf::coverage) over
/// the facts ranked): the hybrid relevance ([`Fusion::combine_covered`] under
/// [`Fusion::DEFAULT`]). Without a query embedding, the sparse cosine as it is.
pub fn fact_relevance_among(
    sparse: f32,
    best_sparse: f32,
    coverage: f32,
    query: Option<&[f32]>,
    fact: Option<&[f32]>,
) -> f32 {
    match query {
        Some(q) => {
            let dense = fact.map_or(0.0, |f| cosine(q, f));
            Fusion::DEFAULT
                .combine_covered(sparse, dense, best_sparse, coverage)
                .unwrap_or(sparse)
        }
        None => sparse.clamp(0.0, 1.0),
    }
}

/// The best `query.top_k` of `facts` (current ones only, under `policy`), ranked by
/// [`rank_score`](super::rank_score) over [`fact_relevance`], ties by id. Every backend that loads a user's
/// facts ranks with this, and [`InMemoryUserMemoryStore`](super::InMemoryUserMemoryStore)
/// computes the same scores from its persistent index, so all rank alike.
pub fn rank_facts(
    facts: Vec<MemoryFact>,
    query: &FactQuery,
    policy: FactPolicy,
    now: DateTime<Utc>,
) -> Vec<ScoredFact> {
    if query.top_k == 0 {
        return Vec::new();
    }
    super::RankedFacts::new(facts).rank(query, policy, now)
}

/// The current fact that `candidate` paraphrases: same attribute, same polarity, and
/// embeddings at least [`PARAPHRASE_THRESHOLD`] apart in cosine (the closest one).
pub fn paraphrase_of<'a>(
    current: &'a [MemoryFact],
    candidate: &FactCandidate,
) -> Option<&'a MemoryFact> {
    paraphrase_among(current.iter(), candidate)
}

/// [`paraphrase_of`] among `facts` (in their order; the last of equally close ones wins).
pub(super) fn paraphrase_among<'a>(
    facts: impl Iterator<Item = &'a MemoryFact>,
    candidate: &FactCandidate,
) -> Option<&'a MemoryFact> {
    let c = candidate.embedding.as_deref()?;
    facts
        .filter(|f| f.is_current())
        .filter(|f| {
            f.attribute == candidate.attribute
                && f.polarity == candidate.polarity
                && f.subject == candidate.subject
        })
        .filter_map(|f| Some((f, cosine(c, f.embedding.as_deref()?))))
        .filter(|(_, cos)| *cos >= PARAPHRASE_THRESHOLD)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(f, _)| f)
}

/// [`decide()`](crate::store_support::decide) (corrections resolved, then [`reconcile()`](crate::store_support::reconcile)), except that a candidate it would
/// add as new but that paraphrases a current fact ([`paraphrase_of`]) reinforces that fact
/// instead. Returns the decision and the candidate as resolved. Backends reconcile with this.
pub fn reconcile_by_meaning(
    current: &[MemoryFact],
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    by_meaning(current, Keys(None), candidate)
}

/// [`reconcile_by_meaning`] with the [`FactKey`] of each current fact, in the same order,
/// computed once when the facts were written: the same decision, without normalising
/// every held fact again. Stores that keep their facts in memory reconcile with this.
///
/// Keys missing at the end of `keys` are computed on the spot.
pub fn reconcile_by_meaning_keyed(
    current: &[MemoryFact],
    keys: &[FactKey],
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    by_meaning(current, Keys(Some(keys)), candidate)
}

fn by_meaning(
    current: &[MemoryFact],
    keys: Keys<'_>,
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    let (decision, candidate) = decide_then_escalate(current, keys, candidate);
    let decision = match decision {
        Reconciliation::Add => match paraphrase_of(current, &candidate) {
            Some(f) => Reconciliation::Reinforce(f.id.clone()),
            None => Reconciliation::Add,
        },
        other => other,
    };
    (decision, candidate)
}

/// [`reconcile_by_meaning`] short of its paraphrase check: corrections resolved,
/// reconciled, transitions and quality applied, a repeated contest escalated.
pub(super) fn decide_then_escalate(
    current: &[MemoryFact],
    keys: Keys<'_>,
    candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    let (decision, candidate) = decide_keyed(current, keys, candidate);
    super::contest::escalate(current, decision, candidate)
}

/// Checks and normalises a candidate's embedding before it is stored.
pub fn prepare_candidate(mut candidate: FactCandidate) -> Result<FactCandidate> {
    if let Some(v) = candidate.embedding.take() {
        candidate.embedding = Some(normalized(v, "fact embedding")?);
    }
    Ok(candidate)
}

/// A [`UserMemoryStore`] that embeds what it is given: each candidate's text when it is
/// written (so facts are embedded once, never per search) and each query's text when it
/// is searched (one embedding per search), then delegates to the wrapped store, which
/// persists the embeddings with the facts and ranks by [`rank_facts`]'s rules.
///
/// ```
/// # use std::sync::Arc;
/// # use agentmemory_core::facts::{EmbeddingUserMemoryStore, FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
/// # use agentmemory_core::{Embedder, Result};
/// # struct Letters;
/// # #[async_trait::async_trait]
/// # impl Embedder for Letters {
/// #     async fn embed(&self, t: &[String]) -> Result<Vec<Vec<f32>>> {
/// #         Ok(t.iter().map(|s| vec![s.matches('e').count() as f32 + 1.0, s.len() as f32]).collect())
/// #     }
/// # }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = EmbeddingUserMemoryStore::new(Arc::new(InMemoryUserMemoryStore::new()), Arc::new(Letters));
/// store.upsert("ana", FactCandidate::new("likes tea", 0.9)).await.unwrap();
/// let fact = &store.list("ana").await.unwrap()[0];
/// assert!(fact.embedding.is_some());
/// # });
/// ```
pub struct EmbeddingUserMemoryStore {
    inner: Arc<dyn UserMemoryStore>,
    embedder: Arc<dyn Embedder>,
    gate: DenseGate,
}

impl std::fmt::Debug for EmbeddingUserMemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingUserMemoryStore")
            .finish_non_exhaustive()
    }
}

impl EmbeddingUserMemoryStore {
    /// `inner`, with facts and queries embedded by `embedder`.
    pub fn new(inner: Arc<dyn UserMemoryStore>, embedder: Arc<dyn Embedder>) -> Self {
        Self {
            inner,
            embedder,
            gate: DenseGate::open(),
        }
    }

    /// This store, embedding only while `gate` allows vectors: while it does not (the
    /// inner store still holds another model's vectors), facts are written without a
    /// vector (a [`Backfill`](crate::reembed::Backfill) embeds them later) and searches
    /// are by words only.
    pub fn with_gate(mut self, gate: DenseGate) -> Self {
        self.gate = gate;
        self
    }

    /// The embedding of one text.
    pub async fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        self.embedder
            .embed(&[text.to_owned()])
            .await?
            .pop()
            .ok_or_else(|| MemoryError::invalid("embedder output", "no vector for the text"))
    }
}

#[async_trait]
impl UserMemoryStore for EmbeddingUserMemoryStore {
    async fn upsert(&self, user_id: &str, mut candidate: FactCandidate) -> Result<FactChange> {
        if candidate.embedding.is_none()
            && !candidate.text.trim().is_empty()
            && self.gate.allows_vectors().await
        {
            candidate.embedding = Some(self.embed_one(&candidate.text).await?);
        }
        self.inner.upsert(user_id, candidate).await
    }

    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>> {
        if query.top_k == 0 {
            return Ok(Vec::new());
        }
        let mut query = query.clone();
        if query.embedding.is_none()
            && !query.words_only
            && !query.text.trim().is_empty()
            && self.gate.allows_vectors().await
        {
            query.embedding = Some(self.embed_one(&query.text).await?);
        }
        self.inner.search_query(user_id, &query).await
    }

    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        self.inner.list(user_id).await
    }

    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>> {
        self.inner.get(user_id, fact_id).await
    }

    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool> {
        self.inner.delete(user_id, fact_id).await
    }

    async fn forget_user(&self, user_id: &str) -> Result<usize> {
        self.inner.forget_user(user_id).await
    }

    /// Imports `records` as [`UserMemoryStore::import_records`] does, embedding first
    /// (in one batch) every fact that carries no embedding, so imported facts are found
    /// by meaning like written ones.
    async fn import_records(&self, user_id: &str, mut records: Vec<MemoryFact>) -> Result<usize> {
        let missing: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].embedding.is_none() && !records[i].text.trim().is_empty())
            .collect();
        if !missing.is_empty() && self.gate.allows_vectors().await {
            let texts: Vec<String> = missing.iter().map(|&i| records[i].text.clone()).collect();
            let vectors = self.embedder.embed(&texts).await?;
            if vectors.len() != texts.len() {
                return Err(MemoryError::invalid(
                    "embedder output",
                    format!("{} vectors for {} facts", vectors.len(), texts.len()),
                ));
            }
            for (i, vector) in missing.into_iter().zip(vectors) {
                records[i].embedding = Some(vector);
            }
        }
        self.inner.import_records(user_id, records).await
    }

    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>> {
        self.inner.history(user_id, fact_id).await
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::facts::Polarity;

    fn fact(text: &str, attribute: &str, value: &str, polarity: Polarity) -> MemoryFact {
        let mut candidate =
            FactCandidate::new(text, 0.9).with_attribute(attribute.to_owned(), value.to_owned());
        candidate.polarity = polarity;
        MemoryFact::from_candidate("u", candidate, Utc::now())
    }

    /// Embeds each text as `[its length, 1]` and counts the texts it was asked for.
    #[derive(Default)]
    struct Lengths(std::sync::atomic::AtomicUsize);

    #[async_trait]
    impl Embedder for Lengths {
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            self.0
                .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
    }

    #[test]
    fn relevance_among_facts_is_the_default_fusion_of_what_the_fact_holds() {
        let (q, f) = ([1.0f32, 0.0], [0.6f32, 0.8]);
        // The default fusion, given the query's best word score and the fact's coverage,
        // scores the fact.
        let among = fact_relevance_among(0.2, 0.4, 0.5, Some(&q), Some(&f));
        let want = Fusion::DEFAULT.combine_covered(0.2, cosine(&q, &f), 0.4, 0.5);
        assert_eq!(Some(among), want);
        assert!((0.0..=1.0).contains(&among));
        // A fact holding every query word ranks above one holding half of their weight.
        let full = fact_relevance_among(0.2, 0.4, 1.0, Some(&q), Some(&f));
        assert!(full > among, "{full} vs {among}");
        // Words only: the sparse cosine as it is, whatever the best.
        assert_eq!(fact_relevance_among(0.2, 0.4, 1.0, None, Some(&f)), 0.2);
    }

    #[tokio::test]
    async fn imported_facts_are_embedded_unless_they_carry_an_embedding() {
        let inner = Arc::new(crate::facts::InMemoryUserMemoryStore::new());
        let embedder = Arc::new(Lengths::default());
        let store = EmbeddingUserMemoryStore::new(inner.clone(), embedder.clone());
        let bare = fact("lives in Lyon", "location", "Lyon", Polarity::Positive);
        let mut carried = fact("is vegan", "diet", "vegan", Polarity::Positive);
        carried.embedding = Some(vec![0.0, 2.0]);
        let written = store
            .import_records("u", vec![bare.clone(), carried.clone()])
            .await
            .unwrap();
        assert_eq!(written, 2);
        // Only the fact without an embedding went to the model.
        assert_eq!(embedder.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        let stored = inner.list("u").await.unwrap();
        let by_text = |text: &str| stored.iter().find(|f| f.text == text).unwrap().clone();
        assert_eq!(by_text("lives in Lyon").embedding, Some(vec![13.0, 1.0]));
        assert_eq!(by_text("is vegan").embedding, Some(vec![0.0, 2.0]));
    }

    #[test]
    fn keyed_reconciliation_decides_as_the_plain_one() {
        let held = vec![
            fact("lives in Lyon", "location", "Lyon", Polarity::Positive),
            fact(
                "likes the museums",
                "likes",
                "the museums",
                Polarity::Positive,
            ),
            fact("is vegan", "diet", "vegan", Polarity::Positive),
            fact(
                "favourite food is sushi",
                "favourite food",
                "sushi",
                Polarity::Positive,
            ),
            fact("dislikes jazz", "dislikes", "jazz", Polarity::Positive),
            MemoryFact::from_candidate(
                "u",
                FactCandidate::new("Rides a MOTORBIKE to work!", 0.5),
                Utc::now(),
            ),
        ];
        let keys: Vec<FactKey> = held.iter().map(FactKey::of).collect();
        let said = [
            FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris"),
            FactCandidate::new("likes museum", 0.9).with_attribute("likes", "museum"),
            FactCandidate::new("likes jazz", 0.9).with_attribute("likes", "jazz"),
            FactCandidate::new("eats fish", 0.9).with_attribute("diet", "fish"),
            FactCandidate::new("ramen", 0.9).with_attribute("correction", "ramen"),
            FactCandidate::new("rides a motorbike to work", 0.5),
            FactCandidate::new("likes chess", 0.9).with_attribute("likes", "chess"),
            FactCandidate::new("", 0.9),
        ];
        for candidate in said {
            let plain = reconcile_by_meaning(&held, candidate.clone());
            // Keys given for all facts, and for only some of them.
            assert_eq!(
                reconcile_by_meaning_keyed(&held, &keys, candidate.clone()),
                plain
            );
            assert_eq!(
                reconcile_by_meaning_keyed(&held, &keys[..2], candidate),
                plain
            );
        }
    }
}
