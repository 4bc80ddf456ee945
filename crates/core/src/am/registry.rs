//! The AM's record of every executor it launched: what the driver API shows and streams.
//!
//! One owner per fact. The allocator's tracker owns which container each executor runs in
//! and its launch phase (starting, running), from the launch until YARN reports the
//! container completed, given back or not ([`Allocator::container_of`],
//! [`Allocator::executor_of`]); the registry keeps only what it alone knows: the host and
//! rack YARN placed the executor on and at which locality, when the AM last heard from it,
//! how it ended (exit status, reason, whether it counts against the app), and the bounded
//! history of exited executors for `GET /v1/executors`, loss reasons and the event stream,
//! long after the tracker has forgotten a finished container. Its methods take executor
//! ids; the pool translates containers through the tracker and hands the registry the
//! tracker's container and phase where an event or the published list shows them.
//!
//! **Is this executor live?** The registry answers ([`Registry::is_live`],
//! [`Registry::live_host`], [`Registry::live_ids`]): live means launched (or adopted) and
//! not exited, and the exit is the registry's fact. An executor exits when YARN reports its
//! container completed, or earlier when the AM gives up on it (silence, a failed launch).
//! A killed executor stays live until YARN reports its container completed (it may still
//! poll and finish its work meanwhile), while the tracker stops counting it towards the
//! target at once (the allocator replaces it without waiting): "counts towards the target"
//! is the tracker's question, "live" the registry's; the executor is still known to the
//! tracker (`is_releasing`) in between.
//!
//! Bounded for long apps: live executors are always kept, finished ones only the last
//! [`FINISHED_KEPT`] (older ones are forgotten, in the order they finished), and the recent
//! events the last [`RECENT_EVENTS`]. The failure count stays exact across forgetting.
//!
//! Published cheaply: the AM loop publishes the executor list after every event, at 10,000
//! executors too, so each executor's view is kept behind an `Arc`, and the list ([`Listed`])
//! is kept in chunks of [`LISTED_CHUNK`] ids: after a change, only the views of the
//! executors that changed are rendered again, and the chunks they are in copied again (as
//! pointers), then the chunk pointers. A live executor's view is rendered from the tracker's
//! container and phase at publication; the published copy is output, never asked.
//!
//! Streamed by the shell: each event waits in an outbox until the shell takes it
//! ([`Registry::poll_event`], every loop pass) and sends it to the event stream's
//! subscribers; the registry holds no channel.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use crate::allocator::exit_status::classify;
use crate::allocator::matching::Locality as MatchLevel;
use crate::allocator::tracker::{Allocator, Phase};
use crate::ids::ExecutorId;

use yarn_am_wire::driver_api::{
    ExecutorEvent, ExecutorState, ExecutorView, Listed, Locality, Retention, LISTED_CHUNK,
};

/// Events kept for the tracking page and `GET /v1/state`.
const RECENT_EVENTS: usize = 50;

/// Finished executors kept for `GET /v1/executors` and loss reasons.
pub const FINISHED_KEPT: usize = 1000;

/// What the tracker says of a live executor (its container and launch phase), handed to
/// the registry where it shows them; the registry does not keep them.
#[derive(Debug, Clone, Copy)]
pub struct Held<'a> {
    pub container: &'a str,
    pub phase: Phase,
}

impl<'a> Held<'a> {
    /// The tracker's record of `id`, if it still knows the executor.
    pub fn of(allocator: &'a Allocator, id: ExecutorId) -> Option<Self> {
        allocator.container_of(id).map(|(c, phase)| Held {
            container: c,
            phase,
        })
    }
}

/// Where YARN placed a live executor: the registry's own facts about it.
#[derive(Debug, Clone)]
struct Placed {
    host: String,
    rack: String,
    locality: Locality,
    node_http_address: Option<String>,
    granted: Granted,
}

/// What an executor's container is beyond its size, for the API: its kind (apps with
/// several) and the countable resources YARN granted it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Granted {
    pub kind: Option<String>,
    pub resources: std::collections::BTreeMap<String, i64>,
}

#[derive(Debug, Clone)]
enum Record {
    Live(Placed),
    /// Its final view (container as it was at the exit), kept for the API's history.
    Exited(Arc<ExecutorView>),
}

pub struct Registry {
    executors: BTreeMap<ExecutorId, Record>,
    /// Finished executors still kept, oldest first.
    finished: VecDeque<ExecutorId>,
    recent: VecDeque<Arc<ExecutorEvent>>,
    /// Events not yet taken by the shell ([`Self::poll_event`]), oldest first.
    outbox: VecDeque<ExecutorEvent>,
    retention: Retention,
    /// Executors that counted against the app, forgotten ones included.
    failures: u32,
    /// Executors whose container YARN reported completed with exit status 0, the AM not
    /// having given it back: done with their work (forgotten ones included).
    succeeded: u32,
    /// The list last published; `None` after a change.
    listed: Option<Listed<ExecutorView>>,
    /// The published list's chunks, by chunk number (id / [`LISTED_CHUNK`]).
    chunks: BTreeMap<u64, Arc<[Arc<ExecutorView>]>>,
    /// Executors whose view changed (or that were added or forgotten) since the list was
    /// last published: rendered again, their chunks rebuilt.
    stale: BTreeSet<ExecutorId>,
    /// The recent events last published; `None` after a new one.
    listed_recent: Option<Listed<ExecutorEvent>>,
    /// Live executors: when the AM last heard from each (its launch until its first poll),
    /// in the core's `now_ms`; what declares a silent executor lost (see `AmCore`).
    last_heard: HashMap<ExecutorId, u64>,
    /// Executors that exited since [`Self::take_exits`] last ran: the driver hears of each
    /// once, as an event, instead of diffing the live list.
    exits: Vec<ExecutorId>,
    /// Live executors the AM gave back for a reason worth showing (the RM's preemption
    /// request): their exit says so instead of the plain "released".
    given_back: HashMap<ExecutorId, String>,
}

fn level(l: MatchLevel) -> Locality {
    match l {
        MatchLevel::Node => Locality::Node,
        MatchLevel::Rack => Locality::Rack,
        MatchLevel::Any => Locality::Any,
    }
}

fn state(phase: Phase) -> ExecutorState {
    match phase {
        Phase::Starting => ExecutorState::Starting,
        Phase::Running => ExecutorState::Running,
    }
}

/// A live executor's view: the registry's placement with the tracker's container and phase.
fn render(id: ExecutorId, p: &Placed, held: Held<'_>) -> ExecutorView {
    ExecutorView {
        id,
        container_id: held.container.to_string(),
        host: p.host.clone(),
        rack: p.rack.clone(),
        locality: p.locality,
        state: state(held.phase),
        exit_status: None,
        reason: None,
        counts_against_app: None,
        node_http_address: p.node_http_address.clone(),
        kind: p.granted.kind.clone(),
        resources: p.granted.resources.clone(),
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    pub fn new() -> Self {
        Self {
            executors: BTreeMap::new(),
            finished: VecDeque::new(),
            recent: VecDeque::new(),
            outbox: VecDeque::new(),
            retention: Retention {
                finished_kept: FINISHED_KEPT as u64,
                ..Retention::default()
            },
            failures: 0,
            succeeded: 0,
            listed: None,
            chunks: BTreeMap::new(),
            stale: BTreeSet::new(),
            listed_recent: None,
            last_heard: HashMap::new(),
            exits: Vec::new(),
            given_back: HashMap::new(),
        }
    }

    /// Executor `id`'s view changed (or it was added or forgotten): it is rendered again,
    /// and its chunk of the published list built again, on the next [`Self::views`].
    fn changed(&mut self, id: ExecutorId) {
        self.listed = None;
        self.stale.insert(id);
    }

    fn emit(&mut self, ev: ExecutorEvent) {
        self.listed_recent = None;
        self.recent.push_back(Arc::new(ev.clone()));
        if self.recent.len() > RECENT_EVENTS {
            self.recent.pop_front();
        }
        self.outbox.push_back(ev);
    }

    /// The oldest event the shell has not taken yet, for the event stream. The shell takes
    /// them all on every loop pass, so the outbox holds only what one input caused.
    pub fn poll_event(&mut self) -> Option<ExecutorEvent> {
        self.outbox.pop_front()
    }

    /// Where live executor `id`'s NodeManager serves its logs (from the grant).
    pub fn serves_logs_at(&mut self, id: ExecutorId, node_http_address: &str) {
        if node_http_address.is_empty() {
            return;
        }
        if let Some(Record::Live(p)) = self.executors.get_mut(&id) {
            p.node_http_address = Some(node_http_address.to_string());
            self.changed(id);
        }
    }

    /// Executor `id` was launched (or adopted) on `host`, in the container and phase the
    /// tracker gave it (`held`).
    pub fn launching(
        &mut self,
        id: ExecutorId,
        host: &str,
        rack: &str,
        at: MatchLevel,
        held: Held<'_>,
        granted: Granted,
    ) {
        let placed = Placed {
            host: host.to_string(),
            rack: rack.to_string(),
            locality: level(at),
            node_http_address: None,
            granted,
        };
        let view = render(id, &placed, held);
        self.executors.insert(id, Record::Live(placed));
        self.changed(id);
        self.retention.last_id = self.retention.last_id.max(id);
        self.emit(ExecutorEvent::Added { executor: view });
    }

    pub fn is_live(&self, id: ExecutorId) -> bool {
        self.live_host(id).is_some()
    }

    /// The host YARN placed a live executor on: what the driver should believe, rather than
    /// the host the executor process says it is on.
    pub fn live_host(&self, id: ExecutorId) -> Option<&str> {
        match self.executors.get(&id)? {
            Record::Live(p) => Some(p.host.as_str()),
            Record::Exited(_) => None,
        }
    }

    /// Executors not yet exited.
    pub fn live_ids(&self) -> impl Iterator<Item = ExecutorId> + '_ {
        self.executors
            .iter()
            .filter(|(_, r)| matches!(r, Record::Live(_)))
            .map(|(id, _)| *id)
    }

    /// The tracker saw live executor `id` start (`held`: its container, now running).
    pub fn running(&mut self, id: ExecutorId, held: Held<'_>) {
        if let Some(Record::Live(p)) = self.executors.get(&id) {
            let executor = render(id, p, held);
            self.changed(id);
            self.emit(ExecutorEvent::Updated { executor });
        }
    }

    /// The AM heard from a live executor at `now_ms` (launched it, or got its poll).
    pub fn heard(&mut self, id: ExecutorId, now_ms: u64) {
        if self.is_live(id) {
            let at = self.last_heard.entry(id).or_insert(now_ms);
            *at = (*at).max(now_ms);
        }
    }

    /// The live executors not heard from for `limit_ms`, with how long each has been silent
    /// (those whose containers the AM is already giving back aside: `releasing`, the
    /// tracker's), and the earliest time another one could become silent.
    pub fn silent(
        &self,
        now_ms: u64,
        limit_ms: u64,
        releasing: impl Fn(ExecutorId) -> bool,
    ) -> (Vec<(ExecutorId, u64)>, Option<u64>) {
        let mut silent = Vec::new();
        let mut next: Option<u64> = None;
        for (&id, &at) in &self.last_heard {
            if releasing(id) {
                continue;
            }
            let due = at.saturating_add(limit_ms);
            if due <= now_ms {
                silent.push((id, now_ms - at));
            } else {
                next = Some(next.map_or(due, |n| n.min(due)));
            }
        }
        silent.sort_unstable();
        (silent, next)
    }

    /// The AM gave up on a live executor (it went silent): it is gone now for the driver
    /// and the API, with `reason`, not counted against the app; its container's completion,
    /// when YARN reports it, changes nothing more. `container`: the tracker's.
    pub fn declare_lost(&mut self, id: ExecutorId, container: &str, reason: &str) {
        self.exited(id, container, None, reason.to_string(), false);
    }

    /// The AM is giving live executor `id` back for `reason` (shown as its exit reason once
    /// YARN reports the container completed; it never counts against the app).
    pub fn giving_back(&mut self, id: ExecutorId, reason: String) {
        if self.is_live(id) {
            self.given_back.insert(id, reason);
        }
    }

    /// Whether the AM gave live executor `id` back (or its node is going): its end does not
    /// count against the app.
    pub fn is_given_back(&self, id: ExecutorId) -> bool {
        self.given_back.contains_key(&id)
    }

    /// Launch failed before the container ran anything.
    /// `released`: the AM had already given the container back (a kill while it was
    /// starting); its launch failing then is our doing, so it does not count against the app.
    pub fn launch_failed(&mut self, id: ExecutorId, container: &str, error: &str, released: bool) {
        self.exited(
            id,
            container,
            None,
            format!("launch failed: {error}"),
            !released,
        );
    }

    /// YARN reported executor `id`'s container completed; `released`: the AM had given it
    /// back (the tracker's), so whatever the status says, it does not count against the app.
    pub fn completed(
        &mut self,
        id: ExecutorId,
        container: &str,
        exit_status: i32,
        diagnostics: &str,
        released: bool,
    ) {
        let (reason, counts) = if released {
            let why = self.given_back.remove(&id);
            (why.unwrap_or_else(|| RELEASED_REASON.to_string()), false)
        } else {
            let v = classify(exit_status, diagnostics);
            (v.reason, v.counts_against_app)
        };
        if !released && exit_status == 0 && self.is_live(id) {
            self.succeeded = self.succeeded.saturating_add(1);
        }
        self.exited(id, container, Some(exit_status), reason, counts);
    }

    fn exited(
        &mut self,
        id: ExecutorId,
        container: &str,
        status: Option<i32>,
        reason: String,
        counts: bool,
    ) {
        self.given_back.remove(&id);
        let Some(Record::Live(p)) = self.executors.get(&id) else {
            return;
        };
        let executor = ExecutorView {
            id,
            container_id: container.to_string(),
            host: p.host.clone(),
            rack: p.rack.clone(),
            locality: p.locality,
            state: ExecutorState::Exited,
            exit_status: status,
            reason: Some(reason),
            counts_against_app: Some(counts),
            node_http_address: p.node_http_address.clone(),
            kind: p.granted.kind.clone(),
            resources: p.granted.resources.clone(),
        };
        self.executors
            .insert(id, Record::Exited(Arc::new(executor.clone())));
        self.last_heard.remove(&id);
        if counts {
            self.failures = self.failures.saturating_add(1);
        }
        self.exits.push(id);
        self.finished.push_back(id);
        self.changed(id);
        self.emit(ExecutorEvent::Removed { executor });
        self.forget_oldest_finished();
    }

    /// Drops the oldest finished executors beyond [`FINISHED_KEPT`], keeping the failure
    /// count exact. A late duplicate completion of a forgotten container is then ignored,
    /// as for any unknown container.
    fn forget_oldest_finished(&mut self) {
        while self.finished.len() > FINISHED_KEPT {
            let Some(id) = self.finished.pop_front() else {
                break;
            };
            if self.executors.remove(&id).is_some() {
                self.retention.forgotten += 1;
                self.changed(id);
            }
        }
    }

    /// The executors that exited since the last call, in the order they did, each once.
    pub fn take_exits(&mut self) -> Vec<ExecutorId> {
        std::mem::take(&mut self.exits)
    }

    /// What the registry has forgotten, for the API's answer about an old executor.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// Every executor kept, by id, live ones with the container and phase the tracker
    /// (`allocator`) has for them: the list last published when nothing changed since,
    /// else one that shares the chunks nothing changed in with it, and the views of the
    /// executors that did not change.
    pub fn views(&mut self, allocator: &Allocator) -> Listed<ExecutorView> {
        self.views_with(|id| Held::of(allocator, id))
    }

    pub fn views_with<'a>(
        &mut self,
        held: impl Fn(ExecutorId) -> Option<Held<'a>>,
    ) -> Listed<ExecutorView> {
        if let Some(listed) = &self.listed {
            return listed.clone();
        }
        let size = LISTED_CHUNK as u64;
        let stale = std::mem::take(&mut self.stale);
        let mut chunks: Vec<u64> = stale.iter().map(|id| id.get() / size).collect();
        chunks.dedup();
        for k in chunks {
            let ids = ExecutorId::new(k * size)..ExecutorId::new((k + 1) * size);
            let old = self.chunks.remove(&k);
            let mut old = old.iter().flat_map(|c| c.iter()).peekable();
            let chunk: Arc<[Arc<ExecutorView>]> = self
                .executors
                .range(ids)
                .map(|(&id, r)| {
                    while old.next_if(|v| v.id < id).is_some() {}
                    match r {
                        Record::Exited(v) => v.clone(),
                        Record::Live(p) => match old.peek() {
                            Some(v) if v.id == id && !stale.contains(&id) => (*v).clone(),
                            _ => Arc::new(match held(id) {
                                Some(h) => render(id, p, h),
                                // The tracker knows every live executor (the pool's
                                // property test checks it); shown as starting otherwise.
                                None => render(
                                    id,
                                    p,
                                    Held {
                                        container: "",
                                        phase: Phase::Starting,
                                    },
                                ),
                            }),
                        },
                    }
                })
                .collect();
            if !chunk.is_empty() {
                self.chunks.insert(k, chunk);
            }
        }
        let listed = Listed::from_chunks(self.chunks.values().cloned());
        self.listed = Some(listed.clone());
        listed
    }

    /// An exited executor's view, if it is kept.
    pub fn exited_view(&self, id: ExecutorId) -> Option<&ExecutorView> {
        match self.executors.get(&id)? {
            Record::Exited(v) => Some(v),
            Record::Live(_) => None,
        }
    }

    /// The exited executors kept, by id.
    pub fn exited_views(&self) -> impl DoubleEndedIterator<Item = &ExecutorView> {
        self.executors.values().filter_map(|r| match r {
            Record::Exited(v) => Some(&**v),
            Record::Live(_) => None,
        })
    }

    pub fn recent(&mut self) -> Listed<ExecutorEvent> {
        self.listed_recent
            .get_or_insert_with(|| self.recent.iter().cloned().collect())
            .clone()
    }

    /// Every executor failure that counted against the app, forgotten ones included.
    pub fn counts_against_app(&self) -> u32 {
        self.failures
    }

    /// Executors that exited 0 on their own (not given back by the AM), forgotten ones
    /// included: what ends an executors-only app (see `AmCore`'s completion rule).
    pub fn succeeded(&self) -> u32 {
        self.succeeded
    }
}

/// The reason an executor whose container the AM gave back exited with.
pub const RELEASED_REASON: &str = "released by the AM (killed by the driver)";

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
