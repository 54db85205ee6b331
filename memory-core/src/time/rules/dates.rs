//! Named dates: "2023-05-07", "3 March", "the 3rd of March 2019", "Friday, March 3rd",
//! "on the 3rd", "May 2019", "in May", "last May", "in 2019", "the 90s".
//!
//! A date or month without a year is the most recent one at or before the reference, unless
//! the sentence speaks of the future ("we will go in May"), then the next one at or after it.

use chrono::{Datelike, NaiveDate};

use super::super::calendar::{self, add_months};
use super::super::tense::Tense;
use super::super::vocab::{self, MonthName};
use super::{At, Cx, Hit};

/// `2023-05-07`, `2023/05/07` (a time may follow: `2023-05-07T10:00`), or `2023-05` for the
/// month.
pub(super) fn iso(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let i = at.i;
    let year = vocab::year4(cx.first(i)?)?;
    let sep = cx.gap(i + 1)?;
    if sep != "-" && sep != "/" {
        return None;
    }
    let month_word = cx.first(i + 1)?;
    if !(1..=2).contains(&month_word.len()) || !month_word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let month: u32 = month_word.parse().ok()?;
    if cx.gap(i + 2) == Some(sep) {
        let day_word = cx.first(i + 2)?;
        let digits = day_word.bytes().take_while(u8::is_ascii_digit).count();
        let rest = day_word.get(digits..)?;
        if !(1..=2).contains(&digits) || !(rest.is_empty() || rest.starts_with('t')) {
            return None;
        }
        let day = day_word.get(..digits)?.parse().ok()?;
        let date = NaiveDate::from_ymd_opt(year, month, day)?;
        return Some((i + 3, calendar::day(date)?));
    }
    (month_word.len() == 2)
        .then(|| calendar::month(year, month))
        .flatten()
        .map(|span| (i + 2, span))
}

/// "3 March", "3rd of March", "the 3rd of March, 2019", "Friday 3 March".
///
/// Without an ordinal suffix, "of" or a year, "may", "march" and "august" must be
/// capitalised ("3 may" is not read).
pub(super) fn day_month(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let (mut k, mut word) = lead(cx, at.i)?;
    if word == "the" {
        k += 1;
        word = cx.then(k)?;
    }
    let (day, ordinal) = vocab::day_of_month(word)?;
    k += 1;
    let of = cx.then(k) == Some("of");
    if of {
        k += 1;
    }
    let month_at = k;
    let (month, kind) = vocab::month(cx.then(month_at)?)?;
    k += 1;
    let year = year_after(cx, k);
    if year.is_some() {
        k += 1;
    }
    let clear = ordinal || of || year.is_some() || cx.capital(month_at);
    if !clear && kind != MonthName::Plain {
        return None;
    }
    Some((k, calendar::day(date_for(cx, at, year, month, day)?)?))
}

/// "March 3", "March 3rd, 2019", "May the 4th", "Friday, March 3".
pub(super) fn month_day(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let (mut k, word) = lead(cx, at.i)?;
    let (month, _) = vocab::month(word)?;
    k += 1;
    if cx.then(k) == Some("the") {
        k += 1;
    }
    let (day, ordinal) = vocab::day_of_month(cx.then(k)?)?;
    k += 1;
    if !ordinal && cx.then(k).is_some_and(vocab::measure) {
        return None; // "in May 3 people left"
    }
    let year = year_after(cx, k);
    if year.is_some() {
        k += 1;
    }
    Some((k, calendar::day(date_for(cx, at, year, month, day)?)?))
}

/// "on the 3rd": that day of the current month if it is not after the reference date, else of
/// the month before (in the future tense: not before, else the month after).
pub(super) fn nth_of_month(cx: &Cx<'_>, at: At) -> Option<Hit> {
    at.cue?;
    if cx.first(at.i)? != "the" {
        return None;
    }
    let (day, ordinal) = vocab::day_of_month(cx.then(at.i + 1)?)?;
    if !ordinal {
        return None;
    }
    let today = cx.today;
    let future = cx.tense(at) == Tense::Future;
    let first = today.with_day(1)?;
    (0..12)
        .find_map(|k: i64| {
            let month = add_months(first, if future { k } else { -k })?;
            let date = month.with_day(day)?;
            let fits = if future { date >= today } else { date <= today };
            fits.then(|| calendar::day(date)).flatten()
        })
        .map(|span| (at.i + 2, span))
}

/// "May 2019", "May of 2019", "early May 2019", "Jan 2020".
pub(super) fn month_year(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let modifier = cx.modifier(at.i);
    let k = at.i + modifier;
    let word = if modifier == 0 {
        cx.first(k)?
    } else {
        cx.then(k)?
    };
    let (month, _) = vocab::month(word)?;
    let mut y = k + 1;
    if cx.then(y) == Some("of") {
        y += 1;
    }
    let year = year_after(cx, y)?;
    Some((y + 1, calendar::month(year, month)?))
}

/// A month name alone: "in May", "since June", "early May", "the end of March", "last May",
/// "next May", "this May".
///
/// "last May" is the most recent May before the reference's month, "next May" the first one
/// after it, "this May" the one of the reference's year. Alone, a month needs a preposition
/// or a modifier, and "May", "March" and "August" must be capitalised (except after "last",
/// "next" or a modifier): "this may take a while" and "we march on" are not months. It is
/// the most recent such month at or before the reference's month when the sentence speaks of
/// the past, the first one at or after it when it speaks of the future, the nearer of the
/// two when it speaks of neither.
pub(super) fn month(cx: &Cx<'_>, at: At) -> Option<Hit> {
    #[derive(PartialEq)]
    enum Which {
        Last,
        Next,
        This,
        Bare,
    }
    let (which, k) = match cx.first(at.i)? {
        "last" => (Which::Last, 1),
        "next" => (Which::Next, 1),
        "this" => (Which::This, 1),
        _ => (Which::Bare, cx.modifier(at.i)),
    };
    let month_at = at.i + k;
    let word = if k == 0 {
        cx.first(month_at)?
    } else {
        cx.then(month_at)?
    };
    let (month, kind) = vocab::month(word)?;
    let clear = match kind {
        MonthName::Short => false,
        MonthName::Ambiguous => {
            let after_modifier = k > 0 && which == Which::Bare;
            cx.capital(month_at) || matches!(which, Which::Last | Which::Next) || after_modifier
        }
        MonthName::Plain => true,
    };
    if !clear || (which == Which::Bare && at.cue.is_none() && k == 0) {
        return None;
    }
    let (year, now) = (cx.today.year(), cx.today.month());
    // "March last year", "in June next year", "May this year": the year is named.
    let named = match (cx.then(month_at + 1), cx.then(month_at + 2)) {
        (Some("last"), Some("year")) => Some(year - 1),
        (Some("this"), Some("year")) => Some(year),
        (Some("next"), Some("year")) => Some(year + 1),
        _ => None,
    };
    if let Some(year) = named.filter(|_| which == Which::Bare) {
        return Some((month_at + 3, calendar::month(year, month)?));
    }
    let year = match which {
        Which::Last if month < now => year,
        Which::Last => year - 1,
        Which::Next if month > now => year,
        Which::Next => year + 1,
        Which::This => year,
        Which::Bare => match cx.tense(at) {
            Tense::Future => year + i32::from(month < now),
            Tense::Past => year - i32::from(month > now),
            // No tense to go by ("the concert is in May"): the nearer one, the past one
            // on a tie.
            Tense::Unknown => {
                let back = (now + 12 - month) % 12;
                let ahead = (month + 12 - now) % 12;
                if ahead < back {
                    year + i32::from(month < now)
                } else {
                    year - i32::from(month > now)
                }
            }
        },
    };
    Some((month_at + 1, calendar::month(year, month)?))
}

/// A year after a preposition or modifier: "in 2019", "since 2019", "in the year 2019",
/// "early 2019", "the end of 2019". Not "in 2019 days".
pub(super) fn year(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let modifier = cx.modifier(at.i);
    let mut k = at.i + modifier;
    let word_at = |k: usize| if k == at.i { cx.first(k) } else { cx.then(k) };
    if word_at(k) == Some("the") && cx.then(k + 1) == Some("year") {
        k += 2;
    }
    let year = vocab::plausible_year(word_at(k)?)?;
    if k == at.i && at.cue.is_none() {
        return None;
    }
    if cx.then(k + 1).is_some_and(vocab::measure) {
        return None;
    }
    Some((k + 1, calendar::year(year)?))
}

/// "the 90s", "the 1990s", "the '90s", "the early 2000s".
pub(super) fn decade(cx: &Cx<'_>, at: At) -> Option<Hit> {
    if cx.first(at.i)? != "the" {
        return None;
    }
    cx.then(at.i + 1)?;
    let k = at.i + 1 + cx.modifier(at.i + 1);
    let gap = cx.gap(k)?;
    if !matches!(gap, " " | " '" | " ’") {
        return None;
    }
    let first = vocab::decade(cx.first(k)?)?;
    Some((k + 1, calendar::decade(first)?))
}

/// The first word of a date, after an optional weekday ("Friday, 3 March"), and its index.
fn lead<'a>(cx: &Cx<'a>, i: usize) -> Option<(usize, &'a str)> {
    let word = cx.first(i)?;
    if vocab::weekday(word).is_some() {
        if let Some(next) = cx.then_comma(i + 1) {
            return Some((i + 1, next));
        }
    }
    Some((i, word))
}

/// A year written right after a date, maybe after a comma ("March 3, 2019"), if it is not
/// a quantity ("March 3 2000 people").
fn year_after(cx: &Cx<'_>, k: usize) -> Option<i32> {
    let year = vocab::year4(cx.then_comma(k)?).filter(|y| (1000..=2999).contains(y))?;
    (!cx.then(k + 1).is_some_and(vocab::measure)).then_some(year)
}

/// The date `day` `month` of `year`, or, without a year, the nearest one in the direction the
/// sentence speaks of, or the nearer of the two when it speaks of neither.
fn date_for(cx: &Cx<'_>, at: At, year: Option<i32>, month: u32, day: u32) -> Option<NaiveDate> {
    if let Some(year) = year {
        return NaiveDate::from_ymd_opt(year, month, day);
    }
    let today = cx.today;
    let nearest = |future: bool| {
        // Eight years always hold a 29 February.
        (0..=8).find_map(|k: i32| {
            let year = if future {
                today.year().checked_add(k)
            } else {
                today.year().checked_sub(k)
            }?;
            let date = NaiveDate::from_ymd_opt(year, month, day)?;
            let fits = if future { date >= today } else { date <= today };
            fits.then_some(date)
        })
    };
    match cx.tense(at) {
        Tense::Future => nearest(true),
        Tense::Past => nearest(false),
        // No tense to go by ("the race is on 17 November"): the nearer one, the past one
        // on a tie.
        Tense::Unknown => match (nearest(false), nearest(true)) {
            (Some(past), Some(next)) if next - today < today - past => Some(next),
            (Some(past), _) => Some(past),
            (None, next) => next,
        },
    }
}
