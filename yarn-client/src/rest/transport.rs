//! The RM's HTTP transport: URLs, authenticated sends that follow redirects only to known
//! RMs, replies read under a cap, and JSON decoding with errors that name the URL.

use super::{RestError, Result, RmRest, MAX_REDIRECTS};
use crate::http_auth::HttpAuth;
use crate::http_auth::RM_DELEGATION_HEADER;
use crate::http_body::BodyError;
use crate::redact::{redact, RedactedUrl};

/// `scheme://host:port` of a URL, the unit of trust for redirects.
pub(super) fn origin_of(url: &str) -> Option<reqwest::Url> {
    let u = reqwest::Url::parse(url).ok()?;
    let mut o = u.clone();
    o.set_path("");
    o.set_query(None);
    o.set_fragment(None);
    o.set_port(u.port_or_known_default()).ok()?;
    Some(o)
}

/// A web address (`host:port` or a URL) as the client's base URL.
pub(super) fn base_url(web_address: &str) -> String {
    if web_address.contains("://") {
        web_address.trim_end_matches('/').to_string()
    } else {
        format!("http://{web_address}")
    }
}

/// True when a 401 offers SPNEGO (`WWW-Authenticate: Negotiate`).
fn wants_negotiate(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .any(|v| {
            v.to_str()
                .is_ok_and(|v| v.trim_start().starts_with("Negotiate"))
        })
}

impl RmRest {
    pub(super) fn url(&self, path: &str) -> String {
        self.url_at(&self.base, path)
    }

    /// `path` at `base` (the RM, or a NodeManager), with `user.name` under simple auth.
    pub(super) fn url_at(&self, base: &str, path: &str) -> String {
        match self.auth.simple_user() {
            Some(user) => {
                let sep = if path.contains('?') { '&' } else { '?' };
                format!("{}{}{}user.name={}", base, path, sep, user)
            }
            None => format!("{}{}", base, path),
        }
    }

    /// One call, following redirects to known RMs (at most [`MAX_REDIRECTS`]); the body
    /// is read under the reply limit. Non-2xx is [`RestError::Status`].
    pub(super) async fn send(
        &self,
        method: &'static str,
        url: String,
        body: Option<serde_json::Value>,
    ) -> Result<(u16, String)> {
        self.send_accepting(method, url, body, "application/json")
            .await
    }

    /// [`Self::send`] asking for `accept` (the NodeManagers' log files are text only).
    pub(super) async fn send_accepting(
        &self,
        method: &'static str,
        url: String,
        body: Option<serde_json::Value>,
        accept: &'static str,
    ) -> Result<(u16, String)> {
        let mut at = url.clone();
        let mut method = method;
        let mut body = body;
        for _ in 0..=MAX_REDIRECTS {
            let resp = self.send_once(method, &at, body.as_ref(), accept).await?;
            let status = resp.status().as_u16();
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok());
            let Some(location) = location.filter(|_| resp.status().is_redirection()) else {
                return self.finish(method, &at, resp).await;
            };
            let next = reqwest::Url::parse(&at)
                .and_then(|u| u.join(location))
                .map_err(|_| RestError::BadReply {
                    url: RedactedUrl::new(&at),
                    reason: format!("redirect to an invalid URL {}", redact(location)),
                })?;
            if !origin_of(next.as_str()).is_some_and(|o| self.known_origins.contains(&o)) {
                return Err(RestError::ForeignRedirect {
                    url: RedactedUrl::new(&at),
                    location: RedactedUrl::new(next.as_str()),
                });
            }
            tracing::debug!(from = %RedactedUrl::new(&at), to = %RedactedUrl::new(next.as_str()), "following the RM's redirect");
            if status == 303 {
                // "See other": the answer is a GET of the new place.
                (method, body) = ("GET", None);
            }
            at = next.to_string();
        }
        Err(RestError::TooManyRedirects { url: url.into() })
    }

    /// One request to `url`, authenticated for its host, with the SPNEGO cookie retry.
    async fn send_once(
        &self,
        method: &'static str,
        url: &str,
        body: Option<&serde_json::Value>,
        accept: &'static str,
    ) -> Result<reqwest::Response> {
        let mut req = match method {
            "GET" => self.http.get(url),
            "POST" => self.http.post(url),
            "PUT" => self.http.put(url),
            other => unreachable!("unsupported method {other}"),
        }
        .header("Accept", accept);
        if let Some(b) = body {
            req = req.json(b);
        }
        if let HttpAuth::Delegation { token } = &self.auth {
            req = req.header(RM_DELEGATION_HEADER, token);
        }
        let retry = req.try_clone();
        let kerberos = |source| RestError::Kerberos {
            url: RedactedUrl::new(url),
            source,
        };
        let req = self.auth.authorize(req, url).await.map_err(kerberos)?;
        let unreachable = |source: reqwest::Error| RestError::Unreachable {
            url: RedactedUrl::new(url),
            source: source.without_url(),
        };
        let mut resp = req.send().await.map_err(unreachable)?;
        if let (true, Some(again)) = (self.auth.should_retry(resp.status().as_u16()), retry) {
            // The hadoop.auth cookie expired: once more with a fresh Kerberos token.
            let again = self.auth.reauthorize(again, url).await.map_err(kerberos)?;
            resp = again.send().await.map_err(unreachable)?;
        }
        self.auth.remember(&resp);
        Ok(resp)
    }

    /// The final reply: its body (capped) on 2xx, else the typed error.
    async fn finish(
        &self,
        method: &'static str,
        url: &str,
        resp: reqwest::Response,
    ) -> Result<(u16, String)> {
        let status = resp.status().as_u16();
        if status == 401 && self.auth.simple_user().is_some() && wants_negotiate(&resp) {
            return Err(RestError::NeedsKerberos { url: url.into() });
        }
        let text = crate::http_body::text_capped(resp, self.reply_limit)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge { limit } => RestError::TooLarge {
                    method,
                    url: url.into(),
                    limit,
                },
                BodyError::Read(source) => RestError::Unreachable {
                    url: url.into(),
                    source: source.without_url(),
                },
            })?;
        if !(200..300).contains(&status) {
            return Err(RestError::Status {
                method,
                url: url.into(),
                status,
                body: redact(&text.chars().take(2000).collect::<String>()),
            });
        }
        Ok((status, text))
    }

    pub(super) async fn get_json(&self, path: &str) -> Result<serde_json::Value> {
        self.json_at(self.url(path)).await
    }

    /// A GET of `url` (the RM's or a NodeManager's) as JSON.
    pub(super) async fn json_at(&self, url: String) -> Result<serde_json::Value> {
        let (_, text) = self.send("GET", url.clone(), None).await?;
        serde_json::from_str(&text).map_err(|e| RestError::BadReply {
            url: url.into(),
            reason: format!(
                "not JSON ({e}): {}",
                redact(&text.chars().take(200).collect::<String>())
            ),
        })
    }

    pub(super) fn field<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        v: serde_json::Value,
        key: &str,
    ) -> Result<T> {
        let inner = v.get(key).cloned().ok_or_else(|| RestError::BadReply {
            url: RedactedUrl::new(&self.url(path)),
            reason: format!("no `{key}` in reply"),
        })?;
        serde_json::from_value(inner).map_err(|e| RestError::BadReply {
            url: RedactedUrl::new(&self.url(path)),
            reason: format!("`{key}` has an unexpected shape: {e}"),
        })
    }
}
