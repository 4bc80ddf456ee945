//! The embedded driver inside the AM: runs a job's tasks on `yarn-am executor` processes.
//!
//! The driver state machine (`crate::core::driver`) decides which task runs where and how many
//! executors the job needs; this module connects it to the AM: executor polls become driver
//! events and carry its task launches back, its demand goes to the allocator like any
//! driver's `POST /v1/demand`, and executors the AM loses are reported to it so their
//! tasks run again elsewhere.

use std::collections::{HashMap, HashSet};

use crate::core::driver::report::{JobSummary, ReportView};
use crate::core::driver::{Driver, DriverAction, DriverEvent};
use crate::core::ids::ExecutorId;
use tracing::{info, warn};

use super::deliveries::Deliveries;
use super::pool::Pool;
use crate::core::ids::TaskAttempt;
use crate::protocol::poll::{PollReply, PollRequest, TaskAssignment};

pub struct JobRun {
    driver: Driver,
    cores: u32,
    /// Task cpus by task id, for the attempts adopted executors hold (the driver's
    /// launches carry their own).
    cpus: HashMap<String, u32>,
    /// Tasks waiting to be handed to each executor on its next poll.
    outbox: HashMap<ExecutorId, Vec<TaskAssignment>>,
    /// Adopted executors (see [`Self::adopt`]) that have not polled yet.
    awaiting_first_poll: HashSet<ExecutorId>,
    /// Assignments sent, to find the ones lost on the way.
    deliveries: Deliveries,
    /// Attempts each executor must kill on its next poll (timed out).
    kills: HashMap<ExecutorId, Vec<TaskAttempt>>,
    /// Executors on decommissioning nodes: offered nothing new, not told to stop while
    /// they run tasks (see [`Self::draining`]).
    draining: HashSet<ExecutorId>,
    finished: Option<JobSummary>,
    /// The report last published; `None` once the driver has seen something since (see
    /// [`Self::report`]).
    report: Option<ReportView>,
}

impl JobRun {
    pub fn new(driver: Driver) -> Self {
        let cores = driver.job().executor.cores;
        let cpus = driver
            .job()
            .tasks
            .iter()
            .map(|t| (t.id.clone(), t.cpus))
            .collect();
        Self {
            driver,
            cores,
            cpus,
            outbox: HashMap::new(),
            awaiting_first_poll: HashSet::new(),
            deliveries: Deliveries::default(),
            kills: HashMap::new(),
            draining: HashSet::new(),
            finished: None,
            report: None,
        }
    }

    /// Resumes from an earlier AM attempt's journal (before the first event).
    pub fn replay(
        &mut self,
        entries: &[crate::core::driver::journal::Entry],
    ) -> crate::core::driver::journal::Replayed {
        self.report = None;
        self.driver.replay(entries)
    }

    /// Executors adopted from an earlier AM attempt, before they poll: they are registered
    /// with the attempts the journal says they run (`in_flight`), so those are neither
    /// handed to another executor in the meantime nor lost: an attempt the executor does
    /// not name on its first poll (the reply carrying it died with the old AM) is sent
    /// again, like any assignment lost on the way.
    pub fn adopt(
        &mut self,
        now_ms: u64,
        executors: &[(ExecutorId, String, String)],
        in_flight: &[(TaskAttempt, ExecutorId)],
        pool: &mut Pool,
    ) {
        for &(id, ref host, ref rack) in executors {
            let running: Vec<TaskAttempt> = in_flight
                .iter()
                .filter(|(_, e)| *e == id)
                .map(|(t, _)| t.clone())
                .collect();
            self.awaiting_first_poll.insert(id);
            info!(executor = %id, %host, attempts = running.len(), "executor of an earlier AM attempt adopted with its attempts");
            self.event(
                now_ms,
                DriverEvent::ExecutorAdopted {
                    id,
                    host: host.clone(),
                    rack: rack.clone(),
                    cores: self.cores,
                    running: running.clone(),
                },
                pool,
            );
            let held: Vec<TaskAssignment> = running
                .into_iter()
                .filter(|t| self.driver.scheduler().runs_on(&t.task_id, t.attempt, id))
                .map(|TaskAttempt { task_id, attempt }| TaskAssignment {
                    cpus: self.cpus.get(&task_id).copied().unwrap_or(1),
                    command: self
                        .driver
                        .scheduler()
                        .command(&task_id)
                        .unwrap_or_default()
                        .to_string(),
                    task_id,
                    attempt,
                })
                .collect();
            self.deliveries.sent(id, &held);
        }
    }

    /// What happened since the last call, for the journal.
    pub fn take_journal(&mut self) -> Vec<crate::core::driver::journal::Entry> {
        self.driver.take_journal()
    }

    fn event(&mut self, now_ms: u64, event: DriverEvent, pool: &mut Pool) {
        // Every driver change comes through here (or `replay`): the report is stale.
        self.report = None;
        let actions = self.driver.on_event(now_ms, event);
        self.apply(now_ms, actions, pool);
    }

    /// Time passed: lets locality waits expire and idle executors go.
    pub fn tick(&mut self, now_ms: u64, pool: &mut Pool) {
        self.event(now_ms, DriverEvent::Tick, pool);
    }

    /// When a [`Self::tick`] could next change something (`None`: only events matter).
    pub fn next_deadline_ms(&self) -> Option<u64> {
        if self.finished.is_some() {
            return None;
        }
        self.driver.next_deadline_ms()
    }

    /// One executor poll: registration on the first, then its results; answers with work.
    pub fn poll(&mut self, now_ms: u64, req: PollRequest, pool: &mut Pool) -> PollReply {
        let live = req
            .executor_id
            .parse::<ExecutorId>()
            .ok()
            .and_then(|n| Some((n, pool.registry.live_host(n)?.to_string())));
        let Some((id, host)) = live else {
            let id = &req.executor_id;
            // Not an executor of this attempt (or already gone): it has nothing to do here.
            // Its results are not taken: the driver re-ran its tasks when it was lost.
            warn!(executor = %id, host = %req.host, results = req.finished.len(),
                  "poll from an executor this AM does not run; telling it to shut down");
            return PollReply {
                tasks: Vec::new(),
                shutdown: true,
                reason: Some(format!(
                    "executor {id:?} is not a live executor of this ApplicationMaster"
                )),
                kill: Vec::new(),
            };
        };
        if host != req.host {
            warn!(executor = %id, reported = %req.host, %host,
                  "executor reports another host than its container's; using the container's");
        }
        // The attempts this poll names: on a first poll, only an executor an earlier AM
        // attempt started (adopted) has any; what it runs, and what it finished since that
        // AM died, stays its own and counts. (Listed only for the first polls that need it.)
        let named = || -> Vec<TaskAttempt> {
            req.running
                .iter()
                .cloned()
                .chain(req.finished.iter().map(|r| r.task_attempt()))
                .collect()
        };
        // The driver's scheduler is the record of the executors it knows (registered on a
        // first poll or adopted, not yet removed). Once the job is over nothing registers.
        if self.finished.is_none() && !self.driver.scheduler().has_executor(id) {
            let rack = pool.rack_of(&host).to_string();
            let running = named();
            let event = if running.is_empty() {
                info!(executor = %id, %host, %rack, "executor registered");
                DriverEvent::ExecutorAdded {
                    id,
                    host: host.clone(),
                    rack,
                    cores: self.cores,
                }
            } else {
                info!(executor = %id, %host, %rack, attempts = running.len(),
                      "executor of an earlier AM attempt registered with its attempts");
                DriverEvent::ExecutorAdopted {
                    id,
                    host: host.clone(),
                    rack,
                    cores: self.cores,
                    running,
                }
            };
            self.event(now_ms, event, pool);
        }
        if self.awaiting_first_poll.remove(&id) {
            // Attempts the journal missed (started just before the old AM died) that this
            // executor runs stay with it, if nobody else took them yet.
            let running = named();
            if !running.is_empty() {
                self.event(
                    now_ms,
                    DriverEvent::ExecutorAdopted {
                        id,
                        host: host.clone(),
                        rack: pool.rack_of(&host).to_string(),
                        cores: self.cores,
                        running,
                    },
                    pool,
                );
            }
        }
        let resend = self
            .deliveries
            .lost_on_the_way(id, &req.running, &req.finished);
        if !resend.is_empty() {
            warn!(executor = %id, tasks = resend.len(), "assignments never reached the executor; sending them again");
        }
        for r in req.finished {
            self.event(
                now_ms,
                DriverEvent::TaskFinished {
                    task_id: r.task_id,
                    attempt: r.attempt,
                    executor_id: id,
                    exit_code: r.exit_code,
                    duration_ms: r.duration_ms,
                },
                pool,
            );
        }
        // Told to go: the driver asked for its kill (idle), or the job is over.
        let shutdown = self.finished.is_some()
            || (self.driver.scheduler().is_killing(id) && !self.draining.contains(&id));
        let tasks = if shutdown {
            Vec::new()
        } else {
            self.hand_out(id, resend)
        };
        let kill = self.kills.remove(&id).unwrap_or_default();
        if !kill.is_empty() {
            info!(executor = %id, attempts = kill.len(), "telling the executor to kill timed-out attempts");
        }
        PollReply {
            tasks,
            shutdown,
            kill,
            reason: shutdown.then(|| {
                if self.finished.is_some() {
                    "the job is over".to_string()
                } else {
                    "released by the driver (idle)".to_string()
                }
            }),
        }
    }

    /// The tasks for one poll reply: those lost on the way first (they have waited longest),
    /// then the new ones; all recorded as sent.
    fn hand_out(
        &mut self,
        executor_id: ExecutorId,
        resend: Vec<TaskAssignment>,
    ) -> Vec<TaskAssignment> {
        // Resent ones are on record already: recording them again would double them on
        // every poll that still does not name them.
        let new = self.outbox.remove(&executor_id).unwrap_or_default();
        self.deliveries.sent(executor_id, &new);
        let mut tasks = resend;
        tasks.extend(new);
        tasks
    }

    /// Tells the driver about executors that are gone (from [`Pool::take_gone`]); those it
    /// never knew (gone before their first poll) are skipped, as is a second notice.
    pub fn executors_gone(
        &mut self,
        now_ms: u64,
        gone: Vec<(ExecutorId, String)>,
        pool: &mut Pool,
    ) {
        for (id, reason) in gone {
            if !self.driver.scheduler().has_executor(id) {
                continue;
            }
            self.awaiting_first_poll.remove(&id);
            self.draining.remove(&id);
            self.outbox.remove(&id);
            self.kills.remove(&id);
            self.deliveries.forget(id);
            info!(executor = %id, %reason, "executor lost");
            self.event(now_ms, DriverEvent::ExecutorRemoved { id, reason }, pool);
        }
    }

    fn apply(&mut self, now_ms: u64, actions: Vec<DriverAction>, pool: &mut Pool) {
        for action in actions {
            match action {
                DriverAction::LaunchTask {
                    task_id,
                    attempt,
                    executor_id,
                    command,
                    locality,
                    cpus,
                } => {
                    info!(task = %task_id, attempt, executor = %executor_id, ?locality, "task assigned");
                    self.outbox
                        .entry(executor_id)
                        .or_default()
                        .push(TaskAssignment {
                            task_id,
                            attempt,
                            command,
                            cpus,
                        });
                }
                DriverAction::SetDemand(d) => pool.set_demand(now_ms, d),
                DriverAction::KillExecutors(ids) => {
                    // The driver marked them killing: their next poll tells them to go.
                    info!(?ids, "releasing idle executors");
                    pool.kill(now_ms, ids);
                }
                DriverAction::KillTask {
                    task_id,
                    attempt,
                    executor_id,
                } => {
                    warn!(task = %task_id, attempt, executor = %executor_id, "task attempt timed out; killing it");
                    self.deliveries.cancel(executor_id, &task_id, attempt);
                    let queued = self.outbox.get_mut(&executor_id);
                    let unsent = queued.is_some_and(|q| {
                        let before = q.len();
                        q.retain(|t| !(t.task_id == task_id && t.attempt == attempt));
                        q.len() < before
                    });
                    // An attempt still in the outbox never reached its executor: nothing
                    // to kill there.
                    if !unsent {
                        self.kills
                            .entry(executor_id)
                            .or_default()
                            .push(TaskAttempt { task_id, attempt });
                    }
                }
                DriverAction::JobFinished { summary, .. } => {
                    info!(succeeded = summary.succeeded, "job finished");
                    self.finished = Some(*summary);
                }
            }
        }
    }

    /// What losing executor `id` would cost at `now_ms` (running attempts, their work so
    /// far), for the choice of what to give back on preemption.
    pub fn work_at_stake(&self, id: ExecutorId, now_ms: u64) -> Option<(usize, u64)> {
        self.driver.scheduler().work_at_stake(id, now_ms)
    }

    /// The AM gives executor `id` back: it gets no new task, and is told to stop on its
    /// next poll.
    pub fn giving_back(&mut self, id: ExecutorId) {
        self.driver.stop_offering(id);
    }

    /// Executor `id`'s node is decommissioning: it gets no new task but finishes those it
    /// runs (the AM gives it back once it is idle). Returns whether it runs none now.
    pub fn draining(&mut self, id: ExecutorId, now_ms: u64) -> bool {
        if self.draining.insert(id) {
            self.driver.stop_offering(id);
        }
        self.work_at_stake(id, now_ms).is_none_or(|(n, _)| n == 0)
    }

    /// The driver, read-only (for the loop-pass bench's reference computation).
    #[allow(dead_code)]
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    pub fn finished(&self) -> Option<&JobSummary> {
        self.finished.as_ref()
    }

    /// The live report for `/v1/job` and the tracking page (the final one once the job is
    /// over). The AM loop publishes a view after every event: the driver keeps the
    /// report's counts up to date as tasks finish and shares its task records with the
    /// view (see `crate::core::driver::report`), so taking one costs no copy of any record;
    /// it is taken once per driver change and cloned (a pointer) otherwise.
    pub fn report(&mut self) -> ReportView {
        self.report
            .get_or_insert_with(|| self.driver.view())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: ExecutorId = ExecutorId::new(1);

    fn run() -> JobRun {
        let job = crate::core::driver::Job::from_json(
            r#"{"name":"j","executor":{"cores":2,"memory_mb":256},
                "tasks":[{"id":"a","command":"true"},{"id":"b","command":"true"}]}"#,
        )
        .unwrap();
        JobRun::new(Driver::new(job, HashMap::new()).unwrap())
    }

    fn assignment(id: &str) -> TaskAssignment {
        TaskAssignment {
            task_id: id.into(),
            attempt: 0,
            command: "true".into(),
            cpus: 1,
        }
    }

    #[test]
    fn a_reply_lost_on_the_way_goes_out_again_before_new_tasks() {
        let mut j = run();
        j.outbox.insert(ONE, vec![assignment("a")]);
        assert_eq!(j.hand_out(ONE, Vec::new()), vec![assignment("a")]);
        // That reply never arrived: the next poll names no attempt.
        j.outbox.insert(ONE, vec![assignment("b")]);
        let resend = j.deliveries.lost_on_the_way(ONE, &[], &[]);
        let ids: Vec<String> = j
            .hand_out(ONE, resend)
            .into_iter()
            .map(|t| t.task_id)
            .collect();
        assert_eq!(ids, ["a", "b"]);
        // Still not named (the executor ran it for an AM that died before recording it):
        // sent once more, not twice.
        let resend = j.deliveries.lost_on_the_way(ONE, &[], &[]);
        assert_eq!(resend.len(), 2);
        assert_eq!(j.hand_out(ONE, resend).len(), 2);
        assert_eq!(j.deliveries.lost_on_the_way(ONE, &[], &[]).len(), 2);
        // An executor the driver no longer knows gets nothing resent (its tasks were
        // re-queued in the driver when it was lost).
        j.deliveries.forget(ONE);
        assert!(j.deliveries.lost_on_the_way(ONE, &[], &[]).is_empty());
    }
}
