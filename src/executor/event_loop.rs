//! The executor's loop: poll the AM with what finished and what runs, act on the reply (run,
//! kill, shut down), ride out an AM that does not answer, and follow a next AM attempt.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use tracing::{info, warn};

use super::config::Config;
use super::poll_client::{poll, PollError};
use super::task_process::{collect, run_task, stop_tasks, Ran};
use super::{Exit, STOP_GRACE, TERM_GRACE};
use crate::cluster::next_am::NextAm;
use yarn_am_wire::poll::{PollReply, PollRequest, TaskAssignment, TaskAttempt, TaskResult};

/// The attempts the AM gave this executor, from assignment to acknowledged result.
struct Attempts {
    /// The task runners.
    running: JoinSet<Ran>,
    /// Tells running tasks to stop, with the grace they get between SIGTERM and SIGKILL.
    stop: watch::Sender<Option<Duration>>,
    stopping: watch::Receiver<Option<Duration>>,
    busy_cpus: u32,
    /// Results not yet acknowledged by the AM: sent with every poll until one is answered.
    finished: Vec<TaskResult>,
    /// Attempts started here: an assignment sent twice runs once.
    started: HashSet<TaskAttempt>,
    /// Results the AM received. One assigned again was received by an AM attempt that died
    /// before it recorded it: the next attempt still thinks it runs here and sends it again,
    /// so it is reported again instead of run again (or never reported: a job that never
    /// ends).
    delivered: HashMap<TaskAttempt, TaskResult>,
    /// Attempts started whose result the AM has not received yet: each poll names them, so
    /// the AM can tell an assignment that never arrived from one that runs.
    active: HashSet<TaskAttempt>,
    /// How to kill each running attempt on its own (the AM's `kill`).
    killers: HashMap<TaskAttempt, oneshot::Sender<()>>,
}

impl Attempts {
    fn new() -> Self {
        let (stop, stopping) = watch::channel(None::<Duration>);
        Attempts {
            running: JoinSet::new(),
            stop,
            stopping,
            busy_cpus: 0,
            finished: Vec::new(),
            started: HashSet::new(),
            delivered: HashMap::new(),
            active: HashSet::new(),
            killers: HashMap::new(),
        }
    }

    /// Takes in the results of the runners that ended since the last look.
    fn reap(&mut self) -> anyhow::Result<()> {
        while let Some(done) = self.running.try_join_next() {
            collect(done, &mut self.busy_cpus, &mut self.finished)?;
        }
        for r in &self.finished {
            self.killers.remove(&r.task_attempt());
        }
        Ok(())
    }

    /// The next poll: unacknowledged results, the attempts that run, the cpus left.
    fn request(&self, cfg: &Config) -> PollRequest {
        PollRequest {
            executor_id: cfg.id.clone(),
            host: cfg.host.clone(),
            free_cpus: cfg.cpus.saturating_sub(self.busy_cpus),
            finished: self.finished.clone(),
            running: self.active.iter().cloned().collect(),
        }
    }

    /// The AM answered a poll: it has the results that poll carried.
    fn acknowledged(&mut self) {
        for r in self.finished.drain(..) {
            let key = r.task_attempt();
            self.active.remove(&key);
            self.delivered.insert(key, r);
        }
    }

    /// The AM says kill these attempts (past their time limit).
    fn kill(&mut self, attempts: Vec<TaskAttempt>) {
        for k in attempts {
            match self.killers.remove(&k) {
                Some(kill) => {
                    warn!(task = %k.task_id, attempt = k.attempt, "the AM says kill this attempt (timed out)");
                    let _ = kill.send(());
                }
                None => {
                    info!(task = %k.task_id, attempt = k.attempt, "asked to kill an attempt not running here")
                }
            }
        }
    }

    /// Starts each new assignment; one seen before runs no second time.
    fn assign(&mut self, tasks: Vec<TaskAssignment>, log_dir: &Path) {
        for t in tasks {
            let key = t.task_attempt();
            if !self.started.insert(key.clone()) {
                self.assigned_again(&t, &key);
                continue;
            }
            self.active.insert(key.clone());
            self.busy_cpus += t.cpus;
            let log_dir = log_dir.to_path_buf();
            let stopping = self.stopping.clone();
            let (kill, killed) = oneshot::channel();
            self.killers.insert(key, kill);
            self.running.spawn(async move {
                let cpus = t.cpus;
                (run_task(t, &log_dir, stopping, killed).await, cpus)
            });
        }
    }

    /// An assignment of an attempt started here before: its result goes out again if the AM
    /// had acknowledged it (and it is not on its way already); otherwise it is skipped.
    fn assigned_again(&mut self, t: &TaskAssignment, key: &TaskAttempt) {
        match self.delivered.get(key) {
            Some(r) if !self.finished.iter().any(|f| &f.task_attempt() == key) => {
                warn!(task = %t.task_id, attempt = t.attempt, "assigned again; it already ran here: reporting its result again");
                self.finished.push(r.clone());
            }
            _ => {
                warn!(task = %t.task_id, attempt = t.attempt, "assigned again; already started here")
            }
        }
    }

    /// Stops every running task (see [`stop_tasks`]).
    async fn stop(&mut self, grace: Duration) {
        stop_tasks(&mut self.running, &self.stop, grace).await;
    }

    /// SIGTERM (the NodeManager stopping the container): the tasks go with little grace.
    async fn terminated(&mut self) -> Exit {
        warn!("SIGTERM: stopping {} running task(s)", self.running.len());
        self.stop(TERM_GRACE).await;
        Exit::Terminated
    }
}

/// When the AM last answered, and since when its port has refused every poll, if it does.
struct Contact {
    last: Instant,
    refused_since: Option<Instant>,
}

/// What the loop does after a poll.
enum Step {
    /// Wait for a task to finish or the idle interval, then poll.
    Wait,
    /// Poll again at once (the AM moved).
    PollNow,
    /// The executor is done.
    Exit(Exit),
    /// The executor cannot go on: stop the tasks (SIGTERM, [`TERM_GRACE`]) and fail.
    Fail(anyhow::Error),
}

pub(super) async fn run_executor(
    mut cfg: Config,
    terminate: impl Future<Output = ()>,
) -> anyhow::Result<Exit> {
    // The AM's certificate is pinned; the client speaks only https (see `protocol::tls`).
    let http = crate::cluster::driver_client::pinned_http_client(cfg.tls_pin)
        .timeout(cfg.request_timeout)
        .build()?;
    info!(executor = %cfg.id, url = %cfg.url, cpus = cfg.cpus, "executor starting");
    tokio::pin!(terminate);
    let mut tasks = Attempts::new();
    let mut contact = Contact {
        last: Instant::now(),
        refused_since: None,
    };
    let mut seq = 0u64;
    loop {
        tasks.reap()?;
        let req = tasks.request(&cfg);
        seq += 1;
        let reply = tokio::select! {
            _ = &mut terminate => return Ok(tasks.terminated().await),
            r = poll(&http, &cfg, seq, &req) => r,
        };
        match on_reply(&mut cfg, &mut tasks, &mut contact, reply).await {
            Step::Wait => {}
            Step::PollNow => continue,
            Step::Exit(exit) => return Ok(exit),
            Step::Fail(e) => {
                tasks.stop(TERM_GRACE).await;
                return Err(e);
            }
        }
        // Wake early when a task finishes, so its result goes out at once.
        tokio::select! {
            _ = &mut terminate => return Ok(tasks.terminated().await),
            Some(done) = tasks.running.join_next() => {
                collect(done, &mut tasks.busy_cpus, &mut tasks.finished)?
            }
            _ = tokio::time::sleep(cfg.idle_poll) => {}
        }
    }
}

/// Acts on what one poll brought back.
async fn on_reply(
    cfg: &mut Config,
    tasks: &mut Attempts,
    contact: &mut Contact,
    reply: Result<PollReply, PollError>,
) -> Step {
    if !matches!(reply, Err(PollError::Gone(_))) {
        contact.refused_since = None;
    }
    match reply {
        Ok(reply) => {
            contact.last = Instant::now();
            answered(cfg, tasks, reply).await
        }
        Err(PollError::Refused(why)) => Step::Fail(anyhow::anyhow!(
            "the AM at {} refused this executor: {why}",
            cfg.url
        )),
        Err(PollError::Forged(why)) => Step::Fail(anyhow::anyhow!(
            "refusing the reply from {}: {why}; something else may answer on the AM's port. \
             Nothing in it was run",
            cfg.url
        )),
        Err(PollError::WrongCertificate(why)) => Step::Fail(anyhow::anyhow!(
            "refusing the AM at {}: {why}. Nothing was sent to it",
            cfg.url
        )),
        Err(PollError::Gone(e)) => gone(cfg, contact, e).await,
        Err(PollError::Unreachable(e)) => {
            if contact.last.elapsed() > cfg.am_lost_after {
                return Step::Fail(anyhow::anyhow!(
                    "no answer from the AM at {} for {} s; last error: {e:#}",
                    cfg.url,
                    contact.last.elapsed().as_secs()
                ));
            }
            warn!("poll failed (results kept for the next one): {e:#}");
            Step::Wait
        }
    }
}

/// The AM answered: its results are in, then shut down, or kill and start what it says.
async fn answered(cfg: &Config, tasks: &mut Attempts, reply: PollReply) -> Step {
    tasks.acknowledged();
    if reply.shutdown {
        info!(
            reason = reply.reason.as_deref().unwrap_or("work done"),
            tasks = tasks.running.len(),
            "the AM says shut down"
        );
        tasks.stop(STOP_GRACE).await;
        return Step::Exit(Exit::Done);
    }
    tasks.kill(reply.kill);
    tasks.assign(reply.tasks, &cfg.log_dir);
    Step::Wait
}

/// The AM's port refused the poll: a next AM attempt may have moved, the application may be
/// over, or the AM is gone once this has lasted long enough.
async fn gone(cfg: &mut Config, contact: &mut Contact, e: anyhow::Error) -> Step {
    let since = *contact.refused_since.get_or_insert_with(Instant::now);
    // An AM attempt that died may have a successor: it publishes its address in the staging
    // folder, which goes when the application ends.
    let (limit, next) = match &cfg.staging_dir {
        None => (cfg.am_gone_after, NextAm::Unchanged),
        Some(dir) => (cfg.am_restart_wait, dir.next_am(&cfg.url).await),
    };
    match next {
        NextAm::Moved(url) => {
            info!(old = %cfg.url, new = %url, "the AM moved (a new attempt); polling it");
            cfg.url = url;
            contact.refused_since = None;
            return Step::PollNow;
        }
        NextAm::AppOver => {
            return Step::Fail(anyhow::anyhow!(
                "the AM at {} is gone and the application is over (its staging folder is \
                 gone): {e:#}",
                cfg.url
            ));
        }
        NextAm::Unchanged => {}
    }
    if since.elapsed() >= limit {
        return Step::Fail(anyhow::anyhow!(
            "the AM at {} is gone (connection refused for {} ms): {e:#}",
            cfg.url,
            since.elapsed().as_millis()
        ));
    }
    warn!("the AM's port refuses connections (results kept for the next poll): {e:#}");
    Step::Wait
}
