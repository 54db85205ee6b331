//! Time adverbials in a clause: "yesterday", "last week", "two days ago", "on Monday",
//! "in May", "this past weekend". The rules do not resolve them (the time module does);
//! they keep them out of values ("went to a support group", not "... yesterday") and
//! look past them at the start of a clause ("Yesterday I went ...").

use super::clause::Word;
use super::lexicon::listed;
use super::tables::TIME_NOUNS;

/// Words that are a time adverbial on their own.
const ALONE: &[&str] = &[
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "recently",
    "lately",
    "earlier",
    "once",
    "finally",
    "eventually",
];

/// Weekdays and months, after "on"/"in"/"last"/"this"/"next".
pub(super) const CALENDAR: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

/// Units counted before "ago".
const UNITS: &[&str] = &[
    "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks",
    "month", "months", "year", "years", "decade", "decades", "while",
];

/// Counts before a unit: "two days", "a few weeks", "a couple of months".
const COUNTS: &[&str] = &[
    "a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "few", "couple", "of", "several", "many", "some",
];

fn is_year(w: &str) -> bool {
    w.len() == 4 && w.starts_with(['1', '2']) && w.bytes().all(|b| b.is_ascii_digit())
}

fn is_count(w: &str) -> bool {
    listed(COUNTS, w) || (!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
}

/// The length of the time adverbial that starts at `words[at]`, if one does.
pub(crate) fn span_at(words: &[Word], at: usize) -> Option<usize> {
    let w = |k: usize| words.get(at + k).map(|x| x.lower()).unwrap_or("");
    let first = w(0);
    if first.is_empty() {
        return None;
    }
    if listed(ALONE, first) {
        // "earlier today", "yesterday morning".
        let more = usize::from(matches!(
            w(1),
            "morning" | "afternoon" | "evening" | "night" | "today"
        ));
        return Some(1 + more);
    }
    // "two days ago", "a few weeks ago", "a couple of months ago", "years ago".
    let counted = (0..4).take_while(|&k| is_count(w(k))).count();
    if listed(UNITS, w(counted)) && w(counted + 1) == "ago" {
        return Some(counted + 2);
    }
    // A duration: "three weeks (now)", "a couple of months"; not "a year 6 teacher".
    let counted_duration = counted > 0
        && (!matches!(first, "a" | "an") || matches!(w(1), "few" | "couple"))
        && w(counted) != "while";
    if counted_duration && listed(UNITS, w(counted)) {
        return Some(counted + 1 + usize::from(w(counted + 1) == "now"));
    }
    match first {
        "last" | "this" | "next" | "past" => {
            let k = usize::from(w(1) == "past");
            let noun = w(1 + k);
            (listed(TIME_NOUNS, noun) || listed(CALENDAR, noun)).then_some(2 + k)
        }
        "the" if w(1) == "other" && w(2) == "day" => Some(3),
        "the" if w(1) == "day" && w(2) == "before" && w(3) == "yesterday" => Some(4),
        "on" | "over" | "at" | "during" => {
            let k = usize::from(w(1) == "the");
            let noun = w(1 + k);
            let timed = listed(CALENDAR, noun)
                || matches!(noun, "weekend" | "weekends" | "holidays" | "holiday");
            timed.then_some(2 + k)
        }
        "in" => {
            let noun = w(1);
            if listed(CALENDAR, noun) || is_year(noun) {
                return Some(2);
            }
            // "in the spring", "in the summer".
            let season =
                w(1) == "the" && matches!(w(2), "spring" | "summer" | "autumn" | "fall" | "winter");
            season.then_some(3)
        }
        "back" if w(1) == "in" && (is_year(w(2)) || listed(CALENDAR, w(2))) => Some(3),
        "just" if w(1) == "now" => Some(2),
        _ => None,
    }
}

/// `words` without their time adverbials, wherever they are.
pub(crate) fn without_time<'a>(words: &[Word<'a>]) -> Vec<Word<'a>> {
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        match span_at(words, i) {
            Some(n) => i += n,
            None => {
                out.push(words[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// How many words a time adverbial takes at the start of `words` (0 when none).
pub(crate) fn leading(words: &[Word]) -> usize {
    span_at(words, 0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word<'_>> {
        s.split_whitespace().map(Word::new).collect()
    }

    fn strip(s: &str) -> String {
        without_time(&words(s))
            .iter()
            .map(|w| w.text())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn time_adverbials_leave_the_value() {
        assert_eq!(
            strip("went to a support group yesterday"),
            "went to a support group"
        );
        assert_eq!(strip("bought a house last week"), "bought a house");
        assert_eq!(strip("adopted a dog two weeks ago"), "adopted a dog");
        assert_eq!(
            strip("took my kids to the zoo on Saturday"),
            "took my kids to the zoo"
        );
        assert_eq!(strip("went to Paris in May"), "went to Paris");
        assert_eq!(strip("moved out in the spring"), "moved out");
        assert_eq!(strip("ran a 10k this past weekend"), "ran a 10k");
        assert_eq!(strip("met a friend the other day"), "met a friend");
        assert_eq!(strip("graduated back in 2019"), "graduated");
        // Not time: "in the garden", "on the beach", "a few friends".
        assert_eq!(strip("sat in the garden"), "sat in the garden");
        assert_eq!(strip("met a few friends"), "met a few friends");
    }

    #[test]
    fn a_leading_adverbial_is_measured() {
        assert_eq!(leading(&words("Yesterday I went")), 1);
        assert_eq!(leading(&words("two weeks ago I turned 42")), 3);
        assert_eq!(leading(&words("last week we bought")), 2);
        assert_eq!(leading(&words("I went")), 0);
    }
}
