//! The shared data set, generated from a fixed seed and written to files both sides read.
//!
//! - `messages.txt`: 100,000 chat messages (5–40 pseudo-words), one per line;
//! - `docs.txt`: 100,000 documents of 30 pseudo-words; `queries.txt`: 200 three-word queries;
//! - `facts.txt`: 1,200 short facts (the first 1,000 preloaded, then one per turn);
//! - `vectors.f32` / `dense_queries.f32`: 100,000 and 1,000 vectors of 384 little-endian
//!   `f32` (not normalised; both sides normalise);
//! - `embed_queries.txt`: [`EMBED_QUERIES`], the short English questions both sides embed
//!   one at a time (written on every `gen`, so a data directory made before it gains it).

use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::Error;

pub const SEED: u64 = 20_260_423;
pub const MESSAGES: usize = 100_000;
pub const DOCS: usize = 100_000;
pub const QUERIES: usize = 200;
pub const FACTS: usize = 1_200;
pub const VECTORS: usize = 100_000;
pub const DENSE_QUERIES: usize = 1_000;
pub const DIM: usize = 384;
const VOCABULARY: usize = 5_000;

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Pseudo-words with Zipf (s = 1) frequencies.
struct Words {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Words {
    fn new(rng: &mut Rng) -> Self {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "ta", "po", "vi", "se", "da", "gu", "fe", "ri", "zo",
            "be", "ha", "ju", "ni", "qu", "xe",
        ];
        let mut words = Vec::with_capacity(VOCABULARY);
        let mut seen = std::collections::HashSet::new();
        while words.len() < VOCABULARY {
            let n = 2 + rng.below(3);
            let w: String = (0..n)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Self { words, cumulative }
    }

    fn word(&self, rng: &mut Rng) -> &str {
        let x = rng.unit() * self.cumulative[VOCABULARY - 1];
        let i = self
            .cumulative
            .partition_point(|c| *c < x)
            .min(VOCABULARY - 1);
        &self.words[i]
    }

    fn text(&self, rng: &mut Rng, n: usize) -> String {
        (0..n).map(|_| self.word(rng)).collect::<Vec<_>>().join(" ")
    }
}

fn write_lines(path: &Path, lines: impl Iterator<Item = String>) -> Result<(), Error> {
    let mut f = BufWriter::new(fs::File::create(path)?);
    for line in lines {
        writeln!(f, "{line}")?;
    }
    f.flush()?;
    Ok(())
}

fn write_vectors(path: &Path, rng: &mut Rng, n: usize) -> Result<(), Error> {
    let mut f = BufWriter::new(fs::File::create(path)?);
    for _ in 0..n * DIM {
        let x = (rng.unit() * 2.0 - 1.0) as f32;
        f.write_all(&x.to_le_bytes())?;
    }
    f.flush()?;
    Ok(())
}

/// Short questions of the kind an agent embeds to recall memories (3 to 9 words, 6 to 13
/// tokens with [CLS] and [SEP]): the `embed` workloads embed them one at a time.
pub const EMBED_QUERIES: &[&str] = &[
    "where do I live?",
    "what food do I like",
    "any plans this weekend?",
    "who is my manager",
    "do I have pets?",
    "what music do I enjoy",
    "when is my sister's birthday?",
    "which languages am I learning",
    "what did we decide about the trip to Lisbon?",
    "am I allergic to anything",
    "what is my favourite book",
    "how do I get to the office",
    "what car do I drive",
    "who did I meet last Tuesday?",
    "what are my running goals",
    "where did I go on holiday last year?",
];

/// Writes the data set into `dir` (skipped when `dir/DONE` names the same seed, but for
/// `embed_queries.txt`, always written).
pub fn generate(dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir)?;
    write_lines(
        &dir.join("embed_queries.txt"),
        EMBED_QUERIES.iter().map(|q| (*q).to_owned()),
    )?;
    let done = dir.join("DONE");
    if fs::read_to_string(&done).is_ok_and(|s| s.trim() == SEED.to_string()) {
        return Ok(());
    }
    let mut rng = Rng::new(SEED);
    let words = Words::new(&mut rng);
    write_lines(
        &dir.join("messages.txt"),
        (0..MESSAGES).map(|_| {
            let n = 5 + rng.below(36);
            words.text(&mut rng, n)
        }),
    )?;
    write_lines(
        &dir.join("docs.txt"),
        (0..DOCS).map(|_| words.text(&mut rng, 30)),
    )?;
    write_lines(
        &dir.join("queries.txt"),
        (0..QUERIES).map(|_| words.text(&mut rng, 3)),
    )?;
    const VERBS: &[&str] = &[
        "likes",
        "works with",
        "lives near",
        "is learning",
        "dislikes",
    ];
    write_lines(
        &dir.join("facts.txt"),
        (0..FACTS).map(|_| {
            let verb = VERBS[rng.below(VERBS.len())];
            format!("{verb} {}", words.text(&mut rng, 2))
        }),
    )?;
    write_vectors(&dir.join("vectors.f32"), &mut rng, VECTORS)?;
    write_vectors(&dir.join("dense_queries.f32"), &mut rng, DENSE_QUERIES)?;
    fs::write(done, SEED.to_string())?;
    Ok(())
}

/// The lines of `dir/name`.
pub fn lines(dir: &Path, name: &str) -> Result<Vec<String>, Error> {
    Ok(fs::read_to_string(dir.join(name))?
        .lines()
        .map(str::to_owned)
        .collect())
}

/// The vectors of `dir/name`, `DIM` floats each.
pub fn vectors(dir: &Path, name: &str) -> Result<Vec<Vec<f32>>, Error> {
    let bytes = fs::read(dir.join(name))?;
    Ok(bytes
        .as_chunks::<{ DIM * 4 }>()
        .0
        .iter()
        .map(|row| {
            row.as_chunks::<4>()
                .0
                .iter()
                .map(|&b| f32::from_le_bytes(b))
                .collect()
        })
        .collect())
}

/// The vectors of `dir/name` in one row-major array of `DIM` floats per row.
pub fn vectors_flat(dir: &Path, name: &str) -> Result<Vec<f32>, Error> {
    let bytes = fs::read(dir.join(name))?;
    Ok(bytes
        .as_chunks::<4>()
        .0
        .iter()
        .map(|&b| f32::from_le_bytes(b))
        .collect())
}
