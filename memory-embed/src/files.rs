//! Loading a model directory, checked file by file, and the process-wide cache of loaded
//! models.
//!
//! The weights come from the packed-weights file ([`packed`]) when one matches the model,
//! mapped in a few milliseconds; otherwise from `model.safetensors`, read and packed in
//! this process, and the packed form is saved for the next one: beside the model, or
//! under agentmem's cache directory when the model's directory cannot be written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::Mutex;
use tokenizers::Tokenizer;

use super::bert::{self, Bert, Config};
use super::packed::{self, PackedError};
use super::tensor::Buffer;
use crate::error::{EmbedError, Result};

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
    /// Where the weights came from.
    pub(crate) weights: WeightsOrigin,
}

/// Where a loaded model's weights came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WeightsOrigin {
    /// Mapped from this packed-weights file.
    Mapped(PathBuf),
    /// Read from `model.safetensors` and packed in this process, then saved to this file
    /// (`None` when no place could be written).
    Packed(Option<PathBuf>),
}

impl WeightsOrigin {
    /// The packed-weights file mapped or written.
    pub(crate) fn file(&self) -> Option<&Path> {
        match self {
            WeightsOrigin::Mapped(path) => Some(path),
            WeightsOrigin::Packed(path) => path.as_deref(),
        }
    }
}

impl LoadedModel {
    /// A [`EmbedError::Model`] for a failure while running this model.
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> EmbedError {
        EmbedError::model(self.dir.display().to_string(), message.to_string())
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
    let refuse = |reason: String| EmbedError::ModelFiles {
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

/// Where the packed weights of the model in `dir` (canonical) are looked for and saved,
/// in order: beside the model, then under agentmem's cache directory, in a file named
/// after the model's directory.
pub(crate) fn packed_places(dir: &Path) -> Vec<PathBuf> {
    let mut places = vec![dir.join(packed::FILE_NAME)];
    if let Some(cache) = super::discover::agentmem_cache_dir() {
        let key = xxhash_rust::xxh3::xxh3_64(dir.as_os_str().as_encoded_bytes());
        places.push(
            cache
                .join("packed")
                .join(format!("{key:016x}-{}", packed::FILE_NAME)),
        );
    }
    places
}

fn load(dir: PathBuf) -> Result<LoadedModel> {
    let places = packed_places(&dir);
    load_with(dir, &places)
}

/// The model in `dir` (canonical), its packed weights looked for and saved at `places`.
pub(crate) fn load_with(dir: PathBuf, places: &[PathBuf]) -> Result<LoadedModel> {
    let started = Instant::now();
    let file_error = |file: &str, reason: String| EmbedError::ModelFiles {
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

    let (bert, weights) =
        load_weights(&dir, &config, places).map_err(|e| file_error(WEIGHTS, e))?;
    tracing::debug!(
        dir = %dir.display(),
        elapsed_ms = started.elapsed().as_secs_f64() * 1e3,
        weights = ?weights,
        "embedding model loaded"
    );
    Ok(LoadedModel {
        dir,
        bert,
        tokenizer,
        special_tokens,
        hidden_size: config.hidden_size,
        max_positions: config.max_position_embeddings,
        weights,
    })
}

/// The encoder of the model in `dir`: mapped from the first of `places` holding its
/// packed weights, else packed from `model.safetensors` and saved to the first of
/// `places` that can be written. The error says what is wrong with `model.safetensors`.
fn load_weights(
    dir: &Path,
    config: &Config,
    places: &[PathBuf],
) -> std::result::Result<(Bert, WeightsOrigin), String> {
    let path = dir.join(WEIGHTS);
    let shape = config.shape();
    // Taken before reading, so a model replaced meanwhile is packed again next time.
    let source = if packed::ENABLED {
        packed::Source::of(&path).ok()
    } else {
        None
    };
    if let Some(source) = source {
        for place in places {
            let reason = match packed::open(place, source, shape) {
                Ok(mapped) => match Bert::over(config, Buffer::Mapped(mapped)) {
                    Ok(bert) => return Ok((bert, WeightsOrigin::Mapped(place.clone()))),
                    Err(e) => e,
                },
                Err(PackedError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => e.to_string(),
            };
            tracing::info!(
                path = %place.display(),
                %reason,
                "packed weights not used: packing model.safetensors again"
            );
        }
    }

    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let values = bert::pack(config, &bytes)?;
    drop(bytes);
    let saved = source.and_then(|source| {
        places.iter().find_map(|place| {
            match packed::write(place, source, shape, &values) {
                Ok(()) => Some(place.clone()),
                Err(e) => {
                    tracing::debug!(path = %place.display(), error = %e, "cannot save packed weights here");
                    None
                }
            }
        })
    });
    if source.is_some() && saved.is_none() {
        tracing::warn!(
            places = ?places,
            "cannot save the packed weights anywhere: every start reads model.safetensors again"
        );
    }
    let bert = Bert::over(config, Buffer::Owned(values))?;
    Ok((bert, WeightsOrigin::Packed(saved)))
}

#[cfg(all(test, not(miri)))]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::batch::{self, Plan};
    use crate::bert::testing::{tiny_config, tiny_safetensors, TINY_CONFIG};
    use crate::tokenizer::testing::BERT_STYLE;

    /// A directory holding a tiny model (random weights from `seed`).
    fn tiny_model(seed: u64) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG), TINY_CONFIG).unwrap();
        std::fs::write(dir.path().join(TOKENIZER), BERT_STYLE).unwrap();
        let weights = tiny_safetensors(&tiny_config(), seed);
        std::fs::write(dir.path().join(WEIGHTS), weights).unwrap();
        dir
    }

    fn canonical(dir: &tempfile::TempDir) -> PathBuf {
        dir.path().canonicalize().unwrap()
    }

    /// The vectors of a few texts, as bits.
    fn vectors(model: &LoadedModel) -> Vec<Vec<u32>> {
        let texts = [
            "The cats sat on the mat.",
            "the",
            "",
            "on the mat the cat sat",
        ];
        let plan = Plan {
            batch_size: 2,
            max_length: 16,
        };
        batch::embed(model, None, &texts, plan)
            .unwrap()
            .into_iter()
            .map(|v| v.into_iter().map(f32::to_bits).collect())
            .collect()
    }

    fn modified(path: &Path) -> SystemTime {
        std::fs::metadata(path).unwrap().modified().unwrap()
    }

    #[test]
    fn the_first_load_packs_and_saves_and_the_next_maps_the_same_weights() {
        let dir = tiny_model(1);
        let place = dir.path().join(packed::FILE_NAME);
        let first = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();
        assert_eq!(first.weights, WeightsOrigin::Packed(Some(place.clone())));
        let saved = modified(&place);

        let second = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();
        assert_eq!(second.weights, WeightsOrigin::Mapped(place.clone()));
        // Not written again.
        assert_eq!(modified(&place), saved);
        assert_eq!(vectors(&first), vectors(&second));

        // Nowhere to save: packed in memory, the same again.
        let unsaved = load_with(canonical(&dir), &[]).unwrap();
        assert_eq!(unsaved.weights, WeightsOrigin::Packed(None));
        assert_eq!(vectors(&unsaved), vectors(&second));
    }

    #[test]
    fn a_changed_model_is_packed_again() {
        let dir = tiny_model(1);
        let place = dir.path().join(packed::FILE_NAME);
        let old = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();

        // Other weights of the same size, dated in the past, as a copy keeping times would.
        let weights = dir.path().join(WEIGHTS);
        std::fs::write(&weights, tiny_safetensors(&tiny_config(), 2)).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&weights)
            .unwrap()
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000))
            .unwrap();
        let new = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();
        assert_eq!(new.weights, WeightsOrigin::Packed(Some(place.clone())));
        assert_ne!(vectors(&new), vectors(&old));
        let again = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();
        assert_eq!(again.weights, WeightsOrigin::Mapped(place.clone()));
        assert_eq!(vectors(&again), vectors(&new));
    }

    #[test]
    fn a_damaged_cut_or_foreign_packed_file_is_packed_again() {
        let dir = tiny_model(3);
        let place = dir.path().join(packed::FILE_NAME);
        let good = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();
        let whole = std::fs::read(&place).unwrap();
        let mut damaged = whole.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 1;
        for bytes in [damaged, whole[..whole.len() - 3].to_vec(), b"junk".to_vec()] {
            std::fs::write(&place, &bytes).unwrap();
            let rebuilt = load_with(canonical(&dir), std::slice::from_ref(&place)).unwrap();
            assert_eq!(rebuilt.weights, WeightsOrigin::Packed(Some(place.clone())));
            assert_eq!(vectors(&rebuilt), vectors(&good));
            // Saved whole again.
            assert_eq!(std::fs::read(&place).unwrap(), whole);
        }
    }

    #[test]
    fn an_unwritable_place_falls_to_the_next() {
        let dir = tiny_model(4);
        // Beside the model, but its "directory" is a file: cannot be written, as a
        // read-only model directory cannot.
        let blocked = dir.path().join(WEIGHTS).join(packed::FILE_NAME);
        let cache = tempfile::tempdir().unwrap();
        let fallback = cache.path().join("packed").join(packed::FILE_NAME);
        let places = [blocked, fallback.clone()];
        let first = load_with(canonical(&dir), &places).unwrap();
        assert_eq!(first.weights, WeightsOrigin::Packed(Some(fallback.clone())));
        let second = load_with(canonical(&dir), &places).unwrap();
        assert_eq!(second.weights, WeightsOrigin::Mapped(fallback));
        assert_eq!(vectors(&first), vectors(&second));
    }

    #[test]
    fn the_places_are_beside_the_model_then_in_the_cache_directory() {
        let places = packed_places(Path::new("/models/minilm"));
        assert_eq!(
            places[0],
            Path::new("/models/minilm").join(packed::FILE_NAME)
        );
        if let Some(cache) = crate::discover::agentmem_cache_dir() {
            assert_eq!(places.len(), 2);
            assert!(places[1].starts_with(cache.join("packed")), "{places:?}");
            // One file per model directory.
            assert_ne!(packed_places(Path::new("/models/other"))[1], places[1]);
        }
    }

    #[test]
    fn the_real_model_gives_the_same_vectors_packed_mapped_and_unsaved() {
        let Some(model) = crate::test_model_dir() else {
            return;
        };
        let model = model.canonicalize().unwrap();
        // The model's directory is left alone: the packed file goes to a temporary place.
        let cache = tempfile::tempdir().unwrap();
        let place = cache.path().join(packed::FILE_NAME);
        let texts = [
            "I'm lactose intolerant",
            "Should I order the cheese platter?",
            "Café crème, s'il vous plaît, and a croissant aux amandes.",
            "我住在北京，每天骑自行车上班。",
            "",
        ];
        let plan = Plan {
            batch_size: 2,
            max_length: 256,
        };
        let embed = |model: &LoadedModel| batch::embed(model, None, &texts, plan).unwrap();
        let unsaved = load_with(model.clone(), &[]).unwrap();
        let packed = load_with(model.clone(), std::slice::from_ref(&place)).unwrap();
        let mapped = load_with(model, std::slice::from_ref(&place)).unwrap();
        assert_eq!(unsaved.weights, WeightsOrigin::Packed(None));
        assert_eq!(packed.weights, WeightsOrigin::Packed(Some(place.clone())));
        assert_eq!(mapped.weights, WeightsOrigin::Mapped(place));
        let expected = embed(&unsaved);
        assert_eq!(expected.len(), texts.len());
        assert_eq!(embed(&packed), expected);
        assert_eq!(embed(&mapped), expected);
    }
}
