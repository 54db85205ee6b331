//! The HTTP side of the provider: headers, timeouts, retries with backoff.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::OpenAiConfig;
use crate::error::{MemoryError, ModelErrorKind, Result};

/// Longest backoff between two attempts when the server gives no `Retry-After`.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Longest `Retry-After` honoured; a server asking for more gets this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);
/// How much of an error body is quoted in an error message.
const ERROR_BODY_CHARS: usize = 300;

/// A configured HTTP client for one OpenAI-compatible server.
#[derive(Clone)]
pub(super) struct Transport {
    http: reqwest::Client,
    config: OpenAiConfig,
}

/// What one attempt came to.
enum Attempt<R> {
    Done(R),
    /// Worth retrying, after the server's `Retry-After` when it sent one.
    Retry {
        error: MemoryError,
        retry_after: Option<Duration>,
    },
}

impl Transport {
    pub(super) fn new(config: OpenAiConfig) -> Result<Self> {
        config.validate()?;
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| {
                MemoryError::model_caused_by(
                    config.model.clone(),
                    ModelErrorKind::Other,
                    "could not build the HTTP client",
                    e,
                )
            })?;
        Ok(Self { http, config })
    }

    pub(super) fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The headers every request carries.
    fn headers(&self) -> Result<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &self.config.api_key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                MemoryError::invalid(
                    "OpenAI API key",
                    "contains characters not allowed in an HTTP header",
                )
            })?;
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        if let Some(org) = &self.config.organization {
            let value = HeaderValue::from_str(org).map_err(|_| {
                MemoryError::invalid(
                    "OpenAI organization",
                    "contains characters not allowed in an HTTP header",
                )
            })?;
            headers.insert("OpenAI-Organization", value);
        }
        Ok(headers)
    }

    /// POSTs `body` as JSON to `path` and parses the JSON answer, retrying 429s, 5xx
    /// and connection failures up to `max_retries` times. `model` names the model in errors.
    pub(super) async fn post<B, R>(&self, path: &str, model: &str, body: &B) -> Result<R>
    where
        B: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        let url = self.config.endpoint(path);
        let headers = self.headers()?;
        let payload = serde_json::to_vec(body).map_err(|e| {
            MemoryError::model_caused_by(
                model,
                ModelErrorKind::BadRequest,
                "could not encode the request",
                e,
            )
        })?;
        let mut attempt = 0u32;
        loop {
            match self.attempt(&url, model, &headers, &payload).await? {
                Attempt::Done(r) => return Ok(r),
                Attempt::Retry { error, retry_after } => {
                    if attempt >= self.config.max_retries {
                        return Err(error);
                    }
                    let delay = retry_after
                        .map(|d| d.min(MAX_RETRY_AFTER))
                        .unwrap_or_else(|| backoff(self.config.initial_backoff, attempt));
                    tracing::warn!(%url, attempt = attempt + 1, ?delay, error = %error.chain(), "retrying OpenAI request");
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
            }
        }
    }

    async fn attempt<R: DeserializeOwned>(
        &self,
        url: &str,
        model: &str,
        headers: &HeaderMap,
        payload: &[u8],
    ) -> Result<Attempt<R>> {
        let caused = |kind, message: String, source: reqwest::Error| {
            MemoryError::model_caused_by(model, kind, message, source)
        };
        let sent = self
            .http
            .post(url)
            .headers(headers.clone())
            .body(payload.to_vec())
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Err(caused(ModelErrorKind::Timeout, self.timed_out(url), e))
            }
            Err(e) if e.is_connect() => {
                return Ok(Attempt::Retry {
                    error: caused(
                        ModelErrorKind::Unavailable,
                        format!("could not connect to {url}"),
                        e,
                    ),
                    retry_after: None,
                })
            }
            Err(e) => {
                return Err(caused(
                    ModelErrorKind::Other,
                    format!("request to {url} failed"),
                    e,
                ))
            }
        };
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let text = match response.text().await {
            Ok(t) => t,
            Err(e) if e.is_timeout() => {
                return Err(caused(ModelErrorKind::Timeout, self.timed_out(url), e))
            }
            Err(e) => {
                return Err(caused(
                    ModelErrorKind::BadResponse,
                    format!("could not read the answer of {url}"),
                    e,
                ))
            }
        };
        if status.is_success() {
            return serde_json::from_str(&text).map(Attempt::Done).map_err(|e| {
                MemoryError::model_caused_by(
                    model,
                    ModelErrorKind::BadResponse,
                    format!("unexpected answer from {url} (body: {})", snippet(&text)),
                    e,
                )
            });
        }
        let error = http_error(model, url, status, retry_after, &text);
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Ok(Attempt::Retry { error, retry_after })
        } else {
            Err(error)
        }
    }

    fn timed_out(&self, url: &str) -> String {
        format!(
            "request to {url} timed out after {:.1?}",
            self.config.timeout
        )
    }
}

/// The error for an HTTP error `status`: its kind read from the status, the server's
/// own message quoted, its `Retry-After` kept.
fn http_error(
    model: &str,
    url: &str,
    status: StatusCode,
    retry_after: Option<Duration>,
    body: &str,
) -> MemoryError {
    MemoryError::Model {
        model: model.to_owned(),
        kind: ModelErrorKind::from_http_status(status.as_u16()),
        message: format!("{url} answered HTTP {status}: {}", error_message(body)),
        retry_after,
        source: None,
    }
}

/// The delay before retry number `attempt + 1`: `initial * 2^attempt`, capped, plus up
/// to 50% jitter so clients that failed together do not retry together.
fn backoff(initial: Duration, attempt: u32) -> Duration {
    let base = initial
        .saturating_mul(2u32.saturating_pow(attempt.min(16)))
        .min(MAX_BACKOFF);
    base + base.mul_f64(fastrand::f64() * 0.5)
}

/// `Retry-After` in seconds (the HTTP-date form is not honoured; backoff applies then).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let secs: f64 = value.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e6)))
}

/// The server's error message: `{"error": {"message": ...}}` (OpenAI, vLLM),
/// `{"error": "..."}` (Ollama), else the start of the body.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        let error = v.get("error")?;
        error
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    message.unwrap_or_else(|| snippet(body))
}

fn snippet(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    let mut out: String = body.chars().take(ERROR_BODY_CHARS).collect();
    if body.chars().count() > ERROR_BODY_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_bounded_jitter_and_a_cap() {
        let initial = Duration::from_millis(100);
        for attempt in 0..4 {
            let expected = initial * 2u32.pow(attempt);
            let got = backoff(initial, attempt);
            assert!(
                got >= expected && got <= expected.mul_f64(1.5),
                "{attempt}: {got:?}"
            );
        }
        assert!(backoff(initial, 40) <= MAX_BACKOFF.mul_f64(1.5));
    }

    #[test]
    fn retry_after_reads_seconds_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("-1"));
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn http_errors_are_typed_by_status() {
        let kind = |status: u16| {
            let status = StatusCode::from_u16(status).unwrap();
            http_error("m", "http://x/v1", status, None, "{}").model_kind()
        };
        assert_eq!(kind(429), Some(ModelErrorKind::RateLimited));
        assert_eq!(kind(401), Some(ModelErrorKind::Auth));
        assert_eq!(kind(403), Some(ModelErrorKind::Auth));
        assert_eq!(kind(500), Some(ModelErrorKind::Unavailable));
        assert_eq!(kind(503), Some(ModelErrorKind::Unavailable));
        assert_eq!(kind(400), Some(ModelErrorKind::BadRequest));
        assert_eq!(kind(404), Some(ModelErrorKind::BadRequest));
        let limited = http_error(
            "m",
            "http://x/v1",
            StatusCode::TOO_MANY_REQUESTS,
            Some(Duration::from_secs(3)),
            r#"{"error": {"message": "slow down"}}"#,
        );
        assert!(limited.is_retryable());
        assert!(matches!(
            limited,
            MemoryError::Model { retry_after: Some(d), .. } if d == Duration::from_secs(3)
        ));
        assert_eq!(
            limited.to_string(),
            "model `m` failed (rate limited): http://x/v1 answered HTTP 429 Too Many Requests: slow down"
        );
    }

    #[test]
    fn error_messages_come_from_the_usual_shapes() {
        assert_eq!(
            error_message(
                r#"{"error": {"message": "bad model", "type": "invalid_request_error"}}"#
            ),
            "bad model"
        );
        assert_eq!(
            error_message(r#"{"error": "model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("  "), "(empty body)");
        assert!(error_message(&"x".repeat(1000)).ends_with('…'));
    }
}
