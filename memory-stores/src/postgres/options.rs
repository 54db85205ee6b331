//! The parameters of a `postgres://` URL that set [`PostgresOptions`].

use agentmemory_core::Result;

use super::{PostgresOptions, SynchronousCommit};
use crate::params::UrlParams;

/// The parameters agentmem reads.
const OURS: [&str; 5] = [
    "schema",
    "pool_size",
    "pool_min_size",
    "connect_timeout",
    "synchronous_commit",
];

/// The parameters tokio-postgres reads (0.7), and the TLS ones agentmem takes later.
const DRIVER: [&str; 19] = [
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "sslrootcert",
    "host",
    "hostaddr",
    "port",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// `options` with the URL's `schema`, `pool_size`, `pool_min_size`, `connect_timeout`
/// and `synchronous_commit` applied, and the URL left for the driver. A `key=value` connection string (not a URL)
/// is returned as it is.
pub(super) fn from_url(
    url: &str,
    mut options: PostgresOptions,
) -> Result<(String, PostgresOptions)> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Ok((url.to_owned(), options));
    }
    let params = UrlParams::take(url, &OURS, &DRIVER)?;
    if let Some(schema) = params.get("schema") {
        super::schema::quoted(schema).map_err(|_| {
            params.bad(
                "schema",
                format!("`{schema}` is not a plain lowercase identifier ([a-z_][a-z0-9_]*)"),
            )
        })?;
        options.schema = schema.to_owned();
    }
    if let Some(n) = params.positive("pool_size")? {
        options.max_connections = n;
    }
    if let Some(n) = params.count("pool_min_size")? {
        options.min_connections = n;
    }
    if options.min_connections > options.max_connections {
        return Err(params.bad(
            "pool_min_size",
            format!(
                "{} is more than the pool size {}",
                options.min_connections, options.max_connections
            ),
        ));
    }
    if let Some(timeout) = params.seconds("connect_timeout")? {
        options.connect_timeout = timeout;
    }
    if let Some(level) = params.get("synchronous_commit") {
        options.synchronous_commit = Some(
            level
                .parse::<SynchronousCommit>()
                .map_err(|e| params.bad("synchronous_commit", e.to_string()))?,
        );
    }
    Ok((params.rest, options))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentmemory_core::MemoryError;

    use super::*;

    fn parameter_of(result: Result<(String, PostgresOptions)>) -> String {
        match result {
            Err(MemoryError::UrlParameter { parameter, .. }) => parameter,
            Err(e) => panic!("another error: {e}"),
            Ok((url, _)) => panic!("accepted: {url}"),
        }
    }

    #[test]
    fn defaults_are_kept_without_parameters() {
        let (url, options) = from_url("postgres://me@db/app", PostgresOptions::default()).unwrap();
        assert_eq!(url, "postgres://me@db/app");
        assert_eq!(options.schema, "agentmem");
        assert_eq!(options.max_connections, 16);
        assert_eq!(options.min_connections, 0);
        assert_eq!(options.connect_timeout, Duration::from_secs(3));
    }

    #[test]
    fn schema_sets_the_schema_and_must_be_an_identifier() {
        let (url, o) = from_url(
            "postgresql://me@db/app?sslmode=disable&schema=tenant_a",
            PostgresOptions::default(),
        )
        .unwrap();
        assert_eq!(o.schema, "tenant_a");
        assert_eq!(url, "postgresql://me@db/app?sslmode=disable");
        let bad = from_url(
            "postgres://db/app?schema=a%3Bdrop",
            PostgresOptions::default(),
        );
        assert_eq!(parameter_of(bad), "schema");
    }

    #[test]
    fn pool_size_sets_the_largest_pool() {
        let (_, o) = from_url("postgres://db/app?pool_size=4", PostgresOptions::default()).unwrap();
        assert_eq!(o.max_connections, 4);
        for bad in ["0", "-1", "many", ""] {
            let url = format!("postgres://db/app?pool_size={bad}");
            assert_eq!(
                parameter_of(from_url(&url, PostgresOptions::default())),
                "pool_size"
            );
        }
    }

    #[test]
    fn pool_min_size_is_at_most_the_pool_size() {
        let (_, o) = from_url(
            "postgres://db/app?pool_size=4&pool_min_size=2",
            PostgresOptions::default(),
        )
        .unwrap();
        assert_eq!((o.min_connections, o.max_connections), (2, 4));
        let over = from_url(
            "postgres://db/app?pool_size=2&pool_min_size=3",
            PostgresOptions::default(),
        );
        assert_eq!(parameter_of(over), "pool_min_size");
        let bad = from_url(
            "postgres://db/app?pool_min_size=x",
            PostgresOptions::default(),
        );
        assert_eq!(parameter_of(bad), "pool_min_size");
    }

    #[test]
    fn connect_timeout_is_in_seconds() {
        let (url, o) = from_url(
            "postgres://db/app?connect_timeout=0.5",
            PostgresOptions::default(),
        )
        .unwrap();
        assert_eq!(o.connect_timeout, Duration::from_millis(500));
        assert_eq!(url, "postgres://db/app", "taken off for the driver");
        let bad = from_url(
            "postgres://db/app?connect_timeout=0",
            PostgresOptions::default(),
        );
        assert_eq!(parameter_of(bad), "connect_timeout");
    }

    #[test]
    fn synchronous_commit_sets_the_commit_durability() {
        let (url, o) = from_url(
            "postgres://db/app?synchronous_commit=off&sslmode=disable",
            PostgresOptions::default(),
        )
        .unwrap();
        assert_eq!(o.synchronous_commit, Some(SynchronousCommit::Off));
        assert_eq!(url, "postgres://db/app?sslmode=disable", "taken off");
        let (_, o) = from_url(
            "postgres://db/app?synchronous_commit=remote_apply",
            PostgresOptions::default(),
        )
        .unwrap();
        assert_eq!(o.synchronous_commit, Some(SynchronousCommit::RemoteApply));
        let (_, o) = from_url("postgres://db/app", PostgresOptions::default()).unwrap();
        assert_eq!(o.synchronous_commit, None, "the server's own by default");
        for bad in ["sometimes", "", "off;drop"] {
            let url = format!("postgres://db/app?synchronous_commit={bad}");
            assert_eq!(
                parameter_of(from_url(&url, PostgresOptions::default())),
                "synchronous_commit"
            );
        }
    }

    #[test]
    fn unknown_parameters_are_refused_by_name() {
        let err = from_url(
            "postgres://me:secret@db/app?sslmode=disable&pool_max=3",
            PostgresOptions::default(),
        )
        .expect_err("refused");
        let text = err.to_string();
        assert!(text.contains("`pool_max`"), "{text}");
        assert!(text.contains("pool_size"), "lists what is known: {text}");
        assert!(!text.contains("secret"), "{text}");
    }

    #[test]
    fn connection_strings_are_left_alone() {
        let (url, o) = from_url("host=db user=me", PostgresOptions::default()).unwrap();
        assert_eq!(url, "host=db user=me");
        assert_eq!(o.schema, "agentmem");
    }
}
