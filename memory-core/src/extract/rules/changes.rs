//! Changes of state and corrections: "I no longer live in Lyon", "I quit Siemens", "I
//! started a new job at Bosch", "I got married", "actually it's ramen".
//!
//! A fact that stopped holding comes out with the opposite polarity and a "no longer"
//! text, so reconciliation supersedes the positive fact and keeps it as history.

use super::lexicon::listed;
use crate::facts::{Polarity, Transition};

use super::clause::Word;
use super::families::Predicate;
use super::pattern::{first_match, match_prefix, Found, Rule};
use super::tables::{ANIMAL_FOODS, DIET_ITEMS};
use super::value::{clean, split_list, Kind};

/// The attribute a correction candidate carries until reconciliation resolves it to the
/// fact it corrects (see [`crate::store_support::reconcile`]).
pub(crate) const CORRECTION: &str = "correction";

/// `found`, turned into its "no longer" form: opposite polarity, text prefixed.
pub(crate) fn ceased(found: Found) -> Found {
    let polarity = match found.polarity {
        Polarity::Positive => Polarity::Negative,
        Polarity::Negative => Polarity::Positive,
    };
    let text = match found.text.strip_prefix("is ") {
        Some(rest) => format!("is no longer {rest}"),
        None => format!(
            "no longer {}",
            found
                .text
                .strip_prefix("dislikes ")
                .map(|r| format!("dislikes {r}"))
                .unwrap_or(found.text.clone())
        ),
    };
    let transition = Some(Transition::Ends {
        object: found.value.clone(),
    });
    Found {
        polarity,
        text,
        confidence: found.confidence.max(0.8),
        transition,
        ..found
    }
}

const JOINED: &[Rule] = &[
    Rule::pos(
        "started|began|got|took|have|accepted a|an? new? job|position|role at|with",
        "employer",
        0.9,
        "works at {}",
        Kind::Organisation,
    ),
    Rule::pos(
        "started|began working|work at|for",
        "employer",
        0.9,
        "works at {}",
        Kind::Organisation,
    ),
    Rule::pos(
        "joined",
        "employer",
        0.85,
        "works at {}",
        Kind::Organisation,
    ),
    Rule::pos(
        "am now at|with",
        "employer",
        0.8,
        "works at {}",
        Kind::Organisation,
    ),
];

const LEFT: &[Rule] = &[Rule::neg(
    "quit|left my? job|position|role? at|with?",
    "employer",
    0.85,
    "no longer works at {}",
    Kind::Organisation,
)];

/// Verbs that state a change: joined/started at an organisation, quit/left one, gave up
/// or stopped a habit or food, got married, started eating meat again.
pub(crate) fn state_change(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let w = &p.words;
    if let Some((rule, mut rest)) = first_match(JOINED, w) {
        // "joined the Guardian": the article goes before a name.
        if rest.len() > 1 && rest[0].lower == "the" && rest[1].is_capitalised() {
            rest = &rest[1..];
        }
        let named = rest
            .first()
            .is_some_and(|x| x.is_capitalised() || rule.pattern.contains("job"));
        if let Some(v) = clean(rest, rule.kind).filter(|_| named) {
            return vec![rule.found(v)];
        }
    }
    if let Some((rule, rest)) = first_match(LEFT, w) {
        // "quit my job at ikea", "I quit Siemens", "quit siemens": a named place of work;
        // "quit smoking" and "quit sugar" are habits (read below).
        let by_job = w.len() - rest.len() >= 3;
        let habit = rest.first().is_some_and(|x| {
            x.lower.ends_with("ing")
                || listed(DIET_ITEMS, x.lower())
                || matches!(
                    x.lower(),
                    "my" | "the"
                        | "a"
                        | "it"
                        | "that"
                        | "this"
                        | "school"
                        | "uni"
                        | "college"
                        | "home"
                        | "work"
                )
        });
        // A lowercase single word ("quit pottery", "quit siemens") is read as a habit
        // below; its ending still finds the employer it names.
        let named = rest.first().is_some_and(Word::is_capitalised) || by_job;
        if named && !habit {
            if let Some(v) = clean(rest, rule.kind) {
                let mut f = rule.found(v.clone());
                f.transition = Some(Transition::Ends { object: v });
                return vec![f];
            }
        }
    }
    if let Some(n) = match_prefix(w, "got|am|have|became|become") {
        if let Some(s) = w.get(n).map(|x| x.lower()) {
            let status = match s {
                "married" | "hitched" => Some("married"),
                "engaged" => Some("engaged"),
                "divorced" => Some("divorced"),
                "separated" => Some("separated"),
                "widowed" => Some("widowed"),
                _ => None,
            };
            if let Some(status) = status.filter(|_| w[0].lower != "am") {
                let rule = Rule::pos("", "relationship", 0.9, "is {}", Kind::Thing);
                return vec![rule.found(status.to_owned())];
            }
        }
    }
    if let Some(n) = match_prefix(w, "broke|split up with?") {
        let rule = Rule::pos("", "relationship", 0.75, "is {}", Kind::Thing);
        let mut out = Vec::new();
        // "broke up with Anna": whatever names Anna ends too. The ending comes first, so
        // the status it leads to is not among what it closes.
        let partner = clean(&w[n..], Kind::Activity).filter(|_| w[n - 1].lower == "with");
        if let Some(partner) = partner {
            let text = format!("broke up with {partner}");
            out.push(Found {
                attribute: "event",
                value: text.clone(),
                text,
                polarity: Polarity::Positive,
                confidence: 0.75,
                transition: Some(Transition::Ends { object: partner }),
                ..Found::default()
            });
        }
        out.push(rule.found("single".to_owned()));
        return out;
    }
    // "I quit smoking", "I gave up meat", "I stopped eating sugar".
    // "gave up" needs its "up": "I gave a presentation" gives nothing up.
    // "packed in badminton", "jacked in the job": the British "in" for "up".
    let given_up = match_prefix(w, "gave|give|given up")
        .or_else(|| match_prefix(w, "packed|jacked|chucked in"))
        .or_else(|| match_prefix(w, "quit|stopped"));
    if let Some(n) = given_up {
        // "gave up on keto", "stopped going to pottery": what was given up follows.
        let n = n + match_prefix(&w[n..], "on").unwrap_or(0);
        let n = n + match_prefix(&w[n..], "going|doing to?").unwrap_or(0);
        let mut rest = &w[n..];
        let eating = rest
            .first()
            .is_some_and(|x| matches!(x.lower(), "eating" | "drinking"));
        if eating {
            rest = &rest[1..];
        }
        // The verb as said: "quit smoking", "stopped the violin lessons", "gave up sugar".
        let said = w[..n]
            .iter()
            .map(|x| x.lower())
            .collect::<Vec<_>>()
            .join(" ");
        return split_list(rest)
            .into_iter()
            .filter_map(|item| clean(item, Kind::Activity))
            .filter(|v| {
                !v.split(' ')
                    .any(|x| matches!(x, "my" | "job" | "it" | "that"))
            })
            .map(|v| {
                let lower = v.to_lowercase();
                let mut f = if eating || listed(DIET_ITEMS, lower.as_str()) {
                    Rule::neg("", "diet", 0.85, "does not eat {}", Kind::Thing).found(lower)
                } else {
                    let mut f = Rule::neg("", "likes", 0.75, "", Kind::Thing).found(v.clone());
                    f.text = format!("{said} {v}");
                    f
                };
                // "stopped the violin lessons" ends "is learning the violin".
                f.transition = Some(Transition::Ends { object: v });
                f
            })
            .collect();
    }
    // "I eat fish again", "I started eating meat": contradicts a vegetarian diet.
    let (n, cue) = match match_prefix(w, "started|began|am eating|drinking") {
        Some(n) if w[0].lower != "am" => (Some(n), true),
        _ => (match_prefix(w, "eat|drink"), p.again),
    };
    if let (Some(n), true) = (n, cue) {
        let n = if w.get(n).is_some_and(|x| x.lower == "eating") {
            n + 1
        } else {
            n
        };
        let foods: Vec<Found> = split_list(&w[n..])
            .into_iter()
            .filter_map(|item| clean(item, Kind::Activity))
            .filter(|v| listed(ANIMAL_FOODS, v.to_lowercase().as_str()))
            .map(|v| Rule::pos("", "diet", 0.8, "eats {}", Kind::Thing).found(v.to_lowercase()))
            .collect();
        if !foods.is_empty() {
            return foods;
        }
    }
    Vec::new()
}

/// A correction with no subject of its own: "actually it's ramen", "I meant Lille",
/// "correction: 35". Reconciliation applies it to the fact stated last.
pub(crate) fn correction(words: &[Word]) -> Vec<Found> {
    let n = match_prefix(words, "it|that is|was")
        .or_else(|| match_prefix(words, "i meant|mean"))
        .or_else(|| match_prefix(words, "make that|it"))
        .or_else(|| match_prefix(words, "i said|say the wrong thing? it is|was"))
        .or_else(|| (words.len() <= 3).then_some(0));
    let Some(n) = n else {
        return Vec::new();
    };
    let rest = &words[n..];
    let end = rest
        .iter()
        .position(|w| matches!(w.lower(), "not" | "instead" | "sorry" | "my" | "lol"))
        .unwrap_or(rest.len());
    let Some(value) = clean(&rest[..end], Kind::Thing) else {
        return Vec::new();
    };
    if value.split(' ').count() > 4 {
        return Vec::new();
    }
    vec![Found {
        attribute: CORRECTION,
        text: value.clone(),
        value,
        polarity: Polarity::Positive,
        confidence: 0.9,
        ..Found::default()
    }]
}

/// Statuses a couple takes together: "we got engaged", "we're married" say the user's.
const COUPLE_STATUSES: &[&str] = &["married", "hitched", "engaged", "divorced", "separated"];

/// "we got engaged", "we got married at the registry office", "we're engaged": the
/// couple's status is the user's relationship.
pub(crate) fn couple_status(p: &Predicate) -> Vec<Found> {
    if p.negated {
        return Vec::new();
    }
    let Some(n) = match_prefix(&p.words, "just|finally|officially? got|are|have|became") else {
        return Vec::new();
    };
    let n = n + match_prefix(&p.words[n..], "just|finally|officially|now|been|gotten").unwrap_or(0);
    let Some(status) = p
        .words
        .get(n)
        .map(|x| x.lower())
        .filter(|s| listed(COUPLE_STATUSES, s))
    else {
        return Vec::new();
    };
    let status = if status == "hitched" {
        "married"
    } else {
        status
    };
    let rule = Rule::pos("", "relationship", 0.9, "is {}", Kind::Thing);
    vec![rule.found(status.to_owned())]
}

/// "the divorce came through in march", "my divorce from Graham was finalised": the
/// user is divorced, as "I got divorced" says.
pub(crate) fn divorce_final(words: &[Word]) -> Vec<Found> {
    // "the decree absolute came through": the last step of a divorce.
    let decree = |i: usize| {
        words[i].lower() == "decree"
            && words
                .get(i + 1)
                .is_some_and(|w| matches!(w.lower(), "absolute" | "nisi"))
    };
    let Some(at) = (0..words.len()).find(|&i| words[i].lower() == "divorce" || decree(i)) else {
        return Vec::new();
    };
    let at = if decree(at) { at + 1 } else { at };
    let opened = at > 0 && matches!(words[at - 1].lower(), "the" | "my" | "our" | "decree");
    let after = &words[at + 1..];
    let done = after.iter().take(6).enumerate().any(|(i, w)| {
        matches!(w.lower(), "finalised" | "finalized" | "final" | "official")
            || (matches!(w.lower(), "came" | "went" | "got")
                && after.get(i + 1).is_some_and(|t| t.lower == "through"))
    });
    if !(opened && done)
        || words
            .iter()
            .any(|w| matches!(w.lower(), "not" | "never" | "if" | "when"))
    {
        return Vec::new();
    }
    let rule = Rule::pos("", "relationship", 0.85, "is {}", Kind::Thing);
    vec![rule.found("divorced".to_owned())]
}
