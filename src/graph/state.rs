//! The graph a log describes: replaying [`GraphChange`]s in order, and what each one did.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::change::GraphChange;
use super::model::{
    AddedObservations, EntitiesDeleted, Entity, Graph, ObservationsDeleted, Relation,
};

/// What applying one [`GraphChange`] did to the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// The entities that were created (names already taken are left out).
    EntitiesCreated(Vec<Entity>),
    /// The relations that were created (duplicates, and relations whose ends are
    /// missing, are left out).
    RelationsCreated(Vec<Relation>),
    /// What each addition added.
    ObservationsAdded(Vec<AddedObservations>),
    /// The entities deleted, as they were, and the names not found.
    EntitiesDeleted {
        /// The entities removed, with their observations.
        removed: Vec<Entity>,
        /// Names and counts as the tool reports them.
        report: EntitiesDeleted,
    },
    /// The observations removed, as `(entity, statement)`.
    ObservationsDeleted {
        /// Each statement removed, with its entity.
        removed: Vec<(String, String)>,
        /// Counts as the tool reports them.
        report: ObservationsDeleted,
    },
    /// How many relations were removed.
    RelationsDeleted(usize),
}

/// A knowledge graph in memory: entities and relations in creation order, found by name
/// (or by value, for relations) in constant time.
#[derive(Debug, Clone, Default)]
pub struct GraphState {
    entities: BTreeMap<u64, Entity>,
    by_name: HashMap<String, u64>,
    relations: BTreeMap<u64, Relation>,
    by_relation: HashMap<Relation, u64>,
    next: u64,
}

impl GraphState {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entity named `name`.
    pub fn entity(&self, name: &str) -> Option<&Entity> {
        self.by_name.get(name).and_then(|k| self.entities.get(k))
    }

    /// Whether an entity is named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The entities in creation order.
    pub fn entities(&self) -> impl Iterator<Item = &Entity> {
        self.entities.values()
    }

    /// The relations in creation order.
    pub fn relations(&self) -> impl Iterator<Item = &Relation> {
        self.relations.values()
    }

    /// The whole graph.
    pub fn to_graph(&self) -> Graph {
        Graph {
            entities: self.entities().cloned().collect(),
            relations: self.relations().cloned().collect(),
        }
    }

    fn key(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// Applies `change`; what it did.
    pub fn apply(&mut self, change: &GraphChange) -> Effect {
        match change {
            GraphChange::CreateEntities { entities } => {
                let mut created = Vec::new();
                for entity in entities {
                    if !self.contains(&entity.name) {
                        let key = self.key();
                        self.by_name.insert(entity.name.clone(), key);
                        self.entities.insert(key, entity.clone());
                        created.push(entity.clone());
                    }
                }
                Effect::EntitiesCreated(created)
            }
            GraphChange::CreateRelations { relations } => {
                let mut created = Vec::new();
                for relation in relations {
                    if self.contains(&relation.from)
                        && self.contains(&relation.to)
                        && !self.by_relation.contains_key(relation)
                    {
                        let key = self.key();
                        self.by_relation.insert(relation.clone(), key);
                        self.relations.insert(key, relation.clone());
                        created.push(relation.clone());
                    }
                }
                Effect::RelationsCreated(created)
            }
            GraphChange::AddObservations { observations } => {
                let added = observations
                    .iter()
                    .map(|addition| {
                        let mut added = Vec::new();
                        if let Some(entity) = self
                            .by_name
                            .get(&addition.entity_name)
                            .and_then(|k| self.entities.get_mut(k))
                        {
                            for content in &addition.contents {
                                if !entity.observations.contains(content) {
                                    entity.observations.push(content.clone());
                                    added.push(content.clone());
                                }
                            }
                        }
                        AddedObservations {
                            entity_name: addition.entity_name.clone(),
                            added_observations: added,
                        }
                    })
                    .collect();
                Effect::ObservationsAdded(added)
            }
            GraphChange::DeleteEntities { names } => {
                let mut removed = Vec::new();
                let mut report = EntitiesDeleted::default();
                for name in names {
                    match self.by_name.remove(name) {
                        Some(key) => {
                            if let Some(entity) = self.entities.remove(&key) {
                                removed.push(entity);
                            }
                            report.deleted.push(name.clone());
                        }
                        // a name given twice is deleted once, then not found
                        None if report.deleted.contains(name) => report.deleted.push(name.clone()),
                        None => report.not_found.push(name.clone()),
                    }
                }
                let gone: HashSet<&str> = names.iter().map(String::as_str).collect();
                self.retain_relations(|r| {
                    !gone.contains(r.from.as_str()) && !gone.contains(r.to.as_str())
                });
                Effect::EntitiesDeleted { removed, report }
            }
            GraphChange::DeleteObservations { deletions } => {
                let mut removed = Vec::new();
                let mut report = ObservationsDeleted::default();
                for deletion in deletions {
                    let Some(entity) = self
                        .by_name
                        .get(&deletion.entity_name)
                        .and_then(|k| self.entities.get_mut(k))
                    else {
                        report.missing_entities.push(deletion.entity_name.clone());
                        continue;
                    };
                    entity.observations.retain(|o| {
                        let drop = deletion.observations.contains(o);
                        if drop {
                            removed.push((deletion.entity_name.clone(), o.clone()));
                        }
                        !drop
                    });
                }
                report.deleted_count = removed.len();
                Effect::ObservationsDeleted { removed, report }
            }
            GraphChange::DeleteRelations { relations } => {
                let before = self.relations.len();
                let gone: HashSet<&Relation> = relations.iter().collect();
                self.retain_relations(|r| !gone.contains(r));
                Effect::RelationsDeleted(before - self.relations.len())
            }
        }
    }

    fn retain_relations(&mut self, mut keep: impl FnMut(&Relation) -> bool) {
        let by_relation = &mut self.by_relation;
        self.relations.retain(|_, r| {
            let kept = keep(r);
            if !kept {
                by_relation.remove(r);
            }
            kept
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::{ObservationAddition, ObservationDeletion};

    fn alice_and_acme() -> GraphState {
        let mut g = GraphState::new();
        g.apply(&GraphChange::CreateEntities {
            entities: vec![
                Entity::new("Alice", "person", ["likes tea"]),
                Entity::new("Acme", "organization", Vec::<String>::new()),
            ],
        });
        g.apply(&GraphChange::CreateRelations {
            relations: vec![Relation::new("Alice", "Acme", "works_at")],
        });
        g
    }

    #[test]
    fn creating_twice_changes_nothing_and_order_is_creation_order() {
        let mut g = alice_and_acme();
        let again = g.apply(&GraphChange::CreateEntities {
            entities: vec![
                Entity::new("Alice", "robot", ["other"]),
                Entity::new("Bob", "person", ["x"]),
                Entity::new("Bob", "person", ["y"]),
            ],
        });
        assert_eq!(
            again,
            Effect::EntitiesCreated(vec![Entity::new("Bob", "person", ["x"])])
        );
        let names: Vec<_> = g.entities().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["Alice", "Acme", "Bob"]);
        assert_eq!(g.entity("Alice").unwrap().entity_type, "person");
    }

    #[test]
    fn relations_need_both_ends_and_are_unique() {
        let mut g = alice_and_acme();
        let effect = g.apply(&GraphChange::CreateRelations {
            relations: vec![
                Relation::new("Alice", "Acme", "works_at"),
                Relation::new("Alice", "Nobody", "knows"),
                Relation::new("Acme", "Alice", "employs"),
            ],
        });
        assert_eq!(
            effect,
            Effect::RelationsCreated(vec![Relation::new("Acme", "Alice", "employs")])
        );
        assert_eq!(g.relations().count(), 2);
    }

    #[test]
    fn observations_are_added_once_and_deleted_by_value() {
        let mut g = alice_and_acme();
        let added = g.apply(&GraphChange::AddObservations {
            observations: vec![ObservationAddition {
                entity_name: "Alice".into(),
                contents: vec!["likes tea".into(), "is vegetarian".into()],
            }],
        });
        assert_eq!(
            added,
            Effect::ObservationsAdded(vec![AddedObservations {
                entity_name: "Alice".into(),
                added_observations: vec!["is vegetarian".into()],
            }])
        );
        let deleted = g.apply(&GraphChange::DeleteObservations {
            deletions: vec![
                ObservationDeletion {
                    entity_name: "Alice".into(),
                    observations: vec!["likes tea".into(), "never said".into()],
                },
                ObservationDeletion {
                    entity_name: "Zed".into(),
                    observations: vec!["x".into()],
                },
            ],
        });
        let Effect::ObservationsDeleted { removed, report } = deleted else {
            panic!("{deleted:?}")
        };
        assert_eq!(removed, [("Alice".to_owned(), "likes tea".to_owned())]);
        assert_eq!(report.deleted_count, 1);
        assert_eq!(report.missing_entities, ["Zed"]);
        assert_eq!(g.entity("Alice").unwrap().observations, ["is vegetarian"]);
    }

    #[test]
    fn deleting_an_entity_takes_its_relations_and_a_new_one_goes_last() {
        let mut g = alice_and_acme();
        let effect = g.apply(&GraphChange::DeleteEntities {
            names: vec!["Alice".into(), "Ghost".into()],
        });
        let Effect::EntitiesDeleted { removed, report } = effect else {
            panic!("{effect:?}")
        };
        assert_eq!(removed[0].observations, ["likes tea"]);
        assert_eq!(report.deleted, ["Alice"]);
        assert_eq!(report.not_found, ["Ghost"]);
        assert_eq!(g.relations().count(), 0);
        g.apply(&GraphChange::CreateEntities {
            entities: vec![Entity::new("Alice", "person", Vec::<String>::new())],
        });
        let names: Vec<_> = g.entities().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["Acme", "Alice"]);
        // the old relation does not come back with the name
        assert_eq!(g.relations().count(), 0);
        assert_eq!(
            g.apply(&GraphChange::DeleteRelations {
                relations: vec![Relation::new("Alice", "Acme", "works_at")]
            }),
            Effect::RelationsDeleted(0)
        );
    }
}
