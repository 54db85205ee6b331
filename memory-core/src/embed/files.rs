//! Loading a model directory, checked file by file, and the process-wide cache of loaded
//! models.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use tokenizers::Tokenizer;

use super::bert::{Bert, Config};
use crate::error::{MemoryError, Result};

/// The weights file of a model directory.
pub(crate) const WEIGHTS: &str = "model.safetensors";
/// The BERT configuration file of a model directory.
pub(crate) const CONFIG: &str = "config.json";
/// The tokenizer file of a model directory.
pub(crate) const TOKENIZER: &str = "tokenizer.json";

const FETCH_HINT: &str = "fetch the model with `agentmem model fetch`";

/// A model loaded from a directory: the network, its tokenizer and its shape. Immutable,
/// shared by every embedder built on the same directory.
pub(crate) struct LoadedModel {
    /// The canonical directory it was loaded from.
    pub(crate) dir: PathBuf,
    pub(crate) bert: Bert,
    /// Without truncation or padding: each embedder truncates to its own length, and the
    /// network runs sequences packed, unpadded.
    pub(crate) tokenizer: Tokenizer,
    /// How many special tokens ([CLS], [SEP]) one sequence gets.
    pub(crate) special_tokens: usize,
    /// The embedding dimension.
    pub(crate) hidden_size: usize,
    /// The longest sequence the position embeddings cover.
    pub(crate) max_positions: usize,
}

impl LoadedModel {
    /// A [`MemoryError::Model`] for a failure while running this model.
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> MemoryError {
        MemoryError::model(
            self.dir.display().to_string(),
            crate::error::ModelErrorKind::Other,
            message.to_string(),
        )
    }
}

/// The model in `dir`, loaded once per process: later calls with the same directory (under
/// any spelling of its path) share the first load.
///
/// The cache holds each model for the life of the process, so sessions built and dropped
/// one after another never reload the weights; a directory whose files change on disk is
/// not reloaded.
pub(crate) fn load_shared(dir: &Path) -> Result<Arc<LoadedModel>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<LoadedModel>>>> = OnceLock::new();
    let dir = model_dir(dir)?;
    // Held while loading, so two threads asking for the same new model load it once.
    let mut cache = CACHE.get_or_init(Default::default).lock();
    if let Some(model) = cache.get(&dir) {
        return Ok(Arc::clone(model));
    }
    let model = Arc::new(load(dir.clone())?);
    cache.insert(dir, Arc::clone(&model));
    Ok(model)
}

/// `dir` made canonical, once it is known to be a directory holding the three files.
fn model_dir(dir: &Path) -> Result<PathBuf> {
    let refuse = |reason: String| MemoryError::ModelFiles {
        path: dir.to_path_buf(),
        reason,
    };
    let canonical = dir.canonicalize().map_err(|e| {
        refuse(match e.kind() {
            std::io::ErrorKind::NotFound => format!("no such directory ({FETCH_HINT})"),
            _ => e.to_string(),
        })
    })?;
    if !canonical.is_dir() {
        return Err(refuse("not a directory".into()));
    }
    let missing: Vec<&str> = [WEIGHTS, CONFIG, TOKENIZER]
        .into_iter()
        .filter(|f| !canonical.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "missing {} ({FETCH_HINT})",
            missing.join(", ")
        )));
    }
    Ok(canonical)
}

fn load(dir: PathBuf) -> Result<LoadedModel> {
    let file_error = |file: &str, reason: String| MemoryError::ModelFiles {
        path: dir.join(file),
        reason,
    };

    let config_text =
        std::fs::read_to_string(dir.join(CONFIG)).map_err(|e| file_error(CONFIG, e.to_string()))?;
    let config: Config = serde_json::from_str(&config_text)
        .map_err(|e| file_error(CONFIG, format!("not a BERT configuration: {e}")))?;
    if let Some(why) = config.unsupported() {
        return Err(file_error(CONFIG, why));
    }

    let mut tokenizer =
        super::tokenizer::load(&dir.join(TOKENIZER)).map_err(|e| file_error(TOKENIZER, e))?;
    tokenizer
        .with_truncation(None)
        .map_err(|e| file_error(TOKENIZER, e.to_string()))?;
    tokenizer.with_padding(None);
    let special_tokens = tokenizer
        .get_post_processor()
        .map_or(0, |p| tokenizers::PostProcessor::added_tokens(p, false));

    let weights =
        std::fs::read(dir.join(WEIGHTS)).map_err(|e| file_error(WEIGHTS, e.to_string()))?;
    let bert = Bert::load(&config, &weights).map_err(|e| file_error(WEIGHTS, e))?;

    Ok(LoadedModel {
        dir,
        bert,
        tokenizer,
        special_tokens,
        hidden_size: config.hidden_size,
        max_positions: config.max_position_embeddings,
    })
}
