//! The knowledge graph's records, named and shaped as the reference MCP `memory` server
//! names them (`entityType`, `relationType`, `entityName`, …), so they serialise to the
//! same JSON.

use serde::{Deserialize, Serialize};

/// A node of the graph: a named thing of some type, with what is known about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entity {
    /// The entity's name, unique in the graph.
    pub name: String,
    /// Its type ("person", "organization", …).
    pub entity_type: String,
    /// What is known about it, one statement each, in the order they were added.
    pub observations: Vec<String>,
}

impl Entity {
    /// An entity named `name` of type `entity_type` with `observations`.
    pub fn new(
        name: impl Into<String>,
        entity_type: impl Into<String>,
        observations: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            entity_type: entity_type.into(),
            observations: observations.into_iter().map(Into::into).collect(),
        }
    }
}

/// A directed edge between two entities, in active voice ("Alice works_at Acme").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Relation {
    /// The name of the entity where the relation starts.
    pub from: String,
    /// The name of the entity where the relation ends.
    pub to: String,
    /// The type of the relation.
    pub relation_type: String,
}

impl Relation {
    /// `from` —`relation_type`→ `to`.
    pub fn new(
        from: impl Into<String>,
        to: impl Into<String>,
        relation_type: impl Into<String>,
    ) -> Self {
        Self {
            from: from.into(),
            to: to.into(),
            relation_type: relation_type.into(),
        }
    }

    /// Whether the relation starts or ends at `name`.
    pub fn touches(&self, name: &str) -> bool {
        self.from == name || self.to == name
    }
}

/// A whole graph, or the part of one a read returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Graph {
    /// The entities, in the order they were created.
    pub entities: Vec<Entity>,
    /// The relations, in the order they were created.
    pub relations: Vec<Relation>,
}

/// Observations to add to one entity (an item of `add_observations`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservationAddition {
    /// The entity to add them to.
    pub entity_name: String,
    /// The statements to add.
    pub contents: Vec<String>,
}

/// What `add_observations` added to one entity (statements it already held are left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddedObservations {
    /// The entity.
    pub entity_name: String,
    /// The statements that were new to it.
    pub added_observations: Vec<String>,
}

/// Observations to remove from one entity (an item of `delete_observations`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservationDeletion {
    /// The entity holding them.
    pub entity_name: String,
    /// The statements to remove.
    pub observations: Vec<String>,
}

/// What `delete_entities` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntitiesDeleted {
    /// The names that were in the graph, now gone with their relations.
    pub deleted: Vec<String>,
    /// The names the graph did not hold.
    pub not_found: Vec<String>,
}

/// What `delete_observations` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservationsDeleted {
    /// How many statements were removed.
    pub deleted_count: usize,
    /// The entities the graph did not hold.
    pub missing_entities: Vec<String>,
}
