//! Weekdays: "last Friday", "this Monday", "next Sunday", "on Friday", "Friday night".

use super::super::calendar::{self, next_weekday, previous_weekday};
use super::super::tense::Tense;
use super::super::vocab;
use super::{At, Cx, Hit};

/// A weekday, optionally after last/this/next and before a part of the day.
///
/// - "last Friday": the most recent Friday strictly before the reference date;
///   "next Friday": the first one strictly after it.
/// - "this Friday": the one at or before the reference date in the past tense, else the one
///   at or after it.
/// - a bare "Friday": in the past tense the last one, in the future tense the next one; with
///   no tense marker only "on Friday" (or "by Friday"…) counts, as the next one ("I have an
///   exam on Friday").
pub(super) fn weekday(cx: &Cx<'_>, at: At) -> Option<Hit> {
    #[derive(PartialEq)]
    enum Which {
        Last,
        This,
        Next,
        Bare,
    }
    let words = cx.run(at.i, 3);
    let (which, k) = match words.as_slice() {
        ["last", ..] => (Which::Last, 1),
        ["this", "past", ..] => (Which::Last, 2),
        ["this", "coming", ..] => (Which::Next, 2),
        ["this", ..] => (Which::This, 1),
        ["next" | "coming", ..] => (Which::Next, 1),
        _ => (Which::Bare, 0),
    };
    let day = vocab::weekday(words.get(k)?)?;
    let mut end = at.i + k + 1;
    if cx.then(end).is_some_and(vocab::part_of_day) {
        end += 1;
    }
    let today = cx.today;
    let tense = cx.tense(at);
    let date = match which {
        Which::Last => previous_weekday(today, day, false),
        Which::Next => next_weekday(today, day, false),
        Which::This if tense == Tense::Past => previous_weekday(today, day, true),
        Which::This => next_weekday(today, day, true),
        Which::Bare => match tense {
            Tense::Past => previous_weekday(today, day, false),
            Tense::Future => next_weekday(today, day, false),
            Tense::Unknown if at.cue.is_some() => next_weekday(today, day, false),
            Tense::Unknown => None,
        },
    }?;
    Some((end, calendar::day(date)?))
}
