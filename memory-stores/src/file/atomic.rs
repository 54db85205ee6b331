//! Crash-safe file I/O: read a versioned JSON document, replace a file atomically.
//!
//! A write goes to a temporary file in the same directory, which is flushed to disk
//! (`fsync`), renamed over the target, and the directory is flushed too, so after a
//! crash the file holds either the old or the new document, never a mix.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::Path;

use agentmemory_core::{MemoryError, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The file format version this build writes.
pub(crate) const FORMAT_VERSION: u32 = 1;

#[derive(Deserialize)]
struct Header {
    format: String,
    version: u32,
}

fn io_error(path: &Path, operation: &str, e: std::io::Error) -> MemoryError {
    MemoryError::store(format!("file {}", path.display()), operation, e)
}

/// Reads the JSON document at `path` (`None` when there is no file). `format` is the
/// expected value of its `format` field; a file that does not parse, is of another
/// format or of a newer version is an error naming the file.
pub(crate) fn read_doc<T: DeserializeOwned>(path: &Path, format: &str) -> Result<Option<T>> {
    read_doc_up_to(path, format, FORMAT_VERSION)
}

/// [`read_doc`] for a format whose newest version is `newest` rather than
/// [`FORMAT_VERSION`].
pub(crate) fn read_doc_up_to<T: DeserializeOwned>(
    path: &Path,
    format: &str,
    newest: u32,
) -> Result<Option<T>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, "read", e)),
    };
    let corrupt = |e: String| MemoryError::corrupt(format!("file {}", path.display()), e);
    let header: Header = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    if header.format != format {
        return Err(corrupt(format!(
            "expected a `{format}` document, found `{}`",
            header.format
        )));
    }
    if header.version == 0 || header.version > newest {
        return Err(MemoryError::UnsupportedVersion {
            what: "agentmem data file",
            found: header.version,
            supported: newest,
        });
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| corrupt(e.to_string()))
}

/// Replaces the file at `path` with `doc` as JSON, atomically and durably.
pub(crate) fn write_doc<T: Serialize>(path: &Path, doc: &T) -> Result<()> {
    let bytes = serde_json::to_vec(doc)
        .map_err(|e| MemoryError::invalid("record", format!("not serialisable: {e}")))?;
    let dir = path
        .parent()
        .ok_or_else(|| MemoryError::invalid("path", format!("{} has no parent", path.display())))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", ulid::Ulid::new()));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| io_error(&tmp, "create a temporary file", e))?;
        file.write_all(&bytes)
            .map_err(|e| io_error(&tmp, "write", e))?;
        file.sync_all().map_err(|e| io_error(&tmp, "sync", e))?;
        drop(file);
        fs::rename(&tmp, path).map_err(|e| io_error(path, "replace", e))?;
        sync_dir(dir)
    })();
    if result.is_err() {
        // Best effort: the temp file is garbage either way and is ignored by readers.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the file at `path`; whether it existed.
pub(crate) fn remove(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => {
            if let Some(dir) = path.parent() {
                sync_dir(dir)?;
            }
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error(path, "remove", e)),
    }
}

/// Flushes a directory's entries (renames, creations, removals) to disk.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error(dir, "sync the directory", e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
