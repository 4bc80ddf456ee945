//! What the scheduler tells: pending and running tasks, the level, executors.

use super::super::job::TaskSpec;
use super::*;

impl Scheduler {
    pub(super) fn pending_specs(&self) -> impl Iterator<Item = &TaskSpec> {
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
