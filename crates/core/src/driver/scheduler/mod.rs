//! Tasks onto free executor slots, with Spark-style delay scheduling.
//!
//! # Levels
//! A launch is NODE_LOCAL when the task prefers the executor's host, NO_PREF when the task has
//! no preference at all, RACK_LOCAL when the executor's rack is one of the task's racks (its
//! `preferred_racks` plus the racks of its preferred hosts, looked up in the host->rack map),
//! and ANY otherwise. The job, like one Spark task set, has one *allowed level* on the ladder
//! NODE_LOCAL -> RACK_LOCAL -> ANY. NO_PREF is not on the ladder: tasks without preference
//! are always launchable (Spark offers them outside the delay too).
//!
//! # One offer pass (`offer`)
//! 1. Advance the allowed level (`allowed_level`). With no live executor at all, nothing
//!    moves and the clock restarts at `now` (no offer was declined; this keeps a job from
//!    sliding to ANY before its first executor registers). Otherwise, while it is below ANY:
//!    - if no pending task could run at that level on any live executor (NODE: no pending task
//!      prefers a host that has an executor; RACK: no pending task's racks hold one), move on
//!      at once and restart the clock (waiting could not help; Spark's SPARK-4939 shortcut);
//!    - else if `now - since >= wait(level)`, move on and set `since += wait(level)` (so a
//!      long gap can cross several levels in one call);
//!    - else stop: this is the allowed level.
//! 2. TaskLaunch level by level, NODE_LOCAL, NO_PREF, RACK_LOCAL, ANY, skipping levels looser
//!    than allowed (NO_PREF never skipped). Within a level, go round the executors with free
//!    cpus (by id) giving each at most one task per round, until a round launches nothing; so
//!    every executor gets its local work before any executor takes a non-local task. Tasks
//!    are taken in job order.
//! 3. Reset rule (Spark 3.1+'s, SPARK-18886, not the legacy reset-on-every-launch): a pass
//!    *rejected* an offer if, afterwards, some executor still has free cpus that some pending
//!    task could use, i.e. a launch was held back by the delay. If the pass launched something
//!    and rejected nothing, the level returns to the most local level it launched at (NO_PREF
//!    launches only restart the clock) and `since = now`. A pass that rejected an offer leaves
//!    level and clock alone, so the wait keeps running even while launches at the current
//!    level continue elsewhere. (With the legacy rule, a busy host's steady stream of
//!    NODE_LOCAL launches would keep resetting the clock and starve tasks whose hosts have no
//!    executors for as long as that stream lasted.)
//!
//! # Failures
//! A task that exits non-zero is re-queued and excluded from the executor it failed on, unless
//! every live executor is excluded for it (then exclusion is ignored rather than stalling).
//! After `max_failures` failures the job fails. An executor that goes away re-queues its
//! running tasks without counting a failure: losing a node is not the task's fault.
//!
//! Costs: pending tasks are indexed by preferred host, so NODE_LOCAL and NO_PREF picks and
//! the demand do not scan; RACK_LOCAL and ANY picks, and the check for refused offers, scan
//! the pending tasks (stopping at the first fit). Executors are never walked as a whole on a
//! round: the scheduler keeps the usable executors with free cpus (what a pass offers), the
//! count of running attempts, the usable executors per host and per rack (the level checks),
//! and the executors whose idleness may have changed since the allocation last looked
//! ([`Scheduler::take_idle_changes`]), so a round costs what changed, not the pool's size.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::job::{LocalityWait, TaskSpec};
use crate::topology::SharedTopology;

/// The exit code a timed-out attempt is recorded with: coreutils `timeout`'s.
pub const TIMED_OUT_EXIT_CODE: i32 = 124;

/// The id the AM knows an executor by (one type for the whole AM).
pub use crate::ids::ExecutorId;

pub use yarn_am_wire::placement::TaskLocality;

/// One task started on one executor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskLaunch {
    pub task_id: String,
    /// 0 for the first launch, counting every launch (failed or lost) before it.
    pub attempt: u32,
    pub executor_id: ExecutorId,
    pub locality: TaskLocality,
}

/// What a finished attempt meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskOutcome {
    Succeeded,
    /// Failed, queued again.
    WillRetry,
    /// Failed for the last allowed time: the job has failed.
    JobFailed,
}

/// A finished attempt, with where and how it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub task_id: String,
    /// The task's place in the job's list (what the driver keeps its per-task tables by).
    pub task: usize,
    pub attempt: u32,
    pub executor_id: ExecutorId,
    pub host: String,
    pub locality: TaskLocality,
    /// Launches so far, this one included.
    pub attempts: u32,
    pub outcome: TaskOutcome,
    /// Why the task's latest failed attempt failed (this one, if it failed).
    pub last_failure: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Pending,
    Running {
        attempt: u32,
        executor: ExecutorId,
        host: String,
        locality: TaskLocality,
    },
    Succeeded,
    Failed,
}

#[derive(Debug, Clone)]
struct Task {
    spec: TaskSpec,
    state: State,
    launches: u32,
    failures: u32,
    excluded: BTreeSet<ExecutorId>,
    /// Why the latest failed attempt failed.
    last_failure: Option<String>,
    /// When the running attempt was started (0 for one adopted from an earlier AM attempt,
    /// whose start this attempt does not know): what losing it would cost.
    started_ms: u64,
}

#[derive(Debug, Clone)]
struct Executor {
    host: String,
    rack: String,
    free: u32,
    running: BTreeSet<usize>,
    /// False once the driver asked for it to be killed: offered nothing more.
    usable: bool,
}

/// The task scheduler's whole state.
#[derive(Debug, Clone)]
pub struct Scheduler {
    tasks: Vec<Task>,
    index: HashMap<String, usize>,
    pending: BTreeSet<usize>,
    /// Pending tasks by preferred host, and those without any preference: the NODE_LOCAL and
    /// NO_PREF passes, the NODE level check and the demand read these instead of scanning.
    pending_by_host: HashMap<String, BTreeSet<usize>>,
    pending_no_pref: BTreeSet<usize>,
    /// Pending tasks naming at least one host.
    pending_with_hosts: usize,
    executors: BTreeMap<ExecutorId, Executor>,
    /// Usable executors with free cpus: the ones a pass offers, in id order.
    offerable: BTreeSet<ExecutorId>,
    /// Attempts running, over every executor.
    running: usize,
    /// Usable executors, in all, per host and per rack.
    usable: usize,
    usable_hosts: HashMap<String, usize>,
    usable_racks: HashMap<String, usize>,
    /// Executors whose "usable and running nothing" may have changed since
    /// [`Self::take_idle_changes`] was last called.
    idle_changed: BTreeSet<ExecutorId>,
    /// The AM's one topology (a handle; see [`crate::topology`]).
    topology: SharedTopology,
    waits: LocalityWait,
    max_failures: u32,
    level: TaskLocality,
    /// When the wait at `level` started; set by the first pass.
    since: Option<u64>,
    succeeded: usize,
    failure: Option<String>,
}

impl Scheduler {
    pub fn new(
        tasks: Vec<TaskSpec>,
        waits: LocalityWait,
        max_failures: u32,
        topology: impl Into<SharedTopology>,
    ) -> Scheduler {
        let index = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        let n = tasks.len();
        let mut s = Scheduler {
            tasks: tasks
                .into_iter()
                .map(|spec| Task {
                    spec,
                    state: State::Pending,
                    launches: 0,
                    failures: 0,
                    excluded: BTreeSet::new(),
                    last_failure: None,
                    started_ms: 0,
                })
                .collect(),
            index,
            pending: BTreeSet::new(),
            pending_by_host: HashMap::new(),
            pending_no_pref: BTreeSet::new(),
            pending_with_hosts: 0,
            executors: BTreeMap::new(),
            offerable: BTreeSet::new(),
            running: 0,
            usable: 0,
            usable_hosts: HashMap::new(),
            usable_racks: HashMap::new(),
            idle_changed: BTreeSet::new(),
            topology: topology.into(),
            waits,
            max_failures: max_failures.max(1),
            level: TaskLocality::NodeLocal,
            since: None,
            succeeded: 0,
            failure: None,
        };
        for i in 0..n {
            s.enqueue(i);
        }
        s
    }

    fn enqueue(&mut self, i: usize) {
        if !self.pending.insert(i) {
            return;
        }
        let spec = &self.tasks[i].spec;
        if spec.has_no_preference() {
            self.pending_no_pref.insert(i);
        }
        if !spec.preferred_hosts.is_empty() {
            self.pending_with_hosts += 1;
        }
        for h in &spec.preferred_hosts {
            self.pending_by_host.entry(h.clone()).or_default().insert(i);
        }
    }

    fn dequeue(&mut self, i: usize) {
        if !self.pending.remove(&i) {
            return;
        }
        let spec = &self.tasks[i].spec;
        self.pending_no_pref.remove(&i);
        if !spec.preferred_hosts.is_empty() {
            self.pending_with_hosts -= 1;
        }
        for h in &spec.preferred_hosts {
            if let Some(set) = self.pending_by_host.get_mut(h) {
                set.remove(&i);
                if set.is_empty() {
                    self.pending_by_host.remove(h);
                }
            }
        }
    }

    /// A new executor; its host's rack is remembered for tasks preferring that host.
    /// A known id is ignored (a duplicate registration must not double its cpus).
    pub fn add_executor(&mut self, id: ExecutorId, host: String, rack: String, cores: u32) {
        if self.executors.contains_key(&id) {
            return;
        }
        self.topology.learn(&host, &rack);
        self.count_usable(&host, &rack, true);
        self.executors.insert(
            id,
            Executor {
                host,
                rack,
                free: cores,
                running: BTreeSet::new(),
                usable: true,
            },
        );
        self.touched(id);
    }

    /// Counts one usable executor on `host` and `rack` in (`true`) or out.
    fn count_usable(&mut self, host: &str, rack: &str, add: bool) {
        fn bump(map: &mut HashMap<String, usize>, key: &str, add: bool) {
            if add {
                *map.entry(key.to_string()).or_default() += 1;
            } else if let Some(n) = map.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
        if add {
            self.usable += 1;
        } else {
            self.usable -= 1;
        }
        bump(&mut self.usable_hosts, host, add);
        bump(&mut self.usable_racks, rack, add);
    }

    /// An executor's cpus, running set or usability changed (or it went): the offerable
    /// set follows, and the allocation will look at its idleness again.
    fn touched(&mut self, id: ExecutorId) {
        match self.executors.get(&id) {
            Some(e) if e.usable && e.free > 0 => {
                if !self.offerable.contains(&id) {
                    self.offerable.insert(id);
                }
            }
            _ => {
                self.offerable.remove(&id);
            }
        }
        if !self.idle_changed.contains(&id) {
            self.idle_changed.insert(id);
        }
    }

    /// The executor is gone. Its running tasks go back to pending, no failure counted.
    /// Returns their ids.
    pub fn remove_executor(&mut self, id: ExecutorId) -> Vec<String> {
        let Some(exec) = self.executors.remove(&id) else {
            return Vec::new();
        };
        if exec.usable {
            self.count_usable(&exec.host, &exec.rack, false);
        }
        self.running -= exec.running.len();
        self.touched(id);
        let mut requeued = Vec::new();
        for i in exec.running {
            let task = &mut self.tasks[i];
            task.state = State::Pending;
            requeued.push(task.spec.id.clone());
            self.enqueue(i);
        }
        requeued
    }

    /// What losing executor `id` would cost at `now`: its running attempts and how long
    /// they have run, summed (preemption gives back the cheapest first). `None`: unknown.
    pub fn work_at_stake(&self, id: ExecutorId, now: u64) -> Option<(usize, u64)> {
        let e = self.executors.get(&id)?;
        let ms = e
            .running
            .iter()
            .map(|&i| now.saturating_sub(self.tasks[i].started_ms))
            .fold(0u64, u64::saturating_add);
        Some((e.running.len(), ms))
    }

    /// Offer this executor nothing more (its kill has been asked for).
    pub fn mark_killing(&mut self, id: ExecutorId) {
        let Some(e) = self.executors.get_mut(&id) else {
            return;
        };
        if !e.usable {
            return;
        }
        e.usable = false;
        let (host, rack) = (e.host.clone(), e.rack.clone());
        self.count_usable(&host, &rack, false);
        self.touched(id);
    }
}

mod offers;
mod outcomes;
mod queries;

#[cfg(test)]
mod tests;
