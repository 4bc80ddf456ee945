//! Hosts the AM keeps new executors off by itself, sans-IO: nodes YARN reports
//! DECOMMISSIONING (graceful decommission), and hosts where this app's executors kept
//! failing (Spark's `excludeOnFailure` for launches, `YarnAllocatorNodeHealthTracker`).
//!
//! Why the AM's own list: the driver's demand names the hosts it excludes, but neither a
//! draining node nor a failing host is the driver's business. The pool adds these hosts to
//! the demand's exclusions (so the allocator names them in no request and YARN's blacklist
//! holds them) and, for a draining node, asks at once for replacements of the executors
//! that run there (they are leaving, whatever they do now).
//!
//! A draining node's executors do not count against the app when the node goes: the AM
//! notes them when the node starts draining (see `Pool`). A failing host is held back for
//! [`HeldBack::exclude_ms`] after its `max_failures`-th failure within
//! [`HeldBack::window_ms`], then released (a timeout, as Spark's `excludeOnFailure.timeout`).

use std::collections::{BTreeMap, HashMap, VecDeque};

/// Failures on one host within the window that exclude it (Spark's
/// `spark.excludeOnFailure.application.maxFailedExecutorsPerNode` default).
pub const DEFAULT_MAX_FAILURES_PER_HOST: u32 = 2;
/// How far back failures on a host are counted.
pub const DEFAULT_FAILURE_WINDOW_MS: u64 = 10 * 60 * 1000;
/// How long a failing host stays excluded.
pub const DEFAULT_EXCLUDE_MS: u64 = 5 * 60 * 1000;

pub use yarn_am_wire::driver_api::HeldBackHost;

#[derive(Debug)]
pub struct HeldBack {
    /// DECOMMISSIONING hosts and the timeout YARN gave, if any.
    draining: BTreeMap<String, Option<u32>>,
    /// When each host's counted failures happened, oldest first.
    failures: HashMap<String, VecDeque<u64>>,
    /// Failing hosts excluded, until when.
    excluded_until: BTreeMap<String, u64>,
    pub max_failures: u32,
    pub window_ms: u64,
    pub exclude_ms: u64,
}

impl Default for HeldBack {
    fn default() -> Self {
        Self {
            draining: BTreeMap::new(),
            failures: HashMap::new(),
            excluded_until: BTreeMap::new(),
            max_failures: DEFAULT_MAX_FAILURES_PER_HOST,
            window_ms: DEFAULT_FAILURE_WINDOW_MS,
            exclude_ms: DEFAULT_EXCLUDE_MS,
        }
    }
}

impl HeldBack {
    /// YARN reported `host`'s state. Returns true when its draining changed.
    pub fn node_reported(
        &mut self,
        host: &str,
        decommissioning: bool,
        timeout_s: Option<u32>,
    ) -> bool {
        if decommissioning {
            self.draining.insert(host.to_string(), timeout_s) != Some(timeout_s)
        } else {
            self.draining.remove(host).is_some()
        }
    }

    pub fn is_draining(&self, host: &str) -> bool {
        self.draining.contains_key(host)
    }

    pub fn draining(&self) -> impl Iterator<Item = &str> {
        self.draining.keys().map(String::as_str)
    }

    /// An executor of this app failed on `host` (a failed launch, or an exit that counts
    /// against the app). Returns true when this excludes the host.
    pub fn executor_failed(&mut self, now_ms: u64, host: &str) -> bool {
        if host.is_empty() || self.max_failures == 0 {
            return false;
        }
        let times = self.failures.entry(host.to_string()).or_default();
        times.push_back(now_ms);
        while times
            .front()
            .is_some_and(|t| now_ms.saturating_sub(*t) >= self.window_ms)
        {
            times.pop_front();
        }
        // Bounded: only the last `max_failures` matter.
        while times.len() > self.max_failures as usize {
            times.pop_front();
        }
        if times.len() as u32 >= self.max_failures && !self.excluded_until.contains_key(host) {
            self.excluded_until
                .insert(host.to_string(), now_ms.saturating_add(self.exclude_ms));
            times.clear();
            return true;
        }
        false
    }

    /// Releases the exclusions whose time has come. Returns the hosts released.
    pub fn expire(&mut self, now_ms: u64) -> Vec<String> {
        let done: Vec<String> = self
            .excluded_until
            .iter()
            .filter(|(_, until)| **until <= now_ms)
            .map(|(h, _)| h.clone())
            .collect();
        for h in &done {
            self.excluded_until.remove(h);
        }
        done
    }

    /// Hosts excluded for failures now.
    pub fn failing_count(&self) -> usize {
        self.excluded_until.len()
    }

    /// When the next exclusion ends.
    pub fn next_deadline(&self) -> Option<u64> {
        self.excluded_until.values().copied().min()
    }

    /// Every host to keep new executors off.
    pub fn hosts(&self) -> impl Iterator<Item = &str> {
        self.draining
            .keys()
            .chain(self.excluded_until.keys())
            .map(String::as_str)
    }

    pub fn view(&self) -> Vec<HeldBackHost> {
        let draining = self.draining.iter().map(|(h, t)| HeldBackHost {
            host: h.clone(),
            why: "decommissioning".into(),
            decommission_timeout_s: *t,
            excluded_until_ms: None,
            failures: 0,
        });
        let failing = self.excluded_until.iter().map(|(h, until)| HeldBackHost {
            host: h.clone(),
            why: "failures".into(),
            decommission_timeout_s: None,
            excluded_until_ms: Some(*until),
            failures: self.max_failures,
        });
        draining.chain(failing).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draining_node_is_held_back_until_it_runs_again() {
        let mut h = HeldBack::default();
        assert!(h.node_reported("nm2", true, Some(60)));
        assert!(
            !h.node_reported("nm2", true, Some(60)),
            "same report: no change"
        );
        assert!(h.is_draining("nm2"));
        assert_eq!(h.hosts().collect::<Vec<_>>(), ["nm2"]);
        assert_eq!(h.view()[0].decommission_timeout_s, Some(60));
        assert!(h.node_reported("nm2", false, None));
        assert_eq!(h.hosts().count(), 0);
        assert!(
            !h.node_reported("nm3", false, None),
            "never draining: no change"
        );
    }

    #[test]
    fn repeated_failures_exclude_a_host_for_a_while() {
        let mut h = HeldBack {
            max_failures: 2,
            window_ms: 1_000,
            exclude_ms: 5_000,
            ..HeldBack::default()
        };
        assert!(!h.executor_failed(0, "nm1"));
        // The second failure comes after the window: still one counted.
        assert!(!h.executor_failed(1_500, "nm1"));
        assert!(h.executor_failed(2_000, "nm1"), "two within the window");
        assert!(!h.executor_failed(2_100, "nm1"), "already excluded");
        assert_eq!(h.hosts().collect::<Vec<_>>(), ["nm1"]);
        assert_eq!(h.view()[0].excluded_until_ms, Some(7_000));
        assert_eq!(h.next_deadline(), Some(7_000));
        assert!(h.expire(6_999).is_empty());
        assert_eq!(h.expire(7_000), ["nm1"]);
        assert_eq!(h.hosts().count(), 0);
        assert_eq!(h.next_deadline(), None);
        // Other hosts and no host at all are their own matter.
        assert!(!h.executor_failed(8_000, ""));
        assert!(!h.executor_failed(8_000, "nm2"));
    }

    #[test]
    fn failure_memory_is_bounded() {
        let mut h = HeldBack {
            max_failures: 3,
            window_ms: u64::MAX,
            exclude_ms: 1,
            ..HeldBack::default()
        };
        for t in 0..10_000u64 {
            h.executor_failed(t, "nm1");
            h.expire(t);
        }
        assert!(h.failures["nm1"].len() <= 3);
    }
}
