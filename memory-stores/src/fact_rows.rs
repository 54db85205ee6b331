//! Fact helpers shared by the stores that keep facts as rows (SQLite, Redis, PostgreSQL):
//! walking a fact's chain of versions, and what deleting one removes.

use std::collections::HashMap;

use agentmemory_core::MemoryFact;

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
