//! The versions of a fact in time, and what held at a given moment.
//!
//! A fact's versions are linked by `superseded_by`, each pointing at the version that
//! replaced it. Folded in time order, a statement that arrives after a later one is
//! stored *behind* it (see [`plan_change`](crate::store_support::plan_change)), so a
//! version may have more than one predecessor: the links form a tree whose root is the
//! newest version. [`chain`] returns that tree in the order the versions took effect,
//! and [`held_at`] works out, from the versions alone, which one held at a moment.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::MemoryFact;

/// Every version linked to `fact_id`, oldest first by when each took effect
/// ([`MemoryFact::valid_from`], then when stored): the versions that led to it, it, and
/// the versions after it up to the newest one. Empty when `all` has no fact `fact_id`.
///
/// ```
/// use chrono::{Duration, Utc};
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::version_chain;
///
/// let now = Utc::now();
/// let mut leeds = MemoryFact::from_candidate("u", FactCandidate::new("lives in Leeds", 0.9).said_at(now - Duration::days(90)), now);
/// let york = MemoryFact::from_candidate("u", FactCandidate::new("lives in York", 0.9).said_at(now - Duration::days(9)), now);
/// leeds.superseded_by = Some(york.id.clone());
/// let all = vec![york.clone(), leeds.clone()];
/// let texts: Vec<_> = version_chain(&all, &york.id).into_iter().map(|f| f.text).collect();
/// assert_eq!(texts, ["lives in Leeds", "lives in York"]);
/// ```
pub fn chain(all: &[MemoryFact], fact_id: &str) -> Vec<MemoryFact> {
    Links::new(all).chain(fact_id)
}

/// The links between versions, built once for many chains.
struct Links<'a> {
    by_id: HashMap<&'a str, &'a MemoryFact>,
    predecessors: HashMap<&'a str, Vec<&'a MemoryFact>>,
    len: usize,
}

impl<'a> Links<'a> {
    fn new(all: &'a [MemoryFact]) -> Self {
        let by_id = all.iter().map(|f| (f.id.as_str(), f)).collect();
        let mut predecessors: HashMap<&str, Vec<&MemoryFact>> = HashMap::new();
        for f in all {
            if let Some(next) = f.superseded_by.as_deref() {
                predecessors.entry(next).or_default().push(f);
            }
        }
        Self {
            by_id,
            predecessors,
            len: all.len(),
        }
    }

    fn chain(&self, fact_id: &str) -> Vec<MemoryFact> {
        let Some(start) = self.by_id.get(fact_id) else {
            return Vec::new();
        };
        // Forward to the newest version (a cycle in damaged data stops the walk).
        let mut root = *start;
        let mut steps = 0;
        while let Some(next) = root
            .superseded_by
            .as_deref()
            .and_then(|id| self.by_id.get(id))
        {
            steps += 1;
            if steps > self.len {
                break;
            }
            root = next;
        }
        let mut out: Vec<&MemoryFact> = vec![root];
        let mut seen = std::collections::HashSet::from([root.id.as_str()]);
        let mut at = 0;
        while at < out.len() {
            let id = out[at].id.as_str();
            for p in self.predecessors.get(id).into_iter().flatten() {
                if seen.insert(p.id.as_str()) {
                    out.push(p);
                }
            }
            at += 1;
        }
        let mut out: Vec<MemoryFact> = out.into_iter().cloned().collect();
        sort_in_time(&mut out);
        out
    }
}

/// Sorts versions by when they took effect, then when stored, then id.
pub(crate) fn sort_in_time(versions: &mut [MemoryFact]) {
    versions.sort_by(|a, b| {
        (a.valid_from(), a.created_at, &a.id).cmp(&(b.valid_from(), b.created_at, &b.id))
    });
}

/// The ids to delete when deleting `fact_id`: it and the versions that took effect
/// before it in its chain (later versions stay). Empty when the fact is unknown.
pub fn doomed(all: &[MemoryFact], fact_id: &str) -> Vec<String> {
    let versions = chain(all, fact_id);
    versions
        .iter()
        .position(|f| f.id == fact_id)
        .map(|end| versions[..=end].iter().map(|f| f.id.clone()).collect())
        .unwrap_or_default()
}

/// Of one fact's versions ([`chain`], in time order), the one that held at `at`, with
/// the moment it stopped holding (`None`: it still holds).
///
/// A version holds from its [`valid_from`](MemoryFact::valid_from) until its own
/// [`valid_to`](MemoryFact::valid_to) or until the version that replaced it was said,
/// whichever comes first; the current one holds on unless closed. A statement folded in
/// behind a fact that was said again later holds in between: where several versions
/// hold at `at`, the one said last by then answers (its latest statement at or before
/// `at`, or when it took effect if later), and of two said at once, the one that took
/// effect last. So "Inverness" in January and again in March, with "Carlisle" from
/// February folded in after both, answers Carlisle in February and Inverness in March.
pub fn held_at(
    versions: &[MemoryFact],
    at: DateTime<Utc>,
) -> Option<(&MemoryFact, Option<DateTime<Utc>>)> {
    let mut best: Option<(&MemoryFact, Option<DateTime<Utc>>)> = None;
    let mut best_said: Option<DateTime<Utc>> = None;
    for v in versions {
        if v.valid_from() > at {
            continue;
        }
        let end = if v.is_current() {
            v.valid_to
        } else {
            // Its own end, and the first statement of the version that replaced it after
            // it began (that one may have been said again since this version was stored
            // behind it). A version stored behind it, inside its run, does not end it:
            // where both hold, the later one answers.
            let successor = v
                .superseded_by
                .as_deref()
                .and_then(|id| versions.iter().find(|s| s.id == id))
                .and_then(|s| s.next_statement_after(v.valid_from()));
            [v.valid_to, successor].into_iter().flatten().min()
        };
        if end.is_some_and(|end| end <= at) {
            continue;
        }
        // In time order, so of two said at once the later one wins.
        let said = last_said(v, at);
        if best_said.is_none_or(|best| said >= best) {
            best = Some((v, end));
            best_said = Some(said);
        }
    }
    best
}

/// When `version` was last said at or before `at` (it took effect by then): its latest
/// statement by then, or when it took effect if that is later (a move dated in the text).
fn last_said(version: &MemoryFact, at: DateTime<Utc>) -> DateTime<Utc> {
    let said = std::iter::once(version.observed_at())
        .chain(version.restated_at.iter().copied())
        .filter(|t| *t <= at)
        .max();
    said.map_or(version.valid_from(), |t| t.max(version.valid_from()))
}

/// The facts that held at `at` among `all` (every version of a user's facts), in the
/// order they took effect, each with [`valid_to`](MemoryFact::valid_to) set to the
/// moment it stopped holding (`None`: it still holds): what [`list`](super::UserMemoryStore::list)
/// would have returned then, negative versions ("no longer has a car") included.
///
/// ```
/// use chrono::{Duration, Utc};
/// use agentmemory_core::facts::{FactCandidate, MemoryFact};
/// use agentmemory_core::store_support::facts_at;
///
/// let now = Utc::now();
/// let mut leeds = MemoryFact::from_candidate("u", FactCandidate::new("lives in Leeds", 0.9).said_at(now - Duration::days(90)), now);
/// let york = MemoryFact::from_candidate("u", FactCandidate::new("lives in York", 0.9).said_at(now - Duration::days(9)), now);
/// leeds.superseded_by = Some(york.id.clone());
/// let all = vec![leeds, york];
/// let then = facts_at(&all, now - Duration::days(30));
/// assert_eq!(then[0].text, "lives in Leeds");
/// assert_eq!(then[0].valid_to, Some(now - Duration::days(9)));
/// assert_eq!(facts_at(&all, now)[0].text, "lives in York");
/// ```
pub fn facts_at(all: &[MemoryFact], at: DateTime<Utc>) -> Vec<MemoryFact> {
    let links = Links::new(all);
    let mut out = Vec::new();
    for head in all.iter().filter(|f| f.is_current()) {
        let mut versions = links.chain(&head.id);
        // A fact about another subject folded in behind the statement that ended it
        // ("Rolo is 3" behind "we had to put Rolo down") shares that statement's chain
        // but is not a version of the same fact: each subject holds on its own.
        while !versions.is_empty() {
            let subject = versions[0].subject.clone();
            let (same, rest): (Vec<_>, Vec<_>) =
                versions.into_iter().partition(|v| v.subject == subject);
            if let Some((v, end)) = held_at(&same, at) {
                let mut v = v.clone();
                v.valid_to = end;
                out.push(v);
            }
            versions = rest;
        }
    }
    out.sort_by(|a, b| (a.valid_from(), &a.id).cmp(&(b.valid_from(), &b.id)));
    out
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::facts::FactCandidate;

    fn said(text: &str, day: i64) -> MemoryFact {
        let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        let c = FactCandidate::new(text, 0.9).said_at(t0 + Duration::days(day));
        MemoryFact::from_candidate("u", c, Utc::now())
    }

    #[test]
    fn a_late_statement_behind_the_current_one_sorts_into_its_place() {
        let mut a = said("lives in Hull", 0);
        let mut b = said("lives in Bath", 60);
        let c = said("lives in Ely", 120);
        a.superseded_by = Some(c.id.clone());
        b.superseded_by = Some(c.id.clone()); // folded in later, behind c
        let all = vec![c.clone(), a.clone(), b.clone()];
        let texts: Vec<String> = chain(&all, &a.id).into_iter().map(|f| f.text).collect();
        assert_eq!(texts, ["lives in Hull", "lives in Bath", "lives in Ely"]);
        let versions = chain(&all, &c.id);
        let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        let (held, end) = held_at(&versions, t0 + Duration::days(70)).unwrap();
        assert_eq!(held.text, "lives in Bath");
        assert_eq!(end, Some(c.valid_from()));
        assert!(held_at(&versions, t0 - Duration::days(1)).is_none());
        assert_eq!(
            held_at(&versions, t0 + Duration::days(400)).unwrap().0.text,
            "lives in Ely"
        );
        assert_eq!(doomed(&all, &b.id), vec![a.id.clone(), b.id.clone()]);
    }

    #[test]
    fn of_two_versions_that_hold_the_one_said_last_answers() {
        // Inverness in January and again in March, Carlisle from April; Carlisle from
        // February folded in last, behind the April statement.
        let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        let mut inverness = said("lives in Inverness", 0);
        inverness.record_restatement(t0 + Duration::days(60));
        let carlisle = said("lives in Carlisle", 90);
        inverness.superseded_by = Some(carlisle.id.clone());
        inverness.valid_to = Some(carlisle.valid_from());
        let mut february = said("lives in Carlisle", 30);
        february.superseded_by = Some(carlisle.id.clone());
        february.valid_to = Some(carlisle.valid_from());
        let all = vec![inverness, february, carlisle];
        let at = |day| facts_at(&all, t0 + Duration::days(day))[0].text.clone();
        assert_eq!(at(10), "lives in Inverness");
        assert_eq!(at(40), "lives in Carlisle");
        assert_eq!(at(70), "lives in Inverness");
        assert_eq!(at(100), "lives in Carlisle");
    }

    #[test]
    fn a_closed_version_holds_until_its_end_only() {
        let mut a = said("has a parrot", 0);
        let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        a.valid_to = Some(t0 + Duration::days(10));
        let versions = vec![a];
        assert!(held_at(&versions, t0 + Duration::days(5)).is_some());
        assert!(held_at(&versions, t0 + Duration::days(10)).is_none());
    }
}
