//! [`TimeSpan`]: a half-open span of calendar time with the granularity the text named.

use std::fmt;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, Utc};
use serde::{Deserialize, Serialize};

/// How coarse a [`TimeSpan`] is: the calendar unit the text named.
///
/// `Range` is a span that is no single calendar unit: "recently" (the last 30 days),
/// "the past two weeks", "earlier this year".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Granularity {
    /// One calendar day ("yesterday", "on 3 March", "2023-05-07").
    Day,
    /// One ISO week, Monday to Sunday ("last week", "two weeks ago").
    Week,
    /// Saturday and Sunday ("last weekend").
    Weekend,
    /// One calendar month ("in May", "last month").
    Month,
    /// One meteorological season of the northern hemisphere ("last summer").
    Season,
    /// One calendar year ("in 2019", "last year").
    Year,
    /// Ten years starting at a year divisible by ten ("the 90s").
    Decade,
    /// Any other span ("recently", "the past few days", "earlier this month").
    Range,
}

/// A resolved span of calendar time, `[start, end)` in UTC, with the granularity the text
/// named.
///
/// Days start at midnight UTC: the resolver works on the reference's calendar date in UTC.
///
/// ```
/// use agentmemory_core::time::{Granularity, TimeSpan};
/// use chrono::{NaiveDate, TimeZone, Utc};
///
/// let day = TimeSpan::day(NaiveDate::from_ymd_opt(2026, 5, 3).unwrap());
/// assert_eq!(day.granularity, Granularity::Day);
/// assert!(day.contains(Utc.with_ymd_and_hms(2026, 5, 3, 23, 59, 59).unwrap()));
/// assert!(!day.contains(Utc.with_ymd_and_hms(2026, 5, 4, 0, 0, 0).unwrap()));
/// assert_eq!(day.label(), "2026-05-03");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimeSpan {
    /// The first instant of the span (inclusive).
    pub start: DateTime<Utc>,
    /// The first instant after the span (exclusive).
    pub end: DateTime<Utc>,
    /// The calendar unit the text named.
    pub granularity: Granularity,
}

impl TimeSpan {
    /// A span from `start` to `end`; the two are swapped if `end` is before `start`.
    ///
    /// ```
    /// use agentmemory_core::time::{Granularity, TimeSpan};
    /// use chrono::{TimeZone, Utc};
    ///
    /// let a = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    /// let b = Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap();
    /// let span = TimeSpan::new(b, a, Granularity::Month);
    /// assert_eq!((span.start, span.end), (a, b));
    /// assert_eq!(span.label(), "January 2026");
    /// ```
    pub fn new(start: DateTime<Utc>, end: DateTime<Utc>, granularity: Granularity) -> Self {
        let (start, end) = if end < start {
            (end, start)
        } else {
            (start, end)
        };
        Self {
            start,
            end,
            granularity,
        }
    }

    /// The calendar day `date`, midnight to midnight UTC (the last representable day ends at
    /// the last representable instant).
    pub fn day(date: NaiveDate) -> Self {
        let end = date.succ_opt().map_or(DateTime::<Utc>::MAX_UTC, midnight);
        Self::new(midnight(date), end, Granularity::Day)
    }

    /// The UTC calendar day containing `t`: how a message's own time (`observed_at`) is shown.
    ///
    /// ```
    /// use agentmemory_core::time::TimeSpan;
    /// use chrono::{TimeZone, Utc};
    ///
    /// let said = Utc.with_ymd_and_hms(2026, 5, 3, 18, 30, 0).unwrap();
    /// assert_eq!(TimeSpan::day_of(said).label(), "2026-05-03");
    /// ```
    pub fn day_of(t: DateTime<Utc>) -> Self {
        Self::day(t.date_naive())
    }

    /// Whether `t` lies in `[start, end)`.
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.start <= t && t < self.end
    }

    /// Whether the two spans share at least one instant.
    ///
    /// ```
    /// use agentmemory_core::time::TimeSpan;
    /// use chrono::NaiveDate;
    ///
    /// let d = |day| TimeSpan::day(NaiveDate::from_ymd_opt(2026, 5, day).unwrap());
    /// assert!(d(3).overlaps(&d(3)));
    /// assert!(!d(3).overlaps(&d(4))); // [3rd, 4th) and [4th, 5th) only touch
    /// ```
    pub fn overlaps(&self, other: &TimeSpan) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// How far `t` is from the span: zero inside (and at `end`), otherwise the gap to the
    /// nearer edge.
    ///
    /// ```
    /// use agentmemory_core::time::TimeSpan;
    /// use chrono::{Duration, NaiveDate, TimeZone, Utc};
    ///
    /// let may3 = TimeSpan::day(NaiveDate::from_ymd_opt(2026, 5, 3).unwrap());
    /// assert_eq!(may3.distance(Utc.with_ymd_and_hms(2026, 5, 3, 12, 0, 0).unwrap()), Duration::zero());
    /// assert_eq!(may3.distance(Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap()), Duration::days(2));
    /// assert_eq!(may3.distance(Utc.with_ymd_and_hms(2026, 5, 6, 0, 0, 0).unwrap()), Duration::days(2));
    /// ```
    pub fn distance(&self, t: DateTime<Utc>) -> Duration {
        if t < self.start {
            self.start.signed_duration_since(t)
        } else if t > self.end {
            t.signed_duration_since(self.end)
        } else {
            Duration::zero()
        }
    }

    /// A short human label: `"2026-05-03"`, `"week of 2026-05-04"`, `"weekend of 2026-05-02"`,
    /// `"May 2026"`, `"summer 2026"`, `"winter 2025/26"`, `"2019"`, `"the 1990s"`, or
    /// `"2026-04-03 to 2026-05-03"` for a [`Granularity::Range`] (both days included).
    ///
    /// ```
    /// use agentmemory_core::time::resolve;
    /// use chrono::{TimeZone, Utc};
    ///
    /// let sunday = Utc.with_ymd_and_hms(2026, 5, 10, 9, 0, 0).unwrap();
    /// let labels: Vec<String> = resolve("last week, in May 2019 and last summer", sunday)
    ///     .iter()
    ///     .map(|m| m.span.label())
    ///     .collect();
    /// assert_eq!(labels, ["week of 2026-04-27", "May 2019", "summer 2025"]);
    /// ```
    pub fn label(&self) -> String {
        let first = self.start.date_naive();
        match self.granularity {
            Granularity::Day => date_label(first),
            Granularity::Week => format!("week of {}", date_label(first)),
            Granularity::Weekend => format!("weekend of {}", date_label(first)),
            Granularity::Month => first.format("%B %Y").to_string(),
            Granularity::Season => season_label(first).unwrap_or_else(|| self.range_label()),
            Granularity::Year => first.year().to_string(),
            Granularity::Decade => format!("the {}s", first.year()),
            Granularity::Range => self.range_label(),
        }
    }

    /// `"first to last"`, both days included; one day alone if the span is within a day.
    fn range_label(&self) -> String {
        let first = self.start.date_naive();
        let last = self
            .end
            .checked_sub_signed(Duration::nanoseconds(1))
            .map_or(first, |t| t.date_naive())
            .max(first);
        if last == first {
            date_label(first)
        } else {
            format!("{} to {}", date_label(first), date_label(last))
        }
    }
}

impl fmt::Display for TimeSpan {
    /// The [`label`](TimeSpan::label).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// Midnight UTC at the start of `date`.
pub(super) fn midnight(date: NaiveDate) -> DateTime<Utc> {
    date.and_time(NaiveTime::MIN).and_utc()
}

fn date_label(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// "summer 2026", or "winter 2025/26" for the winter that starts in December 2025.
fn season_label(first: NaiveDate) -> Option<String> {
    let year = first.year();
    let name = match first.month() {
        3 => "spring",
        6 => "summer",
        9 => "autumn",
        12 => return Some(format!("winter {year}/{:02}", (year + 1).rem_euclid(100))),
        _ => return None,
    };
    Some(format!("{name} {year}"))
}
