//! TLS for the server stores (Redis, PostgreSQL), with rustls and its `ring` provider.
//!
//! What goes wrong is reported as a [`TlsError`], the `source` of the
//! [`MemoryError::Store`](agentmemory_core::MemoryError::Store) a connect returns, so callers can
//! tell a server that refused TLS or a rejected certificate from an unreachable server.

use std::error::Error as StdError;
use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// Why a TLS connection to a store's server could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The server does not offer TLS, and the URL requires it.
    #[error("the server does not offer TLS, and sslmode={mode} requires it")]
    Refused {
        /// The `sslmode` of the URL.
        mode: &'static str,
    },
    /// The server's certificate did not pass the checks the URL asks for (unknown issuer,
    /// expired, not valid for the host name, ...).
    #[error("the server's certificate was rejected: {reason}")]
    Certificate {
        /// rustls's reason.
        reason: String,
    },
    /// The TLS handshake failed for another reason (no common protocol version, a server
    /// that does not speak TLS on that port, ...).
    #[error("the TLS handshake failed: {reason}")]
    Handshake {
        /// rustls's reason.
        reason: String,
    },
    /// The root certificates named in the URL could not be read.
    #[error("cannot read root certificates from `{}`: {reason}", .path.display())]
    RootCertificates {
        /// The file named by `sslrootcert`.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// The provider every TLS connection of this crate makes itself uses.
#[cfg(feature = "postgres")]
pub(crate) fn provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    std::sync::Arc::new(rustls::crypto::ring::default_provider())
}

/// Installs ring as the process-wide rustls provider unless the application installed one.
///
/// The `redis` crate builds its TLS configuration with `ClientConfig::builder()`, which
/// needs a process default when both rustls providers are compiled into the program.
#[cfg(feature = "redis")]
pub(crate) fn install_default_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; either way a provider is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Reads the PEM file `path` and checks it holds at least one certificate; returns its bytes.
pub(crate) fn read_pem(path: &Path) -> Result<Vec<u8>, TlsError> {
    let fail = |reason: String| TlsError::RootCertificates {
        path: path.to_owned(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(e.to_string()))?;
    if certs.is_empty() {
        return Err(fail("no PEM certificate in the file".to_owned()));
    }
    Ok(pem)
}

/// The certificates of the PEM file `path` as trust anchors.
#[cfg(feature = "postgres")]
pub(crate) fn roots_from_file(path: &Path) -> Result<rustls::RootCertStore, TlsError> {
    let pem = read_pem(path)?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| TlsError::RootCertificates {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        roots.add(cert).map_err(|e| TlsError::RootCertificates {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(roots)
}

/// The platform's trust anchors (`/etc/ssl/certs` and the like); unreadable ones are skipped.
#[cfg(feature = "postgres")]
pub(crate) fn platform_roots() -> rustls::RootCertStore {
    let loaded = rustls_native_certs::load_native_certs();
    for error in &loaded.errors {
        tracing::warn!(%error, "skipping unreadable platform root certificates");
    }
    let mut roots = rustls::RootCertStore::empty();
    let (added, ignored) = roots.add_parsable_certificates(loaded.certs);
    tracing::debug!(added, ignored, "platform root certificates");
    roots
}

/// The [`TlsError`] behind a failed connection, if TLS is what failed.
///
/// Walks the source chain for a [`TlsError`] or a [`rustls::Error`] (also inside an
/// [`std::io::Error`]); drivers that hide the rustls error behind their own types are
/// recognised by rustls's messages.
pub(crate) fn classify(err: &(dyn StdError + 'static)) -> Option<TlsError> {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(t) = e.downcast_ref::<TlsError>() {
            return Some(t.clone());
        }
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            return Some(from_rustls(r));
        }
        if let Some(r) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(from_rustls(r));
        }
        let text = e.to_string();
        if text.contains("invalid peer certificate") {
            return Some(TlsError::Certificate { reason: text });
        }
        if [
            "received corrupt message",
            "peer is incompatible",
            "InvalidContentType",
        ]
        .iter()
        .any(|m| text.contains(m))
        {
            return Some(TlsError::Handshake { reason: text });
        }
        next = e.source();
    }
    None
}

/// A [`TlsError`] from rustls's error.
pub(crate) fn from_rustls(e: &rustls::Error) -> TlsError {
    match e {
        rustls::Error::InvalidCertificate(_) => TlsError::Certificate {
            reason: e.to_string(),
        },
        _ => TlsError::Handshake {
            reason: e.to_string(),
        },
    }
}

/// Splits `key=value` pairs named in `ours` off the query of `url`, percent-decoding their
/// values; the rest of the URL is returned unchanged (no `?` when no parameter is left).
pub(crate) fn take_params(url: &str, ours: &[&str]) -> (String, Vec<(String, String)>) {
    let (base, query_and_fragment) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => return (url.to_owned(), Vec::new()),
    };
    let (query, fragment) = match query_and_fragment.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query_and_fragment, None),
    };
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if ours.contains(&k) {
            taken.push((k.to_owned(), percent_decode(v)));
        } else {
            kept.push(pair);
        }
    }
    let mut out = base.to_owned();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    (out, taken)
}

/// `%XX` escapes (and nothing else) decoded; invalid escapes are kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| s.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let Some(b) = escaped {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_params_come_off_and_the_rest_stays() {
        let (url, taken) = take_params(
            "postgres://u@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem",
            &["sslmode", "sslrootcert"],
        );
        assert_eq!(url, "postgres://u@h/db?application_name=x");
        assert_eq!(
            taken,
            vec![
                ("sslmode".to_owned(), "verify-full".to_owned()),
                ("sslrootcert".to_owned(), "/tmp/ca.pem".to_owned()),
            ]
        );
        let (url, taken) = take_params("rediss://h:1/0?sslrootcert=/a#insecure", &["sslrootcert"]);
        assert_eq!(url, "rediss://h:1/0#insecure");
        assert_eq!(taken.len(), 1);
        assert_eq!(take_params("redis://h/0", &["x"]).0, "redis://h/0");
    }

    #[test]
    fn rustls_certificate_errors_are_certificate_errors() {
        let e = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        assert!(matches!(classify(&io), Some(TlsError::Certificate { .. })));
        let plain = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(classify(&plain), None);
    }

    #[test]
    fn a_missing_or_empty_root_file_is_a_typed_error() {
        let dir = std::env::temp_dir().join(format!("agentmem-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        for path in [dir.join("missing.pem"), empty] {
            assert!(matches!(
                read_pem(&path),
                Err(TlsError::RootCertificates { .. })
            ));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
