//! Turning the words after a pattern into a clean value.

use super::clause::Word;
use super::lexicon::{EMPTY_VALUES, TRAILING_FILLERS};

/// How a value ends, by the kind of attribute it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A place: cut at "with", "since", "for", ...
    Place,
    /// A liked or disliked thing: cut at "over", "rather", "because", ...
    Thing,
    /// A job title: cut at "at", "for", "in", ...
    Job,
    /// An organisation.
    Organisation,
    /// An aim, a verb phrase.
    Goal,
    /// A date.
    Date,
}

impl Kind {
    /// Words where the value stops.
    fn stops(self) -> &'static [&'static str] {
        match self {
            Kind::Place => &[
                "with",
                "since",
                "for",
                "because",
                "now",
                "these",
                "last",
                "right",
                "currently",
                "nowadays",
                "when",
                "where",
                "which",
                "who",
                "and",
                "as",
                "until",
                "ever",
            ],
            Kind::Thing => &[
                "over", "rather", "more", "because", "when", "since", "if", "than", "instead",
                "whenever", "unless", "which",
            ],
            Kind::Job => &[
                "at", "for", "in", "with", "and", "who", "since", "because", "from", "by", "on",
            ],
            Kind::Organisation => &["as", "since", "because", "now", "in", "for", "where"],
            Kind::Goal => &["because", "so", "before", "which"],
            Kind::Date => &["and", "so", "which", "but"],
        }
    }

    /// The most words a value of this kind plausibly has.
    fn max_words(self) -> usize {
        match self {
            Kind::Goal => 10,
            Kind::Place | Kind::Organisation | Kind::Date => 6,
            Kind::Thing | Kind::Job => 7,
        }
    }
}

/// The value in `words`: cut at the first stop word of `kind`, trailing fillers and
/// punctuation trimmed. `None` when nothing meaningful is left.
pub(crate) fn clean(words: &[Word], kind: Kind) -> Option<String> {
    let stops = kind.stops();
    let end = words
        .iter()
        .enumerate()
        .position(|(i, w)| i > 0 && stops.contains(&w.lower.as_str()))
        .unwrap_or(words.len());
    let mut words: Vec<&Word> = words[..end].iter().collect();
    strip_trailing_fillers(&mut words);
    if kind == Kind::Organisation || kind == Kind::Thing {
        if let Some(first) = words.first() {
            if first.lower == "a" || first.lower == "an" {
                words.remove(0);
            }
        }
    }
    let first = words.first()?;
    if EMPTY_VALUES.contains(&first.lower.as_str()) || words.len() > kind.max_words() {
        return None;
    }
    let text = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let text = text.trim_matches(|c: char| !c.is_alphanumeric());
    (!text.is_empty()).then(|| text.to_owned())
}

fn strip_trailing_fillers(words: &mut Vec<&Word>) {
    loop {
        let before = words.len();
        for filler in TRAILING_FILLERS {
            let n = filler.split(' ').count();
            if words.len() > n
                && words[words.len() - n..]
                    .iter()
                    .zip(filler.split(' '))
                    .all(|(w, p)| w.lower == p)
            {
                words.truncate(words.len() - n);
            }
        }
        if words.len() == before {
            return;
        }
    }
}

/// Splits a list value ("shellfish and penicillin") into its items.
pub(crate) fn split_list(words: &[Word]) -> Vec<&[Word]> {
    let mut kept: Vec<&Word> = words.iter().collect();
    strip_trailing_fillers(&mut kept);
    let words = &words[..kept.len()];
    words
        .split(|w| matches!(w.lower.as_str(), "and" | "or" | "&" | "nor"))
        .filter(|part| !part.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::new).collect()
    }

    #[test]
    fn fillers_and_stop_words_are_trimmed() {
        assert_eq!(
            clean(&words("jazz a lot"), Kind::Thing).as_deref(),
            Some("jazz")
        );
        assert_eq!(
            clean(&words("cats too"), Kind::Thing).as_deref(),
            Some("cats")
        );
        assert_eq!(
            clean(&words("Toronto these days"), Kind::Place).as_deref(),
            Some("Toronto")
        );
        assert_eq!(
            clean(&words("Sydney since 2015"), Kind::Place).as_deref(),
            Some("Sydney")
        );
        assert_eq!(
            clean(&words("tea over coffee"), Kind::Thing).as_deref(),
            Some("tea")
        );
        assert_eq!(
            clean(&words("a fintech company"), Kind::Organisation).as_deref(),
            Some("fintech company")
        );
    }

    #[test]
    fn pronoun_values_are_rejected() {
        assert_eq!(clean(&words("it when it rains"), Kind::Thing), None);
        assert_eq!(clean(&words("too"), Kind::Thing).as_deref(), Some("too"));
        assert_eq!(clean(&[], Kind::Thing), None);
    }

    #[test]
    fn lists_split_on_and_or() {
        let w = words("shellfish and penicillin");
        assert_eq!(split_list(&w).len(), 2);
    }
}
