//! Bringing a user's fact snapshot up to date: the facts read back from a snapshot taken
//! at one version of the user's facts, and the facts stored now under each id written
//! since (the stores log the id of every write with the version it made), give the facts
//! a fresh read would give, without reading the others.
//!
//! A fact gone or no longer current leaves; a current one the snapshot holds takes the
//! stored version's place; a current one it does not hold is new, and goes after the
//! others in the store's order, which is only possible when it sorts after every fact
//! the snapshot was taken of (the caller reads everything otherwise). Every step is a
//! [`RankedFacts::apply`], which ranks and reconciles exactly as a fresh index of the
//! same facts.

use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::{FactChange, MemoryFact};

/// What the store holds now under one id written since the snapshot: the fact and its
/// place in the store's order, or nothing (deleted).
pub(crate) type Written<K> = (String, Option<(K, MemoryFact)>);

/// Applies `written` (each id once, any order) to `ranked`, read back from a snapshot
/// whose facts all sort at or before `after` in the store's order (`None`: no fact).
/// `false` when a new fact does not sort after `after` or a change does not fit the
/// snapshot: `ranked` is then unusable and the caller reads every fact.
pub(crate) fn replay<K: Ord>(
    ranked: &mut RankedFacts,
    written: Vec<Written<K>>,
    after: Option<&K>,
) -> bool {
    let mut added: Vec<(K, MemoryFact)> = Vec::new();
    for (id, now) in written {
        let held = ranked.current(&id).cloned();
        let change = match (held, now) {
            (Some(fact), None) => FactChange::Deleted { fact },
            (Some(_), Some((_, fact))) if fact.is_current() => FactChange::Reinforced { fact },
            (Some(_), Some((_, fact))) => FactChange::Deleted { fact },
            (None, Some((key, fact))) if fact.is_current() => {
                added.push((key, fact));
                continue;
            }
            // Superseded or deleted since, and not held: nothing to do.
            (None, _) => continue,
        };
        if !ranked.apply(&change) {
            return false;
        }
    }
    added.sort_by(|a, b| a.0.cmp(&b.0));
    if let (Some(after), Some((first, _))) = (after, added.first()) {
        if first <= after {
            return false;
        }
    }
    added
        .into_iter()
        .all(|(_, fact)| ranked.apply(&FactChange::Added { fact }))
}

#[cfg(test)]
mod tests {
    use agentmemory_core::facts::{FactPolicy, FactQuery};
    use agentmemory_core::FactCandidate;
    use chrono::Utc;

    use super::*;

    fn fact(text: &str) -> MemoryFact {
        MemoryFact::from_candidate("u", FactCandidate::new(text, 0.8), Utc::now())
    }

    fn ids(r: &RankedFacts) -> Vec<String> {
        r.facts().map(|f| f.id.clone()).collect()
    }

    #[test]
    fn replaying_the_writes_since_a_snapshot_gives_a_fresh_read() {
        let stored: Vec<(i64, MemoryFact)> =
            ["likes jazz", "lives in Lyon", "has a cat", "plays chess"]
                .iter()
                .enumerate()
                .map(|(n, t)| (n as i64, fact(t)))
                .collect();
        let mut ranked = RankedFacts::new(stored.iter().map(|(_, f)| f.clone()).collect());
        // Since: "has a cat" deleted, "lives in Lyon" superseded by "lives in Porto",
        // "likes jazz" reinforced, and "walks daily" added (then the new one written
        // twice: listed once).
        let mut lyon = stored[1].1.clone();
        let porto = fact("lives in Porto");
        lyon.superseded_by = Some(porto.id.clone());
        let mut jazz = stored[0].1.clone();
        jazz.reinforce(0.9, Utc::now());
        let walks = fact("walks daily");
        let written = vec![
            (walks.id.clone(), Some((6, walks.clone()))),
            (stored[2].1.id.clone(), None),
            (lyon.id.clone(), Some((1, lyon.clone()))),
            (porto.id.clone(), Some((5, porto.clone()))),
            (jazz.id.clone(), Some((0, jazz.clone()))),
        ];
        assert!(replay(&mut ranked, written, Some(&3)));
        let fresh = RankedFacts::new(vec![jazz.clone(), stored[3].1.clone(), porto, walks]);
        assert_eq!(ids(&ranked), ids(&fresh));
        let query = FactQuery::new("where does she live, jazz?", 4);
        let now = Utc::now();
        let key = |r: &RankedFacts| {
            r.rank(&query, FactPolicy::default(), now)
                .into_iter()
                .map(|h| (h.fact, h.score.to_bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&ranked), key(&fresh));
    }

    #[test]
    fn a_new_fact_that_sorts_among_the_snapshot_is_refused() {
        let mut ranked = RankedFacts::new(vec![fact("likes jazz"), fact("plays chess")]);
        let early = fact("walks daily");
        assert!(!replay(
            &mut ranked,
            vec![(early.id.clone(), Some((1, early)))],
            Some(&1)
        ));
    }
}
