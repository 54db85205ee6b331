//! The sparse index's vocabulary: term ids by text and texts by id, each text stored
//! once (a hash table of ids looks texts up in the id-ordered list, instead of a map
//! keeping a second copy of every term as its key). Ids of removed terms are reused.
//!
//! The texts are kept one after the other in one string, each id with its place there
//! (eight bytes a term, against sixteen and an allocation for a boxed text), so a
//! vocabulary read back from a snapshot is one copy of its bytes
//! ([`from_flat`](Dictionary::from_flat)). The texts of removed terms stay in the string
//! until they are half of it; it is then rewritten without them.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Fewest bytes of removed texts that make the texts worth rewriting.
const COMPACT_MIN: usize = 4096;

/// Term ids by text, and texts by id.
#[derive(Debug, Default)]
pub struct Dictionary {
    /// Every term's text, one after the other (and removed ones not yet compacted away).
    arena: String,
    /// Where each id's text is in `arena`, `(start, end)`; empty for a free id.
    spans: Vec<(u32, u32)>,
    /// Bytes of `arena` no id points at.
    garbage: usize,
    /// Ids of the terms, hashed by their text.
    ids: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    free: Vec<u32>,
}

/// The text of `span` in `arena` (empty if it is not one: never for a span the
/// dictionary made).
#[inline]
fn text_at(arena: &str, (start, end): (u32, u32)) -> &str {
    arena.get(start as usize..end as usize).unwrap_or("")
}

impl Dictionary {
    /// Number of terms.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The id of `text`, if it is a term.
    #[inline]
    pub fn get(&self, text: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(text);
        self.ids
            .find(hash, |&id| {
                let (start, end) = self.spans[id as usize];
                self.arena.as_bytes()[start as usize..end as usize] == *text.as_bytes()
            })
            .copied()
    }

    /// The text of term `id`; empty for a free id.
    pub fn text(&self, id: u32) -> &str {
        self.spans
            .get(id as usize)
            .map_or("", |&span| text_at(&self.arena, span))
    }

    /// The id of `text`, and whether it was added now (taking a free id, or the next one).
    pub fn intern(&mut self, text: &str) -> (u32, bool) {
        if let Some(id) = self.get(text) {
            return (id, false);
        }
        let start = self.arena.len();
        self.arena.push_str(text);
        let span = (start as u32, self.arena.len() as u32);
        let id = match self.free.pop() {
            Some(id) => {
                self.spans[id as usize] = span;
                id
            }
            None => {
                self.spans.push(span);
                (self.spans.len() - 1) as u32
            }
        };
        let hash = self.hasher.hash_one(text);
        let (arena, spans, hasher) = (&self.arena, &self.spans, &self.hasher);
        self.ids.insert_unique(hash, id, |&i| {
            hasher.hash_one(text_at(arena, spans[i as usize]))
        });
        (id, true)
    }

    /// Makes room for `additional` more terms.
    pub fn reserve(&mut self, additional: usize) {
        self.spans.reserve(additional);
        let (arena, spans, hasher) = (&self.arena, &self.spans, &self.hasher);
        self.ids.reserve(additional, |&i| {
            hasher.hash_one(text_at(arena, spans[i as usize]))
        });
    }

    /// Removes term `id`, freeing the id for reuse.
    pub fn remove(&mut self, id: u32) {
        let Some(span) = self.spans.get_mut(id as usize).map(std::mem::take) else {
            return;
        };
        let hash = self.hasher.hash_one(text_at(&self.arena, span));
        if let Ok(entry) = self.ids.find_entry(hash, |&i| i == id) {
            entry.remove();
            self.free.push(id);
        }
        self.garbage += (span.1 - span.0) as usize;
        if self.garbage >= COMPACT_MIN && 2 * self.garbage > self.arena.len() {
            self.compact();
        }
    }

    /// Rewrites the texts without those of removed terms.
    fn compact(&mut self) {
        let mut arena = String::with_capacity(self.arena.len() - self.garbage);
        for span in &mut self.spans {
            let start = arena.len() as u32;
            arena.push_str(text_at(&self.arena, *span));
            *span = (start, arena.len() as u32);
        }
        self.arena = arena;
        self.garbage = 0;
    }

    /// Appends the texts, in id order, to `bytes`, and the end of each to `ends`, as
    /// [`from_flat`](Self::from_flat) reads them back. Free ids are written as empty
    /// texts (which a reader refuses): only an index without them is written whole.
    pub fn flatten(&self, bytes: &mut Vec<u8>, ends: &mut Vec<u32>) {
        for &span in &self.spans {
            bytes.extend_from_slice(text_at(&self.arena, span).as_bytes());
            ends.push(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
        }
    }

    /// The dictionary of the terms `texts[ends[i - 1]..ends[i]]` (id `i`).
    ///
    /// # Errors
    ///
    /// Texts that are not UTF-8, or a text out of them, empty, or given twice.
    pub fn from_flat(texts: &[u8], ends: &[u32]) -> Result<Self, &'static str> {
        let arena = std::str::from_utf8(texts).map_err(|_| "terms that are not UTF-8")?;
        let mut dict = Self {
            arena: arena.to_owned(),
            spans: Vec::with_capacity(ends.len()),
            ids: HashTable::with_capacity(ends.len()),
            ..Self::default()
        };
        let mut start = 0u32;
        for (id, &end) in ends.iter().enumerate() {
            let text = arena
                .get(start as usize..end as usize)
                .ok_or("a term out of the dictionary")?;
            if text.is_empty() || dict.get(text).is_some() {
                return Err("an empty or repeated term");
            }
            dict.spans.push((start, end));
            let hash = dict.hasher.hash_one(text);
            let (arena, spans, hasher) = (&dict.arena, &dict.spans, &dict.hasher);
            dict.ids.insert_unique(hash, id as u32, |&i| {
                hasher.hash_one(text_at(arena, spans[i as usize]))
            });
            start = end;
        }
        if start as usize != arena.len() {
            return Err("bytes after the last term");
        }
        Ok(dict)
    }

    /// Bytes held on the heap (capacities; allocator overhead not counted).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.arena.capacity()
            + self.spans.capacity() * size_of::<(u32, u32)>()
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

    #[test]
    fn removed_texts_are_compacted_away_and_the_rest_still_found() {
        let mut dict = Dictionary::default();
        let words: Vec<String> = (0..2_000).map(|i| format!("word{i}")).collect();
        for w in &words {
            dict.intern(w);
        }
        for id in (0..2_000).filter(|id| id % 4 != 0) {
            dict.remove(id);
        }
        assert!(
            dict.arena.len() < 2 * 7 * 500 + COMPACT_MIN,
            "{}",
            dict.arena.len()
        );
        for (id, w) in words.iter().enumerate() {
            let want = (id % 4 == 0).then_some(id as u32);
            assert_eq!(dict.get(w), want, "{w}");
        }
        assert_eq!(dict.text(8), "word8");
        let (mut bytes, mut ends) = (Vec::new(), Vec::new());
        let mut fresh = Dictionary::default();
        for w in ["jazz", "thé", "北京"] {
            fresh.intern(w);
        }
        fresh.flatten(&mut bytes, &mut ends);
        let again = Dictionary::from_flat(&bytes, &ends).unwrap();
        assert_eq!((again.get("thé"), again.text(2)), (Some(1), "北京"));
        // Repeated, empty, cut inside a character, or trailing: refused.
        assert!(Dictionary::from_flat(b"abab", &[2, 4]).is_err());
        assert!(Dictionary::from_flat(b"ab", &[0, 2]).is_err());
        assert!(Dictionary::from_flat("é".as_bytes(), &[1, 2]).is_err());
        assert!(Dictionary::from_flat(b"abc", &[2]).is_err());
    }
}
