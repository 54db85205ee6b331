//! [`SlotIds`]: the slot of each current fact by its id, without a second copy of the ids:
//! a hash table of slots, each found by comparing the id with the fact's own. Filing
//! 100,000 facts read back from a snapshot this way allocates nothing per fact (a map
//! keyed by cloned ids spent a third of the time it took to read the facts).

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::MemoryFact;

/// Slots of facts by id (see the module doc).
#[derive(Debug, Default)]
pub(super) struct SlotIds {
    table: HashTable<u32>,
    /// foldhash, randomly seeded.
    hasher: foldhash::fast::RandomState,
}

impl SlotIds {
    /// Bytes the table holds on the heap (a slot and a control byte per bucket).
    pub(super) fn heap_bytes(&self) -> usize {
        self.table.capacity() * (std::mem::size_of::<u32>() + 1)
    }

    /// Every slot of `facts` filed by its fact's id (the last slot of an id given twice).
    pub(super) fn new(facts: &[MemoryFact]) -> Self {
        let mut ids = Self {
            table: HashTable::with_capacity(facts.len()),
            hasher: Default::default(),
        };
        for slot in 0..facts.len() {
            ids.insert(facts, slot);
        }
        ids
    }

    /// The slot filed under `id`.
    #[inline]
    pub(super) fn get(&self, facts: &[MemoryFact], id: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        self.table
            .find(hash, |&s| facts[s as usize].id == id)
            .map(|&s| s as usize)
    }

    /// Files `slot` under the id of `facts[slot]` (in place of a slot filed under it).
    pub(super) fn insert(&mut self, facts: &[MemoryFact], slot: usize) {
        let id = facts[slot].id.as_str();
        let hash = self.hasher.hash_one(id);
        let hasher = &self.hasher;
        match self.table.find_mut(hash, |&s| facts[s as usize].id == id) {
            Some(filed) => *filed = slot as u32,
            None => {
                self.table.insert_unique(hash, slot as u32, |&s| {
                    hasher.hash_one(facts[s as usize].id.as_str())
                });
            }
        }
    }

    /// Takes `slot` (filed under the id of `facts[slot]`) out.
    pub(super) fn remove(&mut self, facts: &[MemoryFact], slot: usize) {
        let hash = self.hasher.hash_one(facts[slot].id.as_str());
        if let Ok(entry) = self.table.find_entry(hash, |&s| s as usize == slot) {
            entry.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::facts::FactCandidate;

    #[test]
    fn slots_are_found_by_id_until_taken_out() {
        let now = Utc::now();
        let mut facts: Vec<MemoryFact> = (0..500)
            .map(|i| {
                MemoryFact::from_candidate("u", FactCandidate::new(format!("fact {i}"), 0.5), now)
            })
            .collect();
        let mut ids = SlotIds::new(&facts);
        assert_eq!(ids.get(&facts, &facts[321].id.clone()), Some(321));
        assert_eq!(ids.get(&facts, "no such id"), None);
        ids.remove(&facts, 321);
        assert_eq!(ids.get(&facts, &facts[321].id.clone()), None);
        assert_eq!(ids.get(&facts, &facts[322].id.clone()), Some(322));
        // An id given again moves to its new slot.
        facts.push(facts[7].clone());
        ids.insert(&facts, 500);
        assert_eq!(ids.get(&facts, &facts[7].id.clone()), Some(500));
    }
}
