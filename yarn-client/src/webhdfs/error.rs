//! What can go wrong, with what the server said (its Java exception class kept).

use serde::Deserialize;

use super::*;
use crate::redact::{redact, RedactedUrl};

/// Java class of the exception HDFS raises for a missing path.
pub const FILE_NOT_FOUND: &str = "java.io.FileNotFoundException";

/// What can go wrong talking to WebHDFS. Each variant names the operation and the URL or
/// path, so an operator can repeat the call by hand; URLs are [`RedactedUrl`]s and server text
/// is [`redact`]ed, so no error carries a delegation token or a user name.
#[derive(Debug, thiserror::Error)]
pub enum WebHdfsError {
    /// The trust for `https://` addresses could not be set up (see [`crate::tls`]).
    #[error("setting up TLS for WebHDFS")]
    Tls(#[from] crate::tls::TlsConfigError),
    #[error("invalid WebHDFS address {address:?}: {reason}")]
    BadAddress { address: String, reason: String },
    #[error("invalid HDFS path {path:?}: {reason}")]
    BadPath { path: String, reason: String },
    /// No HTTP answer: refused, unresolvable, timed out, cut off. `cause` is the whole
    /// chain of the transport error in one line (it repeats no URL).
    #[error("cannot reach WebHDFS for {op} at {url}: {cause}")]
    Unreachable {
        op: &'static str,
        url: RedactedUrl,
        cause: String,
        timed_out: bool,
    },
    /// The server raised a Java exception; `java_class` is e.g. `java.io.FileNotFoundException`.
    #[error("WebHDFS {op} {path} failed (HTTP {status}): {java_class}: {message}")]
    Remote {
        op: &'static str,
        path: String,
        status: u16,
        exception: String,
        java_class: String,
        message: String,
    },
    /// An error status without a RemoteException body (a proxy, a wrong port).
    #[error("WebHDFS answered HTTP {status} to {op} {url}: {body}")]
    Status {
        op: &'static str,
        url: RedactedUrl,
        status: u16,
        body: String,
    },
    #[error("reading {path} to upload it: {source}")]
    LocalFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("unexpected WebHDFS reply to {op} {url}: {reason}")]
    BadReply {
        op: &'static str,
        url: RedactedUrl,
        reason: String,
    },
    /// The reply body passed the client's cap ([`MAX_REPLY_BYTES`] by default).
    #[error("the reply to WebHDFS {op} at {url} is larger than the {limit}-byte limit")]
    TooLarge {
        op: &'static str,
        url: RedactedUrl,
        limit: u64,
    },
    /// No Kerberos token could be made for the request (no ticket, expired, no library).
    #[error("authenticating to WebHDFS for {op} at {url}")]
    Kerberos {
        op: &'static str,
        url: RedactedUrl,
        #[source]
        source: KerberosError,
    },
}

impl WebHdfsError {
    /// True when HDFS said the path does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, WebHdfsError::Remote { java_class, .. } if java_class == FILE_NOT_FOUND)
    }
}

/// The body of a WebHDFS error reply.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteException {
    #[serde(default)]
    pub exception: String,
    #[serde(default)]
    pub java_class_name: String,
    #[serde(default)]
    pub message: String,
}

/// Reads a WebHDFS error body; `None` when it is not a RemoteException (e.g. an HTML page).
pub fn parse_remote_exception(body: &str) -> Option<RemoteException> {
    #[derive(Deserialize)]
    struct Wrapper {
        #[serde(rename = "RemoteException")]
        remote_exception: RemoteException,
    }
    serde_json::from_str::<Wrapper>(body)
        .ok()
        .map(|w| w.remote_exception)
}

/// A transport error, flattened: reqwest's own message says little ("error sending
/// request"); the useful part ("Connection refused", "operation timed out") is deep in its
/// source chain.
pub(super) fn unreachable(op: &'static str, url: &str, e: reqwest::Error) -> WebHdfsError {
    let timed_out = e.is_timeout();
    let e = e.without_url();
    let mut cause = e.to_string();
    let mut next = std::error::Error::source(&e);
    while let Some(s) = next {
        let msg = s.to_string();
        if !cause.ends_with(&msg) {
            cause.push_str(": ");
            cause.push_str(&msg);
        }
        next = s.source();
    }
    if timed_out && !cause.contains("timed out") {
        cause.push_str(" (timed out)");
    }
    WebHdfsError::Unreachable {
        op,
        url: RedactedUrl::new(url),
        cause,
        timed_out,
    }
}

/// The error for an HTTP error reply: the Java exception when the body carries one.
pub(super) fn error_from_reply(
    op: &'static str,
    path: &str,
    url: &str,
    status: u16,
    body: &str,
) -> WebHdfsError {
    match parse_remote_exception(body) {
        Some(e) => WebHdfsError::Remote {
            op,
            path: path.to_string(),
            status,
            java_class: if e.java_class_name.is_empty() {
                e.exception.clone()
            } else {
                e.java_class_name
            },
            exception: e.exception,
            message: redact(&e.message),
        },
        None => WebHdfsError::Status {
            op,
            url: RedactedUrl::new(url),
            status,
            body: redact(&body.chars().take(500).collect::<String>()),
        },
    }
}
