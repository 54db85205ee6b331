//! States and changes said the way people chat, without "I" and a verb the clause rules
//! read: "living in Bergen means four raincoats", "married to Priya eleven years", "our
//! cockatiel, Sir Biscuit, whistles", "lifelong Hibs supporter", "two years into cello
//! lessons", "my Vauxhall Corsa has 150k miles on it", "the new gig at the garden centre",
//! "me and Ollie have been seeing each other", "the Corsa got scrapped".
//!
//! Each shape is said again as the plain sentence the rules know ("I live in Bergen.",
//! "I drive a Vauxhall Corsa.") and added after the text ([`with_plain_sentences`]): the
//! facts, their families and the changes they make come from the one set of rules.
//! The shapes are data (English, small and general); a clause with a joke marker, a
//! question and someone else's clause are left alone.

use super::lexicon::{listed, someone_elses, PETS};
use super::tables::JOKE_MARKERS;

/// Car makes: "my Vauxhall Corsa" is a car the user drives.
const CAR_MAKES: &[&str] = &[
    "ford",
    "vauxhall",
    "opel",
    "vw",
    "volkswagen",
    "toyota",
    "honda",
    "nissan",
    "kia",
    "hyundai",
    "bmw",
    "audi",
    "mercedes",
    "skoda",
    "seat",
    "fiat",
    "renault",
    "peugeot",
    "citroen",
    "mini",
    "volvo",
    "tesla",
    "mazda",
    "suzuki",
    "dacia",
    "jeep",
    "polestar",
    "subaru",
    "lexus",
    "mg",
    "jaguar",
    "porsche",
    "chevrolet",
    "chevy",
    "dodge",
    "cupra",
    "byd",
];

/// Words that end a name or place taken from a shape: "Bergen *means*", "Priya *eleven*
/// years".
const STOPS: &[&str] = &[
    "means", "and", "so", "since", "for", "with", "but", "which", "is", "are", "was", "has",
    "have", "had", "now", "these", "this", "that", "the", "on", "at", "in", "from", "to", "after",
    "before", "when", "where", "who", "until", "till", "because", "bc", "cos", "as", "just",
    "still", "every", "last", "next", "years", "months", "weeks", "days", "year", "month", "week",
    "its", "it's", "lol", "haha", "honestly", "though", "then", "we", "i", "i'm", "im", "my",
    "our", "he", "she", "they", "makes", "keeps", "gets", "whistles", "screams", "today",
    "recently", "ago", "by", "of", "after", "during",
];

/// Whether `word` ends a name taken from a shape: a word of [`STOPS`], a day or month
/// ("Priya *monday*"), or a count ("Priya *eleven* years").
fn stops_a_name(word: &str) -> bool {
    listed(STOPS, word)
        || listed(super::when::CALENDAR, word)
        || matches!(word, "yesterday" | "tomorrow" | "tonight")
        || super::families::number_word(word).is_some()
}

/// Words that open a clause without changing what it says: "so", "honestly", "ugh".
const OPENERS: &[&str] = &[
    "so", "honestly", "well", "ugh", "anyway", "btw", "also", "and", "but", "oh", "yeah", "ok",
    "okay", "still", "finally", "quick", "update", "fyi",
];

/// Who gets a thing given away: "the cello went to *a lad* from the orchestra".
const TAKERS: &[&str] = &[
    "collector",
    "buyer",
    "dealer",
    "scrapyard",
    "scrap",
    "lad",
    "girl",
    "boy",
    "friend",
    "neighbour",
    "neighbor",
    "charity",
    "kid",
    "student",
    "family",
    "owner",
    "home",
    "colleague",
    "cousin",
    "mate",
    "woman",
    "man",
    "teenager",
];

/// Where an animal goes when it is rehomed.
const REHOMED_TO: &[&str] = &["rescue", "sanctuary", "shelter", "rehoming", "farm"];

/// Words for the kind of thing given up, after what it was: "the plant based *thing*",
/// "the keto *phase*".
const GIVEN_UP_KINDS: &[&str] = &[
    "thing",
    "stuff",
    "phase",
    "lifestyle",
    "diet",
    "kick",
    "lark",
];

/// "i'm done with the plant based thing": a diet given up is no longer held ("I'm no longer
/// plant-based."); anything else is given up ("I gave up the quiz nights.").
fn done_with(thing: &str) -> String {
    let words: Vec<&str> = thing.split(' ').collect();
    let kept = words
        .iter()
        .rposition(|w| !listed(GIVEN_UP_KINDS, &w.to_lowercase()))
        .map_or(&words[..], |last| &words[..=last]);
    let diet = kept.join("-").to_lowercase();
    if listed(super::lexicon::DIETS, &diet) {
        format!("I'm no longer {diet}.")
    } else {
        format!("I gave up {thing}.")
    }
}

/// `text` with a plain sentence added after each sentence for every chat shape it holds
/// (right after it, so that a retraction that follows takes it back too).
pub(super) fn with_plain_sentences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for sentence in text.split_inclusive(['.', '!', '?', '\n']) {
        out.push_str(sentence);
        if sentence.trim_end().ends_with('?') {
            continue;
        }
        let mut plain = Vec::new();
        for clause in sentence.split([',', ';', '(', ')', ':']) {
            let words: Vec<&str> = clause
                .split_whitespace()
                .map(|w| {
                    w.trim_matches(|c: char| c.is_ascii_punctuation() && c != '\'' && c != '-')
                })
                .filter(|w| !w.is_empty())
                .collect();
            if words
                .iter()
                .any(|w| listed(JOKE_MARKERS, &w.to_lowercase()))
            {
                continue;
            }
            plain.extend(plain_sentences(&words, sentence));
        }
        if plain.is_empty() {
            continue;
        }
        if !out.trim_end().ends_with(['.', '!']) {
            let end = out.trim_end().len();
            out.truncate(end);
            out.push('.');
        }
        for p in plain {
            out.push(' ');
            out.push_str(&p);
        }
        out.push(' ');
    }
    out
}

/// The plain sentences one clause's `words` say (`sentence` is the whole sentence, for
/// the shapes that look beyond the clause).
fn plain_sentences(words: &[&str], sentence: &str) -> Vec<String> {
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    let start = lower.iter().take_while(|w| listed(OPENERS, w)).count();
    let (w, l) = (&words[start..], &lower[start..]);
    let mut out = Vec::new();
    let at = |i: usize, s: &str| l.get(i) == Some(&s);
    let name = |from: usize, most: usize| -> Option<String> {
        let taken: Vec<&str> = w
            .iter()
            .zip(l)
            .skip(from)
            .take_while(|(_, l)| !stops_a_name(l))
            .take(most)
            .map(|(w, _)| *w)
            .collect();
        (!taken.is_empty()).then(|| taken.join(" "))
    };
    let find = |s: &[&str]| (0..l.len()).find(|&i| l[i..].starts_with(s));

    // "living in Bergen", "living near Girona".
    if at(0, "living") && (at(1, "in") || at(1, "near")) {
        if let Some(place) = name(2, 3) {
            out.push(format!("I live in {place}."));
        }
    }
    // "renting a little place near Porto", "we've been renting a flat in Hove".
    if let Some(r) = l.iter().position(|x| *x == "renting") {
        if let Some(p) = (r + 1..l.len().min(r + 6)).find(|&i| l[i] == "in" || l[i] == "near") {
            if let Some(place) = name(p + 1, 3) {
                out.push(format!("I live in {place}."));
            }
        }
    }
    // "the last boxes at our new place in Newport", "moved into the new flat in Hove".
    for home in ["place", "flat", "house", "home", "cottage", "bungalow"] {
        if let Some(i) = find(&["new", home, "in"]) {
            if i > 0 && matches!(l[i - 1], "our" | "my" | "the") {
                if let Some(place) = name(i + 3, 3) {
                    out.push(format!("I live in {place}."));
                }
            }
        }
    }
    // "we moved from Cork to Galway", "just moved into a flat in Hove": the user's move
    // (no one else's before the verb).
    if let Some(m) = l.iter().position(|x| *x == "moved") {
        let ours = l[..m].iter().all(|x| {
            matches!(
                *x,
                "i" | "we"
                    | "i've"
                    | "we've"
                    | "ive"
                    | "weve"
                    | "just"
                    | "finally"
                    | "have"
                    | "recently"
                    | "actually"
                    | "officially"
            )
        });
        let to = if at(m + 1, "from") {
            (m + 2..l.len()).find(|&i| l[i] == "to")
        } else if at(m + 1, "into") {
            (m + 2..l.len().min(m + 7)).find(|&i| l[i] == "in")
        } else {
            None
        };
        if let Some(place) = to.filter(|_| ours).and_then(|t| name(t + 1, 3)) {
            out.push(format!("I moved to {}.", capitalised(&place)));
        }
    }
    // "let the national trust membership lapse": an ending.
    if at(0, "let") && matches!(l.get(1).copied(), Some("the" | "my" | "our")) {
        if let Some(e) = l
            .iter()
            .position(|x| matches!(*x, "lapse" | "expire" | "lapsed" | "expired"))
            .filter(|e| (3..=6).contains(e))
        {
            out.push(format!("I cancelled the {}.", w[2..e].join(" ")));
        }
    }
    // "my 58th was spent in minor injuries".
    if at(0, "my") && matches!(l.get(2).copied(), Some("was" | "is")) {
        if let Some(n) = l.get(1).and_then(|n| ordinal(n)) {
            out.push(format!("I turned {n}."));
        }
    }
    // "had my 79th last week", "celebrated my 50th".
    if let Some(m) =
        find(&["my"]).filter(|&m| m >= 1 && matches!(l[m - 1], "had" | "celebrated" | "hit"))
    {
        if let Some(n) = l.get(m + 1).and_then(|n| ordinal(n)) {
            out.push(format!("I turned {n}."));
        }
    }
    // "the retirement do was lovely", "my retirement party".
    if let Some(r) = l.iter().position(|x| *x == "retirement") {
        if r >= 1
            && matches!(l[r - 1], "the" | "my")
            && matches!(
                l.get(r + 1).copied(),
                Some("do" | "party" | "drinks" | "lunch" | "dinner")
            )
        {
            out.push("I retired.".to_owned());
        }
    }
    // "traded the Panda in for a Zoe", "swapped my old bike for a road bike": what was
    // traded is gone.
    if let Some(t) = l
        .iter()
        .position(|x| matches!(*x, "traded" | "swapped" | "part-exchanged" | "exchanged"))
    {
        let ours = l[..t].iter().all(|x| {
            matches!(
                *x,
                "i" | "we" | "finally" | "just" | "have" | "i've" | "we've"
            )
        });
        if ours && matches!(l.get(t + 1).copied(), Some("the" | "my" | "our")) {
            let end = (t + 2..l.len()).find(|&i| matches!(l[i], "in" | "for"));
            if let Some(end) = end.filter(|e| (t + 3..=t + 5).contains(e)) {
                out.push(format!("I sold the {}.", w[t + 2..end].join(" ")));
            }
        }
    }
    // "married to Priya eleven years".
    if at(0, "married") && at(1, "to") {
        if let Some(who) = name(2, 2) {
            out.push(format!("I'm married to {who}."));
        }
    }
    // "being single at 34", "single for a good two years".
    if (at(0, "being") && at(1, "single"))
        || (at(0, "single") && matches!(l.get(1).copied(), Some("for" | "since" | "again")))
    {
        out.push("I'm single.".to_owned());
    }
    // "started my first shift as a crane operator", "first day as a paramedic".
    if let Some(a) = find(&["as"]).filter(|&a| {
        a >= 1
            && matches!(l[a - 1], "shift" | "day" | "week")
            && (at(a + 1, "a") || at(a + 1, "an"))
    }) {
        if l[..a]
            .iter()
            .any(|x| matches!(*x, "started" | "start" | "first"))
        {
            if let Some(job) = name(a + 2, 3) {
                let article = if at(a + 1, "an") { "an" } else { "a" };
                out.push(format!("I work as {article} {job}."));
            }
        }
    }
    // "got the job at the piano workshop".
    if let Some(g) = find(&["got", "the", "job", "at"]).or_else(|| find(&["got", "a", "job", "at"]))
    {
        let from = g + 4 + usize::from(at(g + 4, "the"));
        if let Some(place) = name(from, 4) {
            let the = if at(g + 4, "the") { "the " } else { "" };
            out.push(format!("I work at {the}{place}."));
        }
    }
    // "Casimir and I pulled the plug", "me and Dev split up", "we went our separate ways".
    let ended = find(&["pulled", "the", "plug"])
        .or_else(|| find(&["split", "up"]))
        .or_else(|| find(&["broke", "up"]))
        .or_else(|| find(&["called", "it", "quits"]))
        .or_else(|| find(&["went", "our", "separate", "ways"]));
    if let Some(e) = ended {
        if at(0, "me") && at(1, "and") && e >= 3 {
            out.push(format!(
                "I broke up with {}.",
                capitalised(&w[2..e].join(" "))
            ));
        } else if e >= 3 && at(e - 2, "and") && matches!(l[e - 1], "i" | "me") && e <= 4 {
            out.push(format!(
                "I broke up with {}.",
                capitalised(&w[..e - 2].join(" "))
            ));
        } else if e == 1 && at(0, "we") {
            out.push("We split up.".to_owned());
        }
    }
    // "Olu popped the question": engaged.
    if find(&["popped", "the", "question"]).is_some() {
        out.push("We got engaged.".to_owned());
    }
    // "half a year since my last roll-up": a habit given up.
    if let Some(s) = find(&["since", "my", "last"]) {
        let timed = l[..s].iter().any(|x| {
            matches!(
                *x,
                "year" | "years" | "months" | "month" | "weeks" | "week" | "days"
            )
        });
        let habit = l.get(s + 3).copied().filter(|x| {
            matches!(
                *x,
                "cigarette"
                    | "cigarettes"
                    | "fag"
                    | "fags"
                    | "roll-up"
                    | "rollie"
                    | "cig"
                    | "smoke"
                    | "drink"
                    | "pint"
                    | "vape"
                    | "joint"
                    | "coffee"
                    | "bet"
            )
        });
        if let Some(habit) = habit.filter(|_| timed) {
            out.push(format!("I gave up {habit}s."));
        }
    }
    // "been on the wagon since new year": not drinking.
    if find(&["on", "the", "wagon"]).is_some() && !l.contains(&"off") {
        out.push("I'm teetotal now.".to_owned());
    }
    // "gave the bonsai trees to a retired neighbour".
    if let Some(g) = l.iter().position(|x| *x == "gave") {
        if matches!(l.get(g + 1).copied(), Some("the" | "my" | "our")) {
            if let Some(t) = (g + 3..l.len().min(g + 6)).find(|&i| l[i] == "to") {
                out.push(format!("I gave away the {}.", w[g + 2..t].join(" ")));
            }
        }
    }
    // "since the motorhome's been sold", "the van was sold".
    if at(0, "the") || at(0, "since") {
        let from = usize::from(at(0, "since")) + usize::from(at(1, "the"));
        if let Some(sold) = l.iter().position(|x| *x == "sold").filter(|s| *s > from) {
            let thing: Vec<&str> = w[from..sold]
                .iter()
                .map(|x| x.trim_end_matches("'s"))
                .filter(|x| {
                    !matches!(
                        x.to_lowercase().as_str(),
                        "has" | "had" | "was" | "been" | "got"
                    )
                })
                .collect();
            if (1..=3).contains(&thing.len())
                && l[from..sold]
                    .iter()
                    .any(|x| x.ends_with("'s") || matches!(*x, "was" | "been" | "got"))
            {
                out.push(format!("I sold the {}.", thing.join(" ")));
            }
        }
    }
    // "the big five-oh was last weekend".
    if let Some(b) = find(&["big"]) {
        let tens = l
            .get(b + 1)
            .and_then(|x| x.strip_suffix("-oh"))
            .and_then(|t| {
                [
                    "two", "three", "four", "five", "six", "seven", "eight", "nine",
                ]
                .iter()
                .position(|n| *n == t)
            });
        if let Some(t) = tens {
            out.push(format!("I turned {}.", (t + 2) * 10));
        }
    }
    // "our cockatiel, Sir Biscuit, whistles": the pet and its name in apposition.
    if (at(0, "my") || at(0, "our") || at(0, "the")) && l.len() == 2 && listed(PETS, l[1]) {
        if let Some(name) = apposition(sentence, words) {
            out.push(format!("I have a {} named {name}.", l[1]));
        }
    }
    // "lifelong Hibs supporter", "Hibs supporter here".
    if let Some(s) = l.iter().position(|x| *x == "supporter") {
        let from = usize::from(matches!(
            l.first().copied(),
            Some("lifelong" | "life-long" | "die-hard" | "diehard" | "long-suffering" | "a")
        ));
        if s > from && s - from <= 3 {
            out.push(format!("I support {}.", w[from..s].join(" ")));
        }
    }
    // "two years into cello lessons", "three months into my law degree".
    if let Some(i) = find(&["into"])
        .filter(|&i| i >= 2 && matches!(l[i - 1], "years" | "year" | "months" | "month" | "weeks"))
    {
        let rest: Vec<&str> = l[i + 1..]
            .iter()
            .copied()
            .skip_while(|x| matches!(*x, "my" | "the" | "a"))
            .collect();
        if let Some(k) = rest.iter().position(|x| {
            matches!(
                *x,
                "lessons" | "classes" | "course" | "degree" | "training" | "apprenticeship"
            )
        }) {
            let subject = rest[..k].join(" ");
            if !subject.is_empty() && k <= 3 {
                if matches!(rest[k], "lessons" | "classes") {
                    out.push(format!("I'm learning the {subject}."));
                } else {
                    out.push(format!("I'm studying {subject}."));
                }
            }
        }
    }
    // "my Vauxhall Corsa has 150k miles on it".
    if (at(0, "my") || at(0, "our")) && l.get(1).is_some_and(|m| listed(CAR_MAKES, m)) {
        if let Some(car) = name(1, 3) {
            out.push(format!("I drive a {car}."));
        }
    }
    // "my English Heritage membership".
    if at(0, "my") {
        if let Some(m) = l
            .iter()
            .position(|x| *x == "membership")
            .filter(|m| (2..=4).contains(m))
        {
            out.push(format!("I have a {} membership.", w[1..m].join(" ")));
        }
    }
    // "the new gig at the garden centre", "my new job at Halvorsen".
    for job in ["job", "gig", "role", "position"] {
        if let Some(i) = find(&["new", job]) {
            if matches!(l.get(i + 2).copied(), Some("at" | "with" | "in")) {
                let from = i + 3 + usize::from(at(i + 3, "the"));
                if let Some(place) = name(from, 4) {
                    let the = if at(i + 3, "the") { "the " } else { "" };
                    out.push(format!("I work at {the}{place}."));
                }
            }
        }
    }
    // "im on the night shift at the riverside care home".
    if matches!(l.first().copied(), Some("i'm" | "im")) && at(1, "on") {
        if let Some(i) = find(&["shift", "at"]) {
            let from = i + 2 + usize::from(at(i + 2, "the"));
            if let Some(place) = name(from, 4) {
                let the = if at(i + 2, "the") { "the " } else { "" };
                out.push(format!("I work at {the}{place}."));
            }
        }
    }
    // "twenty years teaching geography at Oakfield".
    if let Some(t) = l
        .iter()
        .position(|x| *x == "teaching")
        .filter(|t| *t >= 1 && matches!(l[t - 1], "years" | "year" | "months"))
    {
        if let Some(subject) = name(t + 1, 2) {
            out.push(format!("I teach {subject}."));
        }
    }
    // "signed the divorce papers".
    if find(&["divorce", "papers"]).is_some() && find(&["signed"]).is_some() {
        out.push("I got divorced.".to_owned());
    }
    // "me and Ollie have been seeing each other", "Ollie and I are dating".
    let together = find(&["seeing", "each", "other"])
        .or_else(|| find(&["dating"]))
        .or_else(|| find(&["going", "out"]));
    if let Some(t) = together {
        let who = if at(0, "me") && at(1, "and") {
            name(2, 2)
        } else if t >= 3 && l[..t].windows(2).any(|p| p == ["and", "i"]) {
            let and = l.iter().position(|x| *x == "and").unwrap_or(0);
            (and > 0 && and <= 2).then(|| w[..and].join(" "))
        } else {
            None
        };
        if let Some(who) = who.filter(|n| n.chars().next().is_some_and(char::is_alphabetic)) {
            out.push(format!("I have a partner named {}.", capitalised(&who)));
        }
    }
    // "the trigger finger has cleared up", "my eczema's healed": a condition gone.
    if at(0, "the") || at(0, "my") {
        let cleared = l.iter().position(|x| {
            matches!(
                *x,
                "cleared" | "healed" | "resolved" | "disappeared" | "vanished"
            )
        });
        let mine = |c: &usize| {
            !someone_elses(
                l[1..*c]
                    .iter()
                    .copied()
                    .filter(|x| !matches!(*x, "has" | "have" | "had" | "is")),
            )
        };
        if let Some(c) = cleared.filter(|c| (2..=5).contains(c)).filter(mine) {
            let thing: Vec<&str> = w[1..c]
                .iter()
                .map(|x| x.trim_end_matches("'s"))
                .filter(|x| {
                    !matches!(
                        x.to_lowercase().as_str(),
                        "has" | "have" | "had" | "is" | "finally" | "completely" | "totally"
                    )
                })
                .collect();
            if (1..=3).contains(&thing.len()) {
                out.push(format!("I no longer have {}.", thing.join(" ")));
            }
        }
    }
    // "today was my last day there", "my last day at Fujitsu was friday": a job left.
    if find(&["my", "last", "day"]).is_some() && !l.contains(&"holiday") {
        out.push("I left my job.".to_owned());
    }
    // "i'm done with the plant based thing".
    if let Some(d) = find(&["done", "with"]) {
        if d >= 1 && matches!(l[d - 1], "i'm" | "im" | "am") {
            let from = d + 2 + usize::from(matches!(l.get(d + 2).copied(), Some("the" | "my")));
            if let Some(thing) = name(from, 3) {
                out.push(done_with(&thing));
            }
        }
    }
    // "i'm officially someone's girlfriend", "i guess i'm somebody's boyfriend now".
    if let Some(s) = l
        .iter()
        .position(|x| matches!(*x, "someone's" | "somebody's"))
    {
        let me = l[s.saturating_sub(3)..s]
            .iter()
            .any(|x| matches!(*x, "i'm" | "im" | "am"));
        let partner = l.get(s + 1).is_some_and(|x| {
            listed(
                super::revise::PARTNERS,
                x.trim_end_matches(|c: char| !c.is_alphabetic()),
            )
        });
        if me && partner {
            out.push("I'm in a relationship.".to_owned());
        }
    }
    // "eight years vegan", "ten years sober": a diet kept.
    if let Some(y) = l
        .iter()
        .position(|x| matches!(*x, "years" | "year" | "months"))
    {
        if y >= 1
            && l.get(y + 1)
                .is_some_and(|d| listed(super::lexicon::DIETS, d))
        {
            out.push(format!("I'm {}.", l[y + 1]));
        }
    }
    // "the rescue rehomed Bramwell", "we rehomed Pip".
    if let Some(r) = l.iter().position(|x| *x == "rehomed").filter(|r| *r >= 1) {
        let ours = l[..r]
            .iter()
            .any(|x| matches!(*x, "rescue" | "shelter" | "we" | "i" | "charity"));
        if let Some(pet) = name(r + 1, 2).filter(|_| ours) {
            out.push(format!("I rehomed {}.", capitalised(&pet)));
        }
    }
    // "since Sprocket passed": a pet (or person) lost. ("Pip died", "Pip passed away"
    // the clause rules read.)
    if let Some(p) = l
        .iter()
        .position(|x| *x == "passed")
        .filter(|_| at(0, "since"))
    {
        let from = 1;
        let who = &l[from..p];
        let named = (1..=2).contains(&who.len())
            && !who.iter().any(|x| {
                matches!(
                    *x,
                    "i" | "we"
                        | "he"
                        | "she"
                        | "they"
                        | "it"
                        | "my"
                        | "our"
                        | "the"
                        | "time"
                        | "exam"
                        | "test"
                )
            })
            && (p + 1 == l.len()
                || matches!(
                    l[p + 1],
                    "away" | "in" | "on" | "last" | "we" | "we've" | "and"
                ));
        if named {
            out.push(format!("I lost {}.", capitalised(&w[from..p].join(" "))));
        }
    }
    // "Pom got adopted by a family", "Gordon went belly up": a pet gone.
    let gone = find(&["got", "adopted"])
        .or_else(|| find(&["was", "adopted"]))
        .or_else(|| find(&["went", "belly", "up"]))
        .or_else(|| find(&["crossed", "the", "rainbow"]));
    if let Some(g) = gone {
        let pet: Vec<&str> = w[..g]
            .iter()
            .zip(&l[..g])
            .filter(|(_, l)| {
                !matches!(**l, "finally" | "sadly" | "just" | "the" | "little" | "old")
            })
            .map(|(w, _)| *w)
            .collect();
        let someone = matches!(
            l.first().copied(),
            Some("i" | "we" | "he" | "she" | "they" | "my" | "our")
        );
        if (1..=2).contains(&pet.len()) && !someone {
            let verb = if l[g] == "went" || l[g] == "crossed" {
                "lost"
            } else {
                "rehomed"
            };
            out.push(format!("I {verb} {}.", capitalised(&pet.join(" "))));
        }
    }
    // "Sir Biscuit went to a bird rescue in May".
    if let Some(g) = find(&["went", "to"]) {
        let to = &l[g + 2..l.len().min(g + 6)];
        if g >= 1 && to.iter().any(|x| listed(REHOMED_TO, x)) {
            let pet = w[..g].join(" ");
            if !matches!(l[0], "i" | "we" | "he" | "she" | "they" | "my" | "our") {
                out.push(format!("I rehomed {pet}."));
            }
        } else if g >= 2
            && matches!(l[0], "the" | "my" | "our")
            && to.iter().any(|x| listed(TAKERS, x))
            && !someone_elses(l[1..g].iter().copied())
        {
            out.push(format!("I gave away the {}.", w[1..g].join(" ")));
        }
    }
    // "i dropped out after christmas": dropped out of what the user studies.
    if matches!(l.first().copied(), Some("i")) && at(1, "dropped") && at(2, "out") && !at(3, "of") {
        out.push("I dropped out of my course.".to_owned());
    }
    out
}

/// The name set off by commas right after `words` in `sentence`: "our cockatiel, Sir
/// Biscuit, whistles" gives "Sir Biscuit" (one to three words).
fn apposition(sentence: &str, words: &[&str]) -> Option<String> {
    let head = words.last()?;
    // "our cockatiel, Sir Biscuit, whistles", "the kitten (Pippin, she's a menace)".
    let at = sentence
        .find(&format!("{head},"))
        .or_else(|| sentence.find(&format!("{head} (")).map(|i| i + 1))?
        + head.len()
        + 1;
    let rest = sentence[at..].trim_start_matches([' ', '(']);
    let end = rest.find([',', ')'])?;
    let name = rest[..end].trim();
    let n = name.split_whitespace().count();
    ((1..=3).contains(&n)
        && name
            .chars()
            .all(|c| c.is_alphabetic() || c == ' ' || c == '\''))
    .then(|| capitalised(name))
}

/// The age an ordinal names: "79th" is 79 (13 to 119).
fn ordinal(nth: &str) -> Option<u32> {
    let digits = nth.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n = digits.parse::<u32>().ok()?;
    matches!(&nth[digits.len()..], "st" | "nd" | "rd" | "th")
        .then_some(n)
        .filter(|n| (13..=119).contains(n))
}

/// Each word with a capital first letter: "sir biscuit" is "Sir Biscuit".
fn capitalised(name: &str) -> String {
    name.split_whitespace()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<String> {
        let out = with_plain_sentences(text);
        let plain = out.strip_prefix(text).unwrap_or(&out[text.len()..]);
        plain
            .trim_start_matches('.')
            .split_inclusive('.')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty() && s != ".")
            .collect()
    }

    #[test]
    fn chat_shapes_are_said_again_plainly() {
        // Written for this test (2026-12-07).
        assert_eq!(
            plain("Living in Tromso means snow boots in May"),
            ["I live in Tromso."]
        );
        assert_eq!(
            plain("married to Femi nine years this spring and still laughing"),
            ["I'm married to Femi."]
        );
        assert_eq!(plain("being single at 52 is underrated"), ["I'm single."]);
        assert_eq!(
            plain("we moved from derby to lincoln in may"),
            ["I moved to Lincoln."]
        );
        assert_eq!(
            plain("just moved into a tiny flat in Leith"),
            ["I moved to Leith."]
        );
        assert!(plain("my sister moved from derby to lincoln").is_empty());
        assert_eq!(
            plain("our tortoise, mr slow, escaped again"),
            ["I have a tortoise named Mr Slow."]
        );
        assert_eq!(
            plain("lifelong Hearts supporter here"),
            ["I support Hearts."]
        );
        assert_eq!(
            plain("three years into harp lessons and my fingers hurt"),
            ["I'm learning the harp."]
        );
        assert_eq!(
            plain("my skoda octavia makes a rattling noise"),
            ["I drive a skoda octavia."]
        );
        assert_eq!(
            plain("the new job at Bramley Foods is great"),
            ["I work at Bramley Foods."]
        );
        assert_eq!(
            plain("me and ravi have been seeing each other since june"),
            ["I have a partner named Ravi."]
        );
        assert_eq!(
            plain("Nibbles went to a rabbit rescue in the spring"),
            ["I rehomed Nibbles."]
        );
        assert_eq!(
            plain("the trombone went to a lad from the brass band"),
            ["I gave away the trombone."]
        );
        // "the clio got scrapped" is a clause rule now (`endings::thing_ended`).
        assert!(plain("the clio got scrapped after the mot").is_empty());
        // Someone else's thing is not the user's.
        assert!(plain("my brother's guitar went to a collector").is_empty());
        assert!(plain("my mum's eczema has cleared up").is_empty());
        assert_eq!(
            plain("let my gym membership lapse in march"),
            ["I cancelled the gym membership."]
        );
        assert_eq!(
            plain("celebrated my 61st with a boat trip"),
            ["I turned 61."]
        );
        assert_eq!(plain("the retirement party was a blur"), ["I retired."]);
        assert_eq!(
            plain("started my first shift as a bus driver today"),
            ["I work as a bus driver."]
        );
        assert_eq!(
            plain("got the job at the bike co-op"),
            ["I work at the bike co-op."]
        );
        assert_eq!(
            plain("tomasz and i pulled the plug last month"),
            ["I broke up with Tomasz."]
        );
        assert_eq!(
            plain("she popped the question in rome"),
            ["We got engaged."]
        );
        assert_eq!(
            plain("nine months since my last cigarette"),
            ["I gave up cigarettes."]
        );
        assert_eq!(plain("on the wagon since january"), ["I'm teetotal now."]);
        assert_eq!(
            plain("gave the sewing machine to my niece"),
            ["I gave away the sewing machine."]
        );
        assert_eq!(
            plain("since the caravan's been sold we holiday in hotels"),
            ["I sold the caravan."]
        );
        assert_eq!(plain("the big four-oh is on friday"), ["I turned 40."]);
        assert_eq!(
            plain("Biscuit got adopted by a farm family"),
            ["I rehomed Biscuit."]
        );
        assert_eq!(
            plain("single for three years and loving it"),
            ["I'm single."]
        );
        assert_eq!(
            plain("the tennis elbow has cleared up at last"),
            ["I no longer have tennis elbow."]
        );
        assert_eq!(
            plain("friday was my last day at the bank"),
            ["I left my job."]
        );
        // A diet given up is no longer held; anything else is given up.
        assert_eq!(
            plain("i'm done with the keto thing"),
            ["I'm no longer keto."]
        );
        assert_eq!(
            plain("honestly im done with the plant based lifestyle"),
            ["I'm no longer plant-based."]
        );
        assert_eq!(
            plain("i'm done with the pub quiz thing"),
            ["I gave up pub quiz thing."]
        );
        assert_eq!(
            plain("so i suppose i'm somebody's boyfriend now"),
            ["I'm in a relationship."]
        );
        assert!(plain("someone's boyfriend keeps parking across my drive").is_empty());
        assert_eq!(
            plain("the shelter rehomed biscuit last week"),
            ["I rehomed Biscuit."]
        );
        assert_eq!(
            plain("since noodle passed we've been sad"),
            ["I lost Noodle."]
        );
        assert_eq!(plain("my 44th was spent in a tent"), ["I turned 44."]);
        assert!(plain("the exam passed without drama").is_empty());
        assert_eq!(
            plain("traded the old astra in for an electric mini"),
            ["I sold the old astra."]
        );
        assert_eq!(
            plain("the puppy (Miso, he's a terror) chewed my shoes"),
            ["I have a puppy named Miso."]
        );
    }

    #[test]
    fn questions_jokes_and_other_peoples_shapes_are_left_alone() {
        assert!(plain("living in Oslo, is that expensive?").is_empty());
        assert!(plain("being single at 52 lol").is_empty());
        assert!(plain("my brother is living in Leeds").is_empty());
        assert!(plain("she went to a dog rescue to volunteer").is_empty());
    }
}
