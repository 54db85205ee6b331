//! The vector datasets of the `dense` bench: rows and queries of unit-length 384-dimensional
//! vectors, drawn three ways.
//!
//! - **uniform**: every coordinate i.i.d. uniform in `[-1, 1]`. Near-orthogonal rows with
//!   scores packed close to 0 and a clear top: the best case for the one-byte screen.
//! - **clustered**: a Gaussian mixture of [`CLUSTERS`] equally likely clusters around
//!   random unit centres, noise of norm about 1 (a point's cosine to its centre about
//!   0.7, to another point of its cluster about 0.5, as sentences on one topic have);
//!   queries are drawn from the same mixture.
//! - **real**: all-MiniLM-L6-v2 embeddings (the local model) of real text: every sentence
//!   of the conversations and statements in `tests/data` (the evaluation questions left
//!   out), then overlapping word windows of that text, 6 to 24 words long, until the bench's
//!   row count is reached (the sentences alone are a few thousand). The windows overlap, so
//!   this set holds many near-duplicates: harder for the screen than a corpus of distinct
//!   documents. The queries are the evaluation questions of
//!   `tests/data/episodes_eval/questions.jsonl` (185, cycled for batches). The vectors are
//!   made once and cached (see [`real`]).

#![allow(dead_code)] // not every bench uses every dataset

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub const DIM: usize = 384;
/// Clusters of the clustered dataset.
pub const CLUSTERS: usize = 256;

/// A dataset: rows to index and queries to ask, as drawn (not normalised).
pub struct Dataset {
    pub name: &'static str,
    pub rows: Vec<Vec<f32>>,
    pub queries: Vec<Vec<f32>>,
}

/// SplitMix64, seeded.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Every coordinate uniform in `[-1, 1)`.
    pub fn uniform_vector(&mut self) -> Vec<f32> {
        (0..DIM)
            .map(|_| ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
            .collect()
    }

    /// A standard normal deviate (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit_f64(); // (0, 1]
        let v = self.unit_f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// `v / |v|`, in f64 then rounded.
pub fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    v.iter().map(|x| (f64::from(*x) / n) as f32).collect()
}

/// `rows` rows and `queries` queries, every coordinate i.i.d. uniform (the bench's
/// historical set: seed 42, rows first).
pub fn uniform(rows: usize, queries: usize) -> Dataset {
    let mut rng = Rng(42);
    let r = (0..rows).map(|_| rng.uniform_vector()).collect();
    let q = (0..queries).map(|_| rng.uniform_vector()).collect();
    Dataset {
        name: "uniform",
        rows: r,
        queries: q,
    }
}

/// `rows` rows and `queries` queries from a mixture of [`CLUSTERS`] Gaussians.
pub fn clustered(rows: usize, queries: usize) -> Dataset {
    let mut rng = Rng(7);
    let centres: Vec<Vec<f32>> = (0..CLUSTERS)
        .map(|_| unit(&(0..DIM).map(|_| rng.normal() as f32).collect::<Vec<_>>()))
        .collect();
    // Noise of expected norm 1 around a unit centre.
    let sigma = 1.0 / (DIM as f64).sqrt();
    let draw = |rng: &mut Rng| -> Vec<f32> {
        let c = &centres[(rng.next_u64() % CLUSTERS as u64) as usize];
        c.iter()
            .map(|&x| (f64::from(x) + sigma * rng.normal()) as f32)
            .collect()
    };
    let r = (0..rows).map(|_| draw(&mut rng)).collect();
    let q = (0..queries).map(|_| draw(&mut rng)).collect();
    Dataset {
        name: "clustered",
        rows: r,
        queries: q,
    }
}

/// The texts of the real dataset: `rows` corpus texts and the evaluation questions.
pub fn real_texts(rows: usize) -> (Vec<String>, Vec<String>) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let questions_file = data.join("episodes_eval/questions.jsonl");
    let mut files = vec![
        data.join("episodes_eval/conversations.jsonl"),
        data.join("extraction.jsonl"),
        data.join("extraction_tune2.jsonl"),
        data.join("change_of_state.jsonl"),
        data.join("change_of_state_more.jsonl"),
    ];
    files.retain(|f| f.exists());
    let mut passages = Vec::new();
    for file in &files {
        for_each_text(file, &["content", "text"], |t| passages.push(t));
    }
    let mut questions = Vec::new();
    for_each_text(&questions_file, &["query"], |t| questions.push(t));

    let mut seen = HashSet::new();
    let mut texts = Vec::new();
    let mut keep = |t: String, texts: &mut Vec<String>| {
        let t = t.trim().to_owned();
        if t.split_whitespace().count() >= 3 && seen.insert(t.clone()) {
            texts.push(t);
        }
    };
    for p in &passages {
        for s in sentences(p) {
            keep(s, &mut texts);
        }
    }
    // Word windows over the whole text, of varied lengths, until there are enough.
    let words: Vec<&str> = passages.iter().flat_map(|p| p.split_whitespace()).collect();
    let mut rng = Rng(11);
    let mut attempts = 0usize;
    while texts.len() < rows && attempts < rows * 20 && words.len() > 24 {
        attempts += 1;
        let len = 6 + (rng.next_u64() % 19) as usize;
        let start = (rng.next_u64() % (words.len() - len) as u64) as usize;
        keep(words[start..start + len].join(" "), &mut texts);
    }
    texts.truncate(rows);
    (texts, questions)
}

/// Calls `f` with every string field named in `fields` of every JSON line of `file`.
fn for_each_text(file: &Path, fields: &[&str], mut f: impl FnMut(String)) {
    let Ok(text) = std::fs::read_to_string(file) else {
        eprintln!("real dataset: cannot read {}", file.display());
        return;
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        for field in fields {
            if let Some(s) = value.get(*field).and_then(|v| v.as_str()) {
                f(s.to_owned());
            }
        }
    }
}

/// `text` cut after `.`, `!` or `?` followed by white space.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let next_is_space = chars.get(i + 1).is_some_and(|&(_, n)| n.is_whitespace());
        if matches!(c, '.' | '!' | '?') && next_is_space {
            out.push(text[start..at + c.len_utf8()].to_owned());
            start = at + c.len_utf8();
        }
    }
    out.push(text[start..].to_owned());
    out
}

/// Where the real dataset's vectors are cached: `AGENTMEM_BENCH_CACHE` or
/// `~/.cache/agentmem/bench`, one file per corpus and model (named by a hash of both).
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGENTMEM_BENCH_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache/agentmem/bench")
}

/// FNV-1a 64 over `parts`.
fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Rows or queries, one vector each.
type Vectors = Vec<Vec<f32>>;

const MAGIC: &[u8; 8] = b"AMDENSE1";

fn write_cache(path: &Path, rows: &[Vec<f32>], queries: &[Vec<f32>]) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
    let tmp = path.with_extension("tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    out.write_all(MAGIC)?;
    for n in [rows.len(), queries.len(), DIM] {
        out.write_all(&(n as u64).to_le_bytes())?;
    }
    for v in rows.iter().chain(queries) {
        for x in v {
            out.write_all(&x.to_le_bytes())?;
        }
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(tmp, path)
}

fn read_cache(path: &Path) -> std::io::Result<(Vectors, Vectors)> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a dense cache file");
    if bytes.len() < 32 || &bytes[..8] != MAGIC {
        return Err(bad());
    }
    let word = |i: usize| {
        u64::from_le_bytes(bytes[8 + 8 * i..16 + 8 * i].try_into().unwrap_or([0; 8])) as usize
    };
    let (rows, queries, dim) = (word(0), word(1), word(2));
    if dim != DIM || bytes.len() != 32 + (rows + queries) * dim * 4 {
        return Err(bad());
    }
    let mut vectors = bytes[32..]
        .chunks_exact(dim * 4)
        .map(|v| {
            v.as_chunks::<4>()
                .0
                .iter()
                .map(|b| f32::from_le_bytes(*b))
                .collect::<Vec<f32>>()
        })
        .collect::<Vec<_>>();
    let q = vectors.split_off(rows);
    Ok((vectors, q))
}

/// The real dataset at `rows` rows: read from the cache, or embedded with the local model
/// (`AGENTMEM_EMBED_MODEL`, feature `local-embed`) and cached. `None`, with a message
/// saying why, when neither is possible.
pub fn real(rows: usize) -> Option<Dataset> {
    let (texts, questions) = real_texts(rows);
    let model = std::env::var("AGENTMEM_EMBED_MODEL").unwrap_or_default();
    let model_name = Path::new(&model).file_name().map_or_else(
        || "all-minilm-l6-v2".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let key = fingerprint(
        [model_name.as_str()]
            .into_iter()
            .chain(texts.iter().map(String::as_str))
            .chain(["--queries--"])
            .chain(questions.iter().map(String::as_str)),
    );
    let path = cache_dir().join(format!("dense-real-{}-{key:016x}.f32", texts.len()));
    match read_cache(&path) {
        Ok((rows, queries)) => {
            eprintln!(
                "real dataset: {} rows, {} queries from the cache {}",
                rows.len(),
                queries.len(),
                path.display()
            );
            return Some(Dataset {
                name: "real",
                rows,
                queries,
            });
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            eprintln!("real dataset: ignoring the cache {}: {e}", path.display());
        }
        Err(_) => {}
    }
    let (rows, queries) = embed(&texts, &questions)?;
    match write_cache(&path, &rows, &queries) {
        Ok(()) => eprintln!("real dataset: cached in {}", path.display()),
        Err(e) => eprintln!("real dataset: could not cache in {}: {e}", path.display()),
    }
    Some(Dataset {
        name: "real",
        rows,
        queries,
    })
}

#[cfg(feature = "local-embed")]
fn embed(texts: &[String], questions: &[String]) -> Option<(Vectors, Vectors)> {
    use agentmemory_core::embed::{LocalEmbedder, AGENTMEM_EMBED_MODEL};
    let embedder = match LocalEmbedder::from_env() {
        Ok(Some(e)) => e,
        Ok(None) => {
            eprintln!(
                "real dataset SKIPPED: no cached vectors and {AGENTMEM_EMBED_MODEL} is not set \
                 (the model directory scripts/fetch-model prints)"
            );
            return None;
        }
        Err(e) => {
            eprintln!("real dataset SKIPPED: cannot load the model: {e}");
            return None;
        }
    };
    let started = std::time::Instant::now();
    eprintln!(
        "real dataset: embedding {} texts and {} queries with {} ({} threads), once ...",
        texts.len(),
        questions.len(),
        embedder.dir().display(),
        embedder.threads()
    );
    let rows = match embedder.embed_blocking(texts) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("real dataset SKIPPED: embedding failed: {e}");
            return None;
        }
    };
    let queries = match embedder.embed_blocking(questions) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("real dataset SKIPPED: embedding the queries failed: {e}");
            return None;
        }
    };
    eprintln!(
        "real dataset: embedded in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Some((rows, queries))
}

#[cfg(not(feature = "local-embed"))]
fn embed(_: &[String], _: &[String]) -> Option<(Vectors, Vectors)> {
    eprintln!(
        "real dataset SKIPPED: no cached vectors, and this build has no model: run with \
         `--features local-embed` and AGENTMEM_EMBED_MODEL set (scripts/fetch-model)"
    );
    None
}
