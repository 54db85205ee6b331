//! `view` of a directory: what lies up to two levels below it, with sizes, in the
//! reference handler's format.
//!
//! Directories exist through the files in them (and `/memories` always): a directory's
//! size is the total size of the files below it, at any depth.

use std::collections::BTreeMap;

use super::path::MemoryPath;

/// `bytes` the way the reference handler shows sizes: `0B`, `512B`, `1.5K`, `2M`.
///
/// ```
/// use agentmemory::memory_tool::format_size;
///
/// assert_eq!(format_size(0), "0B");
/// assert_eq!(format_size(1536), "1.5K");
/// assert_eq!(format_size(4096), "4K");
/// ```
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "K", "M", "G"];
    if bytes == 0 {
        return "0B".into();
    }
    let i = ((63 - bytes.leading_zeros()) / 10).min(3);
    let size = bytes as f64 / 1024f64.powi(i as i32);
    let unit = UNITS[i as usize];
    if size.fract() == 0.0 {
        format!("{}{unit}", size as u64)
    } else {
        format!("{size:.1}{unit}")
    }
}

/// One line of a listing below the directory: its names relative to the directory.
#[derive(Debug, Default)]
struct Node {
    is_dir: bool,
    size: u64,
}

/// The listing of `dir`, given every file below it (at any depth) with its size. Names
/// starting with `.` are left out, with what is below them.
pub(crate) fn render<'a>(
    dir: &MemoryPath,
    files: impl IntoIterator<Item = (&'a MemoryPath, u64)>,
) -> String {
    let prefix = dir.child_prefix();
    let mut total = 0u64;
    let mut nodes: BTreeMap<Vec<&str>, Node> = BTreeMap::new();
    for (path, size) in files {
        let Some(rel) = path.as_str().strip_prefix(&prefix) else {
            continue;
        };
        total += size;
        let names: Vec<&str> = rel.split('/').collect();
        for depth in 1..=names.len().min(2) {
            if names[depth - 1].starts_with('.') {
                break;
            }
            let node = nodes.entry(names[..depth].to_vec()).or_default();
            node.is_dir |= depth < names.len();
            node.size += size;
        }
    }
    let mut out = format!(
        "Here're the files and directories up to 2 levels deep in {dir}, excluding hidden items:\n{}\t{dir}",
        format_size(total)
    );
    for (names, node) in nodes {
        let slash = if node.is_dir { "/" } else { "" };
        out.push_str(&format!(
            "\n{}\t{dir}/{}{slash}",
            format_size(node.size),
            names.join("/")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_like_the_reference() {
        for (bytes, shown) in [
            (0, "0B"),
            (1, "1B"),
            (1023, "1023B"),
            (1024, "1K"),
            (1100, "1.1K"),
            (10 * 1024 * 1024, "10M"),
            (3 * 1024 * 1024 * 1024 + 1, "3.0G"),
            (5 * 1024u64.pow(4), "5120G"),
        ] {
            assert_eq!(format_size(bytes), shown, "{bytes}");
        }
    }

    #[test]
    fn two_levels_depth_first_hidden_left_out() {
        let p = |s: &str| MemoryPath::parse(s).unwrap();
        let files = [
            (p("/memories/a.txt"), 10),
            (p("/memories/a/x.md"), 5),
            (p("/memories/a/deep/er/y.md"), 7),
            (p("/memories/.secret"), 3),
            (p("/memories/b/.hidden/z"), 1),
        ];
        let listing = render(&p("/memories"), files.iter().map(|(p, s)| (p, *s)));
        assert_eq!(
            listing,
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
             26B\t/memories\n\
             12B\t/memories/a/\n\
             7B\t/memories/a/deep/\n\
             5B\t/memories/a/x.md\n\
             10B\t/memories/a.txt\n\
             1B\t/memories/b/"
        );
        let listing = render(&p("/memories/a"), files.iter().map(|(p, s)| (p, *s)));
        assert_eq!(
            listing,
            "Here're the files and directories up to 2 levels deep in /memories/a, excluding hidden items:\n\
             12B\t/memories/a\n\
             7B\t/memories/a/deep/\n\
             7B\t/memories/a/deep/er/\n\
             5B\t/memories/a/x.md"
        );
    }
}
