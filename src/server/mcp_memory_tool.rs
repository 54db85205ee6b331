//! The MCP `memory` tool: the commands of Claude's memory tool (`view`, `create`,
//! `str_replace`, `insert`, `delete`, `rename`) over the server's stores, for assistants
//! that reach agentmem over MCP instead of running the memory tool themselves.
//!
//! The arguments are the memory tool's (`command`, `path`, `view_range`, `file_text`,
//! `old_str`, `new_str`, `insert_line`, `insert_text`, `old_path`, `new_path`), with
//! `user_id` beside them when the server is not bound to a user. Results and errors are
//! the strings [`MemoryTool`](crate::memory_tool::MemoryTool) answers.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::memory_tool::{MemoryCommand, MemoryToolError};

use super::mcp::MemoryMcp;

/// Arguments of the `memory` tool.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct MemoryToolArgs {
    /// `view`, `create`, `str_replace`, `insert`, `delete` or `rename`.
    pub command: String,
    /// The file or directory, under `/memories` (every command but `rename`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `view` of a file: `[start_line, end_line]`, 1-based; `end_line` -1 reads to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_range: Option<Vec<i64>>,
    /// `create`: the file's content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_text: Option<String>,
    /// `str_replace`: the text to replace; it must occur exactly once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_str: Option<String>,
    /// `str_replace`: what replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_str: Option<String>,
    /// `insert`: the line after which the text goes (0 = at the top).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_line: Option<i64>,
    /// `insert`: the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_text: Option<String>,
    /// `rename`: where the file or directory is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `rename`: where it goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
    /// The user whose files these are (ignored when the server is bound to one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

#[tool_router(router = memory_tool_router, vis = "pub(super)")]
impl MemoryMcp {
    /// Claude's memory tool: files under /memories that persist across conversations.
    /// Commands: `view` (a directory listing with sizes, or a file with line numbers and
    /// an optional view_range), `create` (a new file), `str_replace` (replace text that
    /// occurs exactly once), `insert` (text after a line), `delete` (a file or a
    /// directory), `rename` (move a file or a directory). Every edit keeps the previous
    /// version.
    #[tool(name = "memory")]
    async fn memory(
        &self,
        Parameters(mut args): Parameters<MemoryToolArgs>,
    ) -> Result<String, String> {
        let user = self.user(args.user_id.take())?.ok_or(
            "user_id is required: memory files belong to a user (or start the server with --user)",
        )?;
        let tool = self
            .service()
            .memory_files
            .for_user(&user)
            .map_err(|e| e.to_string())?;
        let input = serde_json::to_value(&args).map_err(|e| e.to_string())?;
        let outcome = match MemoryCommand::from_input(&input) {
            Ok(command) => tool.execute(&command).await,
            Err(e) => Err(e),
        };
        outcome.map_err(|e| {
            if let MemoryToolError::Store(store) = &e {
                tracing::error!(error = %store, "memory tool: the store failed");
            }
            e.to_string()
        })
    }
}
