//! What a submission sends: the application's container spec, local resources, log
//! aggregation and credentials, rendered as the RM's JSON (Jersey's entry maps).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::credentials::Credentials;

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
