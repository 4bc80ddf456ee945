//! How a web client (RM REST, WebHDFS) proves who it is to Hadoop's web servers:
//!
//! - **simple** (insecure clusters): the caller names itself, `user.name=<user>`;
//! - **Kerberos** (secure clusters): SPNEGO (`Authorization: Negotiate <token>`, RFC 4559)
//!   with a Kerberos ticket for `HTTP@<host>`; the server answers with a signed `hadoop.auth`
//!   cookie that later requests send instead, so the KDC is asked once per client, not per
//!   call;
//! - **delegation token** (inside the cluster, where there is no ticket): the token Hadoop
//!   issued to the submitter, `delegation=<token>` for WebHDFS and the
//!   `X-Hadoop-Delegation-Token` header for the RM.
//!
//! The token goes out with the first request (no 401 round trip), so a request whose body
//! can only be sent once (a streamed upload) needs no retry; a 401 with an expired cookie is
//! retried once with a fresh token when the request can be cloned.

use std::sync::{Arc, Mutex};

use base64::Engine as _;

use crate::gssapi::{Credential, KerberosError};

/// Hadoop's authentication cookie (`AuthenticatedURL.AUTH_COOKIE`).
pub const AUTH_COOKIE: &str = "hadoop.auth";
/// The header the RM reads a delegation token from.
pub const RM_DELEGATION_HEADER: &str = "X-Hadoop-Delegation-Token";

/// One client's way to authenticate; clone it freely (a Kerberos login is shared, each
/// clone keeps its own cookie).
#[derive(Debug, Clone)]
pub enum HttpAuth {
    Simple {
        user: String,
    },
    Kerberos(Spnego),
    /// A delegation token's URL string (`Token.encodeToUrlString`).
    Delegation {
        token: String,
    },
}

impl HttpAuth {
    pub fn simple(user: &str) -> Self {
        HttpAuth::Simple {
            user: user.to_string(),
        }
    }

    pub fn kerberos(credential: Arc<Credential>) -> Self {
        HttpAuth::Kerberos(Spnego::new(credential))
    }

    /// The same scheme for another client (another server): a Kerberos login is shared,
    /// the cookie is not (each server signs its own).
    pub fn fresh(&self) -> Self {
        match self {
            HttpAuth::Kerberos(s) => HttpAuth::Kerberos(Spnego::new(s.credential.clone())),
            other => other.clone(),
        }
    }

    /// The `user.name` query value under simple auth.
    pub fn simple_user(&self) -> Option<&str> {
        match self {
            HttpAuth::Simple { user } => Some(user),
            _ => None,
        }
    }

    /// Adds what this scheme sends with every request besides query parameters: the
    /// SPNEGO token or cookie. Blocking work (the KDC) runs on a blocking thread.
    pub async fn authorize(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<reqwest::RequestBuilder, KerberosError> {
        match self {
            HttpAuth::Kerberos(s) => s.authorize(req, url, false).await,
            _ => Ok(req),
        }
    }

    /// Remembers a `hadoop.auth` cookie the server set.
    pub fn remember(&self, resp: &reqwest::Response) {
        if let HttpAuth::Kerberos(s) = self {
            s.remember(resp.headers());
        }
    }

    /// For a 401: whether a retry with a fresh SPNEGO token may help (the cookie expired),
    /// and forgets the cookie.
    pub fn should_retry(&self, status: u16) -> bool {
        match self {
            HttpAuth::Kerberos(s) if status == 401 => s.forget(),
            _ => false,
        }
    }

    /// A retry's request with a fresh SPNEGO token.
    pub async fn reauthorize(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<reqwest::RequestBuilder, KerberosError> {
        match self {
            HttpAuth::Kerberos(s) => s.authorize(req, url, true).await,
            _ => Ok(req),
        }
    }
}

/// SPNEGO state of one client: the login and the last `hadoop.auth` cookie.
#[derive(Debug, Clone)]
pub struct Spnego {
    credential: Arc<Credential>,
    cookie: Arc<Mutex<Option<String>>>,
}

/// The host of an `http(s)://host[:port]/...` URL: the service name's host part.
pub fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let authority = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// The `hadoop.auth=...` pair of a `Set-Cookie` value, if it sets a non-empty one.
pub fn auth_cookie(set_cookie: &str) -> Option<String> {
    let pair = set_cookie.split(';').next()?.trim();
    let (name, value) = pair.split_once('=')?;
    (name.trim() == AUTH_COOKIE && !value.trim().trim_matches('"').is_empty())
        .then(|| pair.to_string())
}

impl Spnego {
    pub fn new(credential: Arc<Credential>) -> Self {
        Self {
            credential,
            cookie: Arc::new(Mutex::new(None)),
        }
    }

    pub fn credential(&self) -> &Arc<Credential> {
        &self.credential
    }

    fn cookie(&self) -> Option<String> {
        self.cookie
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Forgets the cookie; true when there was one (so a fresh token may help).
    fn forget(&self) -> bool {
        self.cookie
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .is_some()
    }

    fn remember(&self, headers: &reqwest::header::HeaderMap) {
        for v in headers.get_all(reqwest::header::SET_COOKIE) {
            if let Some(c) = v.to_str().ok().and_then(auth_cookie) {
                *self.cookie.lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
            }
        }
    }

    async fn authorize(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
        fresh: bool,
    ) -> Result<reqwest::RequestBuilder, KerberosError> {
        if !fresh {
            if let Some(c) = self.cookie() {
                return Ok(req.header(reqwest::header::COOKIE, c));
            }
        }
        let host = url_host(url).to_string();
        let cred = self.credential.clone();
        let token = tokio::task::spawn_blocking(move || cred.http_token(&host))
            .await
            .map_err(|e| KerberosError::Gss {
                call: "gss_init_sec_context",
                detail: format!("the login thread failed: {e}"),
            })??;
        let b64 = base64::engine::general_purpose::STANDARD.encode(token);
        Ok(req.header(reqwest::header::AUTHORIZATION, format!("Negotiate {b64}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_urls() {
        assert_eq!(url_host("http://rm:8088/ws/v1/cluster"), "rm");
        assert_eq!(url_host("http://rm:9870"), "rm");
        assert_eq!(url_host("https://nn.example.com/x?y"), "nn.example.com");
        assert_eq!(url_host("http://u@h:1/"), "h");
        assert_eq!(url_host("http://[::1]:8088/"), "::1");
        assert_eq!(url_host("rm:8088"), "rm");
    }

    #[test]
    fn only_a_non_empty_hadoop_auth_cookie_is_kept() {
        let set = r#"hadoop.auth="u=alice&p=alice@YARN.TEST&t=kerberos&e=1&s=x"; Path=/; HttpOnly"#;
        assert_eq!(
            auth_cookie(set).as_deref(),
            Some(r#"hadoop.auth="u=alice&p=alice@YARN.TEST&t=kerberos&e=1&s=x""#)
        );
        assert_eq!(auth_cookie("hadoop.auth=; Path=/"), None);
        assert_eq!(auth_cookie(r#"hadoop.auth=""; Path=/"#), None);
        assert_eq!(auth_cookie("JSESSIONID=abc; Path=/"), None);
    }

    #[test]
    fn simple_auth_names_the_user_and_nothing_else() {
        let a = HttpAuth::simple("bob");
        assert_eq!(a.simple_user(), Some("bob"));
        assert!(!a.should_retry(401));
        let d = HttpAuth::Delegation { token: "t".into() };
        assert_eq!(d.simple_user(), None);
        assert!(!d.should_retry(401));
    }
}
