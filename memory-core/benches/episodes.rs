//! Episodes and recall on the turn, in memory (sparse), and with the local embedder: one
//! user with 1,000 facts and 10,000 episodes across 100 dated conversations of generated
//! conversational English (`support/life.rs`). The groups are described in
//! `support/turns.rs`; `memory-stores/benches/episodes.rs` runs the same ones on SQLite.
//!
//! `turn_local_embed` (feature `local-embed`, `AGENTMEM_EMBED_MODEL` set; skipped with a
//! message otherwise): the same turn with the local embedder, beside one query embedding
//! alone, and how many texts a turn embeds (the user's message, the reply, the rest).
//! Threads default to 2 (the target machine's cores); `AGENTMEM_BENCH_THREADS` overrides.
//!
//! `cargo bench -p agentmemory-core --bench episodes [--features local-embed] [-- --quick]`

#[path = "support/life.rs"]
mod life;
#[path = "support/turns.rs"]
mod turns;

use std::sync::Arc;

use agentmemory_core::facts::InMemoryUserMemoryStore;
use agentmemory_core::model::OfflineModel;
use agentmemory_core::{Container, InMemoryConversationStore, InMemoryVectorStore};
use chrono::Utc;
use criterion::{criterion_group, criterion_main, Criterion};

use turns::{runtime, World, FACTS, USER};

/// In-memory stores, as `StoreUrl::Memory` registers them, plus the offline model.
fn container() -> Container {
    let container = Container::new();
    container
        .register_user_memory("user_memory", Arc::new(InMemoryUserMemoryStore::new()))
        .register_vectors("vectors", Arc::new(InMemoryVectorStore::new()))
        .register_conversations("log", Arc::new(InMemoryConversationStore::new()))
        .register_model("offline", Arc::new(OfflineModel::new()));
    container
}

fn in_memory(c: &mut Criterion) {
    let rt = runtime();
    let world = World::seeded(&rt, container(), life::facts(USER, FACTS, Utc::now()));
    turns::index(c, &rt, &world, "in_memory");
    turns::turns(c, &rt, &world, "in_memory");
    turns::parts(c, &rt, &world, "in_memory");
}

#[cfg(feature = "local-embed")]
mod local {
    //! The turn with the local embedder, and the one query embedding alone.

    use std::hint::black_box;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use agentmemory_core::embed::{LocalEmbedder, AGENTMEM_EMBED_MODEL};
    use agentmemory_core::vector::embed_stores;
    use agentmemory_core::Embedder;
    use async_trait::async_trait;

    use super::*;
    use turns::{check_recall, timed_turns, Cursor};

    /// The local embedder, counting the texts it embeds (and keeping them while `keep`).
    struct Counting {
        inner: LocalEmbedder,
        texts: AtomicUsize,
        calls: AtomicUsize,
        keep: AtomicBool,
        kept: parking_lot::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl Embedder for Counting {
        async fn embed(&self, texts: &[String]) -> agentmemory_core::Result<Vec<Vec<f32>>> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.texts.fetch_add(texts.len(), Ordering::Relaxed);
            if self.keep.load(Ordering::Relaxed) {
                self.kept.lock().extend(texts.iter().cloned());
            }
            Ok(self.inner.embed(texts).await?)
        }
        fn dimensions(&self) -> Option<usize> {
            self.inner.dimensions()
        }
    }

    pub fn turn(c: &mut Criterion) {
        let Some(dir) = std::env::var(AGENTMEM_EMBED_MODEL)
            .ok()
            .filter(|d| !d.is_empty())
        else {
            eprintln!(
                "skipping turn_local_embed: set {AGENTMEM_EMBED_MODEL} to the model directory"
            );
            return;
        };
        let threads = std::env::var("AGENTMEM_BENCH_THREADS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(2);
        let embedder = Arc::new(Counting {
            inner: LocalEmbedder::builder(&dir)
                .threads(threads)
                .build()
                .unwrap_or_else(|e| panic!("the model loads: {e}")),
            texts: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
            keep: false.into(),
            kept: Default::default(),
        });
        let rt = runtime();
        let container = container();
        embed_stores(&container, Arc::clone(&embedder) as Arc<dyn Embedder>)
            .unwrap_or_else(|e| panic!("{e}"));
        // Facts carry their embeddings (import_records writes records as they are, so
        // they are embedded here in one batch); episodes are embedded by the store as
        // they are added, 1,000 at a time.
        let mut records = life::facts(USER, FACTS, Utc::now());
        let texts: Vec<String> = records.iter().map(|f| f.text.clone()).collect();
        let vectors = embedder
            .inner
            .embed_blocking(&texts)
            .unwrap_or_else(|e| panic!("{e}"));
        for (fact, v) in records.iter_mut().zip(vectors) {
            fact.embedding = Some(v);
        }
        let world = World::seeded(&rt, container, records);
        eprintln!(
            "embedded {} episode texts while seeding",
            embedder.texts.load(Ordering::Relaxed)
        );

        let mixed = life::incoming(64);
        let before = (
            embedder.calls.load(Ordering::Relaxed),
            embedder.texts.load(Ordering::Relaxed),
        );
        embedder.keep.store(true, Ordering::Relaxed);
        check_recall(&rt, &world, &mixed, "local embedder, mixed messages");
        embedder.keep.store(false, Ordering::Relaxed);
        let calls = embedder.calls.load(Ordering::Relaxed) - before.0;
        let texts = embedder.texts.load(Ordering::Relaxed) - before.1;
        // What was embedded: the user's messages, the replies (the offline model's start
        // "You said"), and the rest (episode queries without their time words, facts).
        let kept = std::mem::take(&mut *embedder.kept.lock());
        let messages = kept.iter().filter(|t| mixed.contains(t)).count();
        let replies = kept.iter().filter(|t| t.starts_with("You said")).count();
        let n = mixed.len() as f64;
        eprintln!(
            "local embedder: {:.2} embedder calls and {:.2} texts embedded per turn: \
             {:.2} the user's message, {:.2} the reply, {:.2} other (the episode query \
             without its time words, extracted facts)",
            calls as f64 / n,
            texts as f64 / n,
            messages as f64 / n,
            replies as f64 / n,
            (kept.len() - messages - replies) as f64 / n,
        );

        let mut group = c.benchmark_group("turn_local_embed_1000_facts_10000_episodes");
        group.sample_size(20);
        group.measurement_time(Duration::from_secs(10));
        let mut n = 0usize;
        group.bench_function("one_query_embedding", |b| {
            b.iter(|| {
                n += 1;
                let texts = [mixed[n % mixed.len()].clone()];
                black_box(rt.block_on(embedder.inner.embed(&texts)))
                    .unwrap_or_else(|e| panic!("{e}"))
            })
        });
        let mut session = world.session(&rt);
        let mut cursor = Cursor::default();
        group.bench_function("in_memory_mixed", |b| {
            b.iter_custom(|iters| {
                timed_turns(&rt, &world, &mut session, &mixed, &mut cursor, iters)
            })
        });
        group.finish();
        world.drop_added(&rt);
    }
}

#[cfg(feature = "local-embed")]
use local::turn as local_embed;

#[cfg(not(feature = "local-embed"))]
fn local_embed(_: &mut Criterion) {
    eprintln!("skipping turn_local_embed: built without the `local-embed` feature");
}

criterion_group!(benches, in_memory, local_embed);
criterion_main!(benches);
