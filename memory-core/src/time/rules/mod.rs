//! The grammar of time expressions: rules that each recognise one family of expressions at
//! a word position, and the scan that keeps the longest match at each position.
//!
//! A rule sees the words from a position on, and optionally the preposition (cue) just
//! before it; words after the first must follow each other separated by spaces only, so an
//! expression never spans punctuation ("in March. 3 people came" is "in March" alone).

use std::cell::OnceCell;
use std::ops::Range;

use chrono::NaiveDate;

use super::lexer::Token;
use super::span::TimeSpan;
use super::tense::{Tense, Tenses};
use super::vocab::{self, Cue};

mod dates;
mod relative;
mod seasons;
mod weekday;

/// What a rule is given: the text, its words, the reference date and the tenses (read only
/// if a rule asks).
pub(super) struct Cx<'a> {
    text: &'a str,
    tokens: &'a [Token],
    /// The reference's calendar date (UTC).
    pub(super) today: NaiveDate,
    tenses: OnceCell<Tenses>,
}

/// Where a rule is tried.
#[derive(Debug, Clone, Copy)]
pub(super) struct At {
    /// The first word of the expression proper.
    pub(super) i: usize,
    /// The preposition just before it, if any ("in", "on", "since"…).
    pub(super) cue: Option<Cue>,
    /// The first word of the mention (the cue's, if there is one).
    pub(super) start: usize,
}

/// A match: the word after its last word, and the span it means.
pub(super) type Hit = (usize, TimeSpan);

type Rule = fn(&Cx<'_>, At) -> Option<Hit>;

/// Every rule. On a tie in length, the earlier rule wins.
const RULES: &[Rule] = &[
    relative::deictic,
    relative::past_n,
    relative::calendar_unit,
    relative::ago,
    relative::vague,
    weekday::weekday,
    dates::iso,
    dates::day_month,
    dates::month_day,
    dates::nth_of_month,
    dates::month_year,
    dates::month,
    dates::year,
    dates::decade,
    seasons::season,
];

impl<'a> Cx<'a> {
    pub(super) fn new(text: &'a str, tokens: &'a [Token], today: NaiveDate) -> Self {
        Self {
            text,
            tokens,
            today,
            tenses: OnceCell::new(),
        }
    }

    /// Word `i`, whatever precedes it.
    pub(super) fn first(&self, i: usize) -> Option<&'a str> {
        self.tokens.get(i).map(|t| t.lower.as_str())
    }

    /// Word `i` if only spaces separate it from word `i - 1`.
    pub(super) fn then(&self, i: usize) -> Option<&'a str> {
        let gap = self.gap(i)?;
        (!gap.is_empty() && gap.chars().all(|c| c == ' ' || c == '\t'))
            .then(|| self.first(i))
            .flatten()
    }

    /// Word `i` if spaces and at most one comma separate it from word `i - 1` ("March 3, 2019").
    pub(super) fn then_comma(&self, i: usize) -> Option<&'a str> {
        let gap = self.gap(i)?;
        let inline = gap.chars().all(|c| c == ' ' || c == '\t' || c == ',');
        (!gap.is_empty() && inline && gap.matches(',').count() <= 1)
            .then(|| self.first(i))
            .flatten()
    }

    /// The text between word `i - 1` and word `i`.
    pub(super) fn gap(&self, i: usize) -> Option<&'a str> {
        self.text.get(self.tokens.get(i)?.gap.clone())
    }

    /// Whether word `i` was written with a capital.
    pub(super) fn capital(&self, i: usize) -> bool {
        self.tokens.get(i).is_some_and(|t| t.capital)
    }

    /// The tense at the start of the mention.
    pub(super) fn tense(&self, at: At) -> Tense {
        self.tenses
            .get_or_init(|| Tenses::new(self.text, self.tokens))
            .at(at.start)
    }

    /// The words from `i` on that follow each other by spaces only, at most `n` of them
    /// (the first whatever precedes it).
    pub(super) fn run(&self, i: usize, n: usize) -> Vec<&'a str> {
        let mut words = Vec::with_capacity(n);
        for k in i..i + n {
            let word = if k == i { self.first(k) } else { self.then(k) };
            match word {
                Some(w) => words.push(w),
                None => break,
            }
        }
        words
    }

    /// A count at word `i` ("3", "two", "a", "a couple of", "a few", "several") and the word
    /// after it.
    pub(super) fn count(&self, i: usize) -> Option<(u32, usize)> {
        let words = self.run(i, 3);
        match words.as_slice() {
            ["a", "couple", "of", ..] => Some((2, i + 3)),
            ["a", "couple", ..] | ["couple", "of", ..] => Some((2, i + 2)),
            ["a", "few", ..] => Some((3, i + 2)),
            ["few" | "several", ..] => Some((3, i + 1)),
            ["a" | "an", ..] => Some((1, i + 1)),
            [w, ..] => vocab::digits(w)
                .or_else(|| vocab::number_word(w))
                .map(|n| (n, i + 1)),
            [] => None,
        }
    }

    /// How many words of modifier ("early", "the end of") start at word `i`.
    pub(super) fn modifier(&self, i: usize) -> usize {
        vocab::modifier_len(&self.run(i, 3))
    }
}

/// Every match in the text, in order, not overlapping: at each word, the longest match of
/// any rule, tried at the word itself and, if the word is a preposition, at the next one.
pub(super) fn scan(cx: &Cx<'_>) -> Vec<(Range<usize>, TimeSpan)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < cx.tokens.len() {
        let starts = |k: usize| cx.first(k).is_some_and(vocab::may_start);
        let cue_then_start = cx.first(i).and_then(vocab::cue).is_some() && starts(i + 1);
        if !(starts(i) || cue_then_start) {
            i += 1;
            continue;
        }
        let bare = At {
            i,
            cue: None,
            start: i,
        };
        let cued = cx.first(i).and_then(vocab::cue).and_then(|cue| {
            cx.then(i + 1).map(|_| At {
                i: i + 1,
                cue: Some(cue),
                start: i,
            })
        });
        let best = [Some(bare), cued]
            .into_iter()
            .flatten()
            .flat_map(|at| RULES.iter().filter_map(move |rule| rule(cx, at)))
            .filter(|(end, _)| *end > i && *end <= cx.tokens.len())
            .fold(None::<Hit>, |best, hit| match best {
                Some(b) if b.0 >= hit.0 => Some(b),
                _ => Some(hit),
            });
        match best {
            Some((end, span)) => {
                found.push((i..end, span));
                i = end;
            }
            None => i += 1,
        }
    }
    found
}
