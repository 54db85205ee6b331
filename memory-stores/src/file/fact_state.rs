//! A user's facts on disk and in memory.
//!
//! On disk: the facts file (`<user>.json`, every fact, history included, oldest first,
//! rewritten atomically) and its log (`<user>.log`, the upserts since, see `fact_log`).
//! In memory: the user's current facts indexed ([`RankedFacts`]) with what both files
//! looked like when they were read or last written (length, modification time, inode). An
//! upsert reconciles against the kept facts and appends one line to the log; a search
//! ranks them; neither reads the files while they still look the same (two `stat`s), so
//! what another store opened on the directory wrote is read again, never missed.
//!
//! The log is folded into the file (the file rewritten with every fact, under a new
//! generation, and the log removed) once it would outgrow both the file and the store's
//! log limit, and on a user's first write: each rewrite costs a read and a write of every
//! fact, and there is at most one per the file's size in appended bytes.

use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::lru::Lru;
use agentmemory_core::store_support::RankedFacts;
use agentmemory_core::{MemoryError, MemoryFact, Result};
use serde::{Deserialize, Serialize};

use super::atomic::{read_doc_up_to, remove, write_doc};
use super::fact_log;

const FORMAT: &str = "agentmem.facts";
/// The facts file version this build writes: 2 names the generation its log follows
/// (`log`); version 1 files (no log) are read as they are.
const FILE_VERSION: u32 = 2;

/// The document in a user's facts file.
#[derive(Serialize, Deserialize)]
pub(super) struct FactsFile {
    format: String,
    version: u32,
    user: String,
    /// Every fact of the user, history included, oldest first.
    pub(super) facts: Vec<MemoryFact>,
    /// This file's generation, named by the log that follows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log: Option<String>,
}

impl FactsFile {
    fn new(user: &str) -> Self {
        Self {
            format: FORMAT.to_owned(),
            version: FILE_VERSION,
            user: user.to_owned(),
            facts: Vec::new(),
            log: None,
        }
    }
}

/// The two files of a user.
#[derive(Clone, Debug)]
pub(super) struct Paths {
    pub(super) file: PathBuf,
    log: PathBuf,
}

impl Paths {
    /// The files of the user whose facts file is `file` (`<name>.json`; the log is
    /// `<name>.log`: encoded names hold no `.`).
    pub(super) fn new(file: PathBuf) -> Self {
        let log = file.with_extension("log");
        Self { file, log }
    }
}

/// What a file looked like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl FileId {
    fn of(path: &Path) -> Result<Option<Self>> {
        match fs::metadata(path) {
            Ok(m) => Ok(Some(Self {
                len: m.len(),
                modified: m.modified().ok(),
                inode: inode(&m),
            })),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(MemoryError::store(
                format!("file {}", path.display()),
                "read the metadata",
                e,
            )),
        }
    }
}

#[cfg(unix)]
fn inode(m: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(m)
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}

/// What a user's two files looked like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    file: Option<FileId>,
    log: Option<FileId>,
}

impl Stamp {
    fn of(paths: &Paths) -> Result<Self> {
        Ok(Self {
            file: FileId::of(&paths.file)?,
            log: FileId::of(&paths.log)?,
        })
    }
}

/// Every fact of a user as read (the file, then its log replayed), and where the log
/// stands.
pub(super) struct Loaded {
    pub(super) file: FactsFile,
    log_end: u64,
    log_live: bool,
    stamp: Stamp,
}

/// Reads the user's facts: the file, then its log.
pub(super) fn load(paths: &Paths, user: &str) -> Result<Loaded> {
    // Looked at before reading: anything written after makes the next look differ.
    let stamp = Stamp::of(paths)?;
    let mut file = read_doc_up_to::<FactsFile>(&paths.file, FORMAT, FILE_VERSION)?
        .unwrap_or_else(|| FactsFile::new(user));
    let log = fact_log::read(&paths.log, file.log.as_deref())?;
    replay(&mut file.facts, log.upserts.into_iter().flatten());
    Ok(Loaded {
        file,
        log_end: log.end,
        log_live: log.live,
        stamp,
    })
}

/// Each of `written` replaces the fact with its id, or goes last.
fn replay(facts: &mut Vec<MemoryFact>, written: impl IntoIterator<Item = MemoryFact>) {
    let mut written = written.into_iter().peekable();
    if written.peek().is_none() {
        return;
    }
    let mut at: HashMap<String, usize> = facts
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id.clone(), i))
        .collect();
    for fact in written {
        match at.get(&fact.id) {
            Some(&i) => facts[i] = fact,
            None => {
                at.insert(fact.id.clone(), facts.len());
                facts.push(fact);
            }
        }
    }
}

/// Writes `file` as the user's facts file, of a new generation, and removes the log it
/// replaces (which no longer follows it anyway); removes both when no fact is left.
pub(super) fn rewrite(paths: &Paths, file: &mut FactsFile) -> Result<()> {
    if file.facts.is_empty() {
        remove(&paths.file)?;
    } else {
        file.version = FILE_VERSION;
        file.log = Some(ulid::Ulid::new().to_string());
        write_doc(&paths.file, file)?;
    }
    fact_log::discard(&paths.log);
    Ok(())
}

/// A user's current facts, indexed, and where their files stood when they were kept.
pub(super) struct Kept {
    pub(super) ranked: RankedFacts,
    stamp: Stamp,
    /// The facts file's generation (`None`: no file, or one written before logs).
    generation: Option<String>,
    log_end: u64,
    log_live: bool,
}

impl From<Loaded> for Kept {
    fn from(loaded: Loaded) -> Self {
        Self {
            generation: loaded.file.log.clone(),
            ranked: RankedFacts::new(loaded.file.facts),
            stamp: loaded.stamp,
            log_end: loaded.log_end,
            log_live: loaded.log_live,
        }
    }
}

impl Kept {
    /// Stores `facts` (the rows of one upsert planned against these facts, before they
    /// are applied here) durably: one line appended to the log, or the log folded into a
    /// rewritten file when there is no file of a generation yet or the log would outgrow
    /// both the file and `limit` bytes.
    pub(super) fn write(
        &mut self,
        paths: &Paths,
        user: &str,
        facts: &[&MemoryFact],
        limit: u64,
    ) -> Result<()> {
        let line = fact_log::line(facts)?;
        let file_len = self.stamp.file.map_or(0, |f| f.len);
        let fits = |generation: &str| -> Result<bool> {
            let start = if self.log_live {
                self.log_end
            } else {
                fact_log::header(user, generation)?.len() as u64
            };
            Ok(start + line.len() as u64 <= file_len.max(limit))
        };
        match &self.generation {
            Some(generation) if fits(generation)? => {
                self.log_end = fact_log::append(
                    &paths.log,
                    user,
                    generation,
                    self.log_live,
                    self.log_end,
                    &line,
                )?;
                self.log_live = true;
            }
            _ => {
                let mut all = load(paths, user)?.file;
                replay(&mut all.facts, facts.iter().map(|f| (*f).clone()));
                rewrite(paths, &mut all)?;
                self.generation = all.log;
                self.log_end = 0;
                self.log_live = false;
            }
        }
        self.stamp = Stamp::of(paths)?;
        Ok(())
    }
}

/// The kept facts of recently used users, bounded by bytes
/// ([`CacheBudget::facts`](crate::CacheBudget), least recently used evicted first).
#[derive(Debug)]
pub(super) struct KeptFacts {
    users: Lru<Kept>,
}

impl Default for KeptFacts {
    fn default() -> Self {
        Self {
            users: Lru::new(crate::CacheBudget::from_env().facts),
        }
    }
}

impl KeptFacts {
    /// The user's kept facts, taken out, if their files still look as they did; read
    /// again otherwise. Called holding the user's file lock.
    pub(super) fn take_or_load(&self, paths: &Paths, user: &str) -> Result<Kept> {
        let stamp = Stamp::of(paths)?;
        match self.users.remove(user) {
            Some(kept) if kept.stamp == stamp => Ok(kept),
            _ => Ok(load(paths, user)?.into()),
        }
    }

    /// Keeps `kept` for the user.
    pub(super) fn put(&self, user: &str, kept: Kept) {
        let bytes = kept.ranked.heap_bytes()
            + kept.generation.as_ref().map_or(0, String::capacity)
            + std::mem::size_of::<Kept>();
        self.users.insert(user, kept, bytes);
    }

    /// Drops what is kept for the user (their files are being rewritten).
    pub(super) fn forget(&self, user: &str) {
        self.users.remove(user);
    }

    /// Changes the budget (evicting what no longer fits).
    pub(super) fn set_budget(&self, budget: usize) {
        self.users.set_budget(budget);
    }
}
