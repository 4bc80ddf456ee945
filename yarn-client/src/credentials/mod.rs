//! The token-storage file a container finds at `HADOOP_TOKEN_FILE_LOCATION`
//! (`HDTS` + format byte). NodeManagers write the Writable format (version 0, Hadoop
//! vints); Hadoop can also write a protobuf format (version 1). We read both, and write
//! both for tests and for launch contexts of worker containers.

mod vint;

use std::path::{Path, PathBuf};

use prost::Message;

use crate::proto::common::{CredentialsKvProto, CredentialsProto};
use crate::token::Token;

pub(crate) use vint::{read_vlong, write_vlong};

/// Token kind of the ApplicationMaster -> ResourceManager token.
pub const AMRM_TOKEN_KIND: &str = "YARN_AM_RM_TOKEN";
/// Token kind of the per-node tokens the RM hands out for NodeManager connections.
pub const NM_TOKEN_KIND: &str = "NMToken";
/// Environment variable naming the container's token file.
pub const TOKEN_FILE_ENV: &str = "HADOOP_TOKEN_FILE_LOCATION";

const MAGIC: &[u8; 4] = b"HDTS";
/// No real token file is anywhere near this; bigger means we are reading the wrong file.
const MAX_FILE_LEN: u64 = 64 * 1024 * 1024;

/// The on-disk encodings of a token storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Writable = 0,
    Protobuf = 1,
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("{TOKEN_FILE_ENV} is not set: not running in a YARN container?")]
    NoEnv,
    #[error("cannot read token file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("token file is empty")]
    Empty,
    #[error("token file is {0} bytes; refusing to read more than {MAX_FILE_LEN}")]
    TooLarge(u64),
    #[error("not a Hadoop token file: bad header (expected `HDTS`)")]
    BadMagic,
    #[error("unknown token file format version {0} (expected 0 = Writable or 1 = protobuf)")]
    UnknownFormat(u8),
    #[error("token file is truncated while reading {0}")]
    Truncated(&'static str),
    #[error("token file has invalid {0}")]
    Invalid(&'static str),
    #[error("token file protobuf is malformed: {0}")]
    Protobuf(#[from] prost::DecodeError),
    #[error("{path}: {source}")]
    InFile {
        path: PathBuf,
        #[source]
        source: Box<CredentialsError>,
    },
    #[error("no token of kind {0} in the token file")]
    NoSuchKind(String),
}

/// Tokens and secrets, in file order (the Java writer's order is a HashMap's, so arbitrary).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub tokens: Vec<(String, Token)>,
    pub secrets: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for Credentials {
    /// Secret values are never printed (tokens hide their passwords too): values end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secrets: Vec<(&str, usize)> = self
            .secrets
            .iter()
            .map(|(alias, s)| (alias.as_str(), s.len()))
            .collect();
        f.debug_struct("Credentials")
            .field("tokens", &self.tokens)
            .field("secrets (alias, length)", &secrets)
            .finish()
    }
}

impl Credentials {
    /// Reads the file named by `HADOOP_TOKEN_FILE_LOCATION`.
    pub fn from_env() -> Result<Self, CredentialsError> {
        let path = std::env::var_os(TOKEN_FILE_ENV).ok_or(CredentialsError::NoEnv)?;
        Self::read_file(Path::new(&path))
    }

    pub fn read_file(path: &Path) -> Result<Self, CredentialsError> {
        let io = |source| CredentialsError::Io {
            path: path.to_path_buf(),
            source,
        };
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len > MAX_FILE_LEN {
            return Err(CredentialsError::TooLarge(len));
        }
        let bytes = std::fs::read(path).map_err(io)?;
        Self::decode(&bytes).map_err(|e| CredentialsError::InFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        })
    }

    /// Decodes either format from bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, CredentialsError> {
        if bytes.is_empty() {
            return Err(CredentialsError::Empty);
        }
        if bytes.len() < 5 {
            return Err(if MAGIC.starts_with(bytes) {
                CredentialsError::Truncated("header")
            } else {
                CredentialsError::BadMagic
            });
        }
        if &bytes[..4] != MAGIC {
            return Err(CredentialsError::BadMagic);
        }
        let body = &bytes[5..];
        match bytes[4] {
            0 => decode_writable(body),
            1 => decode_protobuf(body),
            v => Err(CredentialsError::UnknownFormat(v)),
        }
    }

    pub fn encode(&self, format: Format) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(format as u8);
        match format {
            Format::Writable => {
                write_vlong(&mut out, self.tokens.len() as i64);
                for (alias, t) in &self.tokens {
                    write_bytes(&mut out, alias.as_bytes());
                    write_bytes(&mut out, &t.identifier);
                    write_bytes(&mut out, &t.password);
                    write_bytes(&mut out, t.kind.as_bytes());
                    write_bytes(&mut out, t.service.as_bytes());
                }
                write_vlong(&mut out, self.secrets.len() as i64);
                for (alias, s) in &self.secrets {
                    write_bytes(&mut out, alias.as_bytes());
                    write_bytes(&mut out, s);
                }
            }
            Format::Protobuf => {
                let proto = CredentialsProto {
                    tokens: self
                        .tokens
                        .iter()
                        .map(|(alias, t)| CredentialsKvProto {
                            alias: alias.clone(),
                            token: Some(t.into()),
                            secret: None,
                        })
                        .collect(),
                    secrets: self
                        .secrets
                        .iter()
                        .map(|(alias, s)| CredentialsKvProto {
                            alias: alias.clone(),
                            token: None,
                            secret: Some(s.clone()),
                        })
                        .collect(),
                };
                proto
                    .encode_length_delimited(&mut out)
                    .expect("Vec grows as needed");
            }
        }
        out
    }

    /// The first token of the given kind (e.g. [`AMRM_TOKEN_KIND`]).
    pub fn find_kind(&self, kind: &str) -> Option<&Token> {
        self.tokens.iter().map(|(_, t)| t).find(|t| t.kind == kind)
    }

    /// The secret key stored under `alias`.
    pub fn secret(&self, alias: &str) -> Option<&[u8]> {
        self.secrets
            .iter()
            .find(|(a, _)| a == alias)
            .map(|(_, s)| s.as_slice())
    }

    /// Like [`Credentials::find_kind`] but an error naming the kind when it is missing.
    pub fn require_kind(&self, kind: &str) -> Result<&Token, CredentialsError> {
        self.find_kind(kind)
            .ok_or_else(|| CredentialsError::NoSuchKind(kind.to_string()))
    }
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_vlong(out, b.len() as i64);
    out.extend_from_slice(b);
}

fn read_len(buf: &mut &[u8], what: &'static str) -> Result<usize, CredentialsError> {
    let n = read_vlong(buf).ok_or(CredentialsError::Truncated(what))?;
    if n < 0 || n as usize > buf.len() {
        // A length longer than what is left can only be truncation or garbage.
        return Err(if n < 0 {
            CredentialsError::Invalid(what)
        } else {
            CredentialsError::Truncated(what)
        });
    }
    Ok(n as usize)
}

fn read_bytes(buf: &mut &[u8], what: &'static str) -> Result<Vec<u8>, CredentialsError> {
    let n = read_len(buf, what)?;
    let (b, rest) = buf.split_at(n);
    *buf = rest;
    Ok(b.to_vec())
}

fn read_text(buf: &mut &[u8], what: &'static str) -> Result<String, CredentialsError> {
    String::from_utf8(read_bytes(buf, what)?).map_err(|_| CredentialsError::Invalid(what))
}

fn decode_writable(mut buf: &[u8]) -> Result<Credentials, CredentialsError> {
    let buf = &mut buf;
    let mut creds = Credentials::default();
    let n = read_len_count(buf, "token count")?;
    for _ in 0..n {
        let alias = read_text(buf, "token alias")?;
        let identifier = read_bytes(buf, "token identifier")?;
        let password = read_bytes(buf, "token password")?;
        let kind = read_text(buf, "token kind")?;
        let service = read_text(buf, "token service")?;
        creds.tokens.push((
            alias,
            Token {
                identifier,
                password,
                kind,
                service,
            },
        ));
    }
    let n = read_len_count(buf, "secret count")?;
    for _ in 0..n {
        let alias = read_text(buf, "secret alias")?;
        let secret = read_bytes(buf, "secret")?;
        creds.secrets.push((alias, secret));
    }
    Ok(creds)
}

/// A count is not a byte length, but each entry needs at least one byte, so a count larger
/// than the remaining input is garbage (and must not drive a huge allocation or loop).
fn read_len_count(buf: &mut &[u8], what: &'static str) -> Result<usize, CredentialsError> {
    read_len(buf, what)
}

fn decode_protobuf(mut buf: &[u8]) -> Result<Credentials, CredentialsError> {
    let proto = CredentialsProto::decode_length_delimited(&mut buf)?;
    let mut creds = Credentials::default();
    for kv in proto.tokens {
        let t = kv
            .token
            .ok_or(CredentialsError::Invalid("token entry without token"))?;
        creds.tokens.push((kv.alias, t.into()));
    }
    for kv in proto.secrets {
        creds
            .secrets
            .push((kv.alias, kv.secret.unwrap_or_default()));
    }
    Ok(creds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Credentials {
        Credentials {
            tokens: vec![(
                String::new(),
                Token {
                    identifier: (0..17).collect(),
                    password: vec![0; 20],
                    kind: AMRM_TOKEN_KIND.into(),
                    service: String::new(),
                },
            )],
            secrets: vec![],
        }
    }

    /// The computed example of docs/hadoop-rpc-facts.md, section 6.2.
    #[test]
    fn writable_layout_matches_facts_sheet() {
        let bytes = sample().encode(Format::Writable);
        let mut want = b"HDTS\x00\x01\x00\x11".to_vec();
        want.extend(0..17u8);
        want.push(0x14);
        want.extend([0u8; 20]);
        want.push(0x10);
        want.extend_from_slice(b"YARN_AM_RM_TOKEN");
        want.extend([0, 0]);
        assert_eq!(bytes, want);
        assert_eq!(Credentials::decode(&bytes).unwrap(), sample());
    }

    #[test]
    fn both_formats_round_trip() {
        let mut c = sample();
        c.secrets.push(("s".into(), vec![1, 2, 3]));
        for f in [Format::Writable, Format::Protobuf] {
            let d = Credentials::decode(&c.encode(f)).unwrap();
            assert_eq!(d, c);
            assert!(d.find_kind(AMRM_TOKEN_KIND).is_some());
            assert!(matches!(
                d.require_kind(NM_TOKEN_KIND),
                Err(CredentialsError::NoSuchKind(_))
            ));
        }
    }

    #[test]
    fn secrets_are_found_by_alias_and_never_printed() {
        let mut c = sample();
        c.secrets.push(("app.key".into(), b"s3cr3t-value".to_vec()));
        assert_eq!(c.secret("app.key"), Some(&b"s3cr3t-value"[..]));
        assert_eq!(c.secret("other"), None);
        let shown = format!("{c:?}");
        assert!(
            shown.contains("app.key") && !shown.contains("s3cr3t"),
            "{shown}"
        );
        assert!(!shown.contains("115, 51"), "{shown}"); // the bytes of "s3"
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        assert!(matches!(
            Credentials::decode(b""),
            Err(CredentialsError::Empty)
        ));
        assert!(matches!(
            Credentials::decode(b"HDT"),
            Err(CredentialsError::Truncated(_))
        ));
        assert!(matches!(
            Credentials::decode(b"XXXX\0"),
            Err(CredentialsError::BadMagic)
        ));
        assert!(matches!(
            Credentials::decode(b"HDTS\x07"),
            Err(CredentialsError::UnknownFormat(7))
        ));
        let full = sample().encode(Format::Writable);
        for cut in 5..full.len() {
            assert!(Credentials::decode(&full[..cut]).is_err(), "cut at {cut}");
        }
        let dir = std::env::temp_dir().join(format!("yc-cred-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty");
        std::fs::write(&empty, b"").unwrap();
        let e = Credentials::read_file(&empty).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        assert!(matches!(
            Credentials::read_file(&dir.join("missing")),
            Err(CredentialsError::Io { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = Credentials::decode(&bytes);
            let mut with_magic = b"HDTS\x00".to_vec();
            with_magic.extend_from_slice(&bytes);
            let _ = Credentials::decode(&with_magic);
            with_magic[4] = 1;
            let _ = Credentials::decode(&with_magic);
        }
    }
}
