//! File names from arbitrary ids.
//!
//! Lowercase ASCII letters, digits, `-` and `_` are kept; every other byte (uppercase
//! letters included, so case-insensitive file systems cannot merge two ids) becomes
//! `%XX`. No encoded name contains `/`, `\`, `.` or a NUL, so none can leave the
//! directory, and the encoding is injective, so two ids never share a file.

use agentmemory_core::{MemoryError, Result};

/// File extension of every data file.
pub(crate) const EXTENSION: &str = ".json";
/// Longest encoded id accepted (file systems allow 255 bytes per name).
const MAX_ENCODED: usize = 240;

fn kept(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
}

/// The file name (with extension) holding `id`.
pub(crate) fn file_name(what: &'static str, id: &str) -> Result<String> {
    if id.is_empty() {
        return Err(MemoryError::invalid(what, "must not be empty"));
    }
    let mut out = String::with_capacity(id.len() + EXTENSION.len());
    for &b in id.as_bytes() {
        if kept(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.len() > MAX_ENCODED {
        return Err(MemoryError::invalid(
            what,
            format!(
                "too long to name a file: {} bytes encoded (limit {MAX_ENCODED})",
                out.len()
            ),
        ));
    }
    out.push_str(EXTENSION);
    Ok(out)
}

/// The id stored in `name`, or `None` when `name` is not one of ours (temp files, strays).
pub(crate) fn id_of(name: &str) -> Option<String> {
    let stem = name.strip_suffix(EXTENSION)?;
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = stem.get(i + 1..i + 3)?;
                if !hex
                    .bytes()
                    .all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(&c))
                {
                    return None;
                }
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b if kept(b) => {
                out.push(b);
                i += 1;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_injective_and_reversible() {
        let ids = [
            "plain",
            "Plain",
            "../../etc/passwd",
            "a/b",
            "a%2Fb",
            "*",
            ".",
            "..",
            "x.json",
            "ünï 🔑",
            "a\\b",
            "nul\0byte",
        ];
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            let name = file_name("id", id).expect("encodes");
            assert!(
                !name[..name.len() - EXTENSION.len()].contains(['/', '\\', '.', '\0']),
                "{name}"
            );
            assert!(seen.insert(name.clone()), "collision on {name}");
            assert_eq!(id_of(&name).as_deref(), Some(id));
        }
        assert!(file_name("id", "").is_err());
        assert!(file_name("id", &"Z".repeat(100)).is_err());
        assert_eq!(id_of(".tmp-123"), None);
        assert_eq!(id_of("%zz.json"), None);
        assert_eq!(id_of("%2f.json"), None, "only our own uppercase hex");
    }
}
