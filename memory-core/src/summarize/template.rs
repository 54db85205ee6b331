//! [`SummaryPrompt`]: a user-supplied prompt template for [`LlmSummarizer`](super::LlmSummarizer).

use crate::error::{MemoryError, Result};

/// The placeholders a [`SummaryPrompt`] may use.
pub const SUMMARY_PLACEHOLDERS: [&str; 4] =
    ["transcript", "previous_summary", "max_words", "max_tokens"];

/// A prompt template for the summarising model.
///
/// Placeholders, written `{name}`:
/// - `{transcript}` (required): the new messages, one `Role: text` line each;
/// - `{previous_summary}`: the running summary so far, empty when there is none;
/// - `{max_words}` and `{max_tokens}`: the length limit.
///
/// `{{` and `}}` are literal braces. Substitution is a single pass, so placeholder-like text
/// inside the transcript or the summary is left as it is. An unknown placeholder, an
/// unclosed brace or a template without `{transcript}` is refused when the template is
/// made ([`MemoryError::InvalidArgument`]).
///
/// ```
/// use agentmemory_core::summarize::SummaryPrompt;
///
/// let prompt = SummaryPrompt::new("Summary so far: {previous_summary}\n{transcript}").unwrap();
/// assert_eq!(prompt.render("User: hi\n", "none", 30, 40), "Summary so far: none\nUser: hi\n");
/// assert!(SummaryPrompt::new("no transcript").is_err());
/// assert!(SummaryPrompt::new("{transcript} {history}").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryPrompt {
    template: String,
}

/// One piece of a parsed template.
enum Piece<'a> {
    Text(&'a str),
    Brace(char),
    Placeholder(&'a str),
}

impl SummaryPrompt {
    /// Checks `template` and keeps it.
    pub fn new(template: impl Into<String>) -> Result<Self> {
        let template = template.into();
        let mut has_transcript = false;
        for piece in pieces(&template) {
            if let Piece::Placeholder(name) = piece? {
                if !SUMMARY_PLACEHOLDERS.contains(&name) {
                    return Err(MemoryError::invalid(
                        "summary prompt template",
                        format!(
                            "unknown placeholder {{{name}}} (known: {})",
                            SUMMARY_PLACEHOLDERS.join(", ")
                        ),
                    ));
                }
                has_transcript |= name == "transcript";
            }
        }
        if !has_transcript {
            return Err(MemoryError::invalid(
                "summary prompt template",
                "it must contain {transcript}",
            ));
        }
        Ok(Self { template })
    }

    /// The template as given.
    pub fn as_str(&self) -> &str {
        &self.template
    }

    /// The prompt with every placeholder filled in.
    pub fn render(
        &self,
        transcript: &str,
        previous_summary: &str,
        max_words: usize,
        max_tokens: usize,
    ) -> String {
        let mut out = String::with_capacity(self.template.len() + transcript.len());
        // The template was checked when it was made, so every piece parses.
        for piece in pieces(&self.template).flatten() {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Brace(c) => out.push(c),
                Piece::Placeholder("transcript") => out.push_str(transcript),
                Piece::Placeholder("previous_summary") => out.push_str(previous_summary),
                Piece::Placeholder("max_words") => out.push_str(&max_words.to_string()),
                Piece::Placeholder("max_tokens") => out.push_str(&max_tokens.to_string()),
                Piece::Placeholder(_) => {}
            }
        }
        out
    }
}

/// Splits `template` into text, escaped braces and placeholders.
fn pieces(template: &str) -> impl Iterator<Item = Result<Piece<'_>>> {
    let mut rest = template;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let piece = if let Some(after) = rest.strip_prefix("{{") {
            rest = after;
            Ok(Piece::Brace('{'))
        } else if let Some(after) = rest.strip_prefix("}}") {
            rest = after;
            Ok(Piece::Brace('}'))
        } else if let Some(after) = rest.strip_prefix('{') {
            match after.find('}') {
                Some(end) => {
                    rest = &after[end + 1..];
                    Ok(Piece::Placeholder(&after[..end]))
                }
                None => {
                    rest = "";
                    Err(MemoryError::invalid(
                        "summary prompt template",
                        "a '{' is never closed (write '{{' for a literal brace)",
                    ))
                }
            }
        } else if rest.starts_with('}') {
            rest = "";
            Err(MemoryError::invalid(
                "summary prompt template",
                "a '}' closes nothing (write '}}' for a literal brace)",
            ))
        } else {
            let end = rest.find(['{', '}']).unwrap_or(rest.len());
            let (text, after) = rest.split_at(end);
            rest = after;
            Ok(Piece::Text(text))
        };
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_filled_once() {
        let prompt = SummaryPrompt::new(
            "{{literal}} prev={previous_summary} words={max_words} tokens={max_tokens}\n{transcript}",
        )
        .unwrap();
        assert_eq!(
            prompt.render("User: {previous_summary}", "S", 30, 40),
            "{literal} prev=S words=30 tokens=40\nUser: {previous_summary}"
        );
    }

    #[test]
    fn bad_templates_are_refused() {
        for bad in [
            "",
            "no placeholder",
            "{transcript} {unknown}",
            "{transcript} {",
            "{transcript} }",
            "{previous_summary}",
        ] {
            let err = SummaryPrompt::new(bad).unwrap_err();
            assert!(
                matches!(err, MemoryError::InvalidArgument { .. }),
                "{bad}: {err}"
            );
        }
    }
}
