//! The embedded driver inside the AM: runs a job's tasks on `yarn-am executor` processes.
//!
//! The driver state machine (`crate::driver`) decides which task runs where and how many
//! executors the job needs; this module connects it to the AM: executor polls become driver
//! events and carry its task launches back, its demand goes to the allocator like any
//! driver's `POST /v1/demand`, and executors the AM loses are reported to it so their
//! tasks run again elsewhere.
//!
//! A job with several executor kinds runs one driver per kind that has tasks, each on its
//! part of the job (`Job::kind_job`): the driver's scheduling and scaling stay those of one
//! executor size, an executor's kind (from its id, `IdStripe`) says which driver it serves,
//! and each driver's demand is its kind's. The job ends when every driver has, or when one
//! fails; the report is the drivers' together.

use std::collections::{HashMap, HashSet};

use crate::driver::report::{JobSummary, ReportView};
use crate::driver::{Driver, DriverAction, DriverEvent};
use crate::ids::{ExecutorId, IdStripe};
use tracing::{info, warn};

use super::deliveries::Deliveries;
use super::pool::Pool;
use crate::ids::TaskAttempt;
use yarn_am_wire::poll::{PollReply, PollRequest, TaskAssignment};

/// One executor kind's driver.
struct KindDriver {
    /// The kind's name; `None` for the default kind.
    kind: Option<String>,
    driver: Driver,
    cores: u32,
    finished: Option<JobSummary>,
}

pub struct JobRun {
    /// One per kind with tasks; the only one of a job without kinds.
    drivers: Vec<KindDriver>,
    /// For each executor kind of the app (in `ExecutorSpec::all_kinds` order), the index
    /// of its driver in `drivers`, if it has one.
    by_kind: Vec<Option<usize>>,
    /// The job's name and its task order, for the report of several drivers.
    name: String,
    order: HashMap<String, usize>,
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
    /// A job of one executor kind.
    pub fn new(driver: Driver) -> Self {
        Self::with_drivers(vec![(None, driver)], vec![Some(0)])
    }

    /// A job over the app's executor kinds (`kinds`: their names in
    /// `ExecutorSpec::all_kinds` order, the default first): one driver per kind with tasks.
    pub fn for_job(
        job: &crate::driver::Job,
        topology: &crate::topology::SharedTopology,
        kinds: &[String],
    ) -> Result<Self, crate::driver::JobError> {
        job.validate()?;
        let mut drivers = Vec::new();
        let mut by_kind = Vec::new();
        for (k, name) in kinds.iter().enumerate() {
            let kind = (k > 0).then(|| name.clone());
            match job.kind_job(kind.as_deref()) {
                Some(part) => {
                    by_kind.push(Some(drivers.len()));
                    drivers.push((kind, Driver::new(part, topology.clone())?));
                }
                None => by_kind.push(None),
            }
        }
        let mut run = Self::with_drivers(drivers, by_kind);
        run.name = job.name.clone();
        run.order = job
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        Ok(run)
    }

    fn with_drivers(drivers: Vec<(Option<String>, Driver)>, by_kind: Vec<Option<usize>>) -> Self {
        let cpus = drivers
            .iter()
            .flat_map(|(_, d)| d.job().tasks.iter().map(|t| (t.id.clone(), t.cpus)))
            .collect();
        let name = drivers
            .first()
            .map(|(_, d)| d.job().name.clone())
            .unwrap_or_default();
        Self {
            drivers: drivers
                .into_iter()
                .map(|(kind, driver)| KindDriver {
                    kind,
                    cores: driver.job().executor.cores,
                    driver,
                    finished: None,
                })
                .collect(),
            by_kind,
            name,
            order: HashMap::new(),
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
        entries: &[crate::driver::journal::Entry],
    ) -> crate::driver::journal::Replayed {
        self.report = None;
        // Each driver takes the entries of its own tasks; the counts add up.
        let mut all = crate::driver::journal::Replayed::default();
        for (i, d) in self.drivers.iter_mut().enumerate() {
            let r = d.driver.replay(entries);
            all.succeeded += r.succeeded;
            all.failed += r.failed;
            all.max_executor_id = all.max_executor_id.max(r.max_executor_id);
            if i == 0 {
                all.am_attempts = r.am_attempts;
            }
        }
        all
    }

    /// The driver executor `id` serves (by its kind), if its kind has one.
    fn slot(&self, id: ExecutorId) -> Option<usize> {
        let k = IdStripe::kind_of(id, self.by_kind.len());
        self.by_kind.get(k).copied().flatten()
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
            let Some(slot) = self.slot(id) else {
                continue;
            };
            let running: Vec<TaskAttempt> = in_flight
                .iter()
                .filter(|(_, e)| *e == id)
                .map(|(t, _)| t.clone())
                .collect();
            self.awaiting_first_poll.insert(id);
            info!(executor = %id, %host, attempts = running.len(), "executor of an earlier AM attempt adopted with its attempts");
            self.event(
                now_ms,
                slot,
                DriverEvent::ExecutorAdopted {
                    id,
                    host: host.clone(),
                    rack: rack.clone(),
                    cores: self.drivers[slot].cores,
                    running: running.clone(),
                },
                pool,
            );
            let scheduler = self.drivers[slot].driver.scheduler();
            let held: Vec<TaskAssignment> = running
                .into_iter()
                .filter(|t| scheduler.runs_on(&t.task_id, t.attempt, id))
                .map(|TaskAttempt { task_id, attempt }| TaskAssignment {
                    cpus: self.cpus.get(&task_id).copied().unwrap_or(1),
                    command: scheduler.command(&task_id).unwrap_or_default().to_string(),
                    task_id,
                    attempt,
                })
                .collect();
            self.deliveries.sent(id, &held);
        }
    }

    /// What happened since the last call, for the journal.
    pub fn take_journal(&mut self) -> Vec<crate::driver::journal::Entry> {
        let mut all = Vec::new();
        for d in &mut self.drivers {
            all.extend(d.driver.take_journal());
        }
        all
    }

    fn event(&mut self, now_ms: u64, slot: usize, event: DriverEvent, pool: &mut Pool) {
        // Every driver change comes through here (or `replay`): the report is stale.
        self.report = None;
        if self.drivers[slot].finished.is_some() {
            return;
        }
        let actions = self.drivers[slot].driver.on_event(now_ms, event);
        self.apply(now_ms, slot, actions, pool);
    }

    /// Time passed: lets locality waits expire and idle executors go.
    pub fn tick(&mut self, now_ms: u64, pool: &mut Pool) {
        for slot in 0..self.drivers.len() {
            self.event(now_ms, slot, DriverEvent::Tick, pool);
        }
    }

    /// When a [`Self::tick`] could next change something (`None`: only events matter).
    pub fn next_deadline_ms(&self) -> Option<u64> {
        if self.finished.is_some() {
            return None;
        }
        self.drivers
            .iter()
            .filter(|d| d.finished.is_none())
            .filter_map(|d| d.driver.next_deadline_ms())
            .min()
    }

    /// One executor poll: registration on the first, then its results; answers with work.
    pub fn poll(&mut self, now_ms: u64, req: PollRequest, pool: &mut Pool) -> PollReply {
        let (id, host, slot) = match self.identify(&req, pool) {
            Ok(live) => live,
            Err(reply) => return reply,
        };
        self.register(now_ms, id, &host, slot, &req, pool);
        let resend = self
            .deliveries
            .lost_on_the_way(id, &req.running, &req.finished);
        if !resend.is_empty() {
            warn!(executor = %id, tasks = resend.len(), "assignments never reached the executor; sending them again");
        }
        for r in req.finished {
            self.event(
                now_ms,
                slot,
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
        self.reply(id, slot, resend)
    }

    /// The polling executor's id, its container's host and its driver; or, for an executor
    /// this attempt does not run (or no longer), the reply that tells it to shut down.
    fn identify(
        &self,
        req: &PollRequest,
        pool: &Pool,
    ) -> Result<(ExecutorId, String, usize), PollReply> {
        let live = req
            .executor_id
            .parse::<ExecutorId>()
            .ok()
            .and_then(|n| Some((n, pool.registry.live_host(n)?.to_string())));
        let live = live.and_then(|(id, host)| Some((id, host, self.slot(id)?)));
        let Some((id, host, slot)) = live else {
            let id = &req.executor_id;
            // Not an executor of this attempt (or already gone): it has nothing to do here.
            // Its results are not taken: the driver re-ran its tasks when it was lost.
            warn!(executor = %id, host = %req.host, results = req.finished.len(),
                  "poll from an executor this AM does not run; telling it to shut down");
            return Err(PollReply {
                tasks: Vec::new(),
                shutdown: true,
                reason: Some(format!(
                    "executor {id:?} is not a live executor of this ApplicationMaster"
                )),
                kill: Vec::new(),
            });
        };
        if host != req.host {
            warn!(executor = %id, reported = %req.host, %host,
                  "executor reports another host than its container's; using the container's");
        }
        Ok((id, host, slot))
    }

    /// A poll's registration: the executor's first poll tells its driver about it (added, or
    /// adopted with the attempts it names), and an executor adopted before it polled keeps
    /// the attempts the journal missed.
    fn register(
        &mut self,
        now_ms: u64,
        id: ExecutorId,
        host: &str,
        slot: usize,
        req: &PollRequest,
        pool: &mut Pool,
    ) {
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
        let cores = self.drivers[slot].cores;
        if self.finished.is_none() && !self.drivers[slot].driver.scheduler().has_executor(id) {
            let rack = pool.rack_of(host).to_string();
            let running = named();
            let event = if running.is_empty() {
                info!(executor = %id, %host, %rack, "executor registered");
                DriverEvent::ExecutorAdded {
                    id,
                    host: host.to_string(),
                    rack,
                    cores,
                }
            } else {
                info!(executor = %id, %host, %rack, attempts = running.len(),
                      "executor of an earlier AM attempt registered with its attempts");
                DriverEvent::ExecutorAdopted {
                    id,
                    host: host.to_string(),
                    rack,
                    cores,
                    running,
                }
            };
            self.event(now_ms, slot, event, pool);
        }
        if self.awaiting_first_poll.remove(&id) {
            // Attempts the journal missed (started just before the old AM died) that this
            // executor runs stay with it, if nobody else took them yet.
            let running = named();
            if !running.is_empty() {
                self.event(
                    now_ms,
                    slot,
                    DriverEvent::ExecutorAdopted {
                        id,
                        host: host.to_string(),
                        rack: pool.rack_of(host).to_string(),
                        cores,
                        running,
                    },
                    pool,
                );
            }
        }
    }

    /// The reply to a poll, once its results are in: work (the `resend`s first), attempts to
    /// kill, or the order to shut down and why.
    fn reply(&mut self, id: ExecutorId, slot: usize, resend: Vec<TaskAssignment>) -> PollReply {
        // Told to go: the driver asked for its kill (idle), or the job is over.
        let kind_done = self.drivers[slot].finished.is_some();
        let shutdown = self.finished.is_some()
            || kind_done
            || (self.drivers[slot].driver.scheduler().is_killing(id)
                && !self.draining.contains(&id));
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
                } else if kind_done {
                    "the tasks of its executor kind are done".to_string()
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
            let Some(slot) = self.slot(id) else {
                continue;
            };
            if !self.drivers[slot].driver.scheduler().has_executor(id) {
                continue;
            }
            self.awaiting_first_poll.remove(&id);
            self.draining.remove(&id);
            self.outbox.remove(&id);
            self.kills.remove(&id);
            self.deliveries.forget(id);
            info!(executor = %id, %reason, "executor lost");
            self.event(
                now_ms,
                slot,
                DriverEvent::ExecutorRemoved { id, reason },
                pool,
            );
        }
    }

    fn apply(&mut self, now_ms: u64, slot: usize, actions: Vec<DriverAction>, pool: &mut Pool) {
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
                DriverAction::SetDemand(d) => {
                    let kind = self.drivers[slot].kind.clone();
                    pool.set_demand(now_ms, crate::driver::Demand { kind, ..d })
                }
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
                    self.kind_finished(now_ms, slot, *summary, pool);
                }
            }
        }
    }

    /// One kind's driver is done. The job is over when every driver is, or at once when
    /// one failed; until then the kind asks no more executors and its executors are told
    /// to stop on their next poll.
    fn kind_finished(&mut self, now_ms: u64, slot: usize, summary: JobSummary, pool: &mut Pool) {
        let kind = self.drivers[slot].kind.clone();
        info!(
            succeeded = summary.succeeded,
            kind = kind.as_deref().unwrap_or("default"),
            "tasks of an executor kind finished"
        );
        let failed = !summary.succeeded;
        self.drivers[slot].finished = Some(summary);
        if self.drivers.len() == 1 {
            self.finished = self.drivers[0].finished.clone();
        } else if failed || self.drivers.iter().all(|d| d.finished.is_some()) {
            self.finished = Some(self.merged().summary());
        } else {
            pool.set_demand(
                now_ms,
                crate::driver::Demand {
                    kind,
                    ..Default::default()
                },
            );
            return;
        }
        if let Some(s) = &self.finished {
            info!(succeeded = s.succeeded, "job finished");
        }
    }

    /// What losing executor `id` would cost at `now_ms` (running attempts, their work so
    /// far), for the choice of what to give back on preemption.
    pub fn work_at_stake(&self, id: ExecutorId, now_ms: u64) -> Option<(usize, u64)> {
        let slot = self.slot(id)?;
        self.drivers[slot]
            .driver
            .scheduler()
            .work_at_stake(id, now_ms)
    }

    /// The AM gives executor `id` back: it gets no new task, and is told to stop on its
    /// next poll.
    pub fn giving_back(&mut self, id: ExecutorId) {
        if let Some(slot) = self.slot(id) {
            self.drivers[slot].driver.stop_offering(id);
        }
    }

    /// Executor `id`'s node is decommissioning: it gets no new task but finishes those it
    /// runs (the AM gives it back once it is idle). Returns whether it runs none now.
    pub fn draining(&mut self, id: ExecutorId, now_ms: u64) -> bool {
        if self.draining.insert(id) {
            self.giving_back(id);
        }
        self.work_at_stake(id, now_ms).is_none_or(|(n, _)| n == 0)
    }

    /// The (first) driver, read-only (for the loop-pass bench's reference computation).
    #[allow(dead_code)]
    pub fn driver(&self) -> &Driver {
        &self.drivers[0].driver
    }

    /// The drivers' reports as one: counts summed, tasks in job order, the executors over
    /// time added up, failed if any failed.
    fn merged(&self) -> ReportView {
        let parts: Vec<JobSummary> = self
            .drivers
            .iter()
            .map(|d| match &d.finished {
                Some(s) => s.clone(),
                None => d.driver.view().summary(),
            })
            .collect();
        ReportView::from(merge_summaries(&self.name, &self.order, parts))
    }

    pub fn finished(&self) -> Option<&JobSummary> {
        self.finished.as_ref()
    }

    /// The live report for `/v1/job` and the tracking page (the final one once the job is
    /// over). The AM loop publishes a view after every event: the driver keeps the
    /// report's counts up to date as tasks finish and shares its task records with the
    /// view (see `crate::driver::report`), so taking one costs no copy of any record;
    /// it is taken once per driver change and cloned (a pointer) otherwise.
    /// With several kinds the report is built from theirs, copying the task records.
    pub fn report(&mut self) -> ReportView {
        if self.report.is_none() {
            self.report = Some(match (&self.finished, self.drivers.len()) {
                (Some(s), n) if n > 1 => ReportView::from(s.clone()),
                (_, 1) => self.drivers[0].driver.view(),
                _ => self.merged(),
            });
        }
        self.report.clone().expect("set above")
    }
}

/// Several kinds' job summaries as one (see [`JobRun::merged`]).
fn merge_summaries(
    name: &str,
    order: &HashMap<String, usize>,
    parts: Vec<JobSummary>,
) -> JobSummary {
    let mut out = JobSummary {
        name: name.to_string(),
        succeeded: !parts.is_empty(),
        failure: None,
        tasks_total: 0,
        tasks_succeeded: 0,
        tasks_failed: 0,
        by_locality: Default::default(),
        executors_over_time: Vec::new(),
        wall_time_ms: 0,
        tasks: Vec::new(),
    };
    let mut times: Vec<u64> = Vec::new();
    for p in &parts {
        out.succeeded &= p.succeeded;
        if out.failure.is_none() {
            out.failure.clone_from(&p.failure);
        }
        out.tasks_total += p.tasks_total;
        out.tasks_succeeded += p.tasks_succeeded;
        out.tasks_failed += p.tasks_failed;
        out.by_locality.node_local += p.by_locality.node_local;
        out.by_locality.no_pref += p.by_locality.no_pref;
        out.by_locality.rack_local += p.by_locality.rack_local;
        out.by_locality.any += p.by_locality.any;
        out.wall_time_ms = out.wall_time_ms.max(p.wall_time_ms);
        out.tasks.extend(p.tasks.iter().cloned());
        times.extend(p.executors_over_time.iter().map(|s| s.t_ms));
    }
    out.tasks
        .sort_by_key(|t| order.get(&t.task_id).copied().unwrap_or(usize::MAX));
    // Executors over time: at each time any kind changed, the sum of every kind's count
    // as of then.
    times.sort_unstable();
    times.dedup();
    out.executors_over_time = times
        .into_iter()
        .map(|t| crate::driver::report::ExecutorSample {
            t_ms: t,
            executors: parts
                .iter()
                .map(|p| {
                    p.executors_over_time
                        .iter()
                        .take_while(|s| s.t_ms <= t)
                        .last()
                        .map_or(0, |s| s.executors)
                })
                .sum(),
        })
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: ExecutorId = ExecutorId::new(1);

    fn run() -> JobRun {
        let job = crate::driver::Job::from_json(
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
