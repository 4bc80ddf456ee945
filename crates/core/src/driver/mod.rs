//! The embedded driver's sans-IO core: a job's tasks scheduled onto executors the AM brings
//! up, and the executor demand that keeps them coming.
//!
//! Like the allocator, nothing here opens a socket, reads a clock or spawns anything. The AM
//! feeds [`DriverEvent`]s with the time and carries out the [`DriverAction`]s that come back:
//! launch a task's command on an executor, post the demand to the allocator, kill executors,
//! finish the application.
//!
//! - [`job`]: the job file and its validation;
//! - [`scheduler`]: tasks onto free slots with delay scheduling, retries, executor loss;
//! - [`allocation`]: executor target, ramp-up, idle release, and the demand;
//! - [`report`]: per-task records and the job summary.
//!
//! Every event runs one *round*: apply the event, offer free slots (launches), update the
//! allocation (target, kills), then emit the demand if it changed. Time only moves the
//! locality level, the ramp-up and idle release, so the AM must send [`DriverEvent::Tick`]
//! now and then; [`Driver::next_deadline_ms`] says when one would matter.

pub mod allocation;
pub use yarn_am_wire::job;
pub mod journal;
pub use yarn_am_wire::job_report as report;
pub mod scheduler;

use std::collections::{BTreeSet, HashMap};

pub use allocation::{AllocationManager, Demand};
pub use job::{Job, JobError, TaskSpec};
pub use report::{JobSummary, LocalityCounts, TaskRecord};
pub use scheduler::{ExecutorId, Scheduler, TaskLocality};

use report::Report;

use crate::ids::TaskAttempt;
use crate::topology::SharedTopology;

/// Something the AM saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverEvent {
    /// An executor registered and can take tasks on `cores` cpus.
    ExecutorAdded {
        id: ExecutorId,
        host: String,
        rack: String,
        cores: u32,
    },
    /// An executor a crashed AM attempt started registered with this one, still running
    /// the attempts `running`: they stay where they are and count.
    ExecutorAdopted {
        id: ExecutorId,
        host: String,
        rack: String,
        cores: u32,
        running: Vec<TaskAttempt>,
    },
    /// An executor is gone (killed on request, node lost, crashed). Its running tasks are
    /// re-queued without counting a failure against them.
    ExecutorRemoved { id: ExecutorId, reason: String },
    /// A task's command ended. `exit_code` 0 is success; anything else (including a launch
    /// that could not start, reported with any non-zero code) is a failed attempt.
    TaskFinished {
        task_id: String,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
        duration_ms: u64,
    },
    /// Nothing happened; time passed.
    Tick,
}

/// Something the AM should do.
#[derive(Debug, Clone, PartialEq)]
pub enum DriverAction {
    /// Run `command` on the executor, as attempt `attempt` of the task.
    LaunchTask {
        task_id: String,
        attempt: u32,
        executor_id: ExecutorId,
        command: String,
        locality: TaskLocality,
        /// The cpus the task takes (its `cpus`).
        cpus: u32,
    },
    /// Post this to the allocator (`POST /v1/demand`). Emitted when it changes.
    SetDemand(Demand),
    /// Kill these executors (idle too long). They get no more tasks.
    KillExecutors(Vec<ExecutorId>),
    /// Attempt `attempt` of the task passed its timeout on `executor_id`: kill it there. The
    /// driver already counted it failed (and re-queued the task if it has retries left); a
    /// result the executor still reports for it is ignored.
    KillTask {
        task_id: String,
        attempt: u32,
        executor_id: ExecutorId,
    },
    /// The job is over; nothing more will be emitted.
    JobFinished {
        succeeded: bool,
        summary: Box<JobSummary>,
    },
}

/// The driver state machine.
#[derive(Debug, Clone)]
pub struct Driver {
    job: Job,
    index: HashMap<String, usize>,
    scheduler: Scheduler,
    allocation: AllocationManager,
    report: Report,
    start_ms: Option<u64>,
    now_ms: u64,
    last_demand: Option<Demand>,
    summary: Option<JobSummary>,
    /// Entries for the AM's journal, taken by [`Driver::take_journal`].
    journal: Vec<journal::Entry>,
    /// Each task's attempt time limit, by job index (see [`Job::task_timeout_ms`]).
    timeouts: Vec<Option<u64>>,
    /// Running attempts with a time limit: (deadline, task index, attempt, executor). An
    /// entry whose attempt ended before its deadline is dropped when the deadline comes.
    deadlines: BTreeSet<(u64, usize, u32, ExecutorId)>,
}

impl Driver {
    /// A driver for `job` (validated here). `topology` places the hosts tasks prefer: the
    /// AM passes a handle to its one topology, so racks it learns later reach the driver;
    /// a host it does not know takes the rack its executor registers with.
    pub fn new(job: Job, topology: impl Into<SharedTopology>) -> Result<Driver, JobError> {
        job.validate()?;
        let index = job
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        let scheduler = Scheduler::new(
            job.tasks.clone(),
            job.locality_wait_ms,
            job.task_retries,
            topology,
        );
        let timeouts = job.tasks.iter().map(|t| job.task_timeout_ms(t)).collect();
        Ok(Driver {
            timeouts,
            deadlines: BTreeSet::new(),
            allocation: AllocationManager::new(&job),
            report: Report::new(job.tasks.len()),
            index,
            scheduler,
            job,
            start_ms: None,
            now_ms: 0,
            last_demand: None,
            summary: None,
            journal: Vec::new(),
        })
    }

    /// Apply one event at `now_ms` and run a round. Time never goes back: an earlier
    /// `now_ms` than the last one is taken as the last one.
    pub fn on_event(&mut self, now_ms: u64, event: DriverEvent) -> Vec<DriverAction> {
        if self.summary.is_some() {
            return Vec::new();
        }
        let now = now_ms.max(self.now_ms);
        self.now_ms = now;
        self.start_ms.get_or_insert(now);
        let mut out = self.expire_timeouts(now);
        match event {
            DriverEvent::ExecutorAdded {
                id,
                host,
                rack,
                cores,
            } => self.scheduler.add_executor(id, host, rack, cores),
            DriverEvent::ExecutorAdopted {
                id,
                host,
                rack,
                cores,
                running,
            } => {
                self.scheduler.add_executor(id, host, rack, cores);
                for TaskAttempt { task_id, attempt } in running {
                    if self.scheduler.adopt_running(&task_id, attempt, id) {
                        // Its start is not known here: the limit counts from the adoption.
                        self.set_deadline(now, &task_id, attempt, id);
                        self.journal.push(journal::Entry::Launched {
                            task_id,
                            attempt,
                            executor_id: id,
                        });
                    }
                }
            }
            DriverEvent::ExecutorRemoved { id, .. } => {
                self.scheduler.remove_executor(id);
            }
            DriverEvent::TaskFinished {
                task_id,
                attempt,
                executor_id,
                exit_code,
                duration_ms,
            } => {
                if let Some(f) =
                    self.scheduler
                        .task_finished(&task_id, attempt, executor_id, exit_code)
                {
                    self.record(f, duration_ms, exit_code);
                }
            }
            DriverEvent::Tick => {}
        }
        out.extend(self.round(now));
        out
    }

    /// A finished attempt goes into the report and the journal.
    fn record(&mut self, f: scheduler::Finished, duration_ms: u64, exit_code: i32) {
        let record = TaskRecord {
            task_id: f.task_id,
            executor_id: f.executor_id,
            host: f.host,
            locality: f.locality,
            attempts: f.attempts,
            duration_ms,
            exit_code,
            last_failure: f.last_failure,
        };
        self.journal.push(journal::Entry::Finished {
            attempt: f.attempt,
            record: record.clone(),
        });
        self.report.record(f.task, record);
    }

    /// Starts the clock of an attempt's time limit, if its task has one.
    fn set_deadline(&mut self, now: u64, task_id: &str, attempt: u32, executor_id: ExecutorId) {
        self.set_deadline_at(now, self.index[task_id], attempt, executor_id);
    }

    /// [`Self::set_deadline`] for the task at `i` in the job's list.
    fn set_deadline_at(&mut self, now: u64, i: usize, attempt: u32, executor_id: ExecutorId) {
        if let Some(limit) = self.timeouts[i] {
            self.deadlines
                .insert((now.saturating_add(limit), i, attempt, executor_id));
        }
    }

    /// Attempts still running past their time limit fail (with retries as for any failure)
    /// and are killed on their executors.
    fn expire_timeouts(&mut self, now: u64) -> Vec<DriverAction> {
        let mut out = Vec::new();
        while self.deadlines.first().is_some_and(|d| d.0 <= now) {
            let Some((deadline, i, attempt, executor_id)) = self.deadlines.pop_first() else {
                break;
            };
            let task_id = self.job.tasks[i].id.clone();
            let limit = self.timeouts[i].unwrap_or_default();
            let Some(f) = self
                .scheduler
                .task_timed_out(&task_id, attempt, executor_id, limit)
            else {
                // That attempt ended (or its executor went) in time.
                continue;
            };
            let ran_ms = now.saturating_sub(deadline.saturating_sub(limit));
            self.record(f, ran_ms, scheduler::TIMED_OUT_EXIT_CODE);
            out.push(DriverAction::KillTask {
                task_id,
                attempt,
                executor_id,
            });
        }
        out
    }

    fn round(&mut self, now: u64) -> Vec<DriverAction> {
        let mut out = Vec::new();
        if self.scheduler.failure().is_some() || self.scheduler.all_succeeded() {
            self.report
                .sample(now, self.scheduler.executor_count() as u32);
            let summary = self.build_summary(now);
            out.push(DriverAction::JobFinished {
                succeeded: summary.succeeded,
                summary: Box::new(summary.clone()),
            });
            self.summary = Some(summary);
            return out;
        }
        for (i, l) in self.scheduler.offer_by_index(now) {
            let spec = &self.job.tasks[i];
            let (command, cpus) = (spec.command.clone(), spec.cpus);
            self.set_deadline_at(now, i, l.attempt, l.executor_id);
            self.journal.push(journal::Entry::Launched {
                task_id: l.task_id.clone(),
                attempt: l.attempt,
                executor_id: l.executor_id,
            });
            out.push(DriverAction::LaunchTask {
                task_id: l.task_id,
                attempt: l.attempt,
                executor_id: l.executor_id,
                command,
                locality: l.locality,
                cpus,
            });
        }
        let kills = self.allocation.update_changed(
            now,
            self.scheduler.pending_count(),
            self.scheduler.running_count(),
            self.scheduler.usable_count(),
            self.scheduler.take_idle_changes(),
        );
        if !kills.is_empty() {
            for id in &kills {
                self.scheduler.mark_killing(*id);
            }
            out.push(DriverAction::KillExecutors(kills));
        }
        let demand = self.demand();
        if self.last_demand.as_ref() != Some(&demand) {
            self.last_demand = Some(demand.clone());
            out.push(DriverAction::SetDemand(demand));
        }
        self.report
            .sample(now, self.scheduler.executor_count() as u32);
        out
    }

    fn build_summary(&self, now: u64) -> JobSummary {
        let failure = self.scheduler.failure();
        self.report.summary(
            &self.job.name,
            failure,
            u32::from(failure.is_some()),
            now - self.start_ms.unwrap_or(now),
        )
    }

    /// The demand as of the last round (what the last `SetDemand` said, or would say).
    pub fn demand(&self) -> Demand {
        Demand::from_counts(
            self.allocation.target(),
            self.scheduler.pending_with_hosts(),
            self.scheduler.pending_per_host(),
        )
    }

    /// What [`Self::summary`] says, without copying the task records: what the AM
    /// publishes after every event. Once the job has finished, nothing moves any more (no
    /// event is taken, time stands still), so this is the final summary.
    pub fn view(&self) -> report::ReportView {
        let failure = self.scheduler.failure();
        self.report.view(
            &self.job.name,
            failure,
            u32::from(failure.is_some()),
            self.now_ms - self.start_ms.unwrap_or(self.now_ms),
        )
    }

    /// The summary so far, or the final one once the job has finished.
    pub fn summary(&self) -> JobSummary {
        self.summary
            .clone()
            .unwrap_or_else(|| self.build_summary(self.now_ms))
    }

    pub fn is_finished(&self) -> bool {
        self.summary.is_some()
    }

    pub fn job(&self) -> &Job {
        &self.job
    }

    /// The scheduler, for status pages and tests.
    /// Offers executor `id` no more tasks: the AM is giving it back (its running tasks are
    /// re-queued, uncounted, when it goes).
    pub fn stop_offering(&mut self, id: ExecutorId) {
        self.scheduler.mark_killing(id);
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    pub fn allocation(&self) -> &AllocationManager {
        &self.allocation
    }

    /// The earliest time a `Tick` could change something (a locality level loosening, a
    /// ramp-up step, an idle executor expiring). `None`: only events matter now.
    pub fn next_deadline_ms(&self) -> Option<u64> {
        if self.summary.is_some() {
            return None;
        }
        [
            self.scheduler.next_level_change_ms(),
            self.allocation.next_deadline_ms(),
            self.deadlines.first().map(|d| d.0),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

#[cfg(test)]
mod tests;
