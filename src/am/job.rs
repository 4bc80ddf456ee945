//! The embedded driver inside the AM: runs a job's tasks on `yarn-am executor` processes.
//!
//! The driver state machine (`yarn_am::driver`) decides which task runs where and how many
//! executors the job needs; this module connects it to the AM: executor polls become driver
//! events and carry its task launches back, its demand goes to the allocator like any
//! driver's `POST /v1/demand`, and executors the AM loses are reported to it so their
//! tasks run again elsewhere.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use tracing::info;
use yarn_am::driver::report::JobSummary;
use yarn_am::driver::{Driver, DriverAction, DriverEvent};

use super::heartbeat::Heartbeat;
use crate::api::model::{self, PollReply, PollRequest, TaskAssignment};

pub struct JobRun {
    driver: Driver,
    start: Instant,
    cores: u32,
    /// Task cpus by task id, for the assignments executors receive.
    cpus: HashMap<String, u32>,
    /// Tasks waiting to be handed to each executor on its next poll.
    outbox: HashMap<String, Vec<TaskAssignment>>,
    /// Executors that have polled at least once (the driver knows them).
    registered: HashSet<String>,
    /// Executors told to go: idle, or the job is over.
    retiring: HashSet<String>,
    finished: Option<JobSummary>,
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
            start: Instant::now(),
            cores,
            cpus,
            outbox: HashMap::new(),
            registered: HashSet::new(),
            retiring: HashSet::new(),
            finished: None,
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn event(&mut self, event: DriverEvent, hb: &mut Heartbeat) {
        let now = self.now_ms();
        let actions = self.driver.on_event(now, event);
        self.apply(actions, hb);
    }

    /// Time passed: lets locality waits expire and idle executors go.
    pub fn tick(&mut self, hb: &mut Heartbeat) {
        self.event(DriverEvent::Tick, hb);
    }

    /// One executor poll: registration on the first, then its results; answers with work.
    pub fn poll(&mut self, req: PollRequest, hb: &mut Heartbeat) -> PollReply {
        let id = req.executor_id.clone();
        let known_to_am = id.parse::<u64>().is_ok_and(|n| hb.registry.is_live(n));
        if !known_to_am {
            // Not an executor of this attempt (or already gone): it has nothing to do here.
            return PollReply {
                tasks: Vec::new(),
                shutdown: true,
            };
        }
        if self.registered.insert(id.clone()) {
            let rack = hb.topology.rack_of(&req.host).to_string();
            info!(executor = %id, host = %req.host, %rack, "executor registered");
            self.event(
                DriverEvent::ExecutorAdded {
                    id: id.clone(),
                    host: req.host.clone(),
                    rack,
                    cores: self.cores,
                },
                hb,
            );
        }
        for r in req.finished {
            self.event(
                DriverEvent::TaskFinished {
                    task_id: r.task_id,
                    attempt: r.attempt,
                    executor_id: id.clone(),
                    exit_code: r.exit_code,
                    duration_ms: r.duration_ms,
                },
                hb,
            );
        }
        PollReply {
            tasks: self.outbox.remove(&id).unwrap_or_default(),
            shutdown: self.retiring.contains(&id) || self.finished.is_some(),
        }
    }

    /// Tells the driver about executors whose containers ended.
    pub fn sync_lost(&mut self, hb: &mut Heartbeat) {
        let lost: Vec<String> = self
            .registered
            .iter()
            .filter(|id| !id.parse::<u64>().is_ok_and(|n| hb.registry.is_live(n)))
            .cloned()
            .collect();
        for id in lost {
            self.registered.remove(&id);
            self.outbox.remove(&id);
            let reason = hb
                .registry
                .views()
                .into_iter()
                .find(|e| e.id == id)
                .and_then(|e| e.reason)
                .unwrap_or_else(|| "container ended".into());
            info!(executor = %id, %reason, "executor lost");
            self.event(DriverEvent::ExecutorRemoved { id, reason }, hb);
        }
    }

    fn apply(&mut self, actions: Vec<DriverAction>, hb: &mut Heartbeat) {
        for action in actions {
            match action {
                DriverAction::LaunchTask {
                    task_id,
                    attempt,
                    executor_id,
                    command,
                    locality,
                } => {
                    info!(task = %task_id, attempt, executor = %executor_id, ?locality, "task assigned");
                    let cpus = self.cpus.get(&task_id).copied().unwrap_or(1);
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
                DriverAction::SetDemand(d) => hb.set_demand(model::Demand {
                    target_executors: d.target_executors,
                    locality_aware_tasks: d.locality_aware_tasks,
                    host_to_local_task_count: d.host_to_local_task_count,
                    excluded_hosts: Vec::new(),
                }),
                DriverAction::KillExecutors(ids) => {
                    info!(?ids, "releasing idle executors");
                    self.retiring.extend(ids.iter().cloned());
                    hb.kill(ids);
                }
                DriverAction::JobFinished { summary, .. } => {
                    info!(succeeded = summary.succeeded, "job finished");
                    self.finished = Some(*summary);
                }
            }
        }
    }

    pub fn finished(&self) -> Option<&JobSummary> {
        self.finished.as_ref()
    }

    /// The live report for `/v1/job` and the tracking page.
    pub fn report(&self) -> serde_json::Value {
        let summary = self
            .finished
            .clone()
            .unwrap_or_else(|| self.driver.summary());
        serde_json::to_value(summary).unwrap_or_default()
    }
}
