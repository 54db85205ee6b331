//! The background backfill over in-memory stores: model change behind the gate, retry
//! after a failure, stop when the stores are dropped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::*;
use crate::facts::{FactCandidate, FactQuery, InMemoryUserMemoryStore, UserMemoryStore};
use crate::vector::{Document, InMemoryVectorStore, VectorStore};
use crate::{Container, MemoryError};

/// Embeds a text as its counts of a, e, i, o, u plus 1 (so never zero), under `name`; fails
/// the first `fail` calls and waits `delay` per call.
struct Vowels {
    name: &'static str,
    calls: AtomicUsize,
    fail: usize,
    delay: Duration,
}

impl Vowels {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            calls: AtomicUsize::new(0),
            fail: 0,
            delay: Duration::ZERO,
        }
    }
}

#[async_trait]
impl Embedder for Vowels {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        if call < self.fail {
            return Err(MemoryError::invalid("model", "warming up"));
        }
        Ok(texts
            .iter()
            .map(|t| {
                let mut v: Vec<f32> = ['a', 'e', 'i', 'o', 'u']
                    .iter()
                    .map(|c| t.matches(*c).count() as f32)
                    .collect();
                v.push(1.0);
                v
            })
            .collect())
    }

    fn dimensions(&self) -> Option<usize> {
        Some(6)
    }

    fn model_name(&self) -> Option<String> {
        Some(self.name.to_owned())
    }
}

struct Stores {
    facts: Arc<InMemoryUserMemoryStore>,
    vectors: Arc<InMemoryVectorStore>,
    container: Container,
}

fn stores() -> Stores {
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    let vectors = Arc::new(InMemoryVectorStore::new());
    let container = Container::new();
    container
        .register_user_memory("facts", facts.clone())
        .register_vectors("vectors", vectors.clone())
        .register::<dyn Reembed>("facts", facts.clone())
        .register::<dyn Reembed>("vectors", vectors.clone());
    Stores {
        facts,
        vectors,
        container,
    }
}

#[tokio::test]
async fn opening_with_another_model_drops_its_vectors_behind_the_gate() {
    let s = stores();
    // Written with a model "old" of the same dimension: its vectors must not be compared
    // with the new model's.
    let old: Arc<dyn Embedder> = Arc::new(Vowels::new("old"));
    let first = embed_stores_backfilled(&s.container, old).unwrap();
    first.wait().await.unwrap();
    let facts = s.container.resolve::<dyn UserMemoryStore>(None).unwrap();
    facts
        .upsert("ana", FactCandidate::new("eats rice", 0.9))
        .await
        .unwrap();
    s.vectors
        .upsert(
            "docs",
            Document::new("a note").with_embedding(vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
        )
        .await
        .unwrap();

    let fresh = stores();
    // Same stores, reopened with the model "new".
    let container = Container::new();
    container
        .register_user_memory("facts", s.facts.clone())
        .register_vectors("vectors", s.vectors.clone())
        .register::<dyn Reembed>("facts", s.facts.clone())
        .register::<dyn Reembed>("vectors", s.vectors.clone());
    drop(fresh);
    let new = Arc::new(Vowels::new("new"));
    let backfill = embed_stores_backfilled(&container, new.clone()).unwrap();
    let report = backfill.wait().await.unwrap();
    assert!(report.model_changed);
    assert_eq!(report.dropped, 2);
    assert_eq!(report.embedded, 2);
    assert_eq!(report.model, EmbeddingModel::new("new", 6));
    assert_eq!(
        s.facts.embedding_model().await.unwrap(),
        Some(EmbeddingModel::new("new", 6))
    );
    let doc = s
        .vectors
        .get("docs", &s.vectors.ids("docs").await.unwrap()[0])
        .await
        .unwrap();
    let v = doc.unwrap().embedding.unwrap();
    // "a note": one a, one e, one o, plus the constant, normalised.
    assert!(
        (v[0] - 0.5).abs() < 1e-6 && (v[5] - 0.5).abs() < 1e-6,
        "{v:?}"
    );
    // The registered handle is the one returned.
    let registered = container.resolve::<Backfill>(Some(BACKFILL_TOKEN)).unwrap();
    assert_eq!(registered.progress().phase, Phase::Done);
    // Search is hybrid again.
    let facts = container.resolve::<dyn UserMemoryStore>(None).unwrap();
    let hits = facts
        .search_query("ana", &FactQuery::new("rice", 1))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
}

#[tokio::test]
async fn while_old_vectors_remain_search_is_by_words_and_writes_wait_for_the_backfill() {
    let (gate, setter) = DenseGate::checking();
    let inner = Arc::new(InMemoryUserMemoryStore::new());
    let embedder = Arc::new(Vowels::new("new"));
    let store = crate::facts::EmbeddingUserMemoryStore::new(inner.clone(), embedder.clone())
        .with_gate(gate);
    setter.set(gate::GateState::Stale);
    store
        .upsert("ana", FactCandidate::new("eats rice", 0.9))
        .await
        .unwrap();
    assert!(inner.list("ana").await.unwrap()[0].embedding.is_none());
    store.search("ana", "rice", 3).await.unwrap();
    assert_eq!(
        embedder.calls.load(Ordering::SeqCst),
        0,
        "no vector is made"
    );
    setter.set(gate::GateState::Open);
    store
        .upsert("ana", FactCandidate::new("owns a bike", 0.9))
        .await
        .unwrap();
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_step_is_retried_and_shows_in_the_progress() {
    let s = stores();
    s.facts
        .upsert("ana", FactCandidate::new("eats rice", 0.9))
        .await
        .unwrap();
    let mut flaky = Vowels::new("flaky");
    flaky.fail = 1;
    let backfill = embed_stores_backfilled(&s.container, Arc::new(flaky)).unwrap();
    let mut saw_error = false;
    while !backfill.progress().is_finished() {
        saw_error |= backfill.progress().last_error.is_some();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(saw_error, "the failure was reported while retried");
    let report = backfill.wait().await.unwrap();
    assert_eq!(report.embedded, 1);
    assert!(backfill.progress().last_error.is_none());
    assert!(s.facts.list("ana").await.unwrap()[0].embedding.is_some());
}

#[tokio::test]
async fn the_backfill_stops_when_the_stores_are_dropped() {
    let s = stores();
    for i in 0..20 {
        s.facts
            .upsert("ana", FactCandidate::new(format!("fact number {i}"), 0.9))
            .await
            .unwrap();
    }
    let mut slow = Vowels::new("slow");
    slow.delay = Duration::from_millis(30);
    let targets: Vec<Arc<dyn Reembed>> = vec![s.facts.clone()];
    let (backfill, _gate) =
        Backfill::spawn(targets, Arc::new(slow), BackfillOptions::default().batch(2));
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(s);
    let err = backfill.wait().await.unwrap_err();
    assert!(err.to_string().contains("dropped"), "{err}");
    let progress = backfill.progress();
    assert_eq!(progress.phase, Phase::Stopped);
    assert!(progress.embedded < 20, "{progress:?}");
}

#[tokio::test]
async fn foreground_runs_stop_at_the_first_error() {
    let s = stores();
    s.facts
        .upsert("ana", FactCandidate::new("eats rice", 0.9))
        .await
        .unwrap();
    let mut broken = Vowels::new("broken");
    broken.fail = usize::MAX;
    let targets: Vec<Arc<dyn Reembed>> = vec![s.facts.clone()];
    let err = Backfill::run(
        targets,
        Arc::new(broken),
        BackfillOptions::default(),
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("warming up"), "{err}");
}

#[tokio::test]
async fn a_failing_check_does_not_hold_searches_back() {
    let s = stores();
    s.facts
        .upsert("ana", FactCandidate::new("eats rice", 0.9))
        .await
        .unwrap();
    // Names no dimension and fails: the probe for it is retried in the background.
    struct Down;
    #[async_trait]
    impl Embedder for Down {
        async fn embed(&self, _: &[String]) -> Result<Vec<Vec<f32>>> {
            Err(MemoryError::invalid("model", "unreachable"))
        }
    }
    let backfill = embed_stores_backfilled(&s.container, Arc::new(Down)).unwrap();
    let facts = s.container.resolve::<dyn UserMemoryStore>(None).unwrap();
    let searched = tokio::time::timeout(
        Duration::from_secs(5),
        facts.search_query("ana", &FactQuery::new("rice", 1)),
    )
    .await
    .expect("the search does not wait for the failing backfill");
    // The query could not be embedded either: the error is the embedder's.
    assert!(searched.is_err());
    assert!(backfill.progress().last_error.is_some());
    assert!(!backfill.progress().is_finished());
}
