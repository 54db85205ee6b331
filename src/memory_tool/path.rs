//! [`MemoryPath`]: a path the model sent, checked to stay inside `/memories`.
//!
//! The files live in stores, not on a disk, so no path can reach the host's file system;
//! the checks still refuse everything a disk-backed handler would have to resolve (and
//! everything an application that exports the files to a disk would trip over): `..` and
//! `.` segments, percent-encoding (`%2e%2e`, `%2f`, double-encoded `%252e`), backslashes,
//! characters that look like a dot or a slash, names a file system resolves elsewhere
//! (`~user`, `C:`, `a:stream`, `CON`, `NUL`, a trailing dot or space), control and
//! invisible characters (NUL, newlines, bidirectional overrides, zero-width spaces), and
//! overlong paths.

use std::fmt;

/// The root every path must stay under.
pub const ROOT: &str = "/memories";
/// Longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// Longest file or directory name accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 255;
/// Deepest path accepted, in names below `/memories`.
pub const MAX_DEPTH: usize = 32;

/// Why a path was refused. The message names the path as the model sent it (escaped, and
/// shortened when long).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path is not `/memories` or below it.
    #[error("Path must start with /memories, got: {path}")]
    Outside {
        /// The path, escaped.
        path: String,
    },
    /// A `..` or `.` segment.
    #[error("Path {path} would escape /memories directory")]
    Traversal {
        /// The path, escaped.
        path: String,
    },
    /// Percent-encoded bytes such as `%2e` or `%2f`.
    #[error("Path {path} is refused: percent-encoded characters (such as %2e or %2f) are not allowed in memory paths")]
    PercentEncoded {
        /// The path, escaped.
        path: String,
    },
    /// A backslash.
    #[error("Path {path} is refused: backslashes are not allowed; separate directories with /")]
    Backslash {
        /// The path, escaped.
        path: String,
    },
    /// A control or invisible character (NUL, newline, bidirectional override, zero-width space).
    #[error("Path {path} is refused: it contains a control or invisible character")]
    ControlCharacter {
        /// The path, escaped.
        path: String,
    },
    /// A character that looks like a dot or a slash (`．`, `∕`, `／`, ...).
    #[error(
        "Path {path} is refused: it contains {character:?}, which looks like a dot or a slash"
    )]
    Lookalike {
        /// The path, escaped.
        path: String,
        /// The character.
        character: char,
    },
    /// A name a file system would resolve elsewhere: `~user`, `C:`, `a:stream`, a device
    /// name such as `CON` or `NUL`, a trailing dot or space.
    #[error("Path {path} is refused: `{name}` is not a plain file name (no leading ~, no colon, no device names such as CON or NUL, no trailing dot or space)")]
    LinkLike {
        /// The path, escaped.
        path: String,
        /// The offending name, escaped.
        name: String,
    },
    /// Longer than [`MAX_PATH_BYTES`], a name longer than [`MAX_NAME_BYTES`], or deeper
    /// than [`MAX_DEPTH`].
    #[error("Path {path} is refused: {reason}")]
    TooLong {
        /// The path, escaped and shortened.
        path: String,
        /// Which limit.
        reason: String,
    },
}

/// A checked path: `/memories` or a path below it, in canonical form (no trailing slash,
/// no empty segments).
///
/// ```
/// use agentmemory::memory_tool::MemoryPath;
///
/// let path = MemoryPath::parse("/memories/notes/today.md").unwrap();
/// assert_eq!(path.as_str(), "/memories/notes/today.md");
/// assert_eq!(path.parent().unwrap().as_str(), "/memories/notes");
/// assert!(MemoryPath::parse("/memories/../etc/passwd").is_err());
/// assert!(MemoryPath::parse("/memories/%2e%2e/secret").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemoryPath(String);

impl MemoryPath {
    /// The root, `/memories`.
    pub fn root() -> Self {
        MemoryPath(ROOT.to_owned())
    }

    /// Checks `raw` and returns its canonical form.
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        let shown = || shown(raw);
        if raw.len() > MAX_PATH_BYTES {
            return Err(PathError::TooLong {
                path: shown(),
                reason: format!("it is longer than {MAX_PATH_BYTES} bytes"),
            });
        }
        if raw.chars().any(is_control_or_invisible) {
            return Err(PathError::ControlCharacter { path: shown() });
        }
        if raw.contains('\\') {
            return Err(PathError::Backslash { path: shown() });
        }
        if has_percent_encoding(raw) {
            return Err(PathError::PercentEncoded { path: shown() });
        }
        if let Some(character) = raw.chars().find(|&c| is_lookalike(c)) {
            return Err(PathError::Lookalike {
                path: shown(),
                character,
            });
        }
        let rest = match raw.strip_prefix(ROOT) {
            Some("") => "",
            Some(rest) if rest.starts_with('/') => rest,
            _ => return Err(PathError::Outside { path: shown() }),
        };
        let names: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        if names.len() > MAX_DEPTH {
            return Err(PathError::TooLong {
                path: shown(),
                reason: format!("it is deeper than {MAX_DEPTH} directories"),
            });
        }
        let mut canonical = String::with_capacity(raw.len());
        canonical.push_str(ROOT);
        for name in names {
            if name == ".." || name == "." {
                return Err(PathError::Traversal { path: shown() });
            }
            if name.len() > MAX_NAME_BYTES {
                return Err(PathError::TooLong {
                    path: shown(),
                    reason: format!("a name is longer than {MAX_NAME_BYTES} bytes"),
                });
            }
            if is_link_like(name) {
                return Err(PathError::LinkLike {
                    path: shown(),
                    name: name.escape_debug().to_string(),
                });
            }
            canonical.push('/');
            canonical.push_str(name);
        }
        Ok(MemoryPath(canonical))
    }

    /// The canonical path.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is `/memories` itself.
    pub fn is_root(&self) -> bool {
        self.0 == ROOT
    }

    /// The directory holding this path; `None` for the root.
    pub fn parent(&self) -> Option<MemoryPath> {
        if self.is_root() {
            return None;
        }
        self.0
            .rfind('/')
            .map(|i| MemoryPath(self.0[..i].to_owned()))
    }

    /// Every directory above this path, nearest first, ending with the root.
    pub fn ancestors(&self) -> impl Iterator<Item = MemoryPath> {
        std::iter::successors(self.parent(), MemoryPath::parent)
    }

    /// The prefix every path below this one starts with (`/memories/notes/`).
    pub fn child_prefix(&self) -> String {
        format!("{}/", self.0)
    }

    /// The first path in sort order that can lie below this one (its child prefix as a
    /// path): where a range over sorted paths starts, since names such as `a b` or `a.txt`
    /// sort between `a` and `a/...`.
    pub(crate) fn first_below(&self) -> MemoryPath {
        MemoryPath(self.child_prefix())
    }

    /// Whether `other` lies strictly below this path.
    pub fn contains(&self, other: &MemoryPath) -> bool {
        other.0.starts_with(&self.child_prefix())
    }

    /// The last name (`today.md`); `memories` for the root.
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// This path with its prefix `from` replaced by `to` (`from` must contain it or be it).
    pub(crate) fn moved(&self, from: &MemoryPath, to: &MemoryPath) -> MemoryPath {
        match self.0.strip_prefix(&from.0) {
            Some(rest) => MemoryPath(format!("{}{rest}", to.0)),
            None => self.clone(),
        }
    }

    /// A path already in canonical form, as stored (`/memories/...`); `None` when it is
    /// not one.
    pub(crate) fn from_stored(stored: &str) -> Option<MemoryPath> {
        MemoryPath::parse(stored)
            .ok()
            .filter(|p| p.as_str() == stored)
    }
}

impl fmt::Display for MemoryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Longest part of a refused path shown back, in characters.
const SHOWN_CHARS: usize = 120;

/// `raw` escaped for a message (control characters as `\u{..}`), shortened when long.
pub(crate) fn shown(raw: &str) -> String {
    let escaped: String = raw.escape_debug().collect();
    if escaped.chars().count() > SHOWN_CHARS {
        let head: String = escaped.chars().take(SHOWN_CHARS).collect();
        format!("{head}… ({} bytes)", raw.len())
    } else {
        escaped
    }
}

/// Control characters, and the invisible ones that make a name read differently from what
/// it is: zero-width spaces and joiners, bidirectional overrides and isolates, the BOM.
fn is_control_or_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{00AD}'
        )
}

/// Characters a human (or a Unicode-normalising file system) reads as `.`, `/` or `\`.
fn is_lookalike(c: char) -> bool {
    matches!(
        c,
        '\u{2024}' // one dot leader
            | '\u{2025}' // two dot leader
            | '\u{2026}' // horizontal ellipsis
            | '\u{FE52}' // small full stop
            | '\u{FF0E}' // fullwidth full stop
            | '\u{2215}' // division slash
            | '\u{2044}' // fraction slash
            | '\u{2571}' // box drawings light diagonal
            | '\u{29F8}' // big solidus
            | '\u{FF0F}' // fullwidth solidus
            | '\u{29F5}' // reverse solidus operator
            | '\u{29F9}' // big reverse solidus
            | '\u{FE68}' // small reverse solidus
            | '\u{FF3C}' // fullwidth reverse solidus
    )
}

/// Whether `raw` holds `%` followed by two hex digits.
fn has_percent_encoding(raw: &str) -> bool {
    raw.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// Names a file system resolves to something else than a plain file of that name.
fn is_link_like(name: &str) -> bool {
    if name.starts_with('~') || name.contains(':') || name.ends_with(['.', ' ']) {
        return true;
    }
    // Windows device names, with or without an extension (`NUL`, `con.txt`, `COM1`).
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || (upper.len() == 4
        && (upper.starts_with("COM") || upper.starts_with("LPT"))
        && upper.as_bytes()[3].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        for (raw, canonical) in [
            ("/memories", "/memories"),
            ("/memories/", "/memories"),
            ("/memories/a.txt", "/memories/a.txt"),
            ("/memories//notes///a.md/", "/memories/notes/a.md"),
            ("/memories/日本語 メモ.md", "/memories/日本語 メモ.md"),
            ("/memories/.hidden", "/memories/.hidden"),
            ("/memories/50%off.txt", "/memories/50%off.txt"),
            ("/memories/a..b", "/memories/a..b"),
            ("/memories/COM10.txt", "/memories/COM10.txt"),
            ("/memories/console.log", "/memories/console.log"),
        ] {
            assert_eq!(MemoryPath::parse(raw).unwrap().as_str(), canonical, "{raw}");
        }
    }

    #[test]
    fn relatives() {
        let p = MemoryPath::parse("/memories/a/b/c.txt").unwrap();
        let ancestors: Vec<String> = p.ancestors().map(|a| a.0).collect();
        assert_eq!(ancestors, ["/memories/a/b", "/memories/a", "/memories"]);
        assert_eq!(p.name(), "c.txt");
        let a = MemoryPath::parse("/memories/a").unwrap();
        assert!(a.contains(&p));
        assert!(!p.contains(&a));
        assert!(!a.contains(&MemoryPath::parse("/memories/ab").unwrap()));
        let to = MemoryPath::parse("/memories/z").unwrap();
        assert_eq!(p.moved(&a, &to).as_str(), "/memories/z/b/c.txt");
        assert_eq!(MemoryPath::root().parent(), None);
    }

    #[test]
    fn messages_escape_and_shorten() {
        let err = MemoryPath::parse("/memories/a\u{0}b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Path /memories/a\\0b is refused: it contains a control or invisible character"
        );
        let long = format!("/memories/{}", "x".repeat(2000));
        let msg = MemoryPath::parse(&long).unwrap_err().to_string();
        assert!(msg.len() < 300, "{msg}");
        assert!(msg.contains("longer than 1024 bytes"), "{msg}");
    }
}
