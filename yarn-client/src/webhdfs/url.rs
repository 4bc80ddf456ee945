//! Addresses, paths and op URLs, and the one request path every op goes through: send,
//! a reply read under a cap, JSON decoded with errors that name the URL.

use super::*;
use crate::http_auth::HttpAuth;
use crate::http_body::BodyError;
use crate::redact::{redact, RedactedUrl};

/// Turns what a user typed into the NameNode's web base URL: `host:port`, `http(s)://...`
/// or `webhdfs://host:port` (Hadoop's file-system scheme for the same service); a trailing
/// `/webhdfs/v1` is allowed.
pub fn normalize_base(address: &str) -> Result<String> {
    let bad = |reason: &str| WebHdfsError::BadAddress {
        address: address.to_string(),
        reason: reason.to_string(),
    };
    let a = address.trim();
    let (scheme, rest) = match a.split_once("://") {
        Some(("http", r)) | Some(("webhdfs", r)) => ("http", r),
        Some(("https", r)) | Some(("swebhdfs", r)) => ("https", r),
        Some((other, _)) => {
            return Err(bad(&format!(
                "scheme {other}:// is not http, https, webhdfs or swebhdfs"
            )))
        }
        None => ("http", a),
    };
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix("/webhdfs/v1").unwrap_or(rest);
    let host_port = rest.trim_end_matches('/');
    if host_port.is_empty() {
        return Err(bad("no host"));
    }
    if host_port.contains('/') || host_port.contains('?') || host_port.contains('#') {
        return Err(bad(
            "expected host:port, optionally followed by /webhdfs/v1",
        ));
    }
    Ok(format!("{scheme}://{host_port}"))
}

/// Percent-encodes one URL path segment or query value (RFC 3986 unreserved characters
/// pass through).
pub(crate) fn encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Checks an HDFS path is absolute and has no empty, `.` or `..` segments (HDFS refuses
/// them, and a clear local error beats the server's).
pub fn check_path(path: &str) -> Result<()> {
    let bad = |reason: &str| WebHdfsError::BadPath {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    if !path.starts_with('/') {
        return Err(bad("must be absolute (start with /)"));
    }
    if path == "/" {
        return Ok(());
    }
    for seg in path[1..].trim_end_matches('/').split('/') {
        match seg {
            "" => return Err(bad("has an empty segment (//)")),
            "." | ".." => return Err(bad("has a . or .. segment")),
            _ => {}
        }
    }
    Ok(())
}

/// The value of one query parameter of `url`, percent-decoded.
pub(super) fn query_param(url: &str, key: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then(|| decode(v))
    })
}

pub(super) fn decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%' && i + 2 < bytes.len())
            .then(|| Some(hex(bytes[i + 1])? * 16 + hex(bytes[i + 2])?))
            .flatten();
        match (escaped, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
            }
            (None, b'+') => {
                out.push(b' ');
                i += 1;
            }
            (None, b) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `host:port` of an `http(s)://host:port/...` URL.
pub(super) fn url_authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

impl WebHdfs {
    /// The URL of one operation on `path`; `params` are extra `key=value` pairs (values are
    /// encoded here).
    pub fn op_url(&self, path: &str, op: &str, params: &[(&str, &str)]) -> Result<String> {
        check_path(path)?;
        let mut url = format!("{}/webhdfs/v1{}?op={op}", self.base, encode(path, true));
        match &self.auth {
            HttpAuth::Simple { user } => {
                url.push_str("&user.name=");
                url.push_str(&encode(user, false));
            }
            HttpAuth::Delegation { token } => {
                url.push_str("&delegation=");
                url.push_str(&encode(token, false));
            }
            HttpAuth::Kerberos(_) => {}
        }
        for (k, v) in params {
            url.push('&');
            url.push_str(k);
            url.push('=');
            url.push_str(&encode(v, false));
        }
        Ok(url)
    }

    /// Sends a request and returns (status, body, Location header). An error status becomes
    /// [`WebHdfsError::Remote`] when the body is a RemoteException, else [`WebHdfsError::Status`].
    pub(super) async fn send(
        &self,
        op: &'static str,
        path: &str,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<(u16, String, Option<String>)> {
        let kerberos = |source| WebHdfsError::Kerberos {
            op,
            url: RedactedUrl::new(url),
            source,
        };
        let retry = req.try_clone();
        let req = self.auth.authorize(req, url).await.map_err(kerberos)?;
        let mut resp = req.send().await.map_err(|e| unreachable(op, url, e))?;
        if let (true, Some(again)) = (self.auth.should_retry(resp.status().as_u16()), retry) {
            // The hadoop.auth cookie expired: once more with a fresh Kerberos token.
            let again = self.auth.reauthorize(again, url).await.map_err(kerberos)?;
            resp = again.send().await.map_err(|e| unreachable(op, url, e))?;
        }
        self.auth.remember(&resp);
        self.read_reply(op, path, url, resp).await
    }

    /// Status, body and Location of a reply; an error status becomes an error.
    pub(super) async fn read_reply(
        &self,
        op: &'static str,
        path: &str,
        url: &str,
        resp: reqwest::Response,
    ) -> Result<(u16, String, Option<String>)> {
        let status = resp.status().as_u16();
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = crate::http_body::text_capped(resp, self.reply_limit)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge { limit } => WebHdfsError::TooLarge {
                    op,
                    url: url.into(),
                    limit,
                },
                BodyError::Read(e) => unreachable(op, url, e),
            })?;
        if status >= 400 {
            return Err(error_from_reply(op, path, url, status, &body));
        }
        Ok((status, body, location))
    }

    pub(super) fn json<T: serde::de::DeserializeOwned>(
        op: &'static str,
        url: &str,
        body: &str,
        key: &str,
    ) -> Result<T> {
        let v: serde_json::Value =
            serde_json::from_str(body).map_err(|e| WebHdfsError::BadReply {
                op,
                url: RedactedUrl::new(url),
                reason: format!(
                    "not JSON ({e}): {}",
                    redact(&body.chars().take(200).collect::<String>())
                ),
            })?;
        let inner = v.get(key).cloned().ok_or_else(|| WebHdfsError::BadReply {
            op,
            url: RedactedUrl::new(url),
            reason: format!(
                "no `{key}` in {}",
                redact(&body.chars().take(200).collect::<String>())
            ),
        })?;
        serde_json::from_value(inner).map_err(|e| WebHdfsError::BadReply {
            op,
            url: RedactedUrl::new(url),
            reason: format!("`{key}` has an unexpected shape: {e}"),
        })
    }
}
