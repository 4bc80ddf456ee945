//! The AM's brain, sans-IO: everything the loop decides, with time passed in as `now_ms`.
//!
//! [`AmCore`] holds the executor pool (allocator, request table, executor registry), the
//! embedded job if there is one, the heartbeat schedule and the RM-outage count. Because the
//! allocate call runs beside the core instead of inside it, nothing here ever waits on the
//! RM; a batch in flight is safe since the request table lets changes made after it was
//! taken win over it when it is restored.
//!
//! # The calling contract (the quinn-proto shape)
//!
//! The shell (`src/am/event_loop.rs`) owns every socket, channel and clock; the core owns
//! every decision. The shell talks to it in three kinds of call, all taking `now_ms` (the
//! milliseconds since the AM started) where time matters:
//!
//! - **Inputs**, `handle_*`: something happened. [`AmCore::handle_start`] once, after
//!   [`AmCore::handle_adopt`] (executors of an earlier attempt, before the first demand);
//!   then, as they arrive, [`AmCore::handle_command`] (a driver command or executor poll),
//!   [`AmCore::handle_launched`] (a launch report), [`AmCore::handle_allocated`] (an
//!   allocate call came back, with the batch it carried), [`AmCore::handle_nodes_listed`]
//!   (the node list the core asked for), [`AmCore::handle_cluster_look`] (the look at the
//!   cluster it asked for, to say why executors wait), [`AmCore::handle_journaled`] (the
//!   entries from [`AmCore::poll_journal`] were written, durably or not) and
//!   [`AmCore::handle_timeout`] (the time from [`AmCore::poll_timeout`] came).
//! - **Outputs**, `poll_*`: what the shell must do now. Each takes what it returns, so
//!   the shell asks again on every pass: [`AmCore::poll_launches`] (executors to start),
//!   [`AmCore::poll_journal`] (entries to write before those launches start, and before
//!   the key-value writes they carry are answered), [`AmCore::poll_reply`] (answers to
//!   commands, each for the [`ReplyTo`] its command named: the core holds no channel),
//!   [`AmCore::poll_event`] (executor events for the event stream),
//!   [`AmCore::poll_allocate`] (the allocate call to make, when one is due and none is in
//!   flight), [`AmCore::poll_nodes_wanted`] (fetch the RM's node list),
//!   [`AmCore::poll_look_wanted`] (look at the app's queue and the nodes) and
//!   [`AmCore::poll_timeout`] (when to call [`AmCore::handle_timeout`] if nothing arrives).
//! - **Queries**, which change nothing the shell can see: [`AmCore::ending`] and
//!   [`AmCore::drained`] (whether to leave the loop), [`AmCore::view`] (what the API
//!   publishes), [`AmCore::table`] (the newest AMRM token) and [`AmCore::job_summary`].
//!
//! One loop pass is: `poll_reply` and `poll_event` (send them on), `poll_launches`,
//! `poll_journal` (write it, then `handle_journaled` and `poll_reply` again), start the
//! launches; `poll_allocate` if no call is in flight; `poll_nodes_wanted`;
//! `poll_look_wanted`; `poll_event` again and publish `view`; leave if `ending` and `drained`; then wait for the first of the call in flight,
//! `poll_timeout`, a command, a launch report, a node list or a look, and feed it to its
//! `handle_*`.
//!
//! # Files
//!
//! This file holds the core's state, its inputs from the RM and the launcher, and its
//! outputs; `am_core/commands.rs` the driver commands and their answers, `am_core/ending.rs`
//! what every input ends with (`settle`) and the AM's end, `am_core/timers.rs` the timer
//! table and `am_core/rm_outage.rs` the RM-outage count.
//!
//! # Timers
//!
//! Deadlines live in one table, [`Timers`], one slot per [`Timer`] kind: the next heartbeat,
//! the driver's next tick, the next look for silent executors, the end of the drain.
//! [`AmCore::poll_timeout`] is the earliest armed slot; [`AmCore::handle_timeout`] fires
//! what has come due. They come from deadlines, not a fixed round: the driver says when a
//! tick would matter (a locality wait, a backlog timeout, an idle executor), a changed
//! demand or a kill makes the next heartbeat due at once, and otherwise heartbeats follow
//! [`Interval`].
//!
//! # When an app without a job ends
//!
//! An app with an embedded job ends with the job; one driven from outside ends when its
//! driver says so (`POST /v1/finish`). An executors-only app (`submit --executors N
//! --executor-command ...`, no driver) has DistributedShell's semantics unless it was
//! submitted with `--keep-running` ([`Completion`]): every one of its `N` executors must
//! exit 0 once. An executor that exits 0 is not replaced (the target drops by one); one that
//! fails is replaced, and the executor-failure limit ends the app FAILED as for any app; the
//! `N`th exit 0 ends it SUCCEEDED. A driver's first demand hands the app's end to that
//! driver (the rule is off from then on), and with `N` = 0 there is nothing to count, so
//! such an app waits for a driver.
//!
//! Ending is two steps: [`AmCore::ending`] says why the AM will stop; while executors are
//! still running and have not yet been told to stop, polls are answered with "shut down"
//! until [`AmCore::drained`], so that executors exit before the AM unregisters instead of
//! polling a dead address until the NodeManager kills them. An ending AM keeps only the
//! drain's timer.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use tracing::{info, warn};
use yarn_client::amrm::Preemption;
use yarn_client::request_table::AllocateBatch;

use super::events::{job_diagnostics_line, DriverCommand, LaunchReport, Reply, ReplyTo, RmReply};
use super::interval::Interval;
use super::job_run::JobRun;
use super::pool::{Launch, Pool};
use super::preemption::Preempting;
use super::waiting::{ClusterLook, Waiting};
use crate::kv::{KvDesk, KvStore};
use yarn_am_wire::driver_api::{
    self, ExecutorEvent, ExecutorId, FinalOutcome, KillOutcome, KindDeclared, StateView,
};
use yarn_am_wire::poll::PollReply;

mod commands;
mod ending;
mod rm_outage;
mod timers;

pub use rm_outage::RmOutage;
pub use timers::{Timer, Timers};

/// How long the AM rides out an RM that does not answer (Hadoop's RM clients retry for
/// 15 minutes; the AM's executors give up on a silent AM after 2).
pub const RM_OUTAGE_LIMIT: Duration = Duration::from_secs(180);
/// Allocate calls that must fail in a row (besides [`RM_OUTAGE_LIMIT`]) before giving up.
const RM_OUTAGE_CALLS: u32 = 5;
/// The shortest gap between two driver ticks, so that a deadline a tick cannot move (a
/// locality wait with no free slot) does not spin the loop.
const MIN_TICK_GAP_MS: u64 = 20;
/// The least wait after an allocate call that got no answer: a restarting RM refuses
/// connections at once, and a burst of demand changes must not turn into a burst of calls.
const RETRY_GAP_MS: u64 = 1_000;
/// How long an ending AM waits for its executors to hear "shut down" (they poll every
/// 300 ms when idle).
pub const DRAIN_LIMIT: Duration = Duration::from_secs(3);
/// The allocate interval right after a new demand (Spark's first is 200 ms; why shorter:
/// `interval`'s module doc).
const FAST_POLL: Duration = Duration::from_millis(100);
/// At most this many [`FAST_POLL`] calls per demand, whatever the NM heartbeat interval.
const MAX_FAST_POLLS: u128 = 30;
/// How long an executor of the embedded job may go without polling before the AM declares
/// it lost, by default: Spark's `spark.network.timeout` (120 s), which bounds its executor
/// heartbeats the same way. `submit --executor-silence-timeout` changes it.
pub const DEFAULT_EXECUTOR_SILENCE: Duration = Duration::from_secs(120);

/// How an app without a job ends (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Until a driver finishes it or it is killed (`submit --keep-running`).
    KeepRunning,
    /// When every one of the initial executors has exited 0 (DistributedShell's rule).
    ExecutorsSucceed,
}

/// The executors-only rule while it is on: `target` executors must exit 0; `seen` is the
/// registry's count of those that did, as last acted on.
#[derive(Debug, Clone, Copy)]
struct RunToCompletion {
    target: u32,
    seen: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    Killed,
}

/// Why the AM stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Unregister (or not, see `mod.rs`) with this outcome.
    Finish {
        outcome: Outcome,
        diagnostics: String,
    },
    /// The RM no longer accepts this AM or has been gone too long: exit with an error
    /// without unregistering (the RM would not take it).
    Abort(String),
}

pub struct AmCore {
    pool: Pool,
    job: Option<JobRun>,
    interval: Interval,
    timers: Timers,
    /// An allocate call is out; its batch is not in the request table.
    in_flight: bool,
    /// The next heartbeat should go out as soon as the one in flight is back.
    urgent: bool,
    /// No call before this (the last one got no answer): a floor under
    /// [`Timer::Heartbeat`], not a deadline of its own (nothing happens when it passes).
    retry_at_ms: u64,
    outage: RmOutage,
    max_executor_failures: usize,
    last_tick_ms: u64,
    ending: Option<Ending>,
    /// Executors answered "shut down".
    told_to_stop: HashSet<ExecutorId>,
    /// An executor of the embedded job silent this long is declared lost.
    silence_limit_ms: u64,
    /// How an app without a job ends ([`Self::with_completion`]).
    completion: Completion,
    /// The executors-only rule, on from [`Self::handle_start`] when `completion` asks for it.
    to_completion: Option<RunToCompletion>,
    /// The default kind's initial executors an app without a job asked at the start.
    initial: u32,
    /// The last progress an external driver reported (`POST /v1/progress`).
    reported_progress: Option<f32>,
    /// How long executors have waited for a grant, and why (see [`super::waiting`]).
    waiting: Waiting,
    /// The key-value store, with the writes waiting for their journal entries.
    kv: KvDesk,
    /// What the AM gave back on the RM's preemption requests (see [`super::preemption`]).
    preempting: Preempting,
    /// Answers to commands, for the shell to send on ([`Self::poll_reply`]).
    replies: VecDeque<(ReplyTo, Reply)>,
}

impl AmCore {
    /// `idle_heartbeat`: the interval with nothing outstanding; `initial`: the executors to
    /// hold when there is no embedded job (a driver may post its own demand later).
    pub fn new(
        pool: Pool,
        job: Option<JobRun>,
        idle_heartbeat: Duration,
        max_executor_failures: usize,
    ) -> Self {
        let mut timers = Timers::default();
        // The first heartbeat is due at once; with a job, silent executors are looked for
        // from the start (`check_silence` then sets the next look).
        timers.set(Timer::Heartbeat, Some(0));
        timers.set(Timer::Silence, job.is_some().then_some(0));
        let mut core = Self {
            pool,
            job,
            // 100 ms steps for a while after a demand ([`Self::with_grant_window`]), then
            // Spark's doubling (why: `interval`'s module doc).
            interval: Interval::new(FAST_POLL, idle_heartbeat).with_steady(3),
            timers,
            in_flight: false,
            urgent: false,
            retry_at_ms: 0,
            outage: RmOutage::new(RM_OUTAGE_CALLS, RM_OUTAGE_LIMIT),
            max_executor_failures,
            last_tick_ms: 0,
            ending: None,
            told_to_stop: HashSet::new(),
            silence_limit_ms: DEFAULT_EXECUTOR_SILENCE.as_millis() as u64,
            completion: Completion::KeepRunning,
            to_completion: None,
            initial: 0,
            reported_progress: None,
            waiting: Waiting::default(),
            kv: KvDesk::default(),
            preempting: Preempting::default(),
            replies: VecDeque::new(),
        };
        core.arm_driver_tick();
        core
    }

    /// Declares executors of the embedded job lost after `limit` without a poll (counted
    /// from their launch until the first one).
    pub fn with_executor_silence(mut self, limit: Duration) -> Self {
        self.silence_limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX).max(1);
        self
    }

    /// Polls every [`FAST_POLL`] for `window` after a new demand before the doubling starts:
    /// one NodeManager heartbeat interval, within which an idle cluster grants (the grant then
    /// waits at the RM for our next call). The default window is 0.3 s.
    pub fn with_grant_window(mut self, window: Duration) -> Self {
        let steps = window.as_millis().div_ceil(FAST_POLL.as_millis()) + 1;
        self.interval = self
            .interval
            .clone()
            .with_steady(steps.min(MAX_FAST_POLLS) as u32);
        self
    }

    /// The key-value store to serve, e.g. as replayed from an earlier attempt's journal.
    pub fn with_kv(mut self, store: KvStore) -> Self {
        self.kv = KvDesk::new(store);
        self
    }

    /// How an app without a job ends (the default: [`Completion::KeepRunning`]); set before
    /// [`Self::handle_start`]. Ignored with an embedded job, which ends with its job.
    pub fn with_completion(mut self, completion: Completion) -> Self {
        self.completion = completion;
        self
    }

    /// The first step: the job's first demand, or `initial` executors without a job (with
    /// [`Completion::ExecutorsSucceed`], the ones that must exit 0 for the app to succeed).
    /// With several executor kinds, each kind asks its own initial executors too.
    pub fn handle_start(&mut self, now_ms: u64, initial: u32) {
        match self.job.as_mut() {
            Some(j) => j.tick(now_ms, &mut self.pool),
            None => {
                let total = self.pool.ask_initial(now_ms, initial);
                self.initial = initial;
                if self.completion == Completion::ExecutorsSucceed && total > 0 {
                    self.to_completion = Some(RunToCompletion {
                        target: total,
                        seen: self.pool.registry.succeeded(),
                    });
                }
            }
        }
        self.settle(now_ms);
    }

    /// A launch finished (either way).
    pub fn handle_launched(&mut self, now_ms: u64, report: LaunchReport) {
        self.pool.on_launch(now_ms, report);
        self.settle(now_ms);
    }

    /// Time passed (the loop calls this when [`Self::poll_timeout`] comes, and may call it
    /// at any time): ticks the driver once its own deadline came (the minimum gap only
    /// delays the wake-up, see [`Self::arm_driver_tick`]); silent executors are looked for in
    /// `settle` when [`Timer::Silence`] expired. [`Timer::Heartbeat`] is fired by
    /// [`Self::poll_allocate`], [`Timer::Drain`] is read by [`Self::drained`].
    pub fn handle_timeout(&mut self, now_ms: u64) {
        if let Some(j) = self.job.as_mut() {
            if j.next_deadline_ms().is_some_and(|d| d <= now_ms) {
                self.last_tick_ms = now_ms;
                j.tick(now_ms, &mut self.pool);
            }
        }
        self.settle(now_ms);
    }

    /// Arms [`Timer::DriverTick`] from the job's own deadline, no sooner than
    /// `MIN_TICK_GAP_MS` after the last tick, so that a deadline a tick cannot move does not
    /// spin the loop. Called after every input that may change the job.
    fn arm_driver_tick(&mut self) {
        let at = match (&self.ending, &self.job) {
            (None, Some(j)) => j
                .next_deadline_ms()
                .map(|d| d.max(self.last_tick_ms + MIN_TICK_GAP_MS)),
            _ => None,
        };
        self.timers.set(Timer::DriverTick, at);
    }

    /// Arms [`Timer::Heartbeat`] for `at_ms`, not before the retry gap, unless a call is in
    /// flight (its return arms it) or the AM is ending (it makes no more calls).
    fn arm_heartbeat(&mut self, at_ms: u64) {
        let at = (!self.in_flight && self.ending.is_none()).then(|| at_ms.max(self.retry_at_ms));
        self.timers.set(Timer::Heartbeat, at);
    }

    /// Executors of the embedded job that have not polled for the silence limit are lost:
    /// their containers go back and their tasks run elsewhere (`settle` tells the driver).
    /// Only the embedded job's executors poll the AM (an external driver's run its own
    /// command and report to that driver, which judges their liveness itself and kills
    /// through `POST /v1/executors/kill`), so without a job nothing is checked. Nor while
    /// the AM is ending: silence then is the drain's business.
    fn check_silence(&mut self, now_ms: u64) {
        if self.job.is_none()
            || self.ending.is_some()
            || !self.timers.expired(Timer::Silence, now_ms)
        {
            return;
        }
        let (_, next) = self.pool.declare_silent_lost(now_ms, self.silence_limit_ms);
        // Every later "heard" is at `now_ms` or after, so this is never too late.
        let next = next.unwrap_or_else(|| now_ms.saturating_add(self.silence_limit_ms));
        self.timers.set(Timer::Silence, Some(next));
    }

    /// The allocate call to make now, if one is due (none while another is in flight or
    /// once the AM is ending).
    pub fn poll_allocate(&mut self, now_ms: u64) -> Option<AllocateBatch> {
        if self.in_flight || self.ending.is_some() || !self.timers.expired(Timer::Heartbeat, now_ms)
        {
            return None;
        }
        self.in_flight = true;
        self.urgent = false;
        self.timers.set(Timer::Heartbeat, None);
        let batch = self.pool.heartbeat(now_ms);
        if !batch.asks.is_empty() {
            // Tests measure the first request's timing from this line.
            info!(asks = batch.asks.len(), "asking the RM for containers");
        }
        self.settle(now_ms);
        Some(batch)
    }

    /// The allocate call made with `batch` came back.
    pub fn handle_allocated(&mut self, now_ms: u64, batch: AllocateBatch, reply: RmReply) {
        self.in_flight = false;
        match reply {
            RmReply::Allocated(mut resp) => {
                self.outage.answered();
                if !resp.allocated.is_empty() {
                    self.waiting.granted(now_ms);
                }
                let preemption = resp.preemption.take();
                self.pool.allocated(now_ms, *resp);
                if let Some(ask) = preemption {
                    self.answer_preemption(now_ms, &ask);
                }
            }
            RmReply::Failed { error, answered } => {
                warn!(%error, "allocate failed; retrying on the next heartbeat");
                self.pool.table.restore_batch(batch);
                if answered {
                    self.outage.answered();
                } else {
                    self.retry_at_ms = now_ms + RETRY_GAP_MS;
                    if let Some(why) = self.outage.failed(now_ms, &error) {
                        let why = format!("lost the ResourceManager: {why}");
                        self.end(now_ms, Ending::Abort(why));
                    }
                }
            }
            RmReply::Reregistered { nm_tokens } => {
                self.outage.answered();
                self.pool.table.on_registered(nm_tokens);
                self.pool.table.resync(Some(batch));
                // Everything goes out again at once.
                self.urgent = true;
            }
            RmReply::Refused(why) => self.end(
                now_ms,
                Ending::Abort(format!(
                    "the ResourceManager stopped accepting this AM: {why}"
                )),
            ),
        }
        let wait = self.interval.next(self.pool.has_pending());
        self.arm_heartbeat(now_ms + wait.as_millis() as u64);
        self.settle(now_ms);
    }

    /// The RM asks for resources back: gives back the executors that cost least (see
    /// [`super::preemption`]) before it kills what it marked.
    fn answer_preemption(&mut self, now_ms: u64, ask: &Preemption) {
        let job = self.job.as_ref();
        let candidates = self
            .pool
            .give_back_candidates(|id| job.and_then(|j| j.work_at_stake(id, now_ms)));
        let (memory_mb, vcores) = self.pool.executor_size();
        let answer = self
            .preempting
            .answer(now_ms, ask, &candidates, memory_mb, vcores);
        info!(
            strict = ask.strict.len(),
            named = ask.containers.len(),
            asked = ?ask.resources,
            giving_back = answer.executors.len(),
            "the RM asks for resources back (preemption)"
        );
        if let Some(j) = self.job.as_mut() {
            for (id, _) in &answer.executors {
                j.giving_back(*id);
            }
        }
        self.pool.give_back(now_ms, answer.executors);
    }

    /// Executors of the job on decommissioning nodes get no new task; once one runs none it
    /// is given back (its replacement was asked for when the node started draining).
    fn drain_idle(&mut self, now_ms: u64) {
        let Some(j) = self.job.as_mut() else {
            return;
        };
        let idle: Vec<_> = self
            .pool
            .draining_executors()
            .into_iter()
            .filter(|&id| j.draining(id, now_ms))
            .map(|id| {
                let why = "its node is decommissioning: given back once idle; not counted";
                (id, why.to_string())
            })
            .collect();
        if !idle.is_empty() {
            self.pool.give_back(now_ms, idle);
        }
    }

    /// The executors to start now; none once the AM is ending (its containers go back to
    /// YARN with the unregistration).
    pub fn poll_launches(&mut self) -> Vec<Launch> {
        let launches = self.pool.take_launches();
        if self.ending.is_some() {
            return Vec::new();
        }
        launches
    }

    /// When the loop must call [`Self::handle_timeout`] (and then [`Self::poll_allocate`]
    /// and [`Self::drained`]) even if nothing arrives: the earliest armed [`Timer`].
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.next()
    }

    /// Whether the loop should fetch the RM's node list (a container on a host of unknown
    /// rack); the answer goes to [`Self::handle_nodes_listed`].
    pub fn poll_nodes_wanted(&mut self) -> bool {
        self.pool.take_nodes_wanted()
    }

    /// Whether the shell should look at the cluster (the app's queue, the node list) to
    /// say why executors wait; the answer goes to [`Self::handle_cluster_look`]. Asked on
    /// every pass: it also follows how long requests have waited.
    pub fn poll_look_wanted(&mut self, now_ms: u64) -> bool {
        self.waiting.observe(now_ms, self.pool.pending_count());
        self.ending.is_none() && self.waiting.look_wanted(now_ms)
    }

    /// The look at the cluster came back (`None`: it failed).
    pub fn handle_cluster_look(&mut self, now_ms: u64, look: Option<&ClusterLook>) {
        let ask = self.pool.waiting_ask();
        self.waiting.looked(now_ms, look, &ask);
    }

    /// The RM's node list, fetched again off the loop (`None`: the fetch failed).
    pub fn handle_nodes_listed(
        &mut self,
        now_ms: u64,
        nodes: Option<&[yarn_client::rest::NodeInfo]>,
    ) {
        self.pool.nodes_listed(now_ms, nodes);
        self.arm_driver_tick();
    }

    /// The NM-token and AMRM-token state, e.g. the newest AMRM token for a fresh session.
    pub fn table(&self) -> &yarn_client::request_table::AmrmState {
        &self.pool.table
    }

    /// Journal entries since the last call: executors launched (from `launches`, which the
    /// loop is about to start) and the job's task launches and outcomes.
    pub fn poll_journal(&mut self, launches: &[Launch]) -> Vec<crate::driver::journal::Entry> {
        use crate::driver::journal::Entry;
        let mut out: Vec<Entry> = launches
            .iter()
            .map(|l| Entry::Executor {
                id: l.executor,
                container: l.container.id.clone(),
                host: l.container.host.clone(),
            })
            .collect();
        if let Some(j) = self.job.as_mut() {
            out.extend(j.take_journal());
        }
        out.extend(self.kv.take_journal());
        self.arm_driver_tick();
        out
    }

    /// The shell wrote the entries [`Self::poll_journal`] returned: durably (`journaled`),
    /// or not. The key-value writes' answers held for them are queued for
    /// [`Self::poll_reply`] now, or "not journaled" in their place when the shell could not.
    pub fn handle_journaled(&mut self, journaled: bool) {
        for (to, answer) in self.kv.take_acks(journaled) {
            self.reply(to, answer);
        }
    }

    /// The next answer to a caller, by the [`ReplyTo`] its command named: a command's
    /// answer right after [`Self::handle_command`] (a key-value write's after
    /// [`Self::handle_journaled`]). The shell drains these before it writes the journal, so
    /// that a poll reply goes out before the task starts it carries are written (a crash in
    /// between only reruns that task).
    pub fn poll_reply(&mut self) -> Option<(ReplyTo, Reply)> {
        self.replies.pop_front()
    }

    /// The next executor event for the event stream (`GET /v1/events`), oldest first; the
    /// shell drains them on every pass, before it publishes [`Self::view`].
    pub fn poll_event(&mut self) -> Option<ExecutorEvent> {
        self.pool.registry.poll_event()
    }

    /// The key-value store's revision, which the shell publishes to wake watches.
    pub fn kv_revision(&self) -> u64 {
        self.kv.store().revision()
    }

    /// Takes over the executors of an earlier attempt that YARN handed back (see
    /// [`Pool::adopt`]) with the attempts the journal says they run (`in_flight`, see
    /// [`JobRun::adopt`]); returns how many.
    pub fn handle_adopt(
        &mut self,
        now_ms: u64,
        containers: &[yarn_client::amrm::AllocatedContainer],
        ids: &std::collections::HashMap<String, ExecutorId>,
        in_flight: &[(crate::ids::TaskAttempt, ExecutorId)],
    ) -> usize {
        let adopted = self.pool.adopt(now_ms, containers, ids);
        if let Some(j) = self.job.as_mut() {
            j.adopt(now_ms, &adopted, in_flight, &mut self.pool);
        }
        self.arm_driver_tick();
        adopted.len()
    }

    /// How far the app has come, 0 to 1, as the AM tells the RM on every allocate call (the
    /// RM's UI and REST show it) and the read endpoints show it: the embedded job's
    /// succeeded tasks over all; else what an external driver last reported; else, for an
    /// executors-only app that ends with its executors, those that exited 0 over those
    /// that must. An app that runs until it is told to stop has no measure: 0.
    pub fn progress(&mut self) -> f32 {
        if let Some(j) = self.job.as_mut() {
            return j.report().done_fraction();
        }
        if let Some(p) = self.reported_progress {
            return p;
        }
        match self.to_completion {
            Some(rule) if rule.target > 0 => (rule.seen as f32 / rule.target as f32).min(1.0),
            _ => 0.0,
        }
    }

    /// What the read endpoints show now.
    pub fn view(&mut self) -> StateView {
        let mut v = self.pool.view();
        v.progress = self.progress();
        v.waiting = self.waiting.view();
        v.held_back_hosts = self.pool.held_view();
        v.preemption = driver_api::PreemptionView {
            asks: self.preempting.asks,
            given_back: self.preempting.given_back,
        };
        v.job = self.job.as_mut().map(JobRun::report);
        self.arm_driver_tick();
        v
    }

    /// The embedded job, if any (for the loop-pass bench's reference computation and the
    /// core's tests).
    #[cfg(any(test, feature = "bench"))]
    pub fn job(&self) -> Option<&JobRun> {
        self.job.as_ref()
    }

    /// The executor registry (for the loop-pass bench).
    #[cfg(feature = "bench")]
    pub fn pool_registry(&self) -> &super::registry::Registry {
        &self.pool.registry
    }

    /// The container executor `id` runs in, the tracker's (for the loop-pass bench).
    #[cfg(feature = "bench")]
    pub fn container_of(&self, id: ExecutorId) -> Option<String> {
        self.pool.container_of(id)
    }

    /// The whole job summary once it is over, for the report file.
    pub fn job_summary(&self) -> Option<&crate::driver::report::JobSummary> {
        self.job.as_ref().and_then(JobRun::finished)
    }
}

#[cfg(test)]
#[path = "am_core_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "am_core_hosts_tests.rs"]
mod hosts_tests;

#[cfg(test)]
#[path = "am_core_kinds_tests.rs"]
mod kinds_tests;
