//! Whether a question asks when something happened.

use super::lexer::tokenize;

/// Whether `text` asks *when* something happened: "when did I move to Porto?", "what year
/// did we meet?", "how long ago was the trip?", "since when do I run?".
///
/// "When" must open a question ("when did…", "when was…", "when's…"), not a clause: "what
/// did I do when I was in Paris?" does not ask when.
///
/// ```
/// use agentmemory_core::time::asks_when;
///
/// assert!(asks_when("When did I move to Porto?"));
/// assert!(asks_when("so when exactly was the wedding"));
/// assert!(asks_when("Which year did we meet?"));
/// assert!(asks_when("How long ago did I adopt Miso?"));
/// assert!(!asks_when("What did I do when I was in Paris?"));
/// assert!(!asks_when("What did I do last weekend?"));
/// ```
pub fn asks_when(text: &str) -> bool {
    let tokens = tokenize(text);
    let words: Vec<&str> = tokens.iter().map(|t| t.lower.as_str()).collect();
    let auxiliary = |w: &str| {
        matches!(
            w,
            "did"
                | "was"
                | "were"
                | "is"
                | "are"
                | "am"
                | "will"
                | "do"
                | "does"
                | "have"
                | "has"
                | "had"
                | "should"
                | "would"
                | "could"
                | "can"
                | "s"
        )
    };
    let unit = |w: &str| {
        matches!(
            w,
            "date"
                | "day"
                | "days"
                | "year"
                | "years"
                | "month"
                | "months"
                | "week"
                | "weeks"
                | "time"
                | "season"
                | "weekend"
        )
    };
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).copied().unwrap_or("");
        let after = words.get(i + 2).copied().unwrap_or("");
        match *w {
            "when" => auxiliary(next) || (next == "exactly" && auxiliary(after)),
            "what" | "which" => unit(next),
            "since" => next == "when",
            "how" => {
                (next == "long" && after == "ago")
                    || (next == "many" && unit(after) && words[i..].contains(&"ago"))
            }
            _ => false,
        }
    })
}
