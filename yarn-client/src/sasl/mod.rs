//! SASL mechanisms for Hadoop IPC, kept free of I/O: the wire exchange (NEGOTIATE,
//! INITIATE, CHALLENGE, SUCCESS) lives in `rpc::handshake` and drives a [`SaslMechanism`].
//!
//! Only DIGEST-MD5 over a delegation-style token is implemented: it is what the RM
//! scheduler port and every NodeManager demand from an AM, even on insecure clusters.
//! GSSAPI (Kerberos) can be added later as another implementor of the trait.

mod digest;

pub use digest::{parse_challenge, DigestMd5Client, DigestParams};

/// Errors from a SASL mechanism. None of them is retryable with the same credentials.
#[derive(Debug, thiserror::Error)]
pub enum SaslError {
    #[error("malformed DIGEST-MD5 challenge: {0}")]
    BadChallenge(String),
    #[error("server offers qop {offered:?}; this client only speaks `auth` (no integrity/privacy layer)")]
    UnsupportedQop { offered: Vec<String> },
    #[error("server's rspauth does not match ours: it does not share our token's password")]
    BadServerProof,
    #[error("SASL protocol violation: {0}")]
    Protocol(String),
}

/// One client-side SASL mechanism. `method`/`mechanism` are the names Hadoop advertises in
/// `RpcSaslProto.SaslAuth` (e.g. `TOKEN` / `DIGEST-MD5`, later `KERBEROS` / `GSSAPI`).
pub trait SaslMechanism: Send {
    fn method(&self) -> &str;
    fn mechanism(&self) -> &str;
    /// Answers a server challenge. `protocol`/`server_id` come from the advertised SaslAuth.
    fn respond(
        &mut self,
        challenge: &[u8],
        protocol: &str,
        server_id: &str,
    ) -> Result<Vec<u8>, SaslError>;
    /// Checks the server's final token (sent with SUCCESS); errors if the server could not
    /// prove it knows the shared secret or if the exchange is not complete.
    fn verify_success(&mut self, token: Option<&[u8]>) -> Result<(), SaslError>;
}
