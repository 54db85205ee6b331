//! Content-free turns: "ok", "thanks!", "of course", "how did it go?", "sounds good",
//! greetings. Recall never spends an episode slot on them, and an excerpt never opens
//! with one.
//!
//! The rule is general, the vocabulary is data: a text is content-free when none of its
//! words is left after removing [`FILLER_WORDS`] (function words, courtesy,
//! acknowledgement, greeting and question-back words). A number, a name or any other
//! word keeps a text: "14." answers something, "ok" does not.
//!
//! ```
//! use agentmemory_core::render::is_content_free;
//!
//! assert!(is_content_free("Thank you so much!"));
//! assert!(is_content_free("Of course. How did it go?"));
//! assert!(!is_content_free("ok, I passed my driving test"));
//! ```

/// Words that carry nothing a later question could ask about, folded (lowercase, plain
/// apostrophes), sorted for binary search.
pub const FILLER_WORDS: &[&str] = &[
    "a",
    "about",
    "absolutely",
    "agreed",
    "ah",
    "aha",
    "all",
    "alright",
    "also",
    "always",
    "am",
    "amazing",
    "an",
    "and",
    "any",
    "anyway",
    "are",
    "aw",
    "awesome",
    "aww",
    "be",
    "been",
    "brilliant",
    "but",
    "bye",
    "can",
    "care",
    "cheers",
    "congrats",
    "congratulations",
    "cool",
    "could",
    "course",
    "deal",
    "definitely",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "enjoy",
    "evening",
    "exactly",
    "excellent",
    "fair",
    "fantastic",
    "fine",
    "for",
    "glad",
    "go",
    "goes",
    "going",
    "good",
    "goodbye",
    "goodnight",
    "got",
    "gotcha",
    "great",
    "ha",
    "haha",
    "hahaha",
    "happy",
    "has",
    "have",
    "he",
    "hear",
    "heard",
    "hello",
    "help",
    "helpful",
    "helps",
    "her",
    "hey",
    "hi",
    "hiya",
    "hm",
    "hmm",
    "how",
    "how's",
    "i",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "indeed",
    "is",
    "it",
    "it's",
    "just",
    "k",
    "keep",
    "keeping",
    "kk",
    "know",
    "let",
    "let's",
    "letting",
    "lol",
    "lovely",
    "luck",
    "me",
    "mean",
    "more",
    "morning",
    "much",
    "my",
    "nice",
    "night",
    "no",
    "nope",
    "noted",
    "now",
    "of",
    "oh",
    "ok",
    "okay",
    "on",
    "or",
    "out",
    "perfect",
    "please",
    "posted",
    "problem",
    "really",
    "right",
    "same",
    "see",
    "sharing",
    "she",
    "so",
    "soon",
    "sorry",
    "sound",
    "sounds",
    "still",
    "super",
    "sure",
    "talk",
    "tell",
    "telling",
    "thank",
    "thanks",
    "that",
    "that'll",
    "that's",
    "the",
    "then",
    "there",
    "they",
    "thing",
    "things",
    "this",
    "thx",
    "to",
    "told",
    "too",
    "totally",
    "true",
    "ty",
    "understood",
    "up",
    "update",
    "updates",
    "us",
    "very",
    "was",
    "we",
    "welcome",
    "well",
    "went",
    "were",
    "what",
    "what's",
    "will",
    "with",
    "wonderful",
    "wow",
    "yay",
    "yeah",
    "yep",
    "yes",
    "you",
    "you're",
    "yup",
];

/// Whether `text` says nothing a later question could be about: no word of it is left
/// once the [`FILLER_WORDS`] are removed (emoji and punctuation are not words), nor once
/// a leading speaker label is ("Sasha: lol", as exported chat logs write every line).
///
/// ```
/// use agentmemory_core::render::is_content_free;
///
/// assert!(is_content_free("Thanks, that's great!"));
/// assert!(is_content_free("Sasha: lol"));
/// assert!(!is_content_free("Sasha: we got a kitten"));
/// ```
pub fn is_content_free(text: &str) -> bool {
    content_words(without_speaker_label(text)).next().is_none()
}

/// `text` without a leading speaker label: one to three capitalised words (or initials)
/// and a colon, then a space ("Sasha: ", "Dr Patel: ", "MARI: "), at most 32 bytes.
/// A text that is only a label keeps it.
///
/// ```
/// use agentmemory_core::render::without_speaker_label;
///
/// assert_eq!(without_speaker_label("Dr Patel: take two a day"), "take two a day");
/// assert_eq!(without_speaker_label("note to self: buy milk"), "note to self: buy milk");
/// assert_eq!(without_speaker_label("at 10:30 we left"), "at 10:30 we left");
/// ```
pub fn without_speaker_label(text: &str) -> &str {
    let trimmed = text.trim_start();
    let Some(colon) = trimmed.find(": ").filter(|&at| at <= 32) else {
        return text;
    };
    let label = &trimmed[..colon];
    let words: Vec<&str> = label.split(' ').collect();
    let named = (1..=3).contains(&words.len())
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars()
                    .all(|c| c.is_alphabetic() || matches!(c, '\'' | '-' | '.'))
        });
    let rest = trimmed[colon + 2..].trim_start();
    if named && !rest.is_empty() {
        rest
    } else {
        text
    }
}

/// The words of `text` that are not filler, folded.
fn content_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .map(|w| {
            w.trim_matches(|c| c == '\'' || c == '\u{2019}')
                .chars()
                .map(|c| if c == '\u{2019}' { '\'' } else { c })
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty() && FILLER_WORDS.binary_search(&w.as_str()).is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speaker_label_is_not_content() {
        for said in [
            "Sasha: lol",
            "MARI: ok!!",
            "Callum: thanks 😂",
            "Dr Patel: sure",
        ] {
            assert!(is_content_free(said), "{said}");
        }
        for said in ["Sasha: we moved to Leeds", "Mari: Mole", "CARYS"] {
            assert!(!is_content_free(said), "{said}");
        }
        // Never cut inside a character, whatever comes first.
        assert_eq!(
            without_speaker_label("ÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉ: x"),
            "ÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉÉ: x"
        );
        assert_eq!(without_speaker_label("Zoë: hi there"), "hi there");
    }

    #[test]
    fn sorted_for_binary_search() {
        assert!(
            FILLER_WORDS.windows(2).all(|w| w[0] < w[1]),
            "FILLER_WORDS must be sorted and unique"
        );
    }

    #[test]
    fn acknowledgements_courtesy_and_greetings_are_content_free() {
        for text in [
            "ok",
            "OK!",
            "thanks",
            "Thank you!",
            "thank you so much 🙏",
            "Of course.",
            "How did it go?",
            "Sounds good!",
            "Hi!",
            "hey, good morning",
            "Thanks for telling me.",
            "You're welcome — glad I could help.",
            "That’s great, congrats!!",
            "",
            "...",
        ] {
            assert!(is_content_free(text), "{text:?}");
        }
    }

    #[test]
    fn a_word_a_name_or_a_number_keeps_a_text() {
        for text in [
            "14.",
            "ok, the vet said Pickle is fine",
            "thanks, the Leeds 10k went well",
            "How did the interview go?",
            "Hannah!",
            "I've given up coffee",
            "no gluten for me",
        ] {
            assert!(!is_content_free(text), "{text:?}");
        }
    }
}
