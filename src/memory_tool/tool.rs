//! [`MemoryFiles`] (the stores, shared by every user) and [`MemoryTool`] (one user's
//! handler): the six commands over the stores.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use agentmemory_core::di::Container;
use agentmemory_core::kv::KvStore;
use agentmemory_core::vector::VectorStore;

use super::command::MemoryCommand;
use super::error::MemoryToolError;
use super::files::{Kind, UserFiles};
use super::listing;
use super::path::MemoryPath;
use super::records::{FileChange, FileVersion};
use super::text;

type Result<T> = std::result::Result<T, MemoryToolError>;

/// Default largest file, in bytes (1 MiB).
pub const DEFAULT_MAX_FILE_BYTES: usize = 1024 * 1024;
/// Longest user id accepted, in bytes.
const MAX_USER_BYTES: usize = 256;
/// Writers of different users rarely wait for each other: one lock per stripe.
const LOCK_STRIPES: usize = 64;

/// The memory tool's files over agentmem's stores, for every user: files are documents
/// of a [`VectorStore`] (searchable by words, and by meaning when the store embeds), the
/// path index and every version of every file are entries of a [`KvStore`].
///
/// Commands that write take a lock per user in this process; two processes writing the
/// same user's files at once may overwrite each other's current version (the history
/// keeps both).
#[derive(Clone)]
pub struct MemoryFiles {
    vectors: Arc<dyn VectorStore>,
    kv: Arc<dyn KvStore>,
    locks: Arc<[tokio::sync::Mutex<()>]>,
    max_file_bytes: usize,
}

impl std::fmt::Debug for MemoryFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryFiles")
            .field("max_file_bytes", &self.max_file_bytes)
            .finish_non_exhaustive()
    }
}

impl MemoryFiles {
    /// Files in `vectors` and `kv`.
    pub fn new(vectors: Arc<dyn VectorStore>, kv: Arc<dyn KvStore>) -> Self {
        Self {
            vectors,
            kv,
            locks: (0..LOCK_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }

    /// Files in the default vector and key/value stores of `container` (as a store URL
    /// opens them: in memory, SQLite, files, Redis, PostgreSQL).
    pub fn from_container(container: &Container) -> crate::Result<Self> {
        Ok(Self::new(
            container.resolve::<dyn VectorStore>(None)?,
            container.resolve::<dyn KvStore>(None)?,
        ))
    }

    /// Refuses files larger than `bytes` (default [`DEFAULT_MAX_FILE_BYTES`]).
    pub fn max_file_bytes(mut self, bytes: usize) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// The handler for `user`'s files. The id must be 1 to 256 bytes without control
    /// characters.
    pub fn for_user(&self, user: &str) -> Result<MemoryTool> {
        let reason = if user.is_empty() {
            Some("it is empty")
        } else if user.len() > MAX_USER_BYTES {
            Some("it is longer than 256 bytes")
        } else if user.chars().any(char::is_control) {
            Some("it contains control characters")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(MemoryToolError::InvalidUser { reason }),
            None => Ok(MemoryTool {
                files: self.clone(),
                user: user.into(),
            }),
        }
    }

    fn lock_of(&self, user: &str) -> &tokio::sync::Mutex<()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        user.hash(&mut hasher);
        &self.locks[(hasher.finish() % self.locks.len() as u64) as usize]
    }
}

/// What a command answers, as a `tool_result` block carries it: the text for the model,
/// and whether it reports an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The result or the error message.
    pub content: String,
    /// Whether the command failed.
    pub is_error: bool,
}

/// A file found by [`MemoryTool::search`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileHit {
    /// Where the file is.
    pub path: String,
    /// Its current version.
    pub version: u64,
    /// Its content.
    pub content: String,
    /// How well it matches; higher is better.
    pub score: f32,
}

/// One user's handler for Claude's memory tool (`memory_20250818`): a command in, a
/// string out; the files live in agentmem's stores, every edit keeps the version before
/// it.
///
/// ```
/// # tokio_test::block_on(async {
/// use std::sync::Arc;
/// use agentmemory::memory_tool::MemoryFiles;
/// use agentmemory_core::{InMemoryKvStore, InMemoryVectorStore};
/// use serde_json::json;
///
/// let files = MemoryFiles::new(Arc::new(InMemoryVectorStore::new()), Arc::new(InMemoryKvStore::new()));
/// let tool = files.for_user("alice").unwrap();
/// let out = tool.run(&json!({"command": "create", "path": "/memories/prefs.md", "file_text": "likes tea\n"})).await;
/// assert_eq!(out.content, "File created successfully at: /memories/prefs.md");
/// let out = tool.run(&json!({"command": "view", "path": "/memories/../etc/passwd"})).await;
/// assert!(out.is_error);
/// assert_eq!(out.content, "Path /memories/../etc/passwd would escape /memories directory");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct MemoryTool {
    files: MemoryFiles,
    user: Arc<str>,
}

impl MemoryTool {
    /// The tool definition to send in a request's `tools`: `{"type": "memory_20250818",
    /// "name": "memory"}`.
    pub fn definition() -> Value {
        json!({"type": "memory_20250818", "name": "memory"})
    }

    /// The user whose files these are.
    pub fn user(&self) -> &str {
        &self.user
    }

    fn store(&self) -> UserFiles<'_> {
        UserFiles {
            vectors: &self.files.vectors,
            kv: &self.files.kv,
            user: &self.user,
        }
    }

    /// Runs the `input` of a `tool_use` block: the result, or the error message with
    /// `is_error` set. Store failures are logged and reported to the model the same way.
    pub async fn run(&self, input: &Value) -> ToolOutput {
        let outcome = match MemoryCommand::from_input(input) {
            Ok(command) => self.execute(&command).await,
            Err(e) => Err(e),
        };
        match outcome {
            Ok(content) => ToolOutput {
                content,
                is_error: false,
            },
            Err(error) => {
                if error.is_store_failure() {
                    tracing::error!(%error, user = %self.user, "memory tool: the store failed");
                }
                ToolOutput {
                    content: error.to_string(),
                    is_error: true,
                }
            }
        }
    }

    /// Runs one command.
    pub async fn execute(&self, command: &MemoryCommand) -> Result<String> {
        match command {
            MemoryCommand::View { path, view_range } => {
                self.view(path, view_range.as_deref()).await
            }
            MemoryCommand::Create { path, file_text } => self.create(path, file_text).await,
            MemoryCommand::StrReplace {
                path,
                old_str,
                new_str,
            } => self.str_replace(path, old_str, new_str).await,
            MemoryCommand::Insert {
                path,
                insert_line,
                insert_text,
            } => self.insert(path, *insert_line, insert_text).await,
            MemoryCommand::Delete { path } => self.delete(path).await,
            MemoryCommand::Rename { old_path, new_path } => self.rename(old_path, new_path).await,
        }
    }

    async fn view(&self, raw: &str, range: Option<&[i64]>) -> Result<String> {
        let path = MemoryPath::parse(raw)?;
        let store = self.store();
        if let Some(file) = store.entry(&path).await?.and_then(|e| e.file) {
            let content = store.read(&path, &file).await?;
            return text::view(&path, &content, range);
        }
        let index = store.index().await?;
        match index.kind(&path) {
            Kind::Directory => Ok(listing::render(
                &path,
                index.files_below(&path).map(|(p, f)| (p, f.size)),
            )),
            Kind::File => {
                // written between the two reads
                let file = index
                    .file(&path)
                    .cloned()
                    .ok_or(MemoryToolError::Vanished {
                        path: path.to_string(),
                    })?;
                text::view(&path, &store.read(&path, &file).await?, range)
            }
            Kind::Nothing => Err(MemoryToolError::NotFound {
                path: path.to_string(),
            }),
        }
    }

    fn check_size(&self, path: &MemoryPath, size: usize) -> Result<()> {
        if size > self.files.max_file_bytes {
            return Err(MemoryToolError::TooLarge {
                path: path.to_string(),
                size,
                limit: self.files.max_file_bytes,
            });
        }
        Ok(())
    }

    async fn create(&self, raw: &str, file_text: &str) -> Result<String> {
        let path = MemoryPath::parse(raw)?;
        self.check_size(&path, file_text.len())?;
        let _writing = self.files.lock_of(&self.user).lock().await;
        let store = self.store();
        let index = store.index().await?;
        match index.kind(&path) {
            Kind::File => {
                return Err(MemoryToolError::AlreadyExists {
                    path: path.to_string(),
                })
            }
            Kind::Directory => {
                return Err(MemoryToolError::IsADirectory {
                    path: path.to_string(),
                })
            }
            Kind::Nothing => {}
        }
        if let Some(parent) = index.file_above(&path) {
            return Err(MemoryToolError::ParentIsAFile {
                path: path.to_string(),
                parent: parent.to_string(),
            });
        }
        store
            .create(&path, index.entry(&path).cloned(), file_text.to_owned())
            .await?;
        Ok(format!("File created successfully at: {path}"))
    }

    /// The file at `path`, for `str_replace` and `insert`.
    async fn existing_file(
        &self,
        path: &MemoryPath,
    ) -> Result<(super::records::PathEntry, super::records::LiveFile)> {
        let store = self.store();
        if let Some(entry) = store.entry(path).await? {
            if let Some(file) = entry.file.clone() {
                return Ok((entry, file));
            }
        }
        if store.index().await?.kind(path) == Kind::Directory {
            Err(MemoryToolError::NotAFile {
                path: path.to_string(),
            })
        } else {
            Err(MemoryToolError::NotFound {
                path: path.to_string(),
            })
        }
    }

    async fn str_replace(&self, raw: &str, old_str: &str, new_str: &str) -> Result<String> {
        let path = MemoryPath::parse(raw)?;
        let _writing = self.files.lock_of(&self.user).lock().await;
        let (entry, file) = self.existing_file(&path).await?;
        let store = self.store();
        let content = store.read(&path, &file).await?;
        let edit = text::str_replace(&path, &content, old_str, new_str)?;
        self.check_size(&path, edit.content.len())?;
        store
            .update(&path, entry, &file, edit.content, FileChange::Replaced)
            .await?;
        Ok(edit.message)
    }

    async fn insert(&self, raw: &str, line: i64, insert_text: &str) -> Result<String> {
        let path = MemoryPath::parse(raw)?;
        let _writing = self.files.lock_of(&self.user).lock().await;
        let (entry, file) = self.existing_file(&path).await?;
        let store = self.store();
        let content = store.read(&path, &file).await?;
        let edit = text::insert(&path, &content, line, insert_text)?;
        self.check_size(&path, edit.content.len())?;
        store
            .update(&path, entry, &file, edit.content, FileChange::Inserted)
            .await?;
        Ok(edit.message)
    }

    async fn delete(&self, raw: &str) -> Result<String> {
        let path = MemoryPath::parse(raw)?;
        if path.is_root() {
            return Err(MemoryToolError::DeleteRoot);
        }
        let _writing = self.files.lock_of(&self.user).lock().await;
        let store = self.store();
        let index = store.index().await?;
        if index.kind(&path) == Kind::Nothing {
            return Err(MemoryToolError::Missing {
                path: path.to_string(),
            });
        }
        for (p, entry, file) in index.files_within(&path) {
            store.delete(&p, entry, &file).await?;
        }
        Ok(format!("Successfully deleted {path}"))
    }

    async fn rename(&self, old_raw: &str, new_raw: &str) -> Result<String> {
        let from = MemoryPath::parse(old_raw)?;
        let to = MemoryPath::parse(new_raw)?;
        if from.is_root() {
            return Err(MemoryToolError::RenameRoot);
        }
        let _writing = self.files.lock_of(&self.user).lock().await;
        let store = self.store();
        let index = store.index().await?;
        let kind = index.kind(&from);
        if kind == Kind::Nothing {
            return Err(MemoryToolError::Missing {
                path: from.to_string(),
            });
        }
        if index.kind(&to) != Kind::Nothing {
            return Err(MemoryToolError::DestinationExists {
                path: to.to_string(),
            });
        }
        if kind == Kind::Directory && from.contains(&to) {
            return Err(MemoryToolError::IntoItself {
                from: from.to_string(),
                to: to.to_string(),
            });
        }
        if let Some(parent) = index.file_above(&to) {
            return Err(MemoryToolError::ParentIsAFile {
                path: to.to_string(),
                parent: parent.to_string(),
            });
        }
        let mut moves = Vec::new();
        for (old, entry, file) in index.files_within(&from) {
            // checked again: a file deep below may not fit the limits at its new place
            let new = MemoryPath::parse(old.moved(&from, &to).as_str())?;
            moves.push((old, entry, file, new));
        }
        for (old, entry, file, new) in moves {
            store
                .rename(&old, entry, &file, &new, index.entry(&new).cloned())
                .await?;
        }
        Ok(format!("Successfully renamed {from} to {to}"))
    }

    /// Every version of every file that has been at `path` (deleted or moved away since,
    /// or there now), oldest file first, each file's versions in order: each version
    /// supersedes the one before it and keeps its content and time.
    pub async fn history(&self, path: &str) -> Result<Vec<FileVersion>> {
        let path = MemoryPath::parse(path)?;
        let store = self.store();
        let entry = store
            .entry(&path)
            .await?
            .ok_or_else(|| MemoryToolError::Missing {
                path: path.to_string(),
            })?;
        let mut out = Vec::new();
        for id in entry.file_ids() {
            out.extend(store.versions(id).await?);
        }
        Ok(out)
    }

    /// The user's current files that best match `query`, best first: by words, and by
    /// meaning too when the vector store embeds (hybrid search).
    pub async fn search(&self, query: &str, k: usize) -> Result<Vec<FileHit>> {
        Ok(self
            .store()
            .search(query, k)
            .await?
            .into_iter()
            .map(|(path, version, content, score)| FileHit {
                path: path.to_string(),
                version,
                content,
                score,
            })
            .collect())
    }

    /// Deletes every file of the user (their histories stay); how many there were.
    pub async fn clear(&self) -> Result<usize> {
        let _writing = self.files.lock_of(&self.user).lock().await;
        let store = self.store();
        let index = store.index().await?;
        let files = index.files_within(&MemoryPath::root());
        for (path, entry, file) in &files {
            store.delete(path, entry.clone(), file).await?;
        }
        Ok(files.len())
    }
}
