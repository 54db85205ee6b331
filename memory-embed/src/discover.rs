//! Where the model lives: the directory [`AGENTMEM_EMBED_MODEL`] names, else the standard
//! cache directory `agentmem model fetch` fills ([`model_cache_dir`]).
//!
//! Defined with or without the `runtime` feature, so a build without the embedder can
//! still say where a model would be found.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::AGENTMEM_EMBED_MODEL;

/// The environment variable that overrides the cache directory the model is fetched into
/// and looked for in (the directory itself, holding the model's files).
pub const AGENTMEM_MODEL_DIR: &str = "AGENTMEM_MODEL_DIR";

/// The files a model directory holds, each needed by the loader.
pub const MODEL_FILES: [&str; 3] = ["model.safetensors", "config.json", "tokenizer.json"];

/// The name of the model's directory under the cache root.
const MODEL_NAME: &str = "all-minilm-l6-v2";

/// Where a model directory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelSource {
    /// Named by [`AGENTMEM_EMBED_MODEL`].
    EnvVar,
    /// Found in the cache directory ([`model_cache_dir`]).
    CacheDir,
}

impl ModelSource {
    /// A short description for people: `AGENTMEM_EMBED_MODEL` or `cache directory`.
    pub fn describe(self) -> &'static str {
        match self {
            ModelSource::EnvVar => AGENTMEM_EMBED_MODEL,
            ModelSource::CacheDir => "cache directory",
        }
    }
}

/// A model directory and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLocation {
    /// The directory holding (or meant to hold) the model's files.
    pub dir: PathBuf,
    /// How it was found.
    pub source: ModelSource,
}

/// The cache directory of all-MiniLM-L6-v2: `$AGENTMEM_MODEL_DIR` when set, else
/// `agentmem/models/all-minilm-l6-v2` under the platform's cache directory:
/// `$XDG_CACHE_HOME` (when set to an absolute path) or `~/.cache` on Linux and other
/// Unix systems, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows. `None` when
/// none of these can be determined (no home directory).
///
/// ```
/// if let Some(dir) = agentmemory_embed::model_cache_dir() {
///     println!("agentmem model fetch puts the model in {}", dir.display());
/// }
/// ```
pub fn model_cache_dir() -> Option<PathBuf> {
    cache_dir_from(&|name| std::env::var_os(name))
}

/// [`model_cache_dir`] over an environment lookup (testable without touching the
/// process environment).
fn cache_dir_from(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(AGENTMEM_MODEL_DIR) {
        return Some(dir);
    }
    platform_cache_root(&set).map(|root| root.join("agentmem").join("models").join(MODEL_NAME))
}

/// agentmem's own directory under the platform's cache directory (see
/// [`model_cache_dir`]; [`AGENTMEM_MODEL_DIR`] plays no part), where files derived from a
/// model go when the model's directory cannot be written.
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
pub(crate) fn agentmem_cache_dir() -> Option<PathBuf> {
    platform_cache_root(&|name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
    .map(|root| root.join("agentmem"))
}

#[cfg(windows)]
fn platform_cache_root(set: &dyn Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    set("LOCALAPPDATA").filter(|p| p.is_absolute())
}

#[cfg(target_os = "macos")]
fn platform_cache_root(set: &dyn Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    set("HOME")
        .filter(|p| p.is_absolute())
        .map(|home| home.join("Library").join("Caches"))
}

#[cfg(not(any(windows, target_os = "macos")))]
fn platform_cache_root(set: &dyn Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    // The XDG base directory specification: a relative XDG_CACHE_HOME is invalid and ignored.
    if let Some(xdg) = set("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg);
    }
    set("HOME")
        .filter(|p| p.is_absolute())
        .map(|home| home.join(".cache"))
}

/// Whether `dir` holds every file in [`MODEL_FILES`] (non-empty). Says nothing about
/// their content; loading checks that.
pub fn holds_model(dir: &Path) -> bool {
    MODEL_FILES
        .iter()
        .all(|f| std::fs::metadata(dir.join(f)).is_ok_and(|m| m.is_file() && m.len() > 0))
}

/// The model directory in use: the one [`AGENTMEM_EMBED_MODEL`] names when it is set (and
/// non-empty, whatever it holds, so a wrong path is reported rather than passed over),
/// else [`model_cache_dir`] when it holds the model's files, else `None`.
///
/// ```
/// use agentmemory_embed::{locate_model, ModelSource};
///
/// match locate_model() {
///     Some(found) => println!("model in {} ({})", found.dir.display(), found.source.describe()),
///     None => println!("no model: run `agentmem model fetch`"),
/// }
/// ```
pub fn locate_model() -> Option<ModelLocation> {
    locate_from(&|name| std::env::var_os(name))
}

fn locate_from(env: &dyn Fn(&str) -> Option<OsString>) -> Option<ModelLocation> {
    if let Some(dir) = env(AGENTMEM_EMBED_MODEL).filter(|v| !v.is_empty()) {
        return Some(ModelLocation {
            dir: PathBuf::from(dir),
            source: ModelSource::EnvVar,
        });
    }
    cache_dir_from(env)
        .filter(|dir| holds_model(dir))
        .map(|dir| ModelLocation {
            dir,
            source: ModelSource::CacheDir,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_override_wins_over_the_platform_directory() {
        let env = env_of(&[(AGENTMEM_MODEL_DIR, "/models/here"), ("HOME", "/home/u")]);
        assert_eq!(cache_dir_from(&env), Some(PathBuf::from("/models/here")));
    }

    #[cfg(not(any(windows, target_os = "macos")))]
    #[test]
    fn xdg_cache_home_then_home() {
        let env = env_of(&[("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/u")]);
        assert_eq!(
            cache_dir_from(&env),
            Some(PathBuf::from("/xdg/agentmem/models/all-minilm-l6-v2"))
        );
        // A relative XDG_CACHE_HOME is invalid per the specification and ignored.
        let env = env_of(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/home/u")]);
        assert_eq!(
            cache_dir_from(&env),
            Some(PathBuf::from(
                "/home/u/.cache/agentmem/models/all-minilm-l6-v2"
            ))
        );
        assert_eq!(cache_dir_from(&env_of(&[])), None);
    }

    #[test]
    fn the_embed_model_variable_wins_and_an_empty_cache_is_not_a_model() {
        let empty = std::env::temp_dir().join(format!("agentmem-discover-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let dir = empty.to_str().unwrap();
        let env = env_of(&[(AGENTMEM_EMBED_MODEL, "/named"), (AGENTMEM_MODEL_DIR, dir)]);
        let found = locate_from(&env).unwrap();
        assert_eq!(found.source, ModelSource::EnvVar);
        assert_eq!(found.dir, PathBuf::from("/named"));
        // The cache directory without the files: no model.
        assert_eq!(locate_from(&env_of(&[(AGENTMEM_MODEL_DIR, dir)])), None);
        for f in MODEL_FILES {
            std::fs::write(empty.join(f), b"x").unwrap();
        }
        let found = locate_from(&env_of(&[(AGENTMEM_MODEL_DIR, dir)])).unwrap();
        assert_eq!(found.source, ModelSource::CacheDir);
        assert_eq!(found.dir, empty);
        std::fs::remove_dir_all(&empty).unwrap();
    }
}
