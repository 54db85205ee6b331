//! Sparse vs dense vs hybrid (the fixed weight of `Fusion::DEFAULT`, the adaptive fusion
//! of the first attempt, the max-scaled fusion of the second, the coverage fusion of the
//! third) on every retrieval set the project has, with the real model. Figures and their
//! reading: `bench/results/fusion.md`.
//!
//! ```text
//! AGENTMEM_EMBED_MODEL="$(scripts/fetch-model)" \
//!   cargo run --release -p agentmemory-core --features local-embed --example fusion_eval \
//!     [-- --fresh] [--frozen2] [--holdout]   (or -- --long: the long-conversation sets alone)
//! ```
//!
//! Sets (each split frozen before any fusion constant was tuned):
//!
//! - **pairs** (`memory-core/tests/data/retrieval.json`): everyday statements and the
//!   question each answers, mostly by meaning; 45 tune + 45 held-out.
//! - **facts** (`memory-core/tests/data/retrieval_conversations.json`): one user's 80
//!   statements, questions naming people, places, projects; tune and held-out as in the file.
//! - **episodes** (`tests/data/episodes_eval/`): 542 raw messages of 9 people over months,
//!   185 questions; every message of the asking user is a document. Tune = users u1–u4,
//!   held out = u5–u9 (a split by person, fixed here before tuning).
//! - **episodes-pooled**: the same with all 542 messages in one index.
//! - **episodes-chunks**: the same conversations cut into passages of 6 consecutive
//!   messages, all users pooled, hit@1. Long text is where words beat the small model.
//!
//! The tune/held-out splits above were fixed in commit `de5c910`; every held-out figure
//! of them has since been read (`bench/results/fusion.md`), so they are all *seen* data
//! now. Two **fresh** sets, frozen in their own commit before they were first run and
//! read once, for the final fusion only (`--fresh`; without it they are not even loaded):
//!
//! - **fresh-updates** (`tests/data/change_of_state*.jsonl`): every step of every
//!   change-of-state sequence is a document; each later step asks for the earlier steps
//!   of its sequence (the statement it revises). MRR.
//! - **fresh-lookup** (`tests/data/extraction*.jsonl`): 422 labelled messages; each
//!   distinct fact value is a query for the messages carrying it. MRR.
//!
//! Two more **frozen** sets, `conv-values` and `conv-replies` (`fusion_eval/frozen2.rs`:
//! new queries and labels over the episodes conversations), frozen in their own commit
//! before any fusion was run on them, read once for the fusion chosen after them
//! (`--frozen2`). `--sizes` prints every set's size and runs nothing.
//!
//! The **hold-out** sets (`--holdout`, `fusion_eval/holdout.rs`): six sets built the same
//! ways over `tests/data/fusion_holdout/`, hand-written by someone who had not seen this
//! runner or its results, first run once after [`HOLDOUT_CHOICE`] and its rule
//! ([`choose`]) were committed. The choice passed there and is `Fusion::DEFAULT`; the
//! hold-out sets have been read since, so they too are tuning data from now on.
//!
//! `FUSION_EVAL_DUMP=path` writes every run's two rankings as JSON for analysis, with each
//! sparse candidate's query coverage, the query's terms (term, count, df) and which of
//! them each candidate holds (the fresh sets' to `path.fresh`, the `--frozen2` sets' to
//! `path.frozen2`, the hold-out sets' to `path.holdout`); `bench/fusion/coverage.py` reads
//! it.
//!
//! Metrics: pairs and facts, MRR of the target statement (×100); episodes, hit@5
//! (episodes-chunks: hit@1) (one
//! of the 5 best messages holds an answer string, matched as `score.py` does for words:
//! case, spacing, curly quotes ignored, word boundaries at the answer's ends; dates are not
//! matched, raw messages carry none in their text).
//!
//! The output gives every method per part (tune / seen), per whole seen set, then ranks
//! the candidate fusions by their worst gap to the better single side over the whole
//! seen sets (the weight of [`CHOSEN`] came from that list), and with `--fresh` ends with
//! the fresh sets.
#![allow(clippy::print_stdout)]

use std::collections::{BTreeMap, HashMap};

use agentmemory_core::embed::LocalEmbedder;
use agentmemory_core::store_support::{fuse_covered, tfidf, Fusion};
use agentmemory_core::vector::{Document, InMemoryVectorStore, SearchQuery, VectorStore};
use serde_json::Value;

#[path = "fusion_eval/frozen2.rs"]
mod frozen2;
#[path = "fusion_eval/holdout.rs"]
mod holdout;
#[path = "fusion_eval/long.rs"]
mod long;

/// The adaptive fusion of the first attempt, chosen on the tune parts (the best worst gap
/// of its candidate list); it lost on the words-win held-out part. Kept for comparison.
const TUNED: Fusion = Fusion::Adaptive {
    dense_weight: 0.99,
    depth: 4,
    power: 1.0,
};

/// The fusion of the second attempt: the word side scaled by the query's best word score
/// ([`Fusion::MaxScaled`]), its weight chosen on the whole seen sets (the best worst gap
/// to the better single side over the five sets, then the best mean gap, among the
/// `max-scaled` candidates below) before the fresh sets were first run.
const CHOSEN: Fusion = Fusion::MaxScaled { dense_weight: 0.96 };

/// The fusion of the third attempt: the word side is the query coverage of each document
/// ([`Fusion::Coverage`]), its weight and power chosen on the seven seen sets (the five
/// above and the two fresh sets of the second attempt, all read by then) by the runner's
/// rule (largest worst gap to the better single side, rounded to 0.1 point, then largest
/// mean gap; `w` = 0.86, `p` = 2.5 tied with it, and the integer power was taken), before
/// the sets of `--frozen2` were first run.
const COVERAGE: Fusion = Fusion::Coverage {
    dense_weight: 0.84,
    power: 3.0,
};

/// The fusion of the fourth attempt, judged on the hold-out sets (`--holdout`): chosen by
/// [`choose`] over all nine sets above (every one of them read by then, so all tuning
/// data), committed before the hold-out data existed in the repository. It passed there
/// and is `Fusion::DEFAULT` since.
const HOLDOUT_CHOICE: Fusion = Fusion::Coverage {
    dense_weight: 0.6,
    power: 5.0,
};

/// The old fixed weighting, `Fusion::DEFAULT` before [`CHOSEN`].
const FIXED: Fusion = Fusion::Weighted { dense_weight: 0.8 };

/// One query: its text, and which documents answer it (by index).
struct Query {
    text: String,
    answers: Vec<usize>,
    /// Documents left out of this query's rankings (the query's own text, when it is
    /// one of the documents).
    exclude: Vec<usize>,
}

/// Documents in groups (one per user: a query searches its own group only), queries per
/// group, split into tune and held-out, and the k of its metric.
struct Set {
    name: &'static str,
    groups: Vec<(Vec<String>, Vec<Query>, Vec<Query>)>,
    k: usize,
}

fn json(raw: &str) -> Value {
    serde_json::from_str(raw).expect("valid JSON")
}

fn pairs() -> Set {
    let v = json(include_str!("../tests/data/retrieval.json"));
    let mut statements = Vec::new();
    let mut parts = [Vec::new(), Vec::new()];
    for (p, name) in ["tune", "held_out"].iter().enumerate() {
        for pair in v[name].as_array().expect("part") {
            parts[p].push(Query {
                text: pair["query"].as_str().expect("query").to_owned(),
                answers: vec![statements.len()],
                exclude: Vec::new(),
            });
            statements.push(pair["statement"].as_str().expect("statement").to_owned());
        }
    }
    let [tune, held] = parts;
    Set {
        name: "pairs",
        groups: vec![(statements, tune, held)],
        k: 0,
    }
}

fn facts() -> Set {
    let v = json(include_str!("../tests/data/retrieval_conversations.json"));
    let statements: Vec<String> = v["statements"]
        .as_array()
        .expect("statements")
        .iter()
        .map(|s| s.as_str().expect("statement").to_owned())
        .collect();
    let part = |name: &str| -> Vec<Query> {
        v[name]
            .as_array()
            .expect("part")
            .iter()
            .map(|q| Query {
                text: q["query"].as_str().expect("query").to_owned(),
                answers: vec![q["target"].as_u64().expect("target") as usize],
                exclude: Vec::new(),
            })
            .collect()
    };
    Set {
        name: "facts",
        groups: vec![(statements, part("tune"), part("held_out"))],
        k: 0,
    }
}

/// Lower case, straight quotes, single spaces.
fn normalise(text: &str) -> String {
    let text = text
        .replace(['\u{2018}', '\u{2019}'], "'")
        .replace(['\u{201c}', '\u{201d}'], "\"")
        .to_lowercase();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `needle` (normalised) occurs in `hay` (normalised), at word boundaries where it
/// starts or ends with a letter or digit.
fn contains_answer(hay: &str, needle: &str) -> bool {
    let starts_word = needle.chars().next().is_some_and(char::is_alphanumeric);
    let ends_word = needle.chars().last().is_some_and(char::is_alphanumeric);
    hay.match_indices(needle).any(|(at, _)| {
        let before = hay[..at].chars().last();
        let after = hay[at + needle.len()..].chars().next();
        (!starts_word || !before.is_some_and(char::is_alphanumeric))
            && (!ends_word || !after.is_some_and(char::is_alphanumeric))
    })
}

fn episodes() -> Set {
    episodes_set(false, 1)
}

/// The episodes set cut into passages of [`CHUNK`] consecutive messages of one
/// conversation, every user's passages in one pool, hit@1: the retrieval of long
/// conversation text, where a passage outgrows what a small embedding model reads well.
fn episodes_chunks() -> Set {
    let mut set = episodes_set(true, CHUNK);
    set.name = "episodes-chunks";
    set.k = 1;
    set
}

/// Messages per passage of [`episodes_chunks`].
const CHUNK: usize = 6;

/// The episodes set with every user's messages in one pool: a query searches all 542
/// messages (a shared index: names and rare words tell people apart, meaning does not).
fn episodes_pooled() -> Set {
    episodes_set(true, 1)
}

/// Documents are runs of `chunk` consecutive messages of one conversation (joined by
/// newlines); `pooled` puts every user's documents in one index.
fn episodes_set(pooled: bool, chunk: usize) -> Set {
    episodes_from(
        include_str!("../../tests/data/episodes_eval/conversations.jsonl"),
        include_str!("../../tests/data/episodes_eval/questions.jsonl"),
        pooled,
        chunk,
        // Tune on u1–u4, hold out u5–u9.
        &|user| user <= "u4",
    )
}

/// The episodes sets over any conversations and questions in the format of
/// `tests/data/episodes_eval/`: `tune` says which users' questions form the tune part.
fn episodes_from(
    conversations: &str,
    questions_raw: &str,
    pooled: bool,
    chunk: usize,
    tune: &dyn Fn(&str) -> bool,
) -> Set {
    let mut sessions: BTreeMap<String, Vec<(String, Vec<String>)>> = BTreeMap::new();
    for line in conversations.lines().filter(|l| !l.trim().is_empty()) {
        let m = json(line);
        let user = sessions
            .entry(m["user"].as_str().expect("user").to_owned())
            .or_default();
        let conversation = m["conversation"].as_str().expect("conversation");
        if user.last().is_none_or(|(c, _)| c != conversation) {
            user.push((conversation.to_owned(), Vec::new()));
        }
        let content = m["content"].as_str().expect("content").to_owned();
        user.last_mut().expect("pushed").1.push(content);
    }
    let messages: BTreeMap<String, Vec<String>> = sessions
        .into_iter()
        .map(|(user, convs)| {
            let docs = convs
                .iter()
                .flat_map(|(_, msgs)| msgs.chunks(chunk).map(|c| c.join("\n")))
                .collect();
            (user, docs)
        })
        .collect();
    let mut questions: HashMap<String, Vec<Value>> = HashMap::new();
    for line in questions_raw.lines().filter(|l| !l.trim().is_empty()) {
        let q = json(line);
        questions
            .entry(q["user"].as_str().expect("user").to_owned())
            .or_default()
            .push(q);
    }
    let mut groups: Vec<(Vec<String>, Vec<Query>, Vec<Query>)> = messages
        .into_iter()
        .map(|(user, texts)| {
            let normalised: Vec<String> = texts.iter().map(|t| normalise(t)).collect();
            let queries: Vec<Query> = questions
                .remove(&user)
                .unwrap_or_default()
                .into_iter()
                .map(|q| {
                    let wanted: Vec<String> = q["answer"]
                        .as_array()
                        .expect("answer")
                        .iter()
                        .map(|a| normalise(a.as_str().expect("answer string")))
                        .collect();
                    Query {
                        text: q["query"].as_str().expect("query").to_owned(),
                        answers: (0..texts.len())
                            .filter(|&i| wanted.iter().any(|a| contains_answer(&normalised[i], a)))
                            .collect(),
                        exclude: Vec::new(),
                    }
                })
                .collect();
            if tune(&user) {
                (texts, queries, Vec::new())
            } else {
                (texts, Vec::new(), queries)
            }
        })
        .collect();
    if pooled {
        let mut all = (Vec::new(), Vec::new(), Vec::new());
        for (texts, tune, held) in groups {
            let offset = all.0.len();
            let shift = |qs: Vec<Query>| -> Vec<Query> {
                qs.into_iter()
                    .map(|q| Query {
                        text: q.text,
                        answers: q.answers.iter().map(|a| a + offset).collect(),
                        exclude: q.exclude.iter().map(|a| a + offset).collect(),
                    })
                    .collect()
            };
            all.1.extend(shift(tune));
            all.2.extend(shift(held));
            all.0.extend(texts);
        }
        groups = vec![all];
    }
    Set {
        name: if pooled {
            "episodes-pooled"
        } else {
            "episodes"
        },
        groups,
        k: 5,
    }
}

/// **Fresh** (frozen before it was first run, used for no choice): the change-of-state
/// sequences of `tests/data/change_of_state*.jsonl` as retrieval. Every step of every
/// sequence is a document; every later step is a query whose answers are the earlier
/// steps of its sequence: find the statement a new one revises ("I was laid off last
/// week" → "I work at Google"). Documents with the query's own text are left out of its
/// rankings; documents with the text of an answer count as answers; a step repeating
/// its predecessor word for word is no query. MRR.
fn updates() -> Set {
    let mut docs: Vec<String> = Vec::new();
    let mut chains: Vec<Vec<usize>> = Vec::new();
    for raw in [
        include_str!("../../tests/data/change_of_state.jsonl"),
        include_str!("../../tests/data/change_of_state_more.jsonl"),
    ] {
        for line in raw.lines().filter(|l| !l.trim().is_empty()) {
            let steps = json(line)["steps"].as_array().expect("steps").clone();
            let mut chain = Vec::new();
            for step in steps {
                chain.push(docs.len());
                docs.push(step.as_str().expect("step").to_owned());
            }
            chains.push(chain);
        }
    }
    let normalised: Vec<String> = docs.iter().map(|d| normalise(d)).collect();
    let same_text = |of: &[usize]| -> Vec<usize> {
        (0..docs.len())
            .filter(|&i| of.iter().any(|&j| normalised[i] == normalised[j]))
            .collect()
    };
    let mut queries = Vec::new();
    for chain in &chains {
        for (j, &step) in chain.iter().enumerate().skip(1) {
            let exclude = same_text(&[step]);
            let answers: Vec<usize> = same_text(&chain[..j])
                .into_iter()
                .filter(|i| !exclude.contains(i))
                .collect();
            // A step that repeats an earlier one word for word has nothing left to find.
            if !answers.is_empty() {
                queries.push(Query {
                    text: docs[step].clone(),
                    answers,
                    exclude,
                });
            }
        }
    }
    Set {
        name: "fresh-updates",
        groups: vec![(docs, Vec::new(), queries)],
        k: 0,
    }
}

/// **Fresh** (frozen before it was first run, used for no choice): the labelled messages
/// of `tests/data/extraction*.jsonl` as retrieval. Every message is a document; every
/// distinct fact value (case ignored) is a query whose answers are the messages carrying
/// a fact with that value: a lookup by name ("spotify", "data scientist", "1988"). MRR.
fn lookup() -> Set {
    let mut docs: Vec<String> = Vec::new();
    let mut by_value: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for raw in [
        include_str!("../../tests/data/extraction.jsonl"),
        include_str!("../../tests/data/extraction_tune2.jsonl"),
    ] {
        for line in raw.lines().filter(|l| !l.trim().is_empty()) {
            let m = json(line);
            let at = docs.len();
            docs.push(m["text"].as_str().expect("text").to_owned());
            for fact in m["facts"].as_array().expect("facts") {
                let value = fact["value"].as_str().expect("value").to_lowercase();
                let answers = by_value.entry(value).or_default();
                if !answers.contains(&at) {
                    answers.push(at);
                }
            }
        }
    }
    let queries = by_value
        .into_iter()
        .map(|(text, answers)| Query {
            text,
            answers,
            exclude: Vec::new(),
        })
        .collect();
    Set {
        name: "fresh-lookup",
        groups: vec![(docs, Vec::new(), queries)],
        k: 0,
    }
}

/// One query's rankings over its group: sparse, dense (each best first, every scored
/// document), and the ids that answer it.
struct Run {
    sparse: Vec<(String, f32)>,
    dense: Vec<(String, f32)>,
    answers: Vec<String>,
    /// The query coverage ([`tfidf::coverage`]) of each document of `sparse`, in its order.
    coverage: Vec<f32>,
    /// For analysis: the query's terms `(term, count, df)`, and for each document of
    /// `sparse` the positions of the query terms it holds.
    q_terms: Vec<(String, f32, usize)>,
    held: Vec<Vec<usize>>,
}

/// Per set: the runs of its tune part and of its held-out part.
async fn runs(set: &Set, embedder: &LocalEmbedder) -> [Vec<Run>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for (g, (docs, tune, held)) in set.groups.iter().enumerate() {
        let store = InMemoryVectorStore::new();
        let adaptive = InMemoryVectorStore::new().with_fusion(TUNED);
        let scaled = InMemoryVectorStore::new().with_fusion(CHOSEN);
        let fixed = InMemoryVectorStore::new().with_fusion(FIXED);
        let covered = InMemoryVectorStore::new().with_fusion(COVERAGE);
        let vectors = embedder.embed_blocking(docs).expect("embed documents");
        let documents: Vec<Document> = docs
            .iter()
            .zip(vectors)
            .enumerate()
            .map(|(i, (d, v))| Document::new(d).with_id(format!("d{i}")).with_embedding(v))
            .collect();
        let ns = format!("g{g}");
        store
            .upsert_batch(&ns, documents.clone())
            .await
            .expect("upsert");
        scaled
            .upsert_batch(&ns, documents.clone())
            .await
            .expect("upsert");
        fixed
            .upsert_batch(&ns, documents.clone())
            .await
            .expect("upsert");
        covered
            .upsert_batch(&ns, documents.clone())
            .await
            .expect("upsert");
        adaptive.upsert_batch(&ns, documents).await.expect("upsert");
        let n = docs.len();
        // Each document's terms and each term's document frequency, for coverage.
        let doc_terms: Vec<Vec<(String, f32)>> =
            docs.iter().map(|d| tfidf::document_terms(d)).collect();
        let mut df: HashMap<String, usize> = HashMap::new();
        for terms in &doc_terms {
            for (t, _) in terms {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        let df_of = |t: &str| df.get(t).copied().unwrap_or(0);
        for (p, part) in [tune, held].into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            let texts: Vec<&str> = part.iter().map(|q| q.text.as_str()).collect();
            let qv = embedder.embed_blocking(&texts).expect("embed queries");
            for (q, v) in part.iter().zip(qv) {
                let list = |hits: Vec<agentmemory_core::SearchHit>| -> Vec<(String, f32)> {
                    hits.into_iter().map(|h| (h.id, h.score)).collect()
                };
                let sparse = list(
                    store
                        .search(&ns, &SearchQuery::new(&q.text, n))
                        .await
                        .expect("sparse"),
                );
                let dense = list(
                    store
                        .search(&ns, &SearchQuery::new("", n).with_embedding(v.clone()))
                        .await
                        .expect("dense"),
                );
                // Each sparse candidate's query coverage, from the documents' own terms.
                let q_terms = tfidf::query_terms(&q.text);
                let coverage_of = |list: &[(String, f32)]| -> Vec<f32> {
                    list.iter()
                        .map(|(id, _)| {
                            let i: usize = id[1..].parse().expect("document id");
                            tfidf::coverage(&q_terms, &doc_terms[i], n, df_of)
                        })
                        .collect()
                };
                let all_coverage = coverage_of(&sparse);
                // The stores' own hybrid search ranks as `fuse_covered` does (equal scores
                // position by position; near-ties may swap ids in the last bits).
                let k = set.k.max(1);
                for (store, fusion) in [
                    (&store, Fusion::DEFAULT),
                    (&fixed, FIXED),
                    (&adaptive, TUNED),
                    (&scaled, CHOSEN),
                    (&covered, COVERAGE),
                ] {
                    let own: Vec<(String, f32)> = store
                        .search(&ns, &SearchQuery::new(&q.text, k).with_embedding(v.clone()))
                        .await
                        .expect("hybrid")
                        .into_iter()
                        .map(|h| (h.id, h.score))
                        .collect();
                    let want: Vec<(String, f32)> =
                        fuse_covered(&sparse, Some(&all_coverage), &dense, fusion)
                            .into_iter()
                            .take(k)
                            .collect();
                    let same = own.len() == want.len()
                        && own.iter().zip(&want).all(|(a, b)| (a.1 - b.1).abs() < 1e-4);
                    assert!(
                        same,
                        "store hybrid = fuse({fusion:?}) for {:?}: {own:?} vs {want:?}",
                        q.text
                    );
                }
                let kept = |list: Vec<(String, f32)>| -> Vec<(String, f32)> {
                    let excluded: Vec<String> = q.exclude.iter().map(|i| format!("d{i}")).collect();
                    list.into_iter()
                        .filter(|(id, _)| !excluded.contains(id))
                        .collect()
                };
                let sparse = kept(sparse);
                let coverage = coverage_of(&sparse);
                let held = sparse
                    .iter()
                    .map(|(id, _)| {
                        let i: usize = id[1..].parse().expect("document id");
                        q_terms
                            .iter()
                            .enumerate()
                            .filter(|(_, (t, _))| {
                                doc_terms[i]
                                    .binary_search_by(|(d, _)| d.as_str().cmp(t))
                                    .is_ok()
                            })
                            .map(|(j, _)| j)
                            .collect()
                    })
                    .collect();
                let q_terms = q_terms
                    .iter()
                    .map(|(t, c)| (t.clone(), *c, df_of(t)))
                    .collect();
                out[p].push(Run {
                    sparse,
                    dense: kept(dense),
                    answers: q.answers.iter().map(|i| format!("d{i}")).collect(),
                    coverage,
                    q_terms,
                    held,
                });
            }
        }
    }
    out
}

/// For `k` > 0 the share of runs whose top `k` under `method` holds an answer; for `k` = 0
/// the mean reciprocal rank of the first answer. In percent.
fn hit_rate(runs: &[Run], k: usize, method: &dyn Fn(&Run) -> Vec<(String, f32)>) -> f64 {
    let total: f64 = runs.iter().map(|r| score_run(r, k, method)).sum();
    100.0 * total / runs.len().max(1) as f64
}

/// One run's score under `method`: 1 or 0 for a hit in the top `k`, the reciprocal rank of
/// the first answer for `k` = 0.
fn score_run(r: &Run, k: usize, method: &dyn Fn(&Run) -> Vec<(String, f32)>) -> f64 {
    let rank = method(r).iter().position(|(id, _)| r.answers.contains(id));
    match (k, rank) {
        (0, Some(at)) => 1.0 / (at as f64 + 1.0),
        (k, Some(at)) if at < k => 1.0,
        _ => 0.0,
    }
}

/// Writes every set's runs (both rankings and the answers per query) as JSON, for
/// analysis outside this runner.
fn dump(all: &[(&Set, Vec<Run>, Vec<Run>)], path: &std::ffi::OsStr) {
    let part = |runs: &[Run]| -> Value {
        runs.iter()
            .map(|r| {
                serde_json::json!({
                    "sparse": r.sparse, "dense": r.dense, "answers": r.answers,
                    "coverage": r.coverage, "q_terms": r.q_terms, "held": r.held,
                })
            })
            .collect()
    };
    let out: serde_json::Map<String, Value> = all
        .iter()
        .map(|(set, t, h)| {
            let v = serde_json::json!({"k": set.k, "tune": part(t), "held_out": part(h)});
            (set.name.to_owned(), v)
        })
        .collect();
    std::fs::write(path, Value::Object(out).to_string()).expect("write the dump");
}

type Method = Box<dyn Fn(&Run) -> Vec<(String, f32)>>;

fn fusion_method(f: Fusion) -> Method {
    Box::new(move |r: &Run| fuse_covered(&r.sparse, Some(&r.coverage), &r.dense, f))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--sizes") {
        print_sizes();
        return;
    }
    let embedder = match LocalEmbedder::from_env() {
        Ok(Some(e)) => e,
        Ok(None) => {
            eprintln!("set AGENTMEM_EMBED_MODEL to the model directory (scripts/fetch-model)");
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    // The long-conversation sets alone: sparse, dense and the default fusion.
    if std::env::args().any(|a| a == "--long") {
        let long_sets = long::sets();
        let runs = run_frozen(&long_sets, &embedder, ".long").await;
        let rows: Vec<(&str, Method)> = vec![
            ("sparse", Box::new(|r: &Run| r.sparse.clone())),
            ("dense", Box::new(|r: &Run| r.dense.clone())),
            ("hybrid, Fusion::DEFAULT", fusion_method(Fusion::DEFAULT)),
        ];
        print_gaps(
            "Long-conversation sets (tests/data/long_conversations)",
            &held_parts(&runs),
            &rows,
        );
        return;
    }
    let sets = vec![
        pairs(),
        facts(),
        episodes(),
        episodes_pooled(),
        episodes_chunks(),
    ];
    let mut all = Vec::new();
    for set in &sets {
        let [t, h] = runs(set, &embedder).await;
        eprintln!("{}: {} tune, {} seen queries", set.name, t.len(), h.len());
        all.push((set, t, h));
    }
    if let Some(path) = std::env::var_os("FUSION_EVAL_DUMP") {
        dump(&all, &path);
    }

    let mut candidates: Vec<(String, Fusion)> = Vec::new();
    for w in [0.5f32, 0.6, 0.7, 0.8, 0.9, 0.95] {
        candidates.push((
            format!("weighted w={w}"),
            Fusion::Weighted { dense_weight: w },
        ));
    }
    for k in [1.0f32, 5.0, 10.0, 30.0, 60.0] {
        candidates.push((format!("rrf k={k}"), Fusion::ReciprocalRank { k }));
    }
    for w in [
        0.8f32, 0.85, 0.88, 0.9, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98,
    ] {
        candidates.push((
            format!("max-scaled w={w}"),
            Fusion::MaxScaled { dense_weight: w },
        ));
    }

    for w in [0.8f32, 0.82, 0.84, 0.85, 0.86, 0.88, 0.9, 0.92] {
        for p in [2.0f32, 2.5, 3.0, 3.5, 4.0, 5.0] {
            candidates.push((
                format!("coverage w={w} p={p}"),
                Fusion::Coverage {
                    dense_weight: w,
                    power: p,
                },
            ));
        }
    }

    let rows: Vec<(&str, Method)> = vec![
        ("sparse", Box::new(|r: &Run| r.sparse.clone())),
        ("dense", Box::new(|r: &Run| r.dense.clone())),
        ("hybrid, fixed 0.8", fusion_method(FIXED)),
        ("hybrid, adaptive (first attempt)", fusion_method(TUNED)),
        ("hybrid, max-scaled 0.96", fusion_method(CHOSEN)),
        ("hybrid, coverage 0.84, p 3", fusion_method(COVERAGE)),
        ("hybrid, hold-out choice", fusion_method(HOLDOUT_CHOICE)),
    ];
    println!("hold-out choice = {HOLDOUT_CHOICE:?}");
    println!("Fusion::DEFAULT = {:?}\n", Fusion::DEFAULT);
    let metric = |set: &Set| {
        if set.k == 0 {
            "MRR".to_owned()
        } else {
            format!("hit@{}", set.k)
        }
    };

    // Per part: the old tune / held-out split (the held-out part is seen now).
    let mut header = String::from("| method |");
    let mut rule = String::from("|---|");
    for (set, t, h) in &all {
        header.push_str(&format!(
            " {n} tune {m} ({}) | {n} seen {m} ({}) |",
            t.len(),
            h.len(),
            n = set.name,
            m = metric(set)
        ));
        rule.push_str("---|---|");
    }
    println!("Per part (tune / seen, the split of de5c910):\n\n{header}\n{rule}");
    for (name, method) in &rows {
        let mut line = format!("| {name} |");
        for (set, t, h) in &all {
            line.push_str(&format!(
                " {:.1} | {:.1} |",
                hit_rate(t, set.k, method.as_ref()),
                hit_rate(h, set.k, method.as_ref())
            ));
        }
        println!("{line}");
    }

    // Whole sets: each method against the better single side (points).
    let whole: Vec<(&Set, Vec<&Run>)> = all
        .iter()
        .map(|(set, t, h)| (*set, t.iter().chain(h).collect()))
        .collect();
    print_gaps("Whole seen sets (tune + seen)", &whole, &rows);

    // Candidates ranked on the whole seen sets by the worst gap to the better single side.
    print_candidates("the five seen sets", &whole, &candidates);

    // The seven sets the third attempt was chosen on (with `--fresh`), for the post-hoc
    // ranking over all nine below.
    let mut seven_owned: Vec<(&Set, Vec<&Run>)> = Vec::new();
    let fresh_sets = [updates(), lookup()];
    let fresh_runs;
    // The fresh sets, read only when asked for: once, for the fusion chosen above.
    if std::env::args().any(|a| a == "--fresh") {
        fresh_runs = run_frozen(&fresh_sets, &embedder, ".fresh").await;
        let fresh = held_parts(&fresh_runs);
        print_gaps(
            "Fresh sets (frozen in 4d714fd, first run after 33dcb84; seen since)",
            &fresh,
            &rows,
        );
        // The third attempt's choice was made on all seven sets, the fresh ones seen by then.
        let seven: Vec<(&Set, Vec<&Run>)> = whole
            .iter()
            .chain(&fresh)
            .map(|(set, runs)| (*set, runs.clone()))
            .collect();
        print_candidates("all seven seen sets", &seven, &candidates);
        seven_owned = seven;
    }

    // The second frozen sets, read only when asked for: once, for the fusion chosen
    // before they were first run.
    if std::env::args().any(|a| a == "--frozen2") {
        let frozen_sets = [frozen2::conv_values(), frozen2::conv_replies()];
        let frozen = run_frozen(&frozen_sets, &embedder, ".frozen2").await;
        let frozen = held_parts(&frozen);
        print_gaps(
            "Second frozen sets (conversations; frozen in b185f9d, first run after 5b45e38)",
            &frozen,
            &rows,
        );
        // Post hoc, after the one reading above, used for no choice: what the coverage
        // family does over all nine sets, weights below the chosen grid included.
        if !seven_owned.is_empty() {
            let nine: Vec<(&Set, Vec<&Run>)> = seven_owned.into_iter().chain(frozen).collect();
            let mut post_hoc = candidates.clone();
            for w in [0.6f32, 0.65, 0.7, 0.75] {
                for p in [2.0f32, 3.0, 4.0, 5.0] {
                    post_hoc.push((
                        format!("coverage w={w} p={p}"),
                        Fusion::Coverage {
                            dense_weight: w,
                            power: p,
                        },
                    ));
                }
            }
            print_candidates(
                "all nine sets (POST HOC: read after the frozen run)",
                &nine,
                &post_hoc,
            );
            // The fourth attempt's rule over the nine sets, all tuning data now.
            let grid = choice_grid();
            print_candidates("all nine sets (the fourth attempt's grid)", &nine, &grid);
            match choose(&nine, &grid) {
                Some((name, f)) => {
                    println!("\nThe rule's choice over the nine sets: {name} ({f:?})")
                }
                None => println!("\nThe rule's choice over the nine sets: none within 0.5 point"),
            }
        }
    }

    // The hold-out sets, read only when asked for: once, for HOLDOUT_CHOICE.
    if std::env::args().any(|a| a == "--holdout") {
        let held_sets = holdout::sets();
        let held = run_frozen(&held_sets, &embedder, ".holdout").await;
        let held = held_parts(&held);
        print_gaps(
            "Hold-out sets (tests/data/fusion_holdout, first run after HOLDOUT_CHOICE was committed)",
            &held,
            &rows,
        );
    }
}

/// Runs every query of each of `sets` (frozen sets: all in the held-out part), naming
/// their counts, and with `FUSION_EVAL_DUMP` writes the runs to that path + `suffix`.
async fn run_frozen<'a>(
    sets: &'a [Set],
    embedder: &LocalEmbedder,
    suffix: &str,
) -> Vec<(&'a Set, Vec<Run>, Vec<Run>)> {
    let mut out = Vec::new();
    for set in sets {
        let [_, h] = runs(set, embedder).await;
        eprintln!("{}: {} queries", set.name, h.len());
        out.push((set, Vec::new(), h));
    }
    if let Some(path) = std::env::var_os("FUSION_EVAL_DUMP") {
        let mut path = path;
        path.push(suffix);
        dump(&out, &path);
    }
    out
}

/// Each set with the runs of its held-out part, borrowed.
fn held_parts<'a>(all: &'a [(&'a Set, Vec<Run>, Vec<Run>)]) -> Vec<(&'a Set, Vec<&'a Run>)> {
    all.iter()
        .map(|(set, _, h)| (*set, h.iter().collect()))
        .collect()
}

/// The fourth attempt's candidates: the coverage family over a grid widened towards a
/// larger word pull.
fn choice_grid() -> Vec<(String, Fusion)> {
    let mut grid = Vec::new();
    for w in [0.6f32, 0.65, 0.7, 0.75, 0.8, 0.84, 0.88, 0.92] {
        for p in [2.0f32, 3.0, 4.0, 5.0, 6.0] {
            grid.push((
                format!("coverage w={w} p={p}"),
                Fusion::Coverage {
                    dense_weight: w,
                    power: p,
                },
            ));
        }
    }
    grid
}

/// The fourth attempt's rule, fixed before the hold-out data existed: among the
/// candidates whose worst gap to the better single side over `sets` is within 0.5 point
/// (rounded to 0.1 point), the largest word pull (the smallest dense weight); among
/// those, the largest worst gap, then the largest mean gap. Real conversations are where
/// words win and the earlier choices lost, hence the preference for the word side once
/// meaning is safe.
fn choose(sets: &[(&Set, Vec<&Run>)], grid: &[(String, Fusion)]) -> Option<(String, Fusion)> {
    let tenth = |x: f64| (x * 10.0).round();
    let mut within: Vec<(f32, f64, f64, &String, Fusion)> = grid
        .iter()
        .filter_map(|(name, f)| {
            let Fusion::Coverage { dense_weight, .. } = *f else {
                return None;
            };
            let (_, worst, mean) = gaps(sets, *f);
            (tenth(worst) >= -5.0).then_some((dense_weight, tenth(worst), mean, name, *f))
        })
        .collect();
    within.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(b.1.total_cmp(&a.1))
            .then(b.2.total_cmp(&a.2))
    });
    within
        .first()
        .map(|(_, _, _, name, f)| ((*name).clone(), *f))
}

/// Every set's documents and queries (per part), computed without running anything.
fn print_sizes() {
    let mut sets = vec![
        pairs(),
        facts(),
        episodes(),
        episodes_pooled(),
        episodes_chunks(),
        updates(),
        lookup(),
        frozen2::conv_values(),
        frozen2::conv_replies(),
    ];
    if std::env::args().any(|a| a == "--holdout") {
        sets.extend(holdout::sets());
    }
    for set in &sets {
        let docs: usize = set.groups.iter().map(|g| g.0.len()).sum();
        let tune: usize = set.groups.iter().map(|g| g.1.len()).sum();
        let held: usize = set.groups.iter().map(|g| g.2.len()).sum();
        let answers: usize = set
            .groups
            .iter()
            .flat_map(|g| g.1.iter().chain(&g.2))
            .map(|q| q.answers.len())
            .sum();
        println!(
            "{}: {docs} documents, {tune} + {held} queries, {answers} answers",
            set.name
        );
    }
}

/// The candidate fusions ranked by their worst gap to the better single side over
/// `sets` (rounded to 0.1 point: one query is at least 0.5 on every set), then by their
/// mean gap.
fn print_candidates(title: &str, sets: &[(&Set, Vec<&Run>)], candidates: &[(String, Fusion)]) {
    let mut ranked: Vec<(f64, f64, String)> = candidates
        .iter()
        .map(|(name, f)| {
            let (g, worst, mean) = gaps(sets, *f);
            (worst, mean, format!("{name}: gaps {g:.1?}"))
        })
        .collect();
    let tenth = |x: f64| (x * 10.0).round();
    ranked.sort_by(|a, b| tenth(b.0).total_cmp(&tenth(a.0)).then(b.1.total_cmp(&a.1)));
    println!("\nCandidates by worst gap to max(sparse, dense) over {title}, then mean:");
    for (worst, mean, line) in &ranked {
        println!("  worst {worst:+.1} mean {mean:+.2}  {line}");
    }
}

/// `f`'s gap to the better single side on each of `sets`, the worst of them and their mean.
fn gaps(sets: &[(&Set, Vec<&Run>)], f: Fusion) -> (Vec<f64>, f64, f64) {
    let method = fusion_method(f);
    let g: Vec<f64> = sets
        .iter()
        .map(|(set, runs)| gap(runs, set.k, method.as_ref()))
        .collect();
    let worst = g.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = g.iter().sum::<f64>() / g.len() as f64;
    (g, worst, mean)
}

/// `method`'s score on `runs` minus the better of sparse and dense alone, in points.
fn gap(runs: &[&Run], k: usize, method: &dyn Fn(&Run) -> Vec<(String, f32)>) -> f64 {
    let sparse = hit_rate_of(runs, k, &|r: &Run| r.sparse.clone());
    let dense = hit_rate_of(runs, k, &|r: &Run| r.dense.clone());
    hit_rate_of(runs, k, method) - sparse.max(dense)
}

/// [`hit_rate`] over borrowed runs.
fn hit_rate_of(runs: &[&Run], k: usize, method: &dyn Fn(&Run) -> Vec<(String, f32)>) -> f64 {
    let total: f64 = runs.iter().map(|r| score_run(r, k, method)).sum();
    100.0 * total / runs.len().max(1) as f64
}

/// A table of every row's score per set, with its gap to the better single side.
fn print_gaps(title: &str, sets: &[(&Set, Vec<&Run>)], rows: &[(&str, Method)]) {
    let mut header = String::from("| method |");
    let mut rule = String::from("|---|");
    for (set, runs) in sets {
        let m = if set.k == 0 {
            "MRR".to_owned()
        } else {
            format!("hit@{}", set.k)
        };
        header.push_str(&format!(" {} {m} ({}) |", set.name, runs.len()));
        rule.push_str("---|");
    }
    println!("\n{title}, score (gap to the better of sparse and dense):\n\n{header}\n{rule}");
    for (name, method) in rows {
        let mut line = format!("| {name} |");
        for (set, runs) in sets {
            line.push_str(&format!(
                " {:.1} ({:+.1}) |",
                hit_rate_of(runs, set.k, method.as_ref()),
                gap(runs, set.k, method.as_ref())
            ));
        }
        println!("{line}");
    }
}
