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

use std::time::Duration;

use serde::Deserialize;

use crate::gssapi::KerberosError;
use crate::http_auth::HttpAuth;
use crate::http_body::BodyError;
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

pub type Result<T> = std::result::Result<T, WebHdfsError>;

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

/// `FILE` or `DIRECTORY` (or `SYMLINK`), as GETFILESTATUS reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FileType {
    File,
    Directory,
    Symlink,
}

/// `GET ?op=GETFILESTATUS` -> `FileStatus` (the fields we use). YARN checks `length` and
/// `modification_time` of a local resource against what the submitter declared.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStatus {
    pub length: u64,
    /// Milliseconds since the epoch.
    pub modification_time: u64,
    #[serde(rename = "type")]
    pub kind: FileType,
    #[serde(default)]
    pub owner: String,
    #[serde(default)]
    pub permission: String,
    #[serde(default)]
    pub replication: u32,
    #[serde(default)]
    pub block_size: u64,
}

/// One entry of a folder listing (`LISTSTATUS_BATCH`), the fields input listing uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    /// The entry's name in its folder (empty when the listed path is a file).
    pub path_suffix: String,
    pub length: u64,
    #[serde(rename = "type")]
    pub kind: FileType,
    #[serde(default)]
    pub block_size: u64,
}

/// One page of a folder listing and how many entries follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingPage {
    pub entries: Vec<DirEntry>,
    pub remaining: u64,
}

/// One block of a file (`GETFILEBLOCKLOCATIONS`): its byte range and where its replicas are.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockLocation {
    pub offset: u64,
    pub length: u64,
    /// DataNode host names, one per replica.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// DataNode `ip:port` transfer addresses, in the order of `hosts`.
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub corrupt: bool,
}

/// Where a CREATE's bytes went, as the NameNode named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The DataNode URL the bytes were sent to.
    pub datanode_url: RedactedUrl,
    /// `host:port` of the NameNode's RPC server (or the HA nameservice), from the
    /// `namenoderpcaddress` parameter of the DataNode URL: what `hdfs://` URLs must name.
    pub namenode_rpc_address: Option<String>,
    /// Bytes sent.
    pub bytes: u64,
}

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

/// Bytes a second an upload is granted on top of the request timeout: a large binary on a
/// slow link must not be cut off by a timeout meant for metadata calls, while a stalled
/// DataNode still ends in an error.
const MIN_UPLOAD_RATE: u64 = 1 << 20;

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
fn query_param(url: &str, key: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then(|| decode(v))
    })
}

fn decode(s: &str) -> String {
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
    async fn send(
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
    async fn read_reply(
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

    fn json<T: serde::de::DeserializeOwned>(
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

    /// Creates `path` and any missing parents (`op=MKDIRS`). `permission` is octal, e.g.
    /// `"700"`; `None` leaves the server default (755 minus the umask).
    pub async fn mkdirs(&self, path: &str, permission: Option<&str>) -> Result<()> {
        let params: Vec<(&str, &str)> = permission.map(|p| ("permission", p)).into_iter().collect();
        let url = self.op_url(path, "MKDIRS", &params)?;
        let (_, body, _) = self.send("MKDIRS", path, self.http.put(&url), &url).await?;
        let made: bool = Self::json("MKDIRS", &url, &body, "boolean")?;
        if !made {
            return Err(WebHdfsError::BadReply {
                op: "MKDIRS",
                url: url.into(),
                reason: "the NameNode answered false (folder not created)".into(),
            });
        }
        Ok(())
    }

    /// Writes `data` to `path`, replacing any file there when `overwrite` (`op=CREATE`, then
    /// the bytes to the DataNode the NameNode names). Missing parent folders are created.
    /// `permission` is the file's octal mode, e.g. `"600"` for a secret; `None` leaves the
    /// server's default (644 minus the umask), readable by everyone.
    pub async fn create(
        &self,
        path: &str,
        data: Vec<u8>,
        overwrite: bool,
        permission: Option<&str>,
    ) -> Result<Created> {
        let len = data.len() as u64;
        self.create_body(path, reqwest::Body::from(data), len, overwrite, permission)
            .await
    }

    /// Like [`WebHdfs::create`], streaming the local file `local` (a large binary is never
    /// held in memory whole).
    pub async fn create_from_file(
        &self,
        path: &str,
        local: &std::path::Path,
        overwrite: bool,
        permission: Option<&str>,
    ) -> Result<Created> {
        let io_err = |source: std::io::Error| WebHdfsError::LocalFile {
            path: local.display().to_string(),
            source,
        };
        let file = tokio::fs::File::open(local).await.map_err(io_err)?;
        let len = file.metadata().await.map_err(io_err)?.len();
        self.create_body(path, reqwest::Body::from(file), len, overwrite, permission)
            .await
    }

    async fn create_body(
        &self,
        path: &str,
        body: reqwest::Body,
        len: u64,
        overwrite: bool,
        permission: Option<&str>,
    ) -> Result<Created> {
        let mut params = vec![
            ("overwrite", if overwrite { "true" } else { "false" }),
            ("noredirect", "true"),
        ];
        params.extend(permission.map(|p| ("permission", p)));
        let url = self.op_url(path, "CREATE", &params)?;
        let datanode_url = self
            .datanode_url("CREATE", path, self.http.put(&url), url)
            .await?;
        let resp = self
            .upload(
                "CREATE",
                self.http.put(&datanode_url),
                &datanode_url,
                body,
                len,
            )
            .await?;
        let (status, reply, _) = self.read_reply("CREATE", path, &datanode_url, resp).await?;
        if status != 201 && status != 200 {
            return Err(WebHdfsError::BadReply {
                op: "CREATE",
                url: RedactedUrl::new(&datanode_url),
                reason: redact(&format!(
                    "DataNode answered {status}, not 201 Created: {reply}"
                )),
            });
        }
        Ok(Created {
            namenode_rpc_address: query_param(&datanode_url, "namenoderpcaddress"),
            datanode_url: datanode_url.into(),
            bytes: len,
        })
    }

    /// The status of `path` (`op=GETFILESTATUS`); a missing path is a
    /// [`WebHdfsError::Remote`] for which [`WebHdfsError::is_not_found`] is true.
    pub async fn status(&self, path: &str) -> Result<FileStatus> {
        let url = self.op_url(path, "GETFILESTATUS", &[])?;
        let (_, body, _) = self
            .send("GETFILESTATUS", path, self.http.get(&url), &url)
            .await?;
        parse_file_status(&url, &body)
    }

    /// Deletes `path` (with everything below it when `recursive`). Returns false when there
    /// was nothing to delete.
    pub async fn delete(&self, path: &str, recursive: bool) -> Result<bool> {
        let url = self.op_url(
            path,
            "DELETE",
            &[("recursive", if recursive { "true" } else { "false" })],
        )?;
        let (_, body, _) = self
            .send("DELETE", path, self.http.delete(&url), &url)
            .await?;
        Self::json("DELETE", &url, &body, "boolean")
    }

    /// Sends `len` bytes to the DataNode URL the NameNode named (CREATE's PUT, APPEND's
    /// POST). The upload gets the base timeout plus time for its size at a slow but live
    /// rate; the URL is used as the NameNode wrote it, since it carries the token the
    /// DataNode checks.
    async fn upload(
        &self,
        op: &'static str,
        req: reqwest::RequestBuilder,
        datanode_url: &str,
        body: reqwest::Body,
        len: u64,
    ) -> Result<reqwest::Response> {
        req.timeout(self.timeout + Duration::from_secs(len / MIN_UPLOAD_RATE))
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            // A streamed body would otherwise go out chunked; the length is known.
            .header(reqwest::header::CONTENT_LENGTH, len)
            .body(body)
            .send()
            .await
            .map_err(|e| unreachable(op, datanode_url, e))
    }

    /// Where the NameNode sends the data of `op` on `path` (asked with `noredirect`, so the
    /// answer is a JSON `Location` or a 307 with the header).
    async fn datanode_url(
        &self,
        op: &'static str,
        path: &str,
        req: reqwest::RequestBuilder,
        url: String,
    ) -> Result<String> {
        let (status, reply, location) = self.send(op, path, req, &url).await?;
        match (status, location) {
            (307, Some(loc)) => Ok(loc),
            (307, None) => Err(WebHdfsError::BadReply {
                op,
                url: url.into(),
                reason: "307 without a Location header".into(),
            }),
            _ => Self::json::<String>(op, &url, &reply, "Location"),
        }
    }

    /// `host:port` of the NameNode's RPC server (or HA nameservice) as the NameNode names it
    /// in the DataNode URL for reading the existing file `path` (`op=OPEN&noredirect=true`:
    /// nothing is read), for `hdfs://` URLs when no upload told it ([`Created`]).
    pub async fn namenode_rpc_address(&self, path: &str) -> Result<Option<String>> {
        let url = self.op_url(path, "OPEN", &[("noredirect", "true")])?;
        let dn = self
            .datanode_url("OPEN", path, self.http.get(&url), url)
            .await?;
        Ok(query_param(&dn, "namenoderpcaddress"))
    }

    /// Appends `data` to the existing file `path` (`op=APPEND`, then the bytes to the
    /// DataNode the NameNode names). Returned once the DataNode closed the file: the bytes
    /// are then on every DataNode of the pipeline (acknowledged, not fsynced to disk).
    pub async fn append(&self, path: &str, data: Vec<u8>) -> Result<()> {
        let url = self.op_url(path, "APPEND", &[("noredirect", "true")])?;
        let dn = self
            .datanode_url("APPEND", path, self.http.post(&url), url)
            .await?;
        let len = data.len() as u64;
        let resp = self
            .upload("APPEND", self.http.post(&dn), &dn, data.into(), len)
            .await?;
        self.read_reply("APPEND", path, &dn, resp).await?;
        Ok(())
    }

    /// The whole content of the file `path` (`op=OPEN`, read from the DataNode the NameNode
    /// names), as text (invalid UTF-8 replaced). For small files: it is held in memory.
    pub async fn read_to_string(&self, path: &str) -> Result<String> {
        let url = self.op_url(path, "OPEN", &[("noredirect", "true")])?;
        let dn = self
            .datanode_url("OPEN", path, self.http.get(&url), url)
            .await?;
        let resp = self
            .http
            .get(&dn)
            .send()
            .await
            .map_err(|e| unreachable("OPEN", &dn, e))?;
        let (_, body, _) = self.read_reply("OPEN", path, &dn, resp).await?;
        Ok(body)
    }

    /// Starts reading `length` bytes of `path` from `offset` (`op=OPEN` with `noredirect`,
    /// then a GET of the DataNode URL the NameNode answers). The NameNode picks the first
    /// replica of the block at `offset`, in its order by network distance from the caller,
    /// that is not in `exclude` (`excludedatanodes`: DataNode transfer addresses `ip:port`,
    /// as [`BlockLocation::names`] gives them); the DataNode named serves the range through
    /// its own HDFS client, which reads a replica it holds itself before any other. The read
    /// gets the base timeout plus time for `length` at a slow but live rate.
    pub async fn open_range(
        &self,
        path: &str,
        offset: u64,
        length: u64,
        exclude: &[String],
    ) -> Result<RangeRead> {
        let (o, l, x) = (offset.to_string(), length.to_string(), exclude.join(","));
        let mut params = vec![("offset", o.as_str()), ("length", l.as_str())];
        params.push(("noredirect", "true"));
        if !exclude.is_empty() {
            params.push(("excludedatanodes", x.as_str()));
        }
        let url = self.op_url(path, "OPEN", &params)?;
        let dn = self
            .datanode_url("OPEN", path, self.http.get(&url), url)
            .await?;
        let resp = self
            .http
            .get(&dn)
            .timeout(self.timeout + Duration::from_secs(length / MIN_UPLOAD_RATE))
            .send()
            .await
            .map_err(|e| unreachable("OPEN", &dn, e))?;
        let status = resp.status().as_u16();
        if status >= 400 {
            // An error reply is small JSON; read_reply turns it into the error.
            return Err(match self.read_reply("OPEN", path, &dn, resp).await {
                Err(e) => e,
                Ok(_) => WebHdfsError::BadReply {
                    op: "OPEN",
                    url: RedactedUrl::new(&dn),
                    reason: format!("HTTP {status}"),
                },
            });
        }
        Ok(RangeRead {
            datanode: url_authority(&dn).to_string(),
            url: RedactedUrl::new(&dn),
            resp,
        })
    }

    /// Renames `from` to `to` unless something is already at `to` (`op=RENAME`): false
    /// when the NameNode refused (the destination exists, or `from` does not).
    pub async fn rename(&self, from: &str, to: &str) -> Result<bool> {
        check_path(to)?;
        let url = self.op_url(from, "RENAME", &[("destination", to)])?;
        let (_, body, _) = self.send("RENAME", from, self.http.put(&url), &url).await?;
        Self::json::<bool>("RENAME", &url, &body, "boolean")
    }

    /// Renames `from` to `to`, replacing a file at `to` (`op=RENAME` with
    /// `renameoptions=OVERWRITE`, HDFS's atomic rename2): readers see the old file or the
    /// new one, never a half-written one.
    pub async fn rename_over(&self, from: &str, to: &str) -> Result<()> {
        check_path(to)?;
        let url = self.op_url(
            from,
            "RENAME",
            &[("destination", to), ("renameoptions", "OVERWRITE")],
        )?;
        self.send("RENAME", from, self.http.put(&url), &url).await?;
        Ok(())
    }

    /// One page of the listing of `path` (`op=LISTSTATUS_BATCH`): the entries after
    /// `start_after` (a name from the previous page), as many as the NameNode's
    /// `dfs.ls.limit` (1000 by default). Paging keeps a huge folder's listing out of one reply.
    pub async fn list_page(&self, path: &str, start_after: Option<&str>) -> Result<ListingPage> {
        let params: Vec<(&str, &str)> =
            start_after.map(|s| ("startAfter", s)).into_iter().collect();
        let url = self.op_url(path, "LISTSTATUS_BATCH", &params)?;
        let (_, body, _) = self
            .send("LISTSTATUS_BATCH", path, self.http.get(&url), &url)
            .await?;
        parse_listing(&url, &body)
    }

    /// The blocks of `path` overlapping `[offset, offset + length)`
    /// (`op=GETFILEBLOCKLOCATIONS`), with their replicas' DataNodes.
    pub async fn block_locations(
        &self,
        path: &str,
        offset: u64,
        length: u64,
    ) -> Result<Vec<BlockLocation>> {
        let (o, l) = (offset.to_string(), length.to_string());
        let url = self.op_url(
            path,
            "GETFILEBLOCKLOCATIONS",
            &[("offset", &o), ("length", &l)],
        )?;
        let (_, body, _) = self
            .send("GETFILEBLOCKLOCATIONS", path, self.http.get(&url), &url)
            .await?;
        parse_block_locations(&url, &body)
    }

    /// The user's home folder (`op=GETHOMEDIRECTORY`), e.g. `/user/alice`.
    pub async fn home_directory(&self) -> Result<String> {
        let url = self.op_url("/", "GETHOMEDIRECTORY", &[])?;
        let (_, body, _) = self
            .send("GETHOMEDIRECTORY", "/", self.http.get(&url), &url)
            .await?;
        Self::json("GETHOMEDIRECTORY", &url, &body, "Path")
    }
}

/// A range being read from a DataNode ([`WebHdfs::open_range`]).
pub struct RangeRead {
    /// `host:port` of the DataNode serving the read (nothing secret).
    pub datanode: String,
    url: RedactedUrl,
    resp: reqwest::Response,
}

impl RangeRead {
    /// The next bytes; `None` at the end of the reply. A transport failure (the DataNode
    /// died, the read timed out) is [`WebHdfsError::Unreachable`] naming the redacted URL.
    pub async fn chunk(&mut self) -> Result<Option<bytes::Bytes>> {
        self.resp
            .chunk()
            .await
            .map_err(|e| unreachable("OPEN", self.url.as_str(), e))
    }

    /// The DataNode URL of the read, redacted.
    pub fn url(&self) -> &RedactedUrl {
        &self.url
    }
}

/// `host:port` of an `http(s)://host:port/...` URL.
fn url_authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// A `LISTSTATUS_BATCH` reply, `url` naming it in errors. Pure, so it is fuzzed
/// (`hostile_input_tests`).
pub(crate) fn parse_listing(url: &str, body: &str) -> Result<ListingPage> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Listing {
        partial_listing: Partial,
        #[serde(default)]
        remaining_entries: u64,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Partial {
        file_statuses: Statuses,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Statuses {
        #[serde(default)]
        file_status: Vec<DirEntry>,
    }
    let l: Listing = WebHdfs::json("LISTSTATUS_BATCH", url, body, "DirectoryListing")?;
    Ok(ListingPage {
        entries: l.partial_listing.file_statuses.file_status,
        remaining: l.remaining_entries,
    })
}

/// A `GETFILEBLOCKLOCATIONS` reply, `url` naming it in errors. Pure, so it is fuzzed.
pub(crate) fn parse_block_locations(url: &str, body: &str) -> Result<Vec<BlockLocation>> {
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Locations {
        #[serde(default)]
        block_location: Vec<BlockLocation>,
    }
    // An empty file has `"BlockLocations": null` on some versions.
    let l: Option<Locations> = WebHdfs::json("GETFILEBLOCKLOCATIONS", url, body, "BlockLocations")?;
    Ok(l.map(|l| l.block_location).unwrap_or_default())
}

/// A `GETFILESTATUS` reply, `url` naming it in errors. Pure, so it is fuzzed.
pub(crate) fn parse_file_status(url: &str, body: &str) -> Result<FileStatus> {
    WebHdfs::json("GETFILESTATUS", url, body, "FileStatus")
}

/// A transport error, flattened: reqwest's own message says little ("error sending
/// request"); the useful part ("Connection refused", "operation timed out") is deep in its
/// source chain.
fn unreachable(op: &'static str, url: &str, e: reqwest::Error) -> WebHdfsError {
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
fn error_from_reply(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> WebHdfs {
        WebHdfs::new("rm:9870", "alice", Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn addresses_in_every_spelling_become_one_base() {
        for a in [
            "rm:9870",
            "http://rm:9870",
            "http://rm:9870/",
            "webhdfs://rm:9870",
            "http://rm:9870/webhdfs/v1",
            "http://rm:9870/webhdfs/v1/",
        ] {
            assert_eq!(normalize_base(a).unwrap(), "http://rm:9870", "{a}");
        }
        assert_eq!(
            normalize_base("swebhdfs://nn:9871").unwrap(),
            "https://nn:9871"
        );
        assert!(matches!(
            normalize_base("hdfs://rm:8020"),
            Err(WebHdfsError::BadAddress { .. })
        ));
        assert!(normalize_base("http://rm:9870/other").is_err());
        assert!(normalize_base("http://").is_err());
    }

    #[test]
    fn op_urls_encode_path_and_user() {
        let c = client();
        assert_eq!(
            c.op_url("/user/alice/x", "GETFILESTATUS", &[]).unwrap(),
            "http://rm:9870/webhdfs/v1/user/alice/x?op=GETFILESTATUS&user.name=alice"
        );
        assert_eq!(
            c.op_url("/a b/c%d", "DELETE", &[("recursive", "true")])
                .unwrap(),
            "http://rm:9870/webhdfs/v1/a%20b/c%25d?op=DELETE&user.name=alice&recursive=true"
        );
        let odd = WebHdfs::new("rm:9870", "x y&z", Duration::from_secs(1)).unwrap();
        assert!(odd
            .op_url("/", "GETHOMEDIRECTORY", &[])
            .unwrap()
            .ends_with("user.name=x%20y%26z"));
    }

    #[test]
    fn relative_and_dotted_paths_are_refused_before_any_request() {
        let c = client();
        for p in ["rel/path", "", "/a//b", "/a/../b", "/./a"] {
            assert!(
                matches!(
                    c.op_url(p, "MKDIRS", &[]),
                    Err(WebHdfsError::BadPath { .. })
                ),
                "{p:?}"
            );
        }
        assert!(c.op_url("/", "GETFILESTATUS", &[]).is_ok());
        assert!(c.op_url("/a/b/", "GETFILESTATUS", &[]).is_ok());
    }

    #[test]
    fn remote_exceptions_keep_the_java_class_and_message() {
        // As Hadoop 3.4.1's NameNode answers GETFILESTATUS for a missing path.
        let body = r#"{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /user/root/t/nope"}}"#;
        let e = error_from_reply("GETFILESTATUS", "/user/root/t/nope", "u", 404, body);
        assert!(e.is_not_found());
        match &e {
            WebHdfsError::Remote {
                exception,
                java_class,
                message,
                status,
                ..
            } => {
                assert_eq!(exception, "FileNotFoundException");
                assert_eq!(java_class, FILE_NOT_FOUND);
                assert_eq!(message, "File does not exist: /user/root/t/nope");
                assert_eq!(*status, 404);
            }
            other => panic!("{other:?}"),
        }
        let shown = e.to_string();
        assert!(shown.contains("GETFILESTATUS /user/root/t/nope"), "{shown}");
        assert!(
            shown.contains("java.io.FileNotFoundException: File does not exist"),
            "{shown}"
        );

        let bad_op = r#"{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"op\": FOO is not a valid PUT operation."}}"#;
        let e = error_from_reply("MKDIRS", "/x", "u", 400, bad_op);
        assert!(!e.is_not_found());
        assert!(e.to_string().contains("java.lang.IllegalArgumentException"));
    }

    #[test]
    fn non_json_error_bodies_keep_status_and_url() {
        let e = error_from_reply(
            "MKDIRS",
            "/x",
            "http://rm:9870/webhdfs/v1/x",
            502,
            "<html>Bad gateway</html>",
        );
        match &e {
            WebHdfsError::Status {
                status, url, body, ..
            } => {
                assert_eq!(*status, 502);
                assert!(url.as_str().contains("rm:9870"));
                assert!(body.contains("Bad gateway"));
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_remote_exception("{}").is_none());
        assert!(parse_remote_exception("not json").is_none());
    }

    #[test]
    fn file_status_parses_namenode_json() {
        let body = r#"{"FileStatus":{"accessTime":1795311896593,"blockSize":134217728,"childrenNum":0,"fileId":16389,"group":"supergroup","length":11,"modificationTime":1795311897243,"owner":"root","pathSuffix":"","permission":"644","replication":1,"storagePolicy":0,"type":"FILE"}}"#;
        let s: FileStatus = WebHdfs::json("GETFILESTATUS", "u", body, "FileStatus").unwrap();
        assert_eq!(s.length, 11);
        assert_eq!(s.modification_time, 1795311897243);
        assert_eq!(s.kind, FileType::File);
        assert_eq!(s.owner, "root");
        let err = WebHdfs::json::<FileStatus>("GETFILESTATUS", "u", r#"{"x":1}"#, "FileStatus")
            .unwrap_err();
        assert!(matches!(err, WebHdfsError::BadReply { .. }));
    }

    #[test]
    fn the_namenode_rpc_address_comes_from_the_datanode_url() {
        // A Location as Hadoop 3.4.1's NameNode returns it for CREATE with noredirect=true.
        let loc = "http://rm:9864/webhdfs/v1/user/root/t/f?op=CREATE&user.name=root&namenoderpcaddress=rm:8020&createflag=&createparent=true&overwrite=true";
        assert_eq!(
            query_param(loc, "namenoderpcaddress").as_deref(),
            Some("rm:8020")
        );
        assert_eq!(query_param(loc, "createflag").as_deref(), Some(""));
        assert_eq!(query_param(loc, "missing"), None);
        assert_eq!(
            query_param("http://x/?a=b%3Ac", "a").as_deref(),
            Some("b:c")
        );
        // Broken escapes pass through as they are; multi-byte UTF-8 decodes.
        assert_eq!(decode("50%zz%4"), "50%zz%4");
        assert_eq!(decode("caf%C3%A9+x"), "café x");
    }
}

/// WebHDFS against faulty or hostile servers on loopback. Audit M2: the errors of a call
/// made with a delegation token, on the real error paths (a NameNode that does not answer,
/// one that answers an error page echoing the URL, a DataNode redirect that carries the
/// token), carry neither the token nor the user name. Audit L1: no redirect is followed with
/// our credentials (the DataNode gets only the URL the NameNode wrote, which carries the
/// NameNode's own `delegation=`). Audit L4: a reply is read under a cap.
#[cfg(test)]
mod server_fault_tests {
    use super::*;
    use crate::test_http::{reply, serve};

    const TOKEN: &str = "EW93bmVyLUhERlMtVE9LRU4tUEFTU1dPUkQ";

    fn client(address: &str) -> WebHdfs {
        WebHdfs::new(address, "alice", Duration::from_secs(5))
            .unwrap()
            .with_auth(HttpAuth::Delegation {
                token: TOKEN.to_string(),
            })
    }

    fn assert_clean(e: &WebHdfsError) {
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(TOKEN), "{shown}");
        assert!(shown.contains("delegation=REDACTED"), "{shown}");
    }

    /// One HTTP reply per connection, whatever was asked.
    async fn answer_with(reply: String) -> String {
        serve("127.0.0.1", move |_| reply.clone().into_bytes())
            .await
            .0
    }

    #[tokio::test]
    async fn webhdfs_errors_carry_no_delegation_token() {
        // Nobody listens (a NameNode restarting): the journal append's error.
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let e = client(&format!("http://{closed}"))
            .append(
                "/user/alice/.yarn-am-staging/app/job-journal-1.jsonl",
                b"x".to_vec(),
            )
            .await
            .unwrap_err();
        assert!(matches!(e, WebHdfsError::Unreachable { .. }), "{e}");
        assert_clean(&e);

        // An error page that echoes the URL, token included.
        let page =
            format!("<html>bad gateway for /webhdfs/v1/x?op=DELETE&delegation={TOKEN}</html>");
        let nn = answer_with(format!(
            "HTTP/1.1 502 Bad Gateway\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        ))
        .await;
        let e = client(&nn).delete("/x", true).await.unwrap_err();
        assert!(matches!(e, WebHdfsError::Status { .. }), "{e}");
        assert_clean(&e);

        // A NameNode that sends the append to a DataNode that is not there: the DataNode
        // URL carries the token, as real redirects do.
        let dn = format!(
            "http://{closed}/webhdfs/v1/x?op=APPEND&delegation={TOKEN}&namenoderpcaddress=nn:8020"
        );
        let body = format!("{{\"Location\":\"{dn}\"}}");
        let nn = answer_with(format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ))
        .await;
        let e = client(&nn).append("/x", b"x".to_vec()).await.unwrap_err();
        assert!(matches!(e, WebHdfsError::Unreachable { .. }), "{e}");
        assert_clean(&e);
    }

    #[tokio::test]
    async fn a_namenode_redirect_is_not_followed_with_our_credentials() {
        let (other, seen) = serve("127.0.0.2", |_| reply("201 Created", "", "")).await;
        let location = format!(
            "location: {other}/webhdfs/v1/f?op=CREATE&delegation=NN-MADE&namenoderpcaddress=nn:8020\r\n"
        );
        let (nn, _) = serve("127.0.0.1", move |_| {
            reply("307 Temporary Redirect", &location, "")
        })
        .await;
        // A metadata call: the 307 is not followed at all.
        let e = client(&nn).status("/f").await.unwrap_err();
        assert!(matches!(e, WebHdfsError::BadReply { .. }), "{e}");
        assert!(seen.lock().unwrap().is_empty());
        // A CREATE: the bytes go where the NameNode said, with its URL and nothing of ours.
        client(&nn)
            .create("/f", b"x".to_vec(), true, None)
            .await
            .unwrap();
        let heads = seen.lock().unwrap();
        assert_eq!(heads.len(), 1);
        assert!(heads[0].contains("delegation=NN-MADE"), "{}", heads[0]);
        let lower = heads[0].to_ascii_lowercase();
        assert!(!heads[0].contains(TOKEN), "{}", heads[0]);
        assert!(
            !lower.contains("authorization") && !lower.contains("cookie"),
            "{lower}"
        );
    }

    #[tokio::test]
    async fn an_oversized_reply_is_refused() {
        let (nn, _) = serve("127.0.0.1", |_| {
            let mut r = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_vec();
            r.extend(std::iter::repeat_n(b' ', 256 << 10));
            r
        })
        .await;
        let e = client(&nn)
            .with_reply_limit(64 << 10)
            .list_page("/in", None)
            .await
            .unwrap_err();
        assert!(
            matches!(e, WebHdfsError::TooLarge { limit, .. } if limit == 64 << 10),
            "{e}"
        );
        assert!(e.to_string().contains("65536-byte limit"), "{e}");
        assert!(!e.to_string().contains(TOKEN), "{e}");
    }
}
