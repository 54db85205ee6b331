//! The backfill after turning the model on, with the real model: facts and documents
//! stored while no model was on are embedded in the background when the store is opened
//! with it, and are then found by meaning.
//!
//! Needs `AGENTMEM_EMBED_MODEL` naming the model directory (`.ci/embed.sh` sets it): the
//! test fails without it under `CI=true` and is skipped with a message otherwise.
#![cfg(all(feature = "local-embed", feature = "sqlite"))]

use std::path::PathBuf;
use std::sync::Arc;

use agentmemory::embed::LocalEmbedder;
use agentmemory::facts::{FactCandidate, FactQuery, UserMemoryStore};
use agentmemory::reembed::{Backfill, Phase, BACKFILL_TOKEN};
use agentmemory::stores::StoreUrl;
use agentmemory::vector::{Document, SearchQuery, VectorStore};

fn model_dir() -> Option<PathBuf> {
    match std::env::var("AGENTMEM_EMBED_MODEL") {
        Ok(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "AGENTMEM_EMBED_MODEL must be set in CI (.ci/embed.sh)"
            );
            eprintln!("skipping: set AGENTMEM_EMBED_MODEL to the model directory to run");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_without_the_model_found_by_meaning_after_the_backfill() {
    let Some(dir) = model_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let url = StoreUrl::Sqlite(tmp.path().join("memory.db"));

    let plain = url.open_with_embedder(None).await.unwrap();
    let facts = plain.resolve::<dyn UserMemoryStore>(None).unwrap();
    for text in [
        "is allergic to peanuts",
        "plays the cello on weekends",
        "works as a nurse in Porto",
    ] {
        facts
            .upsert("ana", FactCandidate::new(text, 0.9))
            .await
            .unwrap();
    }
    let vectors = plain.resolve::<dyn VectorStore>(None).unwrap();
    let notes = [
        ("boiler", "The boiler was serviced in March"),
        ("ferry", "The ferry to the islands leaves at nine"),
        ("invoice", "Invoices are due at the end of the month"),
    ];
    vectors
        .upsert_batch(
            "notes",
            notes
                .iter()
                .map(|(id, text)| Document::new(*text).with_id(*id))
                .collect(),
        )
        .await
        .unwrap();
    // By words alone, a query sharing no word with the note finds nothing.
    let words = vectors
        .search("notes", &SearchQuery::new("heating maintenance", 3))
        .await
        .unwrap();
    assert!(words.is_empty(), "{words:?}");
    drop((facts, vectors, plain));

    let embedder = Arc::new(LocalEmbedder::load(&dir).unwrap());
    let opened = url.open_with_embedder(Some(embedder)).await.unwrap();
    let backfill = opened.resolve::<Backfill>(Some(BACKFILL_TOKEN)).unwrap();
    let report = backfill.wait().await.unwrap();
    assert_eq!(report.embedded, 6, "{report:?}");
    assert_eq!(report.model.dimension, 384);
    let progress = backfill.progress();
    assert_eq!(progress.phase, Phase::Done);
    assert_eq!((progress.total, progress.embedded), (6, 6));

    let vectors = opened.resolve::<dyn VectorStore>(None).unwrap();
    let hits = vectors
        .search("notes", &SearchQuery::new("heating maintenance", 1))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "boiler", "{hits:?}");
    let facts = opened.resolve::<dyn UserMemoryStore>(None).unwrap();
    let found = facts
        .search_query("ana", &FactQuery::new("nut allergy", 1))
        .await
        .unwrap();
    assert_eq!(found[0].fact.text, "is allergic to peanuts", "{found:?}");
    assert!(found[0].relevance > 0.3, "{found:?}");
}
