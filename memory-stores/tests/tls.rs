//! `RedisStore` and `PostgresStore` over TLS, against the servers `.ci/services.sh` starts
//! for this file: a Redis that listens only on TLS (`AGENTMEM_REDIS_TLS_URL`), a Redis
//! Cluster node that does too (`AGENTMEM_REDIS_CLUSTER_TLS_URL`, `rediss+cluster://`), a PostgreSQL
//! whose `pg_hba.conf` rejects every connection without TLS (`AGENTMEM_POSTGRES_TLS_URL`),
//! both with a certificate for localhost/127.0.0.1 signed by `AGENTMEM_TLS_CA`, plus an
//! unrelated CA (`AGENTMEM_TLS_WRONG_CA`) and the plain PostgreSQL (`AGENTMEM_POSTGRES_URL`).
//!
//! Since neither TLS server accepts a plain connection, every store that works here talked
//! TLS. With `CI=true` a missing variable fails the test; otherwise it is skipped with a
//! message naming the variable.
#![cfg(all(feature = "redis", feature = "postgres"))]

mod common;

use agentmemory_core::MemoryError;
use agentmemory_stores::{PostgresStore, RedisStore, TlsError};
use common::*;

/// The values of `vars`, or `None` (after `server_url`'s message) when one is missing.
fn env(vars: &[&str]) -> Option<Vec<String>> {
    vars.iter().map(|v| server_url(v)).collect()
}

/// `url` with the password `hunter2` added to its user, to check it never shows.
fn with_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    match rest.split_once('@') {
        Some((user, host)) => format!("{scheme}://{user}:hunter2@{host}"),
        None => format!("{scheme}://:hunter2@{rest}"),
    }
}

/// `url` with `params` appended to its query.
fn with_query(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// The [`TlsError`] behind `err`, which must be a store error of `store` whose text names
/// the URL with its password hidden.
fn tls_error(err: &MemoryError, store: &str) -> TlsError {
    assert_store_error(err, store);
    let text = err.chain().to_string();
    assert!(
        text.contains(":***@"),
        "the URL, password hidden, is named: {text}"
    );
    assert!(
        !text.contains("hunter2"),
        "the password never shows: {text}"
    );
    let MemoryError::Store { source, .. } = err else {
        unreachable!()
    };
    source
        .downcast_ref::<TlsError>()
        .unwrap_or_else(|| panic!("the source is a TlsError: {err:?}"))
        .clone()
}

// ---------------------------------------------------------------- PostgreSQL

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_verify_full_and_require_round_trip_every_store() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_TLS_URL", "AGENTMEM_TLS_CA"]) else {
        return;
    };
    let verified = with_query(&v[0], &format!("sslmode=verify-full&sslrootcert={}", v[1]));
    let a = PostgresStore::connect(&verified)
        .await
        .expect("verify-full with the right CA");
    // `require` without a root certificate encrypts without verifying (as libpq): the
    // test CA is in no platform store, yet this connects.
    let b = PostgresStore::connect(&with_query(&v[0], "sslmode=require"))
        .await
        .expect("require without sslrootcert");
    two_instances_share((&a, &a, &a), (&b, &b, &b)).await;
}

#[tokio::test]
async fn postgres_prefer_is_the_default_and_takes_tls_when_offered() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_TLS_URL"]) else {
        return;
    };
    let store = PostgresStore::connect(&v[0])
        .await
        .expect("default sslmode (prefer) against a TLS-only server");
    let conv = fresh("prefer");
    agentmemory_core::ConversationStore::append(&store, &conv, vec![msg("over tls")])
        .await
        .expect("append");
    let events = agentmemory_core::ConversationStore::load(&store, &conv)
        .await
        .expect("load");
    assert_eq!(text_of(&events[0].event), "over tls");
    agentmemory_core::ConversationStore::delete(&store, &conv)
        .await
        .expect("cleanup");
}

#[tokio::test]
async fn postgres_disable_against_a_tls_only_server_fails_and_is_no_tls_error() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_TLS_URL"]) else {
        return;
    };
    let err = PostgresStore::connect(&with_query(&v[0], "sslmode=disable"))
        .await
        .expect_err("pg_hba.conf rejects connections without TLS");
    assert_store_error(&err, "postgres");
    let MemoryError::Store { source, .. } = &err else {
        unreachable!()
    };
    assert!(source.downcast_ref::<TlsError>().is_none(), "{err:?}");
    let mut reasons = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&**source);
    while let Some(e) = next {
        reasons.push(e.to_string());
        next = e.source();
    }
    let reasons = reasons.join(": ");
    assert!(reasons.contains("no encryption"), "{reasons}");
}

#[tokio::test]
async fn postgres_require_against_a_plain_server_is_refused() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_URL"]) else {
        return;
    };
    for mode in ["require", "verify-ca", "verify-full"] {
        let url = with_query(&with_password(&v[0]), &format!("sslmode={mode}"));
        let err = PostgresStore::connect(&url)
            .await
            .expect_err("the plain server offers no TLS");
        let expected_mode = mode;
        assert!(
            matches!(tls_error(&err, "postgres"), TlsError::Refused { mode } if mode == expected_mode),
            "{err}"
        );
        assert!(
            err.chain().to_string().contains("does not offer TLS"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn postgres_verify_full_or_require_with_the_wrong_ca_is_a_certificate_error() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_TLS_URL", "AGENTMEM_TLS_WRONG_CA"]) else {
        return;
    };
    // `require` with a root certificate checks the chain, as libpq does.
    for mode in ["verify-full", "verify-ca", "require"] {
        let url = with_query(
            &with_password(&v[0]),
            &format!("sslmode={mode}&sslrootcert={}", v[1]),
        );
        let err = PostgresStore::connect(&url)
            .await
            .expect_err("a certificate from another CA");
        assert!(
            matches!(tls_error(&err, "postgres"), TlsError::Certificate { .. }),
            "{mode}: {err}"
        );
        assert!(err.chain().to_string().contains("UnknownIssuer"), "{err}");
    }
}

#[tokio::test]
async fn postgres_verify_full_checks_the_host_name_and_verify_ca_does_not() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_TLS_URL", "AGENTMEM_TLS_CA"]) else {
        return;
    };
    // The certificate names localhost and 127.0.0.1; `hostaddr` reaches the same server
    // under a name it does not cover.
    let url = v[0].replacen("@localhost:", "@agentmem-tls.invalid:", 1);
    assert_ne!(url, v[0], "the TLS URL names localhost");
    let url = with_query(&url, &format!("hostaddr=127.0.0.1&sslrootcert={}", v[1]));
    PostgresStore::connect(&with_query(&url, "sslmode=verify-ca"))
        .await
        .expect("verify-ca accepts a certificate for another host name");
    let err = PostgresStore::connect(&with_password(&with_query(&url, "sslmode=verify-full")))
        .await
        .expect_err("verify-full checks the host name");
    assert!(
        matches!(tls_error(&err, "postgres"), TlsError::Certificate { .. }),
        "{err}"
    );
    assert!(
        err.chain().to_string().contains("not valid for name"),
        "{err}"
    );
}

#[tokio::test]
async fn postgres_bad_sslmode_or_missing_root_file_is_a_typed_error() {
    let Some(v) = env(&["AGENTMEM_POSTGRES_TLS_URL"]) else {
        return;
    };
    let err = PostgresStore::connect(&with_query(&v[0], "sslmode=verify"))
        .await
        .expect_err("no such sslmode");
    assert!(
        matches!(err, MemoryError::InvalidArgument { .. }),
        "{err:?}"
    );
    let url = with_query(
        &with_password(&v[0]),
        "sslmode=verify-full&sslrootcert=/nonexistent/agentmem-ca.pem",
    );
    let err = PostgresStore::connect(&url)
        .await
        .expect_err("no root file");
    assert!(
        matches!(
            tls_error(&err, "postgres"),
            TlsError::RootCertificates { .. }
        ),
        "{err}"
    );
}

// --------------------------------------------------------------------- Redis

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_rediss_with_the_ca_round_trips_every_store() {
    let Some(v) = env(&["AGENTMEM_REDIS_TLS_URL", "AGENTMEM_TLS_CA"]) else {
        return;
    };
    let url = with_query(&v[0], &format!("sslrootcert={}", v[1]));
    let a = RedisStore::connect(&url).await.expect("rediss with the CA");
    let b = RedisStore::connect(&url).await.expect("rediss with the CA");
    two_instances_share((&a, &a, &a), (&b, &b, &b)).await;
}

#[tokio::test]
async fn redis_rediss_with_the_wrong_ca_or_platform_roots_is_a_certificate_error() {
    let Some(v) = env(&["AGENTMEM_REDIS_TLS_URL", "AGENTMEM_TLS_WRONG_CA"]) else {
        return;
    };
    let wrong = with_query(&with_password(&v[0]), &format!("sslrootcert={}", v[1]));
    // Without sslrootcert the platform's roots are used, and they do not hold the test CA.
    for url in [wrong, with_password(&v[0])] {
        let err = RedisStore::connect(&url)
            .await
            .expect_err("a certificate from an untrusted CA");
        assert!(
            matches!(tls_error(&err, "redis"), TlsError::Certificate { .. }),
            "{url}: {err}"
        );
    }
}

#[tokio::test]
async fn redis_insecure_fragment_is_refused_and_only_the_named_option_skips_the_checks() {
    let Some(v) = env(&["AGENTMEM_REDIS_TLS_URL"]) else {
        return;
    };
    // A URL fragment never turns verification off: refused before connecting.
    let err = RedisStore::connect(&format!("{}#insecure", with_password(&v[0])))
        .await
        .expect_err("#insecure is refused");
    assert!(
        matches!(err, MemoryError::InvalidArgument { .. }),
        "{err:?}"
    );
    let text = err.chain().to_string();
    assert!(text.contains("danger_accept_invalid_certs"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    // The server's certificate is signed by a CA the platform does not trust: only the
    // explicitly named option accepts it.
    let options = || agentmemory_stores::RedisOptions {
        danger_accept_invalid_certs: true,
        ..Default::default()
    };
    let store = RedisStore::connect_with(&v[0], options())
        .await
        .expect("danger_accept_invalid_certs accepts any certificate");
    let ns = fresh("insecure");
    let entry = agentmemory_core::MemoryEntry::new(
        agentmemory_core::MemoryScope::Working,
        "k",
        "over tls".into(),
    );
    agentmemory_core::KvStore::put(&store, &ns, entry)
        .await
        .expect("put");
    let got = agentmemory_core::KvStore::get(&store, &ns, "k")
        .await
        .expect("get")
        .expect("the entry");
    assert_eq!(got.content, serde_json::json!("over tls"));
    agentmemory_core::KvStore::clear(&store, &ns)
        .await
        .expect("cleanup");
}

#[tokio::test]
async fn redis_sslrootcert_on_a_plain_url_or_a_missing_file_is_a_typed_error() {
    let Some(v) = env(&["AGENTMEM_REDIS_TLS_URL", "AGENTMEM_TLS_CA"]) else {
        return;
    };
    let plain = v[0].replacen("rediss://", "redis://", 1);
    let err = RedisStore::connect(&with_query(&plain, &format!("sslrootcert={}", v[1])))
        .await
        .expect_err("sslrootcert needs rediss://");
    assert!(
        matches!(err, MemoryError::InvalidArgument { .. }),
        "{err:?}"
    );
    let url = with_query(
        &with_password(&v[0]),
        "sslrootcert=/nonexistent/agentmem-ca.pem",
    );
    let err = RedisStore::connect(&url).await.expect_err("no root file");
    assert!(
        matches!(tls_error(&err, "redis"), TlsError::RootCertificates { .. }),
        "{err}"
    );
}

// ------------------------------------------------------- Redis Cluster over TLS

/// `rediss+cluster://` with the CA: every store works through the cluster client over a
/// cluster node that listens only on TLS (`AGENTMEM_REDIS_CLUSTER_TLS_URL`, also on the
/// cluster bus), so every connection the client opened, seed and discovered, talked TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_cluster_over_tls_with_the_ca_round_trips_every_store() {
    let Some(v) = env(&["AGENTMEM_REDIS_CLUSTER_TLS_URL", "AGENTMEM_TLS_CA"]) else {
        return;
    };
    let url = with_query(&v[0], &format!("sslrootcert={}", v[1]));
    let a = RedisStore::connect(&url)
        .await
        .expect("rediss+cluster with the CA");
    let b = RedisStore::connect(&url)
        .await
        .expect("rediss+cluster with the CA");
    two_instances_share((&a, &a, &a), (&b, &b, &b)).await;
    let conv = fresh("tls-cluster");
    agentmemory_core::ConversationStore::append(&a, &conv, vec![msg("hi")])
        .await
        .expect("append");
    assert!(agentmemory_core::ConversationStore::list_conversations(&b)
        .await
        .expect("list")
        .contains(&conv));
    agentmemory_core::ConversationStore::delete(&a, &conv)
        .await
        .expect("cleanup");
}

/// The cluster form checks certificates as the single-server one does: an untrusted CA
/// is a certificate error naming the URL (password hidden), `#insecure` is refused, and
/// only `danger_accept_invalid_certs` skips the checks.
#[tokio::test]
async fn redis_cluster_over_tls_checks_the_certificate() {
    let Some(v) = env(&["AGENTMEM_REDIS_CLUSTER_TLS_URL", "AGENTMEM_TLS_WRONG_CA"]) else {
        return;
    };
    let wrong = with_query(&with_password(&v[0]), &format!("sslrootcert={}", v[1]));
    for url in [wrong, with_password(&v[0])] {
        let err = RedisStore::connect(&url)
            .await
            .expect_err("a certificate from an untrusted CA");
        assert!(
            matches!(tls_error(&err, "redis"), TlsError::Certificate { .. }),
            "{url}: {err}"
        );
    }
    let err = RedisStore::connect(&format!("{}#insecure", v[0]))
        .await
        .expect_err("#insecure is refused");
    assert!(
        matches!(err, MemoryError::InvalidArgument { .. }),
        "{err:?}"
    );
    let store = RedisStore::connect_with(
        &v[0],
        agentmemory_stores::RedisOptions {
            danger_accept_invalid_certs: true,
            ..Default::default()
        },
    )
    .await
    .expect("danger_accept_invalid_certs accepts any certificate");
    let ns = fresh("insecure-cluster");
    let entry = agentmemory_core::MemoryEntry::new(
        agentmemory_core::MemoryScope::Working,
        "k",
        "over tls".into(),
    );
    agentmemory_core::KvStore::put(&store, &ns, entry)
        .await
        .expect("put");
    assert!(agentmemory_core::KvStore::get(&store, &ns, "k")
        .await
        .expect("get")
        .is_some());
    agentmemory_core::KvStore::clear(&store, &ns)
        .await
        .expect("cleanup");
}
