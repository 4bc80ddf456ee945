//! The driver API's JSON shapes. Requests deny unknown fields and use unsigned counts, so a
//! typo or a negative number is a 400 naming the field, not a silently ignored value.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A driver's whole demand: the embedded driver's own type (one `Demand` for both).
pub use crate::demand::Demand;
/// The one executor id of the AM (serialized as the decimal string, as before).
pub use crate::ids::ExecutorId;
/// Where a granted container matched the request it satisfied: the allocator's own type.
pub use crate::placement::Locality;

/// The ids stay strings here: a driver naming something that is not an executor id gets it
/// back among the `unknown` ones, as for an id the AM does not know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KillRequest {
    pub executor_ids: Vec<String>,
}

/// How the driver ends the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinalOutcome {
    Succeeded,
    Failed,
    Killed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishRequest {
    pub status: FinalOutcome,
    #[serde(default)]
    pub diagnostics: String,
}

/// `POST /v1/progress`: an external driver's measure of how far the app has come.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressReport {
    /// From 0 to 1.
    pub progress: f32,
}

/// Which executors a kill request reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillOutcome {
    pub killed: Vec<ExecutorId>,
    pub unknown: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorState {
    /// Container granted, launch in progress.
    Starting,
    Running,
    /// Ended; `exit_status` and `reason` say how.
    Exited,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutorView {
    pub id: ExecutorId,
    pub container_id: String,
    pub host: String,
    pub rack: String,
    pub locality: Locality,
    pub state: ExecutorState,
    pub exit_status: Option<i32>,
    pub reason: Option<String>,
    /// Whether the exit counts as an application failure (a crash) rather than the cluster's
    /// doing (preemption, lost node) or ours (released).
    pub counts_against_app: Option<bool>,
    /// The NodeManager's web address, `host:port`, where the container's logs are
    /// (`/ws/v1/node/containerlogs/<container>/<file>`); unknown for executors adopted from
    /// an earlier attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_http_address: Option<String>,
    /// The executor's kind, when the app has several (`submit --executor-kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Countable resources beyond memory and vcores its container got from YARN (a GPU
    /// count, a cluster's own types), by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub resources: std::collections::BTreeMap<String, i64>,
}

/// Outstanding container requests by how they were placed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingView {
    /// Requests naming nodes.
    pub locality: u32,
    /// Requests for any host.
    pub any_host: u32,
}

/// What changed about an executor; streamed on `/v1/events`, kept in `recent_events`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExecutorEvent {
    Added { executor: ExecutorView },
    Updated { executor: ExecutorView },
    Removed { executor: ExecutorView },
}

impl ExecutorEvent {
    pub fn name(&self) -> &'static str {
        match self {
            ExecutorEvent::Added { .. } => "executor_added",
            ExecutorEvent::Updated { .. } => "executor_updated",
            ExecutorEvent::Removed { .. } => "executor_removed",
        }
    }

    pub fn executor(&self) -> &ExecutorView {
        match self {
            ExecutorEvent::Added { executor }
            | ExecutorEvent::Updated { executor }
            | ExecutorEvent::Removed { executor } => executor,
        }
    }
}

/// A list the AM loop publishes after every event. Readers share it, and it shares each
/// entry with the loop's own record. It is held in chunks (each an `Arc` of entry
/// pointers), so a pass that changed one entry pays for a copy of that entry's chunk and of
/// the chunk pointers, not of every entry's pointer (10,000 executors: about 160 chunk
/// pointers and one chunk instead of 10,000 pointers copied and as many dropped); a pass
/// that changed none pays nothing (see `am::executors`). Serialized as the plain list.
pub struct Listed<T> {
    chunks: Arc<[Arc<[Arc<T>]>]>,
    len: usize,
}

/// Entries per chunk of a [`Listed`] built from a plain list (the registry chunks its
/// executors by id, [`Listed::from_chunks`]).
pub const LISTED_CHUNK: usize = 64;

impl<T> Listed<T> {
    /// A list made of these chunks, in order (empty ones are fine).
    pub fn from_chunks(chunks: impl IntoIterator<Item = Arc<[Arc<T>]>>) -> Self {
        let chunks: Arc<[Arc<[Arc<T>]>]> = chunks.into_iter().collect();
        let len = chunks.iter().map(|c| c.len()).sum();
        Listed { chunks, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    #[allow(dead_code)] // (clippy asks for it beside `len`; nothing reads it yet)
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Arc<T>> + Clone + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    pub fn get(&self, mut i: usize) -> Option<&Arc<T>> {
        for c in self.chunks.iter() {
            if i < c.len() {
                return Some(&c[i]);
            }
            i -= c.len();
        }
        None
    }
}

impl<T> Clone for Listed<T> {
    fn clone(&self) -> Self {
        Listed {
            chunks: Arc::clone(&self.chunks),
            len: self.len,
        }
    }
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Listed::from_chunks([])
    }
}

impl<T> std::ops::Index<usize> for Listed<T> {
    type Output = Arc<T>;
    fn index(&self, i: usize) -> &Arc<T> {
        self.get(i).expect("index within the list")
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Listed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Equal when the entries are, however they are chunked.
impl<T: PartialEq> PartialEq for Listed<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chunks, &other.chunks)
            || (self.len == other.len
                && self
                    .iter()
                    .zip(other.iter())
                    .all(|(a, b)| Arc::ptr_eq(a, b) || a == b))
    }
}

impl<T: Eq> Eq for Listed<T> {}

impl<T> FromIterator<Arc<T>> for Listed<T> {
    fn from_iter<I: IntoIterator<Item = Arc<T>>>(iter: I) -> Self {
        let all: Vec<Arc<T>> = iter.into_iter().collect();
        Listed::from_chunks(all.chunks(LISTED_CHUNK).map(Arc::from))
    }
}

impl<T> From<Vec<T>> for Listed<T> {
    fn from(v: Vec<T>) -> Self {
        v.into_iter().map(Arc::new).collect()
    }
}

impl<T: Serialize> Serialize for Listed<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|e| &**e))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Listed<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Listed::from)
    }
}

/// Everything the read endpoints show, published by the AM loop after each round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateView {
    pub app_id: String,
    /// The default kind's demand (the only one of an app without kinds).
    pub demand: Demand,
    /// Every executor kind, with its own demand and counts, when the app has several
    /// (`submit --executor-kind`, a job's `kinds`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<KindView>,
    pub pending: PendingView,
    pub starting: u32,
    pub running: u32,
    pub executor_failures: u32,
    pub executors: Listed<ExecutorView>,
    /// What `executors` leaves out: the AM keeps only the last finished ones.
    #[serde(default)]
    pub retention: Retention,
    pub recent_events: Listed<ExecutorEvent>,
    /// How far the app has come, 0 to 1: what the AM reports to the RM (see
    /// `AmCore::progress`).
    #[serde(default)]
    pub progress: f32,
    /// Executors asked for and not granted, for how long, and the likely reason (see
    /// `core::am::waiting`); absent when nothing waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<WaitingView>,
    /// What the RM asked back by preemption and what the AM gave back (all zero when it
    /// never asked).
    #[serde(default)]
    pub preemption: PreemptionView,
    /// Hosts the AM keeps new executors off by itself: decommissioning nodes, hosts where
    /// executors kept failing (until their exclusion ends).
    #[serde(default)]
    pub held_back_hosts: Vec<HeldBackHost>,
    /// The embedded driver's job report, when the AM runs a job. It shares the task
    /// records with the driver instead of copying them, and is turned into JSON by the
    /// reader (`GET /v1/job`, `/v1/state`), never by the AM loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<crate::job_report::ReportView>,
}

/// What `/v1/state` shows while executors wait.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingView {
    /// Executors asked for and not granted yet.
    pub executors: u32,
    /// Since the last grant (or since the requests were made), as of the AM's last pass.
    pub waited_ms: u64,
    /// The likely reason, once the AM has looked (see the module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl WaitingView {
    /// One line for people (the page, `yarn-am status`).
    pub fn line(&self) -> String {
        format!(
            "{} executor(s) waiting for {} s: {}",
            self.executors,
            self.waited_ms / 1000,
            self.reason
                .as_deref()
                .unwrap_or("the AM looks into why after a few seconds")
        )
    }
}

/// One host held back, as the state view and the page show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldBackHost {
    pub host: String,
    /// `decommissioning` or `failures`.
    pub why: String,
    /// The decommission timeout YARN reported (seconds), or when the exclusion ends (the
    /// AM's clock, ms since it started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decommission_timeout_s: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_until_ms: Option<u64>,
    /// Executor failures counted on the host (within the window).
    #[serde(default)]
    pub failures: u32,
}

/// One executor kind of an app with several, as `GET /v1/state` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindView {
    pub name: String,
    pub memory_mb: i64,
    pub vcores: i32,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub resources: std::collections::BTreeMap<String, i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_label: Option<String>,
    pub demand: Demand,
    pub starting: u32,
    pub running: u32,
    pub pending: u32,
}

/// `POST /v1/kinds`: an executor kind a driver declares while the app runs (a Spark
/// resource profile), asked at its own priority and numbered in its own id stripe like the
/// kinds of `submit --executor-kind`, within the room `submit --max-executor-kinds` left.
/// Its executors run the app's command with `env` added to their environment, each value
/// literal (never expanded by the NodeManager's launch script). Declaring the same kind
/// again is a no-op; the same name with another shape is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindDeclaration {
    pub name: String,
    pub memory_mb: i64,
    pub vcores: i32,
    #[serde(default)]
    pub resources: std::collections::BTreeMap<String, i64>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// The kind's executors at most; `None`: the default kind's maximum.
    #[serde(default)]
    pub max: Option<u32>,
}

/// What a [`KindDeclaration`] is refused for before it reaches the AM's loop (a 400).
impl KindDeclaration {
    /// Longest kind name and most `env` entries a declaration may carry.
    pub const MAX_NAME: usize = 64;
    pub const MAX_ENV: usize = 64;

    pub fn check(&self) -> Result<(), String> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= Self::MAX_NAME
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !name_ok {
            return Err(format!(
                "kind name {:?}: 1 to {} of A-Z a-z 0-9 - _ .",
                self.name,
                Self::MAX_NAME
            ));
        }
        if self.name == crate::spec::DEFAULT_KIND {
            return Err("the default kind is fixed at submit".into());
        }
        if self.memory_mb <= 0 || self.vcores <= 0 {
            return Err(format!(
                "memory_mb and vcores must be positive (got {} and {})",
                self.memory_mb, self.vcores
            ));
        }
        if let Some((r, n)) = self
            .resources
            .iter()
            .find(|(r, &n)| r.is_empty() || r.contains(['=', ',']) || n <= 0)
        {
            return Err(format!("resource {r:?}={n}: a name and a positive count"));
        }
        if self.env.len() > Self::MAX_ENV {
            return Err(format!("at most {} env entries", Self::MAX_ENV));
        }
        let var_ok = |k: &str| {
            k.bytes().next().is_some_and(|b| !b.is_ascii_digit())
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        };
        if let Some(k) = self
            .env
            .keys()
            .find(|k| !var_ok(k) || k.starts_with("YARN_AM_"))
        {
            return Err(format!(
                "env name {k:?}: a shell variable name, not one of the AM's YARN_AM_*"
            ));
        }
        if let Some(k) = self
            .env
            .iter()
            .find(|(_, v)| v.contains('\0'))
            .map(|(k, _)| k)
        {
            return Err(format!("env {k}: a value may not contain a NUL byte"));
        }
        Ok(())
    }
}

/// The answer to a [`KindDeclaration`]: the kind's index (its priority is 1 + index) and
/// whether this declaration made it (false: it was there already).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindDeclared {
    pub name: String,
    pub index: usize,
    pub created: bool,
}

/// The RM's preemption requests as the AM answered them (`core::am::preemption`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreemptionView {
    /// Preemption messages the RM sent.
    pub asks: u64,
    /// Executors the AM gave back in answer (their tasks re-queued, no failure counted).
    pub given_back: u64,
}

impl StateView {
    pub fn executor(&self, id: ExecutorId) -> Option<&ExecutorView> {
        self.executors.iter().find(|e| e.id == id).map(|e| &**e)
    }
}

/// How much of the executor history is kept: live executors always, finished ones only the
/// last `finished_kept`, so a long app's state stays bounded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retention {
    pub finished_kept: u64,
    /// Finished executors dropped so far (oldest first).
    pub forgotten: u64,
    /// The highest executor id launched: ids up to it that are not listed were forgotten.
    #[serde(with = "crate::ids::as_number")]
    pub last_id: ExecutorId,
}

impl Retention {
    /// Whether executor `id` existed but is no longer kept (ids count up from 1).
    pub fn forgot(&self, id: ExecutorId) -> bool {
        self.forgotten > 0 && (ExecutorId::new(1)..=self.last_id).contains(&id)
    }
}

/// The body of every error reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
}
