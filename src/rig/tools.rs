//! remember / recall / forget: the user's facts as rig [`Tool`]s.
//!
//! Tools are registered once on the agent, so the user they act for comes from the
//! run's [`ToolContext`]: [`UserMemory::tool_context`](super::UserMemory::tool_context)
//! puts a [`MemoryUser`] there for each request. A call without one fails as a tool
//! error; it never falls back to some default user.

use agentmemory_core::facts::{FactCandidate, FactChange, FactSource};
use rig_core::tool::{ContextValue, Tool, ToolContext, ToolContextError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{extract, RigMemory};

/// The user (and conversation) the memory tools act for, carried in the [`ToolContext`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryUser {
    /// The user whose facts the tools read and change.
    pub user_id: String,
    /// The conversation whose log records the changes, if any.
    pub conversation: Option<String>,
}

impl ContextValue for MemoryUser {
    const KEY: &'static str = "agentmem.user";
}

/// Why a memory tool call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The run's tool context names no user (see [`MemoryUser`]).
    #[error("no memory user in the tool context: {0}")]
    NoUser(#[from] ToolContextError),
    /// The model sent an argument the tool cannot use.
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The store failed.
    #[error(transparent)]
    Memory(#[from] agentmemory_core::MemoryError),
}

fn user_of(context: &ToolContext) -> Result<MemoryUser, ToolError> {
    Ok(context.require::<MemoryUser>()?)
}

fn non_empty(what: &'static str, text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::InvalidArgument {
            what,
            reason: "is empty".to_owned(),
        });
    }
    Ok(())
}

/// Arguments of [`RememberTool`].
#[derive(Debug, Clone, Deserialize)]
pub struct RememberArgs {
    /// The fact, as a short statement about the user.
    pub fact: String,
}

/// `remember`: stores a fact about the user, reconciled with what is known (a repeated
/// fact is reinforced, a contradicted one superseded).
#[derive(Debug, Clone)]
pub struct RememberTool {
    memory: RigMemory,
}

impl RememberTool {
    /// The tool over `memory`'s fact store.
    pub fn new(memory: RigMemory) -> Self {
        Self { memory }
    }
}

/// Confidence of a fact the model chose to remember.
const REMEMBERED_CONFIDENCE: f32 = 0.9;

impl Tool for RememberTool {
    const NAME: &'static str = "remember";
    type Args = RememberArgs;
    type Output = Value;
    type Error = ToolError;

    fn description(&self) -> String {
        "Remember a lasting fact about the user (preference, circumstance, name) for future conversations.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "fact": {
                    "type": "string",
                    "description": "The fact as a short statement about the user, e.g. \"is allergic to peanuts\"."
                }
            },
            "required": ["fact"]
        })
    }

    async fn call(
        &self,
        context: &mut ToolContext,
        args: RememberArgs,
    ) -> Result<Value, ToolError> {
        non_empty("fact", &args.fact)?;
        let user = user_of(context)?;
        let shared = self.memory.shared();
        let candidate =
            FactCandidate::new(args.fact.trim(), REMEMBERED_CONFIDENCE).with_source(FactSource {
                session_id: user.conversation.clone(),
                message_id: None,
            });
        let change = shared.facts.upsert(&user.user_id, candidate).await?;
        extract::log_changes(
            shared,
            user.conversation.as_deref(),
            std::slice::from_ref(&change),
        )
        .await?;
        Ok(match &change {
            FactChange::Added { fact } => {
                json!({"status": "added", "id": fact.id, "fact": fact.text})
            }
            FactChange::Reinforced { fact } => {
                json!({"status": "reinforced", "id": fact.id, "fact": fact.text})
            }
            FactChange::Superseded { old, new } => json!({
                "status": "superseded", "id": new.id, "fact": new.text, "replaces": old.text
            }),
            FactChange::Contested { fact, candidate } => json!({
                "status": "contested", "id": fact.id, "fact": fact.text, "contradicted_by": candidate.text
            }),
            FactChange::Closed { fact } => {
                json!({"status": "closed", "id": fact.id, "fact": fact.text})
            }
            FactChange::Deleted { fact } => json!({"status": "deleted", "id": fact.id}),
            FactChange::Ignored { reason, .. } => json!({"status": "ignored", "reason": reason}),
        })
    }
}

/// Arguments of [`RecallTool`].
#[derive(Debug, Clone, Deserialize)]
pub struct RecallArgs {
    /// What to look for.
    pub query: String,
    /// At most this many facts (default 5, at most 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `recall`: searches the user's facts, best first, with their ids (for `forget`).
#[derive(Debug, Clone)]
pub struct RecallTool {
    memory: RigMemory,
}

impl RecallTool {
    /// The tool over `memory`'s fact store.
    pub fn new(memory: RigMemory) -> Self {
        Self { memory }
    }
}

impl Tool for RecallTool {
    const NAME: &'static str = "recall";
    type Args = RecallArgs;
    type Output = Value;
    type Error = ToolError;

    fn description(&self) -> String {
        "Search what is remembered about the user. Returns facts with their ids.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "At most this many facts (default 5)."}
            },
            "required": ["query"]
        })
    }

    async fn call(&self, context: &mut ToolContext, args: RecallArgs) -> Result<Value, ToolError> {
        non_empty("query", &args.query)?;
        let user = user_of(context)?;
        let limit = args.limit.unwrap_or(5).clamp(1, 50);
        let facts = self
            .memory
            .shared()
            .facts
            .search(&user.user_id, &args.query, limit)
            .await?;
        let facts: Vec<Value> = facts
            .iter()
            .map(|f| json!({"id": f.fact.id, "fact": f.fact.text, "confidence": f.effective_confidence}))
            .collect();
        Ok(json!({ "facts": facts }))
    }
}

/// Arguments of [`ForgetTool`].
#[derive(Debug, Clone, Deserialize)]
pub struct ForgetArgs {
    /// The id of the fact, as `recall` returned it.
    pub id: String,
}

/// `forget`: deletes one of the user's facts by id (find it with `recall`).
#[derive(Debug, Clone)]
pub struct ForgetTool {
    memory: RigMemory,
}

impl ForgetTool {
    /// The tool over `memory`'s fact store.
    pub fn new(memory: RigMemory) -> Self {
        Self { memory }
    }
}

impl Tool for ForgetTool {
    const NAME: &'static str = "forget";
    type Args = ForgetArgs;
    type Output = Value;
    type Error = ToolError;

    fn description(&self) -> String {
        "Forget a remembered fact about the user, by the id `recall` returned.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The fact's id, from recall."}
            },
            "required": ["id"]
        })
    }

    async fn call(&self, context: &mut ToolContext, args: ForgetArgs) -> Result<Value, ToolError> {
        non_empty("id", &args.id)?;
        let user = user_of(context)?;
        let shared = self.memory.shared();
        let id = args.id.trim();
        // Read first, so the log can say what was forgotten.
        let fact = shared.facts.get(&user.user_id, id).await?;
        let deleted = shared.facts.delete(&user.user_id, id).await?;
        if let (true, Some(fact)) = (deleted, fact) {
            let change = FactChange::Deleted { fact };
            extract::log_changes(
                shared,
                user.conversation.as_deref(),
                std::slice::from_ref(&change),
            )
            .await?;
        }
        Ok(json!({ "forgotten": deleted, "id": id }))
    }
}
