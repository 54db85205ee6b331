//! What the memory tool keeps in the stores, and where.
//!
//! Per user, three places (the user id is part of every name, so users never meet):
//!
//! | store | namespace | key | value |
//! |---|---|---|---|
//! | [`VectorStore`](crate::VectorStore) | `agentmem.memory_tool␟USER` | file id (a ULID) | the current version of each file, searchable; metadata `path`, `version`, `updated_at` |
//! | [`KvStore`](crate::KvStore) | `agentmem.memory_tool.paths␟USER` | the path | [`PathEntry`]: the file there now, the files that were there before |
//! | [`KvStore`](crate::KvStore) | `agentmem.memory_tool.history␟USER␟FILE` | `VERSION.ULID` | one [`FileVersion`] each: every version the file ever had, with its time |
//!
//! A file keeps its id when renamed, so its versions form one supersession chain from
//! `create` to `delete`, wherever it moved. Records carry a format version (`v`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use agentmemory_core::error::{MemoryError, Result};

/// The format of the stored records.
pub(crate) const FORMAT: u32 = 1;

/// Separates the parts of a namespace; refused in user ids (a control character).
const SEP: char = '\u{1f}';

/// The vector-store namespace of `user`'s current files.
pub(crate) fn documents_namespace(user: &str) -> String {
    format!("agentmem.memory_tool{SEP}{user}")
}

/// The key/value namespace of `user`'s path index.
pub(crate) fn paths_namespace(user: &str) -> String {
    format!("agentmem.memory_tool.paths{SEP}{user}")
}

/// The key/value namespace of the versions of `user`'s file `file_id`.
pub(crate) fn history_namespace(user: &str, file_id: &str) -> String {
    format!("agentmem.memory_tool.history{SEP}{user}{SEP}{file_id}")
}

/// The key of a version: the zero-padded number (so keys sort by version), then a ULID
/// (so two writers that raced to the same number both keep theirs).
pub(crate) fn version_key(version: u64) -> String {
    format!("{version:012}.{}", ulid::Ulid::new())
}

/// The file at a path now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LiveFile {
    /// The file's id: its document id, and the name of its history.
    pub(crate) id: String,
    /// Its current version, from 1.
    pub(crate) version: u64,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// When the current version was written.
    pub(crate) updated_at: DateTime<Utc>,
}

/// What the index keeps for one path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PathEntry {
    /// The record format.
    #[serde(rename = "v")]
    pub(crate) format: u32,
    /// The file at this path now (`None` once deleted or moved away).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<LiveFile>,
    /// The ids of the files that were at this path before, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) former: Vec<String>,
}

impl PathEntry {
    /// Reads an entry written by this or an earlier build.
    pub(crate) fn from_value(key: &str, value: serde_json::Value) -> Result<Self> {
        let entry: PathEntry = serde_json::from_value(value)
            .map_err(|e| MemoryError::corrupt(format!("memory-tool path entry `{key}`"), e))?;
        check_format("memory-tool path entry", entry.format)?;
        Ok(entry)
    }

    /// Every file id this path has held, oldest first.
    pub(crate) fn file_ids(&self) -> impl Iterator<Item = &str> {
        self.former
            .iter()
            .map(String::as_str)
            .chain(self.file.as_ref().map(|f| f.id.as_str()))
    }

    /// The entry with its file gone (deleted or moved away), remembered as former.
    pub(crate) fn vacated(mut self) -> Self {
        if let Some(file) = self.file.take() {
            self.former.push(file.id);
        }
        self.format = FORMAT;
        self
    }
}

/// What a version of a file came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FileChange {
    /// `create`.
    Created,
    /// `str_replace`.
    Replaced,
    /// `insert`.
    Inserted,
    /// `rename` (of the file or of a directory above it).
    Renamed {
        /// The path it had before.
        from: String,
    },
    /// `delete` (of the file or of a directory above it): the version has no content.
    Deleted,
}

/// One version of a file, as its history keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileVersion {
    /// The file's id (the same across renames).
    pub file_id: String,
    /// The version number, from 1; each version supersedes the one before.
    pub version: u64,
    /// Where the file was.
    pub path: String,
    /// Its content; `None` for the version that deleted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// What made this version.
    pub change: FileChange,
    /// When.
    pub at: DateTime<Utc>,
}

impl FileVersion {
    /// The version this one superseded (`None` for the first).
    pub fn supersedes(&self) -> Option<u64> {
        self.version.checked_sub(1).filter(|&v| v > 0)
    }
}

/// A [`FileVersion`] as stored: with the record format.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StoredVersion {
    #[serde(rename = "v")]
    pub(crate) format: u32,
    #[serde(flatten)]
    pub(crate) version: FileVersion,
}

impl StoredVersion {
    /// Reads a version written by this or an earlier build.
    pub(crate) fn from_value(key: &str, value: serde_json::Value) -> Result<FileVersion> {
        let stored: StoredVersion = serde_json::from_value(value)
            .map_err(|e| MemoryError::corrupt(format!("memory-tool file version `{key}`"), e))?;
        check_format("memory-tool file version", stored.format)?;
        Ok(stored.version)
    }
}

fn check_format(what: &'static str, found: u32) -> Result<()> {
    if found > FORMAT {
        return Err(MemoryError::UnsupportedVersion {
            what,
            found,
            supported: FORMAT,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_read_back_and_refuse_newer_formats() {
        let version = FileVersion {
            file_id: "01J".into(),
            version: 2,
            path: "/memories/a".into(),
            content: Some("x".into()),
            change: FileChange::Renamed {
                from: "/memories/b".into(),
            },
            at: Utc::now(),
        };
        let stored = serde_json::to_value(StoredVersion {
            format: FORMAT,
            version: version.clone(),
        })
        .unwrap();
        assert_eq!(
            stored["change"],
            json!({"type": "renamed", "from": "/memories/b"})
        );
        assert_eq!(StoredVersion::from_value("k", stored).unwrap(), version);
        assert_eq!(version.supersedes(), Some(1));
        let newer = json!({"v": FORMAT + 1});
        assert!(matches!(
            PathEntry::from_value("k", newer),
            Err(MemoryError::UnsupportedVersion { .. })
        ));
    }

    #[test]
    fn version_keys_sort_by_number() {
        assert!(version_key(9) < version_key(10));
        assert_ne!(version_key(3), version_key(3));
    }
}
