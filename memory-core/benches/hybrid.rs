//! Hybrid search (sparse + dense fused) over 100,000 documents with 384-dimensional
//! embeddings, in memory: `cargo bench -p agentmemory-core --bench hybrid`. The default
//! fusion (which computes each candidate's query coverage) and the fixed weight it
//! replaced, over the same documents and queries in the same run.

use criterion::{criterion_group, criterion_main, Criterion};

use agentmemory_core::store_support::Fusion;
use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};

const DOCS: usize = 100_000;
const DIM: usize = 384;
const WORDS: &[&str] = &[
    "coffee",
    "train",
    "museum",
    "hiking",
    "berlin",
    "lyon",
    "cheese",
    "guitar",
    "rain",
    "motorbike",
    "work",
    "garden",
    "bees",
    "piano",
    "sushi",
    "vegan",
    "tennis",
    "office",
    "weekend",
    "sister",
    "dog",
    "cat",
    "book",
    "film",
    "music",
    "bread",
    "city",
    "river",
];

/// A small deterministic generator (xorshift), so every run indexes the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f32 {
        (self.next() % 2001) as f32 / 1000.0 - 1.0
    }
}

fn text(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = InMemoryVectorStore::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let docs: Vec<Document> = (0..DOCS)
        .map(|i| {
            let v: Vec<f32> = (0..DIM).map(|_| rng.unit()).collect();
            Document::new(format!("{} note{i}", text(&mut rng, 8))).with_embedding(v)
        })
        .collect();
    let fixed = InMemoryVectorStore::new().with_fusion(Fusion::Weighted { dense_weight: 0.8 });
    rt.block_on(fixed.upsert_batch("bench", docs.clone()))
        .unwrap();
    rt.block_on(store.upsert_batch("bench", docs)).unwrap();
    let queries: Vec<SearchQuery> = (0..64)
        .map(|_| {
            let v: Vec<f32> = (0..DIM).map(|_| rng.unit()).collect();
            SearchQuery::new(text(&mut rng, 3), 10).with_embedding(v)
        })
        .collect();
    for (name, store) in [
        ("hybrid search, 100k docs x 384 dims, top 10", &store),
        (
            "hybrid search, 100k docs x 384 dims, top 10, fixed weight 0.8",
            &fixed,
        ),
    ] {
        let mut i = 0;
        c.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                rt.block_on(store.search("bench", &queries[i])).unwrap()
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
