//! The resolver against a table of expressions, `strip`, `asks_when`, and properties over
//! arbitrary text.

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use proptest::prelude::*;

use super::*;

/// Noon UTC on `date` ("2026-05-13").
fn noon(date: &str) -> DateTime<Utc> {
    let d = NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
    d.and_hms_opt(12, 0, 0).unwrap().and_utc()
}

fn midnight(date: &str) -> DateTime<Utc> {
    let d = NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
    d.and_hms_opt(0, 0, 0).unwrap().and_utc()
}

use Granularity::{Day, Decade, Month, Range, Season, Week, Weekend, Year};

/// (text, said on, the expression found, granularity, first day, day after the span).
/// 2026-05-13 is a Wednesday.
#[rustfmt::skip]
const CASES: &[(&str, &str, &str, Granularity, &str, &str)] = &[
    // Days around the reference.
    ("I went there today", "2026-05-13", "today", Day, "2026-05-13", "2026-05-14"),
    ("tonight we cook", "2026-05-13", "tonight", Day, "2026-05-13", "2026-05-14"),
    ("this morning I ran 5k", "2026-05-13", "this morning", Day, "2026-05-13", "2026-05-14"),
    ("yesterday evening was fun", "2026-05-13", "yesterday evening", Day, "2026-05-12", "2026-05-13"),
    ("what about the day before yesterday", "2026-05-13", "the day before yesterday", Day, "2026-05-11", "2026-05-12"),
    ("Tomorrow I'll fly", "2026-05-13", "Tomorrow", Day, "2026-05-14", "2026-05-15"),
    ("last night I slept badly", "2026-01-01", "last night", Day, "2025-12-31", "2026-01-01"),
    ("yesterday", "2024-03-01", "yesterday", Day, "2024-02-29", "2024-03-01"),
    ("yesterday", "2023-03-01", "yesterday", Day, "2023-02-28", "2023-03-01"),
    // Issue 35: a plan's month follows the verb's tense; a month with its year named.
    ("I'm getting married in June", "2025-03-10", "in June", Month, "2025-06-01", "2025-07-01"),
    ("we're flying to Porto in August", "2026-02-02", "in August", Month, "2026-08-01", "2026-09-01"),
    ("she is starting nursery in September", "2026-05-13", "in September", Month, "2026-09-01", "2026-10-01"),
    ("my aunt had knee surgery in June", "2026-07-20", "in June", Month, "2026-06-01", "2026-07-01"),
    ("we got engaged in October", "2026-01-20", "in October", Month, "2025-10-01", "2025-11-01"),
    ("I started pilates in March last year", "2026-05-13", "in March last year", Month, "2025-03-01", "2025-04-01"),
    ("we visit them in July next year", "2026-05-13", "in July next year", Month, "2027-07-01", "2027-08-01"),
    // Weeks, months, years.
    ("last week", "2026-05-13", "last week", Week, "2026-05-04", "2026-05-11"),
    ("this week", "2026-05-13", "this week", Week, "2026-05-11", "2026-05-18"),
    ("next week", "2025-12-31", "next week", Week, "2026-01-05", "2026-01-12"),
    ("next week", "2026-05-17", "next week", Week, "2026-05-18", "2026-05-25"),
    ("last week", "2026-01-01", "last week", Week, "2025-12-22", "2025-12-29"),
    ("the week before last", "2026-05-13", "the week before last", Week, "2026-04-27", "2026-05-04"),
    ("last month", "2026-01-15", "last month", Month, "2025-12-01", "2026-01-01"),
    ("last month", "2026-03-31", "last month", Month, "2026-02-01", "2026-03-01"),
    ("next month", "2025-12-31", "next month", Month, "2026-01-01", "2026-02-01"),
    ("this month", "2024-02-29", "this month", Month, "2024-02-01", "2024-03-01"),
    ("last year", "2026-01-01", "last year", Year, "2025-01-01", "2026-01-01"),
    ("next year", "2026-05-13", "next year", Year, "2027-01-01", "2028-01-01"),
    // Weekends.
    ("last weekend", "2026-05-13", "last weekend", Weekend, "2026-05-09", "2026-05-11"),
    ("last weekend", "2026-05-16", "last weekend", Weekend, "2026-05-09", "2026-05-11"),
    ("last weekend", "2026-05-18", "last weekend", Weekend, "2026-05-16", "2026-05-18"),
    ("this weekend", "2026-05-13", "this weekend", Weekend, "2026-05-16", "2026-05-18"),
    ("next weekend", "2026-05-13", "next weekend", Weekend, "2026-05-23", "2026-05-25"),
    ("we hiked over the weekend", "2026-05-18", "over the weekend", Weekend, "2026-05-16", "2026-05-18"),
    ("we hiked at the weekend", "2026-05-17", "at the weekend", Weekend, "2026-05-16", "2026-05-18"),
    ("we will hike at the weekend", "2026-05-13", "at the weekend", Weekend, "2026-05-16", "2026-05-18"),
    ("this past weekend", "2026-05-18", "this past weekend", Weekend, "2026-05-16", "2026-05-18"),
    // Weekdays.
    ("I adopted a dog last Friday", "2026-05-13", "last Friday", Day, "2026-05-08", "2026-05-09"),
    ("last Wednesday", "2026-05-13", "last Wednesday", Day, "2026-05-06", "2026-05-07"),
    ("next Monday", "2026-05-13", "next Monday", Day, "2026-05-18", "2026-05-19"),
    ("next Wednesday", "2026-05-13", "next Wednesday", Day, "2026-05-20", "2026-05-21"),
    ("I'm free this Friday", "2026-05-13", "this Friday", Day, "2026-05-15", "2026-05-16"),
    ("this Monday I went to the gym", "2026-05-13", "this Monday", Day, "2026-05-11", "2026-05-12"),
    ("On Friday I went to a support group", "2026-05-13", "On Friday", Day, "2026-05-08", "2026-05-09"),
    ("I went to the gym on Monday", "2026-05-11", "on Monday", Day, "2026-05-04", "2026-05-05"),
    ("I will call her on Friday", "2026-05-13", "on Friday", Day, "2026-05-15", "2026-05-16"),
    ("I have an exam on Sunday", "2026-05-13", "on Sunday", Day, "2026-05-17", "2026-05-18"),
    ("Friday night was great", "2026-05-13", "Friday night", Day, "2026-05-08", "2026-05-09"),
    ("It was sunny on Sunday", "2026-01-01", "on Sunday", Day, "2025-12-28", "2025-12-29"),
    // Counted back and ahead.
    ("three days ago", "2026-05-13", "three days ago", Day, "2026-05-10", "2026-05-11"),
    ("12 days ago", "2026-01-05", "12 days ago", Day, "2025-12-24", "2025-12-25"),
    ("a couple of weeks ago", "2026-05-13", "a couple of weeks ago", Week, "2026-04-27", "2026-05-04"),
    ("two months ago", "2026-01-15", "two months ago", Month, "2025-11-01", "2025-12-01"),
    ("a month ago", "2026-03-31", "a month ago", Month, "2026-02-01", "2026-03-01"),
    ("a few years ago", "2026-05-13", "a few years ago", Year, "2023-01-01", "2024-01-01"),
    ("two years ago", "2024-02-29", "two years ago", Year, "2022-01-01", "2023-01-01"),
    ("I'll leave in 3 days", "2026-05-13", "in 3 days", Day, "2026-05-16", "2026-05-17"),
    ("we start in two weeks", "2026-05-13", "in two weeks", Week, "2026-05-25", "2026-06-01"),
    ("we move in a month", "2026-12-13", "in a month", Month, "2027-01-01", "2027-02-01"),
    // Months.
    ("We went to Rome in May", "2026-03-10", "in May", Month, "2025-05-01", "2025-06-01"),
    ("We will go to Rome in May", "2026-03-10", "in May", Month, "2026-05-01", "2026-06-01"),
    ("I started in May", "2026-05-13", "in May", Month, "2026-05-01", "2026-06-01"),
    ("since January", "2026-05-13", "since January", Month, "2026-01-01", "2026-02-01"),
    ("last May", "2026-05-13", "last May", Month, "2025-05-01", "2025-06-01"),
    ("last May", "2026-06-02", "last May", Month, "2026-05-01", "2026-06-01"),
    ("next May", "2026-05-13", "next May", Month, "2027-05-01", "2027-06-01"),
    ("next December", "2026-12-31", "next December", Month, "2027-12-01", "2028-01-01"),
    ("we met in May 2019", "2026-05-13", "in May 2019", Month, "2019-05-01", "2019-06-01"),
    ("at the end of May", "2026-05-13", "at the end of May", Month, "2026-05-01", "2026-06-01"),
    ("it snowed in early december", "2026-01-10", "in early december", Month, "2025-12-01", "2026-01-01"),
    // Dates.
    ("I moved on 3 March", "2026-05-13", "on 3 March", Day, "2026-03-03", "2026-03-04"),
    ("I will fly on 3 March", "2026-05-13", "on 3 March", Day, "2027-03-03", "2027-03-04"),
    // No tense: the nearer March 3rd (52 days ahead, not 313 back).
    ("March 3rd", "2026-01-10", "March 3rd", Day, "2026-03-03", "2026-03-04"),
    ("I ran it on March 3rd", "2026-01-10", "on March 3rd", Day, "2025-03-03", "2025-03-04"),
    ("the race is on 17 November", "2024-09-08", "on 17 November", Day, "2024-11-17", "2024-11-18"),
    ("the 3rd of March, 2019", "2026-05-13", "the 3rd of March, 2019", Day, "2019-03-03", "2019-03-04"),
    ("on March 3, 2019 we married", "2026-05-13", "on March 3, 2019", Day, "2019-03-03", "2019-03-04"),
    ("my birthday was on Feb 29", "2026-05-13", "on Feb 29", Day, "2024-02-29", "2024-03-01"),
    ("Friday, March 6", "2026-05-13", "Friday, March 6", Day, "2026-03-06", "2026-03-07"),
    ("I paid on the 3rd", "2026-05-13", "on the 3rd", Day, "2026-05-03", "2026-05-04"),
    ("I paid on the 31st", "2026-05-02", "on the 31st", Day, "2026-03-31", "2026-04-01"),
    ("logged 2023-05-07T10:00", "2026-05-13", "2023-05-07T10", Day, "2023-05-07", "2023-05-08"),
    ("on 2024-02-29", "2026-05-13", "on 2024-02-29", Day, "2024-02-29", "2024-03-01"),
    // Years and decades.
    ("I moved to Porto in 2019", "2026-05-13", "in 2019", Year, "2019-01-01", "2020-01-01"),
    ("vegan since 2019", "2026-05-13", "since 2019", Year, "2019-01-01", "2020-01-01"),
    ("early 2019", "2026-05-13", "early 2019", Year, "2019-01-01", "2020-01-01"),
    ("music from the 90s", "2026-05-13", "from the 90s", Decade, "1990-01-01", "2000-01-01"),
    ("in the late 1980s", "2026-05-13", "in the late 1980s", Decade, "1980-01-01", "1990-01-01"),
    // Seasons.
    ("last summer", "2026-05-13", "last summer", Season, "2025-06-01", "2025-09-01"),
    ("last summer", "2026-10-05", "last summer", Season, "2026-06-01", "2026-09-01"),
    ("this summer", "2026-05-13", "this summer", Season, "2026-06-01", "2026-09-01"),
    ("last winter", "2026-05-13", "last winter", Season, "2025-12-01", "2026-03-01"),
    ("last winter", "2026-01-15", "last winter", Season, "2024-12-01", "2025-03-01"),
    ("this winter", "2026-11-20", "this winter", Season, "2026-12-01", "2027-03-01"),
    ("in the summer of 2019", "2026-05-13", "in the summer of 2019", Season, "2019-06-01", "2019-09-01"),
    ("we were in Italy in the summer", "2026-05-13", "in the summer", Season, "2025-06-01", "2025-09-01"),
    ("we will go in the fall", "2026-05-13", "in the fall", Season, "2026-09-01", "2026-12-01"),
    // Vague ranges.
    ("I've been tired lately", "2026-05-13", "lately", Range, "2026-04-13", "2026-05-14"),
    ("the past few days", "2026-05-13", "the past few days", Range, "2026-05-10", "2026-05-14"),
    ("in the last two weeks", "2026-05-13", "in the last two weeks", Range, "2026-04-29", "2026-05-14"),
    ("over the past month", "2026-03-31", "over the past month", Range, "2026-02-28", "2026-04-01"),
    ("earlier this year", "2026-05-13", "earlier this year", Range, "2026-01-01", "2026-05-14"),
    ("later this week", "2026-05-13", "later this week", Range, "2026-05-13", "2026-05-18"),
    ("I saw her the other day", "2026-05-13", "the other day", Range, "2026-05-06", "2026-05-13"),
];

#[test]
fn the_table_resolves() {
    let mut failures = Vec::new();
    for &(text, said, expected, granularity, first, after) in CASES {
        let found = resolve(text, noon(said));
        let want = (granularity, midnight(first), midnight(after));
        match found.as_slice() {
            [m] if m.text == expected && (m.span.granularity, m.span.start, m.span.end) == want => {
            }
            _ => failures.push(format!(
                "{text:?} said {said}: want {expected:?} {want:?}, got {:?}",
                found
                    .iter()
                    .map(|m| (&m.text, m.span.granularity, m.span.label()))
                    .collect::<Vec<_>>()
            )),
        }
    }
    assert!(CASES.len() >= 40);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn words_that_are_no_time_are_left_alone() {
    let said = noon("2026-05-13");
    for text in [
        "The mayor spoke",
        "May I ask you something?",
        "this may take a while",
        "we march on",
        "I have 2019 points",
        "I love Fridays",
        "Friday is my favourite day",
        "I did it in 3 days",
        "the fall of Rome",
        "last time I checked",
        "at last!",
        "I'm 30 years old",
        "see you later",
        "the marching band",
        "in March. 3 people came",
        "she is in her 20s",
        "a 3-day trip",
        "dec 5",
        "I work in a week-long sprint",
        "Do you remember what we discussed on 12/05?",
    ] {
        let mentions = resolve(text, said);
        let found: Vec<&str> = mentions.iter().map(|m| m.text.as_str()).collect();
        let allowed: &[&str] = match text {
            "in March. 3 people came" => &["in March"],
            "dec 5" => &["dec 5"],
            _ => &[],
        };
        assert_eq!(found, allowed, "{text:?}");
    }
}

#[test]
fn several_expressions_come_in_order() {
    let text = "Yesterday I told Sam that in 2019 we moved, and on Friday we fly. Next week: Oslo!";
    let found = resolve(text, noon("2026-05-13"));
    let words: Vec<&str> = found.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(words, ["Yesterday", "in 2019", "on Friday", "Next week"]);
    for m in &found {
        assert_eq!(&text[m.range.clone()], m.text);
    }
    // "moved" is in the clause before: this Friday is the coming one.
    assert_eq!(found[2].span.label(), "2026-05-15");
}

#[test]
fn strip_removes_the_expressions_and_tidies_spaces() {
    let said = noon("2026-05-13");
    let cases = [
        ("what did I do last weekend?", "what did I do ?"),
        ("When did I move to Porto?", "When did I move to Porto?"),
        (
            "what  did we eat on Friday\nat the party",
            "what did we eat at the party",
        ),
        ("Last summer, in May 2019 and yesterday", ", and"),
        ("recently", ""),
    ];
    for (text, want) in cases {
        assert_eq!(strip(text, &resolve(text, said)), want, "{text:?}");
    }
    // Out-of-range and overlapping mentions are ignored, not a panic.
    let mut mentions = resolve("what did I do yesterday", said);
    let bogus = TimeMention {
        range: 3..400,
        ..mentions[0].clone()
    };
    mentions.push(bogus);
    mentions.push(mentions[0].clone());
    assert_eq!(strip("what did I do yesterday", &mentions), "what did I do");
}

#[test]
fn asks_when_tells_when_questions() {
    for yes in [
        "When did I move to Porto?",
        "when was my last dentist appointment",
        "When's the wedding?",
        "what date did I start the job?",
        "Which year did we meet?",
        "How long ago did I adopt Miso?",
        "how many years ago did we go to Japan",
        "since when am I vegan?",
    ] {
        assert!(asks_when(yes), "{yes:?}");
    }
    for no in [
        "What did I do when I was in Paris?",
        "what did I do last weekend?",
        "Where do I live?",
        "how many dogs do I have",
        "",
    ] {
        assert!(!asks_when(no), "{no:?}");
    }
}

#[test]
fn span_geometry() {
    let may = resolve("in May 2026", noon("2026-05-13")).remove(0).span;
    let week = resolve("last week", noon("2026-06-03")).remove(0).span; // 25–31 May
    let june = resolve("next month", noon("2026-05-13")).remove(0).span;
    assert!(may.overlaps(&week) && week.overlaps(&may));
    assert!(!may.overlaps(&june) && !june.overlaps(&may));
    assert!(may.contains(midnight("2026-05-01")));
    assert!(!may.contains(midnight("2026-06-01")));
    assert_eq!(may.distance(noon("2026-05-20")), chrono::Duration::zero());
    assert_eq!(
        may.distance(midnight("2026-04-29")),
        chrono::Duration::days(2)
    );
    assert_eq!(
        may.distance(midnight("2026-06-04")),
        chrono::Duration::days(3)
    );
    let winter = resolve("last winter", noon("2026-05-13")).remove(0).span;
    assert_eq!(winter.label(), "winter 2025/26");
    assert_eq!(week.label(), "week of 2026-05-25");
    assert_eq!(june.to_string(), "June 2026");
    let recent = resolve("recently", noon("2026-05-13")).remove(0).span;
    assert_eq!(recent.label(), "2026-04-13 to 2026-05-13");
    let decade = resolve("the 90s", noon("2026-05-13")).remove(0).span;
    assert_eq!(decade.label(), "the 1990s");
    let weekend = resolve("last weekend", noon("2026-05-13")).remove(0).span;
    assert_eq!(weekend.label(), "weekend of 2026-05-09");
}

#[test]
fn extreme_references_do_not_panic() {
    let text = "yesterday tomorrow next week last weekend next month next year in May last summer \
                next winter 3 days ago in 10000 years the 90s on 3 March on Friday recently \
                earlier this year the past 10000 decades in 2019";
    for reference in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC] {
        for m in resolve(text, reference) {
            assert!(m.span.start < m.span.end, "{m:?}");
            let _ = m.span.label();
        }
    }
    // And a sane reference still finds everything after the huge counts.
    let found = resolve(text, Utc.with_ymd_and_hms(2026, 5, 13, 0, 0, 0).unwrap());
    assert!(found.iter().any(|m| m.text == "in 2019"));
}

/// Text made of time words, numbers and noise, so the rules are reached.
fn timeish() -> impl Strategy<Value = String> {
    let words = prop::sample::select(vec![
        "last",
        "next",
        "this",
        "the",
        "in",
        "on",
        "since",
        "ago",
        "a",
        "few",
        "couple",
        "of",
        "3",
        "3rd",
        "31st",
        "29",
        "2019",
        "1990s",
        "90s",
        "May",
        "march",
        "Feb",
        "week",
        "weekend",
        "weeks",
        "days",
        "month",
        "year",
        "summer",
        "fall",
        "Friday",
        "night",
        "yesterday",
        "tomorrow",
        "before",
        "after",
        "past",
        "coming",
        "early",
        "end",
        "will",
        "went",
        "recently",
        "earlier",
        "later",
        "2024-02-29",
        "2023-13-45",
        "-",
        "/",
        ",",
        ".",
        "é",
        "日本",
        "'",
        "\n",
        "99999",
    ]);
    prop::collection::vec(words, 0..12).prop_map(|w| w.join(" "))
}

fn check(text: &str, reference: DateTime<Utc>) {
    let found = resolve(text, reference);
    let mut end = 0;
    for m in &found {
        assert!(m.range.start >= end, "overlap or disorder in {found:?}");
        assert!(m.range.start < m.range.end && m.range.end <= text.len());
        assert!(text.is_char_boundary(m.range.start) && text.is_char_boundary(m.range.end));
        assert_eq!(&text[m.range.clone()], m.text);
        assert!(m.span.start < m.span.end);
        end = m.range.end;
    }
    let stripped = strip(text, &found);
    assert!(stripped.len() <= text.len());
    let _ = asks_when(text);
}

proptest! {
    #[test]
    fn resolve_never_panics_on_any_text(text in any::<String>(), secs in any::<i64>()) {
        let reference = DateTime::from_timestamp(secs % 8_000_000_000_000, 0)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        check(&text, reference);
    }

    #[test]
    fn resolve_never_panics_on_time_words(text in timeish(), secs in any::<i64>()) {
        let reference = DateTime::from_timestamp(secs % 8_000_000_000_000, 0)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        check(&text, reference);
    }
}
