//! Request metrics in the Prometheus text format (`GET /metrics`).
//!
//! The label set is bounded whatever clients send: `method` is one of the standard HTTP
//! methods or `OTHER` (a made-up method does not make a series of its own), `route` is the
//! pattern the request matched (`/v1/working-memory/{session_id}`, never the raw path) or
//! `unmatched`, and `status` is the status answered. `/metrics` sits behind the same
//! authentication as the API: with a token configured, it needs the token (an API key
//! gets 403).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use parking_lot::Mutex;

/// Upper bounds of the latency histogram, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Default)]
struct Series {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// (method, route pattern, status).
type SeriesKey = (String, String, u16);

/// Counters and latency histograms per (method, route, status).
#[derive(Clone, Default)]
pub struct Metrics {
    series: Arc<Mutex<HashMap<SeriesKey, Series>>>,
}

impl Metrics {
    /// Records one request.
    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut series = self.series.lock();
        let s = series
            .entry((method.to_owned(), route.to_owned(), status))
            .or_default();
        s.count += 1;
        s.sum += seconds;
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                s.buckets[i] += 1;
            }
        }
    }

    /// The Prometheus text exposition of everything recorded.
    pub fn render(&self) -> String {
        let series = self.series.lock();
        let mut keys: Vec<_> = series.keys().cloned().collect();
        keys.sort();
        let mut out = String::new();
        out.push_str("# HELP agentmem_http_requests_total HTTP requests served.\n");
        out.push_str("# TYPE agentmem_http_requests_total counter\n");
        for key in &keys {
            let (m, r, s) = key;
            let _ = writeln!(
                out,
                "agentmem_http_requests_total{{method=\"{m}\",route=\"{}\",status=\"{s}\"}} {}",
                escape(r),
                series[key].count
            );
        }
        out.push_str("# HELP agentmem_http_request_duration_seconds Time to answer a request.\n");
        out.push_str("# TYPE agentmem_http_request_duration_seconds histogram\n");
        for key in &keys {
            let (m, r, s) = key;
            let r = escape(r);
            let v = &series[key];
            let labels = format!("method=\"{m}\",route=\"{r}\",status=\"{s}\"");
            for (bound, n) in BUCKETS.iter().zip(v.buckets) {
                let _ = writeln!(
                    out,
                    "agentmem_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "agentmem_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                v.count
            );
            let _ = writeln!(
                out,
                "agentmem_http_request_duration_seconds_sum{{{labels}}} {}",
                v.sum
            );
            let _ = writeln!(
                out,
                "agentmem_http_request_duration_seconds_count{{{labels}}} {}",
                v.count
            );
        }
        out
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `method` label of `method`: the standard methods by name, anything else `OTHER`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "OTHER",
    }
}

/// The middleware that records every request under its route pattern (never the raw
/// path, so ids do not explode the series) and its method's label (never a made-up
/// method, so clients cannot grow the series without bound).
pub async fn track(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let response = next.run(request).await;
    metrics.observe(
        method,
        &route,
        response.status().as_u16(),
        start.elapsed().as_secs_f64(),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_histograms() {
        let m = Metrics::default();
        m.observe("GET", "/v1/health", 200, 0.0007);
        m.observe("GET", "/v1/health", 200, 0.2);
        let text = m.render();
        assert!(text.contains(
            "agentmem_http_requests_total{method=\"GET\",route=\"/v1/health\",status=\"200\"} 2"
        ));
        assert!(text.contains("le=\"0.001\"} 1"));
        assert!(text.contains("le=\"+Inf\"} 2"));
    }

    #[test]
    fn made_up_methods_share_one_label() {
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        for made_up in ["FOO", "BREW", "get"] {
            let method = Method::from_bytes(made_up.as_bytes()).unwrap();
            assert_eq!(method_label(&method), "OTHER", "{made_up}");
        }
    }
}
