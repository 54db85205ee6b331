//! One connection of a [`RedisStore`](super::RedisStore): to a single server (through the
//! reconnecting [`ConnectionManager`]) or to a Redis Cluster (through redis-rs's
//! [`ClusterConnection`], which routes every command to the primary owning its keys' slot,
//! follows `MOVED`/`ASK` redirections and reconnects to nodes that come back).
//!
//! Both are multiplexed and cheap to clone; the store's commands run on either through
//! [`ConnectionLike`], so the stores' code differs only where a cluster needs it: a
//! pipeline runs on one node, so one whose commands touch several hash slots is split (see
//! [`Conn::is_cluster`]), and a keyspace scan visits every primary ([`Conn::primaries`]).

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A connection to one server or to a cluster.
#[derive(Clone)]
pub(crate) enum Conn {
    /// A single server (or a cluster node used as one).
    Single(ConnectionManager),
    /// A Redis Cluster, every command routed by its keys' slot.
    Cluster(ClusterConnection),
}

impl Conn {
    /// Whether commands are routed over a cluster: a pipeline (or `MULTI`) must then keep
    /// to one hash slot, and a scan must visit every primary.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self, Conn::Cluster(_))
    }

    /// The address (`host:port`) of every primary of the cluster; empty for a single
    /// server, whose commands need no routing.
    pub(crate) async fn primaries(&mut self) -> redis::RedisResult<Vec<(String, u16)>> {
        let Conn::Cluster(conn) = self else {
            return Ok(Vec::new());
        };
        // With no response policy, a multi-node command answers with a map of each node's
        // address to its reply.
        let routing = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
        let answer = conn.route_command(redis::cmd("PING"), routing).await?;
        let Value::Map(replies) = answer else {
            return Err(unexpected("PING to every primary", &answer));
        };
        let mut out = Vec::with_capacity(replies.len());
        for (addr, reply) in replies {
            if let Value::ServerError(e) = reply {
                return Err(e.into());
            }
            let addr: String = redis::from_redis_value(addr)?;
            let parsed = addr
                .rsplit_once(':')
                .and_then(|(host, port)| Some((host.to_owned(), port.parse().ok()?)));
            match parsed {
                Some(node) => out.push(node),
                None => return Err(unexpected("node address", &Value::SimpleString(addr))),
            }
        }
        out.sort();
        Ok(out)
    }

    /// Runs `cmd` on the node at `host:port` (a primary named by [`Conn::primaries`]);
    /// on a single server, on that server.
    pub(crate) async fn on_node<T: redis::FromRedisValue>(
        &mut self,
        (host, port): &(String, u16),
        cmd: Cmd,
    ) -> redis::RedisResult<T> {
        match self {
            Conn::Single(conn) => cmd.query_async(conn).await,
            Conn::Cluster(conn) => {
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: host.clone(),
                    port: *port,
                });
                Ok(redis::from_redis_value(
                    conn.route_command(cmd, routing).await?,
                )?)
            }
        }
    }
}

impl Conn {
    /// Every key matching `pattern`, scanned on every primary of a cluster (each holds
    /// only its own slots' keys) or on the single server. `SCAN` may return a key twice;
    /// the caller dedups if it matters.
    pub(crate) async fn scan_all(&mut self, pattern: &str) -> redis::RedisResult<Vec<String>> {
        let nodes = self.primaries().await?;
        let mut out = Vec::new();
        if nodes.is_empty() {
            self.scan_node(None, pattern, &mut out).await?;
        }
        for node in &nodes {
            self.scan_node(Some(node), pattern, &mut out).await?;
        }
        Ok(out)
    }

    /// The keys matching `pattern` on `node` (or the single server), added to `out`.
    async fn scan_node(
        &mut self,
        node: Option<&(String, u16)>,
        pattern: &str,
        out: &mut Vec<String>,
    ) -> redis::RedisResult<()> {
        let mut cursor: u64 = 0;
        loop {
            let (next, keys) = self.scan_page(node, cursor, pattern).await?;
            out.extend(keys);
            cursor = next;
            if cursor == 0 {
                return Ok(());
            }
        }
    }

    /// One `SCAN` step from `cursor` on `node` (a primary named by [`Conn::primaries`])
    /// or on the single server: the next cursor (0 at the end) and the keys matching
    /// `pattern` it found.
    pub(crate) async fn scan_page(
        &mut self,
        node: Option<&(String, u16)>,
        cursor: u64,
        pattern: &str,
    ) -> redis::RedisResult<(u64, Vec<String>)> {
        let mut scan = redis::cmd("SCAN");
        scan.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000);
        match node {
            Some(node) => self.on_node(node, scan).await,
            None => scan.query_async(self).await,
        }
    }
}

fn unexpected(what: &str, value: &Value) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected reply from the cluster",
        format!("{what}: {value:?}"),
    ))
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(conn) => conn.req_packed_command(cmd),
            Conn::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(conn) => conn.get_db(),
            Conn::Cluster(conn) => conn.get_db(),
        }
    }
}
