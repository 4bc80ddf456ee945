//! A small WebHDFS client: the few file operations an application submitter needs to stage
//! files on HDFS (make a folder, upload a file, read its status, delete a folder), input
//! listing (folders, block locations), and a task's streamed read of a byte range from a
//! replica of its choice ([`WebHdfs::open_range`] with `excludedatanodes`).
//!
//! Why WebHDFS and not HDFS's own RPC: it is plain HTTP + JSON on the NameNode's web port,
//! needs no protobuf stubs or data-transfer protocol, and on an insecure cluster a caller
//! names itself with the `user.name` query parameter ("simple" auth), like the RM's REST API.
//! On a secure cluster the NameNode wants SPNEGO or a delegation token
//! ([`crate::http_auth`]); the DataNode URL it redirects to carries a delegation token of
//! its own making, so the DataNode request is sent as the NameNode wrote it.
//!
//! Writing a file takes two requests, because the NameNode never carries file data: the
//! NameNode picks a DataNode and names it (`op=CREATE`), then the bytes go to that DataNode.
//! We ask with `noredirect=true` so the NameNode answers `200 {"Location": ...}` instead of a
//! `307` whose body-less redirect an HTTP library might follow with an empty PUT; a `307` is
//! still understood for servers that ignore the parameter.
//!
//! Errors keep what the server said: WebHDFS wraps Java exceptions as
//! `{"RemoteException": {"exception", "javaClassName", "message"}}`, and callers need the
//! class to tell "file not found" from real failures.
//!
//! Every request has a timeout, so a dead or silent NameNode or DataNode gives an error that
//! names the URL instead of a hang.

mod error;
mod namespace;
mod read;
mod url;
mod write;

use error::{error_from_reply, unreachable};
pub use error::{parse_remote_exception, RemoteException, WebHdfsError, FILE_NOT_FOUND};
#[cfg(test)]
pub(crate) use namespace::{parse_block_locations, parse_file_status, parse_listing};
pub use namespace::{BlockLocation, DirEntry, FileStatus, FileType, ListingPage};
pub use read::RangeRead;
#[cfg(test)]
use url::decode;
pub(crate) use url::encode;
pub use url::{check_path, normalize_base};
use url::{query_param, url_authority};
pub use write::Created;
use write::MIN_UPLOAD_RATE;

use std::time::Duration;

use serde::Deserialize;

use crate::gssapi::KerberosError;
use crate::http_auth::HttpAuth;

pub type Result<T> = std::result::Result<T, WebHdfsError>;

/// A WebHDFS client bound to one NameNode web address and one way to authenticate.
#[derive(Debug, Clone)]
pub struct WebHdfs {
    base: String,
    user: String,
    auth: HttpAuth,
    timeout: Duration,
    http: reqwest::Client,
    reply_limit: u64,
}

/// The largest reply body read (audit L4), JSON or a file read whole: a squatter on the
/// NameNode's or a DataNode's address must not fill our memory. A full `LISTSTATUS_BATCH`
/// page (`dfs.ls.limit` 1000 entries) is about 300 KB; block locations of a file with
/// 100,000 blocks about 30 MB.
pub const MAX_REPLY_BYTES: u64 = 32 << 20;

impl WebHdfs {
    /// `address` is the NameNode's web address (`dfs.namenode.http-address`, port 9870 by
    /// default): `host:port`, `http://host:port` or `webhdfs://host:port`; over TLS
    /// (`dfs.namenode.https-address`, 9871) `https://host:port` or `swebhdfs://host:port`,
    /// trusted as [`crate::tls::TlsTrust::from_env`] says. Every request is bounded by
    /// `timeout` (uploads get more, in proportion to their size).
    pub fn new(address: &str, user: &str, timeout: Duration) -> Result<Self> {
        Self::with_trust(address, user, timeout, &crate::tls::TlsTrust::from_env())
    }

    /// As [`WebHdfs::new`], trusting `trust` for `https://` addresses.
    pub fn with_trust(
        address: &str,
        user: &str,
        timeout: Duration,
        trust: &crate::tls::TlsTrust,
    ) -> Result<Self> {
        let base = normalize_base(address)?;
        let http = trust
            .apply(reqwest::Client::builder())?
            .timeout(timeout)
            .connect_timeout(timeout)
            // Redirects are followed by hand: a 307 to a DataNode must carry the file's bytes.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| unreachable("setup", &base, e))?;
        Ok(Self {
            base,
            user: user.to_string(),
            auth: HttpAuth::simple(user),
            timeout,
            http,
            reply_limit: MAX_REPLY_BYTES,
        })
    }

    /// The same client with another cap on reply bodies (default [`MAX_REPLY_BYTES`]).
    pub fn with_reply_limit(mut self, bytes: u64) -> Self {
        self.reply_limit = bytes;
        self
    }

    /// The same client authenticating with `auth` (SPNEGO or a delegation token) instead
    /// of `user.name`. The user name stays what [`WebHdfs::user`] reports.
    pub fn with_auth(mut self, auth: HttpAuth) -> Self {
        self.auth = auth.fresh();
        self
    }

    /// A delegation token from the NameNode (`op=GETDELEGATIONTOKEN`), as its URL string
    /// (what `delegation=` and YARN's REST credentials take). `kind` is e.g.
    /// `HDFS_DELEGATION_TOKEN`, which the NodeManagers' HDFS client uses (without it the
    /// NameNode issues a `WEBHDFS delegation` token); `renewer` is who may renew it (the
    /// RM's short name, so that YARN renews it while the application runs).
    pub async fn delegation_token(&self, renewer: &str, kind: &str) -> Result<String> {
        let url = self.op_url(
            "/",
            "GETDELEGATIONTOKEN",
            &[("renewer", renewer), ("kind", kind)],
        )?;
        let (_, body, _) = self
            .send("GETDELEGATIONTOKEN", "/", self.http.get(&url), &url)
            .await?;
        #[derive(Deserialize)]
        struct UrlString {
            #[serde(rename = "urlString")]
            url_string: String,
        }
        let t: Option<UrlString> = Self::json("GETDELEGATIONTOKEN", &url, &body, "Token")?;
        t.map(|t| t.url_string)
            .ok_or_else(|| WebHdfsError::BadReply {
                op: "GETDELEGATIONTOKEN",
                url: url.into(),
                reason: "the NameNode issued no token (is security off?)".into(),
            })
    }

    /// The NameNode web base URL, e.g. `http://rm:9870`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub fn user(&self) -> &str {
        &self.user
    }
}

#[cfg(test)]
mod server_fault_tests;
#[cfg(test)]
mod tests;
