//! Time in text: find the time expressions of an English message and resolve them against
//! the moment it was said.
//!
//! [`resolve`] turns "yesterday", "last Friday", "two weeks ago", "next month", "in May",
//! "on 3 March", "in 2019", "last summer" or "recently" into [`TimeSpan`]s: half-open
//! `[start, end)` spans in UTC with the [`Granularity`] the text named. [`strip`] removes
//! the expressions (for word search), [`asks_when`] tells whether a question asks when.
//!
//! The resolver is pure and rule-based: no clock, no locale, no allocation beyond the words
//! of the text. It works on the reference's calendar date in UTC (days start at midnight
//! UTC), weeks are ISO weeks (Monday to Sunday), seasons are the meteorological seasons of the
//! northern hemisphere. Where English is ambiguous it picks one documented reading:
//!
//! - "last Friday" is the most recent Friday strictly before the reference date, "next
//!   Friday" the first one strictly after it; "last weekend" the last one that ended before
//!   the reference date, "this weekend" the one of the current ISO week.
//! - a bare date or month ("on 3 March", "in May") is the most recent one at or before the
//!   reference, unless the sentence speaks of the future ("will", "'ll", "going to", "plan",
//!   "next"…), then the next one at or after it; a weekday ("on Friday", "Friday night") is
//!   the last one in the past tense and the next one otherwise (with neither tense nor
//!   preposition, as in "Friday is my favourite day", it is not read).
//! - the tense is that of the nearest marker before the expression in its clause, else after
//!   it: "I went to the doctor on Monday and will go again on Friday" reads both right.
//! - numeric dates other than ISO (`12/05`) are not read: day and month order is ambiguous.
//! - "three weeks ago" is the ISO week containing the day three weeks back, "two months ago"
//!   the calendar month two months back, "in 3 days" the day three days ahead (not in the
//!   past tense: "I did it in 3 days" is a duration).
//! - "a couple of" counts 2, "a few" and "several" 3; "recently" and "lately" are the last
//!   30 days, "the other day" the seven days before.
//! - "May", "March" and "August" alone must be capitalised ("this may take a while" is not a
//!   month), abbreviations ("Jan", "Sept") are read only next to a day or a year.
//!
//! ```
//! use agentmemory_core::time::{resolve, strip, Granularity};
//! use chrono::{TimeZone, Utc};
//!
//! // Said on Wednesday 13 May 2026.
//! let said = Utc.with_ymd_and_hms(2026, 5, 13, 18, 0, 0).unwrap();
//! let found = resolve("I adopted Miso last Friday, two weeks ago we were in Porto", said);
//! assert_eq!(found[0].text, "last Friday");
//! assert_eq!(found[0].span.label(), "2026-05-08");
//! assert_eq!(found[1].text, "two weeks ago");
//! assert_eq!(found[1].span.granularity, Granularity::Week);
//! assert_eq!(found[1].span.label(), "week of 2026-04-27");
//!
//! let question = "what did I do last weekend?";
//! assert_eq!(strip(question, &resolve(question, said)), "what did I do ?");
//! ```

use std::ops::Range;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

mod calendar;
mod lexer;
mod question;
mod rules;
mod span;
mod tense;
mod vocab;

pub(crate) use vocab::number_word;

#[cfg(test)]
mod tests;

pub use question::asks_when;
pub use span::{Granularity, TimeSpan};

/// One time expression found in a text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimeMention {
    /// Its bytes in the text (on character boundaries), a leading preposition included
    /// ("in May", "on Friday", "since 2019").
    pub range: Range<usize>,
    /// The words as written: `text[range]`.
    pub text: String,
    /// The span of time it means.
    pub span: TimeSpan,
}

/// Every time expression in `text`, in order and not overlapping, resolved against
/// `reference` (the moment the text was said).
///
/// Never panics: an expression whose date would fall outside chrono's range is left out.
///
/// ```
/// use agentmemory_core::time::{resolve, Granularity};
/// use chrono::{TimeZone, Utc};
///
/// let said = Utc.with_ymd_and_hms(2026, 1, 15, 9, 0, 0).unwrap();
/// let found = resolve("Yesterday I told her we moved in May 2019 and I'll visit next month", said);
/// let labels: Vec<(&str, String)> =
///     found.iter().map(|m| (m.text.as_str(), m.span.label())).collect();
/// assert_eq!(
///     labels,
///     [
///         ("Yesterday", "2026-01-14".to_owned()),
///         ("in May 2019", "May 2019".to_owned()),
///         ("next month", "February 2026".to_owned()),
///     ]
/// );
/// assert_eq!(found[2].span.granularity, Granularity::Month);
/// assert_eq!(&"Yesterday I told her"[found[0].range.clone()], "Yesterday");
/// ```
pub fn resolve(text: &str, reference: DateTime<Utc>) -> Vec<TimeMention> {
    let tokens = lexer::tokenize(text);
    let cx = rules::Cx::new(text, &tokens, reference.date_naive());
    rules::scan(&cx)
        .into_iter()
        .filter_map(|(words, span)| {
            let first = tokens.get(words.start)?;
            let last = tokens.get(words.end.checked_sub(1)?)?;
            let range = first.range.start..last.range.end;
            let text = text.get(range.clone())?.to_owned();
            Some(TimeMention { range, text, span })
        })
        .collect()
}

/// `text` without the `mentions` (as found by [`resolve`] in the same text), whitespace
/// collapsed to single spaces: the words left for word search.
///
/// Mentions whose range does not fit the text, or that overlap an earlier one, are ignored.
///
/// ```
/// use agentmemory_core::time::{resolve, strip};
/// use chrono::{TimeZone, Utc};
///
/// let said = Utc.with_ymd_and_hms(2026, 5, 13, 18, 0, 0).unwrap();
/// let question = "When did I move to Porto, in 2019 or last summer?";
/// assert_eq!(strip(question, &resolve(question, said)), "When did I move to Porto, or ?");
/// assert_eq!(strip("nothing here", &[]), "nothing here");
/// ```
pub fn strip(text: &str, mentions: &[TimeMention]) -> String {
    let mut ranges: Vec<&Range<usize>> = mentions.iter().map(|m| &m.range).collect();
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut kept = String::with_capacity(text.len());
    let mut at = 0;
    for range in ranges {
        if range.start < at {
            continue;
        }
        let (Some(before), Some(_)) = (text.get(at..range.start), text.get(range.clone())) else {
            continue;
        };
        kept.push_str(before);
        kept.push(' ');
        at = range.end;
    }
    kept.push_str(text.get(at..).unwrap_or_default());
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}
