//! Client for the ResourceManager's REST API (`/ws/v1/cluster/...`).
//!
//! REST is how we submit applications and watch them: it needs no Kerberos or token
//! handshake on an insecure cluster (the caller names itself with `user.name`), on a secure
//! one SPNEGO or a delegation token (see [`crate::http_auth`]), and it is what operators
//! already use. The AM itself talks IPC to the scheduler port; this module
//! is for submitters, tests and status commands.
//!
//! Jersey 1 (Hadoop 3.4) renders an empty list as `null` or leaves the key out, so every
//! list here is parsed defensively.

mod apps;
mod cluster;
mod submission;
mod transport;

use transport::{base_url, origin_of};

pub use apps::AppReport;
#[cfg(test)]
pub(crate) use cluster::parse_nodes;
pub use cluster::{find_leaf_queue, ClusterInfo, NodeInfo, QueueInfo};
pub use submission::{
    credentials_json, iso8601_utc, AmContainerSpec, LocalResource, LogAggregation, NewApplication,
    Resource, Submission,
};

use std::time::Duration;

use crate::gssapi::KerberosError;
use crate::http_auth::HttpAuth;
use crate::redact::{redact, RedactedUrl};

/// What can go wrong talking to the RM over HTTP. Each variant names the URL so that an
/// operator can retry the same call by hand, as a [`RedactedUrl`] (no `user.name=` value), and
/// server text is [`redact`]ed.
#[derive(Debug, thiserror::Error)]
pub enum RestError {
    /// The trust for `https://` addresses could not be set up (see [`crate::tls`]).
    #[error("setting up TLS for the ResourceManager's web API")]
    Tls(#[from] crate::tls::TlsConfigError),
    /// The reason (refused, timed out, ...) is the error's source chain, which anyhow's
    /// `{:#}` prints; the URL is already here, so the source carries none.
    #[error("cannot reach the ResourceManager at {url}")]
    Unreachable {
        url: RedactedUrl,
        #[source]
        source: reqwest::Error,
    },
    #[error("ResourceManager answered {status} to {method} {url}: {body}")]
    Status {
        method: &'static str,
        url: RedactedUrl,
        status: u16,
        body: String,
    },
    #[error("unexpected reply from {url}: {reason}")]
    BadReply { url: RedactedUrl, reason: String },
    /// No Kerberos token could be made for the request (no ticket, expired, no library).
    #[error("authenticating to {url}")]
    Kerberos {
        url: RedactedUrl,
        #[source]
        source: KerberosError,
    },
    /// The RM wants Kerberos (SPNEGO) and we sent a user name.
    #[error("the ResourceManager at {url} requires Kerberos (SPNEGO): run kinit or pass --principal/--keytab")]
    NeedsKerberos { url: RedactedUrl },
    /// A redirect to an origin (scheme, host, port) that is neither this RM's nor another
    /// RM this client was told of: following it would hand our credentials to that host.
    #[error(
        "refusing the redirect from {url} to {location}: not a known ResourceManager \
         (credentials are only sent to the configured RM web addresses)"
    )]
    ForeignRedirect {
        url: RedactedUrl,
        location: RedactedUrl,
    },
    /// More than [`MAX_REDIRECTS`] redirects in a row.
    #[error("more than {MAX_REDIRECTS} redirects starting at {url}")]
    TooManyRedirects { url: RedactedUrl },
    /// The reply body passed the client's cap ([`MAX_REPLY_BYTES`] by default).
    #[error("the reply to {method} {url} is larger than the {limit}-byte limit")]
    TooLarge {
        method: &'static str,
        url: RedactedUrl,
        limit: u64,
    },
}

/// The largest RM reply read (audit L4): a squatter on the RM's address must not be able to
/// fill our memory. 32 MiB is several times the node list of a 10,000-node cluster (about
/// 500 bytes a node), the largest reply this client asks for.
pub const MAX_REPLY_BYTES: u64 = 32 << 20;

/// Redirects followed for one call. The RM itself redirects once at most (a standby RM to
/// the active one, `RMWebAppFilter`); a chain is a loop or a stranger.
pub const MAX_REDIRECTS: usize = 3;

pub type Result<T> = std::result::Result<T, RestError>;

/// A REST client bound to one RM web address and one way to authenticate.
///
/// Redirects (audit L1): reqwest's own policy would follow a redirect anywhere and keep our
/// `X-Hadoop-Delegation-Token` header (it strips only `Authorization` and cookies across
/// hosts), so anyone answering on the RM's address could collect the token. YARN's RM
/// redirects in one case: a standby RM sends REST calls to the active one with a `307`
/// (`RMWebAppFilter`), a cross-host redirect, so refusing every redirect would break RM HA.
/// So the client follows redirects by hand, and only to the origins (scheme, host, port) of
/// RMs it knows: its own and those added with [`RmRest::with_other_rms`] (the HA peers from
/// `yarn-site.xml`). Each hop is authenticated afresh for its own host (SPNEGO asks for
/// `HTTP@<that host>`). A redirect elsewhere is [`RestError::ForeignRedirect`].
#[derive(Debug, Clone)]
pub struct RmRest {
    base: String,
    auth: HttpAuth,
    http: reqwest::Client,
    /// Origins a redirect may lead to: this RM's and the other known RMs'.
    known_origins: Vec<reqwest::Url>,
    reply_limit: u64,
}

impl RmRest {
    /// `web_address` is `host:port` or a full `http://` or `https://` URL of the RM web app
    /// (8088, or 8090 for HTTPS). Every call is bounded by `timeout`, so a dead RM gives an
    /// error, not a hang. `https://` is trusted as [`crate::tls::TlsTrust::from_env`] says.
    pub fn new(web_address: &str, user: &str, timeout: Duration) -> Result<Self> {
        Self::with_trust(
            web_address,
            user,
            timeout,
            &crate::tls::TlsTrust::from_env(),
        )
    }

    /// As [`RmRest::new`], trusting `trust` for `https://` addresses.
    pub fn with_trust(
        web_address: &str,
        user: &str,
        timeout: Duration,
        trust: &crate::tls::TlsTrust,
    ) -> Result<Self> {
        let base = base_url(web_address);
        let http = trust
            .apply(reqwest::Client::builder())?
            .timeout(timeout)
            .connect_timeout(timeout)
            // Followed by hand, to known RMs only (see the type's doc).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|source| RestError::Unreachable {
                url: RedactedUrl::new(&base),
                source: source.without_url(),
            })?;
        Ok(Self {
            known_origins: origin_of(&base).into_iter().collect(),
            base,
            auth: HttpAuth::simple(user),
            http,
            reply_limit: MAX_REPLY_BYTES,
        })
    }

    /// The same client, also following redirects to these RM web addresses (`host:port` or
    /// URLs): the other RMs of an HA pair, to which a standby RM redirects.
    pub fn with_other_rms<S: AsRef<str>>(mut self, web_addresses: &[S]) -> Self {
        for a in web_addresses {
            if let Some(o) = origin_of(&base_url(a.as_ref())) {
                if !self.known_origins.contains(&o) {
                    self.known_origins.push(o);
                }
            }
        }
        self
    }

    /// The same client with another cap on reply bodies (default [`MAX_REPLY_BYTES`]).
    pub fn with_reply_limit(mut self, bytes: u64) -> Self {
        self.reply_limit = bytes;
        self
    }

    /// The same client authenticating with `auth` instead of `user.name`.
    pub fn with_auth(mut self, auth: HttpAuth) -> Self {
        self.auth = auth.fresh();
        self
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// How this client authenticates.
    pub fn auth(&self) -> &HttpAuth {
        &self.auth
    }

    /// A delegation token for the RM itself (`POST /ws/v1/cluster/delegation-token`), as
    /// its URL string: lets a process without a Kerberos ticket (the AM) use the REST API.
    /// Needs a Kerberos-authenticated client; `renewer` is who may renew it (the RM's
    /// short name, so that the RM renews it for the application's lifetime).
    pub async fn delegation_token(&self, renewer: &str) -> Result<String> {
        let url = self.url("/ws/v1/cluster/delegation-token");
        let body = serde_json::json!({ "renewer": renewer });
        let (_, text) = self.send("POST", url.clone(), Some(body)).await?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| RestError::BadReply {
                url: RedactedUrl::new(&url),
                reason: format!("delegation-token reply: {e}"),
            })?;
        v.get("token")
            .and_then(|t| t.as_str())
            .map(str::to_string)
            .ok_or_else(|| RestError::BadReply {
                url: url.into(),
                reason: format!(
                    "no `token` in {}",
                    redact(&text.chars().take(200).collect::<String>())
                ),
            })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod transport_tests;
