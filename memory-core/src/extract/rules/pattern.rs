//! A tiny word-pattern language for the rule tables, and what a rule finds.
//!
//! A pattern is words separated by spaces; `a|an` matches either word, a trailing `?`
//! makes a word optional: `"work as a|an?"` matches "work as", "work as a", "work as an".

use crate::facts::Polarity;

use super::clause::Word;
use super::value::{self, Kind};

/// The number of words of `words` that `pattern` matches at its start, if it matches.
pub(crate) fn match_prefix(words: &[Word], pattern: &str) -> Option<usize> {
    match_parts(words, Parts(Some(pattern)))
}

/// The space-separated parts of a pattern, split on bytes (patterns are ASCII-spaced;
/// `str::split` with a char pattern cost more than the matching itself).
#[derive(Clone, Copy)]
struct Parts<'p>(Option<&'p str>);

impl<'p> Iterator for Parts<'p> {
    type Item = &'p str;

    // As `str::split(' ')`: an empty pattern is one empty part.
    fn next(&mut self) -> Option<&'p str> {
        let rest = self.0?;
        match rest.bytes().position(|b| b == b' ') {
            Some(i) => {
                self.0 = Some(&rest[i + 1..]);
                Some(&rest[..i])
            }
            None => {
                self.0 = None;
                Some(rest)
            }
        }
    }
}

/// Whether `word` is one of the `|`-separated `alternatives`.
fn is_alternative(alternatives: &str, word: &str) -> bool {
    let (a, w) = (alternatives.as_bytes(), word.as_bytes());
    if w.len() > a.len() {
        return false;
    }
    a.split(|b| *b == b'|').any(|alt| alt == w)
}

fn match_parts(words: &[Word], mut parts: Parts<'_>) -> Option<usize> {
    let Some(part) = parts.next() else {
        return Some(0);
    };
    let (alternatives, optional) = match part.strip_suffix('?') {
        Some(p) => (p, true),
        None => (part, false),
    };
    let here = words
        .first()
        .filter(|w| is_alternative(alternatives, &w.lower))
        .and_then(|_| match_parts(&words[1..], parts).map(|n| n + 1));
    match here {
        Some(n) => Some(n),
        None if optional => match_parts(words, parts),
        None => None,
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
pub(crate) fn first_match<'r, 'w>(
    table: &'r [Rule],
    words: &'w [Word],
) -> Option<(&'r Rule, &'w [Word])> {
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

    fn words(s: &str) -> Vec<Word> {
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
