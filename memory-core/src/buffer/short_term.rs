//! [`ShortTermMemory`]: the token-budget window over a conversation, with a running summary.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::error::Result;
use crate::message::{Content, Message, Role, ToolCall};
use crate::tokens::{HeuristicCounter, TokenCounter};

use super::snapshot::{ShortTermSnapshot, SNAPSHOT_VERSION};

/// The default token budget.
pub const DEFAULT_MAX_TOKENS: usize = 40_000;

/// A message with its token count, measured once when it entered the buffer.
#[derive(Debug, Clone)]
struct Entry {
    /// Arrival order across system and non-system messages.
    seq: u64,
    tokens: usize,
    /// Shared, so that handing the window to a model is a reference-count increment
    /// per message rather than a copy of its text.
    message: Arc<Message>,
}

/// The conversation as the model should see it: every system message, then as many of
/// the most recent other messages as fit the token budget, plus a running summary of
/// what no longer fits.
///
/// - System messages are never dropped.
/// - The window never begins with a tool result whose call was cut off, and never keeps
///   an assistant tool call without its results.
/// - Each message is counted once, when it is added; reading the window costs time
///   proportional to the window, not to the whole history.
/// - The summary's tokens count against the budget, since it is sent along with the window.
///
/// ```
/// use agentmemory_core::buffer::ShortTermMemory;
///
/// let mut memory = ShortTermMemory::new(60);
/// memory.add_system("You are terse.");
/// for i in 0..20 {
///     memory.add_user(format!("question number {i}"));
///     memory.add_assistant(format!("answer number {i}"));
/// }
/// let window = memory.messages();
/// assert_eq!(window[0].text(), "You are terse.");            // system kept
/// assert_eq!(window.last().unwrap().text(), "answer number 19"); // newest kept
/// assert!(memory.window_tokens() <= 60);
/// assert_eq!(memory.len(), 41);                              // nothing was dropped
/// ```
#[derive(Debug, Clone)]
pub struct ShortTermMemory {
    max_tokens: usize,
    counter: Arc<dyn TokenCounter>,
    system: Vec<Entry>,
    turns: VecDeque<Entry>,
    system_tokens: usize,
    turn_tokens: usize,
    next_seq: u64,
    summary: Option<String>,
    summary_tokens: usize,
}

impl Default for ShortTermMemory {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_TOKENS)
    }
}

impl ShortTermMemory {
    /// An empty memory with a budget of `max_tokens`, counting with the chars/4 heuristic.
    pub fn new(max_tokens: usize) -> Self {
        Self::with_counter(max_tokens, Arc::new(HeuristicCounter::default()))
    }

    /// An empty memory counting tokens with `counter`.
    pub fn with_counter(max_tokens: usize, counter: Arc<dyn TokenCounter>) -> Self {
        Self {
            max_tokens,
            counter,
            system: Vec::new(),
            turns: VecDeque::new(),
            system_tokens: 0,
            turn_tokens: 0,
            next_seq: 0,
            summary: None,
            summary_tokens: 0,
        }
    }

    /// The token budget.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Changes the token budget.
    pub fn set_max_tokens(&mut self, max_tokens: usize) {
        self.max_tokens = max_tokens;
    }

    /// The counter in use.
    pub fn counter(&self) -> &Arc<dyn TokenCounter> {
        &self.counter
    }

    /// Adds a user message.
    pub fn add_user(&mut self, content: impl Into<Content>) -> &Message {
        self.add(Message::user(content))
    }

    /// Adds an assistant message.
    pub fn add_assistant(&mut self, content: impl Into<Content>) -> &Message {
        self.add(Message::assistant(content))
    }

    /// Adds an assistant message that calls tools.
    pub fn add_assistant_tool_calls(
        &mut self,
        content: impl Into<Content>,
        calls: Vec<ToolCall>,
    ) -> &Message {
        self.add(Message::assistant_with_tools(content, calls))
    }

    /// Adds the result of tool call `call_id`.
    pub fn add_tool_result(
        &mut self,
        call_id: impl Into<String>,
        content: impl Into<Content>,
    ) -> &Message {
        self.add(Message::tool_result(call_id, content))
    }

    /// Adds a system message (never trimmed).
    pub fn add_system(&mut self, content: impl Into<Content>) -> &Message {
        self.add(Message::system(content))
    }

    /// Adds any message; its tokens are counted now, once.
    pub fn add(&mut self, message: Message) -> &Message {
        let tokens = self.counter.count_message(&message);
        let entry = Entry {
            seq: self.next_seq,
            tokens,
            message: Arc::new(message),
        };
        self.next_seq += 1;
        if entry.message.role == Role::System {
            self.system_tokens += tokens;
            self.system.push(entry);
            &self.system[self.system.len() - 1].message
        } else {
            self.turn_tokens += tokens;
            self.turns.push_back(entry);
            &self.turns[self.turns.len() - 1].message
        }
    }

    /// Index into `turns` where the window for `max_tokens` starts.
    fn window_start(&self, max_tokens: usize) -> usize {
        let budget = max_tokens
            .saturating_sub(self.system_tokens)
            .saturating_sub(self.summary_tokens);
        self.start_within(budget)
    }

    /// Index into `turns` of the oldest message of the longest recent run of non-system
    /// messages whose tokens add up to at most `budget` (never an orphaned tool result).
    fn start_within(&self, budget: usize) -> usize {
        let mut used = 0;
        let mut start = self.turns.len();
        for entry in self.turns.iter().rev() {
            if used + entry.tokens > budget {
                break;
            }
            used += entry.tokens;
            start -= 1;
        }
        self.skip_orphans(start)
    }

    /// Moves `start` past tool results whose call lies before it.
    fn skip_orphans(&self, mut start: usize) -> usize {
        while start < self.turns.len() && self.turns[start].message.role == Role::Tool {
            start += 1;
        }
        start
    }

    /// Merges every system message with the turns from `start`, in arrival order.
    fn merged_from(&self, start: usize) -> impl Iterator<Item = &Entry> + '_ {
        let mut system = self.system.iter().peekable();
        let mut turns = self.turns.range(start..).peekable();
        std::iter::from_fn(move || match (system.peek(), turns.peek()) {
            (Some(s), Some(t)) if s.seq < t.seq => system.next(),
            (Some(_), None) => system.next(),
            (_, Some(_)) => turns.next(),
            (None, None) => None,
        })
    }

    /// The window that fits the budget, oldest first, without changing the buffer.
    ///
    /// The messages are borrowed, so reading the window never copies message text; use
    /// [`shared_window`](Self::shared_window) to keep the window beyond the borrow.
    pub fn messages(&self) -> Vec<&Message> {
        let start = self.window_start(self.max_tokens);
        self.merged_from(start).map(|e| &*e.message).collect()
    }

    /// The same window as [`messages`](Self::messages), as shared handles: each element
    /// is an [`Arc`] clone, so the result can outlive the borrow of the buffer (a
    /// [`ChatRequest`](crate::model::ChatRequest) holds it) without copying any text.
    ///
    /// ```
    /// use agentmemory_core::buffer::ShortTermMemory;
    ///
    /// let mut memory = ShortTermMemory::new(1_000);
    /// memory.add_user("hello");
    /// let window = memory.shared_window();
    /// memory.add_assistant("hi"); // the buffer is free to change
    /// assert_eq!(window.len(), 1);
    /// assert_eq!(window[0].text(), "hello");
    /// ```
    pub fn shared_window(&self) -> Vec<Arc<Message>> {
        let start = self.window_start(self.max_tokens);
        self.merged_from(start)
            .map(|e| Arc::clone(&e.message))
            .collect()
    }

    /// The window when `max_tokens` must hold only the system messages and the recent
    /// turns (the caller accounts for the summary, as a session does when it renders the
    /// summary into the system prompt), with its tokens. Shared handles, like
    /// [`shared_window`](Self::shared_window).
    ///
    /// ```
    /// use agentmemory_core::buffer::ShortTermMemory;
    ///
    /// let mut memory = ShortTermMemory::new(1_000);
    /// memory.add_user("one two three four five six seven eight");
    /// memory.add_assistant("ok");
    /// let (window, tokens) = memory.shared_window_within(8);
    /// assert_eq!(window.len(), 1);
    /// assert!(tokens <= 8);
    /// ```
    pub fn shared_window_within(&self, max_tokens: usize) -> (Vec<Arc<Message>>, usize) {
        let start = self.start_within(max_tokens.saturating_sub(self.system_tokens));
        let tokens =
            self.system_tokens + self.turns.range(start..).map(|e| e.tokens).sum::<usize>();
        let window = self
            .merged_from(start)
            .map(|e| Arc::clone(&e.message))
            .collect();
        (window, tokens)
    }

    /// Tokens of every message held (system and not, in the window or not), without the
    /// summary.
    pub fn message_tokens(&self) -> usize {
        self.system_tokens + self.turn_tokens
    }

    /// Tokens the summary counts for in [`token_count`](Self::token_count).
    pub fn summary_tokens(&self) -> usize {
        self.summary_tokens
    }

    /// The system messages, in order, as shared handles.
    pub fn system_messages(&self) -> Vec<Arc<Message>> {
        self.system.iter().map(|e| Arc::clone(&e.message)).collect()
    }

    /// Whether one of the `last` most recent non-system messages has id `id` (a cheap
    /// check for a message that was already added, e.g. by a retried turn).
    pub fn holds_recent(&self, id: &ulid::Ulid, last: usize) -> bool {
        self.turns
            .iter()
            .rev()
            .take(last)
            .any(|e| e.message.id == *id)
    }

    /// Takes the non-system message `id` out of the buffer (searching from the most
    /// recent), with its tokens; whether it was there. How an unanswered user message
    /// leaves the window.
    pub(crate) fn remove_recent(&mut self, id: &ulid::Ulid) -> bool {
        let Some(at) = self.turns.iter().rposition(|e| e.message.id == *id) else {
            return false;
        };
        if let Some(entry) = self.turns.remove(at) {
            self.turn_tokens = self.turn_tokens.saturating_sub(entry.tokens);
        }
        true
    }

    /// The most recent non-system message.
    pub fn last_turn(&self) -> Option<&Message> {
        self.turns.back().map(|e| &*e.message)
    }

    /// Tokens of the window [`messages`](Self::messages) returns, plus the summary's.
    pub fn window_tokens(&self) -> usize {
        let start = self.window_start(self.max_tokens);
        self.system_tokens
            + self.summary_tokens
            + self.turns.range(start..).map(|e| e.tokens).sum::<usize>()
    }

    /// How many of the most recent non-system messages a window of `max_tokens` holds
    /// (with the current system messages and summary). Everything older is what a
    /// summariser must fold in so that nothing leaves the window unsummarised.
    pub fn recent_that_fit(&self, max_tokens: usize) -> usize {
        self.turns.len() - self.window_start(max_tokens)
    }

    /// How many of the most recent non-system messages add up to at most `tokens`
    /// (system messages and summary not counted).
    pub fn recent_within(&self, tokens: usize) -> usize {
        self.turns.len() - self.start_within(tokens)
    }

    /// Tokens of the system messages (never trimmed).
    pub fn system_tokens(&self) -> usize {
        self.system_tokens
    }

    /// Drops the oldest non-system messages until the window fits `max_tokens`.
    /// Returns how many messages were dropped.
    pub fn trim_to_fit(&mut self, max_tokens: usize) -> usize {
        let start = self.window_start(max_tokens);
        self.drop_front(start)
    }

    fn drop_front(&mut self, count: usize) -> usize {
        for entry in self.turns.drain(..count) {
            self.turn_tokens -= entry.tokens;
        }
        count
    }

    /// Index into `turns` before which messages are to be summarised when
    /// `keep_recent` non-system messages stay verbatim.
    fn recent_start(&self, keep_recent: usize) -> usize {
        self.skip_orphans(self.turns.len().saturating_sub(keep_recent))
    }

    /// The oldest non-system messages, all but the `keep_recent` most recent ones: what a
    /// summariser should fold into the summary. The boundary moves forward past tool
    /// results so that a call and its results are never split.
    pub fn messages_to_summarize(&self, keep_recent: usize) -> Vec<Message> {
        let end = self.recent_start(keep_recent);
        self.turns
            .range(..end)
            .map(|e| Message::clone(&e.message))
            .collect()
    }

    /// Drops what [`messages_to_summarize`](Self::messages_to_summarize) returns.
    /// Returns how many messages were dropped.
    pub fn trim_to_recent(&mut self, keep_recent: usize) -> usize {
        let end = self.recent_start(keep_recent);
        self.drop_front(end)
    }

    /// Whether the whole buffer (system + summary + every message) exceeds the budget.
    pub fn is_over_budget(&self) -> bool {
        self.token_count() > self.max_tokens
    }

    /// Replaces the running summary.
    pub fn set_summary(&mut self, summary: impl Into<String>) {
        let summary = summary.into();
        self.summary_tokens = if summary.is_empty() {
            0
        } else {
            self.counter.count_text(&summary) + self.counter.per_message_overhead()
        };
        self.summary = Some(summary).filter(|s| !s.is_empty());
    }

    /// The running summary of messages no longer held.
    pub fn summary(&self) -> Option<&str> {
        self.summary.as_deref()
    }

    /// Removes every message and the summary.
    pub fn clear(&mut self) {
        self.system.clear();
        self.turns.clear();
        self.system_tokens = 0;
        self.turn_tokens = 0;
        self.summary = None;
        self.summary_tokens = 0;
    }

    /// Tokens of everything held: every message (in the window or not) and the summary.
    pub fn token_count(&self) -> usize {
        self.system_tokens + self.turn_tokens + self.summary_tokens
    }

    /// Number of messages held, system ones included.
    pub fn len(&self) -> usize {
        self.system.len() + self.turns.len()
    }

    /// Whether no message is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every message held, oldest first (not only the window).
    pub fn all_messages(&self) -> Vec<Message> {
        self.merged_from(0)
            .map(|e| Message::clone(&e.message))
            .collect()
    }

    /// The state as a versioned, serialisable snapshot.
    pub fn snapshot(&self) -> ShortTermSnapshot {
        ShortTermSnapshot {
            version: SNAPSHOT_VERSION,
            messages: self.all_messages(),
            summary: self.summary.clone(),
        }
    }

    /// Replaces the state with `snapshot`'s (messages are counted again as they enter).
    pub fn restore(&mut self, snapshot: ShortTermSnapshot) {
        self.clear();
        for message in snapshot.messages {
            self.add(message);
        }
        if let Some(summary) = snapshot.summary {
            self.set_summary(summary);
        }
    }

    /// Restores from JSON: a versioned snapshot or a bare list of messages.
    /// On any error the memory is left exactly as it was.
    ///
    /// ```
    /// use agentmemory_core::buffer::ShortTermMemory;
    ///
    /// let mut memory = ShortTermMemory::new(1000);
    /// memory.add_user("hello");
    /// let json = memory.snapshot().to_json();
    ///
    /// let mut other = ShortTermMemory::new(1000);
    /// other.restore_json(&json).unwrap();
    /// assert_eq!(other.snapshot(), memory.snapshot());
    ///
    /// assert!(other.restore_json("{\"version\": 7}").is_err());
    /// assert_eq!(other.len(), 1); // untouched by the failed restore
    /// ```
    pub fn restore_json(&mut self, json: &str) -> Result<()> {
        let snapshot = ShortTermSnapshot::from_json(json)?;
        self.restore(snapshot);
        Ok(())
    }
}
