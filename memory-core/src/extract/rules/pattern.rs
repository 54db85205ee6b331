//! A tiny word-pattern language for the rule tables, and what a rule finds.
//!
//! A pattern is words separated by spaces; `a|an` matches either word, a trailing `?`
//! makes a word optional: `"work as a|an?"` matches "work as", "work as a", "work as an".

use crate::facts::Polarity;

use super::clause::Word;
use super::value::{self, Kind};

/// The number of words of `words` that `pattern` matches at its start, if it matches.
pub(crate) fn match_prefix(words: &[Word], pattern: &str) -> Option<usize> {
    match_from(words, pattern.as_bytes(), 0)
}

/// Matches the space-separated parts of `pattern` against `words`, counting the
/// `matched` words so far. Reads the pattern's bytes once, in place (the extractor calls
/// this a few thousand times a message): no splitting, no allocation, no library calls.
fn match_from(words: &[Word], pattern: &[u8], matched: usize) -> Option<usize> {
    let word = words.first().map_or(&[][..], |w| w.lower.as_bytes());
    // One pass over the first part: does `word` equal one of its alternatives?
    let mut hit = false;
    let mut optional = false;
    let mut i = 0;
    let mut j = 0; // bytes of `word` matched in the current alternative, or usize::MAX
    loop {
        let b = pattern.get(i).copied();
        match b {
            None | Some(b' ' | b'|' | b'?') => {
                hit |= j == word.len() && !word.is_empty();
                j = 0;
                match b {
                    Some(b'|') => {}
                    Some(b'?') => optional = true,
                    _ => break,
                }
            }
            Some(b) => {
                j = if word.get(j) == Some(&b) {
                    j + 1
                } else {
                    usize::MAX - 1
                };
            }
        }
        i += 1;
    }
    let rest = pattern.get(i + 1..);
    let next = |words: &[Word], matched: usize| match rest {
        Some(rest) => match_from(words, rest, matched),
        None => Some(matched),
    };
    if hit {
        if let Some(n) = next(&words[1..], matched + 1) {
            return Some(n);
        }
    }
    if optional {
        next(words, matched)
    } else {
        None
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
        }
    }
}

/// The first rule of `table` whose pattern opens `words`, and the words after it.
pub(crate) fn first_match<'r, 'w, 'a>(
    table: &'r [Rule],
    words: &'w [Word<'a>],
) -> Option<(&'r Rule, &'w [Word<'a>])> {
    table
        .iter()
        .find_map(|rule| match_prefix(words, rule.pattern).map(|n| (rule, &words[n..])))
}

/// The clean value after a matched rule (see [`value::clean`]).
pub(crate) fn value_of(rule: &Rule, rest: &[Word]) -> Option<String> {
    value::clean(rest, rule.kind)
}

/// A fact a rule found, before it becomes a `FactCandidate`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub(crate) attribute: &'static str,
    pub(crate) value: String,
    pub(crate) text: String,
    pub(crate) polarity: Polarity,
    pub(crate) confidence: f32,
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
