//! The AM's record of every executor it launched: what the driver API shows and streams.
//!
//! The allocator owns the decisions (which container becomes which executor, what counts as a
//! failure); this registry only remembers what happened to each executor so that
//! `GET /v1/executors`, loss reasons and the event stream can answer long after the
//! allocator has forgotten a finished container.

use std::collections::{BTreeMap, HashMap};

use tokio::sync::broadcast;
use yarn_am::allocator::exit_status::classify;
use yarn_am::allocator::matching::Locality as MatchLevel;

use crate::api::model::{ExecutorEvent, ExecutorState, ExecutorView, Locality};

/// Events kept for the tracking page and `GET /v1/state`.
const RECENT_EVENTS: usize = 50;

pub struct Registry {
    executors: BTreeMap<u64, ExecutorView>,
    by_container: HashMap<String, u64>,
    /// Executors whose containers we released (killed by the driver, or surplus).
    released: HashMap<u64, String>,
    recent: Vec<ExecutorEvent>,
    events: broadcast::Sender<ExecutorEvent>,
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
            recent: Vec::new(),
            events,
        }
    }

    fn emit(&mut self, ev: ExecutorEvent) {
        self.recent.push(ev.clone());
        if self.recent.len() > RECENT_EVENTS {
            self.recent.remove(0);
        }
        // No subscriber is fine: the event is still in `recent`.
        let _ = self.events.send(ev);
    }

    pub fn launching(&mut self, id: u64, container: &str, host: &str, rack: &str, at: MatchLevel) {
        let view = ExecutorView {
            id: id.to_string(),
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
        self.executors.insert(id, view.clone());
        self.emit(ExecutorEvent::Added { executor: view });
    }

    pub fn executor_of(&self, container: &str) -> Option<u64> {
        self.by_container.get(container).copied()
    }

    pub fn is_live(&self, id: u64) -> bool {
        self.live_host(id).is_some()
    }

    /// The host YARN placed a live executor on: what the driver should believe, rather than
    /// the host the executor process says it is on.
    pub fn live_host(&self, id: u64) -> Option<&str> {
        self.executors
            .get(&id)
            .filter(|e| e.state != ExecutorState::Exited)
            .map(|e| e.host.as_str())
    }

    /// Executors not yet exited.
    pub fn live_ids(&self) -> impl Iterator<Item = u64> + '_ {
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
                e.state = ExecutorState::Running;
                let executor = e.clone();
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
        e.state = ExecutorState::Exited;
        e.exit_status = status;
        e.reason = Some(reason);
        e.counts_against_app = Some(counts);
        let executor = e.clone();
        self.emit(ExecutorEvent::Removed { executor });
    }

    pub fn views(&self) -> Vec<ExecutorView> {
        self.executors.values().cloned().collect()
    }

    pub fn recent(&self) -> Vec<ExecutorEvent> {
        self.recent.clone()
    }

    pub fn counts_against_app(&self) -> u32 {
        self.executors
            .values()
            .filter(|e| e.counts_against_app == Some(true))
            .count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_released_vs_failed() {
        let (tx, mut rx) = broadcast::channel(16);
        let mut r = Registry::new(tx);
        r.launching(1, "c1", "nm1", "/rack1", MatchLevel::Node);
        r.launching(2, "c2", "nm3", "/rack2", MatchLevel::Any);
        r.running("c1");
        r.running("c2");
        assert_eq!(r.live_host(2), Some("nm3"));
        assert_eq!(r.live_host(9), None);
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
        assert!(!r.is_live(2));
        assert_eq!(r.live_host(2), None);
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
}
