//! Fact helpers shared by the persistent stores: the change an upsert makes and the rows
//! it writes, walking a fact's chain of versions, and what deleting one removes.

use std::collections::HashMap;

use agentmemory_core::store_support::{reconcile_by_meaning, RankedFacts, Reconciliation};
use agentmemory_core::{FactCandidate, FactChange, MemoryError, MemoryFact, Result};
use chrono::{DateTime, Utc};

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
    #[cfg_attr(not(any(feature = "sqlite", feature = "file")), allow(dead_code))]
    pub(crate) new: bool,
}

/// The change `candidate` makes for `user` at `now`, reconciled against the user's
/// current facts as read from the store.
pub(crate) fn change_against_facts(
    user: &str,
    current: &[MemoryFact],
    candidate: FactCandidate,
    now: DateTime<Utc>,
) -> Result<FactChange> {
    let (decision, candidate) = reconcile_by_meaning(current, candidate);
    change_for(user, decision, candidate, now, |id| {
        current.iter().find(|f| f.id == id).cloned()
    })
}

/// [`change_against_facts`] against the user's cached facts, which decide exactly as
/// a fresh read of the same facts would.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "redis", feature = "postgres")),
    allow(dead_code)
)]
pub(crate) fn change_against_cache(
    user: &str,
    ranked: &mut RankedFacts,
    candidate: FactCandidate,
    now: DateTime<Utc>,
) -> Result<FactChange> {
    let (decision, candidate) = ranked.reconcile(candidate);
    change_for(user, decision, candidate, now, |id| {
        ranked.current(id).cloned()
    })
}

/// The change a reconciliation `decision` makes for `user` at `now`, with `find` giving
/// the current fact with an id (from the facts it was decided on).
fn change_for(
    user: &str,
    decision: Reconciliation,
    candidate: FactCandidate,
    now: DateTime<Utc>,
    find: impl Fn(&str) -> Option<MemoryFact>,
) -> Result<FactChange> {
    let found = |id: String| find(&id).ok_or_else(|| MemoryError::not_found("fact", id));
    Ok(match decision {
        Reconciliation::Ignore(reason) => FactChange::Ignored { candidate, reason },
        Reconciliation::Add => FactChange::Added {
            fact: MemoryFact::from_candidate(user, candidate, now),
        },
        Reconciliation::Contest(id) => {
            let mut fact = found(id)?;
            fact.contest(&candidate, now);
            FactChange::Contested { fact, candidate }
        }
        Reconciliation::Reinforce(id) => {
            let mut fact = found(id)?;
            fact.reinforce(candidate.confidence, now);
            FactChange::Reinforced { fact }
        }
        Reconciliation::Supersede(id) => {
            let mut old = found(id)?;
            let new = MemoryFact::from_candidate(user, candidate, now);
            old.superseded_by = Some(new.id.clone());
            FactChange::Superseded { old, new }
        }
    })
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
