//! What the submitter tells the ApplicationMaster: the executor spec and where things are.
//!
//! The submitter puts an [`AppSpec`] as JSON into the AM container's credentials under
//! [`SPEC_ALIAS`] when it is at most [`INLINE_SPEC_LIMIT`] bytes, else into the staging folder
//! as a local resource named [`SPEC_FILE`]; the AM reads it from its token file, else from
//! its working directory. In the credentials because a local resource of the application's
//! own makes the NodeManager start a localizer for the AM container, about 0.1 s of every
//! start-up on the test cluster, while the token file is written anyway. Bounded
//! because the RM keeps the launch context in its state store (ZooKeeper's takes about 1 MB
//! a node), and a job of many tasks makes a large spec. Not an environment variable: the
//! NodeManager writes environment values into `launch_container.sh` without escaping
//! quotes, so JSON there breaks the launch (seen on Hadoop 3.4.1). Unknown fields are
//! rejected so a mismatched submitter/AM pair fails loudly rather than silently.
//!
//! Data flows one way: staging produces [`StagedFile`]s and a [`StagingDir`], the spec
//! carries them; `staging` knows nothing of the spec.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::staged::{StagedFile, StagingDir};

/// Name of the spec file in the AM container's working directory (a spec too large for the
/// credentials).
pub const SPEC_FILE: &str = "yarn-am-spec.json";
/// Alias of the spec in the AM container's credentials (a `yarn-am.` alias: executors and
/// their tasks never get it).
pub const SPEC_ALIAS: &str = "yarn-am.spec";
/// The largest spec (JSON bytes) carried in the credentials; a larger one is a file.
pub const INLINE_SPEC_LIMIT: usize = 64 * 1024;

/// Whether a spec of this JSON travels in the AM container's credentials.
pub fn travels_inline(json: &str) -> bool {
    json.len() <= INLINE_SPEC_LIMIT
}

/// How the AM starts executors and how many it keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutorSpec {
    /// The launch command of each executor container, written by yarn-am (the NodeManager's
    /// launch script expands it: `<LOG_DIR>`, `$`, quotes). A user's `--executor-command`
    /// is not here but in a localised script among `files` (`submit::COMMAND_FILE`).
    pub command: String,
    pub memory_mb: i64,
    pub vcores: i32,
    /// Executors to ask for before any driver states its demand.
    pub initial: u32,
    pub min: u32,
    pub max: u32,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files localised into every executor's working directory, by name (`file://` or
    /// `hdfs://` URLs, see [`crate::staging`]).
    #[serde(default)]
    pub files: BTreeMap<String, StagedFile>,
    /// The app's ACLs, in every executor's launch context (a NodeManager takes them from the
    /// first container of the app it starts).
    #[serde(default, skip_serializing_if = "yarn_client::acl::AppAcls::is_empty")]
    pub acls: yarn_client::acl::AppAcls,
    /// The node label the executors are asked with (`submit --node-label`): YARN grants them
    /// only on nodes of that partition, and the AM names no other node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_label: Option<String>,
    /// Countable resources beyond memory and vcores each executor asks for, by name
    /// (`submit --executor-resource yarn.io/gpu=1`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, i64>,
    /// Further executor kinds of the app (`submit --executor-kind`, a job's `kinds`), each
    /// with its own size, resources, label, bounds and command; the fields above are the
    /// first kind, [`DEFAULT_KIND`]. Each kind is asked at its own priority and numbers its
    /// executors in its own stripe (`core::ids::IdStripe`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<ExecutorKind>,
    /// How many kinds the app may have in all, those declared while it runs (the driver
    /// API's `POST /v1/kinds`) included (`submit --max-executor-kinds`); 0: only the kinds
    /// above. It fixes the width of the id stripes ([`Self::stripe_width`]) for the app's
    /// life, as an executor's kind must follow from its id in every AM attempt.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_kinds: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The name of the kind the executor spec's own fields describe.
pub const DEFAULT_KIND: &str = "default";

/// One executor kind: what YARN is asked for, and how many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutorKind {
    pub name: String,
    pub memory_mb: i64,
    pub vcores: i32,
    #[serde(default)]
    pub initial: u32,
    #[serde(default)]
    pub min: u32,
    pub max: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_label: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, i64>,
    /// The kind's own launch command (as [`ExecutorSpec::command`]); `None`: the default
    /// kind's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl ExecutorSpec {
    /// Every kind, the default first: index `k` is kind `k` everywhere in the AM.
    pub fn all_kinds(&self) -> Vec<ExecutorKind> {
        let mut all = vec![ExecutorKind {
            name: DEFAULT_KIND.into(),
            memory_mb: self.memory_mb,
            vcores: self.vcores,
            initial: self.initial,
            min: self.min,
            max: self.max,
            node_label: self.node_label.clone(),
            resources: self.resources.clone(),
            command: None,
        }];
        all.extend(self.kinds.iter().cloned());
        all
    }

    /// How many kinds the app has (1 without `kinds`).
    pub fn kind_count(&self) -> usize {
        1 + self.kinds.len()
    }

    /// How many id stripes the executor ids are spread over: room for every kind the app
    /// may ever have ([`Self::max_kinds`], at least the kinds it starts with).
    pub fn stripe_width(&self) -> usize {
        self.kind_count().max(self.max_kinds as usize)
    }

    /// The index of the kind called `name`.
    pub fn kind_index(&self, name: &str) -> Option<usize> {
        if name == DEFAULT_KIND {
            return Some(0);
        }
        self.kinds
            .iter()
            .position(|k| k.name == name)
            .map(|i| i + 1)
    }

    /// The name of kind `k` (the default's for an index out of range).
    pub fn kind_name(&self, k: usize) -> &str {
        match k {
            0 => DEFAULT_KIND,
            k => self.kinds.get(k - 1).map_or(DEFAULT_KIND, |x| &x.name),
        }
    }
}

/// With `submit --principal/--keytab` on a secure cluster staging on HDFS: how the AM logs
/// in again to fetch new HDFS delegation tokens before the old ones reach their maximum
/// lifetime (Spark's `spark.kerberos.keytab` approach; see `crate::am::token_refresh`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRefresh {
    pub principal: String,
    /// The keytab's file name in the AM container's working directory (a local resource
    /// of the AM only).
    pub keytab: String,
    /// Renewer of the new tokens (the RM principal's short name).
    pub renewer: String,
    /// The NameNode web address the tokens come from.
    pub webhdfs: String,
}

/// Everything the AM needs that YARN's container environment does not give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    /// RM scheduler addresses (ApplicationMasterProtocol), HA candidates in order.
    pub rm_scheduler: Vec<String>,
    /// RM web address, for node lists and racks.
    pub rm_web: String,
    pub executor: ExecutorSpec,
    /// Staging folder of this application, removed by the AM when the app ends.
    #[serde(default)]
    pub staging: Option<StagingDir>,
    /// Executor failures after which the AM gives up (Spark: max(2 x max executors, 3)).
    pub max_executor_failures: u32,
    /// `submit --executor-failures-validity-interval`: failures older than this stop
    /// counting towards `max_executor_failures`. `None`: they count forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_failures_validity_ms: Option<u64>,
    /// A job for the embedded driver; then executors run `yarn-am executor`.
    #[serde(default)]
    pub job: Option<crate::job::Job>,
    /// The NodeManagers' heartbeat interval (`yarn.resourcemanager.nodemanagers.heartbeat-
    /// interval-ms`) when the submitter had a Hadoop configuration: how long the allocator
    /// waits for YARN to spread executors before it asks more widely. `None`: YARN's default.
    #[serde(default)]
    pub nm_heartbeat_ms: Option<u64>,
    /// `ipc.client.fallback-to-simple-auth-allowed` from the submitter's core-site.xml:
    /// whether the AM accepts an RM or NM that answers its token with a switch to SIMPLE.
    #[serde(default)]
    pub fallback_to_simple_auth_allowed: bool,
    /// `hadoop.rpc.protection` from the submitter's core-site.xml (e.g. `privacy`): its
    /// weakest level is the least the AM accepts from the RM and the NMs. `None`: Hadoop's
    /// default, `authentication`.
    #[serde(default)]
    pub rpc_protection: Option<String>,
    /// Set when the AM may refresh its HDFS delegation token from a keytab.
    #[serde(default)]
    pub token_refresh: Option<TokenRefresh>,
    /// `submit --executor-silence-timeout`: an embedded job's executor that has not polled
    /// for this long is declared lost. `None`: the AM's default (120 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_silence_timeout_ms: Option<u64>,
    /// `submit --strategy`: the allocator's placement strategy. `None`: the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<crate::placement::Strategy>,
    /// `submit --keep-running`: an app without a job runs until a driver finishes it or it
    /// is killed. Otherwise it ends when each of its initial executors has exited 0
    /// (`core::am::am_core::Completion`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_running: bool,
    /// `submit --host-exclusion-*`: when the AM keeps new executors off a host where this
    /// app's executors keep failing, and for how long. `None`: the defaults of
    /// `core::am::held_back`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_exclusion: Option<HostExclusion>,
    /// `submit --driver-command`: a driver the AM runs in its own container, whose exit ends
    /// the app (`crate::am::driver_process`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverSpec>,
}

/// How the AM holds back a host where executors keep failing (Spark's `excludeOnFailure`
/// for launches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostExclusion {
    /// Counted failures on one host within `window_ms` that exclude it; 0: never.
    pub max_failures: u32,
    pub window_ms: u64,
    /// How long an excluded host stays excluded.
    pub exclude_ms: u64,
}

/// A driver run by the AM beside itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverSpec {
    /// The driver's shell command, a file in the AM container's working directory (it
    /// travels byte for byte, like an executor command).
    pub command_file: String,
}

impl AppSpec {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("AppSpec always serialises")
    }

    /// The least qop the AM accepts from the RM and NMs (see `rpc_protection`); `None` for
    /// a value that names no Hadoop protection level.
    pub fn min_qop(&self) -> Option<yarn_client::rpc::Qop> {
        match &self.rpc_protection {
            None => Some(yarn_client::rpc::Qop::Auth),
            Some(v) => yarn_client::rpc::Qop::minimum_from_protection(v),
        }
    }

    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// A full spec for the processes' unit tests (and this file's).
#[cfg(any(test, feature = "fixtures"))]
pub mod tests {
    use super::*;

    pub fn spec() -> AppSpec {
        AppSpec {
            rm_scheduler: vec!["rm:8030".into()],
            rm_web: "rm:8088".into(),
            executor: ExecutorSpec {
                command: "sleep 1".into(),
                memory_mb: 256,
                vcores: 1,
                initial: 2,
                min: 0,
                max: 4,
                env: BTreeMap::from([("A".into(), "b".into())]),
                files: BTreeMap::from([(
                    "__spark_libs__".into(),
                    crate::staged::StagedFile {
                        url: "hdfs://rm:8020/user/u/.yarn-am-staging/.cache/ab/jars.zip".into(),
                        size: 10,
                        timestamp_ms: 1,
                        kind: crate::staged::ResourceKind::Archive,
                        visibility: crate::staged::Visibility::Private,
                    },
                )]),
                acls: yarn_client::acl::AppAcls {
                    view: Some("bob ops".into()),
                    modify: None,
                },
                node_label: Some("gpu".into()),
                resources: BTreeMap::from([("yarn.io/gpu".into(), 1)]),
                max_kinds: 0,
                kinds: vec![ExecutorKind {
                    name: "accel".into(),
                    memory_mb: 512,
                    vcores: 2,
                    initial: 0,
                    min: 0,
                    max: 3,
                    node_label: None,
                    resources: BTreeMap::from([("example.com/accelerator".into(), 1)]),
                    command: Some("run-accel".into()),
                }],
            },
            staging: Some(StagingDir::Webhdfs {
                url: "http://rm:9870".into(),
                user: "u".into(),
                path: "/user/u/.yarn-am-staging/application_1_0001".into(),
            }),
            max_executor_failures: 8,
            executor_failures_validity_ms: Some(60_000),
            job: None,
            token_refresh: None,
            nm_heartbeat_ms: Some(500),
            fallback_to_simple_auth_allowed: false,
            rpc_protection: None,
            executor_silence_timeout_ms: Some(4000),
            strategy: Some(crate::placement::Strategy::Spark),
            keep_running: true,
            host_exclusion: Some(HostExclusion {
                max_failures: 3,
                window_ms: 60_000,
                exclude_ms: 30_000,
            }),
            driver: Some(DriverSpec {
                command_file: "yarn-am-driver.sh".into(),
            }),
        }
    }

    #[test]
    fn a_small_spec_travels_in_the_credentials_and_a_large_one_as_a_file() {
        assert!(travels_inline(&spec().to_json()));
        let mut large = spec();
        large.executor.command = "x".repeat(INLINE_SPEC_LIMIT);
        assert!(!travels_inline(&large.to_json()));
        // Under a yarn-am alias: the AM never hands it on to executors or their tasks.
        assert!(SPEC_ALIAS.starts_with(crate::credentials::ALIAS_PREFIX));
    }

    #[test]
    fn spec_round_trips_through_json() {
        let s = spec();
        assert_eq!(AppSpec::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let mut v: serde_json::Value = serde_json::from_str(&spec().to_json()).unwrap();
        v["surprise"] = 1.into();
        let err = AppSpec::from_json(&v.to_string()).unwrap_err();
        assert!(err.to_string().contains("surprise"), "{err}");
    }
}
