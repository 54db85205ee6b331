//! The cluster form of the Redis URL, and connecting to a Redis Cluster through it.
//!
//! ```text
//! redis+cluster://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...][/][?PARAMS]
//! rediss+cluster://...                                  (TLS to every node)
//! ```
//!
//! The comma-separated nodes are seeds: the client asks them for the cluster's slot map
//! and then talks to every primary it names (the seeds need not be all of them, and one
//! reachable seed is enough). The user info and the parameters apply to every node.

use agentmemory_core::{MemoryError, Result};
use redis::cluster::ClusterClientBuilder;

use super::conn::Conn;
use super::{RedisOptions, STORE};

/// The scheme of a cluster URL, plain and over TLS.
const CLUSTER: &str = "redis+cluster";
const CLUSTER_TLS: &str = "rediss+cluster";

/// Whether `url` names a Redis Cluster (`redis+cluster://` or `rediss+cluster://`).
pub(crate) fn is_cluster_url(url: &str) -> bool {
    url.split_once("://")
        .is_some_and(|(scheme, _)| scheme == CLUSTER || scheme == CLUSTER_TLS)
}

/// Whether `url` is the TLS cluster form.
pub(crate) fn is_tls(url: &str) -> bool {
    url.starts_with("rediss+cluster://")
}

/// One `redis://` (or `rediss://`) URL per seed node of a cluster URL, each with the
/// URL's user info, path and parameters. `url` shows in errors as `shown`.
pub(crate) fn seed_urls(url: &str, shown: &str) -> Result<Vec<String>> {
    let bad = |why: &str| MemoryError::invalid("redis cluster URL", format!("`{shown}`: {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .filter(|(s, _)| *s == CLUSTER || *s == CLUSTER_TLS)
        .ok_or_else(|| bad("expected redis+cluster:// or rediss+cluster://"))?;
    let node_scheme = if scheme == CLUSTER_TLS {
        "rediss"
    } else {
        "redis"
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (format!("{user}@"), hosts),
        None => (String::new(), authority),
    };
    if hosts.is_empty() {
        return Err(bad("names no node; give HOST:PORT[,HOST:PORT...]"));
    }
    hosts
        .split(',')
        .map(|host| {
            if host.trim().is_empty() {
                Err(bad("has an empty node between commas"))
            } else {
                Ok(format!("{node_scheme}://{userinfo}{host}{tail}"))
            }
        })
        .collect()
}

/// `pool_size` connections to the cluster of `url` (see [`seed_urls`]): each one a
/// multiplexed [`redis::cluster_async::ClusterConnection`] with the options' timeouts.
/// `root_cert` is the PEM of the CA to trust (TLS only).
pub(crate) async fn connect(
    url: &str,
    shown: &str,
    root_cert: Option<Vec<u8>>,
    options: &RedisOptions,
) -> Result<Vec<Conn>> {
    let seeds = seed_urls(url, shown)?;
    let tls = is_tls(url);
    let mut builder = ClusterClientBuilder::new(seeds)
        .connection_timeout(options.connect_timeout)
        .response_timeout(options.response_timeout)
        // A node that is down fails its commands after a few quick retries (the slot map
        // refreshed in between), not after the crate's default of 16 with waits of seconds.
        .retries(3)
        .min_retry_wait(10)
        .max_retry_wait(500);
    if let Some(pem) = root_cert {
        builder = builder.certs(redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(pem),
        });
    }
    if tls && options.danger_accept_invalid_certs {
        tracing::warn!(
            url = %shown,
            "TLS certificate checks are off for this Redis Cluster \
             (RedisOptions::danger_accept_invalid_certs)"
        );
        builder = builder.tls(redis::TlsMode::Insecure);
    }
    let client = builder
        .build()
        .map_err(|e| MemoryError::invalid("redis cluster URL", format!("`{shown}`: {e}")))?;
    let bound = options.connect_timeout * 3;
    let mut conns = Vec::with_capacity(options.pool_size.max(1));
    for _ in 0..options.pool_size.max(1) {
        let conn = tokio::time::timeout(bound, client.get_async_connection())
            .await
            .map_err(|_| MemoryError::store(STORE, format!("connect to {shown}"), "timed out"))?
            .map_err(|e| super::connect_error(e, tls, shown))?;
        conns.push(Conn::Cluster(conn));
    }
    Ok(conns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_gets_the_user_info_path_and_parameters() {
        let url = "redis+cluster://u:pw@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002/?protocol=resp3";
        assert_eq!(
            seed_urls(url, "shown").expect("seeds"),
            [
                "redis://u:pw@10.0.0.1:7000/?protocol=resp3",
                "redis://u:pw@10.0.0.2:7001/?protocol=resp3",
                "redis://u:pw@[::1]:7002/?protocol=resp3",
            ]
        );
        assert_eq!(
            seed_urls("rediss+cluster://h:1", "shown").expect("seeds"),
            ["rediss://h:1"]
        );
        assert!(is_cluster_url(url));
        assert!(is_cluster_url("rediss+cluster://h:1/"));
        assert!(!is_cluster_url("redis://h:1/"));
        assert!(is_tls("rediss+cluster://h:1/") && !is_tls(url));
    }

    #[test]
    fn a_cluster_url_without_nodes_is_refused() {
        for url in [
            "redis+cluster:///",
            "redis+cluster://u:p@/",
            "redis+cluster://h:1,,h:2/",
            "redis+cluster://h:1,/",
            "redis://h:1/",
        ] {
            let err = seed_urls(url, "shown").expect_err(url);
            assert!(matches!(err, MemoryError::InvalidArgument { .. }), "{err}");
        }
    }
}
