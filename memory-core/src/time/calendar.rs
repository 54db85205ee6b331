//! Calendar arithmetic on dates: the spans of days, weeks, weekends, months, seasons, years
//! and decades, and shifting by whole units. Every function is checked: a date out of
//! chrono's range gives `None`, never a panic.

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};

use super::span::{midnight, Granularity, TimeSpan};

/// `[start, end)` as a span; `None` if `end` is not after `start`.
pub(super) fn span(start: NaiveDate, end: NaiveDate, granularity: Granularity) -> Option<TimeSpan> {
    (start < end).then(|| TimeSpan::new(midnight(start), midnight(end), granularity))
}

/// `date` moved by `n` days (negative: back).
pub(super) fn add_days(date: NaiveDate, n: i64) -> Option<NaiveDate> {
    let days = Days::new(n.unsigned_abs());
    if n >= 0 {
        date.checked_add_days(days)
    } else {
        date.checked_sub_days(days)
    }
}

/// `date` moved by `n` months (negative: back), the day clamped to the month's end.
pub(super) fn add_months(date: NaiveDate, n: i64) -> Option<NaiveDate> {
    let months = Months::new(u32::try_from(n.unsigned_abs()).ok()?);
    if n >= 0 {
        date.checked_add_months(months)
    } else {
        date.checked_sub_months(months)
    }
}

/// The calendar day `date`.
pub(super) fn day(date: NaiveDate) -> Option<TimeSpan> {
    span(date, date.succ_opt()?, Granularity::Day)
}

/// The Monday of `date`'s ISO week.
pub(super) fn monday_of(date: NaiveDate) -> Option<NaiveDate> {
    add_days(date, -i64::from(date.weekday().num_days_from_monday()))
}

/// The ISO week (Monday to Sunday) containing `date`.
pub(super) fn week(date: NaiveDate) -> Option<TimeSpan> {
    let monday = monday_of(date)?;
    span(monday, add_days(monday, 7)?, Granularity::Week)
}

/// The weekend (Saturday and Sunday) of `date`'s ISO week, moved by `n` weeks.
///
/// With `n = 0` this is the coming weekend on a weekday and the current one on a weekend;
/// `n = -1` is therefore always the last weekend that ended before `date`.
pub(super) fn weekend(date: NaiveDate, n: i64) -> Option<TimeSpan> {
    let saturday = add_days(monday_of(date)?, n.checked_mul(7)?.checked_add(5)?)?;
    span(saturday, add_days(saturday, 2)?, Granularity::Weekend)
}

/// The most recent weekend at or before `date` (the current one on a weekend).
pub(super) fn weekend_at_or_before(date: NaiveDate) -> Option<TimeSpan> {
    let on_weekend = matches!(date.weekday(), Weekday::Sat | Weekday::Sun);
    weekend(date, if on_weekend { 0 } else { -1 })
}

/// A month counted from year 0: `year * 12 + month0`.
pub(super) fn month_index(date: NaiveDate) -> i64 {
    i64::from(date.year()) * 12 + i64::from(date.month0())
}

/// The calendar month with index `index` (see [`month_index`]).
pub(super) fn month_at(index: i64) -> Option<TimeSpan> {
    let year = i32::try_from(index.div_euclid(12)).ok()?;
    let month0 = u32::try_from(index.rem_euclid(12)).ok()?;
    month(year, month0 + 1)
}

/// The calendar month `month` (1–12) of `year`.
pub(super) fn month(year: i32, month: u32) -> Option<TimeSpan> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    span(
        first,
        first.checked_add_months(Months::new(1))?,
        Granularity::Month,
    )
}

/// The calendar year `year`.
pub(super) fn year(year: i32) -> Option<TimeSpan> {
    let first = NaiveDate::from_ymd_opt(year, 1, 1)?;
    span(
        first,
        NaiveDate::from_ymd_opt(year.checked_add(1)?, 1, 1)?,
        Granularity::Year,
    )
}

/// The ten years from `first_year`.
pub(super) fn decade(first_year: i32) -> Option<TimeSpan> {
    let first = NaiveDate::from_ymd_opt(first_year, 1, 1)?;
    let end = NaiveDate::from_ymd_opt(first_year.checked_add(10)?, 1, 1)?;
    span(first, end, Granularity::Decade)
}

/// A meteorological season counted from year 0: `year * 4 + season`, with spring = 0
/// (March–May), summer = 1 (June–August), autumn = 2 (September–November) and winter = 3
/// (December of `year` to February of the next year). Consecutive indexes are consecutive
/// seasons.
pub(super) fn season_index(date: NaiveDate) -> i64 {
    let year = i64::from(date.year());
    match date.month() {
        3..=5 => year * 4,
        6..=8 => year * 4 + 1,
        9..=11 => year * 4 + 2,
        12 => year * 4 + 3,
        _ => (year - 1) * 4 + 3,
    }
}

/// The season with index `index` (see [`season_index`]).
pub(super) fn season_at(index: i64) -> Option<TimeSpan> {
    let year = i32::try_from(index.div_euclid(4)).ok()?;
    let first_month = 3 + 3 * u32::try_from(index.rem_euclid(4)).ok()?;
    let first = NaiveDate::from_ymd_opt(year, first_month, 1)?;
    span(
        first,
        first.checked_add_months(Months::new(3))?,
        Granularity::Season,
    )
}

/// The most recent `weekday` before `date`, `on_or` including `date` itself.
pub(super) fn previous_weekday(
    date: NaiveDate,
    weekday: Weekday,
    on_or: bool,
) -> Option<NaiveDate> {
    let back = (date.weekday().num_days_from_monday() + 7 - weekday.num_days_from_monday()) % 7;
    let back = if back == 0 && !on_or { 7 } else { back };
    add_days(date, -i64::from(back))
}

/// The first `weekday` after `date`, `on_or` including `date` itself.
pub(super) fn next_weekday(date: NaiveDate, weekday: Weekday, on_or: bool) -> Option<NaiveDate> {
    let ahead = (weekday.num_days_from_monday() + 7 - date.weekday().num_days_from_monday()) % 7;
    let ahead = if ahead == 0 && !on_or { 7 } else { ahead };
    add_days(date, i64::from(ahead))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn season_indexes_are_consecutive_across_the_year_end() {
        assert_eq!(season_index(d(2025, 12, 1)), season_index(d(2026, 2, 28)));
        assert_eq!(
            season_index(d(2026, 3, 1)),
            season_index(d(2026, 2, 28)) + 1
        );
        let winter = season_at(season_index(d(2026, 1, 15))).unwrap();
        assert_eq!(winter.start.date_naive(), d(2025, 12, 1));
        assert_eq!(winter.end.date_naive(), d(2026, 3, 1));
    }

    #[test]
    fn weekday_steps_skip_or_keep_today() {
        let friday = d(2026, 5, 8);
        assert_eq!(
            previous_weekday(friday, Weekday::Fri, false),
            Some(d(2026, 5, 1))
        );
        assert_eq!(previous_weekday(friday, Weekday::Fri, true), Some(friday));
        assert_eq!(
            next_weekday(friday, Weekday::Fri, false),
            Some(d(2026, 5, 15))
        );
        assert_eq!(
            next_weekday(friday, Weekday::Mon, false),
            Some(d(2026, 5, 11))
        );
    }

    #[test]
    fn out_of_range_dates_give_none() {
        assert_eq!(add_days(NaiveDate::MAX, 1), None);
        assert_eq!(add_months(NaiveDate::MIN, -1), None);
        assert_eq!(add_months(d(2026, 1, 1), i64::MIN), None);
        assert_eq!(day(NaiveDate::MAX), None);
        assert_eq!(weekend(d(2026, 1, 1), i64::MAX), None);
        assert_eq!(month_at(i64::MAX), None);
        assert_eq!(season_at(i64::MIN), None);
    }
}
