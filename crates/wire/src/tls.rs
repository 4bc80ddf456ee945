//! The driver API's TLS: one self-signed certificate per application, pinned by its SHA-256
//! fingerprint.
//!
//! Why pinning, not a CA: the AM runs on whichever NodeManager YARN picks, so no name in a
//! certificate made beforehand can be checked, and a cluster CA would have to issue a
//! certificate per application on the fly. What a client needs to know is only "this is the
//! process that holds my application's key", and the fingerprint says exactly that.
//!
//! Who holds what:
//! - `submit` makes the certificate and its key ([`AppCert::generate`]) beside the master
//!   secret. Key and certificate go into the AM container's credentials
//!   ([`CERT_ALIAS`], [`KEY_ALIAS`]); the fingerprint goes into the driver's secret file
//!   ([`super::driver_secret`]). Made by `submit`, not by the AM at start, so that every AM
//!   attempt serves the same certificate: executors that move to a next attempt and drivers
//!   that read the secret file before the AM runs keep one pin for the application's life.
//! - The AM serves the driver API and the poll endpoint with it ([`AppCert::server_config`]).
//! - The AM gives each executor the fingerprint, not the key, in its launch credentials
//!   ([`PIN_ALIAS`]); the executor pins it.
//! - Clients accept exactly that certificate ([`PinnedVerifier`]): no name and no expiry
//!   check (the fingerprint fixes both), but the handshake signature is verified normally, so
//!   only the holder of the key can complete a handshake.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};
use yarn_client::credentials::Credentials;

/// Alias of the certificate (DER) in the AM container's credentials.
pub const CERT_ALIAS: &str = "yarn-am.tls-cert";
/// Alias of the certificate's private key (PKCS#8 DER) in the AM container's credentials.
pub const KEY_ALIAS: &str = "yarn-am.tls-key";
/// Alias of the certificate's SHA-256 fingerprint (32 bytes) in an executor's credentials.
pub const PIN_ALIAS: &str = "yarn-am.tls-sha256";

/// A certificate's SHA-256 over its DER bytes (what `openssl x509 -fingerprint -sha256` and
/// `keytool -printcert` print, without their colons).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    pub fn of(cert_der: &[u8]) -> Self {
        Fingerprint(Sha256::digest(cert_der).into())
    }

    /// From 64 hex digits, upper or lower case, with or without `:` between the bytes.
    pub fn parse(text: &str) -> Result<Self, TlsError> {
        let digits: String = text.trim().chars().filter(|c| *c != ':').collect();
        let mut out = [0u8; 32];
        hex::decode_to_slice(&digits, &mut out)
            .map_err(|_| TlsError::BadFingerprint(text.chars().take(100).collect()))?;
        Ok(Fingerprint(out))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TlsError> {
        bytes
            .try_into()
            .map(Fingerprint)
            .map_err(|_| TlsError::BadFingerprint(format!("{} bytes, not 32", bytes.len())))
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sha256:{self}")
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum TlsError {
    /// The server's certificate is not the pinned one: another process answers on the
    /// address (a stale URL, a port taken over), or the pin belongs to another application.
    #[error(
        "the driver API's certificate has SHA-256 {seen}, not the pinned {expected}: \
         this is not the ApplicationMaster the secret is for"
    )]
    WrongCertificate {
        expected: Fingerprint,
        seen: Fingerprint,
    },
    #[error("not a SHA-256 certificate fingerprint: {0:?}")]
    BadFingerprint(String),
    #[error("the credentials have no {0:?} (submit with a yarn-am that serves TLS)")]
    Missing(&'static str),
    #[error("making the application's certificate: {0}")]
    Generate(String),
    #[error("the application's certificate or key is unusable: {0}")]
    Config(rustls::Error),
}

/// The crypto every TLS end of yarn-am uses: rustls on ring (builds with a C compiler only).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The application's certificate and key (DER), as `submit` makes them and the AM serves them.
#[derive(Clone)]
pub struct AppCert {
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
}

impl std::fmt::Debug for AppCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppCert")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl AppCert {
    /// A fresh ECDSA P-256 self-signed certificate. Its name (`yarn-am`) is not checked by
    /// anyone (clients pin the fingerprint); it is valid for 10 years so that no client that
    /// does look at dates refuses it during a long-running service.
    pub fn generate() -> Result<Self, TlsError> {
        let gen = |e: rcgen::Error| TlsError::Generate(e.to_string());
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(gen)?;
        let mut params = rcgen::CertificateParams::new(vec!["yarn-am".to_string()]).map_err(gen)?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "yarn-am driver API");
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(86_400)).into();
        params.not_after = (now + std::time::Duration::from_secs(10 * 365 * 86_400)).into();
        let cert = params.self_signed(&key).map_err(gen)?;
        Ok(AppCert {
            cert_der: cert.der().to_vec(),
            key_der: key.serialize_der(),
        })
    }

    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(&self.cert_der)
    }

    /// The AM's credentials entries for it.
    pub fn credential_secrets(&self) -> [(String, Vec<u8>); 2] {
        [
            (CERT_ALIAS.to_string(), self.cert_der.clone()),
            (KEY_ALIAS.to_string(), self.key_der.clone()),
        ]
    }

    /// From the AM container's credentials.
    pub fn from_credentials(creds: &Credentials) -> Result<Self, TlsError> {
        Ok(AppCert {
            cert_der: creds
                .secret(CERT_ALIAS)
                .ok_or(TlsError::Missing(CERT_ALIAS))?
                .to_vec(),
            key_der: creds
                .secret(KEY_ALIAS)
                .ok_or(TlsError::Missing(KEY_ALIAS))?
                .to_vec(),
        })
    }

    /// The server side: this certificate, TLS 1.2 and 1.3, HTTP/1.1 only (the driver API's
    /// server speaks nothing else).
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?
            .with_no_client_auth()
            .with_single_cert(vec![CertificateDer::from(self.cert_der.clone())], key)
            .map_err(TlsError::Config)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// Accepts exactly the server certificate whose fingerprint is the pin, and checks the
/// handshake's signature with that certificate's key as any TLS client does.
#[derive(Debug)]
pub struct PinnedVerifier {
    pin: Fingerprint,
    provider: Arc<CryptoProvider>,
}

impl PinnedVerifier {
    pub fn new(pin: Fingerprint) -> Self {
        PinnedVerifier {
            pin,
            provider: provider(),
        }
    }
}

impl ServerCertVerifier for PinnedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let seen = Fingerprint::of(end_entity);
        if seen == self.pin {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                rustls::OtherError(Arc::new(TlsError::WrongCertificate {
                    expected: self.pin,
                    seen,
                })),
            )))
        }
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
            &self.provider.signature_verification_algorithms,
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
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A client configuration that trusts only the pinned certificate.
pub fn pinned_client_config(pin: Fingerprint) -> rustls::ClientConfig {
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring's default provider supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedVerifier::new(pin)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// The pin refusal inside a failed request, if that is why it failed (walks the error's
/// sources down to rustls's certificate error; an `io::Error` hides the error it wraps from
/// `source()`, so it is opened with `get_ref`).
pub fn pin_error(e: &(dyn std::error::Error + 'static)) -> Option<TlsError> {
    let mut source = Some(e);
    while let Some(s) = source {
        if let Some(t) = s.downcast_ref::<TlsError>() {
            return Some(t.clone());
        }
        if let Some(rustls::Error::InvalidCertificate(CertificateError::Other(other))) =
            s.downcast_ref::<rustls::Error>()
        {
            if let Some(t) = other.0.downcast_ref::<TlsError>() {
                return Some(t.clone());
            }
        }
        let wrapped = s
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        source = wrapped.or_else(|| s.source());
    }
    None
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
