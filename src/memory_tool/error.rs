//! [`MemoryToolError`]: why a command was refused or failed, displayed as the string the
//! model reads.
//!
//! Where Anthropic's reference handler (`BetaLocalFilesystemMemoryTool` of the Python
//! SDK) has a message for a case, the message is the same, word for word; the cases it
//! does not cover have messages of the same style.

use agentmemory_core::error::MemoryError;

use super::path::PathError;

/// Why a memory-tool command did not run. `Display` is the message for the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryToolError {
    /// The path left `/memories` or is not a plain path.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The input is not a command: a field is missing or has the wrong type.
    #[error("Invalid {} command: {reason}", .command.as_deref().unwrap_or("memory"))]
    InvalidCommand {
        /// The command, when it was named.
        command: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// `command` names no command of the memory tool.
    #[error("Unknown command: {name}. The memory tool's commands are view, create, str_replace, insert, delete and rename")]
    UnknownCommand {
        /// The name sent.
        name: String,
    },
    /// No file or directory at the path (`view`, `str_replace`, `insert`).
    #[error("The path {path} does not exist. Please provide a valid path.")]
    NotFound {
        /// The path.
        path: String,
    },
    /// No file or directory at the path (`delete`, `rename`).
    #[error("The path {path} does not exist")]
    Missing {
        /// The path.
        path: String,
    },
    /// The file was deleted or moved by another writer between two reads.
    #[error("The file {path} no longer exists (may have been deleted or renamed concurrently).")]
    Vanished {
        /// The path.
        path: String,
    },
    /// `str_replace` or `insert` on a directory.
    #[error("The path {path} is not a file.")]
    NotAFile {
        /// The path.
        path: String,
    },
    /// `create` where a file exists.
    #[error("File {path} already exists")]
    AlreadyExists {
        /// The path.
        path: String,
    },
    /// `create` where a directory exists.
    #[error("Cannot create {path}: it is a directory")]
    IsADirectory {
        /// The path.
        path: String,
    },
    /// `create` or `rename` below a file.
    #[error("Cannot write {path}: {parent} is a file, not a directory")]
    ParentIsAFile {
        /// The path.
        path: String,
        /// The file in the way.
        parent: String,
    },
    /// `rename` onto something that exists.
    #[error("The destination {path} already exists")]
    DestinationExists {
        /// The destination.
        path: String,
    },
    /// `rename` of a directory into itself.
    #[error("Cannot move {from} into itself ({to})")]
    IntoItself {
        /// The directory.
        from: String,
        /// The destination inside it.
        to: String,
    },
    /// `delete` of `/memories`.
    #[error("Cannot delete the /memories directory itself")]
    DeleteRoot,
    /// `rename` of `/memories`.
    #[error("Cannot rename the /memories directory itself")]
    RenameRoot,
    /// `str_replace` whose `old_str` does not occur.
    #[error(
        "No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."
    )]
    NoMatch {
        /// The file.
        path: String,
        /// The text looked for.
        old_str: String,
    },
    /// `str_replace` whose `old_str` occurs more than once.
    #[error("No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {}. Please ensure it is unique", join(.lines))]
    NotUnique {
        /// The text looked for.
        old_str: String,
        /// The 1-based line of each occurrence.
        lines: Vec<usize>,
    },
    /// `str_replace` with an empty `old_str`.
    #[error("No replacement was performed, old_str is empty. Please give the exact text to replace in {path}.")]
    EmptyOldStr {
        /// The file.
        path: String,
    },
    /// `insert` outside the file.
    #[error(
        "Invalid `insert_line` parameter: {line}. It should be within the range [0, {lines}]."
    )]
    InsertLine {
        /// The line asked for.
        line: i64,
        /// The number of lines of the file.
        lines: usize,
    },
    /// `view` with a range that does not fit the file.
    #[error("Invalid `view_range` parameter: {range}. {reason}")]
    ViewRange {
        /// The range sent, as JSON.
        range: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file over the line limit of the reference handler.
    #[error("File {path} exceeds maximum line limit of 999,999 lines.")]
    TooManyLines {
        /// The file.
        path: String,
    },
    /// A file over the handler's size limit.
    #[error("File {path} would be {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size after the command.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The user id the handler was opened for is not usable.
    #[error("Invalid user id: {reason}")]
    InvalidUser {
        /// Why.
        reason: &'static str,
    },
    /// The stores failed (or hold a record this build cannot read).
    #[error("The memory store failed: {0}")]
    Store(#[from] MemoryError),
}

impl MemoryToolError {
    /// Whether the stores failed (rather than the command being refused): a server
    /// answers these with an error status instead of a tool result.
    pub fn is_store_failure(&self) -> bool {
        matches!(self, MemoryToolError::Store(_))
    }
}

fn join(lines: &[usize]) -> String {
    lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
