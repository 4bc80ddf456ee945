//! The driver's secret file, `~/.yarn-am/<app>.secret` (mode 0600), which `submit` writes and
//! every driver-API client reads (the Spark plugin's `AmClient`, the integration tests'
//! `Driver`): the Bearer secret and the fingerprint of the certificate the AM serves.
//!
//! Version 2, line-oriented so that a shell or Java reader needs no JSON library:
//!
//! ```text
//! yarn-am driver secret v2
//! secret <64 hex digits>
//! tls-sha256 <64 hex digits>
//! ```
//!
//! Version 1 (before TLS) was the secret alone, with no line feed; it still reads, with no
//! pin, and such an AM served plain HTTP. An old reader given a version 2 file sends the
//! whole text as its Bearer secret and is refused (401): a clear failure, never a secret
//! sent in clear.

use std::path::{Path, PathBuf};

use super::tls::Fingerprint;

/// Where `submit` writes the secret files unless told otherwise (`--secret-dir`):
/// `~/.yarn-am`.
pub fn default_dir() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into())).join(".yarn-am")
}

/// The secret file of application `app` in `dir`.
pub fn file_of(dir: &Path, app: &str) -> PathBuf {
    dir.join(format!("{app}.secret"))
}

/// A new application's secret, as `submit` makes it: 32 random bytes as 64 hex digits (one
/// word, so it reads as a version 1 file's secret too). The AM takes the bytes of this text
/// as its master secret (executor and KV keys derive from it) and a driver sends the text
/// as its Bearer secret.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    hex::encode(bytes)
}

/// The first line of a version 2 file.
pub const HEADER_V2: &str = "yarn-am driver secret v2";

/// What a driver needs to talk to its application's AM.
#[derive(Clone, PartialEq, Eq)]
pub struct DriverSecret {
    /// The Bearer secret (the application's master secret).
    pub secret: String,
    /// The AM's certificate; `None` only for a version 1 file (an AM without TLS).
    pub tls_pin: Option<Fingerprint>,
}

impl std::fmt::Debug for DriverSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverSecret")
            .field("secret", &"<hidden>")
            .field("tls_pin", &self.tls_pin)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    #[error("reading the driver secret file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// Names the line, never its value (it may be the secret).
    #[error("the driver secret file is malformed: {0}")]
    Malformed(String),
}

impl DriverSecret {
    /// The file's text (version 2; a pin is required to write one).
    pub fn render(secret: &str, pin: Fingerprint) -> String {
        format!("{HEADER_V2}\nsecret {secret}\ntls-sha256 {pin}\n")
    }

    pub fn parse(text: &str) -> Result<Self, SecretFileError> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines.next().unwrap_or_default();
        if first != HEADER_V2 {
            if first.starts_with("yarn-am driver secret") {
                return Err(SecretFileError::Malformed(
                    "a version this yarn-am does not know (written by a newer one?)".into(),
                ));
            }
            // Version 1: the secret alone on one line.
            if first.is_empty() || first.contains(char::is_whitespace) || lines.next().is_some() {
                return Err(SecretFileError::Malformed(
                    "neither a version 2 file nor a single secret".into(),
                ));
            }
            return Ok(DriverSecret {
                secret: first.to_string(),
                tls_pin: None,
            });
        }
        let (mut secret, mut pin) = (None, None);
        for (n, line) in lines.enumerate() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "secret" => secret = Some(value.trim().to_string()),
                "tls-sha256" => {
                    pin = Some(Fingerprint::parse(value).map_err(|_| {
                        SecretFileError::Malformed("tls-sha256 is not 64 hex digits".into())
                    })?)
                }
                // Later fields: ignored, so that an older reader can read a newer file.
                _ => tracing::debug!(line = n + 2, "unknown field in the driver secret file"),
            }
        }
        let secret = secret
            .filter(|s| !s.is_empty())
            .ok_or_else(|| SecretFileError::Malformed("no secret line".into()))?;
        let pin = pin.ok_or_else(|| SecretFileError::Malformed("no tls-sha256 line".into()))?;
        Ok(DriverSecret {
            secret,
            tls_pin: Some(pin),
        })
    }

    pub fn read(path: &Path) -> Result<Self, SecretFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| SecretFileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_2_round_trips_and_version_1_still_reads() {
        let pin = Fingerprint([7; 32]);
        let text = DriverSecret::render("abc123", pin);
        assert_eq!(
            DriverSecret::parse(&text).unwrap(),
            DriverSecret {
                secret: "abc123".into(),
                tls_pin: Some(pin)
            }
        );
        let v1 = DriverSecret::parse("abc123").unwrap();
        assert_eq!(v1.secret, "abc123");
        assert_eq!(v1.tls_pin, None);
        // Unknown later fields are skipped.
        let newer = format!("{text}client-cert xyz\n");
        assert_eq!(DriverSecret::parse(&newer).unwrap().tls_pin, Some(pin));
    }

    #[test]
    fn a_new_secret_is_64_hex_digits_never_the_same_and_reads_back_from_its_file() {
        let s = new_secret();
        assert_eq!(s.len(), 64);
        assert!(s.bytes().all(|b| b.is_ascii_hexdigit()), "{s}");
        assert_ne!(new_secret(), s);
        let pin = Fingerprint([3; 32]);
        assert_eq!(
            DriverSecret::parse(&DriverSecret::render(&s, pin))
                .unwrap()
                .secret,
            s
        );
        assert_eq!(DriverSecret::parse(&s).unwrap().secret, s);
    }

    #[test]
    fn malformed_files_are_refused_without_echoing_the_secret() {
        for bad in [
            "",
            "two words",
            "line1\nline2",
            "yarn-am driver secret v3\nsecret s3cr3t\n",
            "yarn-am driver secret v2\nsecret s3cr3t\n",
            "yarn-am driver secret v2\nsecret s3cr3t\ntls-sha256 12\n",
            "yarn-am driver secret v2\ntls-sha256 0000000000000000000000000000000000000000000000000000000000000000\n",
        ] {
            let e = DriverSecret::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("s3cr3t"), "{e}");
        }
        let d = DriverSecret::parse(&DriverSecret::render("s3cr3t", Fingerprint([1; 32])));
        assert!(!format!("{d:?}").contains("s3cr3t"));
    }
}
