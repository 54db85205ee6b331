//! One change to a knowledge graph, as its log keeps it.

use serde::{Deserialize, Serialize};

use super::model::{Entity, ObservationAddition, ObservationDeletion, Relation};

/// The version of [`GraphChange`]'s format that this build writes; every later build
/// reads it.
pub const GRAPH_CHANGE_VERSION: u32 = 1;

/// A change to a knowledge graph, as requested: the graph's log is a sequence of these,
/// and the graph is what replaying them in order gives.
///
/// Each change is applied to the graph as the log stands when it lands, so two writers
/// never overwrite each other: a request for an entity that exists already (or a relation
/// whose ends are gone) simply changes nothing.
///
/// In JSON, an object tagged by `op`: `{"op": "create_entities", "entities": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum GraphChange {
    /// Create entities whose names are new.
    CreateEntities {
        /// The entities.
        entities: Vec<Entity>,
    },
    /// Create relations between existing entities.
    CreateRelations {
        /// The relations.
        relations: Vec<Relation>,
    },
    /// Add observations to existing entities.
    AddObservations {
        /// What to add to which entity.
        observations: Vec<ObservationAddition>,
    },
    /// Delete entities and every relation touching them.
    DeleteEntities {
        /// Their names.
        names: Vec<String>,
    },
    /// Delete observations from entities.
    DeleteObservations {
        /// What to remove from which entity.
        deletions: Vec<ObservationDeletion>,
    },
    /// Delete relations.
    DeleteRelations {
        /// The relations.
        relations: Vec<Relation>,
    },
}
