//! A knowledge graph on agentmem's stores: entities (a name, a type, observations) and
//! relations between them, the model of the reference MCP `memory` server
//! (modelcontextprotocol/servers, `src/memory`), kept the agentmem way.
//!
//! - **Every change is history.** The graph is the replay of an append-only log of
//!   [`GraphChange`]s in a [`ConversationStore`] (log id `graph/<name>`, see
//!   [`log_id`]); nothing is ever rewritten in place, and [`KnowledgeGraph::history`]
//!   lists what changed when.
//! - **Several writers are safe.** A change is one atomic append; each process replays
//!   what others appended before it checks a request, and reports what its own change did
//!   where it landed in the log. Two processes on one SQLite file lose nothing.
//! - **Search by words and meaning.** With an index ([`KnowledgeGraph::with_index`]),
//!   entities and observations are documents of a [`VectorStore`], ranked hybrid (with the
//!   store's embedder when one is configured); a query that is a substring of a name, type
//!   or observation still finds it, as the reference server's search does.
//! - **The user's entity is the user's facts** ([`KnowledgeGraph::for_user`]; see the
//!   [`user`] module).
//! - [`jsonl`] reads and writes the reference server's `memory.jsonl` format.
//!
//! ```
//! # tokio_test::block_on(async {
//! use std::sync::Arc;
//! use agentmemory::graph::{Entity, KnowledgeGraph, Relation};
//! use agentmemory_core::{InMemoryConversationStore, InMemoryVectorStore};
//!
//! let graph = KnowledgeGraph::new(Arc::new(InMemoryConversationStore::new()), "default")
//!     .with_index(Arc::new(InMemoryVectorStore::new()));
//! graph.create_entities(vec![
//!     Entity::new("Alice", "person", ["works on compilers"]),
//!     Entity::new("Acme", "organization", Vec::<String>::new()),
//! ]).await?;
//! graph.create_relations(vec![Relation::new("Alice", "Acme", "works_at")]).await?;
//! let found = graph.search_nodes("compiler").await?;
//! assert_eq!(found.entities[0].name, "Alice");
//! assert_eq!(found.relations.len(), 1);
//! # Ok::<_, agentmemory::graph::GraphError>(()) }).unwrap();
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use agentmemory_core::conversation::{ConversationEvent, ConversationStore, StoredEvent};
use agentmemory_core::di::Container;
use agentmemory_core::error::MemoryError;
use agentmemory_core::facts::UserMemoryStore;
use agentmemory_core::vector::VectorStore;

mod change;
mod error;
mod index;
pub mod jsonl;
mod model;
mod state;
pub mod user;

pub use change::{GraphChange, GRAPH_CHANGE_VERSION};
pub use error::GraphError;
pub use index::MEANING_THRESHOLD;
pub use model::{
    AddedObservations, EntitiesDeleted, Entity, Graph, ObservationAddition, ObservationDeletion,
    ObservationsDeleted, Relation,
};
pub use state::{Effect, GraphState};

use index::SearchIndex;
use user::UserLink;

/// The name of the graph used when none is given.
pub const DEFAULT_GRAPH: &str = "default";

/// The id of the log (in the [`ConversationStore`]) and of the index namespace (in the
/// [`VectorStore`]) of the graph `name`: `graph/<name>`.
pub fn log_id(name: &str) -> String {
    format!("graph/{name}")
}

/// One change as the log holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphEvent {
    /// Its position in the graph's log, from 1.
    pub seq: u64,
    /// When the store accepted it.
    pub at: DateTime<Utc>,
    /// The change.
    pub change: GraphChange,
}

/// The graph as replayed so far in this process.
#[derive(Default)]
struct Replayed {
    /// The seq of the last event applied.
    seq: u64,
    state: GraphState,
    /// Whether the index was checked against the graph since this handle opened.
    synced: bool,
}

/// A knowledge graph over a [`ConversationStore`] (its log), optionally a
/// [`VectorStore`] (its search index) and a [`UserMemoryStore`] (its user's facts). See
/// the [module docs](self).
pub struct KnowledgeGraph {
    log: Arc<dyn ConversationStore>,
    log_id: String,
    index: Option<SearchIndex>,
    user: Option<UserLink>,
    replayed: tokio::sync::Mutex<Replayed>,
}

impl fmt::Debug for KnowledgeGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KnowledgeGraph")
            .field("log_id", &self.log_id)
            .field("indexed", &self.index.is_some())
            .field("user", &self.user.as_ref().map(UserLink::user_id))
            .finish()
    }
}

impl KnowledgeGraph {
    /// The graph `name` kept in `log`; searched by substring only until
    /// [`with_index`](Self::with_index).
    pub fn new(log: Arc<dyn ConversationStore>, name: &str) -> Self {
        Self {
            log,
            log_id: log_id(name),
            index: None,
            user: None,
            replayed: tokio::sync::Mutex::new(Replayed::default()),
        }
    }

    /// Searches by words and meaning with documents in `vectors` (namespace
    /// [`log_id`]). The index is brought up to date with the log at the first use.
    pub fn with_index(mut self, vectors: Arc<dyn VectorStore>) -> Self {
        self.index = Some(SearchIndex::new(vectors, self.log_id.clone()));
        self
    }

    /// Links the entity named `user_id` to that user's facts in `facts` (see the
    /// [`user`] module).
    pub fn for_user(mut self, facts: Arc<dyn UserMemoryStore>, user_id: impl Into<String>) -> Self {
        self.user = Some(UserLink::new(facts, user_id.into(), self.log_id.clone()));
        self
    }

    /// The graph `name` on the stores of `container`: its conversation store for the log,
    /// its vector store for the index, and its user-memory store for `user`'s facts when
    /// a user is given.
    pub fn from_container(
        container: &Container,
        name: &str,
        user: Option<&str>,
    ) -> agentmemory_core::Result<Self> {
        let mut graph = Self::new(container.resolve::<dyn ConversationStore>(None)?, name)
            .with_index(container.resolve::<dyn VectorStore>(None)?);
        if let Some(user) = user {
            graph = graph.for_user(container.resolve::<dyn UserMemoryStore>(None)?, user);
        }
        Ok(graph)
    }

    /// The id of the graph's log.
    pub fn log_id(&self) -> &str {
        &self.log_id
    }

    /// The user linked to the graph, whose entity has the same name.
    pub fn user_id(&self) -> Option<&str> {
        self.user.as_ref().map(UserLink::user_id)
    }

    /// Applies the log's events after `replayed.seq`; the effects of those with a seq in
    /// `mine`.
    async fn catch_up(
        &self,
        replayed: &mut Replayed,
        mine: Option<std::ops::RangeInclusive<u64>>,
    ) -> Result<Vec<Effect>, GraphError> {
        let mut effects = Vec::new();
        for StoredEvent { seq, event, .. } in
            self.log.load_since(&self.log_id, replayed.seq).await?
        {
            if let ConversationEvent::GraphChanged { version, change } = event {
                if version > GRAPH_CHANGE_VERSION {
                    return Err(GraphError::FutureChange {
                        log: self.log_id.clone(),
                        version,
                    });
                }
                let change = self.read_change(seq, change)?;
                let effect = replayed.state.apply(&change);
                if mine.as_ref().is_some_and(|m| m.contains(&seq)) {
                    effects.push(effect);
                }
            }
            replayed.seq = seq;
        }
        if !replayed.synced {
            if let Some(index) = &self.index {
                let (written, dropped) = index.sync(&replayed.state).await?;
                if written + dropped > 0 {
                    tracing::info!(log = %self.log_id, written, dropped, "graph index repaired");
                }
            }
            replayed.synced = true;
        }
        Ok(effects)
    }

    /// The graph as the log stands now (without the user's facts).
    async fn current(&self) -> Result<tokio::sync::MutexGuard<'_, Replayed>, GraphError> {
        let mut replayed = self.replayed.lock().await;
        self.catch_up(&mut replayed, None).await?;
        Ok(replayed)
    }

    /// Appends `changes` (after `check` accepts the graph as it stands) and returns what
    /// each did where it landed in the log; then brings the index and the user's facts up
    /// to date.
    async fn commit(
        &self,
        changes: Vec<GraphChange>,
        check: impl FnOnce(&GraphState) -> Result<(), GraphError>,
    ) -> Result<Vec<Effect>, GraphError> {
        let mut replayed = self.current().await?;
        check(&replayed.state)?;
        let count = changes.len() as u64;
        let events = changes
            .iter()
            .map(|change| {
                Ok(ConversationEvent::GraphChanged {
                    version: GRAPH_CHANGE_VERSION,
                    change: serde_json::to_value(change)
                        .map_err(|e| MemoryError::corrupt("graph change", e))?,
                })
            })
            .collect::<Result<Vec<_>, GraphError>>()?;
        let last = self.log.append(&self.log_id, events).await?;
        let effects = self
            .catch_up(&mut replayed, Some((last + 1).saturating_sub(count)..=last))
            .await?;
        self.reflect(&effects).await?;
        Ok(effects)
    }

    /// Writes what `effects` did to the index and to the user's facts.
    async fn reflect(&self, effects: &[Effect]) -> Result<(), GraphError> {
        let user = self.user_id();
        let is_user = |name: &str| user == Some(name);
        for effect in effects {
            match effect {
                Effect::EntitiesCreated(entities) => {
                    if let Some(index) = &self.index {
                        index.add_entities(entities).await?;
                    }
                    if let Some(link) = &self.user {
                        for e in entities.iter().filter(|e| is_user(&e.name)) {
                            link.remember(&e.observations).await?;
                        }
                    }
                }
                Effect::ObservationsAdded(added) => {
                    for a in added {
                        if let Some(index) = &self.index {
                            index
                                .add_observations(&a.entity_name, &a.added_observations)
                                .await?;
                        }
                        if let (Some(link), true) = (&self.user, is_user(&a.entity_name)) {
                            link.remember(&a.added_observations).await?;
                        }
                    }
                }
                Effect::EntitiesDeleted { removed, .. } => {
                    if let Some(index) = &self.index {
                        index.remove_entities(removed).await?;
                    }
                    if let Some(link) = &self.user {
                        for e in removed.iter().filter(|e| is_user(&e.name)) {
                            link.forget(&e.observations).await?;
                        }
                    }
                }
                Effect::ObservationsDeleted { removed, .. } => {
                    if let Some(index) = &self.index {
                        index.remove_observations(removed).await?;
                    }
                }
                Effect::RelationsCreated(_) | Effect::RelationsDeleted(_) => {}
            }
        }
        Ok(())
    }

    /// A change creating the user's entity, when `names` mention it, the graph does not
    /// hold it and reads show it (the user has facts): so what reads show can be written to.
    async fn user_entity_for<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Option<GraphChange>, GraphError> {
        let Some(link) = &self.user else {
            return Ok(None);
        };
        if !names.into_iter().any(|n| n == link.user_id()) {
            return Ok(None);
        }
        if self.current().await?.state.contains(link.user_id()) {
            return Ok(None);
        }
        Ok(link
            .entity(None)
            .await?
            .map(|shown| GraphChange::CreateEntities {
                entities: vec![Entity::new(
                    shown.name,
                    shown.entity_type,
                    Vec::<String>::new(),
                )],
            }))
    }

    /// A name a change may refer to besides the graph's entities: the user's, when the
    /// same append creates the user's entity.
    fn known(&self, creates_user: bool) -> Option<&str> {
        self.user_id().filter(|_| creates_user)
    }

    /// Creates the entities whose names are new (to the graph and earlier in the list);
    /// the ones created.
    pub async fn create_entities(&self, entities: Vec<Entity>) -> Result<Vec<Entity>, GraphError> {
        let effects = self
            .commit(vec![GraphChange::CreateEntities { entities }], |_| Ok(()))
            .await?;
        Ok(effects
            .into_iter()
            .flat_map(|e| match e {
                Effect::EntitiesCreated(created) => created,
                _ => Vec::new(),
            })
            .collect())
    }

    /// Creates relations between existing entities (duplicates are skipped); the ones
    /// created. A relation naming an entity the graph lacks fails the whole call with
    /// [`GraphError::EntityNotFound`], as in the reference server.
    pub async fn create_relations(
        &self,
        relations: Vec<Relation>,
    ) -> Result<Vec<Relation>, GraphError> {
        let mut changes: Vec<GraphChange> = self
            .user_entity_for(
                relations
                    .iter()
                    .flat_map(|r| [r.from.as_str(), r.to.as_str()]),
            )
            .await?
            .into_iter()
            .collect();
        let known = self.known(!changes.is_empty());
        let ends: Vec<String> = relations
            .iter()
            .flat_map(|r| [r.from.clone(), r.to.clone()])
            .collect();
        changes.push(GraphChange::CreateRelations { relations });
        let effects = self
            .commit(changes, |state| all_known(state, &ends, known))
            .await?;
        Ok(effects
            .into_iter()
            .flat_map(|e| match e {
                Effect::RelationsCreated(created) => created,
                _ => Vec::new(),
            })
            .collect())
    }

    /// Adds observations to existing entities (statements an entity holds are skipped);
    /// what was added to each. An entity the graph lacks fails the whole call with
    /// [`GraphError::EntityNotFound`]. Added to the user's entity, they are upserted as the
    /// user's facts too.
    pub async fn add_observations(
        &self,
        observations: Vec<ObservationAddition>,
    ) -> Result<Vec<AddedObservations>, GraphError> {
        let mut changes: Vec<GraphChange> = self
            .user_entity_for(observations.iter().map(|o| o.entity_name.as_str()))
            .await?
            .into_iter()
            .collect();
        let known = self.known(!changes.is_empty());
        let names: Vec<String> = observations.iter().map(|o| o.entity_name.clone()).collect();
        changes.push(GraphChange::AddObservations { observations });
        let effects = self
            .commit(changes, |state| all_known(state, &names, known))
            .await?;
        Ok(effects
            .into_iter()
            .flat_map(|e| match e {
                Effect::ObservationsAdded(added) => added,
                _ => Vec::new(),
            })
            .collect())
    }

    /// Deletes entities and every relation touching them. Deleting the user's entity
    /// forgets the user's facts it held as observations.
    pub async fn delete_entities(&self, names: Vec<String>) -> Result<EntitiesDeleted, GraphError> {
        let effects = self
            .commit(vec![GraphChange::DeleteEntities { names }], |_| Ok(()))
            .await?;
        Ok(effects
            .into_iter()
            .find_map(|e| match e {
                Effect::EntitiesDeleted { report, .. } => Some(report),
                _ => None,
            })
            .unwrap_or_default())
    }

    /// Deletes observations from entities. On the user's entity, the user's current facts
    /// of the same text are forgotten too (and count as deleted when the graph itself did
    /// not hold them).
    pub async fn delete_observations(
        &self,
        deletions: Vec<ObservationDeletion>,
    ) -> Result<ObservationsDeleted, GraphError> {
        // the user's facts shown on the user's entity, which the graph may not hold
        let (user_texts, shown_facts) = match &self.user {
            Some(link) => {
                let texts: Vec<String> = deletions
                    .iter()
                    .filter(|d| d.entity_name == link.user_id())
                    .flat_map(|d| d.observations.iter().cloned())
                    .collect();
                let facts = if texts.is_empty() {
                    Vec::new()
                } else {
                    link.fact_texts().await?
                };
                (texts, facts)
            }
            None => (Vec::new(), Vec::new()),
        };
        let effects = self
            .commit(vec![GraphChange::DeleteObservations { deletions }], |_| {
                Ok(())
            })
            .await?;
        let (removed, mut report) = effects
            .into_iter()
            .find_map(|e| match e {
                Effect::ObservationsDeleted { removed, report } => Some((removed, report)),
                _ => None,
            })
            .unwrap_or_default();
        if let Some(link) = &self.user {
            let from_graph: HashSet<&str> = removed
                .iter()
                .filter(|(name, _)| name == link.user_id())
                .map(|(_, text)| text.as_str())
                .collect();
            let forgotten: Vec<String> = user_texts
                .iter()
                .filter(|t| shown_facts.contains(t))
                .cloned()
                .collect();
            report.deleted_count += forgotten
                .iter()
                .filter(|t| !from_graph.contains(t.as_str()))
                .collect::<HashSet<_>>()
                .len();
            if !shown_facts.is_empty() {
                report.missing_entities.retain(|n| n != link.user_id());
            }
            let mut texts: Vec<String> = from_graph.iter().map(|t| (*t).to_owned()).collect();
            texts.extend(forgotten);
            link.forget(&texts).await?;
        }
        Ok(report)
    }

    /// Deletes relations; how many there were.
    pub async fn delete_relations(&self, relations: Vec<Relation>) -> Result<usize, GraphError> {
        let effects = self
            .commit(vec![GraphChange::DeleteRelations { relations }], |_| Ok(()))
            .await?;
        Ok(effects
            .into_iter()
            .find_map(|e| match e {
                Effect::RelationsDeleted(n) => Some(n),
                _ => None,
            })
            .unwrap_or(0))
    }

    /// The whole graph, the user's entity with the user's facts.
    pub async fn read_graph(&self) -> Result<Graph, GraphError> {
        let graph = self.current().await?.state.to_graph();
        self.with_user_facts(graph).await
    }

    /// `graph` with the user's entity showing the user's facts (added at the end when the
    /// graph lacks it and the user has facts).
    async fn with_user_facts(&self, mut graph: Graph) -> Result<Graph, GraphError> {
        let Some(link) = &self.user else {
            return Ok(graph);
        };
        match graph.entities.iter().position(|e| e.name == link.user_id()) {
            Some(i) => {
                if let Some(shown) = link.entity(Some(&graph.entities[i])).await? {
                    graph.entities[i] = shown;
                }
            }
            None => graph.entities.extend(link.entity(None).await?),
        }
        Ok(graph)
    }

    /// The entities named in `names` (in graph order) and every relation with at least one
    /// end among them.
    pub async fn open_nodes(&self, names: &[String]) -> Result<Graph, GraphError> {
        let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
        let graph = self.read_graph().await?;
        let entities = graph
            .entities
            .into_iter()
            .filter(|e| wanted.contains(e.name.as_str()))
            .collect();
        Ok(with_relations(entities, graph.relations))
    }

    /// The entities matching `query`, most relevant first, and every relation with at
    /// least one end among them. An entity matches when the query is a substring of its
    /// name, type or one of its observations, ignoring case (the reference server's rule,
    /// ranked first), or when a document of it matches by words or meaning (with an
    /// index), or, for the user's entity, when one of the user's facts does.
    pub async fn search_nodes(&self, query: &str) -> Result<Graph, GraphError> {
        let graph = self.read_graph().await?;
        let mut scores: HashMap<String, f32> = match &self.index {
            Some(index) => index.search(query).await?,
            None => HashMap::new(),
        };
        if let Some(link) = &self.user {
            if let Some(relevance) = link.search(query).await? {
                let best = scores.entry(link.user_id().to_owned()).or_insert(relevance);
                *best = best.max(relevance);
            }
        }
        let needle = query.to_lowercase();
        let contains = |s: &str| s.to_lowercase().contains(&needle);
        let mut ranked: Vec<(f32, usize)> = Vec::new();
        for (position, e) in graph.entities.iter().enumerate() {
            let substring = contains(&e.name)
                || contains(&e.entity_type)
                || e.observations.iter().any(|o| contains(o));
            let score = scores.get(&e.name).copied();
            if substring || score.is_some() {
                // substring matches first, as the reference finds them; then by score
                let rank = f32::from(u8::from(substring)) + score.unwrap_or(0.0).min(1.0) / 2.0;
                ranked.push((rank, position));
            }
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut slots: Vec<Option<Entity>> = graph.entities.into_iter().map(Some).collect();
        let entities = ranked
            .into_iter()
            .filter_map(|(_, position)| slots.get_mut(position).and_then(Option::take))
            .collect();
        Ok(with_relations(entities, graph.relations))
    }

    /// Adds a whole graph (a file read with [`jsonl::parse`]) in one atomic append:
    /// entities whose names are new, then relations between entities that exist. What
    /// was created.
    pub async fn import(&self, graph: Graph) -> Result<Graph, GraphError> {
        let effects = self
            .commit(
                vec![
                    GraphChange::CreateEntities {
                        entities: graph.entities,
                    },
                    GraphChange::CreateRelations {
                        relations: graph.relations,
                    },
                ],
                |_| Ok(()),
            )
            .await?;
        let mut created = Graph::default();
        for effect in effects {
            match effect {
                Effect::EntitiesCreated(e) => created.entities.extend(e),
                Effect::RelationsCreated(r) => created.relations.extend(r),
                _ => {}
            }
        }
        Ok(created)
    }

    /// Every change of the graph, oldest first.
    pub async fn history(&self) -> Result<Vec<GraphEvent>, GraphError> {
        let mut out = Vec::new();
        for stored in self.log.load(&self.log_id).await? {
            if let ConversationEvent::GraphChanged { change, .. } = stored.event {
                out.push(GraphEvent {
                    seq: stored.seq,
                    at: stored.at,
                    change: self.read_change(stored.seq, change)?,
                });
            }
        }
        Ok(out)
    }

    /// A change of the log as the graph wrote it; one that does not read back is an error
    /// naming the log and its place there, never skipped.
    fn read_change(&self, seq: u64, change: serde_json::Value) -> Result<GraphChange, GraphError> {
        serde_json::from_value(change).map_err(|e| {
            MemoryError::corrupt(format!("graph change {seq} of log `{}`", self.log_id), e).into()
        })
    }
}

/// `Ok` when every name in `names` is an entity of `state` or `also`; else the reference
/// server's error for the first that is not.
fn all_known(state: &GraphState, names: &[String], also: Option<&str>) -> Result<(), GraphError> {
    match names
        .iter()
        .find(|n| !state.contains(n) && also != Some(n.as_str()))
    {
        Some(missing) => Err(GraphError::EntityNotFound(missing.clone())),
        None => Ok(()),
    }
}

/// `entities` with those of `relations` that touch at least one of them.
fn with_relations(entities: Vec<Entity>, relations: Vec<Relation>) -> Graph {
    let names: HashSet<&str> = entities.iter().map(|e| e.name.as_str()).collect();
    let relations = relations
        .into_iter()
        .filter(|r| names.contains(r.from.as_str()) || names.contains(r.to.as_str()))
        .collect();
    Graph {
        entities,
        relations,
    }
}
