//! Streaming replies: [`StreamEvent`] and [`ChatStream`].

use std::pin::Pin;

use futures_core::Stream;

use super::Completion;
use crate::error::Result;

/// One event of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The next piece of the reply's text.
    Delta(String),
    /// The reply is complete: the whole message (text and tool calls) and usage.
    /// Always the last event of a stream that did not fail.
    Done(Completion),
}

/// A streamed reply: deltas, then one [`StreamEvent::Done`]. An error ends the stream.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<StreamEvent>> + Send>>;

/// The stream of a completion that is already whole: its text as one delta (when it has
/// any), then `Done`.
pub(crate) fn from_completion(completion: Completion) -> ChatStream {
    let text = completion.message.text();
    let mut events = Vec::with_capacity(2);
    if !text.is_empty() {
        events.push(Ok(StreamEvent::Delta(text)));
    }
    events.push(Ok(StreamEvent::Done(completion)));
    Box::pin(futures_util::stream::iter(events))
}
