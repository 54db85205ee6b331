//! Expressions counted from the reference date: "today", "yesterday", "last night",
//! "last/this/next week", "the week before last", "three days ago", "in two months",
//! "the past few days", "recently", "earlier this year".

use chrono::{Datelike, NaiveDate};

use super::super::calendar::{self, add_days, add_months};
use super::super::span::{Granularity, TimeSpan};
use super::super::tense::Tense;
use super::super::vocab::{self, Cue, Unit};
use super::{At, Cx, Hit};

/// The unit containing `today` moved by `n` units: `n = -1` with weeks is last week.
///
/// Weekends count from the weekend of today's ISO week (see `calendar::weekend`), so `-1` is
/// always the last weekend that ended before today.
pub(super) fn unit_span(today: NaiveDate, unit: Unit, n: i64) -> Option<TimeSpan> {
    match unit {
        Unit::Day => calendar::day(add_days(today, n)?),
        Unit::Week => calendar::week(add_days(today, n.checked_mul(7)?)?),
        Unit::Fortnight => calendar::week(add_days(today, n.checked_mul(14)?)?),
        Unit::Weekend => calendar::weekend(today, n),
        Unit::Month => calendar::month_at(calendar::month_index(today).checked_add(n)?),
        Unit::Year => calendar::year(shift_year(today, n)?),
        Unit::Decade => {
            let year = shift_year(today, n.checked_mul(10)?)?;
            calendar::decade(year.checked_sub(year.rem_euclid(10))?)
        }
    }
}

fn shift_year(today: NaiveDate, n: i64) -> Option<i32> {
    i32::try_from(i64::from(today.year()).checked_add(n)?).ok()
}

/// `today` moved back by `n` units (the start of "the past `n` units").
fn back(today: NaiveDate, unit: Unit, n: i64) -> Option<NaiveDate> {
    match unit {
        Unit::Day => add_days(today, -n),
        Unit::Week | Unit::Weekend => add_days(today, -n.checked_mul(7)?),
        Unit::Fortnight => add_days(today, -n.checked_mul(14)?),
        Unit::Month => add_months(today, -n),
        Unit::Year => add_months(today, -n.checked_mul(12)?),
        Unit::Decade => add_months(today, -n.checked_mul(120)?),
    }
}

/// `[from, to]`, both days included, as a [`Granularity::Range`].
fn days_range(from: NaiveDate, to: NaiveDate) -> Option<TimeSpan> {
    calendar::span(from, to.succ_opt()?, Granularity::Range)
}

/// "today", "tonight", "this morning", "earlier today", "yesterday (evening)", "last
/// night", "tomorrow (morning)", "the day before yesterday", "the day after tomorrow".
pub(super) fn deictic(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let words = cx.run(at.i, 4);
    let part = |k: usize| usize::from(words.get(k).is_some_and(|w| vocab::part_of_day(w)));
    let (offset, len) = match words.as_slice() {
        ["today" | "tonight", ..] => (0, 1),
        ["earlier" | "later", "today" | "tonight", ..] => (0, 2),
        ["this", "morning" | "afternoon" | "evening", ..] => (0, 2),
        ["last", "night", ..] => (-1, 2),
        ["the", "day", "before", "yesterday", ..] => (-2, 4),
        ["the", "day", "after", "tomorrow", ..] => (2, 4),
        ["day", "before", "yesterday", ..] => (-2, 3),
        ["day", "after", "tomorrow", ..] => (2, 3),
        ["yesterday", ..] => (-1, 1 + part(1)),
        ["tomorrow", ..] => (1, 1 + part(1)),
        _ => return None,
    };
    Some((at.i + len, calendar::day(add_days(cx.today, offset)?)?))
}

/// "last/this/next week|weekend|month|year", "this past week", "the coming weekend", "the
/// week before last", "the month after next".
pub(super) fn calendar_unit(cx: &Cx<'_>, at: At) -> Option<Hit> {
    enum Which {
        Shift(i64),
        ThisPast,
    }
    let words = cx.run(at.i, 4);
    let the = usize::from(words.first() == Some(&"the"));
    let (which, unit_at) = match &words[the..] {
        ["last", ..] => (Which::Shift(-1), 1),
        ["this", "past", ..] => (Which::ThisPast, 2),
        ["this", "coming", ..] => (Which::Shift(1), 2),
        ["coming", ..] => (Which::Shift(1), 1),
        ["this", ..] => (Which::Shift(0), 1),
        ["next", ..] => (Which::Shift(1), 1),
        [_, "before", "last", ..] => (Which::Shift(-2), 0),
        [_, "after", "next", ..] => (Which::Shift(2), 0),
        _ => return None,
    };
    let (unit, plural) = vocab::unit(words.get(the + unit_at)?)?;
    if plural || !matches!(unit, Unit::Week | Unit::Weekend | Unit::Month | Unit::Year) {
        return None;
    }
    let len = the + unit_at + if unit_at == 0 { 3 } else { 1 };
    let today = cx.today;
    let span = match which {
        // "the coming weekend" on a Saturday is this one.
        Which::Shift(1) if unit == Unit::Weekend && words[the..].contains(&"coming") => {
            calendar::weekend(today, 0)?
        }
        Which::Shift(n) => unit_span(today, unit, n)?,
        Which::ThisPast if unit == Unit::Weekend => calendar::weekend_at_or_before(today)?,
        Which::ThisPast => days_range(back(today, unit, 1)?, today)?,
    };
    Some((at.i + len, span))
}

/// "three days ago", "a couple of weeks ago", "two years from now", and, after "in" and not
/// in the past tense, "in 3 days" ("I did it in 3 days" is a duration).
pub(super) fn ago(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let (n, unit_at) = cx.count(at.i)?;
    let (unit, _) = vocab::unit(cx.then(unit_at)?)?;
    if cx.gap(unit_at + 1).is_some_and(|gap| gap.starts_with('-')) {
        return None; // "in a week-long sprint"
    }
    let n = i64::from(n);
    let today = cx.today;
    match (cx.then(unit_at + 1), cx.then(unit_at + 2)) {
        (Some("ago"), _) => Some((unit_at + 2, unit_span(today, unit, -n)?)),
        (Some("from"), Some("now")) => Some((unit_at + 3, unit_span(today, unit, n)?)),
        _ if at.cue == Some(Cue::In) && cx.tense(at) != Tense::Past => {
            Some((unit_at + 1, unit_span(today, unit, n)?))
        }
        _ => None,
    }
}

/// "the past few days", "the last two weeks", "last 3 months", "this past year" → the
/// range from that far back up to and including today. Without a count, "the" is required
/// ("the past week"): "last week" alone is the calendar week.
pub(super) fn past_n(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let mut k = at.i;
    let the = matches!(cx.first(k), Some("the" | "these"));
    if the {
        k += 1;
    }
    let word = if the { cx.then(k)? } else { cx.first(k)? };
    if !matches!(word, "past" | "last") {
        return None;
    }
    k += 1;
    cx.then(k)?;
    let (n, unit_at) = match cx.count(k) {
        Some((n, next)) if cx.then(next).and_then(vocab::unit).is_some() => (n, next),
        _ if the => (1, k),
        _ => return None,
    };
    let (unit, plural) = vocab::unit(cx.then(unit_at)?)?;
    if unit_at == k && (plural || unit == Unit::Weekend) {
        return None;
    }
    let today = cx.today;
    Some((
        unit_at + 1,
        days_range(back(today, unit, i64::from(n))?, today)?,
    ))
}

/// "recently", "lately" (the last 30 days), "the other day" (the week before today),
/// "the weekend" (the current or last one; in the future tense the current or next one),
/// "earlier this week|month|year", "later this week|month|year".
pub(super) fn vague(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let today = cx.today;
    let words = cx.run(at.i, 3);
    let (span, len) = match words.as_slice() {
        ["recently" | "lately", ..] => (days_range(add_days(today, -30)?, today)?, 1),
        ["the", "weekend", ..] if cx.tense(at) == Tense::Future => {
            (calendar::weekend(today, 0)?, 2)
        }
        ["the", "weekend", ..] => (calendar::weekend_at_or_before(today)?, 2),
        ["the", "other", "day", ..] => {
            let from = add_days(today, -7)?;
            (calendar::span(from, today, Granularity::Range)?, 3)
        }
        [when @ ("earlier" | "later"), "this", unit, ..] => {
            let unit = match vocab::unit(unit)? {
                (u @ (Unit::Week | Unit::Month | Unit::Year), false) => u,
                _ => return None,
            };
            let whole = unit_span(today, unit, 0)?;
            let span = if *when == "earlier" {
                days_range(whole.start.date_naive(), today)?
            } else {
                calendar::span(today, whole.end.date_naive(), Granularity::Range)?
            };
            (span, 3)
        }
        _ => return None,
    };
    Some((at.i + len, span))
}
