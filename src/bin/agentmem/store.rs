//! Opening the stores a `--store` URL names.

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

    /// Says once, on stderr, when recall is by words only: no embedding model is
    /// configured or fetched (and how to fetch one), or one is but this build lacks the
    /// `local-embed` feature that loads it.
    pub fn note_semantic_recall(&self) {
        let configured = agentmemory::embed::locate_model().is_some();
        if let Some(note) = semantic_recall_note(configured, cfg!(feature = "local-embed")) {
            eprintln!("note: {note}");
        }
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

/// The note on semantic recall for a model `configured` (AGENTMEM_EMBED_MODEL set, or the
/// model fetched into the cache directory) in a build that has, or lacks, the local
/// embedder; `None` when recall is semantic.
fn semantic_recall_note(configured: bool, local_embed: bool) -> Option<String> {
    match (configured, local_embed) {
        (true, true) => None,
        (true, false) => Some(
            "a model is present but this build of agentmem lacks the `local-embed` feature, \
             so search matches words only; for semantic recall install with \
             `cargo install agentmemory --locked --features cli,local-embed`"
                .to_owned(),
        ),
        (false, true) => Some(
            "semantic recall is off (search matches words only); to turn it on, run \
             `agentmem model fetch`"
                .to_owned(),
        ),
        (false, false) => Some(
            "semantic recall is off (search matches words only); it needs a build with the \
             `local-embed` feature (`cargo install agentmemory --locked --features \
             cli,local-embed`) and the model (`agentmem model fetch`)"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::semantic_recall_note;

    #[test]
    fn the_note_says_what_is_missing() {
        assert_eq!(semantic_recall_note(true, true), None);
        let lacking = semantic_recall_note(true, false).expect("a note");
        assert!(
            lacking.contains("lacks the `local-embed` feature"),
            "{lacking}"
        );
        assert!(lacking.contains("--features cli,local-embed"), "{lacking}");
        let unset = semantic_recall_note(false, true).expect("a note");
        assert_eq!(unset.matches("agentmem model fetch").count(), 1, "{unset}");
        let neither = semantic_recall_note(false, false).expect("a note");
        assert!(neither.contains("local-embed"), "{neither}");
    }
}
