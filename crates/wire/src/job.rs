//! The job file: what to run, on what executors, and how patient to be about locality.
//!
//! Parsed strictly (`deny_unknown_fields`: a misspelt option should fail loudly rather than
//! silently take its default) and then validated, so the rest of the driver can assume a sane
//! job. Defaults follow Spark's: `spark.locality.wait` (3 s per level),
//! `spark.dynamicAllocation.executorIdleTimeout` (60 s), `spark.task.maxFailures` (4),
//! `spark.dynamicAllocation.executorAllocationRatio` (1.0) and the two backlog timeouts (1 s).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A whole job: one set of independent tasks run on elastic executors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub name: String,
    pub executor: JobExecutors,
    /// A task that fails this many times fails the job (Spark's `spark.task.maxFailures`).
    #[serde(default = "default_task_retries")]
    pub task_retries: u32,
    #[serde(default)]
    pub locality_wait_ms: LocalityWait,
    #[serde(default)]
    pub allocation: AllocationSpec,
    /// Default time limit of every task attempt (a task's own `timeout_ms` wins). An attempt
    /// past it is killed and counts as failed. None: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub tasks: Vec<TaskSpec>,
    /// HDFS inputs, one task per split; `submit` lists them and adds those tasks to `tasks`
    /// (and drops this section) before anything is submitted. See `yarn_am_core::inputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<crate::inputs::InputsSpec>,
    /// Further executor kinds, by name: a task naming one (`kind`) runs only on executors
    /// of that kind, which the AM asks for at their own size, resources and label, and
    /// scales on that kind's tasks alone. `executor` is the kind of every other task.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kinds: BTreeMap<String, JobExecutors>,
}

/// The executors the job asks for, and how many of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobExecutors {
    pub cores: u32,
    pub memory_mb: u32,
    #[serde(default)]
    pub min_executors: u32,
    /// Spark's default is unbounded; we stand in `i32::MAX`, which the need caps long before.
    #[serde(default = "default_max_executors")]
    pub max_executors: u32,
    /// Target at start, before any backlog has built up. Defaults to `min_executors`.
    #[serde(default)]
    pub initial_executors: Option<u32>,
    /// An executor running nothing for this long is released (never below the minimum).
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_ms: u64,
    /// Countable resources beyond memory and cores each executor asks for, by name
    /// (`yarn.io/gpu`, a type the cluster declares).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, i64>,
    /// The node label (partition) the executors are asked in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_label: Option<String>,
}

/// How long to hold out for a better placement before accepting the next looser one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalityWait {
    /// Wait at NODE_LOCAL before allowing RACK_LOCAL.
    #[serde(default = "default_locality_wait")]
    pub node: u64,
    /// Wait at RACK_LOCAL before allowing ANY.
    #[serde(default = "default_locality_wait")]
    pub rack: u64,
}

impl Default for LocalityWait {
    fn default() -> Self {
        LocalityWait {
            node: default_locality_wait(),
            rack: default_locality_wait(),
        }
    }
}

/// Ramp-up parameters of the allocation manager.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocationSpec {
    /// A backlog must persist this long before the first increase.
    #[serde(default = "default_backlog_timeout")]
    pub backlog_timeout_ms: u64,
    /// While it persists, the target is raised again every this long.
    #[serde(default = "default_backlog_timeout")]
    pub sustained_backlog_timeout_ms: u64,
    /// Fraction of the full need to ask for, in (0, 1].
    #[serde(default = "default_ratio")]
    pub executor_allocation_ratio: f64,
}

impl Default for AllocationSpec {
    fn default() -> Self {
        AllocationSpec {
            backlog_timeout_ms: default_backlog_timeout(),
            sustained_backlog_timeout_ms: default_backlog_timeout(),
            executor_allocation_ratio: default_ratio(),
        }
    }
}

/// One task: a shell command, where it would like to run, and the cpus it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub id: String,
    pub command: String,
    #[serde(default)]
    pub preferred_hosts: Vec<String>,
    #[serde(default)]
    pub preferred_racks: Vec<String>,
    #[serde(default = "default_cpus")]
    pub cpus: u32,
    /// Time limit of each attempt of this task (overrides the job's `timeout_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The executor kind it runs on (a name in the job's `kinds`); `None`: `executor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl TaskSpec {
    /// No host and no rack preference: schedulable as NO_PREF.
    pub fn has_no_preference(&self) -> bool {
        self.preferred_hosts.is_empty() && self.preferred_racks.is_empty()
    }
}

fn default_task_retries() -> u32 {
    4
}
fn default_max_executors() -> u32 {
    i32::MAX as u32
}
fn default_idle_timeout() -> u64 {
    60_000
}
fn default_locality_wait() -> u64 {
    3_000
}
fn default_backlog_timeout() -> u64 {
    1_000
}
fn default_ratio() -> f64 {
    1.0
}
fn default_cpus() -> u32 {
    1
}

/// Longest timeout or wait (`*_ms`) a job may set: one week. Longer is a typo rather than
/// patience, and the bound keeps `now + timeout` far from `u64::MAX`.
pub const MAX_TIMEOUT_MS: u64 = 7 * 24 * 3600 * 1000;

/// Most cores an executor may have: YARN's vcores are an `int32`.
pub const MAX_CORES: u32 = i32::MAX as u32;

/// What is wrong with a job file.
#[derive(Debug, Error)]
pub enum JobError {
    #[error("job file is not valid JSON for a job at `{path}`: {message}")]
    Parse { path: String, message: String },
    #[error("job name is empty")]
    EmptyName,
    #[error("job has no tasks and no inputs")]
    NoTasks,
    #[error(transparent)]
    Inputs(#[from] crate::inputs::InputsError),
    #[error("executor.cores must be at least 1")]
    ZeroCores,
    #[error("executor.cores is {0}, above YARN's limit of {MAX_CORES}")]
    TooManyCores(u32),
    #[error("{field} is {value} ms, above the limit of {MAX_TIMEOUT_MS} ms (one week)")]
    TimeoutTooLong { field: &'static str, value: u64 },
    #[error("executor.memory_mb must be at least 1")]
    ZeroMemory,
    #[error("executor.max_executors must be at least 1")]
    ZeroMaxExecutors,
    #[error("executor.min_executors ({min}) is above executor.max_executors ({max})")]
    MinAboveMax { min: u32, max: u32 },
    #[error("executor.initial_executors ({initial}) is outside [{min}, {max}]")]
    InitialOutOfRange { initial: u32, min: u32, max: u32 },
    #[error("task_retries must be at least 1")]
    ZeroTaskRetries,
    #[error("allocation.executor_allocation_ratio must be in (0, 1], got {0}")]
    BadRatio(f64),
    #[error("allocation.{0} must be at least 1 ms")]
    ZeroBacklogTimeout(&'static str),
    #[error("task #{index} has an empty id")]
    EmptyTaskId { index: usize },
    #[error("task id {id:?} {why}")]
    BadTaskId { id: String, why: &'static str },
    #[error("task id `{0}` appears more than once")]
    DuplicateTaskId(String),
    #[error("task `{0}` has an empty command")]
    EmptyCommand(String),
    #[error("task `{0}` asks for 0 cpus")]
    ZeroCpus(String),
    #[error("task `{task}` asks for {cpus} cpus but executors have {cores} cores")]
    CpusAboveCores { task: String, cpus: u32, cores: u32 },
    #[error("task `{0}` names an empty preferred host or rack")]
    EmptyPreference(String),
    #[error("{field} is {value} ms; a timeout must be at least 1 ms and at most {MAX_TIMEOUT_MS} ms (one week)")]
    BadTaskTimeout { field: String, value: u64 },
    #[error("kinds.{kind}: {error}")]
    Kind { kind: String, error: Box<JobError> },
    #[error("kind name {0:?} is not 1-32 letters, digits, `-` or `_` (or is `default`, the name of `executor`)")]
    BadKindName(String),
    #[error("task `{task}` names executor kind {kind:?}, which is not in the job's `kinds`")]
    UnknownKind { task: String, kind: String },
    #[error("executor resource {0:?} is not NAME with a count of at least 1")]
    BadResource(String),
}

/// Whether `name` may name an executor kind: it goes into file names and environment
/// values, so a short plain word.
pub fn valid_kind_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name != crate::spec::DEFAULT_KIND
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl JobExecutors {
    /// The checks of one kind's executors (the error names `executor.*`; a further kind's
    /// is wrapped in [`JobError::Kind`]).
    fn validate(&self) -> Result<(), JobError> {
        let e = self;
        if e.cores == 0 {
            return Err(JobError::ZeroCores);
        }
        if e.cores > MAX_CORES {
            return Err(JobError::TooManyCores(e.cores));
        }
        if e.memory_mb == 0 {
            return Err(JobError::ZeroMemory);
        }
        if e.max_executors == 0 {
            return Err(JobError::ZeroMaxExecutors);
        }
        if e.min_executors > e.max_executors {
            return Err(JobError::MinAboveMax {
                min: e.min_executors,
                max: e.max_executors,
            });
        }
        if let Some(initial) = e.initial_executors {
            if initial < e.min_executors || initial > e.max_executors {
                return Err(JobError::InitialOutOfRange {
                    initial,
                    min: e.min_executors,
                    max: e.max_executors,
                });
            }
        }
        if e.idle_timeout_ms > MAX_TIMEOUT_MS {
            return Err(JobError::TimeoutTooLong {
                field: "executor.idle_timeout_ms",
                value: e.idle_timeout_ms,
            });
        }
        for (name, &count) in &e.resources {
            if name.is_empty() || count < 1 || matches!(name.as_str(), "memory-mb" | "vcores") {
                return Err(JobError::BadResource(name.clone()));
            }
        }
        Ok(())
    }
}

/// Longest task id: executors name output files `task-<id>.<attempt>.stdout`, and a file
/// name has at most 255 bytes.
pub const MAX_TASK_ID_BYTES: usize = 200;

/// A task id must make a file name in the executor's log dir.
fn check_task_id(id: &str) -> Result<(), JobError> {
    let bad = |why| {
        Err(JobError::BadTaskId {
            id: id.to_string(),
            why,
        })
    };
    if id.len() > MAX_TASK_ID_BYTES {
        return bad("is longer than 200 bytes");
    }
    if id.contains('/') {
        return bad("contains `/` (task ids name files in the executor's log dir)");
    }
    if id.chars().any(char::is_control) {
        return bad("contains a control character");
    }
    Ok(())
}

impl Job {
    /// Parse and validate a job file.
    pub fn from_json(text: &str) -> Result<Job, JobError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let job: Job = serde_path_to_error::deserialize(de).map_err(|e| JobError::Parse {
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })?;
        job.validate()?;
        Ok(job)
    }

    /// Check everything serde cannot: ranges, uniqueness, fit.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.name.trim().is_empty() {
            return Err(JobError::EmptyName);
        }
        let e = &self.executor;
        e.validate()?;
        for (name, k) in &self.kinds {
            if !valid_kind_name(name) {
                return Err(JobError::BadKindName(name.clone()));
            }
            k.validate().map_err(|error| JobError::Kind {
                kind: name.clone(),
                error: Box::new(error),
            })?;
        }
        if self.task_retries == 0 {
            return Err(JobError::ZeroTaskRetries);
        }
        let ratio = self.allocation.executor_allocation_ratio;
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(JobError::BadRatio(ratio));
        }
        if self.allocation.backlog_timeout_ms == 0 {
            return Err(JobError::ZeroBacklogTimeout("backlog_timeout_ms"));
        }
        if self.allocation.sustained_backlog_timeout_ms == 0 {
            return Err(JobError::ZeroBacklogTimeout("sustained_backlog_timeout_ms"));
        }
        for (field, value) in self.timeouts() {
            if value > MAX_TIMEOUT_MS {
                return Err(JobError::TimeoutTooLong { field, value });
            }
        }
        let task_timeouts = self.tasks.iter().filter_map(|t| {
            t.timeout_ms
                .map(|v| (format!("task `{}` timeout_ms", t.id), v))
        });
        for (field, value) in self
            .timeout_ms
            .map(|v| ("timeout_ms".to_string(), v))
            .into_iter()
            .chain(task_timeouts)
        {
            if value == 0 || value > MAX_TIMEOUT_MS {
                return Err(JobError::BadTaskTimeout { field, value });
            }
        }
        if let Some(inputs) = &self.inputs {
            inputs.validate()?;
            if inputs.cpus > e.cores {
                return Err(JobError::CpusAboveCores {
                    task: format!("{}-*", inputs.id_prefix),
                    cpus: inputs.cpus,
                    cores: e.cores,
                });
            }
        } else if self.tasks.is_empty() {
            return Err(JobError::NoTasks);
        }
        let mut seen = HashSet::new();
        for (index, t) in self.tasks.iter().enumerate() {
            self.check_task(index, t, &mut seen)?;
        }
        Ok(())
    }

    /// The checks of task `index`; `seen`: the ids of the tasks before it.
    fn check_task<'a>(
        &self,
        index: usize,
        t: &'a TaskSpec,
        seen: &mut HashSet<&'a str>,
    ) -> Result<(), JobError> {
        if t.id.is_empty() {
            return Err(JobError::EmptyTaskId { index });
        }
        check_task_id(&t.id)?;
        if !seen.insert(t.id.as_str()) {
            return Err(JobError::DuplicateTaskId(t.id.clone()));
        }
        if t.command.trim().is_empty() {
            return Err(JobError::EmptyCommand(t.id.clone()));
        }
        if t.cpus == 0 {
            return Err(JobError::ZeroCpus(t.id.clone()));
        }
        let cores = match &t.kind {
            None => self.executor.cores,
            Some(kind) => match self.kinds.get(kind) {
                Some(k) => k.cores,
                None => {
                    return Err(JobError::UnknownKind {
                        task: t.id.clone(),
                        kind: kind.clone(),
                    })
                }
            },
        };
        if t.cpus > cores {
            return Err(JobError::CpusAboveCores {
                task: t.id.clone(),
                cpus: t.cpus,
                cores,
            });
        }
        if t.preferred_hosts
            .iter()
            .chain(&t.preferred_racks)
            .any(|s| s.is_empty())
        {
            return Err(JobError::EmptyPreference(t.id.clone()));
        }
        Ok(())
    }

    /// Every timeout and wait of the job, by field path.
    fn timeouts(&self) -> [(&'static str, u64); 5] {
        [
            ("executor.idle_timeout_ms", self.executor.idle_timeout_ms),
            ("locality_wait_ms.node", self.locality_wait_ms.node),
            ("locality_wait_ms.rack", self.locality_wait_ms.rack),
            (
                "allocation.backlog_timeout_ms",
                self.allocation.backlog_timeout_ms,
            ),
            (
                "allocation.sustained_backlog_timeout_ms",
                self.allocation.sustained_backlog_timeout_ms,
            ),
        ]
    }

    /// The time limit of each attempt of `task`: its own, else the job's.
    pub fn task_timeout_ms(&self, task: &TaskSpec) -> Option<u64> {
        task.timeout_ms.or(self.timeout_ms)
    }

    /// Tasks one executor runs at once: cores over the largest task's cpus, at least 1.
    pub fn tasks_per_executor(&self) -> u32 {
        let cpus = self.tasks.iter().map(|t| t.cpus).max().unwrap_or(1).max(1);
        (self.executor.cores / cpus).max(1)
    }

    /// The part of the job one executor kind runs (`None`: the default kind's): that
    /// kind's executors, its tasks only, no further kinds. What each kind's driver runs
    /// (`core::am::job_run`). `None` when the kind has no task.
    pub fn kind_job(&self, kind: Option<&str>) -> Option<Job> {
        let executor = match kind {
            None => self.executor.clone(),
            Some(k) => self.kinds.get(k)?.clone(),
        };
        let tasks: Vec<TaskSpec> = self
            .tasks
            .iter()
            .filter(|t| t.kind.as_deref() == kind)
            // Within its part, a task runs on the part's one kind of executor.
            .map(|t| TaskSpec {
                kind: None,
                ..t.clone()
            })
            .collect();
        if tasks.is_empty() {
            return None;
        }
        Some(Job {
            executor,
            tasks,
            kinds: BTreeMap::new(),
            inputs: None,
            ..self.clone_settings()
        })
    }

    /// Everything but the executors, tasks, inputs and kinds.
    fn clone_settings(&self) -> Job {
        Job {
            name: self.name.clone(),
            executor: self.executor.clone(),
            task_retries: self.task_retries,
            locality_wait_ms: self.locality_wait_ms,
            allocation: self.allocation,
            timeout_ms: self.timeout_ms,
            tasks: Vec::new(),
            inputs: None,
            kinds: BTreeMap::new(),
        }
    }

    /// The target before any backlog: `initial_executors`, else `min_executors`.
    pub fn initial_executors(&self) -> u32 {
        self.executor
            .initial_executors
            .unwrap_or(self.executor.min_executors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"name": "sample",
        "executor": {"cores": 2, "memory_mb": 256, "min_executors": 0, "max_executors": 6, "idle_timeout_ms": 5000},
        "task_retries": 3,
        "locality_wait_ms": {"node": 3000, "rack": 3000},
        "allocation": {"backlog_timeout_ms": 1000, "sustained_backlog_timeout_ms": 1000, "executor_allocation_ratio": 1.0},
        "tasks": [{"id": "t1", "command": "echo hi", "preferred_hosts": ["nm1","nm2"], "preferred_racks": [], "cpus": 1}]}"#;

    fn minimal(tasks: &str) -> String {
        format!(r#"{{"name":"j","executor":{{"cores":2,"memory_mb":256}},"tasks":[{tasks}]}}"#)
    }

    #[test]
    fn sample_parses() {
        let job = Job::from_json(SAMPLE).unwrap();
        assert_eq!(job.task_retries, 3);
        assert_eq!(job.executor.max_executors, 6);
        assert_eq!(job.tasks[0].preferred_hosts, vec!["nm1", "nm2"]);
        assert_eq!(job.tasks_per_executor(), 2);
    }

    #[test]
    fn defaults_are_sparks() {
        let job = Job::from_json(&minimal(r#"{"id":"a","command":"true"}"#)).unwrap();
        assert_eq!(job.task_retries, 4);
        assert_eq!(
            job.locality_wait_ms,
            LocalityWait {
                node: 3000,
                rack: 3000
            }
        );
        assert_eq!(job.executor.idle_timeout_ms, 60_000);
        assert_eq!(job.executor.min_executors, 0);
        assert_eq!(job.initial_executors(), 0);
        assert_eq!(job.allocation.backlog_timeout_ms, 1000);
        assert_eq!(job.allocation.sustained_backlog_timeout_ms, 1000);
        assert_eq!(job.allocation.executor_allocation_ratio, 1.0);
        assert_eq!(job.tasks[0].cpus, 1);
        assert!(job.tasks[0].has_no_preference());
    }

    #[test]
    fn unknown_field_is_rejected_with_its_path() {
        let text = minimal(r#"{"id":"a","command":"true","cpu":1}"#);
        match Job::from_json(&text) {
            Err(JobError::Parse { path, message }) => {
                assert_eq!(path, "tasks[0].cpu");
                assert!(message.contains("cpu"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let text = minimal(r#"{"id":"a","command":"x"},{"id":"a","command":"y"}"#);
        assert!(matches!(Job::from_json(&text), Err(JobError::DuplicateTaskId(id)) if id == "a"));
    }

    #[test]
    fn bad_tasks_are_named() {
        let cases = [
            (
                r#"{"id":"a","command":"  "}"#,
                "task `a` has an empty command",
            ),
            (
                r#"{"id":"b","command":"x","cpus":0}"#,
                "task `b` asks for 0 cpus",
            ),
            (
                r#"{"id":"c","command":"x","cpus":3}"#,
                "task `c` asks for 3 cpus but executors have 2 cores",
            ),
            (r#"{"id":"","command":"x"}"#, "task #0 has an empty id"),
            (
                r#"{"id":"d","command":"x","preferred_hosts":[""]}"#,
                "task `d` names an empty preferred host or rack",
            ),
            (
                r#"{"id":"../e","command":"x"}"#,
                r#"task id "../e" contains `/` (task ids name files in the executor's log dir)"#,
            ),
            (
                r#"{"id":"f\ng","command":"x"}"#,
                r#"task id "f\ng" contains a control character"#,
            ),
        ];
        for (task, want) in cases {
            let err = Job::from_json(&minimal(task)).unwrap_err();
            assert_eq!(err.to_string(), want);
        }
        assert!(matches!(
            Job::from_json(&minimal("")),
            Err(JobError::NoTasks)
        ));
        let long = "x".repeat(MAX_TASK_ID_BYTES + 1);
        let err = Job::from_json(&minimal(&format!(r#"{{"id":"{long}","command":"x"}}"#)));
        assert!(
            matches!(&err, Err(JobError::BadTaskId { why, .. }) if why.contains("longer")),
            "{err:?}"
        );
        let fits = "x".repeat(MAX_TASK_ID_BYTES);
        assert!(Job::from_json(&minimal(&format!(r#"{{"id":"{fits}","command":"x"}}"#))).is_ok());
        // Dots, spaces and non-ASCII are fine in a file name.
        assert!(Job::from_json(&minimal(r#"{"id":"a.1 é","command":"x"}"#)).is_ok());
    }

    #[test]
    fn bad_executor_and_allocation_settings_are_named() {
        let mut job = Job::from_json(SAMPLE).unwrap();
        job.executor.min_executors = 7;
        assert!(matches!(
            job.validate(),
            Err(JobError::MinAboveMax { min: 7, max: 6 })
        ));
        job.executor.min_executors = 0;
        job.executor.initial_executors = Some(9);
        assert!(matches!(
            job.validate(),
            Err(JobError::InitialOutOfRange { .. })
        ));
        job.executor.initial_executors = None;
        job.allocation.executor_allocation_ratio = 0.0;
        assert!(matches!(job.validate(), Err(JobError::BadRatio(_))));
        job.allocation.executor_allocation_ratio = 1.5;
        assert!(matches!(job.validate(), Err(JobError::BadRatio(_))));
        job.allocation.executor_allocation_ratio = f64::NAN;
        assert!(matches!(job.validate(), Err(JobError::BadRatio(_))));
        job.allocation.executor_allocation_ratio = 0.5;
        job.task_retries = 0;
        assert!(matches!(job.validate(), Err(JobError::ZeroTaskRetries)));
        job.task_retries = 1;
        job.executor.cores = 0;
        assert!(matches!(job.validate(), Err(JobError::ZeroCores)));
        job.executor.cores = 2;
        job.allocation.backlog_timeout_ms = 0;
        assert!(matches!(
            job.validate(),
            Err(JobError::ZeroBacklogTimeout(_))
        ));
    }

    #[test]
    fn timeouts_above_a_week_are_named() {
        let fields = [
            r#""executor":{"cores":2,"memory_mb":1,"idle_timeout_ms":V}"#,
            r#""executor":{"cores":2,"memory_mb":1},"locality_wait_ms":{"node":V}"#,
            r#""executor":{"cores":2,"memory_mb":1},"locality_wait_ms":{"rack":V}"#,
            r#""executor":{"cores":2,"memory_mb":1},"allocation":{"backlog_timeout_ms":V}"#,
            r#""executor":{"cores":2,"memory_mb":1},"allocation":{"sustained_backlog_timeout_ms":V}"#,
        ];
        let names = [
            "executor.idle_timeout_ms",
            "locality_wait_ms.node",
            "locality_wait_ms.rack",
            "allocation.backlog_timeout_ms",
            "allocation.sustained_backlog_timeout_ms",
        ];
        for (f, name) in fields.iter().zip(names) {
            let text = |v: u64| {
                let f = f.replace('V', &v.to_string());
                format!(r#"{{"name":"j",{f},"tasks":[{{"id":"a","command":"x"}}]}}"#)
            };
            assert!(Job::from_json(&text(MAX_TIMEOUT_MS)).is_ok(), "{name}");
            for v in [MAX_TIMEOUT_MS + 1, u64::MAX - 1, u64::MAX] {
                let err = Job::from_json(&text(v)).unwrap_err();
                assert_eq!(
                    err.to_string(),
                    format!("{name} is {v} ms, above the limit of 604800000 ms (one week)")
                );
            }
        }
    }

    #[test]
    fn task_timeouts_must_be_one_ms_to_a_week() {
        let text = |job: &str, task: &str| {
            format!(
                r#"{{"name":"j","executor":{{"cores":1,"memory_mb":1}}{job},
                "tasks":[{{"id":"a","command":"x"{task}}}]}}"#
            )
        };
        let ok = Job::from_json(&text(
            r#","timeout_ms":1"#,
            &format!(r#","timeout_ms":{MAX_TIMEOUT_MS}"#),
        ));
        assert_eq!(ok.unwrap().timeout_ms, Some(1));
        for v in [0, MAX_TIMEOUT_MS + 1, u64::MAX] {
            let err = Job::from_json(&text(&format!(r#","timeout_ms":{v}"#), "")).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("timeout_ms is {v} ms; a timeout must be at least 1 ms and at most 604800000 ms (one week)")
            );
            let err = Job::from_json(&text("", &format!(r#","timeout_ms":{v}"#))).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("task `a` timeout_ms is {v} ms;")),
                "{err}"
            );
        }
    }

    #[test]
    fn cores_must_fit_yarns_int32() {
        let text = |cores: u32| {
            format!(
                r#"{{"name":"j","executor":{{"cores":{cores},"memory_mb":1}},
                "tasks":[{{"id":"a","command":"x","cpus":{cores}}}]}}"#
            )
        };
        let job = Job::from_json(&text(MAX_CORES)).unwrap();
        assert_eq!(job.tasks_per_executor(), 1);
        for cores in [MAX_CORES + 1, u32::MAX] {
            assert_eq!(
                Job::from_json(&text(cores)).unwrap_err().to_string(),
                format!("executor.cores is {cores}, above YARN's limit of 2147483647")
            );
        }
    }

    #[test]
    fn tasks_per_executor_uses_the_largest_task() {
        let text = r#"{"name":"j","executor":{"cores":5,"memory_mb":1},
            "tasks":[{"id":"a","command":"x","cpus":1},{"id":"b","command":"x","cpus":2}]}"#;
        assert_eq!(Job::from_json(text).unwrap().tasks_per_executor(), 2);
    }

    #[test]
    fn kinds_are_checked_like_the_executor_and_tasks_must_name_one_that_exists() {
        let job = |kinds: &str, task: &str| {
            Job::from_json(&format!(
                r#"{{"name":"j","executor":{{"cores":1,"memory_mb":256}},"kinds":{kinds},
                    "tasks":[{{"id":"a","command":"x"}},{task}]}}"#
            ))
        };
        let accel = r#"{"accel":{"cores":2,"memory_mb":512,"resources":{"yarn.io/gpu":1}}}"#;
        let j = job(accel, r#"{"id":"b","command":"x","kind":"accel","cpus":2}"#).unwrap();
        // Each kind's part: its own executors and only its tasks, which name no kind there.
        let part = j.kind_job(Some("accel")).unwrap();
        assert_eq!((part.executor.cores, part.tasks.len()), (2, 1));
        assert_eq!(part.tasks[0].kind, None);
        assert!(part.kinds.is_empty());
        assert_eq!(j.kind_job(None).unwrap().tasks[0].id, "a");
        assert!(j.kind_job(Some("other")).is_none());
        let err = |kinds: &str, task: &str| job(kinds, task).unwrap_err().to_string();
        assert_eq!(
            err(accel, r#"{"id":"b","command":"x","kind":"gpu"}"#),
            "task `b` names executor kind \"gpu\", which is not in the job's `kinds`"
        );
        // A task's cpus are checked against its own kind's cores.
        assert!(
            err(accel, r#"{"id":"b","command":"x","kind":"accel","cpus":3}"#)
                .contains("asks for 3 cpus but executors have 2 cores")
        );
        assert!(job(accel, r#"{"id":"b","command":"x","cpus":2}"#).is_err());
        assert_eq!(
            err(
                r#"{"accel":{"cores":0,"memory_mb":1}}"#,
                r#"{"id":"b","command":"x"}"#
            ),
            "kinds.accel: executor.cores must be at least 1"
        );
        for bad in ["default", "a b", "", "x/y"] {
            let kinds = format!(r#"{{"{bad}":{{"cores":1,"memory_mb":1}}}}"#);
            assert!(
                err(&kinds, r#"{"id":"b","command":"x"}"#).contains("is not 1-32 letters"),
                "{bad}"
            );
        }
        assert!(err(
            r#"{"accel":{"cores":1,"memory_mb":1,"resources":{"yarn.io/gpu":0}}}"#,
            r#"{"id":"b","command":"x"}"#
        )
        .contains("yarn.io/gpu"));
    }
}
