//! The sparse index's vocabulary: term ids by text and texts by id, each text stored
//! once (a hash table of ids looks texts up in the id-ordered list, instead of a map
//! keeping a second copy of every term as its key). Ids of removed terms are reused.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Term ids by text, and texts by id.
#[derive(Debug, Default)]
pub(super) struct Dictionary {
    /// Text of each id; empty for a free id.
    texts: Vec<Box<str>>,
    /// Ids of the terms, hashed by their text.
    ids: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    free: Vec<u32>,
}

impl Dictionary {
    /// Number of terms.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The id of `text`, if it is a term.
    #[inline]
    pub(super) fn get(&self, text: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(text);
        self.ids
            .find(hash, |&id| *self.texts[id as usize] == *text)
            .copied()
    }

    /// The text of term `id`; empty for a free id.
    pub(super) fn text(&self, id: u32) -> &str {
        self.texts.get(id as usize).map_or("", |t| t)
    }

    /// The id of `text`, and whether it was added now (taking a free id, or the next one).
    pub(super) fn intern(&mut self, text: &str) -> (u32, bool) {
        if let Some(id) = self.get(text) {
            return (id, false);
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.texts[id as usize] = text.into();
                id
            }
            None => {
                self.texts.push(text.into());
                (self.texts.len() - 1) as u32
            }
        };
        let hash = self.hasher.hash_one(text);
        let (texts, hasher) = (&self.texts, &self.hasher);
        self.ids
            .insert_unique(hash, id, |&i| hasher.hash_one(&*texts[i as usize]));
        (id, true)
    }

    /// Makes room for `additional` more terms.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.texts.reserve(additional);
        let (texts, hasher) = (&self.texts, &self.hasher);
        self.ids
            .reserve(additional, |&i| hasher.hash_one(&*texts[i as usize]));
    }

    /// Removes term `id`, freeing the id for reuse.
    pub(super) fn remove(&mut self, id: u32) {
        let text = std::mem::take(&mut self.texts[id as usize]);
        let hash = self.hasher.hash_one(&*text);
        if let Ok(entry) = self.ids.find_entry(hash, |&i| i == id) {
            entry.remove();
            self.free.push(id);
        }
    }

    /// Bytes held on the heap (capacities; allocator overhead not counted).
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let texts: usize = self.texts.iter().map(|t| t.len()).sum();
        texts
            + self.texts.capacity() * size_of::<Box<str>>()
            + self.ids.capacity() * (size_of::<u32>() + 1)
            + self.free.capacity() * size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_found_by_text_and_ids_reused() {
        let mut dict = Dictionary::default();
        assert_eq!(dict.intern("apple"), (0, true));
        assert_eq!(dict.intern("pear"), (1, true));
        assert_eq!(dict.intern("apple"), (0, false));
        assert_eq!((dict.get("pear"), dict.get("fig")), (Some(1), None));
        dict.remove(0);
        assert_eq!((dict.get("apple"), dict.len(), dict.text(0)), (None, 1, ""));
        assert_eq!(dict.intern("fig"), (0, true));
        assert_eq!((dict.get("fig"), dict.text(0)), (Some(0), "fig"));
        assert_eq!(dict.get("pear"), Some(1));
    }
}
