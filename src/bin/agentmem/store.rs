//! Opening the stores a `--store` URL names.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentmemory::stores::{StoreKind, StoreUrl};
use agentmemory::{
    Container, ConversationStore, KvStore, MemoryError, UserMemoryStore, VectorStore,
};

use crate::error::CliError;

/// The stores of one URL, resolved from their container.
pub struct Stores {
    url: String,
    container: Container,
}

impl Stores {
    /// Parses and opens `url`. An unparsable URL, or one that cannot keep every kind of
    /// record durably (or whose backend this build lacks), is a usage error (exit 2) naming
    /// what it cannot do, reported before anything is written; a store that cannot be
    /// opened is a runtime error (exit 1). Both name the URL.
    pub async fn open(url: &str) -> Result<Self, CliError> {
        Self::open_with(url, true).await
    }

    /// [`open`](Self::open) without an embedder (no background backfill), whatever model
    /// is present: the stores as they are.
    pub async fn open_plain(url: &str) -> Result<Self, CliError> {
        Self::open_with(url, false).await
    }

    async fn open_with(url: &str, embedder: bool) -> Result<Self, CliError> {
        let parsed: StoreUrl = url
            .parse()
            .map_err(|e| CliError::Usage(format!("--store `{url}`: {e}")))?;
        // Every command may touch any kind of record (chat writes conversations and facts):
        // refuse a URL that would keep one of them only in memory.
        parsed
            .require(&StoreKind::ALL)
            .map_err(|e| CliError::Usage(format!("--store: {e}")))?;
        let opened = if embedder {
            parsed.open().await
        } else {
            parsed.open_with_embedder(None).await
        };
        let container = opened.map_err(|e| match e {
            // A misconfigured AGENTMEM_EMBED_MODEL is a usage error naming the directory.
            MemoryError::ModelFiles { .. } => CliError::Usage(e.to_string()),
            MemoryError::Unsupported { .. } => CliError::Usage(format!("--store: {e}")),
            // An unknown or malformed URL parameter (`?schema=`, `?pool_size=`, ...).
            MemoryError::UrlParameter { .. } => CliError::Usage(format!("--store: {e}")),
            e => CliError::Runtime(format!("cannot open store `{parsed}`: {e}")),
        })?;
        tracing::info!(store = %parsed, "store opened");
        Ok(Self {
            url: url.to_owned(),
            container,
        })
    }

    /// Says on stderr when recall is by words only because no embedding model is
    /// configured or fetched, and how to fetch one. The note is shown once per cache directory, not on every
    /// command: a marker beside the model directory remembers that it was (where there is
    /// no cache directory, or the marker cannot be written, it shows every time).
    pub fn note_semantic_recall(&self) {
        let configured = agentmemory::embed::locate_model().is_some();
        if let Some(note) = semantic_recall_note(configured) {
            let marker = agentmemory::embed::model_cache_dir().and_then(|dir| note_marker(&dir));
            if first_showing(marker.as_deref()) {
                eprintln!("note: {note}");
            }
        }
    }

    /// The store URL as given (`serve` reads it).
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The container the stores are registered in.
    pub fn container(&self) -> &Container {
        &self.container
    }

    /// The user-facts store.
    pub fn facts(&self) -> Result<Arc<dyn UserMemoryStore>, CliError> {
        self.resolve::<dyn UserMemoryStore>()
    }

    /// The vector store.
    pub fn vectors(&self) -> Result<Arc<dyn VectorStore>, CliError> {
        self.resolve::<dyn VectorStore>()
    }

    /// The conversation log store.
    pub fn conversations(&self) -> Result<Arc<dyn ConversationStore>, CliError> {
        self.resolve::<dyn ConversationStore>()
    }

    /// The key/value store.
    pub fn kv(&self) -> Result<Arc<dyn KvStore>, CliError> {
        self.resolve::<dyn KvStore>()
    }

    fn resolve<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, CliError> {
        self.container
            .resolve::<T>(None)
            .map_err(|e| CliError::Runtime(format!("store `{}`: {e}", self.url)))
    }
}

/// The note on semantic recall when no model is `configured` (AGENTMEM_EMBED_MODEL unset
/// and nothing fetched into the cache directory); `None` when recall is semantic. The
/// binary always has the local embedder (the `cli` feature includes `local-embed`).
fn semantic_recall_note(configured: bool) -> Option<String> {
    (!configured).then(|| {
        "semantic recall is off (search matches words only); to turn it on, run \
         `agentmem model fetch`"
            .to_owned()
    })
}

/// The file that remembers the semantic-recall note was shown, beside the model
/// directory `model_dir` (which may not exist yet: the marker must not make it look like
/// a model is there).
fn note_marker(model_dir: &Path) -> Option<PathBuf> {
    let name = model_dir.file_name()?.to_string_lossy().into_owned();
    Some(model_dir.with_file_name(format!(".{name}.recall-note-shown")))
}

/// Whether the note is shown now: true the first time for `marker` (which it then
/// creates), and always when there is no marker to keep.
fn first_showing(marker: Option<&Path>) -> bool {
    let Some(marker) = marker else {
        return true;
    };
    if marker.exists() {
        return false;
    }
    if let Some(parent) = marker.parent() {
        // Best effort: a cache directory that cannot be written only means the note
        // shows again next time.
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = std::fs::write(marker, b"");
    true
}

#[cfg(test)]
mod tests {
    use super::{first_showing, note_marker, semantic_recall_note};
    use std::path::Path;

    #[test]
    fn the_note_shows_once_per_marker() {
        let dir = tempfile::tempdir().expect("temp dir");
        let model_dir = dir
            .path()
            .join("agentmem")
            .join("models")
            .join("all-minilm-l6-v2");
        let marker = note_marker(&model_dir).expect("a marker");
        assert_eq!(marker.parent(), model_dir.parent());
        assert!(first_showing(Some(&marker)));
        assert!(!first_showing(Some(&marker)));
        assert!(
            !model_dir.exists(),
            "the marker must not create the model directory"
        );
        assert!(first_showing(None));
        assert!(first_showing(None));
        assert!(note_marker(Path::new("/")).is_none());
    }

    #[test]
    fn the_note_names_the_fetch_command_once() {
        assert_eq!(semantic_recall_note(true), None);
        let unset = semantic_recall_note(false).expect("a note");
        assert_eq!(unset.matches("agentmem model fetch").count(), 1, "{unset}");
    }
}
