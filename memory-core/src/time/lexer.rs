//! Words of a text with their byte ranges and what separates them.

use std::ops::Range;

/// One word: a maximal run of alphanumeric characters.
#[derive(Debug, Clone)]
pub(super) struct Token {
    /// The word in lowercase.
    pub(super) lower: String,
    /// Its bytes in the text (always on character boundaries).
    pub(super) range: Range<usize>,
    /// Whether its first character is uppercase.
    pub(super) capital: bool,
    /// The bytes between the previous word (or the start of the text) and this one.
    pub(super) gap: Range<usize>,
}

/// The words of `text`, in order. Apostrophes separate words (`"year's"` → `year`, `s`).
pub(super) fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut start = None;
    let mut gap_start = 0;
    for (at, c) in text.char_indices() {
        match (start, c.is_alphanumeric()) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                tokens.push(token(text, gap_start..from, from..at));
                start = None;
                gap_start = at;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        tokens.push(token(text, gap_start..from, from..text.len()));
    }
    tokens
}

fn token(text: &str, gap: Range<usize>, range: Range<usize>) -> Token {
    let word = &text[range.clone()];
    Token {
        lower: word.to_lowercase(),
        capital: word.chars().next().is_some_and(char::is_uppercase),
        range,
        gap,
    }
}

/// Whether a gap ends a sentence or clause: `.`, `!`, `?`, `;`, `:` or a line break.
pub(super) fn breaks_sentence(gap: &str) -> bool {
    gap.contains(['.', '!', '?', ';', ':', '\n'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_ranges_and_gaps() {
        let text = "Last  Friday's, ünder 3rd";
        let tokens = tokenize(text);
        let words: Vec<&str> = tokens.iter().map(|t| t.lower.as_str()).collect();
        assert_eq!(words, ["last", "friday", "s", "ünder", "3rd"]);
        assert!(tokens[0].capital && !tokens[3].capital);
        for t in &tokens {
            assert_eq!(text[t.range.clone()].to_lowercase(), t.lower);
        }
        assert_eq!(&text[tokens[1].gap.clone()], "  ");
        assert_eq!(&text[tokens[3].gap.clone()], ", ");
    }
}
