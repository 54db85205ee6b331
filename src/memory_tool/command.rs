//! [`MemoryCommand`]: one command of Claude's memory tool, as the model sends it in a
//! `tool_use` block's `input`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::MemoryToolError;

/// The commands of the memory tool (`memory_20250818`), tagged by `command`, with the
/// field names the model uses.
///
/// ```
/// use agentmemory::memory_tool::MemoryCommand;
/// use serde_json::json;
///
/// let command = MemoryCommand::from_input(&json!({
///     "command": "str_replace",
///     "path": "/memories/preferences.txt",
///     "old_str": "Favorite color: blue",
///     "new_str": "Favorite color: green"
/// }))
/// .unwrap();
/// assert_eq!(command.name(), "str_replace");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum MemoryCommand {
    /// A directory listing (two levels deep, with sizes) or a file with 1-based line
    /// numbers, optionally only lines `view_range[0]..=view_range[1]` (`-1` = to the end).
    View {
        /// The directory or file.
        path: String,
        /// `[start, end]`, 1-based, inclusive; `end = -1` reads to the end of the file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view_range: Option<Vec<i64>>,
    },
    /// A new file (its directories are created with it); an existing file is not
    /// overwritten.
    Create {
        /// The file.
        path: String,
        /// Its content.
        file_text: String,
    },
    /// Replaces the one occurrence of `old_str` with `new_str`.
    StrReplace {
        /// The file.
        path: String,
        /// The text to replace; it must occur exactly once.
        old_str: String,
        /// What replaces it.
        new_str: String,
    },
    /// Inserts `insert_text` after line `insert_line` (`0` = at the top).
    Insert {
        /// The file.
        path: String,
        /// The line after which the text goes, `0..=number of lines`.
        insert_line: i64,
        /// The text.
        insert_text: String,
    },
    /// Deletes a file, or a directory with everything in it.
    Delete {
        /// The file or directory.
        path: String,
    },
    /// Renames or moves a file or a directory.
    Rename {
        /// Where it is.
        old_path: String,
        /// Where it goes; must not exist.
        new_path: String,
    },
}

/// The command names, in the order the tool documents them.
pub const COMMANDS: [&str; 6] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename",
];

impl MemoryCommand {
    /// Reads a command from the `input` of a `tool_use` block. Unknown commands, missing
    /// or mistyped fields are an [`MemoryToolError::InvalidCommand`] or
    /// [`MemoryToolError::UnknownCommand`] that names the problem.
    pub fn from_input(input: &Value) -> Result<Self, MemoryToolError> {
        let name = match input.get("command") {
            None => {
                return Err(MemoryToolError::InvalidCommand {
                    command: None,
                    reason: "missing field `command`".into(),
                })
            }
            Some(Value::String(name)) => name.as_str(),
            Some(other) => {
                return Err(MemoryToolError::InvalidCommand {
                    command: None,
                    reason: format!("`command` must be a string, got {other}"),
                })
            }
        };
        if !COMMANDS.contains(&name) {
            return Err(MemoryToolError::UnknownCommand {
                name: name.chars().take(64).collect(),
            });
        }
        Self::deserialize(input).map_err(|e| MemoryToolError::InvalidCommand {
            command: Some(name.to_owned()),
            reason: e.to_string(),
        })
    }

    /// The command's name (`view`, `str_replace`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            MemoryCommand::View { .. } => "view",
            MemoryCommand::Create { .. } => "create",
            MemoryCommand::StrReplace { .. } => "str_replace",
            MemoryCommand::Insert { .. } => "insert",
            MemoryCommand::Delete { .. } => "delete",
            MemoryCommand::Rename { .. } => "rename",
        }
    }

    /// Whether the command changes the files.
    pub fn writes(&self) -> bool {
        !matches!(self, MemoryCommand::View { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_the_tool_input() {
        let inputs = [
            json!({"command": "view", "path": "/memories"}),
            json!({"command": "view", "path": "/memories/a.txt", "view_range": [1, 10]}),
            json!({"command": "create", "path": "/memories/a.txt", "file_text": "x\n"}),
            json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "x", "new_str": "y"}),
            json!({"command": "insert", "path": "/memories/a.txt", "insert_line": 2, "insert_text": "z\n"}),
            json!({"command": "delete", "path": "/memories/a.txt"}),
            json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/b.txt"}),
        ];
        for input in inputs {
            let command = MemoryCommand::from_input(&input).unwrap();
            assert_eq!(serde_json::to_value(&command).unwrap(), input);
        }
    }

    #[test]
    fn bad_inputs_name_the_problem() {
        let err = MemoryCommand::from_input(&json!({"path": "/memories"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid memory command: missing field `command`"
        );
        let err = MemoryCommand::from_input(&json!({"command": "chmod", "path": "/memories"}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unknown command: chmod. The memory tool's commands are view, create, str_replace, insert, delete and rename"
        );
        let err = MemoryCommand::from_input(&json!({"command": "create", "path": "/memories/a"}))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid create command: missing field `file_text`"
        );
        let err = MemoryCommand::from_input(
            &json!({"command": "insert", "path": "/memories/a", "insert_line": "two", "insert_text": ""}),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("Invalid insert command: invalid type"),
            "{err}"
        );
    }
}
