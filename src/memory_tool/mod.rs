//! A backend for Claude's memory tool (`memory_20250818`) over agentmem's stores.
//!
//! The memory tool is client-side: the model sends file commands (`view`, `create`,
//! `str_replace`, `insert`, `delete`, `rename`) on paths under `/memories`, and the
//! application runs them and answers with a string. [`MemoryTool`] is that handler:
//! [`MemoryTool::run`] takes a `tool_use` block's `input` and returns the
//! `tool_result` content (and whether it is an error); [`MemoryTool::execute`] takes a
//! typed [`MemoryCommand`] and returns `Result<String, MemoryToolError>`.
//!
//! - **Same strings as the reference.** Results and errors read as those of Anthropic's
//!   reference handler (the Python SDK's `BetaLocalFilesystemMemoryTool`): directory
//!   listings two levels deep with sizes, files with 1-based line numbers right-aligned
//!   in six columns, `No replacement was performed, ...`, `File ... already exists`.
//!   Cases the reference leaves to an exception have a message of the same style (see
//!   [`MemoryToolError`]).
//! - **Files are documents with history.** Each file is one document of a
//!   [`VectorStore`](crate::VectorStore), so the current files are searchable like any
//!   document ([`MemoryTool::search`], hybrid when the store embeds); each edit
//!   (`create`, `str_replace`, `insert`, `rename`, `delete`) writes a new version that
//!   supersedes the one before, and every version stays in a
//!   [`KvStore`](crate::KvStore) with its time ([`MemoryTool::history`]).
//! - **Paths stay in `/memories`.** [`MemoryPath`] refuses `..`, percent-encoding,
//!   absolute paths elsewhere, backslashes, look-alike characters, names a file system
//!   resolves elsewhere, control characters and overlong paths.
//! - **Users never meet.** A handler is for one user ([`MemoryFiles::for_user`]); every
//!   store namespace it touches is that user's.
//!
//! Directories exist through their files (`create` makes them, and `/memories` always
//! exists); deleting a directory's last file leaves no empty directory behind.
//!
//! Works on every store URL: in memory, SQLite, JSON files, Redis and PostgreSQL
//! ([`MemoryFiles::from_container`]).

mod command;
mod error;
mod files;
mod listing;
mod path;
mod records;
mod text;
mod tool;

pub use command::{MemoryCommand, COMMANDS};
pub use error::MemoryToolError;
pub use listing::format_size;
pub use path::{MemoryPath, PathError, MAX_DEPTH, MAX_NAME_BYTES, MAX_PATH_BYTES, ROOT};
pub use records::{FileChange, FileVersion};
pub use text::{LINE_NUMBER_WIDTH, MAX_LINES};
pub use tool::{FileHit, MemoryFiles, MemoryTool, ToolOutput, DEFAULT_MAX_FILE_BYTES};
