//! Turning the words after a pattern into a clean value.

use super::clause::Word;
use super::lexicon::listed;
use super::lexicon::{EMPTY_VALUES, TRAILING_FILLERS};
use super::tables::{PLACE_HEADS, TIME_NOUNS, TIME_TAILS};

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
    /// An activity or subject: cut at "in", "at", "with", "on", ...
    Activity,
    /// A plan: like a goal, but "in May" stays.
    Plan,
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
                "whenever", "unless", "which", "so",
            ],
            Kind::Job => &[
                "at", "for", "in", "with", "and", "who", "since", "because", "from", "by", "on",
                "then", "so",
            ],
            Kind::Organisation => &["as", "since", "because", "now", "in", "for", "where"],
            Kind::Goal => &["because", "so", "before", "which"],
            Kind::Date => &["and", "so", "which", "but"],
            Kind::Activity => &[
                "in", "at", "with", "on", "for", "since", "from", "because", "so", "every", "most",
                "when", "whenever", "to", "which", "but", "online", "via", "using", "after",
                "before", "than", "over", "instead", "rather", "during",
            ],
            Kind::Plan => &["because", "so", "which", "but", "with", "and"],
        }
    }

    /// The most words a value of this kind plausibly has.
    fn max_words(self) -> usize {
        match self {
            Kind::Goal | Kind::Plan => 10,
            Kind::Activity => 5,
            Kind::Place | Kind::Organisation | Kind::Date => 6,
            Kind::Thing | Kind::Job => 7,
        }
    }
}

/// The value in `words`: cut at the first stop word of `kind`, trailing fillers and
/// punctuation trimmed. `None` when nothing meaningful is left.
pub(crate) fn clean(words: &[Word], kind: Kind) -> Option<String> {
    let stops = kind.stops();
    let mut end = words
        .iter()
        .enumerate()
        .position(|(i, w)| i > 0 && listed(stops, w.lower()))
        .unwrap_or(words.len());
    if !matches!(kind, Kind::Plan | Kind::Date) {
        // "a support group yesterday", "Lisbon two years ago": when is not what.
        while let Some(start) =
            (1..end).find(|&i| super::when::span_at(&words[..end], i) == Some(end - i))
        {
            end = start;
        }
    }
    let mut words: Vec<&Word> = words[..end].iter().collect();
    strip_trailing_fillers(&mut words);
    if kind == Kind::Place {
        skip_place_head(&mut words);
    }
    if matches!(
        kind,
        Kind::Organisation | Kind::Thing | Kind::Activity | Kind::Plan
    ) {
        if let Some(first) = words.first() {
            if first.lower == "a" || first.lower == "an" {
                words.remove(0);
            }
        }
    }
    let first = words.first()?;
    if listed(EMPTY_VALUES, first.lower()) || words.len() > kind.max_words() {
        return None;
    }
    let text = words.iter().map(|w| w.text()).collect::<Vec<_>>().join(" ");
    let text = text.trim_matches(|c: char| !c.is_alphanumeric());
    (!text.is_empty()).then(|| text.to_owned())
}

/// "a small town in Portugal" → "Portugal": a generic head noun and its preposition go.
fn skip_place_head(words: &mut Vec<&Word>) {
    let head = words
        .iter()
        .take(4)
        .position(|w| listed(PLACE_HEADS, w.lower()));
    let Some(h) = head else {
        return;
    };
    let prep = words[h + 1..]
        .iter()
        .position(|w| matches!(w.lower(), "in" | "of" | "near" | "outside" | "on"));
    if let Some(p) = prep {
        let from = h + 1 + p + 1;
        if from < words.len() {
            words.drain(..from);
        }
    }
}

/// Whether `words` ends with a time adverbial of `tail` ("this summer", "on weekends").
fn time_tail_len(words: &[&Word]) -> Option<usize> {
    TIME_TAILS.iter().find_map(|tail| {
        let n = tail.len();
        (words.len() > n
            && words[words.len() - n..]
                .iter()
                .zip(tail.iter())
                .all(|(w, p)| {
                    if *p == "*" {
                        listed(TIME_NOUNS, w.lower())
                    } else {
                        w.lower == *p
                    }
                }))
        .then_some(n)
    })
}

fn strip_trailing_fillers(words: &mut Vec<&Word>) {
    loop {
        let before = words.len();
        if let Some(n) = time_tail_len(words) {
            words.truncate(words.len() - n);
        }
        for filler in TRAILING_FILLERS {
            // Most fillers fail on the last word: test that before counting words.
            let last = words.last().map_or("", |w| w.lower());
            let ends = filler
                .strip_suffix(last)
                .is_some_and(|head| !last.is_empty() && (head.is_empty() || head.ends_with(' ')));
            if !ends {
                continue;
            }
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

/// Folds paraphrases of one activity: "going hiking" / "go hiking" → "hiking".
pub(crate) fn fold_activity(value: &str) -> String {
    let mut words = value.split(' ');
    let first = words.next().unwrap_or("").to_lowercase();
    let rest: Vec<&str> = words.collect();
    let gerund = rest
        .first()
        .is_some_and(|w| w.len() > 4 && w.ends_with("ing"));
    if matches!(first.as_str(), "going" | "go" | "to") && gerund {
        return rest.join(" ");
    }
    value.to_owned()
}

/// Splits a list value ("shellfish and penicillin") into its items.
pub(crate) fn split_list<'w, 'a>(words: &'w [Word<'a>]) -> Vec<&'w [Word<'a>]> {
    let mut kept: Vec<&Word> = words.iter().collect();
    strip_trailing_fillers(&mut kept);
    let words = &words[..kept.len()];
    words
        .split(|w| matches!(w.lower(), "and" | "or" | "&" | "nor"))
        .map(strip_quantity)
        .filter(|part| !part.is_empty())
        .collect()
}

/// "a bit of Italian" → "Italian", "some French" → "French".
fn strip_quantity<'w, 'a>(part: &'w [Word<'a>]) -> &'w [Word<'a>] {
    const LEADS: &[&[&str]] = &[
        &["a", "bit", "of"],
        &["a", "little", "bit", "of"],
        &["a", "little"],
        &["some"],
        &["basic"],
        &["a", "lot", "of"],
        &["lots", "of"],
    ];
    for lead in LEADS {
        if part.len() > lead.len() && part.iter().zip(lead.iter()).all(|(w, l)| w.lower == *l) {
            return &part[lead.len()..];
        }
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word<'_>> {
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
