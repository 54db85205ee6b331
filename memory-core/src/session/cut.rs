//! Cutting a message that is larger than the room left for it: the head and the tail
//! are kept, the middle replaced by a visible marker.

use crate::message::{Content, Message};
use crate::tokens::TokenCounter;

/// A cut message is never given less than this many tokens, so the model always gets
/// something of what the user said.
pub(crate) const MIN_CUT_TOKENS: usize = 16;

/// A copy of `message` (same id and role) whose text fits `max_tokens`, or `None` when
/// the message already fits. Two thirds of the kept characters come from the head, one
/// third from the tail; the marker says how many characters were cut.
pub(crate) fn cut_to_fit(
    message: &Message,
    max_tokens: usize,
    counter: &dyn TokenCounter,
) -> Option<Message> {
    let max_tokens = max_tokens.max(MIN_CUT_TOKENS);
    if counter.count_message(message) <= max_tokens {
        return None;
    }
    let text = message.text();
    let chars: Vec<char> = text.chars().collect();
    let total = chars.len();
    let tokens = counter.count_message(message).max(1);
    let mut keep = total * max_tokens / tokens;
    loop {
        let head = keep * 2 / 3;
        let tail = keep - head;
        let cut = total.saturating_sub(head + tail);
        let mut out = String::with_capacity(keep * 4 + 48);
        out.extend(&chars[..head]);
        out.push_str(&format!("\n[… {cut} characters cut …]\n"));
        out.extend(&chars[total - tail..]);
        let mut candidate = message.clone();
        candidate.content = Content::Text(out);
        if counter.count_message(&candidate) <= max_tokens || keep == 0 {
            return Some(candidate);
        }
        // Shrink by the overshoot (at least one character) and try again.
        let over = counter.count_message(&candidate) - max_tokens;
        keep = keep.saturating_sub((over * 4).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::HeuristicCounter;

    #[test]
    fn a_large_message_keeps_its_head_and_tail() {
        let counter = HeuristicCounter::default();
        let text = format!("START {} END", "lorem ipsum dolor ".repeat(2_000));
        let message = Message::user(text.clone());
        let cut = cut_to_fit(&message, 200, &counter).unwrap();
        assert_eq!(cut.id, message.id);
        assert!(counter.count_message(&cut) <= 200);
        let sent = cut.text();
        assert!(sent.starts_with("START"));
        assert!(sent.ends_with("END"));
        assert!(sent.contains("characters cut"));
        assert!(cut_to_fit(&Message::user("short"), 200, &counter).is_none());
    }

    #[test]
    fn even_a_tiny_room_gets_some_text() {
        let counter = HeuristicCounter::default();
        let message = Message::user("word ".repeat(1_000));
        let cut = cut_to_fit(&message, 0, &counter).unwrap();
        assert!(!cut.text().is_empty());
        assert!(counter.count_message(&cut) <= MIN_CUT_TOKENS);
    }
}
