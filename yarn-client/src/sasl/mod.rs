//! SASL mechanisms for Hadoop IPC, kept free of I/O: the wire exchange (NEGOTIATE,
//! INITIATE, CHALLENGE, SUCCESS) lives in `rpc::handshake` and drives a [`SaslMechanism`];
//! the security layer a mechanism negotiates (integrity, privacy) is a [`SecurityLayer`]
//! that `rpc` applies to every packet after the exchange.
//!
//! Only DIGEST-MD5 over a delegation-style token is implemented: it is what the RM
//! scheduler port and every NodeManager demand from an AM, even on insecure clusters.
//! GSSAPI (Kerberos) can be added later as another implementor of the traits.

mod digest;
pub mod layer;

#[cfg(test)]
pub(crate) use digest::parse_challenge;
pub(crate) use digest::DigestMd5Client;

/// Errors from a SASL mechanism. None of them is retryable with the same credentials.
#[derive(Debug, thiserror::Error)]
pub enum SaslError {
    #[error("malformed DIGEST-MD5 challenge: {0}")]
    BadChallenge(String),
    #[error(
        "server offers qop {offered:?} with ciphers {ciphers:?}; this client speaks auth, \
         auth-int and auth-conf with 3des"
    )]
    UnsupportedQop {
        offered: Vec<String>,
        ciphers: Vec<String>,
    },
    /// The server offers nothing as strong as the client's floor (`hadoop.rpc.protection`):
    /// a man in the middle may have stripped the stronger qops from the unauthenticated
    /// challenge, or the server is set weaker than the client.
    #[error(
        "server offers qop {offered:?}, weaker than this client's minimum {minimum} \
         (hadoop.rpc.protection = {}); refusing to connect", .minimum.protection()
    )]
    QopBelowMinimum { offered: Vec<String>, minimum: Qop },
    #[error("server's rspauth does not match ours: it does not share our token's password")]
    BadServerProof,
    #[error("SASL protocol violation: {0}")]
    Protocol(String),
}

/// Quality of protection, weakest first (so `max` picks the strongest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Qop {
    /// Authentication only; packets travel as they are.
    Auth,
    /// Every packet carries a MAC and a sequence number.
    AuthInt,
    /// Every packet is also encrypted.
    AuthConf,
}

impl Qop {
    /// The SASL token (`auth`, `auth-int`, `auth-conf`).
    pub fn as_str(self) -> &'static str {
        match self {
            Qop::Auth => "auth",
            Qop::AuthInt => "auth-int",
            Qop::AuthConf => "auth-conf",
        }
    }

    /// Parses a SASL token, case-insensitively (RFC 2831 tokens are).
    pub fn parse(s: &str) -> Option<Qop> {
        [Qop::Auth, Qop::AuthInt, Qop::AuthConf]
            .into_iter()
            .find(|q| q.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// Hadoop's name for it in `hadoop.rpc.protection`.
    pub fn protection(self) -> &'static str {
        match self {
            Qop::Auth => "authentication",
            Qop::AuthInt => "integrity",
            Qop::AuthConf => "privacy",
        }
    }

    /// The floor a `hadoop.rpc.protection` value sets: the weakest level it lists (Hadoop's
    /// value is a comma list of the levels a client accepts, e.g. `privacy` or
    /// `authentication,privacy`). `None` for an empty value or an unknown level.
    pub fn minimum_from_protection(value: &str) -> Option<Qop> {
        let mut levels = value.split(',').map(str::trim).filter(|v| !v.is_empty());
        let parse = |v: &str| {
            [Qop::Auth, Qop::AuthInt, Qop::AuthConf]
                .into_iter()
                .find(|q| q.protection().eq_ignore_ascii_case(v))
        };
        let first = parse(levels.next()?)?;
        levels.try_fold(first, |min, v| Some(min.min(parse(v)?)))
    }
}

impl std::fmt::Display for Qop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a token from the peer was refused by the security layer. Any of these means the
/// stream was tampered with, replayed, reordered or desynchronised: the connection is done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayerError {
    #[error("wrapped token of {len} bytes is shorter than the {min}-byte minimum")]
    TooShort { len: usize, min: usize },
    #[error("encrypted part of {len} bytes is not a whole number of cipher blocks")]
    NotBlockAligned { len: usize },
    #[error("bad padding length {pad} after decryption (wrong key or tampered data)")]
    BadPadding { pad: usize },
    #[error(
        "MAC of the token with sequence number {seq} does not match (tampered data or wrong key)"
    )]
    BadMac { seq: u32 },
    #[error("token has sequence number {got}, expected {expected} (replayed or reordered)")]
    BadSequence { expected: u32, got: u32 },
    #[error("token has message type {0}, expected 1")]
    BadMessageType(u16),
}

/// The outgoing half of a security layer: turns one message into one token.
pub trait Seal: Send {
    fn seal(&mut self, msg: &[u8]) -> Vec<u8>;
}

/// The incoming half: checks one token from the peer and returns its message.
pub trait Unseal: Send {
    fn unseal(&mut self, token: &[u8]) -> Result<Vec<u8>, LayerError>;
}

/// A negotiated security layer (qop above `auth`), ready to be split between a
/// connection's writer and reader.
pub struct SecurityLayer {
    pub qop: Qop,
    /// The cipher under `auth-conf` (e.g. `3des`), for logs.
    pub cipher: Option<&'static str>,
    /// Largest message to seal into one token: the peer's receive buffer (`maxbuf`) less
    /// the layer's overhead.
    pub max_message: usize,
    pub sealer: Box<dyn Seal>,
    pub opener: Box<dyn Unseal>,
}

impl std::fmt::Debug for SecurityLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecurityLayer")
            .field("qop", &self.qop)
            .field("cipher", &self.cipher)
            .field("max_message", &self.max_message)
            .finish_non_exhaustive()
    }
}

/// One client-side SASL mechanism. The handshake picks it by the method/mechanism names
/// Hadoop advertises in `RpcSaslProto.SaslAuth` (`TOKEN` / `DIGEST-MD5` is the only one).
pub trait SaslMechanism: Send {
    /// Answers a server challenge. `protocol`/`server_id` come from the advertised SaslAuth.
    fn respond(
        &mut self,
        challenge: &[u8],
        protocol: &str,
        server_id: &str,
    ) -> Result<Vec<u8>, SaslError>;
    /// Checks the server's final token (sent with SUCCESS); errors if the server could not
    /// prove it knows the shared secret or if the exchange is not complete. Returns the
    /// security layer to apply from now on, `None` under qop `auth`.
    fn verify_success(&mut self, token: Option<&[u8]>) -> Result<Option<SecurityLayer>, SaslError>;
}

#[cfg(test)]
mod protection_tests {
    use super::Qop;

    /// `hadoop.rpc.protection` sets the floor at its weakest listed level.
    #[test]
    fn the_floor_is_the_weakest_level_listed() {
        let floor = Qop::minimum_from_protection;
        assert_eq!(floor("privacy"), Some(Qop::AuthConf));
        assert_eq!(floor(" Integrity "), Some(Qop::AuthInt));
        assert_eq!(floor("privacy,integrity"), Some(Qop::AuthInt));
        assert_eq!(floor("authentication,privacy"), Some(Qop::Auth));
        assert_eq!(floor("privacy,secret"), None);
        assert_eq!(floor(""), None);
        for q in [Qop::Auth, Qop::AuthInt, Qop::AuthConf] {
            assert_eq!(floor(q.protection()), Some(q));
        }
    }
}
