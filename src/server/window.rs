//! The context window of a session: its size for a model, its token count, and folding the
//! oldest messages into `context` when the session outgrows it.
//!
//! As in the reference server, summarisation starts when the messages and context pass
//! 70 % of the window; the oldest messages are folded (by agentmem's [`ShortTermMemory`] and
//! [`Summarizer`]) into the running summary until the rest fits half the threshold.

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::summarize::Summarizer;
use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
use agentmemory_core::{Message, Result, Role};

use super::wire::{WireMessage, WorkingMemoryBody};

/// Share of the window at which summarisation starts.
pub const SUMMARIZATION_THRESHOLD: f64 = 0.7;

/// The context window, in tokens, of the models the client names; `None` for others.
pub fn model_window(model: &str) -> Option<u64> {
    let window = match model {
        "gpt-3.5-turbo" => 4_096,
        "gpt-3.5-turbo-16k" => 16_384,
        "gpt-4" => 8_192,
        "gpt-4-32k" => 32_768,
        "gpt-4o" | "gpt-4o-mini" | "gpt-5.1-chat-latest" | "gpt-5.2-chat-latest" => 128_000,
        "o1" | "o3-mini" => 200_000,
        "o1-mini" => 128_000,
        "gpt-5-mini" | "gpt-5-nano" => 400_000,
        "text-embedding-ada-002" | "text-embedding-3-small" | "text-embedding-3-large" => 8_191,
        m if m.starts_with("claude-") => 200_000,
        _ => return None,
    };
    Some(window)
}

/// The window a request asks for: `context_window_max` wins over `model_name`.
pub fn requested_window(model_name: Option<&str>, context_window_max: Option<u64>) -> Option<u64> {
    context_window_max
        .filter(|w| *w > 0)
        .or_else(|| model_name.and_then(model_window))
}

/// The role named `name` (`user` for names agentmem does not know).
pub(crate) fn role(name: &str) -> Role {
    match name {
        "assistant" => Role::Assistant,
        "system" => Role::System,
        "tool" => Role::Tool,
        _ => Role::User,
    }
}

fn core_message(message: &WireMessage) -> Message {
    let mut core = Message::new(role(&message.role), message.content.as_str());
    core.created_at = message.created_at;
    core
}

/// Tokens of the messages plus the context, by agentmem's heuristic counter.
pub fn token_count(memory: &WorkingMemoryBody) -> u64 {
    let counter = HeuristicCounter::default();
    let messages: usize = memory
        .messages
        .iter()
        .map(|m| counter.count_text(&m.content) + counter.per_message_overhead())
        .sum();
    let context = memory
        .context
        .as_deref()
        .map_or(0, |c| counter.count_text(c));
    (messages + context) as u64
}

/// `(total used %, until summarisation %)` of `tokens` in `window`.
pub fn percentages(tokens: u64, window: u64) -> (f64, f64) {
    let window = window.max(1) as f64;
    let total = (tokens as f64 / window * 100.0).min(100.0);
    let until = (tokens as f64 / (window * SUMMARIZATION_THRESHOLD) * 100.0).min(100.0);
    (round2(total), round2(until))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Folds the oldest messages of `memory` into its context when it passes the threshold of
/// `window`. System messages are never folded. Returns whether it summarised.
pub async fn summarize_if_needed(
    memory: &mut WorkingMemoryBody,
    window: u64,
    summarizer: &dyn Summarizer,
) -> Result<bool> {
    let threshold = ((window as f64) * SUMMARIZATION_THRESHOLD) as usize;
    if threshold == 0 || (token_count(memory) as usize) <= threshold {
        return Ok(false);
    }
    fold_body(
        memory,
        |buffer| buffer.recent_within(threshold / 2).max(1),
        (threshold / 4).max(16),
        summarizer,
    )
    .await
}

/// Tokens a summary folded by the message-count window may take.
pub const COUNT_WINDOW_SUMMARY_TOKENS: usize = 512;

/// Folds the oldest messages of `memory` into its context when it holds more than
/// `window_size` messages (system messages neither count nor are folded), keeping the
/// newest half of the window. Returns whether it summarised.
pub async fn summarize_by_count(
    memory: &mut WorkingMemoryBody,
    window_size: usize,
    summarizer: &dyn Summarizer,
) -> Result<bool> {
    let held = memory
        .messages
        .iter()
        .filter(|m| m.role != "system")
        .count();
    if window_size == 0 || held <= window_size {
        return Ok(false);
    }
    fold_body(
        memory,
        |_| (window_size / 2).max(1),
        COUNT_WINDOW_SUMMARY_TOKENS,
        summarizer,
    )
    .await
}

/// The kernel's fold ([`ShortTermMemory::fold`]) over a working-memory body: its
/// non-system messages in a buffer with its context as the summary, the `keep` most
/// recent kept (never splitting a tool call from its results), the rest folded into the
/// context. Returns whether it folded anything.
async fn fold_body(
    memory: &mut WorkingMemoryBody,
    keep: impl FnOnce(&ShortTermMemory) -> usize,
    summary_tokens: usize,
    summarizer: &dyn Summarizer,
) -> Result<bool> {
    let mut buffer = ShortTermMemory::new(usize::MAX);
    if let Some(context) = &memory.context {
        buffer.set_summary(context.clone());
    }
    // positions (in `memory.messages`) of the non-system messages, in buffer order
    let mut positions = Vec::with_capacity(memory.messages.len());
    for (i, message) in memory.messages.iter().enumerate() {
        if message.role != "system" {
            buffer.add(core_message(message));
            positions.push(i);
        }
    }
    let keep = keep(&buffer);
    let Some(fold) = buffer.fold(summarizer, keep, summary_tokens).await? else {
        return Ok(false);
    };
    let drop: std::collections::HashSet<usize> =
        positions.iter().take(fold.folded).copied().collect();
    let mut index = 0;
    memory.messages.retain(|_| {
        let keep = !drop.contains(&index);
        index += 1;
        keep
    });
    memory.context = Some(fold.summary);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentmemory_core::summarize::ExtractiveSummarizer;
    use chrono::Utc;

    fn body(messages: usize) -> WorkingMemoryBody {
        serde_json::from_value(serde_json::json!({
            "session_id": "s",
            "messages": (0..messages).map(|i| serde_json::json!({
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "content": format!("message {i}: I would like to visit the museum number {i} in Paris next week"),
                "created_at": Utc::now(),
            })).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_long_session_is_folded_into_context() {
        let mut memory = body(40);
        let before = token_count(&memory);
        let done = summarize_if_needed(&mut memory, 300, &ExtractiveSummarizer::new())
            .await
            .unwrap();
        assert!(done);
        assert!(memory.messages.len() < 40);
        assert!(memory.context.as_deref().is_some_and(|c| !c.is_empty()));
        assert!(token_count(&memory) < before);
        // the newest message is kept verbatim
        assert!(memory
            .messages
            .last()
            .unwrap()
            .content
            .starts_with("message 39"));
    }

    #[tokio::test]
    async fn past_the_message_window_the_oldest_are_folded_to_half_of_it() {
        let mut memory = body(60);
        let done = summarize_by_count(&mut memory, 20, &ExtractiveSummarizer::new())
            .await
            .unwrap();
        assert!(done);
        assert_eq!(memory.messages.len(), 10);
        assert!(memory.messages[0].content.starts_with("message 50"));
        assert!(memory.context.as_deref().is_some_and(|c| !c.is_empty()));
        let mut short = body(20);
        assert!(
            !summarize_by_count(&mut short, 20, &ExtractiveSummarizer::new())
                .await
                .unwrap()
        );
    }

    #[tokio::test]
    async fn a_short_session_is_left_alone() {
        let mut memory = body(4);
        let done = summarize_if_needed(&mut memory, 128_000, &ExtractiveSummarizer::new())
            .await
            .unwrap();
        assert!(!done);
        assert_eq!(memory.messages.len(), 4);
        assert_eq!(requested_window(Some("gpt-4o"), None), Some(128_000));
        assert_eq!(requested_window(Some("gpt-4o"), Some(1000)), Some(1000));
        assert_eq!(requested_window(Some("unknown"), None), None);
    }
}
