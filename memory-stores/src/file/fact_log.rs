//! A user's fact log: the upserts made since their facts file was last written, one line
//! each, so an upsert writes what it changed instead of every fact.
//!
//! `<dir>/facts/<user>.log` is a header line naming the generation of the facts file it
//! follows (the file's `log` field), then one line per upsert holding the facts it wrote:
//! each replaces the stored fact with its id, or is added last. The user's facts are the
//! file's, then every line of its log replayed in order.
//!
//! - An upsert returns once its line is flushed to disk (`fdatasync`), so a line cut short
//!   by a crash was never acknowledged: a last line without its newline is ignored, and cut
//!   off before the next append.
//! - A log of another generation than the file's (left when a crash came between the
//!   file's rewrite and the log's removal), or one whose header a crash cut short, is
//!   ignored, and replaced by the next append.
//! - Any other line that does not parse is a [`MemoryError::Corrupt`] naming the log and
//!   the line; a log written by a newer agentmem is [`MemoryError::UnsupportedVersion`].

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Seek, SeekFrom, Write};
use std::path::Path;

use agentmemory_core::{MemoryError, MemoryFact, Result};
use serde::{Deserialize, Serialize};

const FORMAT: &str = "agentmem.facts-log";
/// The log format version this build writes and reads.
const VERSION: u32 = 1;

#[derive(Serialize)]
struct Header<'a> {
    format: &'a str,
    version: u32,
    user: &'a str,
    /// The generation of the facts file this log follows.
    generation: &'a str,
}

#[derive(Deserialize)]
struct OwnedHeader {
    format: String,
    version: u32,
    generation: String,
}

#[derive(Serialize)]
struct Line<'a> {
    facts: &'a [&'a MemoryFact],
}

#[derive(Deserialize)]
struct OwnedLine {
    facts: Vec<MemoryFact>,
}

/// What a log holds for a facts file of a given generation.
#[derive(Debug, Default)]
pub(super) struct LogRead {
    /// Each upsert's facts, in order.
    pub(super) upserts: Vec<Vec<MemoryFact>>,
    /// Where the next line goes: the end of the last complete line.
    pub(super) end: u64,
    /// Whether the log follows the facts file, so lines are appended to it (otherwise the
    /// next append starts a new log over it).
    pub(super) live: bool,
}

fn io_error(path: &Path, operation: &str, e: std::io::Error) -> MemoryError {
    MemoryError::store(format!("file {}", path.display()), operation, e)
}

/// Reads the log at `path` as a follower of the facts file of `generation` (`None`: the
/// file has none, or there is no file, so no log follows it).
pub(super) fn read(path: &Path, generation: Option<&str>) -> Result<LogRead> {
    let Some(generation) = generation else {
        return Ok(LogRead::default());
    };
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(LogRead::default()),
        Err(e) => return Err(io_error(path, "read", e)),
    };
    let corrupt = |line: usize, e: String| {
        MemoryError::corrupt(
            format!("file {}", path.display()),
            format!("line {line}: {e}"),
        )
    };
    let mut lines = complete_lines(&bytes);
    let Some((header, mut end)) = lines.next() else {
        return Ok(LogRead::default()); // the header itself cut short
    };
    let header: OwnedHeader =
        serde_json::from_slice(header).map_err(|e| corrupt(1, e.to_string()))?;
    if header.format != FORMAT {
        return Err(corrupt(
            1,
            format!("expected a `{FORMAT}` log, found `{}`", header.format),
        ));
    }
    if header.version == 0 || header.version > VERSION {
        return Err(MemoryError::UnsupportedVersion {
            what: "agentmem fact log",
            found: header.version,
            supported: VERSION,
        });
    }
    if header.generation != generation {
        return Ok(LogRead::default());
    }
    let mut upserts = Vec::new();
    for (i, (line, line_end)) in lines.enumerate() {
        let line: OwnedLine =
            serde_json::from_slice(line).map_err(|e| corrupt(i + 2, e.to_string()))?;
        upserts.push(line.facts);
        end = line_end;
    }
    Ok(LogRead {
        upserts,
        end,
        live: true,
    })
}

/// Each complete line of `bytes` (newline excluded) and the offset just past its newline;
/// a last line without one is left out.
fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = (&[u8], u64)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        let len = bytes[start..].iter().position(|&b| b == b'\n')?;
        let line = &bytes[start..start + len];
        start += len + 1;
        Some((line, start as u64))
    })
}

/// One upsert's line (newline included).
pub(super) fn line(facts: &[&MemoryFact]) -> Result<Vec<u8>> {
    let mut out = serde_json::to_vec(&Line { facts })
        .map_err(|e| MemoryError::invalid("fact", format!("not serialisable: {e}")))?;
    out.push(b'\n');
    Ok(out)
}

/// The header line (newline included) of a log of `user` following the facts file of
/// `generation`.
pub(super) fn header(user: &str, generation: &str) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(&Header {
        format: FORMAT,
        version: VERSION,
        user,
        generation,
    })
    .map_err(|e| MemoryError::invalid("fact log header", e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Appends `line` to the log at `path` and flushes it to disk; the log's length after.
///
/// When `live`, the line goes at `end` (whatever a crash left past it is cut off first);
/// otherwise a new log of `generation` replaces whatever is at `path`.
pub(super) fn append(
    path: &Path,
    user: &str,
    generation: &str,
    live: bool,
    end: u64,
    line: &[u8],
) -> Result<u64> {
    if live {
        let mut file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_error(path, "open", e))?;
        let len = file
            .metadata()
            .map_err(|e| io_error(path, "read the metadata", e))?
            .len();
        if len != end {
            file.set_len(end)
                .map_err(|e| io_error(path, "cut off a torn line", e))?;
        }
        file.seek(SeekFrom::Start(end))
            .and_then(|_| file.write_all(line))
            .map_err(|e| io_error(path, "append", e))?;
        file.sync_data().map_err(|e| io_error(path, "sync", e))?;
        return Ok(end + line.len() as u64);
    }
    let mut bytes = header(user, generation)?;
    bytes.extend_from_slice(line);
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| io_error(path, "create", e))?;
    file.write_all(&bytes)
        .map_err(|e| io_error(path, "write", e))?;
    file.sync_all().map_err(|e| io_error(path, "sync", e))?;
    if let Some(dir) = path.parent() {
        super::atomic::sync_dir(dir)?;
    }
    Ok(bytes.len() as u64)
}

/// Removes the log at `path` if there is one. Best effort: a log left behind follows an
/// older generation of the facts file, so it is ignored.
pub(super) fn discard(path: &Path) {
    let _ = fs::remove_file(path);
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentmemory_core::FactCandidate;

    fn fact(text: &str) -> MemoryFact {
        MemoryFact::from_candidate("u", FactCandidate::new(text, 0.7), chrono::Utc::now())
    }

    #[test]
    fn lines_are_replayed_and_a_torn_last_line_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.log");
        let (a, b) = (fact("likes tea"), fact("likes jazz"));
        let end = append(&path, "u", "g1", false, 0, &line(&[&a]).unwrap()).unwrap();
        let end = append(&path, "u", "g1", true, end, &line(&[&a, &b]).unwrap()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), end);
        let read_back = read(&path, Some("g1")).unwrap();
        assert!(read_back.live);
        assert_eq!(read_back.end, end);
        let texts: Vec<Vec<&str>> = read_back
            .upserts
            .iter()
            .map(|u| u.iter().map(|f| f.text.as_str()).collect())
            .collect();
        assert_eq!(texts, [vec!["likes tea"], vec!["likes tea", "likes jazz"]]);

        // A crash in the middle of an append.
        let mut torn = fs::read(&path).unwrap();
        torn.extend_from_slice(br#"{"facts":[{"id":"#);
        fs::write(&path, &torn).unwrap();
        let read_back = read(&path, Some("g1")).unwrap();
        assert_eq!((read_back.upserts.len(), read_back.end), (2, end));
        let after = append(&path, "u", "g1", true, end, &line(&[&b]).unwrap()).unwrap();
        assert_eq!(read(&path, Some("g1")).unwrap().upserts.len(), 3);
        assert_eq!(fs::metadata(&path).unwrap().len(), after);
    }

    #[test]
    fn another_generation_or_a_torn_header_is_ignored_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.log");
        let a = fact("likes tea");
        append(&path, "u", "old", false, 0, &line(&[&a]).unwrap()).unwrap();
        let stale = read(&path, Some("new")).unwrap();
        assert!(!stale.live && stale.upserts.is_empty());
        assert!(!read(&path, None).unwrap().live, "no file, no log");
        append(&path, "u", "new", false, 0, &line(&[&a]).unwrap()).unwrap();
        assert_eq!(read(&path, Some("new")).unwrap().upserts.len(), 1);
        fs::write(&path, br#"{"format":"agentmem.facts-log","vers"#).unwrap();
        assert!(!read(&path, Some("new")).unwrap().live);
    }

    #[test]
    fn a_damaged_line_is_corrupt_and_a_newer_log_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.log");
        let a = fact("likes tea");
        let end = append(&path, "u", "g", false, 0, &line(&[&a]).unwrap()).unwrap();
        append(&path, "u", "g", true, end, &line(&[&a]).unwrap()).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        let second = end as usize + 3;
        bytes[second] = b'#';
        fs::write(&path, &bytes).unwrap();
        match read(&path, Some("g")) {
            Err(MemoryError::Corrupt { .. }) => {}
            other => panic!("expected Corrupt, got {other:?}"),
        }
        let err = read(&path, Some("g")).unwrap_err().chain().to_string();
        assert!(err.contains("u.log") && err.contains("line 3"), "{err}");
        fs::write(
            &path,
            b"{\"format\":\"agentmem.facts-log\",\"version\":7,\"user\":\"u\",\"generation\":\"g\"}\n",
        )
        .unwrap();
        assert!(matches!(
            read(&path, Some("g")),
            Err(MemoryError::UnsupportedVersion { found: 7, .. })
        ));
    }
}
