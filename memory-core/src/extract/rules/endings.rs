//! Endings and transitions in everyday words: "I sold my car", "I lost my job", "I got
//! laid off from Deloitte", "I got promoted to regional director", "I retired", "I
//! switched to a Pixel", "Miso passed away", "our dog Rex died".
//!
//! What ended is named as said and carried as a [`Transition`]: reconciliation closes
//! whichever current fact it names, of any attribute; with nothing to close, the
//! statement is kept as an event.

use crate::facts::{Polarity, Transition};

use super::clause::Word;
use super::families::Predicate;
use super::lexicon::{listed, DIETS, EMPTY_VALUES, PETS, RELATIONS};
use super::notes::possessive_to_third;
use super::pattern::{match_prefix, Found, Rule};
use super::value::{clean, Kind};
use super::when;

/// Verbs (and their particles) that end what their object names.
const ENDING: &str = "sold|lost|ended|cancelled|canceled|donated|returned|scrapped|closed|\
                      sold|totaled|totalled|crashed";

/// A thing that ended: an event in the user's words, carrying what it names.
fn ended(said: &[Word], object: &[Word], confidence: f32) -> Option<Found> {
    let object = when::without_time(object);
    // "my car", "the Honda", "their job": the thing, without whose it was.
    let skip = usize::from(object.first().is_some_and(|w| {
        matches!(
            w.lower(),
            "my" | "our" | "the" | "their" | "his" | "her" | "a" | "an"
        )
    }));
    let named = clean(&object[skip..], Kind::Thing)?;
    if named.split(' ').count() > 5 || listed(EMPTY_VALUES, &named.to_lowercase()) {
        return None;
    }
    let words = when::without_time(said);
    let text = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                w.lower().to_owned()
            } else {
                possessive_to_third(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let text = text
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_owned();
    Some(Found {
        attribute: "event",
        value: text.clone(),
        text,
        polarity: Polarity::Positive,
        confidence,
        transition: Some(Transition::Ends { object: named }),
        ..Found::default()
    })
}

/// "I sold my car", "I lost my job", "I got rid of the sofa", "I moved out of Leeds",
/// "I got laid off (from Deloitte)", "I got promoted to X", "I retired", "I graduated
/// from X", "I switched (from Y) to X".
pub(crate) fn endings(p: &Predicate) -> Vec<Found> {
    if p.negated || p.ceased {
        return Vec::new();
    }
    let w = &p.words;
    if let Some(n) = match_prefix(w, ENDING)
        .or_else(|| match_prefix(w, "gave away"))
        .or_else(|| match_prefix(w, "got rid of"))
        .or_else(|| match_prefix(w, "moved out of"))
        .or_else(|| match_prefix(w, "dropped out of"))
    {
        let object = cut(&w[n..]);
        return ended(&w[..n + object.len()], object, 0.8)
            .into_iter()
            .collect();
    }
    if let Some(n) = match_prefix(w, "got|was|were|have|am laid|let off|go?")
        .or_else(|| match_prefix(w, "got|was|were|have|am fired|sacked|dismissed"))
        .or_else(|| match_prefix(w, "got|was|were|have|am made redundant"))
        .or_else(|| match_prefix(w, "have been laid|let off|go?"))
    {
        let rest = &w[n..];
        let from = match_prefix(rest, "from|at|by").map(|k| &rest[k..]);
        if let Some(org) = from.and_then(|o| clean(o, Kind::Organisation)) {
            let rule = Rule::neg("", "employer", 0.85, "no longer works at {}", Kind::Thing);
            let mut f = rule.found(org.clone());
            f.transition = Some(Transition::Ends { object: org });
            return vec![f];
        }
        let said: Vec<Word> = std::iter::once(Word::new("lost"))
            .chain(std::iter::once(Word::new("their")))
            .chain(std::iter::once(Word::new("job")))
            .collect();
        let mut f = ended(&said, &said[1..], 0.8)
            .into_iter()
            .collect::<Vec<_>>();
        for e in &mut f {
            let how = w[..n]
                .iter()
                .filter(|x| !matches!(x.lower(), "was" | "were" | "have" | "am" | "been"))
                .map(|x| x.lower())
                .collect::<Vec<_>>()
                .join(" ");
            e.text = format!("got {}", how.trim_start_matches("got "));
            e.value = e.text.clone();
        }
        return f;
    }
    if let Some(n) = match_prefix(w, "got|was|were|have|am|been promoted to")
        .or_else(|| match_prefix(w, "have been promoted to"))
    {
        let rule = Rule::pos("", "job", 0.85, "works as {}", Kind::Job);
        return clean(&w[n..], Kind::Job)
            .map(|v| {
                let mut f = rule.found(v.clone());
                let article = if v.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                f.text = format!("works as {article} {v}");
                vec![f]
            })
            .unwrap_or_default();
    }
    if let Some(n) = match_prefix(w, "retired|am|have retired?") {
        if w.iter().take(n).any(|x| x.lower == "retired") {
            let rule = Rule::pos("", "job", 0.85, "is retired", Kind::Thing);
            let mut out = vec![rule.found("retired".to_owned())];
            if let Some(k) = match_prefix(&w[n..], "from") {
                if let Some(org) = clean(&w[n + k..], Kind::Organisation) {
                    let mut f =
                        Rule::neg("", "employer", 0.8, "no longer works at {}", Kind::Thing)
                            .found(org.clone());
                    f.transition = Some(Transition::Ends { object: org });
                    out.push(f);
                }
            }
            return out;
        }
    }
    if let Some(n) = match_prefix(w, "graduated from") {
        let object = cut(&w[n..]);
        return ended(&w[..n + object.len()], object, 0.75)
            .into_iter()
            .collect();
    }
    if match_prefix(w, "graduated|qualified").is_some() {
        // "I graduated last week": their studies ended.
        let said = [Word::new("graduated")];
        let object = [Word::new("their"), Word::new("studies")];
        let mut found: Vec<Found> = ended(&object, &object, 0.75).into_iter().collect();
        for f in &mut found {
            f.text = said[0].lower().to_owned();
            f.value = f.text.clone();
        }
        return found;
    }
    switched(w)
}

/// "switched to a Pixel", "switched from Windows to Linux", "upgraded to an iPhone 15":
/// the user uses something new in place of what they used.
fn switched(w: &[Word]) -> Vec<Found> {
    let Some(n) = match_prefix(w, "switched|changed|upgraded|swapped over?") else {
        return Vec::new();
    };
    let rest = &w[n..];
    let (from, to) = match match_prefix(rest, "from") {
        Some(k) => match rest[k..].iter().position(|x| x.lower == "to") {
            Some(t) => (Some(&rest[k..k + t]), &rest[k + t + 1..]),
            None => return Vec::new(),
        },
        None => match match_prefix(rest, "to") {
            Some(k) => (None, &rest[k..]),
            None => return Vec::new(),
        },
    };
    let to = when::without_time(to);
    if to.iter().any(|x| listed(DIETS, x.lower())) {
        return Vec::new();
    }
    let Some(new) = clean(&to, Kind::Activity) else {
        return Vec::new();
    };
    let article = match to.first().map(|x| x.lower()) {
        Some(a @ ("a" | "an")) => format!("{a} "),
        _ => String::new(),
    };
    let text = format!("uses {article}{new}");
    let from = from.and_then(|f| clean(f, Kind::Thing));
    vec![Found {
        attribute: "note",
        value: text.clone(),
        text,
        polarity: Polarity::Positive,
        confidence: 0.75,
        transition: Some(Transition::Replaces { from }),
        ..Found::default()
    }]
}

/// The object up to a clause-like stop ("because", "so", "and").
fn cut<'w, 'a>(words: &'w [Word<'a>]) -> &'w [Word<'a>] {
    let end = words
        .iter()
        .position(|x| {
            matches!(
                x.lower(),
                "because" | "so" | "and" | "but" | "which" | "when" | "after" | "to" | "for"
            )
        })
        .unwrap_or(words.len());
    &words[..end]
}

/// "Miso passed away", "our dog Rex died", "my grandma passed away last month": the one
/// named is gone; whatever the user held about them as theirs closes. `words` is the
/// whole clause.
pub(crate) fn passed_away(words: &[Word]) -> Vec<Found> {
    let (who, n) = match words.first().map(|w| w.lower()) {
        Some("my" | "our") => {
            let Some(kin) = words
                .get(1)
                .filter(|w| listed(RELATIONS, w.lower()) || listed(PETS, w.lower()))
            else {
                return Vec::new();
            };
            match words.get(2).filter(|w| is_name(w)) {
                Some(name) => (format!("{} {}", kin.lower(), name.text()), 3),
                None => (kin.lower().to_owned(), 2),
            }
        }
        Some(_) if words.first().is_some_and(is_name) => (words[0].text().to_owned(), 1),
        // "gerald passed away": chat writes names in lowercase.
        Some(first) if is_plain_subject(first) => (first.to_owned(), 1),
        _ => return Vec::new(),
    };
    let rest = &words[n..];
    let Some(k) = match_prefix(rest, "passed away|on")
        .or_else(|| match_prefix(rest, "died"))
        .or_else(|| match_prefix(rest, "was put down|to sleep"))
    else {
        return Vec::new();
    };
    let said: Vec<String> = rest[..k].iter().map(|w| w.lower().to_owned()).collect();
    let text = format!("{who} {}", said.join(" "));
    vec![Found {
        attribute: "event",
        value: text.clone(),
        text,
        polarity: Polarity::Positive,
        confidence: 0.8,
        transition: Some(Transition::Ends { object: who }),
        ..Found::default()
    }]
}

/// What a thing's own ending is said with, after the thing: "the oboe era is over", "my
/// membership lapsed", "the rash has cleared up", "the old van got written off", "the
/// band played their farewell gig". Data, read in order; each a [`match_prefix`] pattern.
/// (A thing given to someone, "the cello went to a lad from the orchestra", is a
/// [chat shape](super::chat_shapes).)
const THING_ENDINGS: &[&str] = &[
    "is|was|has|had been? over|finished|done|history|gone",
    "is|was behind me|us",
    "is|was no more",
    "is|was a thing of the past",
    "has|had cleared|healed up?",
    "cleared|healed up?",
    "has|had? gone|went away",
    "has|had? lapsed|expired",
    "got|was|has|had been? stolen|nicked|pinched|towed|scrapped|repossessed|sold",
    "got|was|has|had been? written off",
    "went belly up",
    "has|had fallen by the wayside",
    "fell by the wayside",
    "is|was gathering|collecting dust",
    "played their|our|its|the farewell|final|last gig|show|game|match|concert",
    "split|broke up",
    "disbanded|folded",
    "called it a day|quits",
];

/// After a thing's name with "'s" ("the oboe era's over", "my eczema's cleared up"), what
/// the "'s" ("is" or "has") begins.
const AFTER_IS: &[&str] = &[
    "been? over|finished|done|history|gone",
    "no more",
    "cleared|healed up?",
    "lapsed|expired",
    "been? stolen|nicked|pinched|towed|scrapped|repossessed|sold",
    "been? written off",
    "fallen by the wayside",
];

/// Words between a thing and its ending that change nothing: "the rash has finally
/// cleared up", "the samba lot officially called it a day".
const BETWEEN: &[&str] = &[
    "finally",
    "officially",
    "just",
    "completely",
    "fully",
    "totally",
    "now",
    "sadly",
    "basically",
    "well",
    "truly",
    "properly",
    "actually",
    "already",
    "recently",
    "eventually",
];

/// "the oboe era is over", "my national trust membership lapsed", "the trigger finger has
/// cleared up", "our old van got written off": a thing of the user's (said with "my", "our" or "the", at most four words)
/// whose own ending follows it. It ends whatever current fact of the user's it names, as
/// "I sold my car" does; people are left to [`passed_away`] (a relation "went away" or
/// "split up" is no fact of the user's that ended). `words` is the whole clause.
pub(crate) fn thing_ended(words: &[Word]) -> Vec<Found> {
    if !matches!(words.first().map(|w| w.lower()), Some("my" | "our" | "the")) {
        return Vec::new();
    }
    for end in 2..=5.min(words.len().saturating_sub(1)) {
        let thing = &words[1..end];
        let last = thing[thing.len() - 1].lower();
        if thing
            .iter()
            .any(|w| listed(RELATIONS, w.lower()) || !w.lower().chars().any(char::is_alphabetic))
            || super::lexicon::someone_elses(thing.iter().map(|w| w.lower()))
        {
            return Vec::new();
        }
        let mut rest = &words[end..];
        while rest.first().is_some_and(|w| listed(BETWEEN, w.lower())) {
            rest = &rest[1..];
        }
        // "the oboe era's over": the "'s" is "is".
        if let Some(stem) = last
            .strip_suffix("'s")
            .or_else(|| last.strip_suffix("\u{2019}s"))
        {
            if let Some(n) = AFTER_IS.iter().find_map(|p| match_prefix(rest, p)) {
                let stem = stem.to_owned();
                let mut object = thing[..thing.len() - 1].to_vec();
                object.push(Word::new(&stem));
                return thing_ending(&words[..end], &rest[..n], &object);
            }
            continue;
        }
        if let Some(n) = THING_ENDINGS.iter().find_map(|p| match_prefix(rest, p)) {
            return thing_ending(&words[..end], &rest[..n], thing);
        }
    }
    Vec::new()
}

/// The ending of `thing` (as said: `subject`, then its ending `how`), as an event that
/// ends it.
fn thing_ending(subject: &[Word], how: &[Word], thing: &[Word]) -> Vec<Found> {
    let mut said = subject.to_vec();
    said.extend(how.iter().cloned());
    ended(&said, thing, 0.75).into_iter().collect()
}

/// A lowercase word that can be who died: no pronoun, article or function word.
fn is_plain_subject(word: &str) -> bool {
    word.len() > 1
        && word.chars().all(char::is_alphabetic)
        && !listed(EMPTY_VALUES, word)
        && !listed(
            &[
                "the",
                "a",
                "an",
                "this",
                "that",
                "he",
                "she",
                "they",
                "it",
                "someone",
                "everyone",
                "nobody",
                "somebody",
                "who",
                "which",
                "what",
                "i",
                "you",
                "we",
                "everything",
                "something",
                "nothing",
                "one",
                "phone",
                "laptop",
                "battery",
                "car",
                "plant",
                "plants",
                "conversation",
                "party",
                "show",
                "series",
            ],
            word,
        )
}

/// "we had Nibbles put to sleep", "I had to have my dog put down": the pet that was put
/// down ends. `words` is an "I" or "we" clause.
pub(crate) fn put_down(words: &[Word]) -> Vec<Found> {
    let Some(at) = words.iter().position(|w| w.lower == "put") else {
        return Vec::new();
    };
    let how = &words[at + 1..];
    let k = match match_prefix(how, "to sleep").or_else(|| match_prefix(how, "down")) {
        Some(k) => k,
        None => return put_to_sleep(words, at),
    };
    let Some(have) = words[..at]
        .iter()
        .rposition(|w| matches!(w.lower(), "have" | "had" | "has" | "get" | "got"))
    else {
        return Vec::new();
    };
    let object = &words[have + 1..at];
    if object.is_empty() || object.len() > 3 {
        return Vec::new();
    }
    let mut said = vec![Word::new("had")];
    said.extend(object.iter().cloned());
    said.extend(words[at..at + 1 + k].iter().cloned());
    ended(&said, object, 0.8).into_iter().collect()
}

/// "(had|decided) to put X down / to sleep", done (not "have to put my phone down"): the
/// object between "put" (at `at`) and its particle, at most three words and not a pronoun.
fn put_to_sleep(words: &[Word], at: usize) -> Vec<Found> {
    let led = at >= 2
        && words[at - 1].lower() == "to"
        && matches!(words[at - 2].lower(), "had" | "decided");
    if !led {
        return Vec::new();
    }
    let how = &words[at + 1..];
    let Some((len, k)) = (1..=3.min(how.len())).find_map(|len| {
        let rest = &how[len..];
        match_prefix(rest, "to sleep")
            .or_else(|| match_prefix(rest, "down"))
            .map(|k| (len, k))
    }) else {
        return Vec::new();
    };
    let object = &how[..len];
    if object.iter().any(|w| {
        matches!(
            w.lower(),
            "it" | "him" | "her" | "them" | "this" | "that" | "something"
        )
    }) {
        return Vec::new();
    }
    // Said as the other form says it: "had Rolo put down".
    let mut said = vec![Word::new("had")];
    said.extend(object.iter().cloned());
    said.push(words[at].clone());
    said.extend(how[len..len + k].iter().cloned());
    ended(&said, object, 0.8).into_iter().collect()
}

fn is_name(w: &Word) -> bool {
    w.is_capitalised()
        && w.text() != "I"
        && w.text().chars().all(|c| c.is_alphabetic() || c == '-')
        && !listed(EMPTY_VALUES, w.lower())
        && !listed(
            &[
                "the", "a", "an", "this", "that", "my", "our", "he", "she", "they", "it",
                "someone", "everyone", "nobody", "somebody",
            ],
            w.lower(),
        )
}
