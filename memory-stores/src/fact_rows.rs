//! Fact helpers shared by the persistent stores: the rows an upsert's change writes,
//! walking a fact's chain of versions, and what deleting one removes. The change itself
//! is planned in core ([`RankedFacts::plan`](agentmemory_core::facts::RankedFacts::plan),
//! [`plan_change`](agentmemory_core::store_support::plan_change)), as the in-memory store plans it.

use agentmemory_core::{FactChange, MemoryFact};

/// The chain of versions through `fact_id`, in the order they took effect (empty when
/// unknown): core's [`version_chain`], which every store shares.
pub(crate) use agentmemory_core::store_support::version_chain as chain;

/// The ids to delete when deleting `fact_id`: it and the versions before it.
pub(crate) use agentmemory_core::store_support::doomed_versions as doomed;

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
        // Current, or a statement folded in behind a later one (history): a new row.
        FactChange::Added { fact } => vec![Row { fact, new: true }],
        FactChange::Reinforced { fact }
        | FactChange::Contested { fact, .. }
        | FactChange::Closed { fact } => {
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
