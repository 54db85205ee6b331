//! Writing tables and JSON to stdout.

use std::io::{self, Write};

use serde::Serialize;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::error::CliError;

/// Widest a column other than the last may be, in terminal columns.
const MAX_COLUMN: usize = 40;
/// The line width tables aim for when `COLUMNS` does not say.
const DEFAULT_LINE: usize = 120;
/// The last column is never cut narrower than this.
const MIN_LAST: usize = 24;

/// The width of `text` on a terminal: CJK characters and most emoji take two columns,
/// combining marks none.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` on one line (line breaks, tabs and other control characters become spaces).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` on one line, cut to at most `max` terminal columns with an ellipsis when cut.
/// Cuts fall between grapheme clusters, so an emoji sequence or an accented letter is
/// kept whole or dropped whole.
pub fn fit(text: &str, max: usize) -> String {
    let line = one_line(text);
    if width(&line) <= max {
        return line;
    }
    let budget = max.saturating_sub(1); // the ellipsis takes one column
    let mut out = String::new();
    let mut used = 0;
    for grapheme in line.graphemes(true) {
        let w = width(grapheme);
        if used + w > budget {
            break;
        }
        used += w;
        out.push_str(grapheme);
    }
    out.push('…');
    out
}

/// The line width to fit tables in: `COLUMNS` when it holds a number, else 120.
fn line_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&w: &usize| w > 0)
        .unwrap_or(DEFAULT_LINE)
}

/// Lays out `rows` under `headers`, columns two spaces apart and padded to their widest
/// cell by terminal width (so CJK text and emoji align). Cells are put on one line; a cell
/// wider than 40 columns is cut with `…`, and so is the last column where the line would
/// exceed `line` columns (never below 24). `--json` prints values whole.
fn layout(headers: &[&str], rows: &[Vec<String>], line: usize) -> Vec<String> {
    let columns = headers.len();
    let last = columns.saturating_sub(1);
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(rows.len() + 1);
    cells.push(headers.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        cells.push(
            (0..columns)
                .map(|i| {
                    let cell = row.get(i).map_or("", String::as_str);
                    if i == last {
                        one_line(cell)
                    } else {
                        fit(cell, MAX_COLUMN)
                    }
                })
                .collect(),
        );
    }
    let mut widths = vec![0usize; columns];
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let before_last: usize = widths[..last].iter().map(|w| w + 2).sum();
    let last_max = line.saturating_sub(before_last).max(MIN_LAST);
    cells
        .into_iter()
        .map(|row| {
            let mut out = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i == last {
                    out.push_str(&fit(cell, last_max));
                } else {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(widths[i] - width(cell) + 2));
                }
            }
            out
        })
        .collect()
}

/// Prints `rows` under `headers` (see `layout`: aligned by terminal width, wide values cut).
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    for line in layout(headers, rows, line_width()) {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// Prints `value` as pretty JSON.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| CliError::runtime("write JSON", e))?;
    let mut out = io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// Writes `value` as one JSON line to `out` and flushes, so pipes see it at once.
pub fn json_line<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> Result<(), CliError> {
    serde_json::to_writer(&mut *out, value).map_err(|e| {
        if e.io_error_kind() == Some(io::ErrorKind::BrokenPipe) {
            CliError::BrokenPipe
        } else {
            CliError::runtime("write JSON", e)
        }
    })?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Prints one line of text.
pub fn line(text: impl std::fmt::Display) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// A score with three decimals.
pub fn score(value: f32) -> String {
    // adding +0.0 turns a negative zero into a positive one
    format!("{:.3}", value + 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_and_emoji_columns_align() {
        let rows = vec![
            vec!["东京".to_owned(), "1".to_owned(), "x".to_owned()],
            vec!["🦀🦀".to_owned(), "22".to_owned(), "y".to_owned()],
            vec!["ab".to_owned(), "333".to_owned(), "z".to_owned()],
        ];
        let lines = layout(&["ID", "N", "TEXT"], &rows, 120);
        let starts: Vec<usize> = lines
            .iter()
            .map(|l| width(&l[..l.rfind("  ").expect("a gap") + 2]))
            .collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "{lines:#?}");
    }

    #[test]
    fn wide_values_are_cut_by_columns_not_characters() {
        let cut = fit(&"漢".repeat(50), 21);
        assert_eq!(width(&cut), 21, "{cut}");
        assert!(cut.ends_with('…'));
        // a family emoji (one grapheme of several code points) is never split
        let family = "👨‍👩‍👧";
        let cut = fit(&format!("ab{family}{family}"), 4);
        assert!(
            cut == "ab…" || cut.starts_with(&format!("ab{family}")),
            "{cut}"
        );
        assert_eq!(fit("a\nb\tc", 10), "a b c");
        assert_eq!(fit("short", 10), "short");
    }

    #[test]
    fn long_cells_are_cut_and_lines_fit() {
        let rows = vec![vec!["i".repeat(100), "t".repeat(300)]];
        let lines = layout(&["ID", "TEXT"], &rows, 100);
        assert_eq!(width(&lines[1]), 100, "{}", lines[1]);
        assert!(lines[1].starts_with(&format!("{}…  ", "i".repeat(MAX_COLUMN - 1))));
    }
}
