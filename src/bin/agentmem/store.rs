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
        let parsed: StoreUrl = url
            .parse()
            .map_err(|e| CliError::Usage(format!("--store `{url}`: {e}")))?;
        // Every command may touch any kind of record (chat writes conversations and facts):
        // refuse a URL that would keep one of them only in memory.
        parsed
            .require(&StoreKind::ALL)
            .map_err(|e| CliError::Usage(format!("--store: {e}")))?;
        let container = parsed.open().await.map_err(|e| match e {
            // A misconfigured AGENTMEM_EMBED_MODEL is a usage error naming the directory.
            MemoryError::ModelFiles { .. } => CliError::Usage(e.to_string()),
            MemoryError::Unsupported { .. } => CliError::Usage(format!("--store: {e}")),
            e => CliError::Runtime(format!("cannot open store `{parsed}`: {e}")),
        })?;
        tracing::info!(store = %parsed, "store opened");
        Ok(Self {
            url: url.to_owned(),
            container,
        })
    }

    /// Says once, on stderr, that recall is by words only when no embedding model is
    /// configured, and how to turn semantic recall on.
    pub fn note_semantic_recall(&self) {
        let configured = std::env::var_os(agentmemory::embed::AGENTMEM_EMBED_MODEL)
            .is_some_and(|v| !v.is_empty());
        if !configured {
            eprintln!(
                "note: semantic recall is off (search matches words only); to turn it on: \
                 export {}=\"$(scripts/fetch-model)\"",
                agentmemory::embed::AGENTMEM_EMBED_MODEL
            );
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
