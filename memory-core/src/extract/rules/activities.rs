//! What the user does: learning, plans, routines, instruments and sports they play, and
//! what they own.

use super::families::Predicate;
use super::lexicon::listed;
use super::pattern::{first_match, match_prefix, Found, Rule};
use super::value::{clean, split_list, Kind};

const LEARNING: &[Rule] = &[
    Rule::pos(
        "am learning|studying|practising|practicing",
        "learning",
        0.85,
        "is learning {}",
        Kind::Activity,
    ),
    Rule::pos(
        "am teaching myself",
        "learning",
        0.85,
        "is learning {}",
        Kind::Activity,
    ),
    Rule::pos(
        "started|began learning|studying",
        "learning",
        0.85,
        "is learning {}",
        Kind::Activity,
    ),
    Rule::pos(
        "started|began|am taking|doing|attending a|an|some?",
        "learning",
        0.8,
        "is taking {} lessons",
        Kind::Activity,
    ),
    Rule::pos(
        "have been learning",
        "learning",
        0.85,
        "is learning {}",
        Kind::Activity,
    ),
];

/// Words that make "taking X lessons" a course of learning.
const LESSONS: &[&str] = &[
    "lessons", "lesson", "classes", "class", "course", "courses", "training", "tuition",
];

/// `learning`: "I'm learning Korean", "I'm taking guitar lessons", "I started studying law".
pub(crate) fn learning(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let Some((rule, rest)) = first_match(LEARNING, &p.words) else {
        return Vec::new();
    };
    if rule.template.ends_with("lessons") {
        // "taking guitar lessons": the subject is before the lesson word.
        let Some(at) = rest.iter().take(5).position(|w| listed(LESSONS, w.lower())) else {
            return Vec::new();
        };
        let rest = match rest[..at].iter().position(|w| w.lower == "in") {
            Some(_) => &rest[..0],
            None => &rest[..at],
        };
        let learn = Rule::pos("", "learning", 0.8, "is learning {}", Kind::Activity);
        return clean(rest, Kind::Activity)
            .map(|v| vec![learn.found(v)])
            .unwrap_or_default();
    }
    let rest = match rest.first().map(|w| w.lower()) {
        Some("how" | "to") => {
            &rest[rest
                .iter()
                .take_while(|w| w.lower == "how" || w.lower == "to")
                .count()..]
        }
        Some("about") => return Vec::new(),
        _ => rest,
    };
    split_list(rest)
        .into_iter()
        .filter_map(|item| clean(item, Kind::Activity))
        .map(|v| rule.found(v))
        .collect()
}

/// Courses of study: "a masters in marine biology", "an apprenticeship", "a PhD on bees".
const DEGREES: &[&str] = &[
    "masters",
    "master's",
    "degree",
    "phd",
    "msc",
    "ma",
    "ba",
    "bsc",
    "diploma",
    "doctorate",
    "apprenticeship",
    "mba",
    "pgce",
    "mphil",
    "llm",
    "btec",
    "nvq",
    "foundation",
    "access",
];

/// `study`: "I'm doing a masters in marine biology", "I'm in my final year of nursing at
/// Cardiff", "I enrolled on an evening course in Italian", "I started an apprenticeship".
pub(crate) fn study(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let w = &p.words;
    let rule = Rule::pos("", "study", 0.8, "is studying {}", Kind::Activity);
    // "am in my final year of nursing", "am in first year at uni doing law".
    if let Some(n) = match_prefix(
        w,
        "am in my|the? first|second|third|fourth|final|last year of|at",
    ) {
        return clean(&w[n..], Kind::Activity)
            .map(|v| vec![rule.found(v)])
            .unwrap_or_default();
    }
    let Some(n) = match_prefix(
        w,
        "am|have doing|studying|taking|starting|started|began|enrolled|signed up on|in|for|onto? a|an|my",
    ) else {
        return Vec::new();
    };
    let rest = &w[n..];
    // Up to three describing words before the course: "a part-time evening course".
    let Some(at) = rest
        .iter()
        .take(4)
        .position(|x| listed(DEGREES, x.lower()) || x.lower == "course")
    else {
        return Vec::new();
    };
    let course = rest[..=at]
        .iter()
        .map(|x| x.lower())
        .collect::<Vec<_>>()
        .join(" ");
    let subject = match rest.get(at + 1).map(|x| x.lower()) {
        Some("in" | "on") => clean(&rest[at + 2..], Kind::Activity),
        _ => None,
    };
    let value = match subject {
        Some(subject) => format!("{course} in {subject}"),
        None if course != "course" => course,
        None => return Vec::new(),
    };
    let article = if value.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    let mut found = rule.found(value.clone());
    found.text = format!("is doing {article} {value}");
    vec![found]
}

const PLANS: &[Rule] = &[
    Rule::pos(
        "am planning|organising|organizing|booking|arranging a|an",
        "plan",
        0.85,
        "is planning {}",
        Kind::Plan,
    ),
    Rule::pos(
        "have planned|booked a|an",
        "plan",
        0.85,
        "is planning {}",
        Kind::Plan,
    ),
    Rule::pos(
        "am going on|getting a|an",
        "plan",
        0.75,
        "is planning {}",
        Kind::Plan,
    ),
    Rule::pos("am moving to", "plan", 0.8, "is moving to {}", Kind::Plan),
    Rule::pos(
        "am applying to|for",
        "plan",
        0.75,
        "is applying to {}",
        Kind::Plan,
    ),
];

/// `plan`: "I'm planning a trip to Peru in May", "I've booked a holiday in Crete".
pub(crate) fn plan(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let Some((rule, rest)) = first_match(PLANS, &p.words) else {
        return Vec::new();
    };
    let value = clean(rest, rule.kind);
    let value = value.filter(|v| {
        !v.split(' ')
            .any(|w| matches!(w, "it" | "something" | "you"))
    });
    value.map(|v| vec![rule.found(v)]).unwrap_or_default()
}

/// A new pastime: "I just started running", "I took up pottery" → `likes`.
pub(crate) fn took_up(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let Some(n) = super::pattern::match_prefix(&p.words, "started|began|took|have|am up?")
        .filter(|_| matches!(p.words[0].lower(), "started" | "began" | "took" | "have"))
    else {
        return Vec::new();
    };
    if p.words[0].lower == "took" && p.words.get(1).is_none_or(|w| w.lower != "up") {
        return Vec::new();
    }
    let rest = &p.words[n..];
    let activity = rest.first().is_some_and(|w| {
        (w.lower.ends_with("ing") && w.lower.len() > 4) || p.words[0].lower == "took"
    });
    if !activity
        || rest.first().is_some_and(|w| {
            matches!(
                w.lower(),
                "thinking" | "wondering" | "feeling" | "getting" | "going" | "trying" | "looking"
            )
        })
    {
        return Vec::new();
    }
    let rule = Rule::pos("", "likes", 0.75, "has taken up {}", Kind::Activity);
    clean(rest, Kind::Activity)
        .map(|v| vec![rule.found(v)])
        .unwrap_or_default()
}

/// Things one plays: "I play the cello", "I play tennis on Sundays" → `likes`.
pub(crate) fn plays(p: &Predicate) -> Vec<Found> {
    if p.negated || p.words.first().is_none_or(|w| w.lower != "play") {
        return Vec::new();
    }
    let rest = &p.words[1..];
    if rest.first().is_some_and(|w| {
        matches!(
            w.lower(),
            "with" | "around" | "along" | "it" | "a" | "an" | "dumb" | "dead" | "by"
        )
    }) {
        return Vec::new();
    }
    let rule = Rule::pos("", "likes", 0.75, "plays {}", Kind::Activity);
    split_list(rest)
        .into_iter()
        .filter_map(|item| clean(item, Kind::Activity))
        .map(|v| {
            let v = v.strip_prefix("the ").map(str::to_owned).unwrap_or(v);
            rule.found(v)
        })
        .collect()
}

const POSSESSIONS: &[Rule] = &[
    Rule::pos(
        "drive a|an",
        "possession",
        0.75,
        "drives a {}",
        Kind::Activity,
    ),
    Rule::pos("own a|an", "possession", 0.75, "owns a {}", Kind::Activity),
    Rule::pos(
        "have bought|got a|an new?",
        "possession",
        0.7,
        "has a {}",
        Kind::Activity,
    ),
];

/// `possession`: "I drive a 2012 Honda Civic", "I own a Steinway piano".
pub(crate) fn possession(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let Some((rule, rest)) = first_match(POSSESSIONS, &p.words) else {
        return Vec::new();
    };
    clean(rest, rule.kind)
        .map(|v| vec![rule.found(v)])
        .unwrap_or_default()
}

/// `routine`: a present-tense activity with a frequency ("I always swim on Sunday
/// mornings", "I go to the gym every morning"). The value is the verb phrase.
pub(crate) fn routine(p: &Predicate) -> Vec<Found> {
    if p.negated || !p.frequent {
        return Vec::new();
    }
    let Some(verb) = p.words.first() else {
        return Vec::new();
    };
    if !super::notes::is_activity_verb(&verb.lower) || p.words.len() < 2 {
        return Vec::new();
    }
    let words: Vec<&str> = p.words.iter().map(|w| w.text()).collect();
    let value = words.join(" ");
    let value = value
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_owned();
    if value.split(' ').count() > 10 {
        return Vec::new();
    }
    vec![Found {
        attribute: "routine",
        text: super::notes::third_person(&p.words),
        value,
        polarity: crate::facts::Polarity::Positive,
        confidence: 0.75,
        ..Found::default()
    }]
}
