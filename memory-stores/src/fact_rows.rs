//! Fact helpers shared by the persistent stores: the rows an upsert's change writes,
//! walking a fact's chain of versions, and what deleting one removes. The change itself
//! is planned in core ([`RankedFacts::plan`](agentmemory_core::facts::RankedFacts::plan),
//! [`plan_change`](agentmemory_core::store_support::plan_change)), as the in-memory store plans it.

use std::collections::HashMap;

use agentmemory_core::{FactChange, MemoryFact};

/// The chain of versions through `fact_id`, oldest first (empty when unknown).
pub(crate) fn chain(all: &[MemoryFact], fact_id: &str) -> Vec<MemoryFact> {
    let by_id: HashMap<&str, &MemoryFact> = all.iter().map(|f| (f.id.as_str(), f)).collect();
    let predecessor: HashMap<&str, &MemoryFact> = all
        .iter()
        .filter_map(|f| f.superseded_by.as_deref().map(|next| (next, f)))
        .collect();
    let Some(start) = by_id.get(fact_id) else {
        return Vec::new();
    };
    let mut back = Vec::new();
    let mut cursor = predecessor.get(fact_id);
    while let Some(f) = cursor {
        if back.len() > all.len() {
            break; // a cycle in damaged data; stop rather than loop
        }
        back.push((*f).clone());
        cursor = predecessor.get(f.id.as_str());
    }
    back.reverse();
    back.push((*start).clone());
    let mut cursor = start.superseded_by.as_deref().and_then(|id| by_id.get(id));
    while let Some(f) = cursor {
        if back.len() > all.len() {
            break;
        }
        back.push((*f).clone());
        cursor = f.superseded_by.as_deref().and_then(|id| by_id.get(id));
    }
    back
}

/// The ids to delete when deleting `fact_id`: it and the versions that led to it
/// (later versions stay). Empty when the fact is unknown.
pub(crate) fn doomed(all: &[MemoryFact], fact_id: &str) -> Vec<String> {
    let versions = chain(all, fact_id);
    versions
        .iter()
        .position(|f| f.id == fact_id)
        .map(|end| versions[..=end].iter().map(|f| f.id.clone()).collect())
        .unwrap_or_default()
}

/// One row a change writes: the fact, and whether it is new (inserted) or replaces the
/// stored version with its id (updated).
pub(crate) struct Row<'a> {
    pub(crate) fact: &'a MemoryFact,
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) new: bool,
}

/// The rows an upsert's `change` writes, in order (none when it was ignored).
pub(crate) fn rows(change: &FactChange) -> Vec<Row<'_>> {
    match change {
        FactChange::Added { fact } => vec![Row { fact, new: true }],
        FactChange::Reinforced { fact } | FactChange::Contested { fact, .. } => {
            vec![Row { fact, new: false }]
        }
        FactChange::Superseded { old, new } => vec![
            Row {
                fact: old,
                new: false,
            },
            Row {
                fact: new,
                new: true,
            },
        ],
        FactChange::Deleted { .. } | FactChange::Ignored { .. } => Vec::new(),
    }
}
