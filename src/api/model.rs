//! The driver API's JSON shapes. Requests deny unknown fields and use unsigned counts, so a
//! typo or a negative number is a 400 naming the field, not a silently ignored value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A driver's whole demand, as Spark's RequestExecutors: replaces the previous one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demand {
    pub target_executors: u32,
    #[serde(default)]
    pub locality_aware_tasks: u32,
    #[serde(default)]
    pub host_to_local_task_count: BTreeMap<String, u32>,
    #[serde(default)]
    pub excluded_hosts: Vec<String>,
}

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

/// Which executors a kill request reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillOutcome {
    pub killed: Vec<String>,
    pub unknown: Vec<String>,
}

/// Where a granted container matched the request it satisfied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Locality {
    Node,
    Rack,
    Any,
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
    pub id: String,
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

/// Everything the read endpoints show, published by the AM loop after each round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateView {
    pub app_id: String,
    pub demand: Demand,
    pub pending: PendingView,
    pub starting: u32,
    pub running: u32,
    pub executor_failures: u32,
    pub executors: Vec<ExecutorView>,
    /// What `executors` leaves out: the AM keeps only the last finished ones.
    #[serde(default)]
    pub retention: Retention,
    pub recent_events: Vec<ExecutorEvent>,
    /// The embedded driver's job report, when the AM runs a job. Shared, not copied: the
    /// AM rebuilds it only when the driver saw an event, so a pass that changed nothing
    /// in the job does not pay for every task record again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<std::sync::Arc<serde_json::Value>>,
}

impl StateView {
    pub fn executor(&self, id: &str) -> Option<&ExecutorView> {
        self.executors.iter().find(|e| e.id == id)
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
    pub last_id: u64,
}

impl Retention {
    /// Whether executor `id` existed but is no longer kept (ids count up from 1).
    pub fn forgot(&self, id: &str) -> bool {
        self.forgotten > 0
            && id
                .parse::<u64>()
                .is_ok_and(|n| (1..=self.last_id).contains(&n) && n.to_string() == id)
    }
}

/// The body of every error reply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
}

/// An executor's heartbeat to the AM: what finished since the last one, and room for more.
/// The first poll of an executor is its registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PollRequest {
    pub executor_id: String,
    pub host: String,
    pub free_cpus: u32,
    #[serde(default)]
    pub finished: Vec<TaskResult>,
    /// Attempts this executor has received and not yet reported finished. Lets the AM see
    /// an assignment that never arrived (a reply lost on the way) and send it again.
    #[serde(default)]
    pub running: Vec<TaskRef>,
}

/// One attempt of one task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    pub task_id: String,
    pub attempt: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskResult {
    pub task_id: String,
    pub attempt: u32,
    /// The command's exit code; 128 + signal when a signal ended it.
    pub exit_code: i32,
    pub duration_ms: u64,
}

/// Work for one executor; `shutdown` tells it to exit (its work is done or it was released).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollReply {
    pub tasks: Vec<TaskAssignment>,
    pub shutdown: bool,
    /// Why the executor should shut down, when the AM knows more than "work done".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Attempts to kill now (past their `timeout_ms`; the AM already counted them failed).
    /// The executor ends each one's process group and reports its exit as usual.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kill: Vec<TaskRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskAssignment {
    pub task_id: String,
    pub attempt: u32,
    pub command: String,
    pub cpus: u32,
}
