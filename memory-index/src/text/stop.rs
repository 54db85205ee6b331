//! The stop words: common English words that carry no meaning for retrieval.

/// Folded (lowercase, accent-free) stop words, sorted for binary search.
///
/// Negations (`not`, `no`, `never`, `don't`) are deliberately kept: "does not like fish"
/// must not look like "likes fish". Verbs that carry a preference (`like`, `love`) are
/// kept too.
const STOP_WORDS: &[&str] = &[
    "a", "about", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "here", "him",
    "his", "how", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "it", "it's", "its",
    "just", "me", "my", "of", "on", "or", "our", "she", "should", "so", "some", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "very",
    "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would",
    "you", "you're", "your",
];

/// Whether `folded` (already lowercased and accent-folded) is a stop word.
pub(super) fn is_stop_word(folded: &str) -> bool {
    STOP_WORDS.binary_search(&folded).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_for_binary_search() {
        assert!(
            STOP_WORDS.windows(2).all(|w| w[0] < w[1]),
            "STOP_WORDS must be sorted"
        );
    }

    #[test]
    fn negations_are_not_stop_words() {
        for w in ["not", "no", "never", "don't", "like"] {
            assert!(!is_stop_word(w), "{w}");
        }
    }
}
