//! The AM's record of every executor it launched: what the driver API shows and streams.
//!
//! The allocator owns the decisions (which container becomes which executor, what counts as a
//! failure); this registry only remembers what happened to each executor so that
//! `GET /v1/executors`, loss reasons and the event stream can answer long after the
//! allocator has forgotten a finished container.
//!
//! Bounded for long apps: live executors are always kept, finished ones only the last
//! [`FINISHED_KEPT`] (older ones are forgotten, in the order they finished), and the recent
//! events the last [`RECENT_EVENTS`]. The failure count stays exact across forgetting.
//!
//! Published cheaply: the AM loop publishes the executor list after every event, at 10,000
//! executors too, so each executor's view is kept behind an `Arc`, and the list ([`Listed`])
//! is kept in chunks of [`LISTED_CHUNK`] ids: after a change, only the chunks of the
//! executors that changed are copied again (as pointers), then the chunk pointers.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::broadcast;
use yarn_am::allocator::exit_status::classify;
use yarn_am::allocator::matching::Locality as MatchLevel;
use yarn_am::executor_id::ExecutorId;

use crate::api::model::{
    ExecutorEvent, ExecutorState, ExecutorView, Listed, Locality, Retention, LISTED_CHUNK,
};

/// Events kept for the tracking page and `GET /v1/state`.
const RECENT_EVENTS: usize = 50;

/// Finished executors kept for `GET /v1/executors` and loss reasons.
pub const FINISHED_KEPT: usize = 1000;

pub struct Registry {
    executors: BTreeMap<ExecutorId, Arc<ExecutorView>>,
    by_container: HashMap<String, ExecutorId>,
    /// Live executors whose containers we released (killed by the driver, or surplus).
    released: HashMap<ExecutorId, String>,
    /// Finished executors still kept, oldest first.
    finished: VecDeque<ExecutorId>,
    recent: VecDeque<Arc<ExecutorEvent>>,
    events: broadcast::Sender<ExecutorEvent>,
    retention: Retention,
    /// Executors that counted against the app, forgotten ones included.
    failures: u32,
    /// The list last published; `None` after a change.
    listed: Option<Listed<ExecutorView>>,
    /// The published list's chunks, by chunk number (id / [`LISTED_CHUNK`]), and the
    /// chunks changed since they were last built.
    chunks: BTreeMap<u64, Arc<[Arc<ExecutorView>]>>,
    stale_chunks: BTreeSet<u64>,
    /// The recent events last published; `None` after a new one.
    listed_recent: Option<Listed<ExecutorEvent>>,
    /// Live executors: when the AM last heard from each (its launch until its first poll),
    /// in the core's `now_ms`; what declares a silent executor lost (see `AmCore`).
    last_heard: HashMap<ExecutorId, u64>,
    /// Executors that exited since [`Self::take_exits`] last ran: the driver hears of each
    /// once, as an event, instead of diffing the live list.
    exits: Vec<ExecutorId>,
}

fn level(l: MatchLevel) -> Locality {
    match l {
        MatchLevel::Node => Locality::Node,
        MatchLevel::Rack => Locality::Rack,
        MatchLevel::Any => Locality::Any,
    }
}

impl Registry {
    pub fn new(events: broadcast::Sender<ExecutorEvent>) -> Self {
        Self {
            executors: BTreeMap::new(),
            by_container: HashMap::new(),
            released: HashMap::new(),
            finished: VecDeque::new(),
            recent: VecDeque::new(),
            events,
            retention: Retention {
                finished_kept: FINISHED_KEPT as u64,
                ..Retention::default()
            },
            failures: 0,
            listed: None,
            chunks: BTreeMap::new(),
            stale_chunks: BTreeSet::new(),
            listed_recent: None,
            last_heard: HashMap::new(),
            exits: Vec::new(),
        }
    }

    /// Executor `id`'s view changed (or it was added or forgotten): its chunk of the
    /// published list is built again on the next [`Self::views`].
    fn changed(&mut self, id: ExecutorId) {
        self.listed = None;
        self.stale_chunks.insert(id.get() / LISTED_CHUNK as u64);
    }

    fn emit(&mut self, ev: ExecutorEvent) {
        self.listed_recent = None;
        self.recent.push_back(Arc::new(ev.clone()));
        if self.recent.len() > RECENT_EVENTS {
            self.recent.pop_front();
        }
        // No subscriber is fine: the event is still in `recent`.
        let _ = self.events.send(ev);
    }

    pub fn launching(
        &mut self,
        id: ExecutorId,
        container: &str,
        host: &str,
        rack: &str,
        at: MatchLevel,
    ) {
        let view = ExecutorView {
            id,
            container_id: container.to_string(),
            host: host.to_string(),
            rack: rack.to_string(),
            locality: level(at),
            state: ExecutorState::Starting,
            exit_status: None,
            reason: None,
            counts_against_app: None,
        };
        self.by_container.insert(container.to_string(), id);
        self.executors.insert(id, Arc::new(view.clone()));
        self.changed(id);
        self.retention.last_id = self.retention.last_id.max(id);
        self.emit(ExecutorEvent::Added { executor: view });
    }

    pub fn executor_of(&self, container: &str) -> Option<ExecutorId> {
        self.by_container.get(container).copied()
    }

    pub fn is_live(&self, id: ExecutorId) -> bool {
        self.live_host(id).is_some()
    }

    /// The host YARN placed a live executor on: what the driver should believe, rather than
    /// the host the executor process says it is on.
    pub fn live_host(&self, id: ExecutorId) -> Option<&str> {
        self.executors
            .get(&id)
            .filter(|e| e.state != ExecutorState::Exited)
            .map(|e| e.host.as_str())
    }

    /// Executors not yet exited.
    pub fn live_ids(&self) -> impl Iterator<Item = ExecutorId> + '_ {
        self.executors
            .iter()
            .filter(|(_, e)| e.state != ExecutorState::Exited)
            .map(|(id, _)| *id)
    }

    pub fn running(&mut self, container: &str) {
        let Some(id) = self.executor_of(container) else {
            return;
        };
        if let Some(e) = self.executors.get_mut(&id) {
            if e.state == ExecutorState::Starting {
                let e = Arc::make_mut(e);
                e.state = ExecutorState::Running;
                let executor = e.clone();
                self.changed(id);
                self.emit(ExecutorEvent::Updated { executor });
            }
        }
    }

    /// We gave the container back; its completion will not count against the app.
    pub fn released(&mut self, container: &str, why: &str) {
        if let Some(id) = self.executor_of(container) {
            self.released.insert(id, why.to_string());
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
    /// (those whose containers the AM is already giving back aside), and the earliest time
    /// another one could become silent.
    pub fn silent(&self, now_ms: u64, limit_ms: u64) -> (Vec<(ExecutorId, u64)>, Option<u64>) {
        let mut silent = Vec::new();
        let mut next: Option<u64> = None;
        for (&id, &at) in &self.last_heard {
            if self.released.contains_key(&id) {
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
    /// when YARN reports it, changes nothing more.
    pub fn declare_lost(&mut self, id: ExecutorId, reason: &str) {
        if let Some(container) = self.executors.get(&id).map(|e| e.container_id.clone()) {
            self.exited(&container, None, reason.to_string(), false);
        }
    }

    /// Launch failed before the container ran anything.
    pub fn launch_failed(&mut self, container: &str, error: &str) {
        self.exited(container, None, format!("launch failed: {error}"), true);
    }

    /// YARN reported the container completed.
    pub fn completed(&mut self, container: &str, exit_status: i32, diagnostics: &str) {
        let Some(id) = self.executor_of(container) else {
            return;
        };
        let (reason, counts) = match self.released.get(&id) {
            Some(why) => (why.clone(), false),
            None => {
                let v = classify(exit_status, diagnostics);
                (v.reason, v.counts_against_app)
            }
        };
        self.exited(container, Some(exit_status), reason, counts);
    }

    fn exited(&mut self, container: &str, status: Option<i32>, reason: String, counts: bool) {
        let Some(id) = self.executor_of(container) else {
            return;
        };
        let Some(e) = self.executors.get_mut(&id) else {
            return;
        };
        if e.state == ExecutorState::Exited {
            return;
        }
        let e = Arc::make_mut(e);
        e.state = ExecutorState::Exited;
        self.last_heard.remove(&id);
        e.exit_status = status;
        e.reason = Some(reason);
        e.counts_against_app = Some(counts);
        let executor = e.clone();
        if counts {
            self.failures = self.failures.saturating_add(1);
        }
        self.released.remove(&id);
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
            self.released.remove(&id);
            if let Some(e) = self.executors.remove(&id) {
                // Unless a later executor got the same container (YARN does not grant a
                // completed container again; the record stays right if it ever did).
                if self.by_container.get(&e.container_id) == Some(&id) {
                    self.by_container.remove(&e.container_id);
                }
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

    /// Every executor kept, by id: the list last published when nothing changed since,
    /// else one that shares the chunks nothing changed in with it.
    pub fn views(&mut self) -> Listed<ExecutorView> {
        if let Some(listed) = &self.listed {
            return listed.clone();
        }
        let size = LISTED_CHUNK as u64;
        for k in std::mem::take(&mut self.stale_chunks) {
            let ids = ExecutorId::new(k * size)..ExecutorId::new((k + 1) * size);
            let chunk: Arc<[Arc<ExecutorView>]> =
                self.executors.range(ids).map(|(_, e)| e.clone()).collect();
            if chunk.is_empty() {
                self.chunks.remove(&k);
            } else {
                self.chunks.insert(k, chunk);
            }
        }
        let listed = Listed::from_chunks(self.chunks.values().cloned());
        self.listed = Some(listed.clone());
        listed
    }

    /// One executor's view, if it is kept.
    pub fn view(&self, id: ExecutorId) -> Option<&ExecutorView> {
        self.executors.get(&id).map(|e| &**e)
    }

    /// The executors kept, by id.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &ExecutorView> {
        self.executors.values().map(|e| &**e)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(n: u64) -> ExecutorId {
        ExecutorId::new(n)
    }

    /// A long app: 10,000 executors come and go (every third one crashes) while a few stay
    /// live throughout. Only the last FINISHED_KEPT finished ones are kept, the live ones
    /// always, and the failure count stays exact.
    #[test]
    fn ten_thousand_lifecycles_keep_a_bounded_history() {
        let (tx, _rx) = broadcast::channel(16);
        let mut r = Registry::new(tx);
        for id in 1..=3 {
            r.launching(e(id), &format!("live{id}"), "nm1", "/r", MatchLevel::Node);
            r.running(&format!("live{id}"));
        }
        let mut crashes = 0;
        for id in 4..10_004u64 {
            let c = format!("c{id}");
            r.launching(e(id), &c, "nm2", "/r", MatchLevel::Any);
            r.running(&c);
            if id % 3 == 0 {
                crashes += 1;
                r.completed(&c, 1, "Exception from container-launch");
            } else {
                r.released(&c, "surplus");
                r.completed(&c, -105, "killed");
            }
            let finished = (id - 3) as usize;
            assert_eq!(r.executors.len(), 3 + finished.min(FINISHED_KEPT));
            assert_eq!(r.counts_against_app(), crashes);
        }
        assert!(r.by_container.len() <= 3 + FINISHED_KEPT);
        assert!(r.released.is_empty());
        assert_eq!(r.recent().len(), RECENT_EVENTS);
        assert_eq!(r.live_ids().collect::<Vec<_>>(), [e(1), e(2), e(3)]);
        let views = r.views();
        // The kept finished executors are the newest ones.
        assert_eq!(views[3].id, e(10_004 - FINISHED_KEPT as u64));
        let ret = r.retention();
        assert_eq!(ret.forgotten, 10_000 - FINISHED_KEPT as u64);
        assert_eq!(ret.last_id, e(10_003));
        assert!(ret.forgot(e(4)) && !ret.forgot(e(10_004)));
        // A late second completion of a forgotten container is ignored.
        r.completed("c4", 1, "again");
        assert_eq!(r.counts_against_app(), crashes);
        assert_eq!(r.views().len(), 3 + FINISHED_KEPT);
    }

    #[test]
    fn lifecycle_released_vs_failed() {
        let (tx, mut rx) = broadcast::channel(16);
        let mut r = Registry::new(tx);
        r.launching(e(1), "c1", "nm1", "/rack1", MatchLevel::Node);
        r.launching(e(2), "c2", "nm3", "/rack2", MatchLevel::Any);
        r.running("c1");
        r.running("c2");
        assert_eq!(r.live_host(e(2)), Some("nm3"));
        assert_eq!(r.live_host(e(9)), None);
        r.released("c1", "killed by the driver");
        r.completed("c1", -105, "Container killed by the ApplicationMaster.");
        r.completed("c2", 1, "Exception from container-launch");
        let v = r.views();
        assert_eq!(v[0].reason.as_deref(), Some("killed by the driver"));
        assert_eq!(v[0].counts_against_app, Some(false));
        assert_eq!(v[1].exit_status, Some(1));
        assert_eq!(v[1].counts_against_app, Some(true));
        assert_eq!(v[1].locality, Locality::Any);
        assert_eq!(r.counts_against_app(), 1);
        assert!(!r.is_live(e(2)));
        assert_eq!(r.live_host(e(2)), None);
        let names: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.name())
            .collect();
        assert_eq!(
            names,
            [
                "executor_added",
                "executor_added",
                "executor_updated",
                "executor_updated",
                "executor_removed",
                "executor_removed"
            ]
        );
        // A second completion report for the same container changes nothing.
        r.completed("c2", 0, "");
        assert_eq!(r.views()[1].exit_status, Some(1));
    }

    /// One step of a random executor history.
    #[derive(Debug, Clone)]
    enum Step {
        Launch,
        Run(usize),
        Release(usize),
        Complete(usize, i32),
        LaunchFailed(usize),
        Publish,
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            3 => Just(Step::Launch),
            2 => any::<usize>().prop_map(Step::Run),
            1 => any::<usize>().prop_map(Step::Release),
            2 => (any::<usize>(), prop_oneof![Just(0), Just(1), Just(-105), Just(143)])
                .prop_map(|(i, s)| Step::Complete(i, s)),
            1 => any::<usize>().prop_map(Step::LaunchFailed),
            2 => Just(Step::Publish),
        ]
    }

    proptest::proptest! {
        /// After any history, what the registry publishes equals a list built from scratch
        /// from its records, the failure count kept on each exit equals a recount (every
        /// exit that counted, forgotten or not), and a list published earlier still shows
        /// the executors as they were then.
        #[test]
        fn published_lists_equal_a_rebuild(steps in proptest::collection::vec(step(), 0..300)) {
            let (tx, _rx) = broadcast::channel(16);
            let mut r = Registry::new(tx);
            let mut launched = 0u64;
            let mut earlier: Option<(Listed<ExecutorView>, Vec<ExecutorView>)> = None;
            for s in steps {
                let c = |i: usize| format!("c{}", i as u64 % launched.max(1) + 1);
                match s {
                    Step::Launch => {
                        launched += 1;
                        r.launching(e(launched), &format!("c{launched}"), "nm1", "/r", MatchLevel::Node);
                    }
                    Step::Run(i) => r.running(&c(i)),
                    Step::Release(i) => r.released(&c(i), "surplus"),
                    Step::Complete(i, status) => r.completed(&c(i), status, "diagnostics"),
                    Step::LaunchFailed(i) => r.launch_failed(&c(i), "refused"),
                    Step::Publish => {
                        if let Some((list, was)) = &earlier {
                            let now: Vec<ExecutorView> = list.iter().map(|e| (**e).clone()).collect();
                            proptest::prop_assert_eq!(&now, was);
                        }
                        let list = r.views();
                        let was = list.iter().map(|e| (**e).clone()).collect();
                        earlier = Some((list, was));
                    }
                }
                let rebuilt: Vec<ExecutorView> = r.executors.values().map(|e| (**e).clone()).collect();
                let published: Vec<ExecutorView> = r.views().iter().map(|e| (**e).clone()).collect();
                proptest::prop_assert_eq!(published, rebuilt);
                let recent: Vec<ExecutorEvent> = r.recent.iter().map(|e| (**e).clone()).collect();
                let published: Vec<ExecutorEvent> = r.recent().iter().map(|e| (**e).clone()).collect();
                proptest::prop_assert_eq!(published, recent);
                // Fewer than FINISHED_KEPT executors finish here, so none is forgotten and
                // the recount is over the records (`ten_thousand_lifecycles...` covers
                // forgetting).
                let kept = r.executors.values().filter(|e| e.counts_against_app == Some(true)).count() as u32;
                proptest::prop_assert_eq!(r.counts_against_app(), kept);
            }
        }
    }
}
