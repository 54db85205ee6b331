//! The one sentence splitter: the rule-based extractor reads facts sentence by sentence,
//! the extractive summariser picks whole sentences, and both split the same way.

/// A sentence as written, with and without the terminators that ended it, and whether
/// it was a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence<'a> {
    /// The sentence without its terminators, trimmed: `"Do you like jazz"`.
    pub text: &'a str,
    /// The sentence through its terminators (and a closing emoji), trimmed: `"Do you like jazz?!"`.
    pub full: &'a str,
    /// Whether a `?` ended it.
    pub question: bool,
}

/// Splits `text` at `.`, `!`, `?`, `;`, `…`, line breaks and chat emoji; a `.` only ends a
/// sentence when followed by whitespace or the end (so `3.5` and `e.g.x` stay whole), a
/// run of terminators (`?!`, `...`) ends one sentence, and an emoji stays with the
/// sentence it closes. Empty sentences are skipped.
pub fn sentences(text: &str) -> Vec<Sentence<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = match c {
            '!' | '?' | ';' | '\n' | '…' => true,
            // An emoji closes a chat sentence: "long day 😩 i'm a pharmacist".
            c if is_emoji(c) => true,
            '.' => chars.peek().is_none_or(|(_, n)| n.is_whitespace()),
            _ => false,
        };
        if !ends {
            continue;
        }
        // Swallow a run of terminators ("?!", "...").
        let mut end = i + c.len_utf8();
        let mut question = c == '?';
        while let Some(&(j, n)) = chars.peek() {
            if matches!(n, '!' | '?' | '.' | '…') {
                question |= n == '?';
                end = j + n.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        // An emoji stays with its sentence (it may mark a joke); dots before the one that
        // ended it ("tired...") are terminators too.
        let body = if is_emoji(c) {
            &text[start..i + c.len_utf8()]
        } else {
            text[start..i].trim_end_matches(['.', '!', '?', '…'])
        };
        push(&mut out, body, &text[start..end], question);
        start = end;
    }
    push(&mut out, &text[start..], &text[start..], false);
    out
}

/// Pictographs and symbols used as sentence ends in chat.
fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x1F000..=0x1F2FF)
}

fn push<'a>(out: &mut Vec<Sentence<'a>>, text: &'a str, full: &'a str, question: bool) {
    let text = text.trim();
    if !text.is_empty() {
        out.push(Sentence {
            text,
            full: full.trim(),
            question,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_flags_questions() {
        let s = sentences("Hello! Do you like jazz?! I live in Berlin. Version 3.5 rocks\nok");
        let texts: Vec<_> = s.iter().map(|s| (s.text, s.full, s.question)).collect();
        assert_eq!(
            texts,
            vec![
                ("Hello", "Hello!", false),
                ("Do you like jazz", "Do you like jazz?!", true),
                ("I live in Berlin", "I live in Berlin.", false),
                ("Version 3.5 rocks", "Version 3.5 rocks", false),
                ("ok", "ok", false),
            ]
        );
    }

    #[test]
    fn emoji_and_semicolons_end_sentences_and_blanks_are_skipped() {
        let s = sentences("long day 😩 i'm a pharmacist; so tired...  \n\n");
        let texts: Vec<_> = s.iter().map(|s| (s.text, s.full)).collect();
        assert_eq!(
            texts,
            vec![
                ("long day 😩", "long day 😩"),
                ("i'm a pharmacist", "i'm a pharmacist;"),
                ("so tired", "so tired..."),
            ]
        );
    }
}
