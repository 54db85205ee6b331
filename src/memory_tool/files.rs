//! One user's files over the stores: the path index, the current documents and the
//! versions (see [`records`](super::records) for the layout).
//!
//! Every write records the new version in the file's history first, then the current
//! document, then the index, so a version that became current is always in the history.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Utc;

use agentmemory_core::error::MemoryError;
use agentmemory_core::kv::{KvStore, MemoryEntry, MemoryScope};
use agentmemory_core::vector::{Document, SearchQuery, VectorStore};

use super::error::MemoryToolError;
use super::path::MemoryPath;
use super::records::{
    documents_namespace, history_namespace, paths_namespace, version_key, FileChange, FileVersion,
    LiveFile, PathEntry, StoredVersion, FORMAT,
};

type Result<T> = std::result::Result<T, MemoryToolError>;

/// A user's files in the stores.
pub(crate) struct UserFiles<'a> {
    pub(crate) vectors: &'a Arc<dyn VectorStore>,
    pub(crate) kv: &'a Arc<dyn KvStore>,
    pub(crate) user: &'a str,
}

/// Every path of the index, with or without a file now.
pub(crate) struct Index {
    entries: BTreeMap<MemoryPath, PathEntry>,
}

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Directory,
    Nothing,
}

impl Index {
    /// The entry of `path`, when the index has one.
    pub(crate) fn entry(&self, path: &MemoryPath) -> Option<&PathEntry> {
        self.entries.get(path)
    }

    /// The file at `path` now.
    pub(crate) fn file(&self, path: &MemoryPath) -> Option<&LiveFile> {
        self.entry(path).and_then(|e| e.file.as_ref())
    }

    /// Every file strictly below `dir`, in path order.
    pub(crate) fn files_below<'s>(
        &'s self,
        dir: &'s MemoryPath,
    ) -> impl Iterator<Item = (&'s MemoryPath, &'s LiveFile)> + 's {
        let prefix = dir.child_prefix();
        self.entries
            .range(dir.first_below()..)
            .take_while(move |(p, _)| p.as_str().starts_with(&prefix))
            .filter_map(|(p, e)| e.file.as_ref().map(|f| (p, f)))
    }

    /// The file at `path` and every file below it, in path order, each with its entry:
    /// what `delete` and `rename` of `path` act on.
    pub(crate) fn files_within(&self, path: &MemoryPath) -> Vec<(MemoryPath, PathEntry, LiveFile)> {
        let at = self
            .entry(path)
            .and_then(|e| e.file.clone().map(|f| (path.clone(), e.clone(), f)));
        let below = self
            .files_below(path)
            .filter_map(|(p, f)| self.entry(p).map(|e| (p.clone(), e.clone(), f.clone())));
        at.into_iter().chain(below).collect()
    }

    /// Whether `path` is a file, a directory (the root, or a path with files below), or
    /// nothing.
    pub(crate) fn kind(&self, path: &MemoryPath) -> Kind {
        if self.file(path).is_some() {
            Kind::File
        } else if path.is_root() || self.files_below(path).next().is_some() {
            Kind::Directory
        } else {
            Kind::Nothing
        }
    }

    /// The nearest directory above `path` that is a file, if any.
    pub(crate) fn file_above(&self, path: &MemoryPath) -> Option<MemoryPath> {
        path.ancestors().find(|a| self.file(a).is_some())
    }
}

impl UserFiles<'_> {
    fn paths_ns(&self) -> String {
        paths_namespace(self.user)
    }

    /// The whole path index.
    pub(crate) async fn index(&self) -> Result<Index> {
        let mut entries = BTreeMap::new();
        for stored in self.kv.list(&self.paths_ns()).await? {
            let path = MemoryPath::from_stored(&stored.key).ok_or_else(|| {
                MemoryError::corrupt(
                    format!("memory-tool path index of `{}`", self.user),
                    format!("`{}` is not a memory path", stored.key),
                )
            })?;
            let entry = PathEntry::from_value(&stored.key, stored.content)?;
            entries.insert(path, entry);
        }
        Ok(Index { entries })
    }

    /// The index entry of one path.
    pub(crate) async fn entry(&self, path: &MemoryPath) -> Result<Option<PathEntry>> {
        match self.kv.get(&self.paths_ns(), path.as_str()).await? {
            Some(stored) => Ok(Some(PathEntry::from_value(&stored.key, stored.content)?)),
            None => Ok(None),
        }
    }

    async fn put_entry(&self, path: &MemoryPath, entry: &PathEntry) -> Result<()> {
        let value = serde_json::to_value(entry)
            .map_err(|e| MemoryError::corrupt("memory-tool path entry", e))?;
        self.kv
            .put(
                &self.paths_ns(),
                MemoryEntry::new(MemoryScope::LongTerm, path.as_str(), value),
            )
            .await?;
        Ok(())
    }

    /// The current content of the file `file` at `path`.
    pub(crate) async fn read(&self, path: &MemoryPath, file: &LiveFile) -> Result<String> {
        match self
            .vectors
            .get(&documents_namespace(self.user), &file.id)
            .await?
        {
            Some(doc) => Ok(doc.content),
            None => Err(MemoryToolError::Vanished {
                path: path.to_string(),
            }),
        }
    }

    /// Records a new version of file `id` (the next after `previous`): in its history,
    /// then as its current document (or, for a deletion, removes the document). Returns
    /// the file as the index should now hold it (`None` after a deletion).
    async fn commit(
        &self,
        id: &str,
        previous: u64,
        path: &MemoryPath,
        content: Option<String>,
        change: FileChange,
    ) -> Result<Option<LiveFile>> {
        let version = previous + 1;
        let at = Utc::now();
        let record = StoredVersion {
            format: FORMAT,
            version: FileVersion {
                file_id: id.to_owned(),
                version,
                path: path.to_string(),
                content,
                change,
                at,
            },
        };
        let value = serde_json::to_value(&record)
            .map_err(|e| MemoryError::corrupt("memory-tool file version", e))?;
        self.kv
            .put(
                &history_namespace(self.user, id),
                MemoryEntry::new(MemoryScope::LongTerm, version_key(version), value),
            )
            .await?;
        let docs = documents_namespace(self.user);
        match record.version.content {
            Some(content) => {
                let size = content.len() as u64;
                let doc = Document::new(content)
                    .with_id(id)
                    .with_metadata("path", path.as_str())
                    .with_metadata("version", version)
                    .with_metadata("updated_at", at.to_rfc3339());
                self.vectors.upsert(&docs, doc).await?;
                Ok(Some(LiveFile {
                    id: id.to_owned(),
                    version,
                    size,
                    updated_at: at,
                }))
            }
            None => {
                self.vectors.delete(&docs, &[id.to_owned()]).await?;
                Ok(None)
            }
        }
    }

    /// A new file at `path` (whose index entry, if any, holds no file).
    pub(crate) async fn create(
        &self,
        path: &MemoryPath,
        entry: Option<PathEntry>,
        content: String,
    ) -> Result<()> {
        let id = ulid::Ulid::new().to_string();
        let file = self
            .commit(&id, 0, path, Some(content), FileChange::Created)
            .await?;
        let mut entry = entry.unwrap_or_default();
        entry.format = FORMAT;
        entry.file = file;
        self.put_entry(path, &entry).await
    }

    /// A new version of the file at `path`.
    pub(crate) async fn update(
        &self,
        path: &MemoryPath,
        mut entry: PathEntry,
        file: &LiveFile,
        content: String,
        change: FileChange,
    ) -> Result<()> {
        entry.file = self
            .commit(&file.id, file.version, path, Some(content), change)
            .await?;
        entry.format = FORMAT;
        self.put_entry(path, &entry).await
    }

    /// Deletes the file at `path`: a last version without content, no current document,
    /// the path vacated.
    pub(crate) async fn delete(
        &self,
        path: &MemoryPath,
        entry: PathEntry,
        file: &LiveFile,
    ) -> Result<()> {
        self.commit(&file.id, file.version, path, None, FileChange::Deleted)
            .await?;
        self.put_entry(path, &entry.vacated()).await
    }

    /// Moves the file at `from` to `to` (whose entry, if any, holds no file), keeping its
    /// id and content.
    pub(crate) async fn rename(
        &self,
        from: &MemoryPath,
        from_entry: PathEntry,
        file: &LiveFile,
        to: &MemoryPath,
        to_entry: Option<PathEntry>,
    ) -> Result<()> {
        let content = self.read(from, file).await?;
        let moved = self
            .commit(
                &file.id,
                file.version,
                to,
                Some(content),
                FileChange::Renamed {
                    from: from.to_string(),
                },
            )
            .await?;
        let mut to_entry = to_entry.unwrap_or_default();
        to_entry.format = FORMAT;
        to_entry.file = moved;
        self.put_entry(to, &to_entry).await?;
        self.put_entry(from, &from_entry.vacated()).await
    }

    /// Every version of file `id`, oldest first.
    pub(crate) async fn versions(&self, id: &str) -> Result<Vec<FileVersion>> {
        let mut out = Vec::new();
        for stored in self.kv.list(&history_namespace(self.user, id)).await? {
            out.push(StoredVersion::from_value(&stored.key, stored.content)?);
        }
        Ok(out)
    }

    /// The current files that best match `query` (words, and meaning when the store
    /// embeds), best first: `(path, version, content, score)`.
    pub(crate) async fn search(
        &self,
        query: &str,
        k: usize,
    ) -> Result<Vec<(MemoryPath, u64, String, f32)>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        // A few more than asked: a document a crash left without its index entry is
        // skipped below.
        let hits = self
            .vectors
            .search(
                &documents_namespace(self.user),
                &SearchQuery::new(query, k + 4),
            )
            .await?;
        let mut out = Vec::with_capacity(k);
        for hit in hits {
            let Some(path) = hit
                .metadata
                .get("path")
                .and_then(|p| p.as_str())
                .and_then(MemoryPath::from_stored)
            else {
                continue;
            };
            let current = self.entry(&path).await?;
            if let Some(file) = current.and_then(|e| e.file).filter(|f| f.id == hit.id) {
                out.push((path, file.version, hit.content, hit.score));
                if out.len() == k {
                    break;
                }
            }
        }
        Ok(out)
    }
}
