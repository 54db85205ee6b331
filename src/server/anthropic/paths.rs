//! The paths of memories: `/` then 1 to 20 segments, none empty, `.` or `..`; no
//! control or format characters, no U+2028/U+2029; at most 1,024 bytes.
//!
//! Unicode Normalization Form C is not checked (agentmem has no normalisation tables);
//! a path in another form is kept as sent, byte for byte.

use super::error::ApiError;

/// Longest path, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// Most segments in a path.
pub const MAX_SEGMENTS: usize = 20;

/// Checks a memory path.
pub fn check(path: &str) -> Result<(), ApiError> {
    let refuse = |why: &str| Err(ApiError::invalid(format!("invalid path {path:?}: {why}")));
    if !path.starts_with('/') {
        return refuse("a path starts with `/`");
    }
    if path.len() > MAX_PATH_BYTES {
        return refuse("a path is at most 1,024 bytes");
    }
    if path.chars().any(refused_char) {
        return refuse("control and format characters are not allowed");
    }
    let segments: Vec<&str> = path[1..].split('/').collect();
    if segments.len() > MAX_SEGMENTS {
        return refuse("a path has at most 20 segments");
    }
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == "..")
    {
        return refuse("a segment can't be empty, `.` or `..`");
    }
    Ok(())
}

/// Checks a `path_prefix` of a listing: like a path, but ending with `/` (`/` alone is
/// the whole store).
pub fn check_prefix(prefix: &str) -> Result<(), ApiError> {
    if !prefix.ends_with('/') {
        return Err(ApiError::invalid(format!(
            "invalid path_prefix {prefix:?}: it must end with `/`"
        )));
    }
    if prefix == "/" {
        return Ok(());
    }
    check(&prefix[..prefix.len() - 1])
}

/// Control characters, the format characters (Unicode category Cf) a path could hide,
/// and the line and paragraph separators.
fn refused_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}'
            | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2028}' | '\u{2029}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{E0001}' | '\u{E0020}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_api_rules() {
        for good in ["/a", "/projects/foo/notes.md", "/a:b/~c", "/日本"] {
            assert!(check(good).is_ok(), "{good}");
        }
        let deep = "/a".repeat(21);
        for bad in [
            "",
            "a",
            "/",
            "/a/",
            "//a",
            "/a/../b",
            "/./a",
            "/a\u{0}",
            "/a\u{200B}b",
            "/a\u{2028}",
            &deep,
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
        assert!(check_prefix("/").is_ok());
        assert!(check_prefix("/notes/").is_ok());
        assert!(check_prefix("/notes").is_err());
    }
}
