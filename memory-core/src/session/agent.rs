//! [`Agent`]: what a session needs to know about the agent it runs.

use std::borrow::Cow;

use crate::model::{ChatRequest, Completion, ToolDefinition};
use crate::remember::Remember;

/// An agent: a system prompt, a model, and optional hooks around each model call.
///
/// Long-term memory comes from [`Remember`], which `#[remember(...)]` implements; an
/// agent without long-term memory writes `impl Remember for MyAgent {}`.
///
/// ```
/// use agentmemory_core::{session::Agent, Remember};
///
/// struct Concierge;
/// impl Remember for Concierge {}
/// impl Agent for Concierge {
///     fn system_prompt(&self) -> std::borrow::Cow<'_, str> {
///         "You are a hotel concierge.".into()
///     }
///     fn model(&self) -> &str {
///         "offline"
///     }
/// }
/// assert_eq!(Concierge.name(), "Concierge");
/// ```
pub trait Agent: Remember + Send + Sync + 'static {
    /// The agent's instructions, before any memory is added.
    fn system_prompt(&self) -> Cow<'_, str>;

    /// The name of the chat model it talks to, as registered in the
    /// [`Container`](crate::Container).
    fn model(&self) -> &str;

    /// A name for logs and conversation records; the type's name by default.
    fn name(&self) -> &str {
        let full = std::any::type_name::<Self>();
        let base = full.split('<').next().unwrap_or(full);
        base.rsplit("::").next().unwrap_or(base)
    }

    /// The tools the model may call; none by default. A session puts them in every
    /// request. [`Session::send`](super::Session::send) does not run tools: to run them,
    /// use [`prepare`](super::Session::prepare) / [`commit`](super::Session::commit)
    /// with your own loop and pass the rounds in [`Reply`](super::Reply).
    fn tools(&self) -> Vec<ToolDefinition> {
        Vec::new()
    }

    /// Called with the complete request just before the model gets it; may adjust it
    /// (temperature, extra instructions).
    fn before_model(&self, request: &mut ChatRequest) {
        let _ = request;
    }

    /// Called with the model's completion before it enters memory.
    fn after_model(&self, completion: &Completion) {
        let _ = completion;
    }
}
