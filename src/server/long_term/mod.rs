//! Long-term memory of the REST API over agentmem's stores.
//!
//! # Mapping
//!
//! | reference API | agentmem |
//! |---|---|
//! | `memory_type: semantic` | a fact in the [`UserMemoryStore`], owner [`ids::fact_owner`]`(namespace, user_id)`; reconciled: the same fact again reinforces, a contradicting one (same single-valued attribute, e.g. where the user lives) supersedes and the old one is kept as history |
//! | `memory_type: episodic` / `message` | a document in the [`VectorStore`], namespace [`ids::documents_namespace`]`(namespace)`, id = the client's id, metadata = the record's other fields |
//! | the client's memory id | an index entry in the [`KvStore`] (namespace `agentmem.server.ltm-index`) → where the memory lives; a fact also carries the id of the record that created it in `source.message_id` |
//! | search over users and namespaces | a fact index (every current fact of a namespace mirrored in one [`VectorStore`] namespace) and per-owner listings in the [`KvStore`], with registries of the namespaces and of their owners (the `index` module) |
//!
//! The attribute of a semantic memory (what makes contradictions detectable) is read
//! from its text by agentmem's [`RuleExtractor`]; third-person texts ("User lives in
//! Berlin") are read as the user's own words ("I live in Berlin").

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::OnceCell;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use agentmemory_core::facts::{FactCandidate, FactSource, MemoryFact, UserMemoryStore};
use agentmemory_core::kv::{KvStore, MemoryEntry, MemoryScope};
use agentmemory_core::vector::{Document, SearchQuery, VectorStore};
use agentmemory_core::RuleExtractor;
use futures_util::future::try_join_all;

use super::error::ApiError;
use super::ids;
use super::wire::{MemoryType, SearchRequest, SearchResults, WireMemory, WireMemoryResult};

mod index;

use index::place;

const INDEX: &str = "agentmem.server.ltm-index";
const OWNERS: &str = "agentmem.server.ltm-owners";
const DOC_NAMESPACES: &str = "agentmem.server.ltm-docns";

/// Registry entries remembered as stored, at most (then forgotten, and read again).
const MAX_REGISTERED: usize = 100_000;

/// Confidence given to a semantic memory a client states directly.
const STATED_CONFIDENCE: f32 = 0.9;

/// Where one client memory id lives.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IndexEntry {
    /// `fact` or `document`.
    kind: Kind,
    /// Fact owner or document namespace.
    owner: String,
    /// Fact id or document id.
    target: String,
    /// The record as the client sent it, with server timestamps.
    record: WireMemory,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Fact,
    Document,
}

/// A fact owner: which namespace and user it stands for.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Owner {
    namespace: Option<String>,
    user_id: Option<String>,
}

/// What creating one memory did.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    /// The client's id.
    pub id: String,
    /// `added`, `reinforced`, `superseded`, `ignored` (facts) or `stored` (documents).
    pub change: &'static str,
}

/// Long-term memory over a user-memory store, a vector store and a key/value store.
#[derive(Clone)]
pub struct LongTermMemory {
    facts: Arc<dyn UserMemoryStore>,
    documents: Arc<dyn VectorStore>,
    kv: Arc<dyn KvStore>,
    enabled: bool,
    /// Registry entries (fact owners, document namespaces) known to be stored.
    registered: Arc<Mutex<HashSet<(String, String)>>>,
    /// Set once the store's memories are known to be in the listings and the fact index.
    indexed: Arc<OnceCell<()>>,
}

impl LongTermMemory {
    /// Long-term memory over these stores.
    pub fn new(
        facts: Arc<dyn UserMemoryStore>,
        documents: Arc<dyn VectorStore>,
        kv: Arc<dyn KvStore>,
    ) -> Self {
        Self {
            facts,
            documents,
            kv,
            enabled: true,
            registered: Arc::new(Mutex::new(HashSet::new())),
            indexed: Arc::new(OnceCell::new()),
        }
    }

    /// Turns long-term memory on or off (the reference server's `LONG_TERM_MEMORY`): off,
    /// every operation answers 400 "Long-term memory is disabled".
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = on;
        self
    }

    /// Whether long-term memory is on.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    fn check_enabled(&self) -> Result<(), ApiError> {
        if self.enabled {
            Ok(())
        } else {
            Err(ApiError::BadRequest("Long-term memory is disabled".into()))
        }
    }

    /// Checks a record before anything is written: non-empty text, sane ids.
    pub fn validate(record: &WireMemory) -> Result<(), ApiError> {
        if record.text.trim().is_empty() {
            return Err(ApiError::BadRequest("Memory text cannot be empty".into()));
        }
        ids::check("id", &record.id)?;
        ids::check_opt("session_id", record.session_id.as_deref())?;
        ids::check_opt("user_id", record.user_id.as_deref())?;
        ids::check_opt("namespace", record.namespace.as_deref())?;
        Ok(())
    }

    /// Stores `records` (all validated first: one bad record stores nothing).
    pub async fn create(&self, records: Vec<WireMemory>) -> Result<Vec<Created>, ApiError> {
        self.check_enabled()?;
        for record in &records {
            Self::validate(record)?;
        }
        let mut created = Vec::with_capacity(records.len());
        for record in records {
            created.push(self.store(record, None).await?);
        }
        Ok(created)
    }

    /// Stores `semantic` records extracted by agentmem's extractor, each reconciled as
    /// its candidate (its attribute and value as the extractor read them) instead of as
    /// its text reads, in order: per owner, the facts are one
    /// [`upsert_many`](UserMemoryStore::upsert_many) and their index entries one
    /// [`put_many`](KvStore::put_many), however many there are. The records' ids are the
    /// extractor's fresh ULIDs, so none is looked up as a client's id to overwrite.
    pub async fn create_extracted_many(
        &self,
        items: Vec<(WireMemory, FactCandidate)>,
    ) -> Result<Vec<Created>, ApiError> {
        self.check_enabled()?;
        for (record, _) in &items {
            Self::validate(record)?;
            if record.memory_type != MemoryType::Semantic {
                return Err(ApiError::BadRequest(
                    "an extracted memory must be semantic".into(),
                ));
            }
        }
        let now = Utc::now();
        type Group = (String, Owner, Vec<WireMemory>, Vec<FactCandidate>);
        let mut groups: Vec<Group> = Vec::new();
        for (mut record, mut candidate) in items {
            record.persisted_at = Some(now);
            record.updated_at = now;
            // worded as the record, as a stated memory is
            candidate.text = record.text.trim().to_owned();
            candidate.source = FactSource {
                session_id: record.session_id.clone(),
                message_id: Some(record.id.clone()),
            };
            let owner = ids::fact_owner(record.namespace.as_deref(), record.user_id.as_deref());
            let at = match groups.iter().position(|(o, ..)| *o == owner) {
                Some(at) => at,
                None => {
                    let info = Owner {
                        namespace: record.namespace.clone(),
                        user_id: record.user_id.clone(),
                    };
                    groups.push((owner, info, Vec::new(), Vec::new()));
                    groups.len() - 1
                }
            };
            groups[at].2.push(record);
            groups[at].3.push(candidate);
        }
        let mut created = Vec::new();
        for (owner, info, records, candidates) in groups {
            self.register(OWNERS, &owner, json!(info)).await?;
            self.register_place(&owner, &info).await?;
            let changes = self.facts.upsert_many(&owner, candidates).await?;
            self.index_fact_changes(&owner, &info, &changes).await?;
            let mut entries = Vec::with_capacity(records.len());
            for (record, change) in records.into_iter().zip(changes) {
                let kind = change.kind();
                let id = record.id.clone();
                if let Some(fact) = change.current() {
                    let entry = IndexEntry {
                        kind: Kind::Fact,
                        owner: owner.clone(),
                        target: fact.id.clone(),
                        record,
                    };
                    let content = serde_json::to_value(&entry).map_err(internal)?;
                    entries.push(MemoryEntry::new(MemoryScope::LongTerm, &id, content));
                }
                created.push(Created { id, change: kind });
            }
            self.kv.put_many(INDEX, entries.clone()).await?;
            self.list_entries(&owner, entries).await?;
        }
        Ok(created)
    }

    async fn store(
        &self,
        mut record: WireMemory,
        extracted: Option<FactCandidate>,
    ) -> Result<Created, ApiError> {
        let now = Utc::now();
        // an id the client reuses overwrites what it named
        let old = self.entry(&record.id).await?;
        if let Some(old) = &old {
            self.remove_target(old).await?;
            record.created_at = old.record.created_at;
        }
        record.persisted_at = Some(now);
        record.updated_at = now;
        let ns = record.namespace.clone();
        let (owner, info) = place(&record);
        self.register_place(&owner, &info).await?;
        let (entry, change) = match record.memory_type {
            MemoryType::Semantic => {
                self.register(OWNERS, &owner, json!(info)).await?;
                let candidate = match extracted {
                    Some(mut c) => {
                        // worded as the record, as a stated memory is
                        c.text = record.text.trim().to_owned();
                        c.source = FactSource {
                            session_id: record.session_id.clone(),
                            message_id: Some(record.id.clone()),
                        };
                        c
                    }
                    None => candidate(&record),
                };
                let change = self.facts.upsert(&owner, candidate).await?;
                self.index_fact_changes(&owner, &info, std::slice::from_ref(&change))
                    .await?;
                let kind = change.kind();
                let Some(fact) = change.current() else {
                    return Ok(Created {
                        id: record.id,
                        change: kind,
                    });
                };
                let entry = IndexEntry {
                    kind: Kind::Fact,
                    owner: owner.clone(),
                    target: fact.id.clone(),
                    record,
                };
                (entry, kind)
            }
            MemoryType::Episodic | MemoryType::Message => {
                let namespace = ids::documents_namespace(ns.as_deref());
                self.register(DOC_NAMESPACES, &namespace, json!({ "namespace": ns }))
                    .await?;
                self.documents.upsert(&namespace, document(&record)).await?;
                let entry = IndexEntry {
                    kind: Kind::Document,
                    owner: namespace,
                    target: record.id.clone(),
                    record,
                };
                (entry, "stored")
            }
        };
        let id = entry.record.id.clone();
        let content = serde_json::to_value(&entry).map_err(internal)?;
        let listed = MemoryEntry::new(MemoryScope::LongTerm, &id, content);
        // the index entry first, then the listings (what the indexing of an older store
        // relies on to put right a memory edited while it copies)
        self.kv.put(INDEX, listed.clone()).await?;
        if let Some(old) = &old {
            let (was, _) = place(&old.record);
            if was != owner {
                self.unlist(&was, &id).await?;
            }
        }
        self.list_entries(&owner, vec![listed]).await?;
        Ok(Created { id, change })
    }

    /// Records `key` in the registry `namespace` unless it is there. Registries only
    /// grow (nothing deletes from them), so a key this process saw there is not read again.
    async fn register(&self, namespace: &str, key: &str, content: Value) -> Result<(), ApiError> {
        let seen = (namespace.to_owned(), key.to_owned());
        if self.registered.lock().contains(&seen) {
            return Ok(());
        }
        if self.kv.get(namespace, key).await?.is_none() {
            self.kv
                .put(
                    namespace,
                    MemoryEntry::new(MemoryScope::LongTerm, key, content),
                )
                .await?;
        }
        let mut registered = self.registered.lock();
        if registered.len() >= MAX_REGISTERED {
            registered.clear();
        }
        registered.insert(seen);
        Ok(())
    }

    async fn entry(&self, id: &str) -> Result<Option<IndexEntry>, ApiError> {
        let Some(stored) = self.kv.get(INDEX, id).await? else {
            return Ok(None);
        };
        serde_json::from_value(stored.content)
            .map(Some)
            .map_err(internal)
    }

    async fn remove_target(&self, entry: &IndexEntry) -> Result<(), ApiError> {
        match entry.kind {
            Kind::Fact => {
                // a reinforced fact may be shared by several ids: delete it only with its creator
                let fact = self.facts.get(&entry.owner, &entry.target).await?;
                let created_it = fact.as_ref().is_some_and(|f| {
                    f.source
                        .message_id
                        .as_deref()
                        .is_none_or(|m| m == entry.record.id)
                });
                if created_it {
                    self.facts.delete(&entry.owner, &entry.target).await?;
                    self.unindex_fact(entry.record.namespace.as_deref(), &entry.target)
                        .await?;
                }
            }
            Kind::Document => {
                self.documents
                    .delete(&entry.owner, std::slice::from_ref(&entry.target))
                    .await?;
            }
        }
        Ok(())
    }

    /// The memory `id` as it is now; `None` when unknown or deleted.
    pub async fn get(&self, id: &str) -> Result<Option<WireMemory>, ApiError> {
        self.check_enabled()?;
        let Some(entry) = self.entry(id).await? else {
            return Ok(None);
        };
        match entry.kind {
            Kind::Fact => {
                let Some(fact) = self.facts.get(&entry.owner, &entry.target).await? else {
                    return Ok(None);
                };
                let mut record = entry.record;
                record.text = fact.text;
                record.topics = non_empty(fact.topics);
                record.entities = non_empty(fact.entities);
                record.updated_at = fact.last_reinforced_at.max(record.updated_at);
                Ok(Some(record))
            }
            Kind::Document => {
                let exists = self
                    .documents
                    .get(&entry.owner, &entry.target)
                    .await?
                    .is_some();
                Ok(exists.then_some(entry.record))
            }
        }
    }

    /// Applies `updates` (a JSON object of record fields) to memory `id`; the edited
    /// memory, or `None` when unknown.
    pub async fn edit(&self, id: &str, updates: Value) -> Result<Option<WireMemory>, ApiError> {
        let Value::Object(updates) = updates else {
            return Err(ApiError::unprocessable("body", "Input should be an object"));
        };
        let Some(current) = self.get(id).await? else {
            return Ok(None);
        };
        let mut merged = serde_json::to_value(&current).map_err(internal)?;
        for (key, value) in updates {
            if key == "id" {
                continue;
            }
            merged[key] = value;
        }
        let edited: WireMemory = serde_json::from_value(merged)
            .map_err(|e| ApiError::unprocessable("body", e.to_string()))?;
        Self::validate(&edited)?;
        self.store(edited, None).await?;
        self.get(id).await
    }

    /// Deletes the memories `ids`; how many existed.
    pub async fn delete(&self, ids: &[String]) -> Result<usize, ApiError> {
        self.check_enabled()?;
        let mut deleted = 0;
        for id in ids {
            if let Some(entry) = self.entry(id).await? {
                self.remove_target(&entry).await?;
                self.kv.delete(INDEX, id).await?;
                self.unlist(&place(&entry.record).0, id).await?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Searches memories matching `request`'s filters, ranked by relevance to its text.
    ///
    /// With text, only memories that match it are returned: a fact or document of
    /// relevance zero (no word in common and, with an embedder, no likeness) is left out
    /// rather than ranked last at distance 1.
    pub async fn search(&self, request: &SearchRequest) -> Result<SearchResults, ApiError> {
        self.check_enabled()?;
        let limit = request.limit.clamp(1, 1000);
        let wanted = request.offset.saturating_add(limit);
        let mut hits = if request.text.trim().is_empty() {
            self.list_matching(request).await?
        } else {
            let mut hits = Vec::new();
            let types = request.memory_type.clone().unwrap_or_default();
            if types.matches(Some("semantic")) {
                self.search_facts(request, wanted, &mut hits).await?;
            }
            if types.matches(Some("episodic")) || types.matches(Some("message")) {
                self.search_documents(request, wanted, &mut hits).await?;
            }
            hits.sort_by(|a, b| a.dist.total_cmp(&b.dist));
            hits
        };
        if let Some(threshold) = request.distance_threshold {
            hits.retain(|h| h.dist <= threshold);
        }
        let total = hits.len();
        let memories: Vec<_> = hits.into_iter().skip(request.offset).take(limit).collect();
        let next_offset = (total > wanted).then_some(wanted);
        Ok(SearchResults {
            memories,
            total,
            next_offset,
        })
    }

    async fn search_facts(
        &self,
        request: &SearchRequest,
        wanted: usize,
        hits: &mut Vec<WireMemoryResult>,
    ) -> Result<(), ApiError> {
        let k = wanted.saturating_mul(4).max(50);
        let owners = self.fact_owners(request, k).await?;
        let mut found = Vec::with_capacity(owners.len());
        for some in owners.chunks(index::AT_ONCE) {
            let searches = some
                .iter()
                .map(|(owner, _)| self.facts.search(owner, &request.text, k));
            found.extend(try_join_all(searches).await?);
        }
        for ((_, info), scored) in owners.iter().zip(found) {
            for scored in scored {
                if scored.relevance <= 0.0 {
                    continue;
                }
                let memory = fact_record(scored.fact, info);
                if matches(request, &memory) {
                    hits.push(WireMemoryResult {
                        memory,
                        dist: 1.0 - scored.relevance.clamp(0.0, 1.0),
                    });
                }
            }
        }
        Ok(())
    }

    async fn search_documents(
        &self,
        request: &SearchRequest,
        wanted: usize,
        hits: &mut Vec<WireMemoryResult>,
    ) -> Result<(), ApiError> {
        let ns_filter = request.namespace.clone().unwrap_or_default();
        let k = wanted.saturating_mul(4).max(50);
        for entry in self.kv.list(DOC_NAMESPACES).await? {
            let ns = entry.content.get("namespace").and_then(Value::as_str);
            if !ns_filter.matches(ns) {
                continue;
            }
            let query = SearchQuery::new(request.text.clone(), k);
            for hit in self.documents.search(&entry.key, &query).await? {
                if hit.score <= 0.0 {
                    continue;
                }
                let Some(record) = hit.metadata.get("record") else {
                    continue;
                };
                let Ok(memory) = serde_json::from_value::<WireMemory>(record.clone()) else {
                    continue;
                };
                if matches(request, &memory) {
                    hits.push(WireMemoryResult {
                        memory,
                        dist: 1.0 - hit.score.clamp(0.0, 1.0),
                    });
                }
            }
        }
        Ok(())
    }
}

fn matches(request: &SearchRequest, memory: &WireMemory) -> bool {
    let tag = |f: &Option<super::wire::TagFilter>, v: Option<&str>| {
        f.as_ref().is_none_or(|f| f.matches(v))
    };
    let set = |f: &Option<super::wire::SetFilter>, v: &Option<Vec<String>>| {
        f.as_ref()
            .is_none_or(|f| f.matches(v.as_deref().unwrap_or(&[])))
    };
    let date = |f: &Option<super::wire::DateFilter>, v: Option<DateTime<Utc>>| {
        f.as_ref().is_none_or(|f| f.matches(v))
    };
    tag(&request.session_id, memory.session_id.as_deref())
        && tag(&request.namespace, memory.namespace.as_deref())
        && tag(&request.user_id, memory.user_id.as_deref())
        && tag(&request.memory_type, Some(memory.memory_type.as_str()))
        && set(&request.topics, &memory.topics)
        && set(&request.entities, &memory.entities)
        && date(&request.created_at, Some(memory.created_at))
        && date(&request.last_accessed, Some(memory.last_accessed))
        && date(&request.event_date, memory.event_date)
}

fn non_empty(values: Vec<String>) -> Option<Vec<String>> {
    (!values.is_empty()).then_some(values)
}

fn internal(error: serde_json::Error) -> ApiError {
    ApiError::Store(agentmemory_core::MemoryError::invalid(
        "stored long-term memory",
        error.to_string(),
    ))
}

/// The wire record of a fact found by search.
fn fact_record(fact: MemoryFact, owner: &Owner) -> WireMemory {
    WireMemory {
        id: fact.source.message_id.clone().unwrap_or(fact.id),
        text: fact.text,
        session_id: fact.source.session_id,
        user_id: owner.user_id.clone(),
        namespace: owner.namespace.clone(),
        last_accessed: fact.last_reinforced_at,
        created_at: fact.created_at,
        updated_at: fact.last_reinforced_at,
        topics: non_empty(fact.topics),
        entities: non_empty(fact.entities),
        memory_hash: None,
        discrete_memory_extracted: "t".into(),
        memory_type: MemoryType::Semantic,
        persisted_at: Some(fact.created_at),
        extracted_from: None,
        event_date: None,
    }
}

/// The fact candidate of a semantic record, with the attribute read from its text.
fn candidate(record: &WireMemory) -> FactCandidate {
    let mut candidate = FactCandidate::new(record.text.trim(), STATED_CONFIDENCE);
    if let Some(read) = attribute_of(&record.text) {
        candidate.attribute = read.attribute;
        candidate.value = read.value;
        candidate.polarity = read.polarity;
    }
    candidate.topics = record.topics.clone().unwrap_or_default();
    candidate.entities = record.entities.clone().unwrap_or_default();
    candidate.source = FactSource {
        session_id: record.session_id.clone(),
        message_id: Some(record.id.clone()),
    };
    candidate
}

/// The one attribute the rule extractor reads in `text` (as the user's own words).
fn attribute_of(text: &str) -> Option<FactCandidate> {
    let extractor = RuleExtractor::new();
    let mut found = extractor.extract_text(&first_person(text));
    if found.len() != 1 {
        found = extractor.extract_text(text);
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// "User lives in Berlin" → "I live in Berlin"; "The user's name is Bob" → "My name is Bob".
pub fn first_person(text: &str) -> String {
    let trimmed = text.trim();
    let lower = trimmed.to_lowercase();
    for subject in ["the user", "user"] {
        if !lower.starts_with(subject) {
            continue;
        }
        let rest = &trimmed[subject.len()..];
        if let Some(after) = rest.strip_prefix("'s ") {
            return format!("My {after}");
        }
        let Some(rest) = rest.strip_prefix(' ') else {
            continue;
        };
        let (verb, tail) = rest.split_once(' ').unwrap_or((rest, ""));
        let verb = match verb.to_lowercase().as_str() {
            "is" => "am".to_owned(),
            "has" => "have".to_owned(),
            "was" => "was".to_owned(),
            "does" => "do".to_owned(),
            v if v.ends_with("ies") && v.len() > 4 => format!("{}y", &v[..v.len() - 3]),
            v if ["ches", "shes", "sses", "xes", "zes"]
                .iter()
                .any(|s| v.ends_with(s)) =>
            {
                v[..v.len() - 2].to_owned()
            }
            v if v.ends_with('s') && !v.ends_with("ss") => v[..v.len() - 1].to_owned(),
            v => v.to_owned(),
        };
        return format!("I {verb} {tail}").trim_end().to_owned();
    }
    trimmed.to_owned()
}

/// The vector-store document of an episodic or message record.
fn document(record: &WireMemory) -> Document {
    let mut doc = Document::new(record.text.clone()).with_id(record.id.clone());
    doc = doc.with_metadata(
        "record",
        serde_json::to_value(record).unwrap_or(Value::Null),
    );
    if let Some(user) = &record.user_id {
        doc = doc.with_metadata("user_id", user.clone());
    }
    if let Some(session) = &record.session_id {
        doc = doc.with_metadata("session_id", session.clone());
    }
    doc.with_metadata("memory_type", record.memory_type.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentmemory_core::{InMemoryKvStore, InMemoryUserMemoryStore, InMemoryVectorStore};

    fn memory() -> LongTermMemory {
        LongTermMemory::new(
            Arc::new(InMemoryUserMemoryStore::new()),
            Arc::new(InMemoryVectorStore::new()),
            Arc::new(InMemoryKvStore::new()),
        )
    }

    fn record(id: &str, text: &str, kind: &str) -> WireMemory {
        serde_json::from_value(json!({
            "id": id, "text": text, "user_id": "alice", "namespace": "demo",
            "memory_type": kind, "topics": ["home"],
        }))
        .unwrap()
    }

    #[test]
    fn third_person_reads_as_first() {
        assert_eq!(first_person("User lives in Berlin"), "I live in Berlin");
        assert_eq!(first_person("The user's name is Bob"), "My name is Bob");
        assert_eq!(first_person("user watches films"), "I watch films");
        assert_eq!(first_person("User is vegetarian"), "I am vegetarian");
        assert_eq!(first_person("Loves tea"), "Loves tea");
    }

    #[tokio::test]
    async fn duplicates_reinforce_and_contradictions_supersede() {
        let ltm = memory();
        let first = ltm
            .create(vec![record("a", "User lives in Paris", "semantic")])
            .await
            .unwrap();
        assert_eq!(first[0].change, "added");
        let again = ltm
            .create(vec![record("b", "User lives in Paris", "semantic")])
            .await
            .unwrap();
        assert_eq!(again[0].change, "reinforced");
        let moved = ltm
            .create(vec![record("c", "User lives in Berlin", "semantic")])
            .await
            .unwrap();
        assert_eq!(moved[0].change, "superseded");
        let found = ltm
            .search(&SearchRequest::text("where does the user live", 10))
            .await
            .unwrap();
        let texts: Vec<_> = found
            .memories
            .iter()
            .map(|m| m.memory.text.as_str())
            .collect();
        assert_eq!(texts, ["User lives in Berlin"]);
        assert_eq!(found.memories[0].memory.id, "c");
    }

    #[tokio::test]
    async fn documents_are_found_filtered_and_deleted() {
        let ltm = memory();
        ltm.create(vec![
            record("e1", "Alice visited the Louvre museum", "episodic"),
            record(
                "e2",
                "Alice booked a table at an Italian restaurant",
                "episodic",
            ),
        ])
        .await
        .unwrap();
        let found = ltm
            .search(&SearchRequest::text("museum", 10))
            .await
            .unwrap();
        assert_eq!(found.memories[0].memory.id, "e1");
        assert_eq!(ltm.delete(&["e1".into(), "nope".into()]).await.unwrap(), 1);
        assert!(ltm.get("e1").await.unwrap().is_none());
        let listed = ltm.search(&SearchRequest::text("", 10)).await.unwrap();
        assert_eq!(listed.total, 1);
    }

    #[tokio::test]
    async fn empty_text_stores_nothing() {
        let ltm = memory();
        let err = ltm
            .create(vec![
                record("ok", "User likes tea", "semantic"),
                record("bad", "  ", "semantic"),
            ])
            .await
            .unwrap_err();
        assert_eq!(err.status(), axum::http::StatusCode::BAD_REQUEST);
        assert!(ltm.get("ok").await.unwrap().is_none());
    }
}
