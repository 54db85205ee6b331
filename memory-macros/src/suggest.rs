//! "Did you mean …?": the closest known name to a misspelt one.

/// The candidate closest to `name`, if it is a plausible misspelling of it.
///
/// Distance is the optimal-string-alignment edit distance (insertions, deletions,
/// substitutions and swaps of two neighbours each cost one), compared case-insensitively.
/// A candidate qualifies when the distance is at most a third of its length (and at least
/// one edit is always tolerated); ties go to the earlier candidate.
pub(crate) fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let name = name.to_lowercase();
    candidates
        .iter()
        .map(|&candidate| (candidate, edit_distance(&name, candidate)))
        .filter(|&(candidate, distance)| distance <= (candidate.chars().count() / 3).max(1))
        .min_by_key(|&(_, distance)| distance)
        .map(|(candidate, _)| candidate)
}

/// Optimal-string-alignment distance between `a` and `b`, counted in chars.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rolling rows: the one before the previous (for swaps), the previous, the current.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let substitution = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + substitution);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&str; 7] = [
        "store",
        "extract",
        "inject",
        "top_k",
        "recall",
        "extraction_model",
        "crate",
    ];

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("top_k", "top_k"), 0);
        assert_eq!(edit_distance("topk", "top_k"), 1);
        assert_eq!(edit_distance("inejct", "inject"), 1, "a swap costs one");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("extract_model", "extraction_model"), 3);
    }

    #[test]
    fn near_misses_get_a_suggestion() {
        assert_eq!(closest("topk", &KEYS), Some("top_k"));
        assert_eq!(closest("top_n", &KEYS), Some("top_k"));
        assert_eq!(closest("TopK", &KEYS), Some("top_k"));
        assert_eq!(closest("stor", &KEYS), Some("store"));
        assert_eq!(closest("stores", &KEYS), Some("store"));
        assert_eq!(closest("krate", &KEYS), Some("crate"));
        assert_eq!(closest("inejct", &KEYS), Some("inject"));
        assert_eq!(closest("extracts", &KEYS), Some("extract"));
        assert_eq!(closest("extract_model", &KEYS), Some("extraction_model"));
        assert_eq!(closest("recal", &KEYS), Some("recall"));
        assert_eq!(closest("recalls", &KEYS), Some("recall"));
        assert_eq!(closest("Recall", &KEYS), Some("recall"));
    }

    #[test]
    fn far_names_get_none() {
        assert_eq!(closest("color", &KEYS), None);
        assert_eq!(closest("model", &KEYS), None);
        assert_eq!(closest("k", &KEYS), None);
        assert_eq!(closest("", &KEYS), None);
    }

    #[test]
    fn ties_go_to_the_earlier_candidate() {
        assert_eq!(closest("ab", &["ax", "xb"]), Some("ax"));
    }
}
