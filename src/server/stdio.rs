//! Line-delimited JSON-RPC on stdin and stdout for the MCP servers (`agentmem mcp`).
//!
//! rmcp's stdio transport drops a line that is not JSON without a word (so that a peer
//! echoing errors back cannot start an error storm); a person or a script typing at
//! `agentmem mcp` then waits for an answer that never comes. This pump stands between
//! the streams and rmcp: a line that is not JSON is answered with the JSON-RPC 2.0
//! parse error (code -32700, `id` null) and the next line is served; a line over
//! [`MAX_LINE_BYTES`] gets an invalid-request error (-32600, `id` null) instead of
//! being buffered. Every other line goes to rmcp unchanged, and every line rmcp writes
//! goes out whole, never interleaved with the pump's own answers.

use std::future::Future;
use std::io;

use serde_json::json;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

/// The longest line taken (16 MiB, rmcp's own limit for stdio).
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC 2.0: invalid JSON was received.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON sent is not a valid request object.
const INVALID_REQUEST: i64 = -32600;

/// Boxed error of a server run.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs `server` (an rmcp `serve` of the streams it is given, until it stops) on
/// stdin and stdout through the pump.
pub(crate) async fn serve<F, Fut>(server: F) -> Result<(), BoxError>
where
    F: FnOnce((DuplexStream, DuplexStream)) -> Fut,
    Fut: Future<Output = Result<(), BoxError>>,
{
    serve_on(tokio::io::stdin(), tokio::io::stdout(), server).await
}

/// [`serve`] on any pair of streams.
pub(crate) async fn serve_on<R, W, F, Fut>(input: R, output: W, server: F) -> Result<(), BoxError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce((DuplexStream, DuplexStream)) -> Fut,
    Fut: Future<Output = Result<(), BoxError>>,
{
    // rmcp reads `read` and writes `write`; the pump holds the other ends.
    let (read, to_rmcp) = tokio::io::duplex(64 * 1024);
    let (from_rmcp, write) = tokio::io::duplex(64 * 1024);
    // Every line for `output`, each written whole: rmcp's and the pump's answers.
    let (lines, mut outgoing) = mpsc::channel::<Vec<u8>>(64);

    let answers = lines.clone();
    let input = tokio::spawn(async move {
        if let Err(e) = pump_input(BufReader::new(input), to_rmcp, answers).await {
            tracing::debug!(error = %e, "MCP input closed");
        }
    });
    tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        loop {
            let mut line = Vec::new();
            match from_rmcp.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if lines.send(line).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let output = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = outgoing.recv().await {
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            output.write_all(&line).await?;
            output.flush().await?;
        }
        io::Result::Ok(())
    });

    let result = server((read, write)).await;
    // rmcp has stopped and dropped its streams: stop reading the input (a read of
    // stdin that never ends would otherwise hold the answers' channel open), then wait
    // until everything written is out.
    input.abort();
    if let Ok(Err(e)) = output.await {
        tracing::debug!(error = %e, "MCP output closed");
    }
    result
}

/// One line read by [`read_line`].
enum Line {
    /// A line (its newline, if any, included) is in the buffer.
    Read,
    /// A line over [`MAX_LINE_BYTES`] was skipped.
    TooLong,
    /// The input ended.
    End,
}

/// Reads one line into `line` without letting it grow past `max` bytes.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<Line> {
    line.clear();
    let mut skipping = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (skipping, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                // The last line, without a newline.
                (false, false) => Line::Read,
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !skipping && line.len() + take > max {
            skipping = true;
            line.clear();
        }
        if !skipping {
            line.extend_from_slice(&available[..take]);
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if skipping { Line::TooLong } else { Line::Read });
        }
    }
}

/// Forwards the lines of `input` that are JSON to rmcp and answers the others.
async fn pump_input<R: AsyncBufRead + Unpin>(
    mut input: R,
    mut to_rmcp: DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        match read_line(&mut input, &mut line, MAX_LINE_BYTES).await? {
            Line::End => return Ok(()),
            Line::TooLong => {
                tracing::warn!(
                    max = MAX_LINE_BYTES,
                    "MCP message over the line limit refused"
                );
                let message = format!("Invalid Request: a message over {MAX_LINE_BYTES} bytes");
                if answers
                    .send(error_line(INVALID_REQUEST, &message, None))
                    .await
                    .is_err()
                {
                    return Ok(());
                }
            }
            Line::Read => {
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
                    Ok(_) => {
                        to_rmcp.write_all(text).await?;
                        to_rmcp.write_all(b"\n").await?;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "MCP line is not JSON");
                        let answer = error_line(PARSE_ERROR, "Parse error", Some(e.to_string()));
                        if answers.send(answer).await.is_err() {
                            return Ok(());
                        }
                    }
                }
            }
        }
    }
}

/// A JSON-RPC error response with `id` null, as one line.
fn error_line(code: i64, message: &str, detail: Option<String>) -> Vec<u8> {
    let mut error = json!({"code": code, "message": message});
    if let Some(detail) = detail {
        error["data"] = json!({"detail": detail});
    }
    let mut line = json!({"jsonrpc": "2.0", "id": null, "error": error}).to_string();
    line.push('\n');
    line.into_bytes()
}
