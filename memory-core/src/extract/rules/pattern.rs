//! A tiny word-pattern language for the rule tables, and what a rule finds.
//!
//! A pattern is words separated by spaces; `a|an` matches either word, a trailing `?`
//! makes a word optional: `"work as a|an?"` matches "work as", "work as a", "work as an".

use crate::facts::Polarity;

use super::clause::Word;
use super::lexicon::same;
use super::value::{self, Kind};

/// The number of words of `words` that `pattern` matches at its start, if it matches.
///
/// Each pattern is parsed once per thread into its parts (a few thousand calls a message
/// then cost a table probe and length-first comparisons, not a scan of the pattern).
pub(crate) fn match_prefix(words: &[Word], pattern: &'static str) -> Option<usize> {
    COMPILED.with(|cache| {
        let mut cache = cache.borrow_mut();
        let parts = cache
            .entry((pattern.as_ptr() as usize, pattern.len()))
            .or_insert_with(|| compile(pattern));
        match_parts(words, parts)
    })
}

/// One space-separated part of a pattern: its `|` alternatives, and whether `?` made it
/// optional.
#[derive(Debug)]
struct Part {
    alternatives: Vec<&'static str>,
    optional: bool,
}

thread_local! {
    /// Parsed patterns, by address and length of the pattern text (patterns are static).
    static COMPILED: std::cell::RefCell<ByAddress<Vec<Part>>> = Default::default();
}

fn compile(pattern: &'static str) -> Vec<Part> {
    pattern
        .split(' ')
        .map(|part| {
            let (alternatives, optional) = match part.strip_suffix('?') {
                Some(p) => (p, true),
                None => (part, false),
            };
            Part {
                alternatives: alternatives.split('|').collect(),
                optional,
            }
        })
        .collect()
}

fn match_parts(words: &[Word], parts: &[Part]) -> Option<usize> {
    let Some((part, rest)) = parts.split_first() else {
        return Some(0);
    };
    let here = words
        .first()
        .filter(|w| part.alternatives.iter().any(|a| same(a, w.lower())))
        .and_then(|_| match_parts(&words[1..], rest).map(|n| n + 1));
    match here {
        Some(n) => Some(n),
        None if part.optional => match_parts(words, rest),
        None => None,
    }
}

/// Parsed static data, by the (address, length) of its source.
type ByAddress<T> = std::collections::HashMap<(usize, usize), T, BuildAddressHasher>;

/// Hashes the (address, length) of a static pattern: one multiply, no SipHash.
#[derive(Default, Clone, Copy)]
struct BuildAddressHasher;

impl std::hash::BuildHasher for BuildAddressHasher {
    type Hasher = AddressHasher;
    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

/// See [`BuildAddressHasher`].
#[derive(Default, Clone, Copy)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// One row of a rule table: a pattern, what it means, and how sure it makes us.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    /// The words that introduce the value.
    pub(crate) pattern: &'static str,
    /// The attribute key.
    pub(crate) attribute: &'static str,
    /// The polarity when not negated.
    pub(crate) polarity: Polarity,
    /// Confidence, by how explicit the pattern is.
    pub(crate) confidence: f32,
    /// Third-person text, `{}` standing for the value.
    pub(crate) template: &'static str,
    /// How the value ends.
    pub(crate) kind: Kind,
}

impl Rule {
    /// A positive rule.
    pub(crate) const fn pos(
        pattern: &'static str,
        attribute: &'static str,
        confidence: f32,
        template: &'static str,
        kind: Kind,
    ) -> Self {
        Self {
            pattern,
            attribute,
            polarity: Polarity::Positive,
            confidence,
            template,
            kind,
        }
    }

    /// A negative rule.
    pub(crate) const fn neg(
        pattern: &'static str,
        attribute: &'static str,
        confidence: f32,
        template: &'static str,
        kind: Kind,
    ) -> Self {
        Self {
            polarity: Polarity::Negative,
            ..Self::pos(pattern, attribute, confidence, template, kind)
        }
    }

    /// The fact this rule states about `value`.
    pub(crate) fn found(&self, value: String) -> Found {
        Found {
            attribute: self.attribute,
            text: self.template.replace("{}", &value),
            value,
            polarity: self.polarity,
            confidence: self.confidence,
            ..Found::default()
        }
    }
}

/// The first rule of `table` whose pattern opens `words`, and the words after it. The
/// table's patterns are parsed once per thread, and found with one probe per call.
pub(crate) fn first_match<'w, 'a>(
    table: &'static [Rule],
    words: &'w [Word<'a>],
) -> Option<(&'static Rule, &'w [Word<'a>])> {
    COMPILED_TABLES.with(|cache| {
        let mut cache = cache.borrow_mut();
        let compiled = cache
            .entry((table.as_ptr() as usize, table.len()))
            .or_insert_with(|| table.iter().map(|rule| compile(rule.pattern)).collect());
        compiled
            .iter()
            .zip(table)
            .find_map(|(parts, rule)| match_parts(words, parts).map(|n| (rule, &words[n..])))
    })
}

thread_local! {
    /// Parsed rule tables, by address and length of the table (tables are static).
    static COMPILED_TABLES: std::cell::RefCell<ByAddress<Vec<Vec<Part>>>> = Default::default();
}

/// The clean value after a matched rule (see [`value::clean`]).
pub(crate) fn value_of(rule: &Rule, rest: &[Word]) -> Option<String> {
    value::clean(rest, rule.kind)
}

/// A fact a rule found, before it becomes a `FactCandidate`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Found {
    pub(crate) attribute: &'static str,
    pub(crate) value: String,
    pub(crate) text: String,
    pub(crate) polarity: Polarity,
    pub(crate) confidence: f32,
    /// Whom it is about when not the user ("daughter Zoe").
    pub(crate) subject: Option<String>,
    /// How it may end or replace a held fact of another attribute.
    pub(crate) transition: Option<crate::facts::Transition>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word<'_>> {
        s.split_whitespace().map(Word::new).collect()
    }

    #[test]
    fn alternatives_and_optionals() {
        assert_eq!(
            match_prefix(&words("work as a nurse"), "work as a|an?"),
            Some(3)
        );
        assert_eq!(
            match_prefix(&words("work as nurse"), "work as a|an?"),
            Some(2)
        );
        assert_eq!(match_prefix(&words("work at Acme"), "work as a|an?"), None);
        assert_eq!(match_prefix(&words("am"), "am a fan of"), None);
        assert_eq!(match_prefix(&words("anything"), ""), None);
    }
}
