//! `agentmem extract`: utterances on stdin, one JSON object of facts per line on stdout.

use std::io::{self, BufRead};

use agentmemory::{FactCandidate, Message, Polarity, Turn};
use serde::Serialize;

use crate::error::CliError;
use crate::output;

/// One output line.
#[derive(Serialize)]
struct Line<'a> {
    text: &'a str,
    facts: Vec<Fact>,
}

/// A fact as `extract` prints it.
#[derive(Serialize)]
struct Fact {
    attribute: Option<String>,
    value: Option<String>,
    text: String,
    polarity: Polarity,
    confidence: f32,
}

impl From<FactCandidate> for Fact {
    fn from(c: FactCandidate) -> Self {
        Self {
            attribute: c.attribute,
            value: c.value,
            text: c.text,
            polarity: c.polarity,
            confidence: c.confidence,
        }
    }
}

/// Reads stdin line by line and writes one `{"text", "facts"}` line per input line,
/// in order, flushed as it goes.
pub async fn run() -> Result<(), CliError> {
    let extractor = crate::models::extractor()?;
    let stdin = io::stdin().lock();
    let mut out = io::stdout().lock();
    for (n, line) in stdin.lines().enumerate() {
        let line = line.map_err(|e| CliError::runtime(&format!("stdin line {}", n + 1), e))?;
        let text = line.strip_suffix('\r').unwrap_or(&line);
        let facts = if text.trim().is_empty() {
            Vec::new()
        } else {
            let message = Message::user(text);
            extractor
                .extract(Turn::user(&message))
                .await
                .map_err(|e| CliError::runtime(&format!("extract line {}", n + 1), e))?
        };
        let line = Line {
            text,
            facts: facts.into_iter().map(Fact::from).collect(),
        };
        output::json_line(&mut out, &line)?;
    }
    Ok(())
}
