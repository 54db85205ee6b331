//! What is never a fact about the user: instructions to the assistant ("Translate: I
//! love cheese"), quoted text, jokes and retractions ("lol", "just kidding"), song lines
//! and set phrases ("call me maybe").

use std::borrow::Cow;

use super::tables::{INSTRUCTION_VERBS, JOKE_EMOJI, JOKE_MARKERS, RETRACTIONS, SET_PHRASES};

/// The message's lowercase words (letters, digits, apostrophes and slashes kept).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, ',' | '.' | '!' | '?' | ':' | ';' | '"' | '(' | ')')
    })
    .filter(|w| !w.is_empty())
    .map(|w| {
        let mut w = w.to_lowercase();
        if w.contains(['\u{2019}', '\u{2018}']) {
            w = w.replace(['\u{2019}', '\u{2018}'], "'");
        }
        w
    })
}

/// A sentence's lowercase words, split once for every junk check.
#[derive(Debug)]
pub(crate) struct Lowered {
    words: Vec<String>,
}

impl Lowered {
    pub(crate) fn of(sentence: &str) -> Self {
        Self {
            words: words(sentence).collect(),
        }
    }
}

/// Whether the message opens as an instruction to the assistant: an imperative verb
/// first ("Translate: …", "Write a poem where I …", "pls summarise"), or "can/could you".
#[cfg(test)]
pub(crate) fn is_instruction(text: &str) -> bool {
    is_instruction_in(text, &Lowered::of(text))
}

/// [`is_instruction`] over the sentence's words split already.
pub(crate) fn is_instruction_in(text: &str, lowered: &Lowered) -> bool {
    let mut w = lowered.words.iter().skip_while(|w| {
        matches!(
            w.as_str(),
            "ok" | "okay" | "hey" | "hi" | "now" | "so" | "and"
        )
    });
    let Some(first) = w.next() else {
        return false;
    };
    if !INSTRUCTION_VERBS.contains(&first.as_str()) {
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
        || !second.map(String::as_str).is_some_and(|s| {
            matches!(
                s,
                "i" | "that" | "i'm" | "im" | "my" | "call" | "i've" | "ive"
            )
        })
}

/// The text with quoted passages removed: "translate 'I love you'" says nothing about the
/// user. Apostrophes inside words ("I'm", "son's") are kept.
pub(crate) fn without_quotes(text: &str) -> Cow<'_, str> {
    if !text.contains(['"', '“', '”', '«', '»']) && !text.contains(" '") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in text.chars() {
        match quote {
            Some(q) => {
                let closes = c == q || (q == '“' && c == '”') || (q == '«' && c == '»');
                if closes {
                    quote = None;
                }
            }
            None => {
                let opens = matches!(c, '"' | '“' | '«') || (c == '\'' && !prev.is_alphanumeric());
                if opens {
                    quote = Some(c);
                } else {
                    out.push(c);
                }
            }
        }
        prev = c;
    }
    Cow::Owned(out)
}

/// Whether the sentence takes back what was said ("just kidding", "jk", "not really").
#[cfg(test)]
pub(crate) fn retracts(sentence: &str) -> bool {
    retracts_in(&Lowered::of(sentence))
}

/// [`retracts`] over the sentence's words split already.
pub(crate) fn retracts_in(lowered: &Lowered) -> bool {
    let w = &lowered.words;
    RETRACTIONS.iter().any(|r| {
        w.windows(r.len())
            .any(|win| win.iter().zip(r.iter()).all(|(a, b)| a == b))
            && (w.len() <= r.len() + 2 || r.len() >= 2 && r[0] != "not")
    })
}

/// Whether the sentence is a joke ("I'm allergic to Mondays lol") or a set phrase / song
/// line ("call me maybe").
#[cfg(test)]
pub(crate) fn is_joke_or_set_phrase(sentence: &str) -> bool {
    is_joke_or_set_phrase_in(sentence, &Lowered::of(sentence))
}

/// [`is_joke_or_set_phrase`] over the sentence's words split already.
pub(crate) fn is_joke_or_set_phrase_in(sentence: &str, lowered: &Lowered) -> bool {
    if sentence.chars().any(|c| JOKE_EMOJI.contains(&c)) {
        return true;
    }
    let w = &lowered.words;
    if w.iter().any(|x| JOKE_MARKERS.contains(&x.as_str())) {
        return true;
    }
    let mut joined = w.join(" ");
    if joined.contains("im") {
        joined = joined.replace("i'm", "i am").replace("im ", "i am ");
    }
    let joined_words: Vec<&str> = joined.split(' ').collect();
    SET_PHRASES.iter().any(|p| {
        if joined.starts_with(p) && matches!(joined.as_bytes().get(p.len()), None | Some(b' ')) {
            return true;
        }
        // Inside the sentence only phrases of three words or more count; their middle
        // words must be whole words of it (after the same "i am" rewriting), which rules
        // most phrases out before any substring search.
        let mut parts = p.split(' ');
        let (Some(_), Some(middle), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        joined_words.contains(&middle) && joined.contains(p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_quotes_and_jokes() {
        assert!(is_instruction("Translate: I love cheese"));
        assert!(is_instruction("write me a poem about how I live in Paris"));
        assert!(!is_instruction("Remember, I'm vegan"));
        assert!(!is_instruction("I live in Paris"));
        assert_eq!(without_quotes("say 'I love you' now"), "say  now");
        assert_eq!(without_quotes("I'm here"), "I'm here");
        assert!(retracts("just kidding"));
        assert!(retracts("jk"));
        assert!(is_joke_or_set_phrase("I'm allergic to Mondays lol"));
        assert!(is_joke_or_set_phrase("call me maybe"));
        assert!(!is_joke_or_set_phrase("call me Sam"));
    }
}
