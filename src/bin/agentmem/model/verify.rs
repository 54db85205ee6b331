//! Checking files against their pinned sha256.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::FetchError;
use super::pinned::PinnedFile;

/// The sha256 of the file at `path`, lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String, FetchError> {
    let mut file = std::fs::File::open(path).map_err(FetchError::io(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).map_err(FetchError::io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// The sha256 of `bytes`, lowercase hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks the file at `path` against `pinned`; on a mismatch the file is deleted and the
/// error names both hashes.
pub fn check(path: &Path, pinned: &PinnedFile) -> Result<(), FetchError> {
    let actual = sha256_file(path)?;
    if actual == pinned.sha256 {
        return Ok(());
    }
    let _ = std::fs::remove_file(path);
    Err(FetchError::Checksum {
        name: pinned.name.to_owned(),
        expected: pinned.sha256.to_owned(),
        actual,
    })
}

/// Whether the file at `path` is `pinned` (exists, right size, right hash).
pub fn matches(path: &Path, pinned: &PinnedFile) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == pinned.size)
        && sha256_file(path).is_ok_and(|h| h == pinned.sha256)
}
