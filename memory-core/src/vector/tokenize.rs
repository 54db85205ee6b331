//! Text → index terms, the same way at index time and at query time.

/// Common English words that carry no meaning for retrieval.
///
/// Negations (`not`, `no`, `never`) are deliberately kept: "does not like fish" must not
/// look like "likes fish".
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "will", "with", "you", "your",
];

/// Splits `text` into index terms: lowercase (Unicode-aware), split on every character
/// that is not alphanumeric (`char::is_alphanumeric`, so numbers and non-Latin scripts are
/// kept), English stop words dropped, and a plural `s` trimmed from words longer than
/// three letters that do not end in `ss` (`"apples"` → `"apple"`, `"class"` stays).
///
/// ```
/// use agentmemory_core::vector::tokenize;
///
/// assert_eq!(tokenize("The user LIKES green apples, since 2024!"),
///            ["user", "like", "green", "apple", "since", "2024"]);
/// assert_eq!(tokenize("Straße in München"), ["straße", "münchen"]);
/// assert!(tokenize("it is the").is_empty());
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter_map(|w| {
            let lower = w.to_lowercase();
            if STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
                return None;
            }
            Some(trim_plural(lower))
        })
        .collect()
}

fn trim_plural(mut word: String) -> String {
    if word.chars().count() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn keeps_negations_and_numbers() {
        assert_eq!(
            tokenize("does not eat fish 42x"),
            ["not", "eat", "fish", "42x"]
        );
    }

    #[test]
    fn plural_trimming_is_consistent() {
        assert_eq!(tokenize("cats"), tokenize("cat"));
        assert_eq!(tokenize("glass"), ["glass"]);
        assert_eq!(tokenize("bus"), ["bus"]);
    }

    #[test]
    fn empty_and_punctuation_only() {
        assert!(tokenize("").is_empty());
        assert!(tokenize("  ,,; -- !!").is_empty());
    }
}
