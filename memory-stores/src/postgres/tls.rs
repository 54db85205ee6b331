//! libpq-style `sslmode` for [`PostgresStore`](super::PostgresStore), over rustls.
//!
//! | `sslmode` | TLS | certificate checks |
//! | --- | --- | --- |
//! | `disable` | never | none |
//! | `prefer` (default) | when the server offers it, else plain | as `require` |
//! | `require` | always; a server without TLS is refused | none, unless `sslrootcert` is given: then as `verify-ca` (libpq does the same) |
//! | `verify-ca` | always | chain to a trusted root; the host name is not checked |
//! | `verify-full` | always | chain to a trusted root and the host name |
//!
//! Trusted roots: the PEM file `sslrootcert=PATH` names; without it (or with
//! `sslrootcert=system`) the platform's roots (`/etc/ssl/certs`, ...) for `verify-*`.
//! (libpq would read `~/.postgresql/root.crt`; this store does not.)

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

use crate::tls::TlsError;

/// The URL parameters this module reads and takes off before tokio-postgres sees the URL.
const PARAMS: [&str; 2] = ["sslmode", "sslrootcert"];

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// The name used in URLs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }
}

/// What the URL asks of TLS.
#[derive(Debug, Clone)]
pub(crate) struct TlsSettings {
    pub(crate) mode: SslMode,
    /// `sslrootcert`, unless absent or `system`.
    pub(crate) root_cert: Option<PathBuf>,
}

impl TlsSettings {
    /// Takes `sslmode` and `sslrootcert` off a `postgres://` URL; returns the URL left for
    /// tokio-postgres. A `key=value` connection string is returned unchanged, with
    /// tokio-postgres's own `sslmode` (`disable`, `prefer`, `require`) read back later.
    pub(crate) fn from_url(url: &str) -> Result<(String, Option<Self>), String> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Ok((url.to_owned(), None));
        }
        let (rest, taken) = crate::tls::take_params(url, &PARAMS);
        let mut settings = TlsSettings {
            mode: SslMode::Prefer,
            root_cert: None,
        };
        for (key, value) in taken {
            match key.as_str() {
                "sslmode" => {
                    settings.mode = SslMode::parse(&value).ok_or_else(|| {
                        format!(
                            "sslmode `{value}` is not one of disable, prefer, require, verify-ca, verify-full"
                        )
                    })?;
                }
                _ if value.is_empty() || value == "system" => settings.root_cert = None,
                _ => settings.root_cert = Some(PathBuf::from(value)),
            }
        }
        Ok((rest, Some(settings)))
    }

    /// The mode tokio-postgres negotiates with: it knows only disable, prefer and require.
    pub(crate) fn driver_mode(&self) -> tokio_postgres::config::SslMode {
        match self.mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }

    /// The rustls configuration for this mode.
    pub(crate) fn client_config(&self) -> Result<ClientConfig, TlsError> {
        let provider = crate::tls::provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Handshake {
                reason: e.to_string(),
            })?;
        let roots = match (&self.root_cert, self.mode) {
            (Some(path), _) => Some(crate::tls::roots_from_file(path)?),
            (None, SslMode::VerifyCa | SslMode::VerifyFull) => Some(crate::tls::platform_roots()),
            (None, _) => None,
        };
        let Some(roots) = roots else {
            // libpq's `prefer`/`require` without a root certificate: encrypted, not verified.
            return Ok(builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
                .with_no_client_auth());
        };
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| TlsError::Handshake {
                reason: e.to_string(),
            })?;
        let config = if self.mode == SslMode::VerifyFull {
            builder.with_webpki_verifier(webpki).with_no_client_auth()
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoHostname(webpki)))
                .with_no_client_auth()
        };
        Ok(config)
    }
}

/// Encrypts without checking the server's certificate (`prefer`/`require` without roots);
/// handshake signatures are still checked, so the session is bound to the key presented.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; a certificate for another host name
/// passes (webpki checks the chain before the name, so only a name error is forgiven).
#[derive(Debug)]
struct NoHostname(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for NoHostname {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// tokio-postgres's TLS hook over tokio-rustls.
#[derive(Clone)]
pub(crate) struct RustlsConnect(pub(crate) Arc<ClientConfig>);

/// The connector for one host.
pub(crate) struct RustlsConnectHost {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
}

impl<S> MakeTlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnectHost;
    type Error = TlsError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnectHost, TlsError> {
        let server_name =
            ServerName::try_from(domain.to_owned()).map_err(|e| TlsError::Handshake {
                reason: format!("`{domain}` is not a valid TLS server name: {e}"),
            })?;
        Ok(RustlsConnectHost {
            config: self.0.clone(),
            server_name,
        })
    }
}

impl<S> TlsConnect<S> for RustlsConnectHost
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = TlsError;
    type Future = Pin<Box<dyn Future<Output = Result<RustlsStream<S>, TlsError>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let connector = tokio_rustls::TlsConnector::from(self.config);
        Box::pin(async move {
            connector
                .connect(self.server_name, stream)
                .await
                .map(|s| RustlsStream(Box::new(s)))
                .map_err(|e| {
                    crate::tls::classify(&e).unwrap_or(TlsError::Handshake {
                        reason: e.to_string(),
                    })
                })
        })
    }
}

/// A TLS session with the server.
pub(crate) struct RustlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM runs without channel binding (tokio-postgres's default `prefer` falls back).
        ChannelBinding::none()
    }
}

/// The [`TlsError`] behind a failed connection, if TLS is what failed.
pub(crate) fn tls_failure(e: &tokio_postgres::Error, mode: SslMode) -> Option<TlsError> {
    let source = std::error::Error::source(e)?;
    if source.to_string() == "server does not support TLS" {
        return Some(TlsError::Refused { mode: mode.name() });
    }
    crate::tls::classify(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_come_off_the_url() {
        let (url, settings) = TlsSettings::from_url(
            "postgres://me:pw@h:5/db?sslmode=verify-full&sslrootcert=/ca.pem&connect_timeout=2",
        )
        .unwrap();
        let settings = settings.unwrap();
        assert_eq!(url, "postgres://me:pw@h:5/db?connect_timeout=2");
        assert_eq!(settings.mode, SslMode::VerifyFull);
        assert_eq!(settings.root_cert, Some(PathBuf::from("/ca.pem")));
        let (_, settings) = TlsSettings::from_url("postgresql://h/db").unwrap();
        assert_eq!(settings.unwrap().mode, SslMode::Prefer);
        let err = TlsSettings::from_url("postgres://h/db?sslmode=verify").unwrap_err();
        assert!(err.contains("verify-full"), "{err}");
    }

    #[test]
    fn every_mode_builds_a_config_and_a_missing_root_file_is_typed() {
        let settings = |mode| TlsSettings {
            mode,
            root_cert: None,
        };
        for mode in [
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ] {
            assert!(settings(mode).client_config().is_ok(), "{mode:?}");
        }
        let missing = TlsSettings {
            mode: SslMode::VerifyFull,
            root_cert: Some(PathBuf::from("/nonexistent/agentmem-ca.pem")),
        };
        assert!(matches!(
            missing.client_config(),
            Err(TlsError::RootCertificates { .. })
        ));
    }
}
