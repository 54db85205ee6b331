//! What took the place of something a sentence just said ended: "gave up running, it's
//! swimming now", "quit five a side after my ankle, padel is my thing now", "dropped out
//! of the maths course, doing a coding bootcamp instead", "left the band, singing with a
//! choir now". The clause names no verb of change itself; the ending before it in the
//! same sentence and a marker of the present ("now", "instead", "these days") make it
//! the new state, which replaces what ended ([`Transition::Replaces`]).

use crate::facts::Transition;

use super::clause::Word;
use super::lexicon::listed;
use super::pattern::{match_prefix, Found, Rule};
use super::value::{clean, Kind};

/// Words that mark a clause as the state that holds now.
const NOW: &[&str] = &["now", "instead", "nowadays", "atm"];

/// What one does as a thing of one's own: "padel is my thing now".
const MY_THING: &[&str] = &["thing", "life", "jam", "hobby", "sport", "focus", "world"];

/// The state `words` (one clause, fillers stripped) says holds now, after `ended` (the
/// object of an ending earlier in the sentence) stopped: replaces it.
pub(crate) fn successor(words: &[Word], ended: &str) -> Vec<Found> {
    // The marker ends what is said: "swimming now, 40 lengths" keeps "swimming".
    let Some(marker) = words.iter().position(|w| listed(NOW, w.lower())) else {
        return Vec::new();
    };
    // "is my thing now" (marker last) or "these days" read the same.
    let said = &words[..marker];
    let value = state_after_it_is(said)
        .or_else(|| state_before_my_thing(said))
        .or_else(|| state_after_i_am(said))
        .and_then(|span| clean(span, Kind::Activity));
    let Some(value) = value else {
        return Vec::new();
    };
    if value.split(' ').count() > 6 || value.eq_ignore_ascii_case(ended) {
        return Vec::new();
    }
    // As "took up pottery" reads.
    let mut found = Rule::pos("", "likes", 0.7, "has taken up {}", Kind::Activity).found(value);
    found.transition = Some(Transition::Replaces {
        from: Some(ended.to_owned()),
    });
    vec![found]
}

/// "it's swimming", "its all pottery", "it is mostly padel".
fn state_after_it_is<'w, 'a>(said: &'w [Word<'a>]) -> Option<&'w [Word<'a>]> {
    let n = match_prefix(said, "it|its is? all|just|mostly?")?;
    let rest = &said[n..];
    (!rest.is_empty()).then_some(rest)
}

/// "padel is my thing", "pottery is my new obsession".
fn state_before_my_thing<'w, 'a>(said: &'w [Word<'a>]) -> Option<&'w [Word<'a>]> {
    let is = said.iter().position(|w| w.lower() == "is")?;
    let after = &said[is + 1..];
    let mine = match_prefix(after, "my new?")?;
    let thing = after.get(mine)?;
    (is > 0 && listed(MY_THING, thing.lower())).then_some(&said[..is])
}

/// "doing a coding bootcamp", "i'm into djing", "singing with a community choir".
fn state_after_i_am<'w, 'a>(said: &'w [Word<'a>]) -> Option<&'w [Word<'a>]> {
    let n = match_prefix(said, "i? am? into|doing|playing|on?").unwrap_or(0);
    let rest = &said[n..];
    let first = rest.first()?;
    // A gerund opens the activity itself; after "into", "doing" or "on" any thing does.
    let opened = n > 0 && !matches!(said[n - 1].lower(), "i" | "am");
    let clause_of_its_own = rest.iter().any(|w| {
        listed(super::clause::SUBJECTS, w.lower())
            || matches!(w.lower(), "is" | "are" | "was" | "were")
    });
    (opened || (is_gerund(first.lower()) && !clause_of_its_own)).then_some(rest)
}

/// Whether `word` is an -ing form of a verb, not a noun that ends like one.
fn is_gerund(word: &str) -> bool {
    word.len() > 4 && word.ends_with("ing") && !listed(ING_NOUNS, word) && !word.ends_with("thing")
}

/// Nouns that end like a gerund.
const ING_NOUNS: &[&str] = &[
    "morning",
    "evening",
    "wedding",
    "meeting",
    "building",
    "ceiling",
    "spring",
    "string",
    "sibling",
    "pudding",
    "darling",
    "feeling",
    "earring",
    "offspring",
    "ending",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<String> {
        let words: Vec<Word> = text.split_whitespace().map(Word::new).collect();
        successor(&words, "old thing")
            .first()
            .map(|f| f.text.clone())
    }

    #[test]
    fn the_state_said_to_hold_now_is_read() {
        for (said, read_as) in [
            ("it is rowing now", "has taken up rowing"),
            ("its all climbing now", "has taken up climbing"),
            ("squash is my thing now", "has taken up squash"),
            (
                "doing an evening class in welding instead",
                "has taken up evening class",
            ),
            (
                "volunteering at the food bank now",
                "has taken up volunteering",
            ),
        ] {
            assert_eq!(read(said).as_deref(), Some(read_as), "{said}");
        }
    }

    #[test]
    fn without_a_marker_of_now_nothing_is_read() {
        assert_eq!(read("it is raining"), None);
        assert_eq!(read("the kids are fine"), None);
        assert_eq!(read("thing is we moved now"), None);
    }
}
