//! The JSON bodies stored in the tables, each wrapped with a format version:
//! `{"v": 1, "data": ...}`.

use agentmemory_core::{MemoryError, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The body format this build writes.
pub(crate) const BODY_VERSION: u32 = 1;

#[derive(Serialize)]
struct Out<'a, T> {
    v: u32,
    data: &'a T,
}

#[derive(Deserialize)]
struct In<T> {
    v: u32,
    data: T,
}

#[derive(Deserialize)]
struct VersionOnly {
    v: u32,
}

/// `value` as a versioned JSON body.
pub(crate) fn encode<T: Serialize>(value: &T, what: &str) -> Result<String> {
    serde_json::to_string(&Out {
        v: BODY_VERSION,
        data: value,
    })
    .map_err(|e| MemoryError::invalid("record", format!("{what} is not serialisable: {e}")))
}

/// Reads a versioned JSON body; `what` names the record in errors.
pub(crate) fn decode<T: DeserializeOwned>(json: &str, what: impl FnOnce() -> String) -> Result<T> {
    match serde_json::from_str::<In<T>>(json) {
        Ok(body) if body.v <= BODY_VERSION => Ok(body.data),
        Ok(body) => Err(unsupported(body.v)),
        Err(e) => match serde_json::from_str::<VersionOnly>(json) {
            Ok(VersionOnly { v }) if v > BODY_VERSION => Err(unsupported(v)),
            _ => Err(MemoryError::corrupt(what(), e)),
        },
    }
}

fn unsupported(found: u32) -> MemoryError {
    MemoryError::UnsupportedVersion {
        what: "sqlite record",
        found,
        supported: BODY_VERSION,
    }
}
