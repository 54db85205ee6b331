//! Looking inside the Redis Cluster of `AGENTMEM_REDIS_CLUSTER3_URL` with plain
//! connections to its nodes: which node owns a key, and how many keys each node holds.

use std::collections::BTreeMap;

use redis::aio::MultiplexedConnection;

/// The variable naming the three-node cluster (`redis+cluster://HOST:PORT,...`).
pub const CLUSTER3_URL: &str = "AGENTMEM_REDIS_CLUSTER3_URL";

/// The `redis://HOST:PORT/` URL of every seed node of a `redis+cluster://` URL.
pub fn seeds(url: &str) -> Vec<String> {
    let rest = url
        .strip_prefix("redis+cluster://")
        .unwrap_or_else(|| panic!("{CLUSTER3_URL} must be a redis+cluster:// URL, got {url}"));
    let hosts = rest.split(['/', '?']).next().unwrap_or_default();
    hosts.split(',').map(|h| format!("redis://{h}/")).collect()
}

/// A plain connection to the node at `addr` (`host:port`).
pub async fn node(addr: &str) -> MultiplexedConnection {
    redis::Client::open(format!("redis://{addr}/"))
        .expect("node url")
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("connect to cluster node {addr}: {e}"))
}

/// A plain connection to the first seed of `url` that answers.
pub async fn any_node(url: &str) -> MultiplexedConnection {
    for seed in seeds(url) {
        let Ok(client) = redis::Client::open(seed.as_str()) else {
            continue;
        };
        if let Ok(conn) = client.get_multiplexed_async_connection().await {
            return conn;
        }
    }
    panic!("no node of {url} answers");
}

/// Every slot range of the cluster and the address (`host:port`) of the primary owning it.
pub async fn slot_owners(conn: &mut MultiplexedConnection) -> Vec<(u16, u16, String)> {
    let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(conn)
        .await
        .expect("CLUSTER SLOTS");
    let mut out = Vec::new();
    for range in ranges {
        let redis::Value::Array(parts) = range else {
            panic!("CLUSTER SLOTS entry: {range:?}");
        };
        let start: u16 = redis::from_redis_value(parts[0].clone()).expect("start");
        let end: u16 = redis::from_redis_value(parts[1].clone()).expect("end");
        let redis::Value::Array(primary) = &parts[2] else {
            panic!("CLUSTER SLOTS primary: {:?}", parts[2]);
        };
        let host: String = redis::from_redis_value(primary[0].clone()).expect("host");
        let port: u16 = redis::from_redis_value(primary[1].clone()).expect("port");
        out.push((start, end, format!("{host}:{port}")));
    }
    out.sort();
    out
}

/// The primaries of the cluster (`host:port`), sorted.
pub async fn primaries(conn: &mut MultiplexedConnection) -> Vec<String> {
    let mut nodes: Vec<String> = slot_owners(conn)
        .await
        .into_iter()
        .map(|(_, _, n)| n)
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// The primary (`host:port`) owning `key`'s slot.
pub async fn owner_of(conn: &mut MultiplexedConnection, key: &str) -> String {
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(conn)
        .await
        .expect("CLUSTER KEYSLOT");
    slot_owners(conn)
        .await
        .into_iter()
        .find(|(start, end, _)| (*start..=*end).contains(&slot))
        .map(|(_, _, node)| node)
        .unwrap_or_else(|| panic!("no node owns slot {slot}"))
}

/// How many keys starting with `prefix` (no glob characters) each primary holds.
pub async fn keys_per_node(url: &str, prefix: &str) -> BTreeMap<String, usize> {
    let mut any = any_node(url).await;
    let mut out = BTreeMap::new();
    for addr in primaries(&mut any).await {
        let mut conn = node(&addr).await;
        let mut cursor: u64 = 0;
        let mut n = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{prefix}*"))
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await
                .expect("SCAN");
            n += keys.len();
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        out.insert(addr, n);
    }
    out
}

/// Lowercase hex of `id`'s bytes, as the Redis store puts ids into keys.
pub fn hex(id: &str) -> String {
    id.bytes().map(|b| format!("{b:02x}")).collect()
}
