//! `LocalEmbedder` against an independent numpy forward pass of the same weights
//! (scripts/reference_embed.py), and its handling of batches, truncation, caching and bad
//! model directories.
//!
//! Needs `AGENTMEM_EMBED_MODEL` (the directory `scripts/fetch-model` prints) and, for the
//! agreement test, `AGENTMEM_PYTHON` (a python with numpy and tokenizers); `.ci/embed.sh`
//! sets both. With `CI=true` a missing one fails the test; otherwise it is skipped with a
//! message.
#![cfg(feature = "local-embed")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agentmemory_core::embed::{LocalEmbedder, Precision, AGENTMEM_EMBED_MODEL};
use agentmemory_core::{Embedder, MemoryError};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The value of `var`; `None` after a visible message outside CI, a failure in CI.
fn required_var(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Some(v.trim().to_owned()),
        _ => {
            if in_ci() {
                panic!("{var} is not set: CI must `source .ci/embed.sh` ({what})");
            }
            let _ = writeln!(std::io::stderr(), "skipping: set {var} to run ({what})");
            None
        }
    }
}

fn model_dir() -> Option<PathBuf> {
    required_var(
        AGENTMEM_EMBED_MODEL,
        "the model directory scripts/fetch-model prints",
    )
    .map(PathBuf::from)
}

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

fn norm(a: &[f32]) -> f64 {
    a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt()
}

/// Varied on purpose: lengths from nothing to past the 256-token cut, punctuation, digits,
/// accents, non-Latin scripts, emoji, code.
fn sentences() -> Vec<String> {
    let long = "The committee reviewed the quarterly figures, argued about the budget for the \
                new library wing, postponed the vote on parking fees, and finally agreed that \
                the annual summer festival would move from the river bank to the old market \
                square because of the construction work planned near the bridge. "
        .repeat(6);
    [
        "Hi",
        "",
        "   ",
        "What time does the pharmacy on Elm Street close tonight?",
        "My daughter just started learning the violin and practises every evening.",
        "We adopted a three-legged greyhound named Biscuit last spring.",
        "The flight to Montréal leaves at 07:45 on 2024-03-12 from gate B17.",
        "Café crème, s'il vous plaît, and a croissant aux amandes.",
        "Ich wohne seit zehn Jahren in München und arbeite als Ingenieurin.",
        "我住在北京，每天骑自行车上班。",
        "東京の天気は明日晴れるでしょう。",
        "Я люблю читать книги по вечерам.",
        "أحب القهوة العربية كثيرا",
        "I ❤️ pizza 🍕 and sushi 🍣!!!",
        "fn main() { println!(\"hello, {}\", name); }",
        "Visit https://example.org/docs?page=2#intro for details.",
        "WHY IS THE PRINTER ALWAYS OUT OF TONER ON MONDAYS",
        "Honestly, I can't stand cilantro; it tastes like soap to me.",
        "The mitochondria is the powerhouse of the cell.",
        "Remind me to call the dentist about rescheduling next Tuesday's appointment.",
        "She plays bass in a jazz trio that performs at a small bar downtown every Friday night.",
        "supercalifragilisticexpialidocious antidisestablishmentarianism",
        "?!?!... --- ;;; ::",
        "1 2 3 4 5 6 7 8 9 10 11 12",
        long.as_str(),
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// Vectors from scripts/reference_embed.py, run by `python`, for `texts`.
fn reference_vectors(
    python: &str,
    dir: &Path,
    texts: &[String],
    max_length: usize,
) -> Vec<Vec<f32>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/reference_embed.py");
    let mut child = Command::new(python)
        .arg(&script)
        .arg(dir)
        .arg("--max-length")
        .arg(max_length.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {python} {}: {e}", script.display()));
    let input = serde_json::to_vec(texts).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "reference_embed.py failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("reference_embed.py prints a JSON array")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agrees_with_an_independent_numpy_forward_pass() {
    let Some(dir) = model_dir() else { return };
    let Some(python) = required_var("AGENTMEM_PYTHON", "a python with numpy and tokenizers") else {
        return;
    };
    let texts = sentences();
    assert!(texts.len() >= 20);

    // Batches of 4 mix lengths, so padding and the attention mask are exercised.
    let embedder = LocalEmbedder::builder(&dir).batch_size(4).build().unwrap();
    let ours = embedder.embed(&texts).await.unwrap();
    let theirs = reference_vectors(&python, &dir, &texts, embedder.max_length());

    assert_eq!(ours.len(), texts.len());
    assert_eq!(theirs.len(), texts.len());
    let mut worst = (f64::INFINITY, "");
    for ((text, a), b) in texts.iter().zip(&ours).zip(&theirs) {
        assert_eq!(a.len(), 384, "{text:?}");
        assert!((norm(a) - 1.0).abs() < 1e-4, "{text:?} is not unit length");
        let c = cosine(a, b);
        if c < worst.0 {
            worst = (c, text.as_str());
        }
        assert!(c >= 0.999, "cosine {c:.6} < 0.999 for {text:?}");
    }
    eprintln!(
        "worst cosine against numpy: 1 - {:.2e} ({:?})",
        1.0 - worst.0,
        worst.1.chars().take(40).collect::<String>()
    );
}

#[test]
fn batching_and_order_do_not_change_vectors() {
    let Some(dir) = model_dir() else { return };
    let texts = sentences();
    let batched = LocalEmbedder::builder(&dir)
        .batch_size(64)
        .build()
        .unwrap()
        .embed_blocking(&texts)
        .unwrap();
    let one_by_one = LocalEmbedder::builder(&dir)
        .batch_size(1)
        .threads(1)
        .build()
        .unwrap();
    for (text, vector) in texts.iter().zip(&batched) {
        let alone = one_by_one.embed_blocking(&[text]).unwrap();
        let c = cosine(vector, &alone[0]);
        assert!(c > 0.99999, "{text:?}: batched vs alone cosine {c}");
    }
}

#[test]
fn texts_past_max_length_are_cut_there() {
    let Some(dir) = model_dir() else { return };
    // Two texts that agree on their first ~400 tokens and differ after.
    let head = "alpha beta gamma delta epsilon zeta eta theta iota kappa ".repeat(40);
    let texts = [
        format!("{head} the ending is about cats and dogs"),
        format!("{head} a completely different ending about tax law"),
    ];
    let at_256 = LocalEmbedder::load(&dir)
        .unwrap()
        .embed_blocking(&texts)
        .unwrap();
    assert_eq!(at_256[0], at_256[1], "both are cut before they differ");

    let short = LocalEmbedder::builder(&dir)
        .max_length(512)
        .build()
        .unwrap();
    let at_512 = short.embed_blocking(&texts).unwrap();
    assert_ne!(at_512[0], at_512[1], "at 512 tokens the endings count");
    assert_ne!(at_256[0], at_512[0]);
}

#[test]
fn the_same_directory_shares_one_model() {
    let Some(dir) = model_dir() else { return };
    let a = LocalEmbedder::builder(&dir).threads(1).build().unwrap();
    // Another spelling of the same path, other settings: still the same weights.
    let b = LocalEmbedder::builder(dir.join("."))
        .threads(2)
        .batch_size(8)
        .build()
        .unwrap();
    assert!(a.shares_model_with(&b));
    assert_eq!(a.dir(), b.dir());
    assert_eq!((a.threads(), b.threads()), (1, 2));
    assert_eq!(b.dimensions(), Some(384));
}

#[test]
fn related_sentences_are_closer_than_unrelated_ones() {
    let Some(dir) = model_dir() else { return };
    let embedder = LocalEmbedder::load(&dir).unwrap();
    let v = embedder
        .embed_blocking(&[
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Interest rates rose by half a percent.",
        ])
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.3);
}

#[tokio::test(flavor = "current_thread")]
async fn empty_input_gives_no_vectors_and_empty_text_a_unit_vector() {
    let Some(dir) = model_dir() else { return };
    let embedder = LocalEmbedder::load(&dir).unwrap();
    assert!(embedder.embed(&[]).await.unwrap().is_empty());
    let v = embedder.embed(&[String::new()]).await.unwrap();
    assert!((norm(&v[0]) - 1.0).abs() < 1e-4);
}

#[test]
fn from_env_reads_the_variable() {
    let Some(dir) = model_dir() else { return };
    let embedder = LocalEmbedder::from_env()
        .unwrap()
        .expect("the variable is set");
    assert_eq!(embedder.dir(), dir.canonicalize().unwrap());
    // The precision comes from AGENTMEM_EMBED_PRECISION, f32 when it is unset.
    assert_eq!(embedder.precision(), Precision::from_env().unwrap());
}

#[path = "../benches/support/sentences.rs"]
mod real;

#[test]
fn int8_agrees_with_f32_on_real_sentences() {
    let Some(dir) = model_dir() else { return };
    // Every tenth of the 1,000 real sentences the embed bench measures (all three
    // sources; this runs in a debug build, where the int8 kernels are not optimised).
    let texts: Vec<String> = real::real_sentences(1000).into_iter().step_by(10).collect();
    let full = LocalEmbedder::builder(&dir).build().unwrap();
    assert_eq!(full.precision(), Precision::F32, "f32 unless chosen");
    let int8 = LocalEmbedder::builder(&dir)
        .precision(Precision::Int8)
        .build()
        .unwrap();
    assert_eq!(int8.precision(), Precision::Int8);
    assert!(int8.shares_model_with(&full), "one copy of the f32 weights");

    let want = full.embed_blocking(&texts).unwrap();
    let got = int8.embed_blocking(&texts).unwrap();
    let mut worst = (f64::INFINITY, "");
    let mut total = 0.0;
    for ((text, a), b) in texts.iter().zip(&want).zip(&got) {
        assert!((norm(b) - 1.0).abs() < 1e-4, "{text:?} is not unit length");
        let c = cosine(a, b);
        total += c;
        if c < worst.0 {
            worst = (c, text.as_str());
        }
        assert!(c >= 0.99, "int8 vs f32 cosine {c:.5} < 0.99 for {text:?}");
    }
    eprintln!(
        "int8 vs f32 on {} real sentences: min cosine {:.5} ({:?}), mean {:.5}",
        texts.len(),
        worst.0,
        worst.1,
        total / texts.len() as f64
    );
    assert!(
        worst.0 < 0.99999,
        "the int8 path ran: its vectors are not the f32 ones"
    );

    // One text alone runs its products split over the pool: the vector of the batch.
    let alone = int8.embed_blocking(&texts[..1]).unwrap();
    assert!(cosine(&alone[0], &got[0]) > 0.99999);
}

// ----- bad model directories: typed errors naming the path

/// The error as the kernel reports it (the embedder's own error turned into `MemoryError`).
fn model_files_error<E: Into<MemoryError>>(result: Result<LocalEmbedder, E>) -> (PathBuf, String) {
    match result.map_err(Into::into) {
        Err(MemoryError::ModelFiles { path, reason }) => (path, reason),
        Err(other) => panic!("expected MemoryError::ModelFiles, got {other:?}"),
        Ok(e) => panic!("expected an error, got {e:?}"),
    }
}

const BERT_CONFIG: &str = r#"{"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
  "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1, "max_position_embeddings": 16, "type_vocab_size": 2,
  "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0}"#;

#[test]
fn a_missing_directory_is_named() {
    let dir = std::env::temp_dir().join("agentmem-embed-test-no-such-dir");
    let (path, reason) = model_files_error(LocalEmbedder::load(&dir));
    assert_eq!(path, dir);
    assert!(reason.contains("no such directory"), "{reason}");
    let message = LocalEmbedder::load(&dir).unwrap_err().to_string();
    assert!(message.contains(&*dir.to_string_lossy()), "{message}");
}

#[test]
fn a_directory_without_the_files_names_the_missing_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), BERT_CONFIG).unwrap();
    let (path, reason) = model_files_error(LocalEmbedder::load(dir.path()));
    assert_eq!(path, dir.path());
    assert!(
        reason.contains("model.safetensors") && reason.contains("tokenizer.json"),
        "{reason}"
    );
    assert!(!reason.contains("config.json"), "{reason}");
}

#[test]
fn a_file_instead_of_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.safetensors");
    std::fs::write(&file, b"not a directory").unwrap();
    let (path, reason) = model_files_error(LocalEmbedder::load(&file));
    assert_eq!(path, file);
    assert!(reason.contains("not a directory"), "{reason}");
}

#[test]
fn corrupt_config_and_tokenizer_are_named() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::write(dir.path().join(f), b"{ corrupt").unwrap();
    }
    let canonical = dir.path().canonicalize().unwrap();
    let (path, _) = model_files_error(LocalEmbedder::load(dir.path()));
    assert_eq!(path, canonical.join("config.json"));

    std::fs::write(dir.path().join("config.json"), BERT_CONFIG).unwrap();
    let (path, _) = model_files_error(LocalEmbedder::load(dir.path()));
    assert_eq!(path, canonical.join("tokenizer.json"));
}

#[test]
fn corrupt_or_mismatched_weights_are_named() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(model.join(f), dir.path().join(f)).unwrap();
    }
    // Cut short, as an interrupted download would leave it.
    let weights = std::fs::read(model.join("model.safetensors")).unwrap();
    std::fs::write(
        dir.path().join("model.safetensors"),
        &weights[..weights.len() / 3],
    )
    .unwrap();
    let (path, reason) = model_files_error(LocalEmbedder::load(dir.path()));
    assert_eq!(path, canonical.join("model.safetensors"), "{reason}");

    // Whole, but not the network config.json describes.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("config.json"), BERT_CONFIG).unwrap();
    std::fs::copy(
        model.join("tokenizer.json"),
        other.path().join("tokenizer.json"),
    )
    .unwrap();
    std::fs::copy(
        model.join("model.safetensors"),
        other.path().join("model.safetensors"),
    )
    .unwrap();
    let (path, reason) = model_files_error(LocalEmbedder::load(other.path()));
    assert!(path.ends_with("model.safetensors"), "{path:?}: {reason}");
}

#[test]
fn zero_threads_zero_batch_and_overlong_max_length_are_refused() {
    let dir = std::env::temp_dir();
    for builder in [
        LocalEmbedder::builder(&dir).threads(0),
        LocalEmbedder::builder(&dir).batch_size(0),
    ] {
        assert!(matches!(
            builder.build().map_err(MemoryError::from),
            Err(MemoryError::InvalidArgument { .. })
        ));
    }
    let Some(model) = model_dir() else { return };
    for max_length in [0, 2, 513] {
        let result = LocalEmbedder::builder(&model)
            .max_length(max_length)
            .build()
            .map_err(MemoryError::from);
        assert!(
            matches!(
                result,
                Err(MemoryError::InvalidArgument {
                    what: "max_length",
                    ..
                })
            ),
            "max_length {max_length}: {result:?}"
        );
    }
}
