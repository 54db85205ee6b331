//! Escaping text that goes into the system prompt as data (facts, the summary), so it
//! cannot close its block, fake a new section, or hide text with direction overrides.

/// What to do with line breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lines {
    /// `\n` and `\r` written as the two characters `\n` / `\r`: one item, one line.
    Escape,
    /// `\n` kept (runs of blank lines collapsed to one break), `\r` dropped.
    Keep,
}

/// Whether `c` changes the direction or visibility of the text around it.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Appends `text` to `out`, escaped: `&`, `<`, `>` as `&amp;`, `&lt;`, `&gt;`; line and
/// paragraph separators (U+2028, U+2029), other control characters and bidirectional
/// controls as `\u{…}`; tabs as spaces; line breaks per `lines`. At most `max_chars`
/// characters of `text` are read; a longer text ends in `…`. Returns whether it was cut.
pub(crate) fn push_escaped(out: &mut String, text: &str, lines: Lines, max_chars: usize) -> bool {
    let bytes = text.as_bytes();
    let mut last_was_break = true;
    let mut chars = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        // A run of printable ASCII other than `&`, `<` and `>` is copied as it is: one
        // byte is one character there, so the run is cut at the character budget.
        let run_start = i;
        let run_end = bytes.len().min(i + (max_chars - chars));
        while i < run_end && is_plain(bytes[i]) {
            i += 1;
        }
        if i > run_start {
            out.push_str(&text[run_start..i]);
            chars += i - run_start;
            last_was_break = false;
            if i == bytes.len() {
                break;
            }
        }
        if chars == max_chars {
            out.push('…');
            return true;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        chars += 1;
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' => out.push(' '),
            '\n' if lines == Lines::Escape => out.push_str("\\n"),
            '\r' if lines == Lines::Escape => out.push_str("\\r"),
            '\n' => {
                if !last_was_break {
                    out.push('\n');
                }
                last_was_break = true;
                continue;
            }
            '\r' => continue,
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || is_bidi_control(c) => {
                use std::fmt::Write as _;
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
        last_was_break = false;
    }
    false
}

/// Whether byte `b` is printable ASCII that needs no escaping.
#[inline]
fn is_plain(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'&' && b != b'<' && b != b'>'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str, lines: Lines) -> String {
        let mut out = String::new();
        push_escaped(&mut out, text, lines, 1_000);
        out
    }

    #[test]
    fn markup_and_entities_are_escaped() {
        assert_eq!(
            escaped("a<b>&c</x>", Lines::Escape),
            "a&lt;b&gt;&amp;c&lt;/x&gt;"
        );
        // An already escaped entity is escaped again, so it reads back as written.
        assert_eq!(escaped("&lt;", Lines::Escape), "&amp;lt;");
    }

    #[test]
    fn invisible_and_separating_characters_are_made_visible() {
        let out = escaped(
            "x\u{2028}y\u{2029}z\u{202E}w\u{2066}v\u{7}\u{0}",
            Lines::Keep,
        );
        assert_eq!(
            out,
            "x\\u{2028}y\\u{2029}z\\u{202e}w\\u{2066}v\\u{0007}\\u{0000}"
        );
    }

    #[test]
    fn line_breaks_follow_the_mode() {
        assert_eq!(escaped("a\r\nb", Lines::Escape), "a\\r\\nb");
        assert_eq!(escaped("a\r\n\n\nb\n", Lines::Keep), "a\nb\n");
    }

    #[test]
    fn long_text_is_cut_and_marked() {
        let mut out = String::new();
        assert!(push_escaped(&mut out, "abcdef", Lines::Keep, 3));
        assert_eq!(out, "abc…");
        out.clear();
        assert!(!push_escaped(&mut out, "abc", Lines::Keep, 3));
        assert_eq!(out, "abc");
    }

    /// The escaping rules one character at a time: the plain-run fast path must agree.
    fn reference(text: &str, lines: Lines, max_chars: usize) -> (String, bool) {
        let mut out = String::new();
        let mut last_was_break = true;
        for (n, c) in text.chars().enumerate() {
            if n == max_chars {
                out.push('…');
                return (out, true);
            }
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '\t' => out.push(' '),
                '\n' if lines == Lines::Escape => out.push_str("\\n"),
                '\r' if lines == Lines::Escape => out.push_str("\\r"),
                '\n' => {
                    if !last_was_break {
                        out.push('\n');
                    }
                    last_was_break = true;
                    continue;
                }
                '\r' => continue,
                c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' || is_bidi_control(c) => {
                    out.push_str(&format!("\\u{{{:04x}}}", c as u32));
                }
                c => out.push(c),
            }
            last_was_break = false;
        }
        (out, false)
    }

    proptest::proptest! {
        #[test]
        fn fast_path_agrees_with_the_rules(
            text in "([a-z <>&\n\r\t]|é|北|\u{2028}|\u{202E}|\u{7}|\u{85}){0,40}",
            max_chars in 0usize..48,
            escape_lines: bool,
        ) {
            let lines = if escape_lines { Lines::Escape } else { Lines::Keep };
            let mut out = String::from("x");
            let cut = push_escaped(&mut out, &text, lines, max_chars);
            let (expected, expected_cut) = reference(&text, lines, max_chars);
            proptest::prop_assert_eq!(&out[1..], expected.as_str());
            proptest::prop_assert_eq!(cut, expected_cut);
        }
    }
}
