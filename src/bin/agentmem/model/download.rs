//! One file over HTTP(S) into a `.part` file, resumed with a `Range` request after an
//! interrupted transfer (in this run or an earlier one) and retried a few times.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use reqwest::header::{CONTENT_RANGE, RANGE};
use reqwest::StatusCode;

use super::error::FetchError;

/// Attempts per file before giving up.
const ATTEMPTS: u32 = 4;

/// What one attempt ended with.
enum Attempt {
    /// The whole file is in the `.part` file.
    Done,
    /// The transfer broke off; `reason` says how. Worth another attempt.
    Interrupted(String),
}

/// Downloads `url` into `part`, appending to what `part` already holds when the server
/// honours ranges. Returns once the server has sent the whole file; the caller checks its
/// content. `progress` is told how many bytes are in `part` after each chunk.
pub async fn download(
    client: &reqwest::Client,
    url: &str,
    part: &Path,
    progress: &dyn Fn(u64, Option<u64>),
) -> Result<(), FetchError> {
    let mut last = String::new();
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tracing::warn!(url, attempt, reason = %last, "retrying the download");
            tokio::time::sleep(Duration::from_millis(250 << attempt)).await;
        }
        match attempt_once(client, url, part, progress).await? {
            Attempt::Done => return Ok(()),
            Attempt::Interrupted(reason) => last = reason,
        }
    }
    Err(FetchError::Transfer {
        url: url.to_owned(),
        reason: format!("{last} (after {ATTEMPTS} attempts)"),
    })
}

async fn attempt_once(
    client: &reqwest::Client,
    url: &str,
    part: &Path,
    progress: &dyn Fn(u64, Option<u64>),
) -> Result<Attempt, FetchError> {
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(RANGE, format!("bytes={have}-"));
    }
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(e) => return Ok(Attempt::Interrupted(chain(&e))),
    };
    let status = response.status();
    // Resuming: 206 continues the file; 200 means the server ignored the range and sends
    // it all again; 416 means there is nothing past what we have (the file is complete).
    let append = match status {
        StatusCode::PARTIAL_CONTENT if have > 0 && starts_at(&response, have) => true,
        StatusCode::PARTIAL_CONTENT => {
            // A range other than the one asked for: start over.
            let _ = std::fs::remove_file(part);
            return Ok(Attempt::Interrupted(
                "the server answered another range".into(),
            ));
        }
        StatusCode::OK => false,
        StatusCode::RANGE_NOT_SATISFIABLE if have > 0 => return Ok(Attempt::Done),
        s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS => {
            return Ok(Attempt::Interrupted(format!("HTTP {}", s.as_u16())))
        }
        s => {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status: s.as_u16(),
            })
        }
    };
    let total = response
        .content_length()
        .map(|n| if append { n + have } else { n });
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(part)
        .map_err(FetchError::io(part))?;
    let mut written = if append { have } else { 0 };
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => {
                file.write_all(&bytes).map_err(FetchError::io(part))?;
                written += bytes.len() as u64;
                progress(written, total);
            }
            Ok(None) => break,
            Err(e) => {
                file.flush().map_err(FetchError::io(part))?;
                return Ok(Attempt::Interrupted(chain(&e)));
            }
        }
    }
    file.sync_all().map_err(FetchError::io(part))?;
    match total {
        Some(total) if written < total => Ok(Attempt::Interrupted(format!(
            "the body ended after {written} of {total} bytes"
        ))),
        _ => Ok(Attempt::Done),
    }
}

/// Whether a 206 answer's `Content-Range` starts where the `.part` file ends.
fn starts_at(response: &reqwest::Response, have: u64) -> bool {
    response
        .headers()
        .get(CONTENT_RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes "))
        .and_then(|v| v.split('-').next())
        .and_then(|start| start.parse::<u64>().ok())
        == Some(have)
}

/// `error` and its causes, `: `-separated (reqwest's own message hides them, e.g. a TLS
/// certificate refused).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
