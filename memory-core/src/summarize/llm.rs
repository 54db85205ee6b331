//! [`LlmSummarizer`]: a running summary written by a chat model, with an offline fallback.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::message::{Message, Role};
use crate::model::{ChatModel, ChatRequest};
use crate::summarize::{ExtractiveSummarizer, Summarizer, SummaryPrompt};
use crate::tokens::{HeuristicCounter, TokenCounter};

const INSTRUCTIONS: &str = "You maintain the running summary of a conversation between a user and an assistant. \
Merge the previous summary (if any) with the new messages into one summary. Keep names, numbers, dates, \
decisions, preferences and open tasks; drop small talk. Write plain text in the third person, no preamble.";

/// Summarises with a chat model and never fails because of it.
///
/// The model is asked for a summary of at most `max_tokens` tokens. When the model
/// errs, answers with nothing, or answers with more than `max_tokens` by the
/// [`HeuristicCounter`] (the [`Summarizer`] contract), the [`ExtractiveSummarizer`]
/// writes the summary instead and a `warn!` says why.
///
/// ```
/// # tokio_test::block_on(async {
/// use std::sync::Arc;
/// use agentmemory_core::model::OfflineModel;
/// use agentmemory_core::summarize::{LlmSummarizer, Summarizer};
/// use agentmemory_core::Message;
///
/// // The offline model is no summariser: its answer is too long for 8 tokens,
/// // so the extractive fallback writes the summary.
/// let summarizer = LlmSummarizer::new(Arc::new(OfflineModel::new()));
/// let messages = [Message::user("I'm allergic to peanuts.")];
/// let summary = summarizer.summarize(None, &messages, 8).await.unwrap();
/// assert_eq!(summary, "User: I'm allergic to peanuts.");
/// # });
/// ```
#[derive(Clone)]
pub struct LlmSummarizer {
    model: Arc<dyn ChatModel>,
    model_name: String,
    fallback: ExtractiveSummarizer,
    counter: HeuristicCounter,
    prompt: Option<SummaryPrompt>,
}

impl std::fmt::Debug for LlmSummarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSummarizer")
            .field("model_name", &self.model_name)
            .finish_non_exhaustive()
    }
}

impl LlmSummarizer {
    /// A summariser asking `model`.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        Self {
            model,
            model_name: String::new(),
            fallback: ExtractiveSummarizer::new(),
            counter: HeuristicCounter::default(),
            prompt: None,
        }
    }

    /// Asks the model with `prompt` instead of the built-in one (the system instructions
    /// stay). See [`SummaryPrompt`] for the placeholders.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agentmemory_core::model::OfflineModel;
    /// use agentmemory_core::summarize::{LlmSummarizer, SummaryPrompt};
    /// use agentmemory_core::Message;
    ///
    /// let prompt = SummaryPrompt::new("Known: {previous_summary}\nNew:\n{transcript}").unwrap();
    /// let summarizer = LlmSummarizer::new(Arc::new(OfflineModel::new())).with_prompt(prompt);
    /// let request = summarizer.request(Some("Bob"), &[Message::user("hi")], 40);
    /// assert_eq!(request.messages[0].text(), "Known: Bob\nNew:\nUser: hi\n");
    /// ```
    pub fn with_prompt(mut self, prompt: SummaryPrompt) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// The name put in [`ChatRequest::model`] (the model's registration name).
    pub fn with_model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = name.into();
        self
    }

    /// The request the model gets.
    pub fn request(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        max_tokens: usize,
    ) -> ChatRequest {
        let previous = previous.map(str::trim).filter(|p| !p.is_empty());
        let mut transcript = String::new();
        for m in messages {
            let who = match m.role {
                Role::User => "User",
                Role::Assistant => "Assistant",
                Role::System => "System",
                Role::Tool => "Tool",
            };
            transcript.push_str(&format!("{who}: {}\n", m.text()));
        }
        // Four characters a token, about three-quarters of a word.
        let words = (max_tokens * 3 / 4).max(1);
        let prompt = match &self.prompt {
            Some(template) => {
                template.render(&transcript, previous.unwrap_or(""), words, max_tokens)
            }
            None => {
                let mut prompt = String::new();
                if let Some(previous) = previous {
                    prompt.push_str("Previous summary:\n");
                    prompt.push_str(previous);
                    prompt.push_str("\n\n");
                }
                prompt.push_str("New messages:\n");
                prompt.push_str(&transcript);
                prompt.push_str(&format!(
                    "\nWrite the updated summary in at most {words} words ({max_tokens} tokens)."
                ));
                prompt
            }
        };
        ChatRequest {
            model: self.model_name.clone(),
            system: INSTRUCTIONS.to_owned(),
            messages: vec![Message::user(prompt).into()],
            temperature: Some(0.0),
            max_tokens: u32::try_from(max_tokens).ok(),
            tools: Vec::new(),
        }
    }

    /// The model's summary, or why it cannot be used.
    async fn ask(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        max_tokens: usize,
    ) -> std::result::Result<String, String> {
        let completion = self
            .model
            .complete(self.request(previous, messages, max_tokens))
            .await
            .map_err(|e| e.to_string())?;
        let summary = completion.message.text().trim().to_owned();
        if summary.is_empty() {
            return Err("the model answered with an empty summary".to_owned());
        }
        let tokens = self.counter.count_text(&summary);
        if tokens > max_tokens {
            return Err(format!(
                "the model's summary is {tokens} tokens, over the limit of {max_tokens}"
            ));
        }
        Ok(summary)
    }
}

#[async_trait]
impl Summarizer for LlmSummarizer {
    async fn summarize(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        max_tokens: usize,
    ) -> Result<String> {
        match self.ask(previous, messages, max_tokens).await {
            Ok(summary) => Ok(summary),
            Err(reason) => {
                tracing::warn!(%reason, "LLM summary unusable; falling back to the extractive summary");
                Ok(self.fallback.summarize_text(previous, messages, max_tokens))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MemoryError;
    use crate::model::Completion;

    /// Answers with a fixed text, or fails.
    struct Fixed(Option<&'static str>);

    #[async_trait]
    impl ChatModel for Fixed {
        async fn complete(&self, _: ChatRequest) -> Result<Completion> {
            match self.0 {
                Some(text) => Ok(Completion {
                    message: Message::assistant(text),
                    usage: None,
                }),
                None => Err(MemoryError::model(
                    "fixed",
                    crate::error::ModelErrorKind::Unavailable,
                    "down",
                )),
            }
        }
    }

    fn messages() -> Vec<Message> {
        vec![
            Message::user("My sister Ana lives in Lisbon."),
            Message::assistant("Lovely city!"),
        ]
    }

    async fn run(answer: Option<&'static str>, max_tokens: usize) -> String {
        LlmSummarizer::new(Arc::new(Fixed(answer)))
            .summarize(Some("User is Bob."), &messages(), max_tokens)
            .await
            .unwrap()
    }

    fn extractive(max_tokens: usize) -> String {
        ExtractiveSummarizer::new().summarize_text(Some("User is Bob."), &messages(), max_tokens)
    }

    #[tokio::test]
    async fn a_fitting_answer_is_used_trimmed() {
        assert_eq!(
            run(Some("  Bob's sister Ana lives in Lisbon.\n"), 50).await,
            "Bob's sister Ana lives in Lisbon."
        );
    }

    #[tokio::test]
    async fn errors_empty_and_long_answers_fall_back() {
        assert_eq!(run(None, 50).await, extractive(50));
        assert_eq!(run(Some("   "), 50).await, extractive(50));
        let long = "word ".repeat(100).leak();
        assert_eq!(run(Some(long), 20).await, extractive(20));
        assert!(!extractive(50).is_empty());
    }

    #[test]
    fn the_request_states_the_limit_and_carries_everything() {
        let request = LlmSummarizer::new(Arc::new(Fixed(None)))
            .with_model_name("summarizer")
            .request(Some("User is Bob."), &messages(), 40);
        assert_eq!(request.model, "summarizer");
        assert_eq!(request.max_tokens, Some(40));
        let prompt = request.messages[0].text();
        assert!(prompt.contains("Previous summary:\nUser is Bob."));
        assert!(prompt.contains("User: My sister Ana lives in Lisbon."));
        assert!(prompt.contains("Assistant: Lovely city!"));
        assert!(prompt.contains("at most 30 words (40 tokens)"));
    }

    #[tokio::test]
    async fn a_prompt_template_reaches_the_model() {
        use crate::model::RecordingModel;
        let model = RecordingModel::wrapping(Arc::new(Fixed(Some("Bob's sister is Ana."))));
        let template = SummaryPrompt::new(
            "Facts so far: {previous_summary}\nLimit: {max_words} words\n---\n{transcript}---",
        )
        .unwrap();
        let summary = LlmSummarizer::new(Arc::new(model.clone()))
            .with_prompt(template)
            .summarize(Some("User is Bob."), &messages(), 40)
            .await
            .unwrap();
        assert_eq!(summary, "Bob's sister is Ana.");
        let request = model.last_request().expect("the model was asked");
        assert_eq!(
            request.messages[0].text(),
            "Facts so far: User is Bob.\nLimit: 30 words\n---\n\
             User: My sister Ana lives in Lisbon.\nAssistant: Lovely city!\n---"
        );
        assert_eq!(request.system, INSTRUCTIONS);
    }
}
