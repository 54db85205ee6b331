//! Connecting to a `rediss://` URL keeps the rustls provider the application installed
//! (a process-wide setting, hence a test binary of its own). No server is needed: the
//! provider is settled before the connection is tried.
#![cfg(feature = "redis")]

use std::sync::Arc;
use std::time::Duration;

use agentmemory_stores::{RedisOptions, RedisStore};
use rustls::crypto::{ring, CryptoProvider};

#[tokio::test]
async fn an_installed_crypto_provider_is_kept() {
    // The application's own provider: ring with a single cipher suite, recognisable.
    let mut mine = ring::default_provider();
    mine.cipher_suites.truncate(1);
    assert!(
        mine.install_default().is_ok(),
        "no provider before this test"
    );

    let options = RedisOptions {
        connect_timeout: Duration::from_millis(200),
        ..Default::default()
    };
    // A closed port: the connection fails (as a store error, not a panic over the
    // provider), after the provider was settled.
    let err = RedisStore::connect_with("rediss://127.0.0.1:9/", options)
        .await
        .expect_err("nothing listens there");
    assert!(
        matches!(err, agentmemory_core::MemoryError::Store { .. }),
        "{err:?}"
    );

    let installed: Arc<CryptoProvider> =
        CryptoProvider::get_default().cloned().expect("a provider");
    assert_eq!(
        installed.cipher_suites.len(),
        1,
        "connecting replaced the application's provider"
    );
}
