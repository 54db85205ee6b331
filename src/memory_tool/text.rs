//! The text of the commands that read or edit one file: numbered views, `str_replace`,
//! `insert`. Pure functions over the file's content; the stores are not touched here.

use super::error::MemoryToolError;
use super::path::MemoryPath;

/// Width of the right-aligned line numbers (the reference handler's `len("999999")`).
pub const LINE_NUMBER_WIDTH: usize = 6;
/// Most lines a file may have to be viewed.
pub const MAX_LINES: usize = 999_999;

/// A file's new content and the message that reports the edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) content: String,
    pub(crate) message: String,
}

/// `lines` numbered from `first`, one per line: the number right-aligned in six columns,
/// a tab, the line.
fn numbered<'a>(lines: impl IntoIterator<Item = &'a str>, first: usize) -> String {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| format!("{:>width$}\t{line}", i + first, width = LINE_NUMBER_WIDTH))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `view` of a file: its lines (split on `\n`, so a final newline shows as an empty last
/// line), numbered from 1, or only those of `range`.
pub(crate) fn view(
    path: &MemoryPath,
    content: &str,
    range: Option<&[i64]>,
) -> Result<String, MemoryToolError> {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() > MAX_LINES {
        return Err(MemoryToolError::TooManyLines {
            path: path.to_string(),
        });
    }
    let (start, end) = match range {
        None => (1, lines.len()),
        Some(range) => checked_range(range, lines.len())?,
    };
    Ok(format!(
        "Here's the content of {path} with line numbers:\n{}",
        numbered(lines[start - 1..end].iter().copied(), start)
    ))
}

/// `[start, end]` as 1-based inclusive bounds within `n` lines (`end = -1` or past the
/// end = the last line).
fn checked_range(range: &[i64], n: usize) -> Result<(usize, usize), MemoryToolError> {
    let refuse = |reason: String| MemoryToolError::ViewRange {
        range: format!(
            "[{}]",
            range
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        reason,
    };
    let &[start, end] = range else {
        return Err(refuse(
            "It should be a list of two integers: [start_line, end_line], with end_line -1 for the end of the file.".into(),
        ));
    };
    let first = usize::try_from(start)
        .ok()
        .filter(|s| (1..=n).contains(s))
        .ok_or_else(|| {
            refuse(format!(
                "Its first element `{start}` should be within the range of lines of the file: [1, {n}]."
            ))
        })?;
    let last = if end == -1 {
        n
    } else {
        usize::try_from(end)
            .ok()
            .filter(|&e| e >= first)
            .ok_or_else(|| {
                refuse(format!(
                    "Its second element `{end}` should be -1 or larger than or equal to its first element `{start}`."
                ))
            })?
            .min(n)
    };
    Ok((first, last))
}

/// `str_replace`: the one occurrence of `old` replaced by `new`, reported with the lines
/// around it.
pub(crate) fn str_replace(
    path: &MemoryPath,
    content: &str,
    old: &str,
    new: &str,
) -> Result<Edit, MemoryToolError> {
    if old.is_empty() {
        return Err(MemoryToolError::EmptyOldStr {
            path: path.to_string(),
        });
    }
    let positions: Vec<usize> = content.match_indices(old).map(|(i, _)| i).collect();
    let pos = match positions.as_slice() {
        [] => {
            return Err(MemoryToolError::NoMatch {
                path: path.to_string(),
                old_str: old.to_owned(),
            })
        }
        [pos] => *pos,
        many => {
            return Err(MemoryToolError::NotUnique {
                old_str: old.to_owned(),
                lines: many.iter().map(|&p| line_of(content, p) + 1).collect(),
            })
        }
    };
    let mut updated = String::with_capacity(content.len() - old.len() + new.len());
    updated.push_str(&content[..pos]);
    updated.push_str(new);
    updated.push_str(&content[pos + old.len()..]);
    let changed = line_of(content, pos);
    let lines: Vec<&str> = updated.split('\n').collect();
    let from = changed.saturating_sub(2);
    let to = (changed + 3).min(lines.len());
    let message = format!(
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}",
        numbered(lines[from..to].iter().copied(), from + 1)
    );
    Ok(Edit {
        content: updated,
        message,
    })
}

/// The 0-based line holding byte `pos`.
fn line_of(content: &str, pos: usize) -> usize {
    content.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// `insert`: `text` (without its trailing newlines) as a line after line `line` (`0` = at
/// the top); the file ends with a newline.
pub(crate) fn insert(
    path: &MemoryPath,
    content: &str,
    line: i64,
    text: &str,
) -> Result<Edit, MemoryToolError> {
    let mut lines: Vec<&str> = content.lines().collect();
    let at = usize::try_from(line)
        .ok()
        .filter(|&at| at <= lines.len())
        .ok_or(MemoryToolError::InsertLine {
            line,
            lines: lines.len(),
        })?;
    lines.insert(at, text.trim_end_matches('\n'));
    let mut updated = lines.join("\n");
    if !updated.ends_with('\n') {
        updated.push('\n');
    }
    Ok(Edit {
        content: updated,
        message: format!("The file {path} has been edited."),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> MemoryPath {
        MemoryPath::parse("/memories/notes.txt").unwrap()
    }

    #[test]
    fn views_number_lines_from_one() {
        let shown = view(&p(), "alpha\nbeta\n", None).unwrap();
        assert_eq!(
            shown,
            "Here's the content of /memories/notes.txt with line numbers:\n     1\talpha\n     2\tbeta\n     3\t"
        );
        let shown = view(&p(), "a\nb\nc\nd", Some(&[2, 3])).unwrap();
        assert!(shown.ends_with("\n     2\tb\n     3\tc"), "{shown}");
        let shown = view(&p(), "a\nb\nc\nd", Some(&[3, -1])).unwrap();
        assert!(shown.ends_with("\n     3\tc\n     4\td"), "{shown}");
        let shown = view(&p(), "a\nb", Some(&[2, 99])).unwrap();
        assert!(shown.ends_with(":\n     2\tb"), "{shown}");
    }

    #[test]
    fn bad_ranges_are_refused() {
        for (range, msg) in [
            (&[0, 2][..], "Invalid `view_range` parameter: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 3]."),
            (&[4, 4][..], "Invalid `view_range` parameter: [4, 4]. Its first element `4` should be within the range of lines of the file: [1, 3]."),
            (&[3, 2][..], "Invalid `view_range` parameter: [3, 2]. Its second element `2` should be -1 or larger than or equal to its first element `3`."),
            (&[1][..], "Invalid `view_range` parameter: [1]. It should be a list of two integers: [start_line, end_line], with end_line -1 for the end of the file."),
        ] {
            assert_eq!(view(&p(), "a\nb\nc", Some(range)).unwrap_err().to_string(), msg);
        }
    }

    #[test]
    fn str_replace_reports_the_lines_around_the_change() {
        let content = "1\n2\n3\n4\nold\n6\n7\n8\n";
        let edit = str_replace(&p(), content, "old", "new").unwrap();
        assert_eq!(edit.content, "1\n2\n3\n4\nnew\n6\n7\n8\n");
        assert_eq!(
            edit.message,
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     3\t3\n     4\t4\n     5\tnew\n     6\t6\n     7\t7"
        );
    }

    #[test]
    fn str_replace_needs_one_verbatim_match() {
        let err = str_replace(&p(), "tea\ncoffee\ntea\n", "tea", "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "No replacement was performed. Multiple occurrences of old_str `tea` in lines: 1, 3. Please ensure it is unique"
        );
        let err = str_replace(&p(), "tea\n", "Tea", "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "No replacement was performed, old_str `Tea` did not appear verbatim in /memories/notes.txt."
        );
        let err = str_replace(&p(), "tea\n", "", "x").unwrap_err();
        assert!(matches!(err, MemoryToolError::EmptyOldStr { .. }));
    }

    #[test]
    fn insert_goes_after_the_line() {
        let edit = insert(&p(), "a\nb\n", 1, "between\n").unwrap();
        assert_eq!(edit.content, "a\nbetween\nb\n");
        assert_eq!(
            edit.message,
            "The file /memories/notes.txt has been edited."
        );
        assert_eq!(
            insert(&p(), "a\nb", 0, "top").unwrap().content,
            "top\na\nb\n"
        );
        assert_eq!(
            insert(&p(), "a\nb", 2, "end").unwrap().content,
            "a\nb\nend\n"
        );
        assert_eq!(insert(&p(), "", 0, "only").unwrap().content, "only\n");
        for line in [-1, 3] {
            assert_eq!(
                insert(&p(), "a\nb\n", line, "x").unwrap_err().to_string(),
                format!("Invalid `insert_line` parameter: {line}. It should be within the range [0, 2].")
            );
        }
    }
}
