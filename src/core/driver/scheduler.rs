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
use crate::core::topology::SharedTopology;

/// The exit code a timed-out attempt is recorded with: coreutils `timeout`'s.
pub const TIMED_OUT_EXIT_CODE: i32 = 124;

/// The id the AM knows an executor by (one type for the whole AM).
pub use crate::core::ids::ExecutorId;

pub use crate::protocol::placement::TaskLocality;

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
    /// The AM's one topology (a handle; see [`crate::core::topology`]).
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

    /// An attempt ended. `None` when it is not the attempt we think is running there (a late
    /// report for a task already re-queued after its executor was lost, or a duplicate).
    pub fn task_finished(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
    ) -> Option<Finished> {
        let what = || format!("exited {exit_code}");
        self.end_attempt(task_id, attempt, executor_id, exit_code, what)
    }

    /// The running attempt passed its timeout: it counts as failed with exit code
    /// [`TIMED_OUT_EXIT_CODE`] and a reason naming the timeout, and is retried like any
    /// failure (the caller has the executor kill it). `None` as for [`Self::task_finished`].
    pub fn task_timed_out(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        timeout_ms: u64,
    ) -> Option<Finished> {
        let what = || format!("timed out after {timeout_ms} ms (killed)");
        self.end_attempt(task_id, attempt, executor_id, TIMED_OUT_EXIT_CODE, what)
    }

    /// `what`: how the attempt ended, for the failure reason ("exited 1"); only a failure
    /// asks for it.
    fn end_attempt(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
        what: impl FnOnce() -> String,
    ) -> Option<Finished> {
        let i = *self.index.get(task_id)?;
        let task = &mut self.tasks[i];
        let State::Running {
            attempt: a,
            executor,
            host,
            locality,
        } = &task.state
        else {
            return None;
        };
        if *a != attempt || *executor != executor_id {
            return None;
        }
        let (host, locality) = (host.clone(), *locality);
        let mut requeue = false;
        let mut freed = false;
        if let Some(e) = self.executors.get_mut(&executor_id) {
            // Saturating: a task returns what it took, so this stays within the cores.
            e.free = e.free.saturating_add(task.spec.cpus);
            if e.running.remove(&i) {
                self.running -= 1;
            }
            freed = true;
        }
        let outcome = if exit_code == 0 {
            task.state = State::Succeeded;
            self.succeeded += 1;
            TaskOutcome::Succeeded
        } else {
            task.failures += 1;
            task.excluded.insert(executor_id);
            let what = what();
            task.last_failure = Some(format!(
                "attempt {attempt} {what} on executor {executor_id} ({host})"
            ));
            if task.failures >= self.max_failures {
                task.state = State::Failed;
                if self.failure.is_none() {
                    self.failure = Some(format!(
                        "task `{task_id}` failed {} times; last attempt {attempt} {what} on \
                         executor {executor_id} ({host})",
                        task.failures
                    ));
                }
                TaskOutcome::JobFailed
            } else {
                task.state = State::Pending;
                requeue = true;
                TaskOutcome::WillRetry
            }
        };
        let attempts = task.launches;
        let last_failure = task.last_failure.clone();
        if freed {
            self.touched(executor_id);
        }
        if requeue {
            self.enqueue(i);
        }
        Some(Finished {
            task_id: task_id.to_string(),
            task: i,
            attempt,
            executor_id,
            host,
            locality,
            attempts,
            outcome,
            last_failure,
        })
    }

    /// An attempt an earlier AM attempt started is still running on `executor_id` (an
    /// executor the new attempt adopted): it runs on there and its result will count,
    /// instead of the task being queued again. `false` for an unknown task, an unknown
    /// executor, or a task no longer pending (already done, or running elsewhere).
    pub fn adopt_running(&mut self, task_id: &str, attempt: u32, executor_id: ExecutorId) -> bool {
        let Some(&i) = self.index.get(task_id) else {
            return false;
        };
        let Some(e) = self.executors.get_mut(&executor_id) else {
            return false;
        };
        let task = &mut self.tasks[i];
        if task.state != State::Pending {
            return false;
        }
        e.free = e.free.saturating_sub(task.spec.cpus);
        if e.running.insert(i) {
            self.running += 1;
        }
        task.launches = task.launches.max(attempt + 1);
        task.state = State::Running {
            attempt,
            executor: executor_id,
            host: e.host.clone(),
            locality: TaskLocality::Any,
        };
        self.dequeue(i);
        self.touched(executor_id);
        true
    }

    /// Replays a launch an earlier AM attempt made: this task's later launches number past
    /// it, so no two attempts of a task share a number across AM attempts.
    pub fn restore_launch(&mut self, task_id: &str, attempt: u32) {
        if let Some(&i) = self.index.get(task_id) {
            let t = &mut self.tasks[i];
            t.launches = t.launches.max(attempt + 1);
        }
    }

    /// Replays a finished attempt from an earlier AM attempt's journal: a success takes the
    /// task out of the queue for good, a failure counts against its retries (and may fail
    /// the job, as it would have then). `false` when it changes nothing (an unknown task, a
    /// task already over).
    pub fn restore_finished(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
    ) -> bool {
        let Some(&i) = self.index.get(task_id) else {
            return false;
        };
        self.restore_launch(task_id, attempt);
        let task = &mut self.tasks[i];
        if task.state != State::Pending {
            return false;
        }
        if exit_code == 0 {
            task.state = State::Succeeded;
            self.succeeded += 1;
            self.dequeue(i);
            return true;
        }
        task.excluded.insert(executor_id);
        task.failures += 1;
        if task.failures >= self.max_failures {
            task.state = State::Failed;
            if self.failure.is_none() {
                self.failure = Some(format!(
                    "task `{task_id}` failed {} times; last attempt {attempt} exited \
                     {exit_code} on executor {executor_id} (before the AM restarted)",
                    task.failures
                ));
            }
            self.dequeue(i);
        }
        true
    }

    /// One offer pass over every free slot (see the module doc for the exact rule).
    pub fn offer(&mut self, now: u64) -> Vec<TaskLaunch> {
        self.offer_by_index(now)
            .into_iter()
            .map(|(_, l)| l)
            .collect()
    }

    /// [`Self::offer`], each launch with its task's place in the job's list (what the
    /// driver keeps its per-task tables by), so the driver need not look the id up.
    pub fn offer_by_index(&mut self, now: u64) -> Vec<(usize, TaskLaunch)> {
        if self.pending.is_empty() || self.failure.is_some() {
            return Vec::new();
        }
        let allowed = self.allowed_level(now);
        let mut launches = Vec::new();
        for level in [
            TaskLocality::NodeLocal,
            TaskLocality::NoPref,
            TaskLocality::RackLocal,
            TaskLocality::Any,
        ] {
            if level != TaskLocality::NoPref && level > allowed {
                continue;
            }
            loop {
                // Nothing left this level could pick: no executor needs asking (a job's
                // tail has many free executors and a task or two to place).
                if self.nothing_to_pick(level) {
                    break;
                }
                let free: Vec<ExecutorId> = self.offerable.iter().cloned().collect();
                let mut launched = false;
                for id in free {
                    if self.nothing_to_pick(level) {
                        break;
                    }
                    if let Some(i) = self.pick(id, level) {
                        launches.push((i, self.launch(now, i, id)));
                        launched = true;
                    }
                }
                if !launched {
                    break;
                }
            }
        }
        if !launches.is_empty() && !self.rejected_an_offer() {
            let best = launches
                .iter()
                .map(|(_, l)| l.locality)
                .filter(|&l| l != TaskLocality::NoPref)
                .min();
            if let Some(best) = best {
                self.level = best;
            }
            self.since = Some(now);
        }
        launches
    }

    /// Step 1 of a pass: the loosest level a launch may have now.
    fn allowed_level(&mut self, now: u64) -> TaskLocality {
        if self.usable == 0 {
            // Nobody to offer to, so nobody is being turned away: hold the level and start
            // the clock afresh, rather than skipping every level for want of executors.
            self.since = Some(now);
            return self.level;
        }
        let mut since = *self.since.get_or_insert(now);
        loop {
            let wait = match self.level {
                TaskLocality::NodeLocal => self.waits.node,
                TaskLocality::RackLocal => self.waits.rack,
                _ => break,
            };
            let next = match self.level {
                TaskLocality::NodeLocal => TaskLocality::RackLocal,
                _ => TaskLocality::Any,
            };
            if !self.runnable_at(self.level) {
                self.level = next;
                since = now;
            } else if now.saturating_sub(since) >= wait {
                since += wait;
                self.level = next;
            } else {
                break;
            }
        }
        self.since = Some(since);
        self.level
    }

    /// Could some pending task run at `level` on some live executor, cpus aside?
    fn runnable_at(&self, level: TaskLocality) -> bool {
        match level {
            TaskLocality::NodeLocal => {
                // Whichever side is smaller is walked.
                if self.usable_hosts.len() <= self.pending_by_host.len() {
                    self.usable_hosts
                        .keys()
                        .any(|h| self.pending_by_host.contains_key(h))
                } else {
                    self.pending_by_host
                        .keys()
                        .any(|h| self.usable_hosts.contains_key(h))
                }
            }
            TaskLocality::RackLocal => self
                .pending_specs()
                .any(|t| self.usable_racks.keys().any(|r| self.in_rack(t, r))),
            _ => !self.pending.is_empty(),
        }
    }

    /// First pending task (job order) that fits the executor and matches `level` there.
    fn pick(&self, exec_id: ExecutorId, level: TaskLocality) -> Option<usize> {
        let exec = &self.executors[&exec_id];
        let fits = |i: &usize| {
            let task = &self.tasks[*i];
            task.spec.cpus <= exec.free && !self.excluded(task, exec_id)
        };
        match level {
            TaskLocality::NodeLocal => self
                .pending_by_host
                .get(&exec.host)?
                .iter()
                .copied()
                .find(fits),
            TaskLocality::NoPref => self.pending_no_pref.iter().copied().find(fits),
            TaskLocality::RackLocal => self
                .pending
                .iter()
                .copied()
                .find(|i| fits(i) && self.in_rack(&self.tasks[*i].spec, &exec.rack)),
            TaskLocality::Any => self.pending.iter().copied().find(fits),
        }
    }

    fn launch(&mut self, now: u64, i: usize, exec_id: ExecutorId) -> TaskLaunch {
        let locality = self.locality_of(&self.tasks[i].spec, exec_id);
        let exec = self.executors.get_mut(&exec_id).expect("offered executor");
        let task = &mut self.tasks[i];
        exec.free -= task.spec.cpus;
        if exec.running.insert(i) {
            self.running += 1;
        }
        let attempt = task.launches;
        task.launches += 1;
        task.started_ms = now;
        task.state = State::Running {
            attempt,
            executor: exec_id,
            host: exec.host.clone(),
            locality,
        };
        let launch = TaskLaunch {
            task_id: task.spec.id.clone(),
            attempt,
            executor_id: exec_id,
            locality,
        };
        self.dequeue(i);
        self.touched(exec_id);
        launch
    }

    /// The level a launch of `task` on this executor has, whatever pass it came from.
    fn locality_of(&self, task: &TaskSpec, exec_id: ExecutorId) -> TaskLocality {
        let exec = &self.executors[&exec_id];
        if task.preferred_hosts.contains(&exec.host) {
            TaskLocality::NodeLocal
        } else if task.has_no_preference() {
            TaskLocality::NoPref
        } else if self.in_rack(task, &exec.rack) {
            TaskLocality::RackLocal
        } else {
            TaskLocality::Any
        }
    }

    fn in_rack(&self, task: &TaskSpec, rack: &str) -> bool {
        if task.preferred_racks.iter().any(|r| r == rack) {
            return true;
        }
        let topology = self.topology.read();
        task.preferred_hosts
            .iter()
            .any(|h| topology.known_rack(h).is_some_and(|r| &**r == rack))
    }

    /// Excluded after a failure there, unless that would leave the task nowhere to go.
    fn excluded(&self, task: &Task, exec_id: ExecutorId) -> bool {
        task.excluded.contains(&exec_id)
            && self
                .executors
                .iter()
                .any(|(id, e)| e.usable && !task.excluded.contains(id))
    }

    /// No pending task could be picked at `level`, whatever the executor (see [`Self::pick`]).
    fn nothing_to_pick(&self, level: TaskLocality) -> bool {
        match level {
            TaskLocality::NodeLocal => self.pending_by_host.is_empty(),
            TaskLocality::NoPref => self.pending_no_pref.is_empty(),
            _ => self.pending.is_empty(),
        }
    }

    /// After a pass: does an executor still have room some pending task could use?
    fn rejected_an_offer(&self) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        self.offerable.iter().any(|id| {
            let e = &self.executors[id];
            self.pending.iter().any(|&i| {
                let t = &self.tasks[i];
                t.spec.cpus <= e.free && !self.excluded(t, *id)
            })
        })
    }

    fn pending_specs(&self) -> impl Iterator<Item = &TaskSpec> {
        self.pending.iter().map(|&i| &self.tasks[i].spec)
    }

    /// Tasks waiting for a slot, in job order.
    pub fn pending_tasks(&self) -> impl Iterator<Item = &TaskSpec> {
        self.pending_specs()
    }

    /// Pending tasks naming at least one host.
    pub fn pending_with_hosts(&self) -> usize {
        self.pending_with_hosts
    }

    /// For each host some pending task prefers, how many do.
    pub fn pending_per_host(&self) -> impl Iterator<Item = (&str, usize)> {
        self.pending_by_host
            .iter()
            .map(|(h, s)| (h.as_str(), s.len()))
    }

    /// Whether `attempt` of the task is the one running on `executor_id`.
    pub fn runs_on(&self, task_id: &str, attempt: u32, executor_id: ExecutorId) -> bool {
        self.index.get(task_id).is_some_and(|&i| {
            matches!(&self.tasks[i].state,
                State::Running { attempt: a, executor, .. } if *a == attempt && *executor == executor_id)
        })
    }

    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    pub fn running_count(&self) -> usize {
        self.running
    }

    pub fn succeeded_count(&self) -> usize {
        self.succeeded
    }

    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    pub fn all_succeeded(&self) -> bool {
        self.succeeded == self.tasks.len()
    }

    /// Why the job failed, once it has.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The allowed level as of the last pass.
    pub fn level(&self) -> TaskLocality {
        self.level
    }

    /// When the allowed level would next loosen by waiting, if anything is pending.
    pub fn next_level_change_ms(&self) -> Option<u64> {
        if self.pending.is_empty() {
            return None;
        }
        let wait = match self.level {
            TaskLocality::NodeLocal => self.waits.node,
            TaskLocality::RackLocal => self.waits.rack,
            _ => return None,
        };
        self.since.map(|s| s.saturating_add(wait))
    }

    /// Executors not being killed.
    pub fn usable_count(&self) -> usize {
        self.usable
    }

    /// The executors whose idleness may have changed since the last call, each with whether
    /// it is idle now (usable and running nothing; `false` also for one gone or being
    /// killed): what [`super::Allocation::update_changed`] takes, so a round looks at those
    /// only.
    pub fn take_idle_changes(&mut self) -> Vec<(ExecutorId, bool)> {
        let changed = std::mem::take(&mut self.idle_changed);
        changed
            .into_iter()
            .map(|id| {
                let idle = self
                    .executors
                    .get(&id)
                    .is_some_and(|e| e.usable && e.running.is_empty());
                (id, idle)
            })
            .collect()
    }

    /// Executors not being killed, with whether each runs anything (walks them all: for
    /// tests and as the reference the kept counts are checked against).
    pub fn usable_executors(&self) -> Vec<(ExecutorId, bool)> {
        self.executors
            .iter()
            .filter(|(_, e)| e.usable)
            .map(|(id, e)| (*id, !e.running.is_empty()))
            .collect()
    }

    /// Executors registered and not yet removed (including those being killed).
    pub fn executor_count(&self) -> usize {
        self.executors.len()
    }

    pub fn host_of(&self, executor_id: ExecutorId) -> Option<&str> {
        self.executors.get(&executor_id).map(|e| e.host.as_str())
    }

    /// Whether the executor registered (added or adopted) and is not removed: the one
    /// record of "the driver knows this executor" (the AM's job run asks here).
    pub fn has_executor(&self, executor_id: ExecutorId) -> bool {
        self.executors.contains_key(&executor_id)
    }

    /// Whether the executor's kill was asked for ([`Self::mark_killing`]): it is offered
    /// nothing more and is told to go.
    pub fn is_killing(&self, executor_id: ExecutorId) -> bool {
        self.executors.get(&executor_id).is_some_and(|e| !e.usable)
    }

    /// The command of a task, by id.
    pub fn command(&self, task_id: &str) -> Option<&str> {
        self.index
            .get(task_id)
            .map(|&i| self.tasks[i].spec.command.as_str())
    }

    /// Launches of a task so far (for reports and tests).
    pub fn attempts(&self, task_id: &str) -> Option<u32> {
        self.index.get(task_id).map(|&i| self.tasks[i].launches)
    }

    /// Failures counted against a task so far.
    pub fn failures(&self, task_id: &str) -> Option<u32> {
        self.index.get(task_id).map(|&i| self.tasks[i].failures)
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
