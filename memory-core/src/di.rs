//! [`Container`]: dependency injection by `(type, token)`.
//!
//! Stores, models, extractors and summarisers are registered as shared trait objects
//! under string tokens. A session names the token it wants (`store = "user_memory"`),
//! or names none and gets the only provider of that type (or the one marked default).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::conversation::ConversationStore;
use crate::episodes::EpisodeStore;
use crate::error::{MemoryError, Result};
use crate::extract::FactExtractor;
use crate::facts::UserMemoryStore;
use crate::kv::KvStore;
use crate::model::ChatModel;
use crate::summarize::Summarizer;
use crate::vector::VectorStore;

/// The tokens the default stores are registered under.
pub mod tokens {
    /// The default `UserMemoryStore`.
    pub const USER_MEMORY: &str = "user_memory";
    /// The default `ConversationStore`.
    pub const CONVERSATIONS: &str = "conversations";
    /// The default `VectorStore`.
    pub const VECTORS: &str = "vectors";
    /// The default `KvStore`.
    pub const KV: &str = "kv";
    /// The default `FactExtractor`.
    pub const EXTRACTOR: &str = "extractor";
    /// The default `Summarizer`.
    pub const SUMMARIZER: &str = "summarizer";
}

struct Slot {
    type_name: &'static str,
    providers: BTreeMap<String, Box<dyn Any + Send + Sync>>,
    default: Option<String>,
}

/// A registry of shared providers keyed by `(type, token)`. Cheap to clone: clones share
/// one registry.
///
/// ```
/// use std::sync::Arc;
/// use agentmemory_core::di::Container;
/// use agentmemory_core::{InMemoryKvStore, KvStore, MemoryError};
///
/// let container = Container::new();
/// container.register_kv("scratch", Arc::new(InMemoryKvStore::new()));
///
/// // by token, or without one when there is a single candidate
/// assert!(container.resolve::<dyn KvStore>(Some("scratch")).is_ok());
/// assert!(container.resolve::<dyn KvStore>(None).is_ok());
///
/// let err = container.resolve::<dyn KvStore>(Some("typo")).err().unwrap();
/// assert!(err.to_string().contains("`typo`") && err.to_string().contains("scratch"));
///
/// container.register_kv("other", Arc::new(InMemoryKvStore::new()));
/// assert!(matches!(
///     container.resolve::<dyn KvStore>(None),
///     Err(MemoryError::AmbiguousProvider { .. })
/// ));
/// ```
#[derive(Clone, Default)]
pub struct Container {
    slots: Arc<RwLock<HashMap<TypeId, Slot>>>,
}

impl std::fmt::Debug for Container {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let slots = self.slots.read();
        let mut map = f.debug_map();
        for slot in slots.values() {
            map.entry(&slot.type_name, &slot.providers.keys().collect::<Vec<_>>());
        }
        map.finish()
    }
}

/// A short, readable name for a provider type (`"dyn UserMemoryStore"`).
fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    match full.rsplit_once("::") {
        Some((head, tail)) if head.starts_with("dyn ") => {
            // "dyn agentmemory_core::facts::UserMemoryStore" -> "UserMemoryStore"
            tail
        }
        Some((_, tail)) => tail,
        None => full,
    }
}

impl Container {
    /// An empty container.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `provider` as a `T` under `token`, replacing any provider of that
    /// type already under it. Returns `self` for chaining.
    pub fn register<T>(&self, token: impl Into<String>, provider: Arc<T>) -> &Self
    where
        T: ?Sized + Send + Sync + 'static,
    {
        let token = token.into();
        let mut slots = self.slots.write();
        let slot = slots.entry(TypeId::of::<T>()).or_insert_with(|| Slot {
            type_name: short_type_name::<T>(),
            providers: BTreeMap::new(),
            default: None,
        });
        if slot
            .providers
            .insert(token.clone(), Box::new(provider))
            .is_some()
        {
            tracing::debug!(type_name = slot.type_name, %token, "provider replaced");
        }
        self
    }

    /// Registers `provider` under `token` and makes it the default of its type.
    pub fn register_default<T>(&self, token: impl Into<String>, provider: Arc<T>) -> &Self
    where
        T: ?Sized + Send + Sync + 'static,
    {
        let token = token.into();
        self.register::<T>(token.clone(), provider);
        if let Some(slot) = self.slots.write().get_mut(&TypeId::of::<T>()) {
            slot.default = Some(token);
        }
        self
    }

    /// Makes the provider under `token` the default of type `T`.
    pub fn set_default<T>(&self, token: &str) -> Result<()>
    where
        T: ?Sized + Send + Sync + 'static,
    {
        let mut slots = self.slots.write();
        match slots.get_mut(&TypeId::of::<T>()) {
            Some(slot) if slot.providers.contains_key(token) => {
                slot.default = Some(token.to_owned());
                Ok(())
            }
            other => Err(MemoryError::UnknownToken {
                type_name: short_type_name::<T>(),
                token: token.to_owned(),
                available: other
                    .map(|s| s.providers.keys().cloned().collect())
                    .unwrap_or_default(),
            }),
        }
    }

    /// The provider of type `T` under `token`; with no token, the default of that type,
    /// or its only provider.
    ///
    /// Errors: [`MemoryError::UnknownToken`] (naming the token, the type and the tokens
    /// that exist), [`MemoryError::NoProvider`], [`MemoryError::AmbiguousProvider`]
    /// (listing the candidates).
    pub fn resolve<T>(&self, token: Option<&str>) -> Result<Arc<T>>
    where
        T: ?Sized + Send + Sync + 'static,
    {
        let slots = self.slots.read();
        let type_name = short_type_name::<T>();
        let slot = slots.get(&TypeId::of::<T>());
        let chosen = match (token, slot) {
            (Some(token), slot) => slot.and_then(|s| s.providers.get(token)).ok_or_else(|| {
                MemoryError::UnknownToken {
                    type_name,
                    token: token.to_owned(),
                    available: slot
                        .map(|s| s.providers.keys().cloned().collect())
                        .unwrap_or_default(),
                }
            })?,
            (None, None) => return Err(MemoryError::NoProvider { type_name }),
            (None, Some(slot)) => match (&slot.default, slot.providers.len()) {
                (Some(default), _) => slot
                    .providers
                    .get(default)
                    .ok_or(MemoryError::NoProvider { type_name })?,
                (None, 0) => return Err(MemoryError::NoProvider { type_name }),
                (None, 1) => slot
                    .providers
                    .values()
                    .next()
                    .ok_or(MemoryError::NoProvider { type_name })?,
                (None, _) => {
                    return Err(MemoryError::AmbiguousProvider {
                        type_name,
                        tokens: slot.providers.keys().cloned().collect(),
                    })
                }
            },
        };
        chosen
            .downcast_ref::<Arc<T>>()
            .cloned()
            .ok_or(MemoryError::NoProvider { type_name })
    }

    /// Like [`resolve`](Self::resolve) but `Ok(None)` when no provider of `T` exists at all
    /// (a missing *named* token is still an error).
    pub fn resolve_optional<T>(&self, token: Option<&str>) -> Result<Option<Arc<T>>>
    where
        T: ?Sized + Send + Sync + 'static,
    {
        match self.resolve::<T>(token) {
            Ok(p) => Ok(Some(p)),
            Err(MemoryError::NoProvider { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The tokens registered for type `T`, sorted.
    pub fn tokens<T>(&self) -> Vec<String>
    where
        T: ?Sized + Send + Sync + 'static,
    {
        self.slots
            .read()
            .get(&TypeId::of::<T>())
            .map(|s| s.providers.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether type `T` has a provider marked default.
    pub fn has_default<T>(&self) -> bool
    where
        T: ?Sized + Send + Sync + 'static,
    {
        self.slots
            .read()
            .get(&TypeId::of::<T>())
            .is_some_and(|s| s.default.is_some())
    }

    /// Registers a user-fact store.
    pub fn register_user_memory(
        &self,
        token: impl Into<String>,
        store: Arc<dyn UserMemoryStore>,
    ) -> &Self {
        self.register::<dyn UserMemoryStore>(token, store)
    }

    /// Registers a conversation log store.
    pub fn register_conversations(
        &self,
        token: impl Into<String>,
        store: Arc<dyn ConversationStore>,
    ) -> &Self {
        self.register::<dyn ConversationStore>(token, store)
    }

    /// Registers a vector store.
    pub fn register_vectors(&self, token: impl Into<String>, store: Arc<dyn VectorStore>) -> &Self {
        self.register::<dyn VectorStore>(token, store)
    }

    /// Registers an episode store (where remembering agents keep and recall what was
    /// said; see [`episodes`](crate::episodes)).
    pub fn register_episodes(
        &self,
        token: impl Into<String>,
        store: Arc<dyn EpisodeStore>,
    ) -> &Self {
        self.register::<dyn EpisodeStore>(token, store)
    }

    /// Registers a key/value store.
    pub fn register_kv(&self, token: impl Into<String>, store: Arc<dyn KvStore>) -> &Self {
        self.register::<dyn KvStore>(token, store)
    }

    /// Registers a chat model under its name (the name agents use in `Agent::model`).
    pub fn register_model(&self, name: impl Into<String>, model: Arc<dyn ChatModel>) -> &Self {
        self.register::<dyn ChatModel>(name, model)
    }

    /// Registers a fact extractor.
    pub fn register_extractor(
        &self,
        token: impl Into<String>,
        extractor: Arc<dyn FactExtractor>,
    ) -> &Self {
        self.register::<dyn FactExtractor>(token, extractor)
    }

    /// Registers a summariser.
    pub fn register_summarizer(
        &self,
        token: impl Into<String>,
        summarizer: Arc<dyn Summarizer>,
    ) -> &Self {
        self.register::<dyn Summarizer>(token, summarizer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::InMemoryKvStore;

    #[test]
    fn errors_name_token_type_and_candidates() {
        let c = Container::new();
        let err = c.resolve::<dyn KvStore>(None).err().unwrap();
        assert_eq!(err.to_string(), "no KvStore is registered in the container");

        c.register_kv("a", Arc::new(InMemoryKvStore::new()));
        c.register_kv("b", Arc::new(InMemoryKvStore::new()));
        let err = c.resolve::<dyn KvStore>(Some("c")).err().unwrap();
        assert_eq!(
            err.to_string(),
            "no KvStore is registered under the token `c` (registered: a, b)"
        );
        let err = c.resolve::<dyn KvStore>(None).err().unwrap();
        assert!(err.to_string().contains("(a, b)"), "{err}");

        c.set_default::<dyn KvStore>("b").unwrap();
        let b = c.resolve::<dyn KvStore>(None).unwrap();
        assert!(Arc::ptr_eq(
            &b,
            &c.resolve::<dyn KvStore>(Some("b")).unwrap()
        ));
        assert!(c.set_default::<dyn KvStore>("zzz").is_err());
    }

    #[test]
    fn clones_share_the_registry_and_types_are_separate() {
        let c = Container::new();
        let clone = c.clone();
        clone.register_kv("kv", Arc::new(InMemoryKvStore::new()));
        assert_eq!(c.tokens::<dyn KvStore>(), ["kv"]);
        // the same token under another type is another provider
        assert!(c.resolve::<dyn UserMemoryStore>(Some("kv")).is_err());
        assert!(c
            .resolve_optional::<dyn UserMemoryStore>(None)
            .unwrap()
            .is_none());
        assert!(c
            .resolve_optional::<dyn UserMemoryStore>(Some("x"))
            .is_err());
    }
}
