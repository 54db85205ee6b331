//! Words as the SQL engines' own tokenizers split them, for building their queries.

/// Lowercase alphanumeric words of `text`, as the SQL engines' own tokenizers split them
/// (fact ranking uses [`agentmemory_core::text`] instead).
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}
