//! A fast path for ASCII text: the word boundaries of UAX #29 restricted to ASCII, without
//! the general segmenter's table lookups. Property-tested against `unicode-segmentation`.

/// Calls `f` with each word of `text` (which must be ASCII), as `split_word_bounds` would
/// yield it, skipping the segments without a letter or digit.
pub(super) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    debug_assert!(text.is_ascii());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !is_word(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        loop {
            if i < b.len() && is_word(b[i]) {
                i += 1;
            } else if i + 1 < b.len() && joins(b[i - 1], b[i], b[i + 1]) {
                i += 2;
            } else {
                break;
            }
        }
        // A word of underscores only has no letter or digit: not a word to index.
        let word = &text[start..i];
        if word.bytes().any(|c| c.is_ascii_alphanumeric()) {
            f(word);
        }
    }
}

/// Letters, digits and the connector `_` (ExtendNumLet) continue a word.
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `mid` between `before` and `after` keeps one word (rules WB6/7 and WB11/12):
/// `'` and `.` between letters or between digits, `:` between letters, `,` and `;`
/// between digits.
fn joins(before: u8, mid: u8, after: u8) -> bool {
    let letters = before.is_ascii_alphabetic() && after.is_ascii_alphabetic();
    let digits = before.is_ascii_digit() && after.is_ascii_digit();
    match mid {
        b'\'' | b'.' => letters || digits,
        b':' => letters,
        b',' | b';' => digits,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use unicode_segmentation::UnicodeSegmentation;

    use super::*;

    fn fast(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |w| out.push(w.to_owned()));
        out
    }

    fn reference(text: &str) -> Vec<String> {
        text.split_word_bounds()
            .filter(|s| s.chars().any(char::is_alphanumeric))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn examples() {
        assert_eq!(
            fast("user's e.g. 3.14, 1,000 a:b x_y __ -"),
            reference("user's e.g. 3.14, 1,000 a:b x_y __ -")
        );
    }

    proptest! {
        #[test]
        fn agrees_with_unicode_segmentation(text in "[a-c0-2_'.:,; \\-!?]{0,24}") {
            prop_assert_eq!(fast(&text), reference(&text));
        }
    }
}
