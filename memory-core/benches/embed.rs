//! `LocalEmbedder` speed: batched throughput (sentences per second), the latency of one
//! short query, and the int8 embedder against the `f32` one on 1,000 real conversation
//! sentences (group `embed_int8`; its agreement, min and mean cosine, is printed first).
//!
//! `AGENTMEM_EMBED_MODEL="$(scripts/fetch-model)" cargo bench -p agentmemory-core
//! --features local-embed --bench embed`. Threads default to 2 (the target machine's cores);
//! `AGENTMEM_BENCH_THREADS` overrides. Without the variable the benchmarks are skipped.

use std::hint::black_box;
use std::time::Duration;

use agentmemory_core::embed::{LocalEmbedder, Precision, AGENTMEM_EMBED_MODEL};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

#[path = "support/sentences.rs"]
mod sentences;

const SENTENCES: usize = 256;
/// Real sentences the int8 group embeds.
const REAL: usize = 1000;

/// SplitMix64: a tiny, seeded, deterministic generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Everyday statements of 5 to 25 words, assembled from phrases so lengths and wording vary.
fn sentences(n: usize) -> Vec<String> {
    const WHO: &[&str] = &[
        "I",
        "My sister",
        "Our new neighbour",
        "The team at work",
        "My grandfather",
        "Yesterday my manager",
        "A friend from university",
        "The kids",
        "We",
        "My partner and I",
    ];
    const DOES: &[&str] = &[
        "really enjoy",
        "booked",
        "am planning to visit",
        "cannot stand",
        "recently started",
        "keep forgetting about",
        "spent the whole weekend on",
        "would love to try",
        "complained about",
        "finally finished",
    ];
    const WHAT: &[&str] = &[
        "the small bakery near the station",
        "hiking",
        "a cooking class",
        "the quarterly budget review",
        "Lisbon",
        "the old vinyl records in the attic",
        "a vegetarian lasagne recipe",
        "learning Japanese",
        "the noisy construction site next door",
        "a second-hand electric bike",
        "the dentist appointment",
        "board games",
    ];
    const WHEN: &[&str] = &[
        "every Saturday morning",
        "because the trains were delayed again",
        "after the kids go to bed",
        "before the end of the month",
        "with a couple of colleagues from the marketing department",
        "even though it rained all day",
        "during the summer holidays in the mountains",
        "whenever the weather is nice",
        "since last spring",
        "to save a bit of money",
    ];
    let mut rng = Rng(0x5EED);
    (0..n)
        .map(|_| {
            let mut s = format!("{} {} {}", rng.pick(WHO), rng.pick(DOES), rng.pick(WHAT));
            for _ in 0..rng.below(3) {
                s.push(' ');
                s.push_str(rng.pick(WHEN));
            }
            s.push('.');
            s
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "where do I live?",
    "what food do I like",
    "any plans this weekend?",
    "who is my manager",
    "do I have pets?",
    "what music do I enjoy",
];

fn model() -> Option<(String, usize)> {
    let dir = std::env::var(AGENTMEM_EMBED_MODEL)
        .ok()
        .filter(|d| !d.is_empty());
    if dir.is_none() {
        eprintln!(
            "skipping the embed benchmarks: set {AGENTMEM_EMBED_MODEL} (scripts/fetch-model)"
        );
    }
    let threads = std::env::var("AGENTMEM_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    dir.map(|d| (d, threads))
}

fn batched(c: &mut Criterion) {
    let Some((dir, threads)) = model() else {
        return;
    };
    let texts = sentences(SENTENCES);
    let words: usize = texts.iter().map(|s| s.split_whitespace().count()).sum();
    eprintln!(
        "{SENTENCES} sentences, {:.1} words on average, {threads} threads",
        words as f64 / SENTENCES as f64
    );
    for batch_size in [32, 64] {
        let embedder = LocalEmbedder::builder(&dir)
            .threads(threads)
            .batch_size(batch_size)
            .build()
            .expect("the model loads");
        report_cpu_time(&format!("batch {batch_size}"), &embedder, &texts);
    }
    let mut group = c.benchmark_group("embed_batched");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(SENTENCES as u64));
    for batch_size in [32, 64] {
        let embedder = LocalEmbedder::builder(&dir)
            .threads(threads)
            .batch_size(batch_size)
            .build()
            .expect("the model loads");
        group.bench_with_input(
            BenchmarkId::new("sentences", batch_size),
            &texts,
            |b, texts| b.iter(|| black_box(embedder.embed_blocking(texts).unwrap())),
        );
    }
    group.finish();
}

/// CPU seconds this process has used (user + system), from /proc; `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which ends at the last ')'): utime and stime are the
    // 12th and 13th, in clock ticks (100 per second on Linux).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Wall and CPU time of one batched pass. On a machine shared with other work the wall
/// figure drops; sentences per CPU-second times the thread count is what the same code
/// reaches with the cores to itself.
fn report_cpu_time(label: &str, embedder: &LocalEmbedder, texts: &[String]) {
    embedder.embed_blocking(texts).unwrap(); // warm-up
    let (wall, cpu) = (std::time::Instant::now(), cpu_seconds());
    for _ in 0..3 {
        black_box(embedder.embed_blocking(texts).unwrap());
    }
    let wall = wall.elapsed().as_secs_f64();
    let n = (3 * texts.len()) as f64;
    match cpu.zip(cpu_seconds()) {
        Some((before, after)) => eprintln!(
            "{label}: {:.0} sentences/s wall, {:.0} sentences per CPU-second ({:.2} cores busy)",
            n / wall,
            n / (after - before),
            (after - before) / wall
        ),
        None => eprintln!("{label}: {:.0} sentences/s wall", n / wall),
    }
}

/// A call with a few texts (a handful of facts or documents at once): fewer than a full
/// batch per thread.
fn few(c: &mut Criterion) {
    let Some((dir, threads)) = model() else {
        return;
    };
    let embedder = LocalEmbedder::builder(&dir)
        .threads(threads)
        .build()
        .expect("the model loads");
    let texts = sentences(40);
    let mut group = c.benchmark_group("embed_few");
    group.measurement_time(Duration::from_secs(10));
    for n in [8, 40] {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("sentences", n), &texts[..n], |b, texts| {
            b.iter(|| black_box(embedder.embed_blocking(texts).unwrap()))
        });
    }
    group.finish();
}

fn single_query(c: &mut Criterion) {
    let Some((dir, threads)) = model() else {
        return;
    };
    let embedder = LocalEmbedder::builder(&dir)
        .threads(threads)
        .build()
        .expect("the model loads");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("embed_query");
    group.measurement_time(Duration::from_secs(10));
    let mut next = 0;
    group.bench_function("blocking", |b| {
        b.iter(|| {
            next = (next + 1) % QUERIES.len();
            black_box(embedder.embed_blocking(&[QUERIES[next]]).unwrap())
        })
    });
    // Through the async trait: the same work plus the hop to a blocking thread.
    group.bench_function("async", |b| {
        b.to_async(&runtime).iter(|| {
            next = (next + 1) % QUERIES.len();
            let texts = [QUERIES[next].to_owned()];
            let embedder = &embedder;
            async move { black_box(embedder.embed(&texts).await.unwrap()) }
        })
    });
    group.finish();
}

/// The cosine similarity of two vectors, in `f64`.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The int8 embedder against the `f32` one, same threads and batch size, on 1,000 real
/// conversation sentences: agreement (min and mean cosine) printed, then batched
/// throughput of each.
fn int8(c: &mut Criterion) {
    let Some((dir, threads)) = model() else {
        return;
    };
    let texts = sentences::real_sentences(REAL);
    let build = |precision| {
        LocalEmbedder::builder(&dir)
            .threads(threads)
            .precision(precision)
            .build()
            .expect("the model loads")
    };
    let (full, int8) = (build(Precision::F32), build(Precision::Int8));
    let want = full.embed_blocking(&texts).unwrap();
    let got = int8.embed_blocking(&texts).unwrap();
    let cosines: Vec<f64> = want.iter().zip(&got).map(|(a, b)| cosine(a, b)).collect();
    let (worst, at) = cosines
        .iter()
        .enumerate()
        .map(|(i, c)| (*c, i))
        .fold((f64::INFINITY, 0), |m, x| if x.0 < m.0 { x } else { m });
    eprintln!(
        "int8 vs f32 on {REAL} real sentences, {threads} threads: min cosine {worst:.5} ({:?}), mean {:.5}",
        texts[at],
        cosines.iter().sum::<f64>() / cosines.len() as f64
    );
    report_cpu_time("f32", &full, &texts);
    report_cpu_time("int8", &int8, &texts);

    let mut group = c.benchmark_group("embed_int8");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Elements(REAL as u64));
    for (name, embedder) in [("f32", &full), ("int8", &int8)] {
        group.bench_with_input(
            BenchmarkId::new("real_sentences", name),
            &texts,
            |b, texts| b.iter(|| black_box(embedder.embed_blocking(texts).unwrap())),
        );
    }
    group.finish();
}

criterion_group!(benches, batched, few, single_query, int8);
criterion_main!(benches);
