//! The indexes that keep a long-term search over many users from visiting every user.
//!
//! A search that names its owners (one user in one namespace, or a few of each with
//! `eq`/`in`) reads those owners' facts and listings, as it always could. For the others,
//! two structures are kept in step with every write:
//!
//! - **The fact index.** Every current fact of a namespace is mirrored as a document of
//!   the vector-store namespace [`ids::facts_index_namespace`] (id = the fact's id, text =
//!   its text, metadata = its owner, user and session), written when the fact is added or
//!   superseded and deleted with it. A search with text whose filters do not name its
//!   owners searches that index once per namespace it reaches (its user and session
//!   filters applied by the store), and ranks the facts of the owners found there as a
//!   search of each owner would (relevance, decay and minimum confidence unchanged): its
//!   cost grows with the hits (at most `k` owners per namespace), not with the users. The
//!   index only says where to look: a stale entry costs one search of an owner that finds
//!   nothing.
//! - **The listings.** Every memory's index entry is also kept under its owner
//!   ([`ids::listing_namespace`], owner = [`ids::fact_owner`] of its namespace and user,
//!   for documents as for facts), with registries of the owners of each namespace
//!   ([`ids::owners_registry`]) and of the namespaces ([`NAMESPACES`]). A search without
//!   text reads the listings of the owners its filters name, or else of the owners
//!   registered in the namespaces it reaches: not every memory of the server.
//!
//! Stores written before these indexes existed are indexed once: the first search of a
//! process that finds no marker ([`MIGRATED`] in [`META`]) copies every index entry into
//! its owner's listing and every current fact of the registered fact owners into the
//! fact index, then compares the index entries with what it copied (a memory deleted or
//! edited meanwhile is put right) and writes the marker.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::Utc;
use futures_util::future::try_join_all;
use serde_json::{json, Value};

use agentmemory_core::facts::{FactChange, MemoryFact};
use agentmemory_core::kv::{MemoryEntry, MemoryScope};
use agentmemory_core::vector::{Document, Filter, SearchQuery};

use super::{matches, IndexEntry, Kind, LongTermMemory, Owner, INDEX, OWNERS};
use crate::server::error::ApiError;
use crate::server::ids;
use crate::server::wire::{SearchRequest, TagFilter, WireMemory, WireMemoryResult};

/// The registry of the namespaces holding long-term memories: key = the namespace's
/// [`ids::owners_registry`], content = `{"namespace": …}`.
pub(super) const NAMESPACES: &str = "agentmem.server.ltm-namespaces";

/// Where the marker of an indexed store is kept.
pub(super) const META: &str = "agentmem.server.ltm-meta";

/// The marker's key: the store's memories are in the listings and the fact index.
pub(super) const MIGRATED: &str = "indexes-v1";

/// Owners read at once (their listings, their facts).
pub(super) const AT_ONCE: usize = 16;

/// At most this many owners named by a request's filters (namespaces × users) are read
/// owner by owner; more go through the indexes.
const MAX_NAMED_OWNERS: usize = 256;

/// The owner of a record (its listing) and what that owner stands for.
pub(super) fn place(record: &WireMemory) -> (String, Owner) {
    let owner = ids::fact_owner(record.namespace.as_deref(), record.user_id.as_deref());
    let info = Owner {
        namespace: record.namespace.clone(),
        user_id: record.user_id.clone(),
    };
    (owner, info)
}

/// The values `filter` lets through when it names them (`eq`, `in`); `None` when it lets
/// through values it does not name (no filter, or only `not_eq`/`not_in`).
fn named(filter: Option<&TagFilter>) -> Option<Vec<String>> {
    let filter = filter?;
    let values = match (&filter.eq, &filter.in_) {
        (Some(eq), _) => vec![eq.clone()],
        (None, Some(list)) => list.clone(),
        (None, None) => return None,
    };
    let mut seen = HashSet::new();
    Some(
        values
            .into_iter()
            .filter(|v| filter.matches(Some(v)) && seen.insert(v.clone()))
            .collect(),
    )
}

/// `filter` with the conditions of `tag` on the metadata `key` (absent metadata = no
/// value, as [`TagFilter::matches`] reads it).
fn with_tag(mut filter: Filter, key: &str, tag: Option<&TagFilter>) -> Filter {
    let Some(tag) = tag else {
        return filter;
    };
    if let Some(eq) = &tag.eq {
        filter = filter.eq(key, eq.clone());
    }
    if let Some(any) = &tag.in_ {
        filter = filter.is_in(key, any.iter().map(|v| Value::from(v.clone())));
    }
    if let Some(ne) = &tag.not_eq {
        filter = filter.not(key, ne.clone());
    }
    for none in tag.not_in.iter().flatten() {
        filter = filter.not(key, none.clone());
    }
    filter
}

/// The fact index's document of `fact`, a fact of `owner`.
fn fact_document(fact: &MemoryFact, owner: &str, info: &Owner) -> Document {
    let mut doc = Document::new(fact.text.clone())
        .with_id(fact.id.clone())
        .with_metadata("owner", owner);
    if let Some(user) = &info.user_id {
        doc = doc.with_metadata("user_id", user.clone());
    }
    if let Some(session) = &fact.source.session_id {
        doc = doc.with_metadata("session_id", session.clone());
    }
    doc
}

impl LongTermMemory {
    /// The owners `request`'s filters name, in key order: every pair of the namespaces
    /// and users named, when both are named and there are at most [`MAX_NAMED_OWNERS`].
    fn named_owners(request: &SearchRequest) -> Option<Vec<(String, Owner)>> {
        let namespaces = named(request.namespace.as_ref())?;
        let users = named(request.user_id.as_ref())?;
        if namespaces.len().saturating_mul(users.len()) > MAX_NAMED_OWNERS {
            return None;
        }
        let mut owners: Vec<(String, Owner)> = namespaces
            .iter()
            .flat_map(|ns| {
                users.iter().map(move |user| {
                    let info = Owner {
                        namespace: Some(ns.clone()),
                        user_id: Some(user.clone()),
                    };
                    (ids::fact_owner(Some(ns), Some(user)), info)
                })
            })
            .collect();
        owners.sort_by(|a, b| a.0.cmp(&b.0));
        Some(owners)
    }

    /// The namespaces `request` reaches: those its filter names, else every registered
    /// namespace it lets through.
    async fn namespaces(&self, request: &SearchRequest) -> Result<Vec<Option<String>>, ApiError> {
        if let Some(named) = named(request.namespace.as_ref()) {
            return Ok(named.into_iter().map(Some).collect());
        }
        let filter = request.namespace.clone().unwrap_or_default();
        let mut found = Vec::new();
        for entry in self.kv.list(NAMESPACES).await? {
            let ns = entry
                .content
                .get("namespace")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if filter.matches(ns.as_deref()) {
                found.push(ns);
            }
        }
        Ok(found)
    }

    /// Records where a memory of `owner` lives: its namespace in [`NAMESPACES`], the
    /// owner in the namespace's [`ids::owners_registry`].
    pub(super) async fn register_place(&self, owner: &str, info: &Owner) -> Result<(), ApiError> {
        let registry = ids::owners_registry(info.namespace.as_deref());
        self.register(
            NAMESPACES,
            &registry,
            json!({ "namespace": info.namespace }),
        )
        .await?;
        self.register(&registry, owner, json!(info)).await
    }

    /// Writes index `entries` (key = client id, content = [`IndexEntry`]) into `owner`'s
    /// listing.
    pub(super) async fn list_entries(
        &self,
        owner: &str,
        entries: Vec<MemoryEntry>,
    ) -> Result<(), ApiError> {
        if entries.is_empty() {
            return Ok(());
        }
        self.kv
            .put_many(&ids::listing_namespace(owner), entries)
            .await?;
        Ok(())
    }

    /// Removes the memory `id` from `owner`'s listing.
    pub(super) async fn unlist(&self, owner: &str, id: &str) -> Result<(), ApiError> {
        self.kv.delete(&ids::listing_namespace(owner), id).await?;
        Ok(())
    }

    /// Keeps the fact index in step with `changes` of `owner`'s facts: a fact added or
    /// taking another's place goes in, the one it replaced goes out.
    pub(super) async fn index_fact_changes(
        &self,
        owner: &str,
        info: &Owner,
        changes: &[FactChange],
    ) -> Result<(), ApiError> {
        // fact id → its document, or None to delete; in order, the last change wins
        let mut docs: Vec<(String, Option<Document>)> = Vec::new();
        let mut set = |id: &str, doc: Option<Document>| match docs.iter().position(|(i, _)| i == id)
        {
            Some(at) => docs[at].1 = doc,
            None => docs.push((id.to_owned(), doc)),
        };
        for change in changes {
            match change {
                FactChange::Added { fact } if fact.is_current() => {
                    set(&fact.id, Some(fact_document(fact, owner, info)));
                }
                FactChange::Closed { fact } => set(&fact.id, None),
                FactChange::Superseded { old, new } => {
                    set(&old.id, None);
                    if new.is_current() {
                        set(&new.id, Some(fact_document(new, owner, info)));
                    }
                }
                _ => {}
            }
        }
        let namespace = ids::facts_index_namespace(info.namespace.as_deref());
        let gone: Vec<String> = docs
            .iter()
            .filter(|(_, doc)| doc.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        let kept: Vec<Document> = docs.into_iter().filter_map(|(_, doc)| doc).collect();
        if !gone.is_empty() {
            self.documents.delete(&namespace, &gone).await?;
        }
        if !kept.is_empty() {
            self.documents.upsert_batch(&namespace, kept).await?;
        }
        Ok(())
    }

    /// Removes the fact `fact_id` of `namespace` from the fact index.
    pub(super) async fn unindex_fact(
        &self,
        namespace: Option<&str>,
        fact_id: &str,
    ) -> Result<(), ApiError> {
        self.documents
            .delete(
                &ids::facts_index_namespace(namespace),
                &[fact_id.to_owned()],
            )
            .await?;
        Ok(())
    }

    /// The fact owners a search with text visits, in key order: those its filters name,
    /// else the owners of the best `k` facts of the fact index of each namespace it
    /// reaches.
    pub(super) async fn fact_owners(
        &self,
        request: &SearchRequest,
        k: usize,
    ) -> Result<Vec<(String, Owner)>, ApiError> {
        if let Some(named) = Self::named_owners(request) {
            return Ok(named);
        }
        self.ensure_indexed().await?;
        let filter = with_tag(Filter::new(), "user_id", request.user_id.as_ref());
        let filter = with_tag(filter, "session_id", request.session_id.as_ref());
        let mut query = SearchQuery::new(request.text.clone(), k);
        if !filter.conditions.is_empty() {
            query = query.with_filter(filter);
        }
        let mut seen = HashSet::new();
        let mut owners = Vec::new();
        for ns in self.namespaces(request).await? {
            let index = ids::facts_index_namespace(ns.as_deref());
            for hit in self.documents.search(&index, &query).await? {
                if hit.score <= 0.0 {
                    continue;
                }
                let Some(owner) = hit.metadata.get("owner").and_then(Value::as_str) else {
                    continue;
                };
                if seen.insert(owner.to_owned()) {
                    let user_id = hit
                        .metadata
                        .get("user_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    let info = Owner {
                        namespace: ns.clone(),
                        user_id,
                    };
                    owners.push((owner.to_owned(), info));
                }
            }
        }
        owners.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(owners)
    }

    /// Every live memory matching the filters, newest first (ties by id): a search
    /// without text, read from the listings of the owners it reaches.
    pub(super) async fn list_matching(
        &self,
        request: &SearchRequest,
    ) -> Result<Vec<WireMemoryResult>, ApiError> {
        self.ensure_indexed().await?;
        let owners = match Self::named_owners(request) {
            Some(named) => named.into_iter().map(|(owner, _)| owner).collect(),
            None => self.registered_owners(request).await?,
        };
        let mut found = Vec::new();
        for some in owners.chunks(AT_ONCE) {
            let lists = some.iter().map(|owner| self.list_owner(owner, request));
            found.extend(try_join_all(lists).await?.into_iter().flatten());
        }
        found.sort_by(|a, b| {
            b.memory
                .created_at
                .cmp(&a.memory.created_at)
                .then_with(|| a.memory.id.cmp(&b.memory.id))
        });
        Ok(found)
    }

    /// The owners registered in the namespaces `request` reaches that its user filter
    /// lets through.
    async fn registered_owners(&self, request: &SearchRequest) -> Result<Vec<String>, ApiError> {
        let users = request.user_id.clone().unwrap_or_default();
        let mut owners = Vec::new();
        for ns in self.namespaces(request).await? {
            for entry in self.kv.list(&ids::owners_registry(ns.as_deref())).await? {
                let Ok(info) = serde_json::from_value::<Owner>(entry.content) else {
                    continue;
                };
                if users.matches(info.user_id.as_deref()) {
                    owners.push(entry.key);
                }
            }
        }
        Ok(owners)
    }

    /// The live memories of `owner`'s listing that match `request`: documents as
    /// listed, facts when still current and listed under the id that created them (with
    /// their current text).
    async fn list_owner(
        &self,
        owner: &str,
        request: &SearchRequest,
    ) -> Result<Vec<WireMemoryResult>, ApiError> {
        let mut entries = Vec::new();
        for stored in self.kv.list(&ids::listing_namespace(owner)).await? {
            let Ok(entry) = serde_json::from_value::<IndexEntry>(stored.content) else {
                continue;
            };
            if matches(request, &entry.record) {
                entries.push(entry);
            }
        }
        // fact owner → its current facts by id, read once
        let mut current: HashMap<String, HashMap<String, MemoryFact>> = HashMap::new();
        let mut found = Vec::new();
        for entry in entries {
            let live = match entry.kind {
                Kind::Fact => {
                    if !current.contains_key(&entry.owner) {
                        let facts = self.facts.list(&entry.owner).await?;
                        let by_id = facts.into_iter().map(|f| (f.id.clone(), f)).collect();
                        current.insert(entry.owner.clone(), by_id);
                    }
                    current
                        .get(&entry.owner)
                        .and_then(|facts| facts.get(&entry.target))
                        .filter(|f| {
                            f.source
                                .message_id
                                .as_deref()
                                .is_none_or(|m| m == entry.record.id)
                        })
                        .map(|f| {
                            let mut record = entry.record.clone();
                            record.text.clone_from(&f.text);
                            record
                        })
                }
                Kind::Document => Some(entry.record),
            };
            if let Some(memory) = live {
                if matches(request, &memory) {
                    found.push(WireMemoryResult { memory, dist: 0.0 });
                }
            }
        }
        Ok(found)
    }

    /// Indexes the memories stored before the listings and the fact index existed, once
    /// per store (see the module's documentation); later calls in this process return at
    /// once. The work runs in a task of its own: a request that stops waiting for it (a
    /// timeout, a client gone) does not stop it.
    pub(super) async fn ensure_indexed(&self) -> Result<(), ApiError> {
        if self.indexed.initialized() {
            return Ok(());
        }
        let this = self.clone();
        let indexing = tokio::spawn(async move {
            this.indexed
                .get_or_try_init(|| this.index_older_memories())
                .await
                .map(|_| ())
        });
        indexing.await.map_err(|e| {
            ApiError::Store(agentmemory_core::MemoryError::store(
                "server",
                "index long-term memory",
                e,
            ))
        })?
    }

    /// Indexes the store's memories unless its marker says they are.
    async fn index_older_memories(&self) -> Result<(), ApiError> {
        if self.kv.get(META, MIGRATED).await?.is_none() {
            let started = std::time::Instant::now();
            self.migrate().await?;
            let marker = json!({ "at": Utc::now() });
            self.kv
                .put(
                    META,
                    MemoryEntry::new(MemoryScope::LongTerm, MIGRATED, marker),
                )
                .await?;
            tracing::info!(
                seconds = started.elapsed().as_secs_f64(),
                "long-term memory: the store is indexed"
            );
        }
        Ok(())
    }

    /// Puts the current facts of `owner` in the fact index; how many.
    async fn index_facts_of(&self, owner: &str, info: &Owner) -> Result<usize, ApiError> {
        self.register_place(owner, info).await?;
        let docs: Vec<Document> = self
            .facts
            .list(owner)
            .await?
            .iter()
            .map(|fact| fact_document(fact, owner, info))
            .collect();
        let count = docs.len();
        if count > 0 {
            let namespace = ids::facts_index_namespace(info.namespace.as_deref());
            self.documents.upsert_batch(&namespace, docs).await?;
        }
        Ok(count)
    }

    async fn migrate(&self) -> Result<(), ApiError> {
        // the listings, from the index of client ids
        let mut copied: HashMap<String, (String, Value)> = HashMap::new();
        let mut by_owner: BTreeMap<String, (Owner, Vec<MemoryEntry>)> = BTreeMap::new();
        for stored in self.kv.list(INDEX).await? {
            let Ok(entry) = serde_json::from_value::<IndexEntry>(stored.content.clone()) else {
                continue;
            };
            let (owner, info) = place(&entry.record);
            copied.insert(stored.key.clone(), (owner.clone(), stored.content.clone()));
            let listed = MemoryEntry::new(MemoryScope::LongTerm, &stored.key, stored.content);
            by_owner
                .entry(owner)
                .or_insert_with(|| (info, Vec::new()))
                .1
                .push(listed);
        }
        let listed = copied.len();
        let by_owner: Vec<_> = by_owner.into_iter().collect();
        for some in by_owner.chunks(AT_ONCE) {
            let lists = some.iter().map(|(owner, (info, entries))| async move {
                self.register_place(owner, info).await?;
                self.list_entries(owner, entries.clone()).await
            });
            try_join_all(lists).await?;
        }
        // the fact index, from the registry of fact owners
        let mut owners = Vec::new();
        for stored in self.kv.list(OWNERS).await? {
            if let Ok(info) = serde_json::from_value::<Owner>(stored.content) {
                owners.push((stored.key, info));
            }
        }
        let mut facts = 0;
        for some in owners.chunks(AT_ONCE) {
            let indexed = some
                .iter()
                .map(|(owner, info)| self.index_facts_of(owner, info));
            facts += try_join_all(indexed).await?.into_iter().sum::<usize>();
        }
        // memories deleted or edited while they were copied: every write changes the
        // index entry before the listing, so what the index holds now is right
        let now: HashMap<String, Value> = self
            .kv
            .list(INDEX)
            .await?
            .into_iter()
            .map(|e| (e.key, e.content))
            .collect();
        for (id, (owner, content)) in copied {
            match now.get(&id) {
                Some(current) if *current == content => {}
                Some(current) => {
                    let Ok(entry) = serde_json::from_value::<IndexEntry>(current.clone()) else {
                        continue;
                    };
                    let (moved_to, info) = place(&entry.record);
                    if moved_to != owner {
                        self.unlist(&owner, &id).await?;
                    }
                    self.register_place(&moved_to, &info).await?;
                    let entry = MemoryEntry::new(MemoryScope::LongTerm, &id, current.clone());
                    self.list_entries(&moved_to, vec![entry]).await?;
                }
                None => self.unlist(&owner, &id).await?,
            }
        }
        tracing::info!(
            memories = listed,
            facts,
            "long-term memory: the memories stored before the listings and the fact index are indexed"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests;
