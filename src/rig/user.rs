//! One user's memory, bound for one request.

use agentmemory_core::conversation::ConversationEvent;
use agentmemory_core::{MemoryError, Result};
use rig_agent::{Agent, AgentRunner};
use rig_core::tool::ToolContext;

use super::session::AGENT;
use super::{MemoryHook, MemoryUser, RigMemory, SessionStore};

/// A user's memory for one request: rig's hook context and tool context carry no user
/// id, so this handle binds it. Cheap to make; make one per request.
///
/// [`prompt`](Self::prompt) does the whole binding; the parts are
/// [`conversation`](Self::conversation), [`session_store`](Self::session_store),
/// [`hook`](Self::hook) and [`tool_context`](Self::tool_context).
#[derive(Debug, Clone)]
pub struct UserMemory {
    memory: RigMemory,
    user_id: String,
}

impl UserMemory {
    pub(crate) fn new(memory: RigMemory, user_id: String) -> Result<Self> {
        if user_id.trim().is_empty() {
            return Err(MemoryError::invalid("user id", "is empty"));
        }
        Ok(Self { memory, user_id })
    }

    /// The user.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// This user's conversations as rig's session store, for `AgentRunner::memory` (or
    /// `AgentBuilder::memory` on an agent that serves one user).
    pub fn session_store(&self) -> SessionStore {
        SessionStore::new(self.memory.clone(), self.user_id.clone())
    }

    /// Opens the conversation `id` for this user: the log records the user as its owner
    /// the first time. A conversation another user owns is refused, never shared; so is
    /// an id rig cannot name a log with (empty, or with `/`, `\`, `.` or `..`).
    pub async fn conversation(&self, id: &str) -> Result<()> {
        if id.trim().is_empty() {
            return Err(MemoryError::invalid("conversation id", "is empty"));
        }
        rig_memory::check_log_name(id)
            .map_err(|e| MemoryError::invalid("conversation id", e.to_string()))?;
        let log = &self.memory.shared().log;
        let events = log.load(id).await?;
        let owner = agentmemory_core::conversation::Owner::of(&events).map(|o| o.user_id);
        match owner {
            Some(owner) if owner == self.user_id => {}
            Some(_) => {
                return Err(MemoryError::invalid(
                    "conversation id",
                    format!("conversation `{id}` belongs to another user"),
                ))
            }
            None => {
                log.append(
                    id,
                    vec![ConversationEvent::Started {
                        user_id: self.user_id.clone(),
                        agent: AGENT.to_owned(),
                    }],
                )
                .await?;
            }
        }
        Ok(())
    }

    /// The memory hook for `agent`, bound to this user: it keeps the agent's preamble and
    /// appends the memory block to it. `conversation` is where fact changes are logged.
    pub fn hook(&self, agent: &Agent, conversation: Option<&str>) -> MemoryHook {
        self.hook_with_preamble(agent.run_spec().preamble, conversation)
    }

    /// Like [`hook`](Self::hook), for a run whose preamble is not the agent's (set with
    /// `AgentRunner::preamble`): the memory block is appended to `preamble`.
    pub fn hook_with_preamble(
        &self,
        preamble: Option<String>,
        conversation: Option<&str>,
    ) -> MemoryHook {
        MemoryHook::new(
            self.memory.clone(),
            self.user_id.clone(),
            conversation.map(str::to_owned),
            preamble,
        )
    }

    /// A tool context naming this user, for the remember / recall / forget tools.
    pub fn tool_context(&self, conversation: Option<&str>) -> Result<ToolContext> {
        let mut context = ToolContext::new();
        context
            .insert(MemoryUser {
                user_id: self.user_id.clone(),
                conversation: conversation.map(str::to_owned),
            })
            .map_err(|e| MemoryError::invalid("tool context", e.to_string()))?;
        Ok(context)
    }

    /// A run of `agent` on `prompt` with this user's memory: the conversation opened for
    /// the user and kept in the user's [`SessionStore`] (in place of any store the agent
    /// has), the memory hook, and the user in the tool context. Add options, then
    /// `.run()` (or `.await`) it.
    pub async fn prompt(
        &self,
        agent: &Agent,
        conversation: &str,
        prompt: impl Into<String>,
    ) -> Result<AgentRunner> {
        Ok(self.prepare(agent, conversation, prompt).await?.0)
    }

    /// Like [`prompt`](Self::prompt), also returning the hook, whose
    /// [`report`](MemoryHook::report) tells what the memory did once the run is over.
    pub async fn prepare(
        &self,
        agent: &Agent,
        conversation: &str,
        prompt: impl Into<String>,
    ) -> Result<(AgentRunner, MemoryHook)> {
        self.conversation(conversation).await?;
        let hook = self.hook(agent, Some(conversation));
        let runner = agent
            .prompt(prompt.into())
            .memory(self.session_store())
            .conversation(conversation)
            .add_hook(hook.clone())
            .tool_context(self.tool_context(Some(conversation))?);
        Ok((runner, hook))
    }
}
