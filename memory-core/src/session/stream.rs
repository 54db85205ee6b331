//! [`Session::send_stream`]: a turn whose reply arrives as it is produced.

use std::pin::Pin;

use futures_core::Stream;
use tracing::Instrument;

use crate::error::{MemoryError, Result};
use crate::message::Message;
use crate::model::{ChatStream, StreamEvent};

use super::report::TurnReply;
use super::{Agent, PreparedTurn, Session};

/// One event of a streamed turn.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TurnEvent {
    /// The next piece of the reply's text.
    Delta(String),
    /// The reply is complete and committed (logged, remembered, facts extracted or
    /// queued). Always the last event.
    Done(Box<TurnReply>),
}

/// The stream [`Session::send_stream`] returns. Dropping it before
/// [`TurnEvent::Done`] commits nothing: the user message stays logged, the partial
/// reply is forgotten, and sending the message again is a retry.
pub type TurnStream<'a> = Pin<Box<dyn Stream<Item = Result<TurnEvent>> + Send + 'a>>;

struct State<'a, A: Agent> {
    session: &'a mut Session<A>,
    turn: PreparedTurn,
    inner: ChatStream,
}

impl<A: Agent> Session<A> {
    /// Runs one turn like [`send`](Self::send), streaming the reply: text deltas as the
    /// model produces them, then [`TurnEvent::Done`] once the reply is committed.
    ///
    /// The model's [`stream`](crate::model::ChatModel::stream) is used (models without
    /// streaming yield their whole reply as one delta). Without a model
    /// ([`SessionBuilder::external_model`](super::SessionBuilder::external_model)) this
    /// fails with [`MemoryError::NoModel`] and nothing is logged.
    pub async fn send_stream(&mut self, text: impl Into<String>) -> Result<TurnStream<'_>> {
        self.send_message_stream(Message::user(text.into())).await
    }

    /// Like [`send_stream`](Self::send_stream) with a prepared message.
    pub async fn send_message_stream(&mut self, user: Message) -> Result<TurnStream<'_>> {
        let model = self.chat_model()?;
        let turn = self.prepare(user).await?;
        let inner = model
            .stream(turn.request.clone())
            .instrument(tracing::info_span!("model"))
            .await?;
        let state = State {
            session: self,
            turn,
            inner,
        };
        Ok(Box::pin(futures_util::stream::unfold(Some(state), step)))
    }
}

async fn step<A: Agent>(
    state: Option<State<'_, A>>,
) -> Option<(Result<TurnEvent>, Option<State<'_, A>>)> {
    use futures_util::StreamExt;

    let mut state = state?;
    match state.inner.next().await {
        Some(Ok(StreamEvent::Delta(text))) => Some((Ok(TurnEvent::Delta(text)), Some(state))),
        Some(Ok(StreamEvent::Done(completion))) => {
            let State { session, turn, .. } = state;
            session.agent.after_model(&completion);
            let committed = session.commit(turn, completion).await;
            Some((committed.map(|r| TurnEvent::Done(Box::new(r))), None))
        }
        Some(Err(e)) => Some((Err(e), None)),
        None => Some((
            Err(MemoryError::model(
                state.turn.request.model.clone(),
                crate::error::ModelErrorKind::BadResponse,
                "the reply stream ended without a final message; nothing was committed",
            )),
            None,
        )),
    }
}
