//! Writing tables and JSON to stdout.

use std::io::{self, Write};

use serde::Serialize;

use crate::error::CliError;

/// Prints `rows` under `headers`, columns padded to their widest cell.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> Result<(), CliError> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = io::stdout().lock();
    let line = |cells: Vec<&str>| -> String {
        let last = cells.len().saturating_sub(1);
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == last {
                    (*cell).to_owned()
                } else {
                    let pad = widths[i].saturating_sub(cell.chars().count());
                    format!("{cell}{}", " ".repeat(pad))
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    writeln!(out, "{}", line(headers.to_vec()))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
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

/// `text` cut to `max` characters, with an ellipsis when cut, on one line.
pub fn clip(text: &str, max: usize) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// A score with three decimals.
pub fn score(value: f32) -> String {
    // adding +0.0 turns a negative zero into a positive one
    format!("{:.3}", value + 0.0)
}
