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

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::credentials::Credentials;
use crate::gssapi::KerberosError;
use crate::http_auth::{HttpAuth, RM_DELEGATION_HEADER};
use crate::http_body::BodyError;
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

/// `GET /ws/v1/cluster/info` -> `clusterInfo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    pub id: i64,
    pub state: String,
    #[serde(default)]
    pub ha_state: Option<String>,
    #[serde(default)]
    pub hadoop_version: Option<String>,
    #[serde(default)]
    pub resource_manager_version: Option<String>,
}

/// One entry of `GET /ws/v1/cluster/nodes`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    /// The NodeId, `host:port`.
    pub id: String,
    pub rack: String,
    pub state: String,
    pub node_host_name: String,
    #[serde(rename = "nodeHTTPAddress", default)]
    pub node_http_address: String,
    #[serde(default)]
    pub num_containers: i64,
    #[serde(rename = "usedMemoryMB", default)]
    pub used_memory_mb: i64,
    #[serde(rename = "availMemoryMB", default)]
    pub avail_memory_mb: i64,
    #[serde(default)]
    pub used_virtual_cores: i64,
    #[serde(default)]
    pub available_virtual_cores: i64,
    #[serde(default)]
    pub health_report: String,
    /// The node's labels (its partition); the RM leaves the field out, or lists `""`, for
    /// the default partition.
    #[serde(default)]
    pub node_labels: Vec<String>,
}

impl NodeInfo {
    /// Total memory of the node (used + available), what the NM advertised.
    pub fn memory_mb(&self) -> i64 {
        self.used_memory_mb + self.avail_memory_mb
    }
    /// Total vcores of the node (used + available).
    pub fn vcores(&self) -> i64 {
        self.used_virtual_cores + self.available_virtual_cores
    }
}

/// One leaf queue of the scheduler, from `GET /ws/v1/cluster/scheduler` (the Capacity
/// Scheduler's fields; percentages are of the whole cluster).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueInfo {
    pub queue_name: String,
    #[serde(default)]
    pub queue_path: String,
    /// RUNNING, STOPPED or DRAINING.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub absolute_used_capacity: f64,
    #[serde(default = "hundred")]
    pub absolute_max_capacity: f64,
    #[serde(default)]
    pub num_pending_applications: i64,
}

fn hundred() -> f64 {
    100.0
}

/// The leaf queue named `name` (its short name or its path, `root.default`) anywhere in a
/// scheduler tree (`schedulerInfo`, whose children sit under `queues.queue`).
pub fn find_leaf_queue(scheduler_info: &serde_json::Value, name: &str) -> Option<QueueInfo> {
    let children = scheduler_info
        .get("queues")
        .and_then(|q| q.get("queue"))
        .and_then(|q| q.as_array());
    match children {
        Some(children) if !children.is_empty() => {
            children.iter().find_map(|c| find_leaf_queue(c, name))
        }
        _ => {
            let q: QueueInfo = serde_json::from_value(scheduler_info.clone()).ok()?;
            (q.queue_name == name || q.queue_path == name).then_some(q)
        }
    }
}

/// Reply of `POST /ws/v1/cluster/apps/new-application`.
#[derive(Debug, Clone, Deserialize)]
pub struct NewApplication {
    #[serde(rename = "application-id")]
    pub application_id: String,
    #[serde(rename = "maximum-resource-capability", default)]
    pub maximum_resource_capability: Option<Resource>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub struct Resource {
    pub memory: i64,
    #[serde(rename = "vCores")]
    pub vcores: i32,
}

/// A file YARN copies into the container's working directory before it starts.
#[derive(Debug, Clone, Serialize)]
pub struct LocalResource {
    /// URL of the file, e.g. `file:///abs/path` or `hdfs://nn/path`.
    pub resource: String,
    /// `FILE`, `ARCHIVE` or `PATTERN`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `PUBLIC`, `PRIVATE` or `APPLICATION`.
    pub visibility: String,
    pub size: u64,
    /// Modification time in milliseconds; YARN refuses the file if it changed since.
    pub timestamp: u64,
}

impl LocalResource {
    /// A `file://` resource for a file on a file system every NodeManager sees (one host, or
    /// a shared mount). Size and mtime are read now: YARN refuses the file if its mtime
    /// (milliseconds) differs when the NM localises it, so stage files before calling this.
    pub fn local_file(path: &std::path::Path, visibility: &str) -> std::io::Result<Self> {
        let path = std::fs::canonicalize(path)?;
        let meta = std::fs::metadata(&path)?;
        let mtime = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(std::io::Error::other)?;
        Ok(Self {
            resource: format!("file://{}", path.display()),
            kind: "FILE".into(),
            visibility: visibility.into(),
            size: meta.len(),
            timestamp: mtime.as_millis() as u64,
        })
    }
}

/// What the RM needs to start the AM container.
#[derive(Debug, Clone, Default)]
pub struct AmContainerSpec {
    pub local_resources: BTreeMap<String, LocalResource>,
    pub environment: BTreeMap<String, String>,
    pub command: String,
    /// Tokens and secret keys for the AM container. The RM adds its AMRM token and the
    /// NodeManager writes them all to the container's token file (`HADOOP_TOKEN_FILE_LOCATION`,
    /// mode 0600), never to its environment, command line or logs: the place for secrets.
    pub credentials: Credentials,
    /// The application's ACLs: the RM keeps those of the AM's launch context as the app's.
    pub acls: crate::acl::AppAcls,
}

/// Which of a container's log files the NodeManagers upload when aggregating (Java regular
/// expressions on file names; YARN's `LogAggregationContext`). The plain patterns apply to
/// the upload at the app's end, the rolled ones to uploads while it runs (where the cluster
/// rolls logs, `yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogAggregation {
    pub include: Option<String>,
    pub exclude: Option<String>,
    pub rolled_include: Option<String>,
    pub rolled_exclude: Option<String>,
}

impl LogAggregation {
    pub fn is_empty(&self) -> bool {
        *self == LogAggregation::default()
    }

    /// The RM REST submission's `log-aggregation-context`.
    pub fn rest_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({});
        for (key, pattern) in [
            ("log-include-pattern", &self.include),
            ("log-exclude-pattern", &self.exclude),
            ("rolled-log-include-pattern", &self.rolled_include),
            ("rolled-log-exclude-pattern", &self.rolled_exclude),
        ] {
            if let Some(p) = pattern {
                v[key] = p.clone().into();
            }
        }
        v
    }
}

/// An application submission, turned into the RM's JSON by [`Submission::to_json`].
#[derive(Debug, Clone)]
pub struct Submission {
    pub application_id: String,
    pub name: String,
    pub queue: String,
    pub application_type: String,
    pub tags: Vec<String>,
    pub max_app_attempts: u32,
    /// The RM's `keep-containers-across-application-attempts`: a failed AM attempt's
    /// containers keep running and the next attempt gets them back at registration.
    pub keep_containers: bool,
    pub am_resource: Resource,
    pub am: AmContainerSpec,
    /// The application's priority within its queue (capped by the RM at
    /// `yarn.cluster.max-application-priority`); `None`: the queue's default.
    pub priority: Option<i32>,
    /// Failed AM attempts older than this (ms) no longer count towards `max_app_attempts`;
    /// `None` (or <= 0): every failure counts.
    pub attempt_failures_validity_interval_ms: Option<i64>,
    /// Which log files the NodeManagers aggregate; empty: all of them.
    pub log_aggregation: LogAggregation,
    /// The node label (partition) of the AM's container; `None`: the queue's default.
    pub am_node_label: Option<String>,
    /// Countable resources the AM's own container asks besides memory and vcores
    /// (`yarn.io/gpu`, a cluster's own types), by name. The REST form cannot carry them
    /// (Hadoop 3.4.1's RM keeps only memory and vcores of a REST submission's resource):
    /// a submission with any goes over ApplicationClientProtocol ([`Submission::needs_rpc`],
    /// [`crate::client_rm`]).
    pub am_resources: Vec<(String, i64)>,
    /// How long the RM lets the app run before it kills it (its LIFETIME timeout). The RPC
    /// form carries it; the REST form has no field, so a REST submitter sets it right after
    /// (`RmRest::set_lifetime`).
    pub lifetime: Option<Duration>,
}

fn entries<V: Serialize>(map: &BTreeMap<String, V>) -> serde_json::Value {
    let entry: Vec<_> = map
        .iter()
        .map(|(k, v)| serde_json::json!({"key": k, "value": v}))
        .collect();
    serde_json::json!({ "entry": entry })
}

/// The RM's `credentials` object: tokens as Hadoop's URL-safe base64 of the Writable token,
/// secret keys as base64 (the RM decodes them with commons-codec, which takes either
/// alphabet). Both are JAXB entry maps keyed by alias.
pub fn credentials_json(c: &Credentials) -> serde_json::Value {
    use base64::Engine;
    let tokens: BTreeMap<String, String> = c
        .tokens
        .iter()
        .map(|(alias, t)| (alias.clone(), t.to_url_string()))
        .collect();
    let secrets: BTreeMap<String, String> = c
        .secrets
        .iter()
        .map(|(alias, s)| {
            let b64 = base64::engine::general_purpose::STANDARD.encode(s);
            (alias.clone(), b64)
        })
        .collect();
    serde_json::json!({"tokens": entries(&tokens), "secrets": entries(&secrets)})
}

impl Submission {
    /// True when the REST form would lose part of this submission: the AM asks resource
    /// types besides memory and vcores.
    pub fn needs_rpc(&self) -> bool {
        !self.am_resources.is_empty()
    }

    /// The body of `POST /ws/v1/cluster/apps`. Maps are JAXB-style `{"entry": [...]}`.
    /// Neither `am_resources` nor `lifetime` is in it (see their fields).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "application-id": self.application_id,
            "application-name": self.name,
            "queue": self.queue,
            "application-type": self.application_type,
            "application-tags": {"tag": self.tags},
            "max-app-attempts": self.max_app_attempts,
            "unmanaged-AM": false,
            "keep-containers-across-application-attempts": self.keep_containers,
            "resource": {"memory": self.am_resource.memory, "vCores": self.am_resource.vcores},
            "am-container-spec": {
                "local-resources": entries(&self.am.local_resources),
                "environment": entries(&self.am.environment),
                "commands": {"command": self.am.command},
                "credentials": credentials_json(&self.am.credentials),
            },
        });
        if let Some(p) = self.priority {
            v["priority"] = p.into();
        }
        if let Some(ms) = self.attempt_failures_validity_interval_ms {
            v["attempt-failures-validity-interval"] = ms.into();
        }
        if !self.am.acls.is_empty() {
            v["am-container-spec"]["application-acls"] = self.am.acls.rest_json();
        }
        if !self.log_aggregation.is_empty() {
            v["log-aggregation-context"] = self.log_aggregation.rest_json();
        }
        if let Some(label) = &self.am_node_label {
            v["am-container-node-label-expression"] = label.clone().into();
        }
        v
    }
}

/// A UTC time as Hadoop's ISO 8601 parser takes it (`Times.parseISO8601ToLocalTimeInMillis`:
/// `yyyy-MM-dd'T'HH:mm:ss.SSSZ`), e.g. `2026-11-27T12:10:00.000+0000`.
pub fn iso8601_utc(t: std::time::SystemTime) -> String {
    let ms = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil inverse).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1_000 % 60,
        ms_of_day % 1_000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}+0000")
}

/// `GET /ws/v1/cluster/apps/{id}` -> `app` (the fields we use).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppReport {
    pub id: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub queue: String,
    pub state: String,
    #[serde(default)]
    pub final_status: String,
    #[serde(default)]
    pub progress: f64,
    #[serde(default)]
    pub tracking_url: Option<String>,
    #[serde(default)]
    pub diagnostics: String,
    #[serde(default)]
    pub running_containers: i64,
    #[serde(default)]
    pub allocated_mb: i64,
    #[serde(default)]
    pub am_container_logs: Option<String>,
    #[serde(default)]
    pub am_host_http_address: Option<String>,
    /// Milliseconds since the epoch (0 before the app started).
    #[serde(default)]
    pub started_time: i64,
    #[serde(default)]
    pub application_type: String,
    #[serde(default)]
    pub priority: i32,
    /// `host:port` the AM registered as its RPC address (yarn-am's driver API).
    #[serde(default, rename = "amRPCAddress")]
    pub am_rpc_address: Option<String>,
    /// Where moving the app's logs to the remote folder stands: `DISABLED`, `NOT_START`,
    /// `RUNNING`, `RUNNING_WITH_FAILURE`, `SUCCEEDED`, `FAILED` or `TIME_OUT` (empty from
    /// an RM that does not say).
    #[serde(default)]
    pub log_aggregation_status: String,
}

impl AppReport {
    /// FINISHED, FAILED and KILLED are final: the RM will not change them again.
    pub fn is_final(&self) -> bool {
        matches!(self.state.as_str(), "FINISHED" | "FAILED" | "KILLED")
    }
}

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

/// `scheme://host:port` of a URL, the unit of trust for redirects.
fn origin_of(url: &str) -> Option<reqwest::Url> {
    let u = reqwest::Url::parse(url).ok()?;
    let mut o = u.clone();
    o.set_path("");
    o.set_query(None);
    o.set_fragment(None);
    o.set_port(u.port_or_known_default()).ok()?;
    Some(o)
}

/// A web address (`host:port` or a URL) as the client's base URL.
fn base_url(web_address: &str) -> String {
    if web_address.contains("://") {
        web_address.trim_end_matches('/').to_string()
    } else {
        format!("http://{web_address}")
    }
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

    fn url(&self, path: &str) -> String {
        self.url_at(&self.base, path)
    }

    /// `path` at `base` (the RM, or a NodeManager), with `user.name` under simple auth.
    fn url_at(&self, base: &str, path: &str) -> String {
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
    async fn send(
        &self,
        method: &'static str,
        url: String,
        body: Option<serde_json::Value>,
    ) -> Result<(u16, String)> {
        self.send_accepting(method, url, body, "application/json")
            .await
    }

    /// [`Self::send`] asking for `accept` (the NodeManagers' log files are text only).
    async fn send_accepting(
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

    async fn get_json(&self, path: &str) -> Result<serde_json::Value> {
        self.json_at(self.url(path)).await
    }

    /// A GET of `url` (the RM's or a NodeManager's) as JSON.
    async fn json_at(&self, url: String) -> Result<serde_json::Value> {
        let (_, text) = self.send("GET", url.clone(), None).await?;
        serde_json::from_str(&text).map_err(|e| RestError::BadReply {
            url: url.into(),
            reason: format!(
                "not JSON ({e}): {}",
                redact(&text.chars().take(200).collect::<String>())
            ),
        })
    }

    fn field<T: serde::de::DeserializeOwned>(
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

    /// Any RM web-services GET as JSON (e.g. `/ws/v1/cluster/apps/<id>/appattempts`).
    pub async fn get_value(&self, path: &str) -> Result<serde_json::Value> {
        self.get_json(path).await
    }

    /// A NodeManager's web address (`host:port`, as the RM lists it) as a base URL, in the
    /// RM's scheme (a cluster on HTTPS serves its NodeManagers on HTTPS too).
    fn node_base(&self, node: &str) -> String {
        let scheme = if self.base.starts_with("https://") {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{node}")
    }

    /// A NodeManager web-services GET as JSON, authenticated as calls to the RM are.
    pub async fn node_value(&self, node: &str, path: &str) -> Result<serde_json::Value> {
        self.json_at(self.url_at(&self.node_base(node), path)).await
    }

    /// A NodeManager web-services GET as text (a container's log file).
    pub async fn node_text(&self, node: &str, path: &str) -> Result<String> {
        let url = self.url_at(&self.node_base(node), path);
        Ok(self.send_accepting("GET", url, None, "text/plain").await?.1)
    }

    pub async fn cluster_info(&self) -> Result<ClusterInfo> {
        let path = "/ws/v1/cluster/info";
        let v = self.get_json(path).await?;
        self.field(path, v, "clusterInfo")
    }

    /// Nodes in the given states (e.g. `["RUNNING"]`); all nodes when `states` is empty.
    pub async fn nodes(&self, states: &[&str]) -> Result<Vec<NodeInfo>> {
        let path = if states.is_empty() {
            "/ws/v1/cluster/nodes".to_string()
        } else {
            format!("/ws/v1/cluster/nodes?states={}", states.join(","))
        };
        let v = self.get_json(&path).await?;
        parse_nodes(&self.url(&path), v)
    }

    /// The leaf queue `name` (short name or path); `None` when the scheduler has no such
    /// queue or reports no tree (the Fifo scheduler).
    pub async fn leaf_queue(&self, name: &str) -> Result<Option<QueueInfo>> {
        let path = "/ws/v1/cluster/scheduler";
        let v = self.get_json(path).await?;
        let info = v
            .get("scheduler")
            .and_then(|s| s.get("schedulerInfo"))
            .ok_or_else(|| RestError::BadReply {
                url: RedactedUrl::new(&self.url(path)),
                reason: "no `scheduler.schedulerInfo` in reply".into(),
            })?;
        Ok(find_leaf_queue(info, name))
    }

    pub async fn new_application(&self) -> Result<NewApplication> {
        let url = self.url("/ws/v1/cluster/apps/new-application");
        let (_, text) = self.send("POST", url.clone(), None).await?;
        serde_json::from_str(&text).map_err(|e| RestError::BadReply {
            url: url.into(),
            reason: format!("new-application reply: {e}"),
        })
    }

    pub async fn submit(&self, sub: &Submission) -> Result<()> {
        let url = self.url("/ws/v1/cluster/apps");
        self.send("POST", url, Some(sub.to_json())).await?;
        Ok(())
    }

    pub async fn app(&self, app_id: &str) -> Result<AppReport> {
        let path = format!("/ws/v1/cluster/apps/{app_id}");
        let v = self.get_json(&path).await?;
        self.field(&path, v, "app")
    }

    /// The applications of type `app_type` that `user` submitted, in `states` (all states
    /// when empty), as the RM lists them (`GET /ws/v1/cluster/apps`).
    pub async fn apps(
        &self,
        app_type: &str,
        user: &str,
        states: &[&str],
    ) -> Result<Vec<AppReport>> {
        let mut path = format!(
            "/ws/v1/cluster/apps?applicationTypes={}&user={}",
            crate::webhdfs::encode(app_type, false),
            crate::webhdfs::encode(user, false)
        );
        if !states.is_empty() {
            path.push_str("&states=");
            path.push_str(&states.join(","));
        }
        let v = self.get_json(&path).await?;
        // `{"apps": null}` when there are none; `app` is a list otherwise.
        match v.get("apps").and_then(|a| a.get("app")) {
            None | Some(serde_json::Value::Null) => Ok(Vec::new()),
            Some(list) => serde_json::from_value(list.clone()).map_err(|e| RestError::BadReply {
                url: RedactedUrl::new(&self.url(&path)),
                reason: format!("`apps.app` has an unexpected shape: {e}"),
            }),
        }
    }

    /// Sets the application's lifetime to end at `expiry`: the RM kills it then, saying so
    /// in its diagnostics (`PUT /ws/v1/cluster/apps/{id}/timeout`; the REST submission has
    /// no timeout field).
    pub async fn set_lifetime(&self, app_id: &str, expiry: std::time::SystemTime) -> Result<()> {
        let url = self.url(&format!("/ws/v1/cluster/apps/{app_id}/timeout"));
        let body = serde_json::json!({
            "timeout": {"type": "LIFETIME", "expiryTime": iso8601_utc(expiry)}
        });
        self.send("PUT", url, Some(body)).await?;
        Ok(())
    }

    /// Asks the RM to kill the application. Returns once the RM accepted the request;
    /// poll [`RmRest::app`] to see it reach KILLED.
    pub async fn kill(&self, app_id: &str, diagnostics: &str) -> Result<()> {
        let url = self.url(&format!("/ws/v1/cluster/apps/{app_id}/state"));
        let body = serde_json::json!({"state": "KILLED", "diagnostics": diagnostics});
        self.send("PUT", url, Some(body)).await?;
        Ok(())
    }

    /// Polls the application until it reaches a final state or `deadline` passes.
    pub async fn wait_final(&self, app_id: &str, deadline: Duration) -> Result<AppReport> {
        let start = std::time::Instant::now();
        loop {
            let report = self.app(app_id).await?;
            if report.is_final() || start.elapsed() >= deadline {
                return Ok(report);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// The nodes of a `GET /ws/v1/cluster/nodes` reply (`null` or a missing list is none),
/// `url` naming it in errors. Pure, so it is fuzzed (`hostile_input_tests`).
pub(crate) fn parse_nodes(url: &str, v: serde_json::Value) -> Result<Vec<NodeInfo>> {
    let list = v
        .get("nodes")
        .and_then(|n| n.get("node"))
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    if list.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(list).map_err(|e| RestError::BadReply {
        url: RedactedUrl::new(url),
        reason: format!("`nodes.node` has an unexpected shape: {e}"),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape Hadoop 3.4.1's Capacity Scheduler answers with (fields trimmed): leaves
    /// are found by short name or path at any depth; a parent is not a leaf.
    #[test]
    fn leaf_queues_are_found_by_name_or_path_at_any_depth() {
        let info = serde_json::json!({
            "type": "capacityScheduler", "queueName": "root", "queuePath": "root",
            "queues": {"queue": [
                {"type": "capacitySchedulerLeafQueueInfo", "queueName": "default",
                 "queuePath": "root.default", "state": "RUNNING",
                 "absoluteUsedCapacity": 87.5, "absoluteMaxCapacity": 100.0,
                 "numPendingApplications": 1},
                {"queueName": "team", "queuePath": "root.team", "queues": {"queue": [
                    {"queueName": "etl", "queuePath": "root.team.etl", "state": "STOPPED",
                     "absoluteUsedCapacity": 0.0, "absoluteMaxCapacity": 20.0}]}}
            ]}
        });
        let d = find_leaf_queue(&info, "default").unwrap();
        assert_eq!(
            (d.state.as_str(), d.absolute_used_capacity),
            ("RUNNING", 87.5)
        );
        assert_eq!(d.num_pending_applications, 1);
        let etl = find_leaf_queue(&info, "root.team.etl").unwrap();
        assert_eq!(
            (etl.queue_name.as_str(), etl.absolute_max_capacity),
            ("etl", 20.0)
        );
        assert!(find_leaf_queue(&info, "team").is_none());
        assert!(find_leaf_queue(&info, "root").is_none());
        assert!(
            find_leaf_queue(&serde_json::json!({"type": "fifoScheduler"}), "default").is_none()
        );
    }

    #[test]
    fn submission_json_uses_jaxb_entry_maps() {
        let mut am = AmContainerSpec {
            command: "./am 1><LOG_DIR>/stdout".into(),
            ..Default::default()
        };
        am.environment.insert("A".into(), "1".into());
        am.local_resources.insert(
            "am".into(),
            LocalResource {
                resource: "file:///x/am".into(),
                kind: "FILE".into(),
                visibility: "APPLICATION".into(),
                size: 10,
                timestamp: 1234,
            },
        );
        let sub = Submission {
            application_id: "application_1_0001".into(),
            name: "t".into(),
            queue: "default".into(),
            application_type: "YARN-AM".into(),
            tags: vec!["x".into()],
            max_app_attempts: 1,
            keep_containers: true,
            am_resource: Resource {
                memory: 256,
                vcores: 1,
            },
            am,
            priority: None,
            attempt_failures_validity_interval_ms: None,
            log_aggregation: LogAggregation::default(),
            am_node_label: None,
            am_resources: Vec::new(),
            lifetime: None,
        };
        let v = sub.to_json();
        assert!(
            v.get("priority").is_none()
                && v.get("attempt-failures-validity-interval").is_none()
                && v.get("log-aggregation-context").is_none()
                && v["am-container-spec"].get("application-acls").is_none()
                && v.get("am-container-node-label-expression").is_none()
        );
        let mut with = sub.clone();
        with.am_node_label = Some("gpu".into());
        with.am.acls.view = Some("bob ops".into());
        with.log_aggregation = LogAggregation {
            include: Some("^stdout$".into()),
            rolled_exclude: Some("gc.*".into()),
            ..LogAggregation::default()
        };
        let w = with.to_json();
        assert_eq!(
            w["am-container-spec"]["application-acls"],
            serde_json::json!({"entry": [{"key": "VIEW_APP", "value": "bob ops"}]})
        );
        assert_eq!(w["am-container-node-label-expression"], "gpu");
        assert_eq!(
            w["log-aggregation-context"],
            serde_json::json!({"log-include-pattern": "^stdout$", "rolled-log-exclude-pattern": "gc.*"})
        );
        let v2 = Submission {
            priority: Some(5),
            attempt_failures_validity_interval_ms: Some(60_000),
            ..sub.clone()
        }
        .to_json();
        assert_eq!(
            (
                v2["priority"].clone(),
                v2["attempt-failures-validity-interval"].clone()
            ),
            (5.into(), 60_000.into())
        );
        assert_eq!(v["keep-containers-across-application-attempts"], true);
        let env = &v["am-container-spec"]["environment"]["entry"][0];
        assert_eq!(env["key"], "A");
        assert_eq!(env["value"], "1");
        let lr = &v["am-container-spec"]["local-resources"]["entry"][0]["value"];
        assert_eq!(lr["type"], "FILE");
        assert_eq!(lr["timestamp"], 1234);
        assert_eq!(v["resource"]["vCores"], 1);
        let none = &v["am-container-spec"]["credentials"];
        assert_eq!(none["secrets"]["entry"], serde_json::json!([]));
    }

    #[test]
    fn times_in_hadoops_iso_8601() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000+0000");
        // 2026-11-27T12:10:05.123Z; and a leap day.
        assert_eq!(
            iso8601_utc(UNIX_EPOCH + Duration::from_millis(1_795_781_405_123)),
            "2026-11-27T12:10:05.123+0000"
        );
        assert_eq!(
            iso8601_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000+0000"
        );
    }

    #[test]
    fn credentials_render_as_the_rm_decodes_them() {
        use base64::Engine;
        let token = crate::token::Token {
            identifier: vec![1, 2, 3],
            password: vec![0xff; 20],
            kind: "HDFS_DELEGATION_TOKEN".into(),
            service: "127.0.0.1:8020".into(),
        };
        let c = Credentials {
            tokens: vec![("hdfs".into(), token)],
            secrets: vec![("app.key".into(), vec![0xfb, 0xff, 0x00, b'k'])],
        };
        let v = credentials_json(&c);
        let secret = &v["secrets"]["entry"][0];
        assert_eq!(secret["key"], "app.key");
        assert_eq!(secret["value"], "+/8Aaw==");
        let t = &v["tokens"]["entry"][0];
        assert_eq!(t["key"], "hdfs");
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(t["value"].as_str().unwrap())
            .unwrap();
        let mut want = vec![3, 1, 2, 3, 20];
        want.extend([0xff; 20]);
        want.push(21);
        want.extend_from_slice(b"HDFS_DELEGATION_TOKEN");
        want.push(14);
        want.extend_from_slice(b"127.0.0.1:8020");
        assert_eq!(raw, want);
        // The secret's value is in the JSON for the RM, but never in a Debug print.
        let spec = AmContainerSpec {
            credentials: c,
            ..Default::default()
        };
        assert!(!format!("{spec:?}").contains("251"), "{spec:?}");
    }

    #[test]
    fn node_info_parses_rm_json() {
        let json = r#"{"rack":"/rack1","state":"RUNNING","id":"nm1:45454","nodeHostName":"nm1",
            "nodeHTTPAddress":"nm1:8042","numContainers":0,"usedMemoryMB":0,"availMemoryMB":4096,
            "usedVirtualCores":0,"availableVirtualCores":4,"healthReport":""}"#;
        let n: NodeInfo = serde_json::from_str(json).unwrap();
        assert_eq!(n.node_host_name, "nm1");
        assert_eq!(n.memory_mb(), 4096);
        assert_eq!(n.vcores(), 4);
    }
}

/// Audit M2 (RM side): an RM REST error names its URL without the caller's `user.name`.
#[cfg(test)]
mod redaction_tests {
    use super::*;

    #[tokio::test]
    async fn rest_errors_carry_no_user_name() {
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let rm = RmRest::new(
            &format!("http://{closed}"),
            "alice-secret-name",
            Duration::from_secs(5),
        )
        .unwrap();
        let e = rm.new_application().await.unwrap_err();
        let mut shown = format!("{e} {e:?}");
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            shown.push_str(&format!(": {s}"));
            source = s.source();
        }
        assert!(!shown.contains("alice-secret-name"), "{shown}");
        assert!(shown.contains("user.name=REDACTED"), "{shown}");
    }
}

/// Audit L1 and L4 on the RM side: redirects carry credentials only to known RMs, and a
/// reply is read under a cap.
#[cfg(test)]
mod hostile_server_tests {
    use super::*;
    use crate::test_http::{reply, serve};

    const TOKEN: &str = "RM-DELEGATION-TOKEN-SECRET";

    fn client(base: &str) -> RmRest {
        RmRest::new(base, "alice", Duration::from_secs(5))
            .unwrap()
            .with_auth(HttpAuth::Delegation {
                token: TOKEN.into(),
            })
    }

    const NEW_APP: &str = r#"{"application-id":"application_1_0001"}"#;
    const PATH: &str = "/ws/v1/cluster/apps/new-application";

    /// A host that answers every call with a new application id.
    async fn rm() -> (String, crate::test_http::Seen) {
        serve("127.0.0.2", |_| reply("200 OK", "", NEW_APP)).await
    }

    /// A host that redirects every call to `target` + the path.
    async fn redirecting_to(ip: &str, target: &str) -> String {
        let location = format!("location: {target}{PATH}\r\n");
        serve(ip, move |_| reply("307 Temporary Redirect", &location, ""))
            .await
            .0
    }

    #[tokio::test]
    async fn a_redirect_to_another_host_is_refused_and_gets_no_token() {
        let (b, seen_by_b) = rm().await;
        let a = redirecting_to("127.0.0.1", &b).await;
        let e = client(&a).new_application().await.unwrap_err();
        assert!(matches!(e, RestError::ForeignRedirect { .. }), "{e}");
        assert!(seen_by_b.lock().unwrap().is_empty(), "host B was asked");
        assert!(e.to_string().contains("127.0.0.2"), "{e}");
        assert!(!format!("{e} {e:?}").contains(TOKEN), "{e:?}");
    }

    #[tokio::test]
    async fn a_standby_rm_redirect_to_a_known_rm_is_followed_with_the_token() {
        let (b, seen_by_b) = rm().await;
        let a = redirecting_to("127.0.0.1", &b).await;
        let app = client(&a)
            .with_other_rms(&[b.trim_start_matches("http://")])
            .new_application()
            .await
            .unwrap();
        assert_eq!(app.application_id, "application_1_0001");
        let heads = seen_by_b.lock().unwrap();
        assert_eq!(heads.len(), 1);
        assert!(
            heads[0].starts_with(&format!("POST {PATH}")),
            "{}",
            heads[0]
        );
        let header = format!("{RM_DELEGATION_HEADER}: {TOKEN}").to_ascii_lowercase();
        assert!(
            heads[0].to_ascii_lowercase().contains(&header),
            "{}",
            heads[0]
        );
    }

    #[tokio::test]
    async fn a_redirect_loop_on_the_same_rm_ends() {
        let (a, seen) = serve("127.0.0.1", |_| {
            reply(
                "307 Temporary Redirect",
                &format!("location: {PATH}\r\n"),
                "",
            )
        })
        .await;
        let e = client(&a).new_application().await.unwrap_err();
        assert!(matches!(e, RestError::TooManyRedirects { .. }), "{e}");
        assert_eq!(seen.lock().unwrap().len(), MAX_REDIRECTS + 1);
    }

    #[tokio::test]
    async fn an_oversized_reply_is_refused_by_its_length_or_as_it_streams() {
        // Declared too large: refused before reading.
        let (a, _) = serve("127.0.0.1", |_| {
            b"HTTP/1.1 200 OK\r\ncontent-length: 1073741824\r\nconnection: close\r\n\r\n{".to_vec()
        })
        .await;
        let e = client(&a).cluster_info().await.unwrap_err();
        assert!(
            matches!(e, RestError::TooLarge { limit, .. } if limit == MAX_REPLY_BYTES),
            "{e}"
        );
        assert!(e.to_string().contains(&MAX_REPLY_BYTES.to_string()), "{e}");
        // No length, a body past the cap: refused once the cap is passed.
        let (a, _) = serve("127.0.0.1", |_| {
            let mut r = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_vec();
            r.extend(std::iter::repeat_n(b' ', 256 << 10));
            r
        })
        .await;
        let e = client(&a)
            .with_reply_limit(64 << 10)
            .cluster_info()
            .await
            .unwrap_err();
        assert!(
            matches!(e, RestError::TooLarge { limit, .. } if limit == 64 << 10),
            "{e}"
        );
    }
}
