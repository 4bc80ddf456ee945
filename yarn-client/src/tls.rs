//! Whom the web clients (RM REST, WebHDFS) trust on `https://` addresses: clusters whose
//! `yarn.http.policy` / `dfs.http.policy` is `HTTPS_ONLY` serve their web APIs over TLS only.
//!
//! TLS is rustls on ring (reqwest's `rustls-tls-*` features): building needs a C compiler and
//! nothing else (no system OpenSSL, cmake or NASM).
//!
//! Trust comes from one of two places:
//! - a PEM file of CA certificates named by [`CA_FILE_ENV`] (`YARN_AM_CA_FILE`): the cluster's
//!   CA, trusted *instead of* the system's, as Hadoop's `ssl-client.xml` truststore is;
//! - otherwise the system's CA store (read by rustls-native-certs from the usual files).
//!
//! Hadoop's own clients read a JKS or PKCS#12 truststore (`ssl.client.truststore.location` in
//! `ssl-client.xml`); that is not read here: export its certificates to PEM once
//! (`keytool -exportcert -rfc -alias <ca> -keystore truststore.jks > ca.pem`) and name the
//! file in `YARN_AM_CA_FILE`.

use std::path::{Path, PathBuf};

/// Environment variable naming a PEM file of CA certificates to trust for `https://` RM and
/// NameNode addresses (not a secret: certificates are public).
pub const CA_FILE_ENV: &str = "YARN_AM_CA_FILE";

/// The most a CA file may hold: a bundle of a few hundred certificates is well under this.
const MAX_CA_FILE: u64 = 4 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TlsConfigError {
    #[error("reading the CA file {path} ({CA_FILE_ENV}): {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the CA file {path} ({CA_FILE_ENV}) is over {MAX_CA_FILE} bytes")]
    TooLarge { path: PathBuf },
    #[error(
        "the CA file {path} ({CA_FILE_ENV}) holds no PEM certificate \
         (a JKS or PKCS#12 truststore must be exported to PEM first: keytool -exportcert -rfc)"
    )]
    NoCertificate { path: PathBuf },
    #[error("the CA file {path} ({CA_FILE_ENV}) has a certificate that does not parse: {reason}")]
    BadCertificate { path: PathBuf, reason: String },
}

/// Whom an `https://` web client trusts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TlsTrust {
    /// The system's CA store.
    #[default]
    System,
    /// Only the CA certificates in this PEM file.
    CaFile(PathBuf),
}

impl TlsTrust {
    /// [`CA_FILE_ENV`] when set and not empty, else the system's store.
    pub fn from_env() -> Self {
        match std::env::var_os(CA_FILE_ENV) {
            Some(p) if !p.is_empty() => TlsTrust::CaFile(PathBuf::from(p)),
            _ => TlsTrust::System,
        }
    }

    /// `builder` with this trust (and TLS 1.2 as the floor, what Hadoop's Jetty accepts).
    pub fn apply(
        &self,
        builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, TlsConfigError> {
        let builder = builder.min_tls_version(reqwest::tls::Version::TLS_1_2);
        match self {
            TlsTrust::System => Ok(builder),
            TlsTrust::CaFile(path) => {
                let certs = read_ca_file(path)?;
                let mut builder = builder.tls_built_in_root_certs(false);
                for c in certs {
                    builder = builder.add_root_certificate(c);
                }
                Ok(builder)
            }
        }
    }
}

/// The certificates of a PEM file (size-capped; at least one).
fn read_ca_file(path: &Path) -> Result<Vec<reqwest::Certificate>, TlsConfigError> {
    use std::io::Read;
    let read = |source| TlsConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(read)?
        .take(MAX_CA_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_CA_FILE {
        return Err(TlsConfigError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    if !String::from_utf8_lossy(&bytes).contains("-----BEGIN CERTIFICATE-----") {
        return Err(TlsConfigError::NoCertificate {
            path: path.to_path_buf(),
        });
    }
    reqwest::Certificate::from_pem_bundle(&bytes).map_err(|e| TlsConfigError::BadCertificate {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
