//! One function per attribute family. Each reads a normalised predicate (the words after
//! the subject, adverbs dropped, negation lifted into a flag) and returns what it found.

use super::lexicon::listed;
use crate::facts::Polarity;

use super::clause::Word;
use super::lexicon::{
    COUNTS, DIETS, EMPTY_VALUES, NOT_JOBS, NOT_NAMES, NOT_PLACES, PETS, RELATIONS, REQUEST_VERBS,
};
use super::pattern::{first_match, match_prefix, value_of, Found, Rule};
use super::tables::{IMPLAUSIBLE_ALLERGENS, NATIONALITIES};
use super::value::{clean, fold_activity, split_list, Kind};

/// A first-person predicate: "I [don't] <words>".
#[derive(Debug, Clone, Default)]
pub(crate) struct Predicate<'a> {
    /// The words after the subject, adverbs and negation removed.
    pub(crate) words: Vec<Word<'a>>,
    /// Whether the verb was negated ("don't", "never", "no longer").
    pub(crate) negated: bool,
    /// Whether the verb was in the present perfect ("I've always loved").
    pub(crate) perfect: bool,
    /// Whether the statement says something stopped holding ("no longer", "not ...
    /// anymore", "used to").
    pub(crate) ceased: bool,
    /// Whether a frequency word came with it ("always", "every Sunday").
    pub(crate) frequent: bool,
    /// Whether it says something holds again or now ("again", "now", "these days").
    pub(crate) again: bool,
}

// ---------------------------------------------------------------- likes

const LIKES: &[Rule] = &[
    Rule::pos("love|adore", "likes", 0.85, "likes {}", Kind::Thing),
    Rule::pos("like|enjoy", "likes", 0.8, "likes {}", Kind::Thing),
    Rule::pos("prefer", "likes", 0.75, "likes {}", Kind::Thing),
    Rule::pos(
        "am a big|huge|massive|great|real? fan of",
        "likes",
        0.8,
        "likes {}",
        Kind::Thing,
    ),
    Rule::pos("am into", "likes", 0.8, "likes {}", Kind::Thing),
    Rule::pos(
        "am fond|crazy|passionate|obsessed|keen|mad on|of|about|with",
        "likes",
        0.8,
        "likes {}",
        Kind::Thing,
    ),
    Rule::neg(
        "hate|detest|loathe|despise",
        "likes",
        0.85,
        "dislikes {}",
        Kind::Thing,
    ),
    Rule::neg("dislike", "likes", 0.8, "dislikes {}", Kind::Thing),
    Rule::neg("try|tend to avoid", "likes", 0.7, "avoids {}", Kind::Thing),
    Rule::neg("avoid", "likes", 0.7, "avoids {}", Kind::Thing),
];

/// Past forms count only when negated ("I never liked") or perfect ("I've always loved").
const LIKES_PAST: &[Rule] = &[
    Rule::pos(
        "have? loved|adored|liked|enjoyed",
        "likes",
        0.8,
        "likes {}",
        Kind::Thing,
    ),
    Rule::neg(
        "have? hated|disliked",
        "likes",
        0.8,
        "dislikes {}",
        Kind::Thing,
    ),
];

/// `likes`: love/like/enjoy/prefer/into/fan of (positive); hate/dislike/can't stand/avoid
/// (negative). A negated positive verb is a negative like; a negated negative verb says
/// nothing.
pub(crate) fn likes(p: &Predicate) -> Vec<Found> {
    let matched = first_match(LIKES, &p.words).or_else(|| {
        (p.negated || p.perfect)
            .then(|| first_match(LIKES_PAST, &p.words))
            .flatten()
    });
    let Some((rule, mut rest)) = matched else {
        return Vec::new();
    };
    let polarity = match (rule.polarity, p.negated) {
        (Polarity::Positive, false) => Polarity::Positive,
        (Polarity::Positive, true) => Polarity::Negative,
        (Polarity::Negative, false) => Polarity::Negative,
        (Polarity::Negative, true) => return Vec::new(),
    };
    if rest.first().is_some_and(|w| w.lower == "to") {
        rest = &rest[1..];
    }
    if is_about_assistant(rest) {
        return Vec::new();
    }
    split_list(rest)
        .into_iter()
        .filter_map(|item| clean(item, Kind::Thing))
        .map(|value| fold_activity(&value))
        .map(|value| {
            let mut found = rule.found(value);
            if polarity != rule.polarity {
                found.polarity = polarity;
                found.text = format!("dislikes {}", found.value);
            }
            found
        })
        .collect()
}

/// Whether the words talk about the assistant ("the way you write", "your answers"):
/// a compliment, not a preference of the user's.
fn is_about_assistant(words: &[Word]) -> bool {
    words.iter().any(|w| {
        matches!(
            w.lower(),
            "you" | "your" | "yours" | "u" | "ur" | "chatgpt" | "assistant" | "bot"
        )
    })
}

/// `likes` from "I'm a big football fan", "I'm a huge Arsenal fan".
pub(crate) fn fan_of(p: &Predicate) -> Vec<Found> {
    let w = &p.words;
    let Some(n) = match_prefix(w, "am a|an big|huge|massive|real|total|die-hard|diehard?") else {
        return Vec::new();
    };
    let Some(k) = w[n..].iter().take(4).position(|x| x.lower == "fan") else {
        return Vec::new();
    };
    if k == 0 || w.get(n + k + 1).is_some_and(|x| x.lower == "of") {
        return Vec::new();
    }
    let polarity = if p.negated {
        Polarity::Negative
    } else {
        Polarity::Positive
    };
    clean(&w[n..n + k], Kind::Thing)
        .map(|v| {
            let text = match polarity {
                Polarity::Positive => format!("likes {v}"),
                Polarity::Negative => format!("dislikes {v}"),
            };
            vec![Found {
                attribute: "likes",
                value: v,
                text,
                polarity,
                confidence: 0.8,
                ..Found::default()
            }]
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------- allergy & diet

/// `allergy`: "I'm allergic to X", "I have a (severe) allergy to X", "I have a X allergy".
pub(crate) fn allergy(p: &Predicate) -> Vec<Found> {
    let w = &p.words;
    let rest: Option<&[Word]> = if let Some(n) = match_prefix(w, "am allergic to") {
        Some(&w[n..])
    } else if match_prefix(w, "have|suffer").is_some() {
        let at = w
            .iter()
            .position(|x| x.lower == "allergy" || x.lower == "allergies");
        match at {
            Some(i) if w.get(i + 1).is_some_and(|x| x.lower == "to") => Some(&w[i + 2..]),
            // "I have a peanut allergy": the words between the article and "allergy".
            Some(i) if i > 1 => {
                let start = w[1..i]
                    .iter()
                    .position(|x| !matches!(x.lower(), "a" | "an" | "from" | "severe"))
                    .map(|k| k + 1)
                    .unwrap_or(i);
                Some(&w[start..i])
            }
            _ => None,
        }
    } else {
        None
    };
    let Some(rest) = rest else {
        return Vec::new();
    };
    if p.negated {
        return Vec::new();
    }
    let rule = Rule::neg("", "allergy", 0.95, "is allergic to {}", Kind::Thing);
    split_list(rest)
        .into_iter()
        .filter_map(|item| clean(item, Kind::Thing))
        .filter(|v| {
            !v.to_lowercase()
                .split(' ')
                .any(|w| listed(IMPLAUSIBLE_ALLERGENS, w))
        })
        .map(|v| rule.found(v))
        .collect()
}

/// `diet`: "I'm vegetarian/vegan" (positive); "I don't eat X", "I'm lactose intolerant",
/// "I'm intolerant to X" (negative).
pub(crate) fn diet(p: &Predicate) -> Vec<Found> {
    let w = &p.words;
    // "I'm vegan", "I'm fully veggie now", "I'm a strict vegetarian".
    if let Some(n) = match_prefix(w, "am a|an? fully|completely|totally|strictly|strict|now?") {
        if let Some(d) = w.get(n).filter(|x| listed(DIETS, x.lower())) {
            if p.negated {
                return Vec::new();
            }
            let rule = Rule::pos("", "diet", 0.9, "is {}", Kind::Thing);
            return vec![rule.found(d.lower.to_string())];
        }
    }
    if p.negated {
        return Vec::new();
    }
    // "went fully vegan", "turned vegetarian", "I'm doing keto", "have gone plant-based",
    // "switched to a vegan diet": a diet taken up, read as the diet now held.
    if let Some(n) = match_prefix(
        w,
        "have|am? went|gone|going|turned|became|become|switched|doing|on to? a|an? fully|completely|full?",
    ) {
        if let Some(d) = w.get(n).filter(|x| listed(DIETS, x.lower())) {
            let rule = Rule::pos("", "diet", 0.85, "is {}", Kind::Thing);
            return vec![rule.found(d.lower.to_string())];
        }
    }
    if let Some(n) = match_prefix(w, "am") {
        if w.get(n + 1).is_some_and(|x| x.lower == "intolerant") {
            let rule = Rule::neg("", "diet", 0.9, "is {} intolerant", Kind::Thing);
            return vec![rule.found(w[n].lower.to_string())];
        }
    }
    // "I'm gluten free and dairy free", "I'm gluten-free".
    if let Some(n) = match_prefix(w, "am") {
        let items: Vec<String> = w[n..]
            .split(|x| matches!(x.lower(), "and" | "&"))
            .filter_map(|part| match part {
                [item, free] if free.lower == "free" => Some(item.lower.to_string()),
                [item] => item.lower.strip_suffix("-free").map(str::to_owned),
                _ => None,
            })
            .collect();
        if !items.is_empty() && items.iter().all(|i| !i.is_empty()) {
            let rule = Rule::neg("", "diet", 0.85, "avoids {}", Kind::Thing);
            return items.into_iter().map(|i| rule.found(i)).collect();
        }
    }
    if let Some(n) = match_prefix(w, "am intolerant to|of") {
        let rule = Rule::neg("", "diet", 0.85, "is intolerant to {}", Kind::Thing);
        return list_of(&w[n..], &rule);
    }
    if let Some(n) = match_prefix(w, "am on a|an").or_else(|| match_prefix(w, "follow a|an")) {
        let end = w[n..].iter().position(|x| x.lower == "diet");
        if let Some(end) = end.filter(|e| *e > 0) {
            let rule = Rule::pos("", "diet", 0.8, "follows a {} diet", Kind::Thing);
            return clean(&w[n..n + end], Kind::Thing)
                .map(|v| vec![rule.found(v)])
                .unwrap_or_default();
        }
    }
    Vec::new()
}

/// "as a vegan, I ...": the clause says what the user's diet is in passing.
pub(crate) fn as_a_diet(words: &[Word]) -> Vec<Found> {
    let Some(n) = match_prefix(words, "as a|an") else {
        return Vec::new();
    };
    let said_by_me = words[n + 1..]
        .iter()
        .take(3)
        .any(|w| matches!(w.lower(), "i" | "i'm" | "im"));
    match words
        .get(n)
        .filter(|d| listed(DIETS, d.lower()) && said_by_me)
    {
        Some(d) => {
            vec![Rule::pos("", "diet", 0.75, "is {}", Kind::Thing).found(d.lower.to_string())]
        }
        None => Vec::new(),
    }
}

/// `diet` (negative) from a negated "eat/drink": "I don't eat pork".
pub(crate) fn diet_avoidance(p: &Predicate) -> Vec<Found> {
    if !p.negated {
        return Vec::new();
    }
    match match_prefix(&p.words, "eat|drink") {
        Some(n) => {
            let template = if p.words[0].lower == "drink" {
                "does not drink {}"
            } else {
                "does not eat {}"
            };
            let rule = Rule::neg("", "diet", 0.8, template, Kind::Thing);
            list_of(&p.words[n..], &rule)
        }
        None => Vec::new(),
    }
}

fn list_of(rest: &[Word], rule: &Rule) -> Vec<Found> {
    split_list(rest)
        .into_iter()
        .filter_map(|item| clean(item, Kind::Thing))
        .map(|v| rule.found(v))
        .collect()
}

// ---------------------------------------------------------------- places

const PLACES: &[Rule] = &[
    Rule::pos(
        "live|reside in",
        "location",
        0.9,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos(
        "am|are living|residing in",
        "location",
        0.9,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos(
        "have lived in",
        "location",
        0.85,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos(
        "have? moved|relocated to",
        "location",
        0.85,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos(
        "am|are based in",
        "location",
        0.85,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos(
        "am|are based out of",
        "location",
        0.85,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos(
        "am|are located|settled in",
        "location",
        0.8,
        "lives in {}",
        Kind::Place,
    ),
    Rule::pos("am a native of", "origin", 0.85, "is from {}", Kind::Place),
    Rule::pos("am|come from", "origin", 0.85, "is from {}", Kind::Place),
    Rule::pos("grew up in", "origin", 0.85, "grew up in {}", Kind::Place),
    Rule::pos(
        "was born and? raised? in",
        "origin",
        0.85,
        "was born in {}",
        Kind::Place,
    ),
    Rule::pos("was raised in", "origin", 0.8, "grew up in {}", Kind::Place),
];

/// `location` and `origin`: "I live in / moved to / am based in X", "I'm from X", "I grew
/// up in X". Negated statements ("I no longer live in Paris") state nothing. `we` lowers
/// the confidence. "born in 1990" is a `birthday`.
pub(crate) fn places(p: &Predicate, we: bool) -> Vec<Found> {
    let words = live_with_in(&p.words);
    let words = words.as_deref().unwrap_or(&p.words);
    let Some((rule, rest)) = first_match(PLACES, words) else {
        if p.negated {
            return Vec::new();
        }
        let mut found = dwelling(words)
            .or_else(|| staying_in(p))
            .map(|place| Rule::pos("", "location", 0.7, "lives in {}", Kind::Place).found(place))
            .into_iter()
            .collect::<Vec<_>>();
        if we {
            for f in &mut found {
                f.confidence = 0.6;
            }
        }
        return found;
    };
    if p.negated || (we && rule.attribute != "location") {
        return Vec::new();
    }
    if rule.template == "was born in {}" && rest.first().is_some_and(|w| is_year(&w.lower)) {
        let birthday = Rule::pos("", "birthday", 0.8, "was born in {}", Kind::Date);
        return vec![birthday.found(rest[0].text.to_string())];
    }
    let Some(value) = value_of(rule, rest) else {
        return Vec::new();
    };
    let mut found = rule.found(value);
    if we {
        found.confidence = 0.6;
    }
    vec![found]
}

/// Homes whose place a statement names: "we rent a little terrace in Swansea", "bought
/// a bungalow in Devizes", "we're in a two-bed flat in Hackney".
const DWELLINGS: &[&str] = &[
    "flat",
    "apartment",
    "house",
    "bungalow",
    "cottage",
    "terrace",
    "semi",
    "maisonette",
    "bedsit",
    "townhouse",
    "houseboat",
    "narrowboat",
    "caravan",
    "cabin",
    "condo",
    "studio",
    "loft",
    "home",
    "duplex",
    "farmhouse",
];

/// Where a home the user has, rents, bought or is in stands: "rent a flat in Leeds",
/// "bought a cottage outside Hexham", "am in a house near York".
fn dwelling(words: &[Word]) -> Option<String> {
    let n = match_prefix(words, "rent|own|bought|have|got|found|am|are|live in?")?;
    let rest = &words[n..];
    if !rest
        .first()
        .is_some_and(|w| matches!(w.lower(), "a" | "an" | "our" | "my"))
    {
        return None;
    }
    let head = rest
        .iter()
        .take(5)
        .position(|w| listed(DWELLINGS, w.lower()))?;
    let prep = rest.get(head + 1)?;
    if !matches!(prep.lower(), "in" | "outside" | "near") {
        return None;
    }
    plausible_place(&rest[head + 2..])
}

/// "I've been in Manchester since April" (read as "am in"), "we're in Cork now": a
/// place the user is in for a while. Only with a time that says so (since, for a
/// while, now, these days), so "I'm in a meeting" or "I'm in bed" is no home.
fn staying_in(p: &Predicate) -> Option<String> {
    let n = match_prefix(&p.words, "am|are in")?;
    let rest = &p.words[n..];
    let lasting = p.again
        || rest.iter().enumerate().any(|(i, w)| {
            w.lower == "since"
                || (w.lower == "for"
                    && rest.get(i + 1).is_some_and(|x| {
                        super::when::span_at(rest, i + 1).is_some() || x.lower == "ages"
                    }))
        });
    lasting.then(|| plausible_place(rest)).flatten()
}

/// A place value that names somewhere (no article, possessive, number or state of mind
/// first; at most three words).
fn plausible_place(words: &[Word]) -> Option<String> {
    let first = words.first()?;
    let unlikely = listed(NOT_PLACES, first.lower())
        || first
            .lower
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit());
    if unlikely {
        return None;
    }
    let value = clean(words, Kind::Place)?;
    (value.split(' ').count() <= 3).then_some(value)
}

/// "live with my girlfriend in Melbourne" → "live in Melbourne".
fn live_with_in<'a>(words: &[Word<'a>]) -> Option<Vec<Word<'a>>> {
    let n = match_prefix(words, "live|am|are living? with")?;
    let at = words[n..].iter().take(5).position(|w| w.lower == "in")?;
    let mut out = vec![Word::new("live")];
    out.extend(words[n + at..].iter().cloned());
    Some(out)
}

fn is_year(word: &str) -> bool {
    word.len() == 4 && word.chars().all(|c| c.is_ascii_digit())
}

// ---------------------------------------------------------------- work

const WORK: &[Rule] = &[
    Rule::pos("work as a|an?", "job", 0.9, "works as {}", Kind::Job),
    Rule::pos(
        "am|have? training|retraining|trained|retrained|started|starting as a|an?",
        "job",
        0.8,
        "works as {}",
        Kind::Job,
    ),
    Rule::pos(
        "am working|employed as a|an?",
        "job",
        0.9,
        "works as {}",
        Kind::Job,
    ),
    Rule::pos(
        "work at|for",
        "employer",
        0.9,
        "works at {}",
        Kind::Organisation,
    ),
    Rule::pos(
        "am working at|for",
        "employer",
        0.85,
        "works at {}",
        Kind::Organisation,
    ),
    Rule::pos(
        "am employed at|by",
        "employer",
        0.9,
        "works at {}",
        Kind::Organisation,
    ),
];

/// `job` and `employer`: "I work as X", "I work at/for X", "I'm a/an X (at Y)".
pub(crate) fn work(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    if let Some((rule, rest)) = first_match(WORK, &p.words) {
        return value_of(rule, rest)
            .map(|v| vec![job_text(rule.found(v))])
            .unwrap_or_default();
    }
    // "I teach high school chemistry": a teacher of it.
    if let Some(n) = match_prefix(&p.words, "teach") {
        let subject = &p.words[n..];
        let plausible = subject.first().is_some_and(|w| {
            !matches!(
                w.lower(),
                "my" | "myself"
                    | "them"
                    | "him"
                    | "her"
                    | "people"
                    | "kids"
                    | "it"
                    | "you"
                    | "at"
                    | "in"
                    | "a"
                    | "an"
                    | "the"
            )
        });
        if plausible && subject.len() <= 4 {
            let rule = Rule::pos("", "job", 0.7, "works as a {}", Kind::Job);
            return clean(subject, Kind::Job)
                .map(|v| vec![rule.found(format!("{v} teacher"))])
                .unwrap_or_default();
        }
        return Vec::new();
    }
    // "I work in marketing": a lowercase field is a line of work (a capitalised one is
    // a place, read elsewhere).
    if let Some(n) = match_prefix(&p.words, "work in") {
        let field = &p.words[n..];
        if field.first().is_some_and(|w| {
            !w.is_capitalised() && !matches!(w.lower(), "a" | "an" | "the" | "my" | "this" | "that")
        }) && field.len() <= 3
        {
            let rule = Rule::pos("", "job", 0.7, "works in {}", Kind::Job);
            return clean(field, Kind::Job)
                .map(|v| vec![rule.found(v)])
                .unwrap_or_default();
        }
        return Vec::new();
    }
    let Some(n) = match_prefix(&p.words, "am a|an") else {
        return Vec::new();
    };
    let rest = &p.words[n..];
    let plausible = rest
        .first()
        .is_some_and(|w| !listed(NOT_JOBS, w.lower()) && !w.is_capitalised());
    if !plausible {
        return Vec::new();
    }
    let job = Rule::pos("", "job", 0.7, "works as {}", Kind::Job);
    let Some(value) = clean(rest, Kind::Job) else {
        return Vec::new();
    };
    let mut out = vec![job_text(job.found(value))];
    // "I'm a software engineer at Google": the employer follows "at"/"for".
    if let Some(at) = rest
        .iter()
        .position(|w| w.lower == "at" || w.lower == "for")
    {
        let tail = &rest[at + 1..];
        let named = tail.first().is_some_and(|w| {
            !matches!(
                w.lower(),
                "home"
                    | "night"
                    | "the"
                    | "work"
                    | "heart"
                    | "least"
                    | "times"
                    | "best"
                    | "most"
                    | "this"
                    | "that"
                    | "my"
                    | "it"
                    | "all"
                    | "school"
                    | "uni"
            )
        });
        if let Some(org) = clean(tail, Kind::Organisation).filter(|_| named) {
            let employer = Rule::pos("", "employer", 0.75, "works at {}", Kind::Organisation);
            out.push(employer.found(org));
        }
    }
    out
}

/// "works as nurse" → "works as a nurse".
fn job_text(mut found: Found) -> Found {
    if found.attribute == "job" {
        let article = match found.value.chars().next() {
            Some(c) if "aeiouAEIOU".contains(c) => "an",
            _ => "a",
        };
        found.text = format!("works as {article} {}", found.value);
    }
    found
}

// ---------------------------------------------------------------- age & birthday

/// `age` and `birthday`: "I'm 34", "I am 27 years old", "I just turned 40", "I was born
/// on 12 May 1990".
pub(crate) fn age_birthday(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let w = &p.words;
    if let Some(n) = match_prefix(w, "was born on") {
        let rule = Rule::pos("", "birthday", 0.9, "was born on {}", Kind::Date);
        return clean(&w[n..], Kind::Date)
            .map(|v| vec![rule.found(v)])
            .unwrap_or_default();
    }
    let (n, explicit) = if let Some(n) = match_prefix(w, "turned") {
        (n, true)
    } else if let Some(n) = match_prefix(w, "am") {
        (n, false)
    } else {
        return Vec::new();
    };
    let Some(age) = w.get(n).and_then(|x| {
        x.lower
            .parse::<u32>()
            .ok()
            .or_else(|| number_word(&x.lower))
    }) else {
        return Vec::new();
    };
    let after = w.get(n + 1).map(|x| x.lower());
    let years = matches!(after, Some("years" | "year" | "yrs" | "yo" | "y/o"));
    // "I turned 30 yesterday": when it happened is not part of the age.
    let timed = super::when::span_at(w, n + 1).is_some_and(|k| n + 1 + k == w.len());
    // "I'm 21 as of yesterday", "I'm 40 now".
    let as_of = after == Some("as") && w.get(n + 2).is_some_and(|x| x.lower == "of");
    let now = matches!(after, Some("now" | "officially"));
    if !(1..=119).contains(&age)
        || !(after.is_none() || years || timed || as_of || now || after == Some("and"))
    {
        return Vec::new();
    }
    let confidence = if explicit || years { 0.9 } else { 0.75 };
    let rule = Rule::pos("", "age", confidence, "is {} years old", Kind::Thing);
    vec![rule.found(age.to_string())]
}

/// An ordinal that can be an age turned: "79th" is 79 (from 13 on).
fn ordinal_age(nth: &str) -> Option<u32> {
    let digits = nth.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n = digits.parse::<u32>().ok()?;
    matches!(&nth[digits.len()..], "st" | "nd" | "rd" | "th")
        .then_some(n)
        .filter(|n| (13..=119).contains(n))
}

/// A number written as a word, up to ninety-nine: "twelve", "forty", "sixty-nine" (the
/// units and teens are the time resolver's counts).
pub(crate) fn number_word(word: &str) -> Option<u32> {
    const TENS: &[&str] = &[
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    let tens = |w: &str| {
        TENS.iter()
            .position(|t| *t == w)
            .map(|i| 20 + 10 * i as u32)
    };
    let unit = |w: &str| crate::time::number_word(w).filter(|n| *n < 20);
    match word.split_once('-') {
        Some((t, u)) => Some(tens(t)? + unit(u).filter(|u| (1..=9).contains(u))?),
        None => unit(word).or_else(|| tens(word)),
    }
}

/// An age said in passing, as chat does: "46 today!", "as a 45 year old, I ...", "as a
/// 45-year-old I ...". `words` is a clause with no subject of its own.
pub(crate) fn age_in_passing(words: &[Word]) -> Vec<Found> {
    let number = |w: &Word| {
        w.lower
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=119).contains(n))
    };
    // "it was my 35th birthday on wednesday", "for my 40th bday": the age turned.
    let ordinal = words.windows(3).find_map(|w| match w {
        [my, nth, birthday]
            if my.lower == "my" && matches!(birthday.lower(), "birthday" | "bday" | "b-day") =>
        {
            let digits = nth
                .lower
                .trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let suffix = &nth.lower[digits.len()..];
            let n = digits.parse::<u32>().ok()?;
            matches!(suffix, "st" | "nd" | "rd" | "th")
                .then_some(n)
                .filter(|n| (13..=119).contains(n))
        }
        _ => None,
    });
    // "had my 79th last week", "celebrated my 50th": the birthday is understood.
    let ordinal = ordinal.or_else(|| {
        words.windows(3).find_map(|w| match w {
            [verb, my, nth]
                if my.lower == "my"
                    && matches!(verb.lower(), "had" | "celebrated" | "hit" | "turned") =>
            {
                ordinal_age(&nth.lower)
            }
            _ => None,
        })
    });
    if let Some(age) = ordinal {
        let rule = Rule::pos("", "age", 0.8, "is {} years old", Kind::Thing);
        return vec![rule.found(age.to_string())];
    }
    let age = match words {
        // "46 today!!", "46 today and the kids made a cake" (a clause of its own): a
        // birthday. Anything more ("20 today, 15 yesterday") is no age.
        [n, today] if today.lower == "today" => number(n).filter(|n| *n >= 13),
        // "as a 45 year old", "as a 45-year-old".
        [as_, a, n, rest @ ..] if as_.lower == "as" && matches!(a.lower(), "a" | "an") => {
            let (n, tail) = match n.lower.split_once('-') {
                Some((digits, tail)) => (digits.parse::<u32>().ok(), tail.to_owned()),
                None => (
                    number(n),
                    rest.iter()
                        .take(2)
                        .map(|w| w.lower())
                        .collect::<Vec<_>>()
                        .join("-"),
                ),
            };
            n.filter(|n| (1..=119).contains(n) && tail.starts_with("year-old"))
        }
        _ => None,
    };
    match age {
        Some(age) => {
            let rule = Rule::pos("", "age", 0.8, "is {} years old", Kind::Thing);
            vec![rule.found(age.to_string())]
        }
        None => Vec::new(),
    }
}

/// `birthday` from "my birthday is (on) X".
pub(crate) fn my_birthday(words: &[Word]) -> Vec<Found> {
    let Some(n) = match_prefix(words, "birthday is on|in?") else {
        return Vec::new();
    };
    let rule = Rule::pos("", "birthday", 0.9, "has their birthday on {}", Kind::Date);
    clean(&words[n..], Kind::Date)
        .map(|v| vec![rule.found(v)])
        .unwrap_or_default()
}

// ---------------------------------------------------------------- language

const LANGUAGE: &[Rule] = &[
    Rule::pos("am fluent in", "language", 0.9, "speaks {}", Kind::Thing),
    Rule::pos("speak", "language", 0.85, "speaks {}", Kind::Thing),
];

/// `language`: "I speak X (and Y)", "I'm fluent in X".
pub(crate) fn language(p: &Predicate) -> Vec<Found> {
    let Some((rule, rest)) = first_match(LANGUAGE, &p.words) else {
        return Vec::new();
    };
    if p.negated {
        return Vec::new();
    }
    let skip = rest
        .iter()
        .take_while(|w| {
            matches!(
                w.lower(),
                "fluent" | "some" | "basic" | "a" | "little" | "bit" | "of"
            )
        })
        .count();
    let rest = &rest[skip..];
    if rest.first().is_none_or(|w| {
        matches!(
            w.lower(),
            "to" | "with" | "about" | "up" | "for" | "out" | "on"
        )
    }) {
        return Vec::new();
    }
    list_of(rest, rule)
}

// ---------------------------------------------------------------- goals

const GOALS: &[Rule] = &[
    Rule::pos("want to", "goal", 0.8, "wants to {}", Kind::Goal),
    Rule::pos(
        "am planning|plan to",
        "goal",
        0.85,
        "plans to {}",
        Kind::Goal,
    ),
    Rule::pos("am planning on", "goal", 0.8, "plans on {}", Kind::Goal),
    Rule::pos("am hoping|hope to", "goal", 0.7, "hopes to {}", Kind::Goal),
    Rule::pos("am aiming|aim to", "goal", 0.75, "aims to {}", Kind::Goal),
    Rule::pos("am trying to", "goal", 0.65, "is trying to {}", Kind::Goal),
    Rule::pos(
        "am training for",
        "goal",
        0.85,
        "is training for {}",
        Kind::Goal,
    ),
    Rule::pos(
        "am saving up? to",
        "goal",
        0.8,
        "is saving up to {}",
        Kind::Goal,
    ),
    Rule::pos(
        "am saving up? for",
        "goal",
        0.8,
        "is saving up for {}",
        Kind::Goal,
    ),
    Rule::pos(
        "am working towards|toward",
        "goal",
        0.75,
        "is working towards {}",
        Kind::Goal,
    ),
];

/// `goal`: "I want to", "I'm planning to", "I'm training for", ... Requests to the
/// assistant ("I want to know ...") are not goals.
pub(crate) fn goal(p: &Predicate) -> Vec<Found> {
    let Some((rule, rest)) = first_match(GOALS, &p.words) else {
        return Vec::new();
    };
    goal_value(rule, rest, p.negated)
}

/// `goal` from "my goal/dream/plan is to X".
pub(crate) fn my_goal(words: &[Word]) -> Vec<Found> {
    // "my goal this year is to ...": the time phrase goes.
    let skip_time: Vec<Word>;
    let words = if words.len() > 3
        && matches!(words[1].lower(), "this" | "next" | "for")
        && words[3].lower == "is"
    {
        skip_time = std::iter::once(words[0].clone())
            .chain(words[3..].iter().cloned())
            .collect();
        &skip_time[..]
    } else {
        words
    };
    const MY_GOALS: &[Rule] = &[
        Rule::pos(
            "goal|aim|resolution is to",
            "goal",
            0.9,
            "wants to {}",
            Kind::Goal,
        ),
        Rule::pos("dream|plan is to", "goal", 0.8, "wants to {}", Kind::Goal),
    ];
    match first_match(MY_GOALS, words) {
        // "my goal is to read more": never a request to the assistant.
        Some((rule, rest)) => value_of(rule, rest)
            .map(|v| vec![rule.found(v)])
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

fn goal_value(rule: &Rule, rest: &[Word], negated: bool) -> Vec<Found> {
    let request = rule.pattern.starts_with("want")
        && rest
            .first()
            .is_some_and(|w| listed(REQUEST_VERBS, w.lower()));
    if negated || request {
        return Vec::new();
    }
    value_of(rule, rest)
        .map(|v| vec![rule.found(v)])
        .unwrap_or_default()
}

// ---------------------------------------------------------------- family & pets

/// `family` and `pet` from "I have two kids", "I have a dog named Max", "I'm married to X".
pub(crate) fn family_pet(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let w = &p.words;
    if let Some(n) = match_prefix(w, "am married to") {
        return name_at(&w[n..])
            .map(|name| {
                let rule = Rule::pos("", "family", 0.85, "is married to {}", Kind::Thing);
                let mut found = rule.found(name.clone());
                found.value = format!("spouse {name}");
                vec![found]
            })
            .unwrap_or_default();
    }
    let Some(n) = match_prefix(w, "have|has got?") else {
        return Vec::new();
    };
    let Some(count) = w.get(n).filter(|x| listed(COUNTS, x.lower())) else {
        return Vec::new();
    };
    // Up to two describing words: "a little sister", "two rescue cats".
    let noun_at = (n + 1..(n + 4).min(w.len())).find(|&i| is_kin_or_pet(&w[i].lower));
    let Some(i) = noun_at else {
        return Vec::new();
    };
    let noun = &w[i];
    let next = w.get(i + 1).map(|x| x.lower());
    if !matches!(
        next,
        None | Some(
            "named"
                | "called"
                | "who"
                | "whose"
                | "with"
                | "at"
                | "in"
                | "haha"
                | "lol"
                | "too"
                | "now"
                | "rn"
                | "btw"
                | "and"
        )
    ) {
        return Vec::new();
    }
    let attribute = kin_or_pet(&noun.lower);
    let single = matches!(count.lower(), "a" | "an" | "one");
    // A pet keeps its describing words ("golden retriever"); a relative does not.
    let kind = if attribute == "pet" {
        w[n + 1..=i]
            .iter()
            .map(|x| x.lower())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        noun.lower.to_string()
    };
    let names = match next {
        Some("named" | "called") => names_at(&w[i + 2..]),
        _ => Vec::new(),
    };
    if !names.is_empty() {
        // "two dogs named Rex and Bella": one fact per name, the noun in the singular.
        let one = if names.len() > 1 || !single {
            singular(&kind)
        } else {
            kind
        };
        return names
            .into_iter()
            .map(|name| Found {
                attribute,
                value: format!("{one} {name}"),
                text: format!("has a {one} named {name}"),
                polarity: Polarity::Positive,
                confidence: 0.85,
                ..Found::default()
            })
            .collect();
    }
    let (value, text) = if single {
        (kind.clone(), format!("has a {kind}"))
    } else {
        let v = format!("{} {}", count.lower, kind);
        (v.clone(), format!("has {v}"))
    };
    vec![Found {
        attribute,
        value,
        text,
        polarity: Polarity::Positive,
        confidence: 0.8,
        ..Found::default()
    }]
}

/// "dogs" → "dog", "puppies" → "puppy", "children" → "child".
fn singular(noun: &str) -> String {
    let (head, last) = match noun.rsplit_once(' ') {
        Some((h, l)) => (format!("{h} "), l),
        None => (String::new(), noun),
    };
    let one = match last {
        "children" => "child".to_owned(),
        "mice" => "mouse".to_owned(),
        "fish" | "goldfish" => last.to_owned(),
        l if l.ends_with("ies") => format!("{}y", &l[..l.len() - 3]),
        l if l.ends_with("ses") || l.ends_with("shes") || l.ends_with("ches") => {
            l[..l.len() - 2].to_owned()
        }
        l if l.ends_with('s') && !l.ends_with("ss") => l[..l.len() - 1].to_owned(),
        l => l.to_owned(),
    };
    format!("{head}{one}")
}

/// Names in a list: "Rex and Bella", "Rex, Bella and Max" (commas are gone by now).
fn names_at(words: &[Word]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() && out.len() < 6 {
        match name_at(&words[i..]) {
            Some(name) if is_name(&words[i]) || (i == 0 && words.len() == 1) => {
                i += name.split(' ').count();
                out.push(name);
            }
            _ => break,
        }
        if words
            .get(i)
            .is_some_and(|w| matches!(w.lower(), "and" | "&"))
        {
            i += 1;
        } else {
            break;
        }
    }
    out
}

/// `family`/`pet` from "my wife is called Sarah", "my son's name is Leo", "my cat is Luna".
pub(crate) fn my_kin_or_pet(words: &[Word]) -> Vec<Found> {
    let Some(first) = words.first() else {
        return Vec::new();
    };
    let (noun, rest) = match first.lower.strip_suffix("'s") {
        Some(stem) if is_kin_or_pet(stem) => match match_prefix(&words[1..], "name is") {
            Some(n) => (stem.to_owned(), &words[1 + n..]),
            None => return Vec::new(),
        },
        _ if is_kin_or_pet(&first.lower) => {
            if let Some(n) = match_prefix(&words[1..], "is called|named") {
                (first.lower.to_string(), &words[1 + n..])
            } else if let Some(n) = match_prefix(&words[1..], "is") {
                // "my wife is Sarah", but not "my wife is vegetarian": a capitalised name.
                let rest = &words[1 + n..];
                if rest.len() != 1 || !rest[0].is_capitalised() {
                    return Vec::new();
                }
                (first.lower.to_string(), rest)
            } else {
                return Vec::new();
            }
        }
        _ => return Vec::new(),
    };
    let Some(name) = name_at(rest) else {
        return Vec::new();
    };
    vec![Found {
        attribute: kin_or_pet(&noun),
        value: format!("{noun} {name}"),
        text: format!("has a {noun} named {name}"),
        polarity: Polarity::Positive,
        confidence: 0.85,
        ..Found::default()
    }]
}

/// `family`/`pet` from an apposition anywhere in a clause: "my husband Tom", "our dog
/// Biscuit". Whoever the clause is about, the relation is the user's.
pub(crate) fn appositions(words: &[Word]) -> Vec<Found> {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if !matches!(w.lower(), "my" | "our") {
            continue;
        }
        // "my husband Tom", "our guinea pig pepper": one describing word may come first.
        let Some(noun) =
            (i + 1..(i + 3).min(words.len())).find(|&k| is_kin_or_pet(&words[k].lower))
        else {
            continue;
        };
        // "guinea pig": the last of two animal words.
        let noun = if words.get(noun + 1).is_some_and(|w| listed(PETS, w.lower())) {
            noun + 1
        } else {
            noun
        };
        let Some(name) = words.get(noun + 1) else {
            continue;
        };
        // A lowercase name needs a verb after it, or to end a clause of its own ("my
        // boyfriend tariq" before "and I ...").
        let alone = noun + 2 == words.len() && i == 0;
        let named = is_name(name)
            || is_lowercase_name(name, words.get(noun + 2))
            || (alone && is_lowercase_name(name, Some(&Word::new("is"))));
        if !named {
            continue;
        }
        let kind = words[i + 1..=noun]
            .iter()
            .map(|x| x.lower())
            .collect::<Vec<_>>()
            .join(" ");
        let kind = if kin_or_pet(&words[noun].lower) == "pet" {
            kind
        } else {
            words[noun].lower.to_string()
        };
        out.push(Found {
            attribute: kin_or_pet(&words[noun].lower),
            value: format!("{kind} {}", name.text),
            text: format!("has a {kind} named {}", name.text),
            polarity: Polarity::Positive,
            confidence: 0.7,
            ..Found::default()
        });
    }
    out
}

fn is_kin_or_pet(word: &str) -> bool {
    listed(RELATIONS, word) || listed(PETS, word)
}

fn kin_or_pet(word: &str) -> &'static str {
    if listed(PETS, word) {
        "pet"
    } else {
        "family"
    }
}

// ---------------------------------------------------------------- names

/// `name` from "my name is X" (`words` follow "my").
pub(crate) fn my_name(words: &[Word]) -> Vec<Found> {
    match match_prefix(words, "first|full? name is") {
        Some(n) => {
            let mut rest = &words[n..];
            while rest.len() > 1
                && rest.last().is_some_and(|w| {
                    matches!(
                        w.lower(),
                        "haha" | "btw" | "tbh" | "here" | "lol" | "though"
                    )
                })
            {
                rest = &rest[..rest.len() - 1];
            }
            name_fact(rest, 0.95)
        }
        None => Vec::new(),
    }
}

/// `name` from "I'm Alice": a single capitalised word that is not a state ("I'm Tired").
pub(crate) fn i_am_name(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let opener = match_prefix(&p.words, "am").or_else(|| match_prefix(&p.words, "go by"));
    let Some(n) = opener else {
        return Vec::new();
    };
    // "I'm Tom by the way", "I'm Ana here": trailing asides go.
    let mut end = p.words.len();
    for tail in [
        &["by", "the", "way"][..],
        &["btw"],
        &["here"],
        &["lol"],
        &["haha"],
    ] {
        if end >= n + tail.len()
            && p.words[end - tail.len()..end]
                .iter()
                .zip(tail)
                .all(|(w, t)| w.lower == *t)
        {
            end -= tail.len();
        }
    }
    let words = &p.words[n..end];
    let positive = !words.is_empty()
        && words.len() <= 2
        && words
            .iter()
            .all(|w| is_name(w) && !is_adjective_like(&w.lower));
    if !positive {
        return Vec::new();
    }
    // "I go by X" is explicit; "I'm X" is weaker evidence than "my name is X".
    name_fact(words, if n == 2 { 0.85 } else { 0.7 })
}

/// Whether a capitalised word after "I'm" reads as a nationality, profession or adjective
/// ("Danish", "Catholic", "Vegetarian", "Hungry") rather than a name.
fn is_adjective_like(word: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        "ish", "ese", "ic", "ive", "ous", "ful", "less", "able", "ible", "ian", "ist", "ed", "ing",
        "est", "er", "ary",
    ];
    listed(NATIONALITIES, word)
        || (word.len() > 4
            && SUFFIXES.iter().any(|s| word.ends_with(s))
            && !listed(KNOWN_NAMES_WITH_SUFFIX, word))
}

/// Common first names that end like adjectives or professions: still names.
const KNOWN_NAMES_WITH_SUFFIX: &[&str] = &[
    "christian",
    "brian",
    "julian",
    "vivian",
    "lillian",
    "lilian",
    "adrian",
    "damian",
    "sebastian",
    "fabian",
    "jennifer",
    "peter",
    "oliver",
    "esther",
    "heather",
    "alexander",
    "christopher",
    "roger",
    "walter",
    "jasper",
    "amber",
    "hunter",
    "tyler",
    "skyler",
    "jupiter",
    "ernest",
    "forest",
    "patric",
    "eric",
    "cedric",
    "alaric",
    "roderick",
    "frederick",
    "dominic",
    "harper",
    "cooper",
    "parker",
    "spencer",
    "archer",
    "webster",
    "baxter",
    "dexter",
    "lester",
    "chester",
    "sylvester",
    "gunther",
    "ingrid",
    "astrid",
    "mary",
    "gary",
    "rosemary",
    "olivier",
    "xavier",
    "javier",
    "ryder",
    "piper",
    "summer",
    "kimber",
    "ember",
    "river",
    "silver",
    "ashley",
    "marian",
    "miriam",
    "gillian",
    "mohammed",
    "ahmed",
    "alfred",
    "irving",
    "lucian",
    "florian",
    "kristian",
    "bastian",
    "winifred",
];

/// `name` from "call me X" (`words` follow "call me").
pub(crate) fn call_me(words: &[Word]) -> Vec<Found> {
    name_fact(words, 0.9)
}

fn name_fact(words: &[Word], confidence: f32) -> Vec<Found> {
    let Some(name) = name_at(words) else {
        return Vec::new();
    };
    let rule = Rule::pos("", "name", confidence, "name is {}", Kind::Thing);
    vec![rule.found(name)]
}

/// Words that follow a name in "my wife priya is away", "our hamster nibbles was",
/// "my fiance oliver and I": a verb or "and", so the word before is its subject.
const AFTER_NAME: &[&str] = &[
    "is", "was", "has", "had", "and", "who", "just", "still", "will", "would", "can", "could",
    "passed", "died", "turned", "got", "gets", "does", "did", "keeps", "always", "never", "loves",
    "hates", "sleeps", "eats", "went", "started", "finally",
];

/// A name written in lowercase, as chat does, right after a relation or pet: a word that
/// is no function word, verb form, adverb or relation itself, followed by a verb or
/// "and" (`next`).
pub(crate) fn is_lowercase_name(word: &Word, next: Option<&Word>) -> bool {
    let lower = word.lower();
    let verb_after = next.is_some_and(|n| {
        let n = n.lower();
        listed(AFTER_NAME, n)
            // "my girlfriend ximena made me watch an opera": any past tense.
            || super::morph::is_past(n)
            || (n.len() > 3
                && n.ends_with('s')
                && !n.ends_with("ss")
                && super::morph::present_base(n).is_some())
    });
    verb_after
        && lower.len() > 1
        && lower.chars().all(char::is_alphabetic)
        && !listed(NOT_NAMES, lower)
        && !listed(EMPTY_VALUES, lower)
        && !listed(super::lexicon::ADVERBS, lower)
        && !listed(super::lexicon::AUXILIARIES, lower)
        && !listed(AFTER_NAME, lower)
        && !is_kin_or_pet(lower)
        // A gerund ("running") is no name; a noun that ends like one ("pudding",
        // "dumpling", "sterling") can be.
        && !(lower.ends_with("ing") && super::morph::is_known_base(&super::morph::lemma(lower)))
        && !super::morph::is_past(lower)
        && !super::morph::present_base(lower)
            .is_some_and(|b| b != lower && super::morph::is_known_base(&b))
        && !matches!(
            lower,
            "the"
                | "a"
                | "an"
                | "and"
                | "or"
                | "but"
                | "who"
                | "that"
                | "which"
                | "too"
                | "also"
                | "here"
                | "there"
                | "now"
                | "then"
                | "so"
                | "is"
                | "was"
                | "of"
                | "in"
                | "on"
                | "at"
                | "to"
                | "for"
                | "with"
                | "from"
                | "by"
                | "as"
                | "if"
                | "not"
                | "no"
                | "own"
                | "new"
                | "old"
                | "little"
                | "big"
                | "best"
                | "other"
                | "late"
                | "ex"
                | "first"
                | "second"
                | "third"
                | "two"
                | "three"
                | "one"
        )
}

/// Up to three capitalised words ("David Chen"); a single lowercase word is accepted
/// when it is all there is ("my name is alice").
fn name_at(words: &[Word]) -> Option<String> {
    let run: Vec<&str> = words
        .iter()
        .take(3)
        .take_while(|w| is_name(w))
        .map(|w| w.text())
        .collect();
    if !run.is_empty() {
        return Some(run.join(" "));
    }
    let only = words.first().filter(|_| words.len() == 1)?;
    let plausible = only.lower.chars().all(char::is_alphabetic)
        && !listed(NOT_NAMES, only.lower())
        && !listed(EMPTY_VALUES, only.lower());
    plausible.then(|| only.text.to_string())
}

fn is_name(word: &Word) -> bool {
    word.is_capitalised()
        && word.text != "I"
        && word
            .text
            .chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
        && !listed(NOT_NAMES, word.lower())
}
