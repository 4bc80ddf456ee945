//! Errors of the IPC client. A remote (Java-side) failure keeps the exception class name so
//! callers can react to specific YARN conditions (re-register, give up, fix the ask).

use std::time::Duration;

use super::frame::FrameError;
use crate::sasl::SaslError;

/// An exception thrown by the Hadoop server, as carried in `RpcResponseHeaderProto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// Fully qualified Java class, e.g.
    /// `org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException`.
    pub class: String,
    /// The server's message (Hadoop appends the stack trace).
    pub message: String,
    /// FATAL: the server closed the connection; ERROR: only this call failed.
    pub fatal: bool,
    /// `RpcErrorCodeProto` number, if sent.
    pub code: Option<i32>,
}

impl RemoteError {
    /// True when the class is `name`, given either fully qualified or as the simple name
    /// (`InvalidResourceRequestException`, `SecretManager$InvalidToken`, `InvalidToken`).
    pub fn is_class(&self, name: &str) -> bool {
        self.class == name
            || self.class.rsplit('.').next() == Some(name)
            || self.class.rsplit(['.', '$']).next() == Some(name)
    }

    /// The first line of the message, without the Java stack trace.
    pub fn summary(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }

    /// SASL or token failures: retrying with the same token will not help.
    pub fn is_auth_failure(&self) -> bool {
        self.code == Some(15)
            || self.is_class("InvalidToken")
            || self.is_class("AccessControlException")
            || self.is_class("SaslException")
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}: {}",
            if self.fatal { "FATAL " } else { "" },
            self.class,
            self.summary()
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} to {addr} timed out after {after:?}")]
    Timeout {
        addr: String,
        what: &'static str,
        after: Duration,
    },
    #[error("connection to {addr} failed: {source}")]
    Frame {
        addr: String,
        #[source]
        source: FrameError,
    },
    #[error("i/o error on the connection to {addr}: {source}")]
    Io {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("authentication to {addr} failed: {source}")]
    Sasl {
        addr: String,
        #[source]
        source: SaslError,
    },
    #[error("authentication to {addr} failed: server refused us: {remote}")]
    AuthRejected { addr: String, remote: RemoteError },
    #[error(
        "authentication to {addr} failed: the server closed the connection after our SASL \
         response (token rejected without a reason; wrong token kind or node?)"
    )]
    SaslAborted { addr: String },
    #[error(
        "{addr} asked to switch to SIMPLE authentication although we offered a token: refused, \
         because SIMPLE skips the server's proof that it knows the token (an impostor could be \
         answering). If this server really runs without SASL, set {key}=true in the \
         submitter's core-site.xml",
        key = super::FALLBACK_TO_SIMPLE_KEY
    )]
    SimpleFallbackRefused { addr: String },
    #[error("{addr} answered with {remote}")]
    Remote { addr: String, remote: RemoteError },
    #[error("protocol error from {addr}: {reason}")]
    Protocol { addr: String, reason: String },
    #[error("connection to {addr} was closed: {reason}")]
    ConnectionLost { addr: String, reason: String },
    #[error("cannot decode the reply of {method} from {addr}: {source}")]
    Decode {
        addr: String,
        method: String,
        #[source]
        source: FrameError,
    },
}

impl RpcError {
    /// The server-side exception, if this error is one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            RpcError::Remote { remote, .. } | RpcError::AuthRejected { remote, .. } => Some(remote),
            _ => None,
        }
    }

    /// Shorthand for `remote().is_some_and(|r| r.is_class(name))`.
    pub fn is_class(&self, name: &str) -> bool {
        self.remote().is_some_and(|r| r.is_class(name))
    }

    /// True for every way authentication can fail (bad password, rejected token, bad server proof).
    pub fn is_auth_failure(&self) -> bool {
        matches!(
            self,
            RpcError::Sasl { .. }
                | RpcError::AuthRejected { .. }
                | RpcError::SaslAborted { .. }
                | RpcError::SimpleFallbackRefused { .. }
        ) || self.remote().is_some_and(|r| r.is_auth_failure())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_class_accepts_full_and_simple_names() {
        let e = RemoteError {
            class: "org.apache.hadoop.security.token.SecretManager$InvalidToken".into(),
            message: "Invalid AMRMToken\n\tat x".into(),
            fatal: true,
            code: Some(15),
        };
        assert!(e.is_class("SecretManager$InvalidToken"));
        assert!(e.is_class("InvalidToken"));
        assert!(e.is_class("org.apache.hadoop.security.token.SecretManager$InvalidToken"));
        assert!(!e.is_class("Token"));
        assert!(e.is_auth_failure());
        assert_eq!(e.summary(), "Invalid AMRMToken");
    }
}
