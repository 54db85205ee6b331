//! A TCP proxy in front of a server that counts round trips: how many times a client
//! sent something after the server had answered it (its first bytes count as one). A
//! client that pipelines several requests and then waits for their answers makes one;
//! one that waits for each answer before the next request makes one per request.
//!
//! Exact for a client whose requests of one operation leave in one write, which holds on
//! a current-thread runtime (the drivers' connection tasks run only once the caller
//! waits, so everything it queued goes out together).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use agentmemory_core::{FactCandidate, UserMemoryStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The proxy; it serves until the test's runtime ends.
pub struct TurnCounter {
    addr: SocketAddr,
    turns: Arc<AtomicUsize>,
}

impl TurnCounter {
    /// Listens on a free local port and forwards every connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let turns = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&turns);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                tokio::spawn(relay(client, server, Arc::clone(&counted)));
            }
        });
        Self { addr, turns }
    }

    /// `url` (`scheme://[userinfo@]host:port/...`) pointed at this proxy instead.
    pub fn url(&self, url: &str) -> String {
        let (before, after) = authority_bounds(url);
        format!("{}{}{}", &url[..before], self.addr, &url[after..])
    }

    /// Round trips since the last call (or the start), and starts counting again.
    pub fn take(&self) -> usize {
        self.turns.swap(0, Ordering::SeqCst)
    }
}

/// The `host:port` a `scheme://[userinfo@]host:port/...` URL names.
pub fn upstream(url: &str) -> SocketAddr {
    let (before, after) = authority_bounds(url);
    url[before..after].parse().unwrap_or_else(|e| {
        panic!(
            "`{}` is not an IP address and port: {e}",
            &url[before..after]
        )
    })
}

/// Where the `host:port` of `url` starts and ends.
fn authority_bounds(url: &str) -> (usize, usize) {
    let start = url.find("://").expect("a URL") + 3;
    let end = url[start..].find('/').map_or(url.len(), |i| start + i);
    let host = url[start..end].rfind('@').map_or(start, |i| start + i + 1);
    (host, end)
}

async fn relay(client: TcpStream, server: TcpStream, turns: Arc<AtomicUsize>) {
    let (mut client_rx, mut client_tx) = client.into_split();
    let (mut server_rx, mut server_tx) = server.into_split();
    // Whether the server has answered since the client last sent.
    let answered = Arc::new(AtomicBool::new(true));
    let heard = Arc::clone(&answered);
    let up = async move {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = client_rx.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if answered.swap(false, Ordering::SeqCst) {
                turns.fetch_add(1, Ordering::SeqCst);
            }
            if server_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = server_tx.shutdown().await;
    };
    let down = async move {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = server_rx.read(&mut buf).await {
            if n == 0 {
                break;
            }
            heard.store(true, Ordering::SeqCst);
            if client_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = client_tx.shutdown().await;
    };
    tokio::join!(up, down);
}

/// Upserts of a user whose facts `store` (connected through `proxy`) keeps, each of every
/// kind (added, reinforced, superseded, ignored) taking one round trip.
pub async fn check_kept_upserts_take_one_round_trip(
    store: &dyn UserMemoryStore,
    proxy: &TurnCounter,
    user: &str,
) {
    let _ = store.forget_user(user).await;
    let lives =
        |v: &str| FactCandidate::new(format!("lives in {v}"), 0.9).with_attribute("location", v);
    // The user's facts read once and kept, and (PostgreSQL) the statements prepared on
    // the connection.
    store
        .upsert(user, FactCandidate::new("likes tea", 0.7))
        .await
        .expect("add");
    store.upsert(user, lives("Porto")).await.expect("add");
    proxy.take();
    let steps = [
        (FactCandidate::new("collects stamps, album 1", 0.6), "added"),
        (FactCandidate::new("collects stamps, album 2", 0.6), "added"),
        (FactCandidate::new("likes tea", 0.7), "reinforced"),
        (lives("Lyon"), "superseded"),
        // Out of range: reconciliation ignores it, and nothing is written.
        (FactCandidate::new("likes jazz", 1.5), "ignored"),
    ];
    for (candidate, kind) in steps {
        let text = candidate.text.clone();
        let change = store.upsert(user, candidate).await.expect("upsert");
        assert_eq!(change.kind(), kind, "{text}: {change:?}");
        assert_eq!(
            proxy.take(),
            1,
            "round trips of the {kind} upsert of `{text}`"
        );
    }
    assert_eq!(
        super::held_texts(store, user).await,
        [
            "collects stamps, album 1",
            "collects stamps, album 2",
            "likes tea",
            "lives in Lyon"
        ]
    );
    store.forget_user(user).await.expect("forget");
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_authority_is_found_with_or_without_user_info() {
        let (a, b) = super::authority_bounds("postgres://me@127.0.0.1:5440/app");
        assert_eq!(&"postgres://me@127.0.0.1:5440/app"[a..b], "127.0.0.1:5440");
        let (a, b) = super::authority_bounds("redis://127.0.0.1:6390/");
        assert_eq!(&"redis://127.0.0.1:6390/"[a..b], "127.0.0.1:6390");
    }
}
