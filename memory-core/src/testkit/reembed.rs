//! Conformance of [`Reembed`]: what has no vector is listed, embedded and stored; a model
//! change drops the old vectors; a vector made for a text that changed meanwhile is not
//! stored.
//!
//! A backfill passes over everything a store holds and a model change drops every vector,
//! so these checks need a store of their own (a fresh database, a private schema or key
//! prefix), empty when they start.

use std::sync::Arc;

use crate::facts::{FactCandidate, UserMemoryStore};
use crate::reembed::{
    Backfill, BackfillOptions, Embedded, EmbeddingModel, EmbeddingTarget, Reembed,
};
use crate::store_support::cosine;
use crate::vector::{Document, Embedder, VectorStore};

use super::facts::HashEmbedder;

/// A second deterministic [`Embedder`] for model-change tests: the folded terms of a text
/// hashed into 16 dimensions (a different hash from [`HashEmbedder`]'s), plus a constant
/// one; named `hash-17`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SmallHashEmbedder;

#[async_trait::async_trait]
impl Embedder for SmallHashEmbedder {
    async fn embed(&self, texts: &[String]) -> crate::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 17];
                v[16] = 0.25;
                crate::text::for_each_term(t, |term| {
                    // djb2: stable across runs and platforms.
                    let h = term
                        .bytes()
                        .fold(5381u32, |h, b| h.wrapping_mul(33) ^ u32::from(b));
                    v[(h % 16) as usize] += 1.0;
                });
                v
            })
            .collect())
    }

    fn dimensions(&self) -> Option<usize> {
        Some(17)
    }

    fn model_name(&self) -> Option<String> {
        Some("hash-17".to_owned())
    }
}

const FACTS: [&str; 4] = [
    "is allergic to peanuts",
    "plays the cello on weekends",
    "works as a nurse in Porto",
    "has a dog called Miso",
];
const DOCS: [&str; 3] = [
    "The ferry to the islands leaves at nine",
    "Invoices are due at the end of the month",
    "The cello teacher moved to Lisbon",
];

async fn total_unembedded(targets: &[Arc<dyn Reembed>]) -> usize {
    let mut n = 0;
    for t in targets {
        n += t
            .count_unembedded()
            .await
            .expect("count what has no vector");
    }
    n
}

async fn recorded(targets: &[Arc<dyn Reembed>]) -> Vec<Option<EmbeddingModel>> {
    let mut out = Vec::new();
    for t in targets {
        out.push(t.embedding_model().await.expect("read the recorded model"));
    }
    out
}

/// Asserts that every fact of `user` and document of `ns` carries `embedder`'s vector of
/// its text.
async fn assert_embedded_by(
    facts: &dyn UserMemoryStore,
    vectors: &dyn VectorStore,
    user: &str,
    ns: &str,
    doc_ids: &[String],
    embedder: &dyn Embedder,
) {
    let listed = facts.list(user).await.expect("list facts");
    assert_eq!(listed.len(), FACTS.len(), "{listed:?}");
    for fact in listed {
        let want = embedder
            .embed(std::slice::from_ref(&fact.text))
            .await
            .expect("embed");
        let got = fact
            .embedding
            .unwrap_or_else(|| panic!("fact `{}` has no vector", fact.text));
        assert_eq!(got.len(), want[0].len(), "fact `{}`", fact.text);
        assert!(cosine(&got, &want[0]) > 0.999, "fact `{}`", fact.text);
    }
    for id in doc_ids {
        let doc = vectors.get(ns, id).await.expect("get").expect("document");
        let want = embedder
            .embed(std::slice::from_ref(&doc.content))
            .await
            .expect("embed");
        let got = doc
            .embedding
            .unwrap_or_else(|| panic!("document `{}` has no vector", doc.content));
        assert_eq!(got.len(), want[0].len(), "document `{}`", doc.content);
        assert!(cosine(&got, &want[0]) > 0.999, "document `{}`", doc.content);
    }
}

/// Every check, in order, on one store of its own: `facts` and `vectors` are its two
/// faces, `targets` what implements [`Reembed`] for them (one object for a persistent
/// store, two for the in-memory ones).
pub async fn run_all(
    facts: &dyn UserMemoryStore,
    vectors: &dyn VectorStore,
    targets: Vec<Arc<dyn Reembed>>,
) {
    check_backfill_and_model_change(facts, vectors, targets.clone()).await;
    check_changed_text_is_not_embedded(vectors, &targets).await;
}

/// Facts and documents written without a model are listed, in pages, embedded and
/// stored; the model is recorded; a second pass has nothing to do; another model drops
/// the vectors, embeds everything again at its own dimension and is recorded; `all`
/// re-embeds everything with the same model.
pub async fn check_backfill_and_model_change(
    facts: &dyn UserMemoryStore,
    vectors: &dyn VectorStore,
    targets: Vec<Arc<dyn Reembed>>,
) {
    assert_eq!(
        total_unembedded(&targets).await,
        0,
        "the reembed checks need an empty store of their own"
    );
    let user = format!("testkit-reembed-{}", ulid::Ulid::new());
    let ns = format!("testkit-reembed-{}", ulid::Ulid::new());
    // A superseded fact is history: it is not embedded.
    facts
        .upsert(
            &user,
            FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris"),
        )
        .await
        .expect("upsert");
    facts
        .upsert(
            &user,
            FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin"),
        )
        .await
        .expect("upsert");
    for text in &FACTS[1..] {
        facts
            .upsert(&user, FactCandidate::new(*text, 0.8))
            .await
            .expect("upsert");
    }
    let docs: Vec<Document> = DOCS.iter().map(|d| Document::new(*d)).collect();
    let doc_ids = vectors.upsert_batch(&ns, docs).await.expect("upsert docs");
    let records = FACTS.len() + DOCS.len();
    assert_eq!(total_unembedded(&targets).await, records);
    assert!(recorded(&targets).await.iter().all(Option::is_none));

    // Pages of two: several pages per store.
    let options = BackfillOptions::default().batch(2);
    let report = Backfill::run(targets.clone(), Arc::new(HashEmbedder), options, |_| {})
        .await
        .expect("backfill");
    assert_eq!(report.embedded, records, "{report:?}");
    assert!(!report.model_changed && report.dropped == 0, "{report:?}");
    assert_eq!(total_unembedded(&targets).await, 0);
    assert_embedded_by(facts, vectors, &user, &ns, &doc_ids, &HashEmbedder).await;
    let hash = EmbeddingModel::new("hash-65", 65);
    assert!(recorded(&targets)
        .await
        .iter()
        .all(|r| r.as_ref() == Some(&hash)));
    let history = facts.list(&user).await.expect("list");
    let berlin = history
        .iter()
        .find(|f| f.text == "lives in Berlin")
        .expect("berlin");
    let chain = facts.history(&user, &berlin.id).await.expect("history");
    assert!(
        chain[0].embedding.is_none(),
        "superseded facts are not embedded"
    );

    let again = Backfill::run(targets.clone(), Arc::new(HashEmbedder), options, |_| {})
        .await
        .expect("second pass");
    assert_eq!(again.embedded, 0, "nothing left to embed: {again:?}");

    // Another model: the old vectors go, every record is embedded again.
    let mut seen = Vec::new();
    let changed = Backfill::run(
        targets.clone(),
        Arc::new(SmallHashEmbedder),
        options,
        move |p| seen.push(p.phase),
    )
    .await
    .expect("backfill after a model change");
    assert!(changed.model_changed, "{changed:?}");
    assert_eq!(changed.dropped, records, "{changed:?}");
    assert_eq!(changed.embedded, records, "{changed:?}");
    assert_embedded_by(facts, vectors, &user, &ns, &doc_ids, &SmallHashEmbedder).await;
    let small = EmbeddingModel::new("hash-17", 17);
    assert!(recorded(&targets)
        .await
        .iter()
        .all(|r| r.as_ref() == Some(&small)));
    // The namespace took the new dimension: a 17-dimension document is accepted.
    vectors
        .upsert(
            &ns,
            Document::new("seventeen").with_embedding(vec![1.0; 17]),
        )
        .await
        .expect("a vector of the new model's dimension");

    // Everything again, same model.
    let all = Backfill::run(
        targets.clone(),
        Arc::new(SmallHashEmbedder),
        options.all(true),
        |_| {},
    )
    .await
    .expect("re-embed everything");
    assert!(!all.model_changed, "{all:?}");
    assert_eq!(all.dropped, records + 1, "{all:?}");
    assert_eq!(all.embedded, records + 1, "{all:?}");
    assert_embedded_by(facts, vectors, &user, &ns, &doc_ids, &SmallHashEmbedder).await;
    facts.forget_user(&user).await.expect("forget");
    vectors.clear(&ns).await.expect("clear");
}

/// A vector made for a document's text is not stored once the document holds another
/// text, nor for a fact that is not current or not the user's.
pub async fn check_changed_text_is_not_embedded(
    vectors: &dyn VectorStore,
    targets: &[Arc<dyn Reembed>],
) {
    let ns = format!("testkit-reembed-changed-{}", ulid::Ulid::new());
    let id = vectors
        .upsert(&ns, Document::new("the first text"))
        .await
        .expect("upsert");
    vectors
        .upsert(&ns, Document::new("the second text").with_id(id.clone()))
        .await
        .expect("rewrite");
    let stale = Embedded::new(
        EmbeddingTarget::Document {
            namespace: ns.clone(),
            id: id.clone(),
        },
        "the first text",
        vec![1.0; 17],
    );
    let ghost = Embedded::new(
        EmbeddingTarget::Fact {
            user_id: format!("testkit-nobody-{}", ulid::Ulid::new()),
            fact_id: ulid::Ulid::new().to_string(),
        },
        "no such fact",
        vec![1.0; 17],
    );
    for t in targets {
        let written = t
            .set_embeddings(vec![stale.clone(), ghost.clone()])
            .await
            .expect("set embeddings");
        assert_eq!(
            written, 0,
            "a vector for an old text or a missing fact was stored"
        );
    }
    let doc = vectors.get(&ns, &id).await.expect("get").expect("document");
    assert!(doc.embedding.is_none());
    vectors.clear(&ns).await.expect("clear");
}
