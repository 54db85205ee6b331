//! A last pass over what the rules found in a message: changes of state said as events
//! carry what they end, a few readings the clause rules get wrong are put right, and
//! health disclosures are never lost.
//!
//! Everything it knows is in the tables below (English, small and general):
//!
//! - [`ENDING_VERBS`]: an event or note that opens with one of them ends what follows
//!   ("left the band", "has quit caffeine", "got divorced");
//! - [`PARTNER_ENDING_STATUSES`]: a relationship status that ends a partner ("single",
//!   "divorced");
//! - [`HABIT_NOUNS`]: "I'm a smoker" is a habit, not a job;
//! - [`EXCLUSIVE_VERBS`]: notes with one value at a time ("supports Hibs" then "supports
//!   Wigan");
//! - the health tables live in [`health`](super::health), whose readings are added here.

use super::health::{find_word, health_class, health_facts};
use crate::facts::{FactCandidate, Transition};

/// Verbs (with their particles) that end what their object names.
const ENDING_VERBS: &[&str] = &[
    "quit",
    "has quit",
    "have quit",
    "stopped",
    "has stopped",
    "gave up",
    "has given up",
    "given up",
    "left",
    "has left",
    "dropped out of",
    "dropped",
    "called off",
    "cancelled",
    "finished",
    "retired from",
    "moved out of",
    "sold",
    "got rid of",
    "gave away",
    "rehomed",
    "broke up with",
    "split up with",
    "split from",
    "separated from",
    "divorced",
    "got divorced",
    "got divorced from",
    "lost",
    "put down",
    "had to put down",
    "deleted",
    "binned",
    "ditched",
    "scrapped",
    "kicked",
    "resigned from",
    "handed in my notice at",
    "handed in notice at",
    "walked out of",
    "put an end to",
    "called time on",
    "came off",
    "come off",
    "weaned off",
    "tapered off",
    "got off",
    "bowed out of",
    "resigned",
];

/// Verbs of a state one holds one of at a time when "now" says it changed: "I drive a
/// Hyundai now" after "I drive an old Dacia".
const NOW_REPLACES: &[&str] = &["drives", "rides", "uses", "commutes", "goes"];

/// Relationship statuses that end the user's partner.
const PARTNER_ENDING_STATUSES: &[&str] = &["single", "divorced", "separated", "widowed"];

/// Nouns of habits: "I'm a smoker" says a habit, not a job.
const HABIT_NOUNS: &[&str] = &[
    "smoker",
    "non-smoker",
    "non smoker",
    "heavy smoker",
    "social smoker",
    "vaper",
    "drinker",
    "heavy drinker",
    "social drinker",
    "non-drinker",
    "teetotaller",
    "teetotaler",
    "coffee drinker",
    "tea drinker",
    "night owl",
    "early riser",
];

/// Verbs whose notes hold one value at a time: a team supported.
const EXCLUSIVE_VERBS: &[(&str, &str)] = &[("supports", "team supported")];

/// Revises the candidates found in `text` (see the module docs) and adds the health
/// disclosures no rule read.
pub(super) fn revise(text: &str, mut found: Vec<FactCandidate>) -> Vec<FactCandidate> {
    let now = super::health::find_word(&text.to_lowercase(), "now").is_some();
    for c in &mut found {
        if now
            && c.transition.is_none()
            && c.subject.is_none()
            && matches!(c.attribute.as_deref(), Some("note" | "possession"))
            && NOW_REPLACES.contains(&c.text.split(' ').next().unwrap_or_default())
        {
            c.transition = Some(Transition::Replaces { from: None });
        }
        fix_grammar(c);
        habit(c);
        exclusive_note(c);
        ending(c);
        partner_status(c);
        health_class(c);
    }
    if !found
        .iter()
        .any(|c| c.attribute.as_deref() == Some("relationship"))
    {
        found.extend(couple_endings(text));
    }
    for h in super::habits::habits(text) {
        // "smokes about 15 a day" read as a note, "is teetotal" as a diet: the habit
        // family's reading of the same words takes their place.
        let attribute = h.attribute.clone().unwrap_or_default();
        found.retain(|c| {
            c.subject.is_some()
                || !matches!(
                    c.attribute.as_deref(),
                    Some("note" | "likes" | "diet" | "habit" | "event" | "routine")
                )
                || !super::habits::mentions(&attribute, &c.text)
        });
        found.push(h);
    }
    for h in health_facts(text) {
        let names = |c: &FactCandidate| {
            let t = c.text.to_lowercase();
            h.value
                .as_deref()
                .is_some_and(|v| t.contains(&v.to_lowercase()))
        };
        // An event or note that tells it in passing ("found out they are allergic to
        // …") gives way to the health fact; a rule's own reading of it stays, and so
        // does an ending ("my eczema has cleared up" is no news of eczema).
        found.retain(|c| {
            !(names(c)
                && c.transition.is_none()
                && matches!(c.attribute.as_deref(), Some("event") | Some("note")))
        });
        if !found.iter().any(names) {
            found.push(h);
        }
    }
    found
}

/// "they am" (a first person turned third by halves) reads "they are".
fn fix_grammar(c: &mut FactCandidate) {
    for (wrong, right) in [("they am ", "they are "), ("they was ", "they were ")] {
        if c.text.contains(wrong) {
            c.text = c.text.replace(wrong, right);
        }
        if let Some(v) = c.value.as_mut().filter(|v| v.contains(wrong)) {
            *v = v.replace(wrong, right);
        }
    }
}

fn habit(c: &mut FactCandidate) {
    let Some(value) = c.value.as_deref() else {
        return;
    };
    let v = value.to_lowercase();
    if c.attribute.as_deref() == Some("job") && HABIT_NOUNS.contains(&v.as_str()) {
        c.attribute = Some("habit".into());
        c.text = format!("is a {v}");
    }
}

fn exclusive_note(c: &mut FactCandidate) {
    if !matches!(c.attribute.as_deref(), Some("note") | Some("likes")) {
        return;
    }
    let lower = c.text.to_lowercase();
    for (verb, attribute) in EXCLUSIVE_VERBS {
        if let Some(rest) = lower.strip_prefix(verb).and_then(|r| r.strip_prefix(' ')) {
            let start = c.text.len() - rest.len();
            c.value = Some(c.text[start..].to_owned());
            c.attribute = Some((*attribute).into());
        }
    }
}

/// An event or note that opens with an ending verb ends what follows it.
fn ending(c: &mut FactCandidate) {
    if c.transition.is_some() || !matches!(c.attribute.as_deref(), Some("event") | Some("note")) {
        return;
    }
    let lower = c.text.to_lowercase();
    let verb = ENDING_VERBS
        .iter()
        .filter(|v| lower == **v || lower.starts_with(&format!("{v} ")))
        .max_by_key(|v| v.len());
    let Some(verb) = verb else { return };
    let rest = c.text[verb.len()..].trim();
    let object = rest
        .trim_start_matches("their ")
        .trim_start_matches("the ")
        .trim_start_matches("a ")
        .trim_end_matches(|ch: char| !ch.is_alphanumeric());
    let object = match object {
        // "got divorced", "stopped", "quit" alone: the verb names what ended.
        "" => verb.rsplit(' ').next().unwrap_or(verb),
        o => o,
    };
    c.transition = Some(Transition::Ends {
        object: object.to_owned(),
    });
}

fn partner_status(c: &mut FactCandidate) {
    let is_status = c.attribute.as_deref() == Some("relationship")
        && c.value
            .as_deref()
            .is_some_and(|v| PARTNER_ENDING_STATUSES.contains(&v.to_lowercase().as_str()));
    if is_status && c.transition.is_none() && c.subject.is_none() {
        c.transition = Some(Transition::Ends {
            object: "partner".into(),
        });
    }
    // "has a partner named Tobiah" takes the place of "is single".
    let is_partner = c.attribute.as_deref() == Some("family")
        && c.value.as_deref().is_some_and(|v| {
            let relation = v.split(' ').next().unwrap_or_default().to_lowercase();
            PARTNERS.contains(&relation.as_str())
        });
    if is_partner && c.transition.is_none() && c.subject.is_none() {
        c.transition = Some(Transition::Replaces {
            from: Some("single".into()),
        });
    }
}

/// Relations that are a partner: a new one ends being single.
pub(super) const PARTNERS: &[&str] = &[
    "partner",
    "boyfriend",
    "girlfriend",
    "husband",
    "wife",
    "fiance",
    "fiancee",
    "fiancé",
    "fiancée",
];

/// How a couple says it ended ("we're divorced", "we split up last month"): the status
/// each says.
const COUPLE_ENDINGS: &[(&str, &str)] = &[
    ("we're divorced", "divorced"),
    ("we are divorced", "divorced"),
    ("we got divorced", "divorced"),
    ("we're getting divorced", "divorced"),
    ("we're separated", "separated"),
    ("we are separated", "separated"),
    ("we separated", "separated"),
    ("we broke up", "single"),
    ("we've broken up", "single"),
    ("we split up", "single"),
    ("we've split up", "single"),
    ("we called it quits", "single"),
];

/// A relationship status from a couple's ending, which ends the user's partner.
fn couple_endings(text: &str) -> Vec<FactCandidate> {
    let lower = text.to_lowercase().replace('\u{2019}', "'");
    COUPLE_ENDINGS
        .iter()
        .find(|(said, _)| find_word(&lower, said).is_some())
        .map(|(_, status)| {
            let mut c = FactCandidate::new(format!("is {status}"), 0.85)
                .with_attribute("relationship", *status);
            c.transition = Some(Transition::Ends {
                object: "partner".into(),
            });
            c
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_said_as_events_carry_what_they_end() {
        let mut c =
            FactCandidate::new("left the choir", 0.8).with_attribute("event", "left the choir");
        ending(&mut c);
        assert_eq!(
            c.transition,
            Some(Transition::Ends {
                object: "choir".into()
            })
        );
        let mut c = FactCandidate::new("got divorced", 0.8).with_attribute("event", "got divorced");
        ending(&mut c);
        assert_eq!(
            c.transition,
            Some(Transition::Ends {
                object: "divorced".into()
            })
        );
    }
}
