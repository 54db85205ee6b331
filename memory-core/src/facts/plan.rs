//! The change planner: what a [`Reconciliation`] decision does to a user's facts, as the
//! [`FactChange`] a store then writes. Every backend plans through here (the in-memory
//! store and the persistent ones alike), so supersede, contest and reinforce mean the
//! same everywhere.

use chrono::{DateTime, Utc};

use super::semantic::reconcile_by_meaning;
use super::transition::{closes, ended_thing, names_subject};
use super::{FactCandidate, FactChange, MemoryFact, Reconciliation, Transition};
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
    if decision == Reconciliation::Add {
        if let Some(later) = ended_later(current.iter(), &candidate) {
            let end = later.observed_at();
            return Ok(backdated(user, candidate, later, end, now));
        }
    }
    change_for(user, decision, candidate, now, |id| {
        current.iter().find(|f| f.id == id)
    })
}

/// The change a reconciliation `decision` makes for `user` at `now`, with `find` giving
/// the current fact with an id (from the facts it was decided on); a decision that names
/// a fact `find` does not know is a not-found error.
///
/// Two rules make the facts a projection of what was said, whatever the order it
/// arrives in:
///
/// - **Applied once.** A candidate from a message the fact it would reinforce or contest
///   already records ([`MemoryFact::stated_in`]) changes nothing: the same message
///   applied again (a retried turn, an ingest run twice) is ignored.
/// - **Time order.** A candidate that would supersede, contest or reinforce a fact said
///   after it ([`FactCandidate::observed_at`] before the fact's [`MemoryFact::observed_at`],
///   or before a later statement of it) is an older statement arriving late: it is stored as a closed version before that fact
///   (superseded by it, valid until it took effect), and the current fact stays.
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
    let message = candidate.source.message_id.clone();
    let applied = |fact: &MemoryFact| message.as_deref().is_some_and(|m| fact.stated_in(m));
    Ok(match decision {
        Reconciliation::Ignore(reason) => FactChange::Ignored { candidate, reason },
        Reconciliation::Add => FactChange::Added {
            fact: MemoryFact::from_candidate(user, candidate, now),
        },
        Reconciliation::Contest(id) => {
            let mut fact = found(id)?;
            if applied(&fact) {
                return Ok(already_applied(candidate));
            }
            if let Some(end) = stated_after(&candidate, &fact) {
                return Ok(backdated(user, candidate, &fact, end, now));
            }
            fact.contest(&candidate, now);
            fact.record_statement(message.as_deref());
            FactChange::Contested { fact, candidate }
        }
        Reconciliation::Reinforce(id) => {
            let mut fact = found(id)?;
            if applied(&fact) {
                return Ok(already_applied(candidate));
            }
            // Said before the fact took effect (an older conversation imported later):
            // another value may have held in between, so it is a version of its own.
            if took_effect_before(&candidate, &fact) {
                let end = fact.observed_at();
                return Ok(backdated(user, candidate, &fact, end, now));
            }
            fact.reinforce(candidate.confidence, now);
            fact.record_statement(message.as_deref());
            if let Some(at) = candidate.observed_at {
                fact.record_restatement(at);
            }
            FactChange::Reinforced { fact }
        }
        Reconciliation::Supersede(id) => {
            let mut old = found(id)?;
            if let Some(end) = stated_after(&candidate, &old) {
                return Ok(backdated(user, candidate, &old, end, now));
            }
            let new = MemoryFact::from_candidate(user, candidate, now);
            old.superseded_by = Some(new.id.clone());
            old.valid_to = Some(new.valid_from());
            FactChange::Superseded { old, new }
        }
    })
}

/// The current fact that ended what `candidate` states after it took effect: a later
/// statement about the same subject whose [`Transition::Ends`] names it ("sold my car"
/// said in June, "I have a car" from January folded in afterwards), or whose
/// [`Transition::Replaces`] takes its place ("switched from law to criminology"); for a
/// fact about someone or something else, a later statement of the user's that says
/// that thing ended ("Rolo is 3" from January, "we had to put Rolo down" from June).
pub(super) fn ended_later<'a>(
    current: impl Iterator<Item = &'a MemoryFact>,
    candidate: &FactCandidate,
) -> Option<&'a MemoryFact> {
    let at = candidate.observed_at?;
    let mut stated: Option<MemoryFact> = None;
    for fact in current {
        if !fact.is_current() || fact.observed_at() <= at {
            continue;
        }
        // "Rolo is 3" folded in after "we had to put Rolo down": a fact about a thing a
        // later statement of the user's says ended.
        if let (Some(subject), Some(thing)) = (&candidate.subject, ended_thing(fact)) {
            if names_subject(thing, subject) {
                return Some(fact);
            }
        }
        if fact.subject != candidate.subject {
            continue;
        }
        let stated =
            stated.get_or_insert_with(|| MemoryFact::from_candidate("", candidate.clone(), at));
        let ended = match &fact.transition {
            Some(Transition::Ends { object }) => closes(object, stated),
            // "switched from law to criminology" said in June takes the place of "doing a
            // law degree" from January, whichever was imported first.
            Some(Transition::Replaces { from: Some(from) }) => closes(from, stated),
            Some(Transition::Replaces { from: None }) => {
                let family = |a: &Option<String>| {
                    a.as_deref()
                        .map(super::reconcile::family)
                        .map(str::to_owned)
                };
                // As `transition::replaced` decides in the other order: a note is
                // replaced only by a note with its verb.
                let verb = |text: &str| text.split(' ').next().unwrap_or_default().to_lowercase();
                fact.value != candidate.value
                    && candidate.attribute.is_some()
                    && family(&fact.attribute) == family(&candidate.attribute)
                    && (!matches!(fact.attribute.as_deref(), Some("note" | "possession"))
                        || verb(&fact.text) == verb(&candidate.text))
            }
            None => false,
        };
        if ended {
            return Some(fact);
        }
    }
    None
}

/// Why a candidate from a message already applied changes nothing.
pub const ALREADY_APPLIED: &str = "its message was already applied";

fn already_applied(candidate: FactCandidate) -> FactChange {
    FactChange::Ignored {
        candidate,
        reason: ALREADY_APPLIED.to_owned(),
    }
}

/// Whether `candidate` was said before `fact` was: a statement older than the fact it
/// would replace. A candidate without a time is taken to be said now. The fold follows
/// when things were said; when they took effect ([`MemoryFact::valid_from`]) dates the
/// intervals.
pub(super) fn took_effect_before(candidate: &FactCandidate, fact: &MemoryFact) -> bool {
    candidate
        .observed_at
        .is_some_and(|at| at < fact.observed_at())
}

/// When `fact` was stated after `candidate` took effect, if it was: the candidate, a
/// contradiction, then held only until that statement.
pub(super) fn stated_after(candidate: &FactCandidate, fact: &MemoryFact) -> Option<DateTime<Utc>> {
    fact.next_statement_after(candidate.observed_at?)
}

/// `candidate`, older than a statement of `later`, stored as a closed version before it:
/// added as history (superseded by `later`, valid until `end`), `later` unchanged.
pub(super) fn backdated(
    user: &str,
    candidate: FactCandidate,
    later: &MemoryFact,
    end: DateTime<Utc>,
    now: DateTime<Utc>,
) -> FactChange {
    let mut fact = MemoryFact::from_candidate(user, candidate, now);
    fact.superseded_by = Some(later.id.clone());
    fact.valid_to = Some(end);
    FactChange::Added { fact }
}
