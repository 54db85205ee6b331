//! What is never a fact about the user: instructions to the assistant ("Translate: I
//! love cheese"), quoted text, jokes and retractions ("lol", "just kidding"), song lines
//! and set phrases ("call me maybe").
//!
//! Every check reads one [`Lowered`] view of the sentence, built once: its words,
//! lowercased, joined by single spaces.

use std::borrow::Cow;

use super::lexicon::{listed, same};
use super::tables::{INSTRUCTION_VERBS, JOKE_EMOJI, JOKE_MARKERS, RETRACTIONS, SET_PHRASES};

/// A sentence's words, lowercased once (letters, digits, apostrophes and slashes kept;
/// curly apostrophes made straight), joined by single spaces.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lowered {
    joined: String,
    /// Whether the sentence carries an emoji that marks a joke.
    joke_emoji: bool,
}

impl Lowered {
    /// The view of `sentence`.
    pub(crate) fn new(sentence: &str) -> Self {
        let mut joined = String::with_capacity(sentence.len());
        let mut joke_emoji = false;
        for c in sentence.chars() {
            let separator = c.is_whitespace()
                || matches!(c, ',' | '.' | '!' | '?' | ':' | ';' | '"' | '(' | ')');
            if separator {
                if !joined.is_empty() && !joined.ends_with(' ') {
                    joined.push(' ');
                }
            } else if c.is_ascii() {
                joined.push(c.to_ascii_lowercase());
            } else if matches!(c, '\u{2019}' | '\u{2018}') {
                joined.push('\'');
            } else {
                joke_emoji |= JOKE_EMOJI.contains(&c);
                joined.extend(c.to_lowercase());
            }
        }
        if joined.ends_with(' ') {
            joined.pop();
        }
        Self { joined, joke_emoji }
    }

    /// The words, in order.
    fn words(&self) -> impl Iterator<Item = &str> + Clone {
        self.joined.split(' ').filter(|w| !w.is_empty())
    }

    /// The byte offsets in `joined` where words start.
    fn word_starts(&self) -> impl Iterator<Item = usize> + '_ {
        let bytes = self.joined.as_bytes();
        (0..bytes.len()).filter(move |&i| bytes[i] != b' ' && (i == 0 || bytes[i - 1] == b' '))
    }
}

/// Whether the message opens as an instruction to the assistant: an imperative verb
/// first ("Translate: …", "Write a poem where I …", "pls summarise"), or "can/could you".
pub(crate) fn is_instruction(text: &str, lowered: &Lowered) -> bool {
    let mut w = lowered
        .words()
        .skip_while(|w| matches!(*w, "ok" | "okay" | "hey" | "hi" | "now" | "so" | "and"));
    let Some(first) = w.next() else {
        return false;
    };
    if !listed(INSTRUCTION_VERBS, first) {
        return false;
    }
    // "Translate: I love cheese": a verb and a colon is always an instruction.
    let colon = text
        .split_whitespace()
        .next()
        .is_some_and(|t| t.ends_with(':'));
    // "Remember, I'm vegan", "please call me Sam", "look, I live in Rome": statements.
    let second = w.next();
    colon
        || !second.is_some_and(|s| {
            matches!(
                s,
                "i" | "that" | "i'm" | "im" | "my" | "call" | "i've" | "ive"
            )
        })
}

/// The text with quoted passages removed: "translate 'I love you'" says nothing about the
/// user. Apostrophes inside words ("I'm", "son's") are kept, and so is an apostrophe
/// that opens a word ("'em", "'cause", "'til") when no closing quote follows in the same
/// sentence: it never swallows the text up to the next possessive.
pub(crate) fn without_quotes(text: &str) -> Cow<'_, str> {
    if !text.contains(['"', '“', '”', '«', '»']) && !text.contains(" '") && !text.starts_with('\'')
    {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i == 0 { ' ' } else { chars[i - 1] };
        let find = |closes: &dyn Fn(usize) -> bool| (i + 1..chars.len()).find(|&j| closes(j));
        let end = match c {
            '"' => find(&|j| chars[j] == '"'),
            '“' => find(&|j| matches!(chars[j], '”' | '"')),
            '«' => find(&|j| chars[j] == '»'),
            '\'' if !prev.is_alphanumeric() => {
                // The closing quote ends a word and is not followed by a letter
                // ("son's" closes nothing), before the sentence ends.
                let sentence_end = (i + 1..chars.len())
                    .find(|&j| matches!(chars[j], '.' | '!' | '?' | '\n'))
                    .unwrap_or(chars.len());
                (i + 2..sentence_end).find(|&j| {
                    chars[j] == '\''
                        && !chars[j - 1].is_whitespace()
                        && chars.get(j + 1).is_none_or(|n| !n.is_alphanumeric())
                })
            }
            _ => None,
        };
        match end {
            Some(j) => i = j + 1,
            None => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

/// Whether the sentence takes back what was said ("just kidding", "jk", "not really").
pub(crate) fn retracts(lowered: &Lowered) -> bool {
    let w: Vec<&str> = lowered.words().collect();
    RETRACTIONS.iter().any(|r| {
        (w.len() <= r.len() + 2 || r.len() >= 2 && r[0] != "not")
            && w.windows(r.len())
                .any(|win| win.iter().zip(r.iter()).all(|(a, b)| same(a, b)))
    })
}

/// Whether the sentence is a set phrase or song line ("I'm a barbie girl"); a joke
/// marker is not looked at (see [`joked_clauses`]).
pub(crate) fn is_set_phrase(lowered: &Lowered) -> bool {
    if lowered.joke_emoji {
        return true;
    }
    // Every set phrase opens with "i" or "call"; only those words can start one.
    let joined = lowered.joined.as_str();
    for start in lowered.word_starts() {
        let tail = &joined[start..];
        let word = &tail[..tail.bytes().position(|b| b == b' ').unwrap_or(tail.len())];
        let found = match word {
            "i" | "call" => SET_PHRASES
                .iter()
                .any(|p| set_phrase_at(tail, p, p, start == 0)),
            // "i'm a believer": the phrases spell "i am".
            "i'm" | "im" => SET_PHRASES.iter().any(|p| {
                p.strip_prefix("i am")
                    .is_some_and(|rest| set_phrase_at(&tail[word.len()..], rest, p, start == 0))
            }),
            _ => false,
        };
        if found {
            return true;
        }
    }
    false
}

/// Whether `tail` (the sentence from a word on) opens with `rest`, the part of the set
/// phrase `phrase` still to match: the whole sentence, its start, or (for phrases of three
/// words or more) anywhere.
fn set_phrase_at(tail: &str, rest: &str, phrase: &str, at_start: bool) -> bool {
    // Inline, byte by byte: most phrases differ from the tail within a few bytes.
    let opens = tail.len() >= rest.len() && tail.bytes().zip(rest.bytes()).all(|(a, b)| a == b);
    if !opens {
        return false;
    }
    let whole = tail.len() == rest.len() || tail.as_bytes()[rest.len()] == b' ';
    (at_start && whole) || phrase.bytes().filter(|&b| b == b' ').count() >= 2
}

/// Which of a sentence's clauses a joke marker ("lol", "jk") takes back: the clause it
/// is in, or the one before when it stands alone ("I'm allergic to Mondays, lol"). The
/// other clauses stand: "we moved to Hull in March, the van got lost lol" still moved.
pub(crate) fn joked_clauses(clauses: &[Vec<super::clause::Word>]) -> Vec<bool> {
    let mut joked = vec![false; clauses.len()];
    for (i, clause) in clauses.iter().enumerate() {
        if !clause.iter().any(|w| listed(JOKE_MARKERS, w.lower())) {
            continue;
        }
        let alone = clause
            .iter()
            .all(|w| listed(JOKE_MARKERS, w.lower()) || listed(super::lexicon::FILLERS, w.lower()));
        if alone && i > 0 {
            joked[i - 1] = true;
        }
        joked[i] = true;
    }
    joked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole sentence taken back: a joke marker or emoji anywhere, or a set phrase.
    fn is_joke_or_set_phrase(lowered: &Lowered) -> bool {
        lowered.joke_emoji
            || lowered.words().any(|x| listed(JOKE_MARKERS, x))
            || is_set_phrase(lowered)
    }

    #[test]
    fn instructions_quotes_and_jokes() {
        let instruction = |s: &str| is_instruction(s, &Lowered::new(s));
        assert!(instruction("Translate: I love cheese"));
        assert!(instruction("write me a poem about how I live in Paris"));
        assert!(!instruction("Remember, I'm vegan"));
        assert!(!instruction("I live in Paris"));
        assert_eq!(without_quotes("say 'I love you' now"), "say  now");
        assert_eq!(without_quotes("I'm here"), "I'm here");
        // An apostrophe that opens a word is no quote: nothing up to "son's" goes.
        assert_eq!(
            without_quotes("I want to visit 'em soon! Thank goodness your son's okay"),
            "I want to visit 'em soon! Thank goodness your son's okay"
        );
        assert_eq!(
            without_quotes("he said 'hi' and 'cause of that I'm late"),
            "he said  and 'cause of that I'm late"
        );
        assert!(retracts(&Lowered::new("just kidding")));
        assert!(retracts(&Lowered::new("jk")));
        let joke = |s: &str| is_joke_or_set_phrase(&Lowered::new(s));
        assert!(joke("I'm allergic to Mondays lol"));
        assert!(joke("call me maybe"));
        assert!(joke("I’m a believer"));
        assert!(joke("honestly I will always love you"));
        assert!(!joke("call me Sam"));
        assert!(!joke("I swim blue water"));
    }
}
