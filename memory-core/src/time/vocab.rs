//! The words of time expressions: month and weekday names, counts, units, seasons.

use chrono::Weekday;

/// Whether some time expression may start with `word`: a quick filter before the rules.
pub(super) fn may_start(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
        || matches!(
            word,
            "today"
                | "tonight"
                | "earlier"
                | "later"
                | "this"
                | "last"
                | "next"
                | "coming"
                | "past"
                | "the"
                | "these"
                | "yesterday"
                | "tomorrow"
                | "recently"
                | "lately"
                | "early"
                | "mid"
                | "late"
                | "end"
                | "start"
                | "beginning"
                | "middle"
                | "a"
                | "an"
                | "couple"
                | "few"
                | "several"
        )
        || unit(word).is_some()
        || month(word).is_some()
        || weekday(word).is_some()
        || season(word).is_some()
        || number_word(word).is_some()
}

/// How safely a month name can be read as a month.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MonthName {
    /// A full name that is nothing else ("january", "june").
    Plain,
    /// A full name that is also a common word ("may", "march", "august"): read as a month
    /// alone only when capitalised or after last/this/next.
    Ambiguous,
    /// An abbreviation ("jan", "sept"): read as a month only next to a day or a year.
    Short,
}

/// The month (1–12) a word names.
pub(super) fn month(word: &str) -> Option<(u32, MonthName)> {
    use MonthName::{Ambiguous, Plain, Short};
    Some(match word {
        "january" => (1, Plain),
        "february" => (2, Plain),
        "march" => (3, Ambiguous),
        "april" => (4, Plain),
        "may" => (5, Ambiguous),
        "june" => (6, Plain),
        "july" => (7, Plain),
        "august" => (8, Ambiguous),
        "september" => (9, Plain),
        "october" => (10, Plain),
        "november" => (11, Plain),
        "december" => (12, Plain),
        "jan" => (1, Short),
        "feb" => (2, Short),
        "mar" => (3, Short),
        "apr" => (4, Short),
        "jun" => (6, Short),
        "jul" => (7, Short),
        "aug" => (8, Short),
        "sep" | "sept" => (9, Short),
        "oct" => (10, Short),
        "nov" => (11, Short),
        "dec" => (12, Short),
        _ => return None,
    })
}

/// The weekday a (full, singular) weekday name names; "Fridays" is a habit, not a day.
pub(super) fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" => Weekday::Mon,
        "tuesday" => Weekday::Tue,
        "wednesday" => Weekday::Wed,
        "thursday" => Weekday::Thu,
        "friday" => Weekday::Fri,
        "saturday" => Weekday::Sat,
        "sunday" => Weekday::Sun,
        _ => return None,
    })
}

/// Whether a word names a part of a day ("Friday night", "yesterday morning").
pub(super) fn part_of_day(word: &str) -> bool {
    matches!(word, "morning" | "afternoon" | "evening" | "night")
}

/// A calendar unit a count can be applied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Day,
    Week,
    Weekend,
    Fortnight,
    Month,
    Year,
    Decade,
}

/// The unit a word names, and whether it was plural.
pub(super) fn unit(word: &str) -> Option<(Unit, bool)> {
    Some(match word {
        "day" => (Unit::Day, false),
        "days" => (Unit::Day, true),
        "week" => (Unit::Week, false),
        "weeks" => (Unit::Week, true),
        "weekend" => (Unit::Weekend, false),
        "weekends" => (Unit::Weekend, true),
        "fortnight" => (Unit::Fortnight, false),
        "fortnights" => (Unit::Fortnight, true),
        "month" => (Unit::Month, false),
        "months" => (Unit::Month, true),
        "year" => (Unit::Year, false),
        "years" => (Unit::Year, true),
        "decade" => (Unit::Decade, false),
        "decades" => (Unit::Decade, true),
        _ => return None,
    })
}

/// A count written as a word ("two", "twelve", "twenty").
pub(crate) fn number_word(word: &str) -> Option<u32> {
    const WORDS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let n = WORDS.iter().position(|w| *w == word)?;
    u32::try_from(n).ok()
}

/// The largest count a relative expression accepts ("100000 days ago" is not a date).
pub(super) const MAX_COUNT: u32 = 10_000;

/// A count written in digits, up to [`MAX_COUNT`].
pub(super) fn digits(word: &str) -> Option<u32> {
    if word.is_empty() || word.len() > 5 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok().filter(|n| *n <= MAX_COUNT)
}

/// A day of the month, `"3"`, `"03"` or `"3rd"` (the suffix is not checked against the
/// number); the flag says whether an ordinal suffix was written.
pub(super) fn day_of_month(word: &str) -> Option<(u32, bool)> {
    let digits_end = word
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(word.len());
    let (number, suffix) = word.split_at(digits_end);
    let ordinal = match suffix {
        "" => false,
        "st" | "nd" | "rd" | "th" => true,
        _ => return None,
    };
    if number.is_empty() || number.len() > 2 {
        return None;
    }
    let day: u32 = number.parse().ok()?;
    (1..=31).contains(&day).then_some((day, ordinal))
}

/// A year written as four digits.
pub(super) fn year4(word: &str) -> Option<i32> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
}

/// A year plausible in conversation where only the year is written ("in 2019").
pub(super) fn plausible_year(word: &str) -> Option<i32> {
    year4(word).filter(|y| (1900..=2100).contains(y))
}

/// The first year of a decade written `"1990s"` or `"90s"` (the two-digit form only for the
/// 1930s to the 1990s, the 2000s and the 2010s: "the 20s" could be either century).
pub(super) fn decade(word: &str) -> Option<i32> {
    let number = word.strip_suffix('s')?;
    if !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let first: i32 = match number.len() {
        4 => number.parse().ok()?,
        2 => match number.parse::<i32>().ok()? {
            n @ 30..=90 => 1900 + n,
            n @ (0 | 10) => 2000 + n,
            _ => return None,
        },
        _ => return None,
    };
    (first % 10 == 0).then_some(first)
}

/// A season: 0 spring, 1 summer, 2 autumn, 3 winter (see `calendar::season_index`); the flag
/// marks "fall", which is read as a season only in clear contexts.
pub(super) fn season(word: &str) -> Option<(i64, bool)> {
    Some(match word {
        "spring" => (0, false),
        "summer" => (1, false),
        "autumn" => (2, false),
        "fall" => (2, true),
        "winter" => (3, false),
        _ => return None,
    })
}

/// Words after a count that make a following number a quantity, not a year or a day
/// ("in 2019 days", "May 3 people").
pub(super) fn measure(word: &str) -> bool {
    unit(word).is_some()
        || matches!(
            word,
            "hour"
                | "hours"
                | "minute"
                | "minutes"
                | "second"
                | "seconds"
                | "times"
                | "people"
                | "persons"
                | "percent"
                | "kids"
                | "children"
                | "items"
                | "things"
                | "points"
                | "dollars"
                | "euros"
                | "pounds"
                | "miles"
                | "km"
                | "kg"
        )
}

/// A preposition that may lead a time expression ("in May", "since 2019", "on Friday").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cue {
    /// "in": also makes "in 3 days" a future expression.
    In,
    /// "on": also makes a bare weekday a date ("on Friday").
    On,
    /// Any other: at, since, during, over, from, until, till, by, around, through, throughout.
    Other,
}

/// The cue a word is.
pub(super) fn cue(word: &str) -> Option<Cue> {
    Some(match word {
        "in" => Cue::In,
        "on" => Cue::On,
        "at" | "since" | "during" | "over" | "from" | "until" | "till" | "by" | "around"
        | "through" | "throughout" => Cue::Other,
        _ => return None,
    })
}

/// A modifier before a month, season, year or decade that narrows it in speech but is kept
/// whole here: "early May", "the end of 2019". Returns how many words it takes.
pub(super) fn modifier_len(words: &[&str]) -> usize {
    match words {
        ["early" | "mid" | "late", ..] => 1,
        ["the", "end" | "start" | "beginning" | "middle", "of", ..] => 3,
        ["end" | "start" | "beginning" | "middle", "of", ..] => 2,
        _ => 0,
    }
}
