//! The change planner: what a [`Reconciliation`] decision does to a user's facts, as the
//! [`FactChange`] a store then writes. Every backend plans through here (the in-memory
//! store and the persistent ones alike), so supersede, contest and reinforce mean the
//! same everywhere.

use chrono::{DateTime, Utc};

use super::semantic::reconcile_by_meaning;
use super::{FactCandidate, FactChange, MemoryFact, Reconciliation};
use crate::error::{MemoryError, Result};

/// The change `candidate` makes for `user` at `now`, reconciled
/// ([`reconcile_by_meaning`]) against `current`, the user's current facts as a store read
/// them. A store that keeps them indexed plans with [`RankedFacts::plan`](super::RankedFacts::plan)
/// instead, which decides the same.
///
/// ```
/// use agentmemory_core::store_support::plan_change;
/// use agentmemory_core::{FactCandidate, MemoryFact};
///
/// let now = chrono::Utc::now();
/// let paris = FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris");
/// let held = vec![MemoryFact::from_candidate("ana", paris, now)];
/// let berlin = FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin");
/// let change = plan_change("ana", &held, berlin, now).unwrap();
/// assert_eq!(change.kind(), "superseded");
/// ```
pub fn plan_change(
    user: &str,
    current: &[MemoryFact],
    candidate: FactCandidate,
    now: DateTime<Utc>,
) -> Result<FactChange> {
    let (decision, candidate) = reconcile_by_meaning(current, candidate);
    change_for(user, decision, candidate, now, |id| {
        current.iter().find(|f| f.id == id)
    })
}

/// The change a reconciliation `decision` makes for `user` at `now`, with `find` giving
/// the current fact with an id (from the facts it was decided on); a decision that names
/// a fact `find` does not know is a not-found error.
pub(super) fn change_for<'a>(
    user: &str,
    decision: Reconciliation,
    candidate: FactCandidate,
    now: DateTime<Utc>,
    find: impl Fn(&str) -> Option<&'a MemoryFact>,
) -> Result<FactChange> {
    let found = |id: String| {
        find(&id)
            .cloned()
            .ok_or_else(|| MemoryError::not_found("fact", id))
    };
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
