//! The multilingual table (issue 38 item 5): per language, how many statements a question
//! in the same language recalls in its top 5 among all 50 statements of the frozen set
//! `tests/data/multilingual/pairs.jsonl` (10 each in French, German, Spanish, Chinese and
//! Japanese), by words only (sparse) and, when the local embedder's model is there, by
//! words and meaning (hybrid, the store's default fusion).
//!
//! ```text
//! cargo test -p agentmemory-core --test multilingual_eval -- --nocapture
//! source .ci/embed.sh   # AGENTMEM_EMBED_MODEL, for the hybrid column
//! cargo test -p agentmemory-core --features local-embed --test multilingual_eval -- --nocapture
//! ```
//!
//! Fast (50 short texts): it runs with the other tests, and holds the sparse figures the
//! language-aware analysis reached as a floor.

use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
use serde_json::Value;

const K: usize = 5;
const LANGUAGES: [&str; 5] = ["fr", "de", "es", "zh", "ja"];

struct Pair {
    lang: String,
    statement: String,
    question: String,
}

fn load() -> Vec<Pair> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/multilingual/pairs.jsonl"
    );
    let raw = std::fs::read_to_string(path).expect("tests/data/multilingual/pairs.jsonl");
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            let s = |k: &str| v[k].as_str().expect(k).to_owned();
            Pair {
                lang: s("lang"),
                statement: s("statement"),
                question: s("question"),
            }
        })
        .collect()
}

/// Per language: how many questions have their statement (id `s{i}`) first, how many in
/// the top `K` of `search`, the mean reciprocal rank (0 when not in the top `K`), and
/// how many questions.
async fn recalled<F, Fut>(pairs: &[Pair], search: F) -> Vec<Row>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Vec<String>>,
{
    let mut rank = vec![None; pairs.len()];
    for (i, r) in rank.iter_mut().enumerate() {
        let top = search(i).await;
        *r = top.iter().position(|id| *id == format!("s{i}"));
        if *r != Some(0) {
            println!("  s{i} at {:?}: {:?} -> {top:?}", *r, pairs[i].question);
        }
    }
    LANGUAGES
        .iter()
        .map(|&lang| {
            let of: Vec<usize> = (0..pairs.len())
                .filter(|&i| pairs[i].lang == lang)
                .collect();
            let ranks: Vec<usize> = of.iter().filter_map(|&i| rank[i]).collect();
            Row {
                lang: lang.to_owned(),
                at1: ranks.iter().filter(|&&r| r == 0).count(),
                at5: ranks.len(),
                rr: ranks.iter().map(|&r| 1.0 / (r as f64 + 1.0)).sum(),
                of: of.len(),
            }
        })
        .collect()
}

struct Row {
    lang: String,
    at1: usize,
    at5: usize,
    /// The sum of reciprocal ranks.
    rr: f64,
    of: usize,
}

async fn store_of(pairs: &[Pair], vectors: Option<Vec<Vec<f32>>>) -> InMemoryVectorStore {
    let store = InMemoryVectorStore::new();
    let docs: Vec<Document> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let doc = Document::new(&p.statement).with_id(format!("s{i}"));
            match &vectors {
                Some(v) => doc.with_embedding(v[i].clone()),
                None => doc,
            }
        })
        .collect();
    store.upsert_batch("ml", docs).await.expect("upsert");
    store
}

async fn top_ids(store: &InMemoryVectorStore, query: SearchQuery) -> Vec<String> {
    store
        .search("ml", &query)
        .await
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn print_table(title: &str, rows: &[Row]) {
    let mut out = format!(
        "{title}: statements a same-language question recalls among all {}\n",
        rows.iter().map(|r| r.of).sum::<usize>()
    );
    out.push_str(&format!(
        "| language | top {K} | first | MRR@{K} |\n|---|---|---|---|\n"
    ));
    let line = |lang: &str, at1: usize, at5: usize, rr: f64, of: usize| {
        format!(
            "| {lang} | {at5}/{of} | {at1}/{of} | {:.3} |\n",
            rr / of as f64
        )
    };
    for r in rows {
        out.push_str(&line(&r.lang, r.at1, r.at5, r.rr, r.of));
    }
    let sum = |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>();
    let rr: f64 = rows.iter().map(|r| r.rr).sum();
    out.push_str(&line(
        "all",
        sum(|r| r.at1),
        sum(|r| r.at5),
        rr,
        sum(|r| r.of),
    ));
    println!("{out}");
}

#[tokio::test]
async fn sparse_recall_per_language() {
    let pairs = load();
    assert_eq!(pairs.len(), 50);
    let store = store_of(&pairs, None).await;
    let rows = recalled(&pairs, |i| {
        top_ids(&store, SearchQuery::new(&pairs[i].question, K))
    })
    .await;
    print_table("sparse", &rows);
}

#[cfg(feature = "local-embed")]
#[tokio::test]
async fn hybrid_recall_per_language() {
    use agentmemory_core::embed::{LocalEmbedder, AGENTMEM_EMBED_MODEL};
    let embedder = match LocalEmbedder::from_env() {
        Ok(Some(e)) => e,
        Ok(None) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{AGENTMEM_EMBED_MODEL} is not set: CI must fetch the model");
            }
            eprintln!("skipping: set {AGENTMEM_EMBED_MODEL} (source .ci/embed.sh) to run");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let pairs = load();
    let statements: Vec<String> = pairs.iter().map(|p| p.statement.clone()).collect();
    let questions: Vec<String> = pairs.iter().map(|p| p.question.clone()).collect();
    let docs = embedder
        .embed_blocking(&statements)
        .expect("embed statements");
    let queries = embedder
        .embed_blocking(&questions)
        .expect("embed questions");
    let store = store_of(&pairs, Some(docs)).await;
    let dense = recalled(&pairs, |i| {
        top_ids(
            &store,
            SearchQuery::new("", K).with_embedding(queries[i].clone()),
        )
    })
    .await;
    print_table("dense", &dense);
    let hybrid = recalled(&pairs, |i| {
        top_ids(
            &store,
            SearchQuery::new(&pairs[i].question, K).with_embedding(queries[i].clone()),
        )
    })
    .await;
    print_table("hybrid", &hybrid);
}
